#!/usr/bin/python3
"""SentencePiece fixtures: small models trained by Google's SentencePiece library on public-domain
text, and the library's own ids, pieces and offsets for a mixed corpus of test lines.

Needs Debian's python3-sentencepiece (0.1.97), python3-protobuf, bible-kjv and fortunes:

    bash scripts/setup.sh --goldens   # python3-sentencepiece python3-protobuf bible-kjv fortunes
    /usr/bin/python3 tests/golden/gen_sentencepiece.py

Writes tests/fixtures/sentencepiece/: <name>.model (the library's file), <name>.tokenizer.json
(the same model as a Hugging Face tokenizer.json, written by convert() below, which follows the rules
of transformers' convert_slow_tokenizer: LlamaConverter for BPE with byte fallback, SpmConverter
(T5 / XLM-R) for Unigram), and expected.json. Training is deterministic for a fixed input
(num_threads=1, no shuffling), so re-running reproduces the committed files.
"""
import io
import json
import os
import subprocess

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "sentencepiece"))

# Hand-written lines (this project's own text) so that the models see some accents, CJK, Thai,
# Arabic and emoji during training; the test lines below also hold characters never seen.
MULTILINGUAL = [
    "Café crème brûlée, naïve façade, Ångström and Øresund.",
    "Straße, Größe, weiß; señor, niño, mañana; çà et là.",
    "東京は日本の首都です。北京是中国的首都。",
    "서울은 한국의 수도입니다.",
    "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
    "القاهرة هي عاصمة مصر.",
    "Москва — столица России.",
    "I ❤️ emoji 😀🎉 and flags 🇫🇷🇯🇵.",
]

# The test corpus: English, accents (composed and decomposed), CJK, Thai, Arabic, emoji with ZWJ,
# full-width forms, control characters, whitespace runs, digits and code.
TEST_LINES = [
    "In the beginning God created the heaven and the earth.",
    "Hello, world! How are you today?",
    "  leading and trailing spaces   ",
    "runs   of    spaces\tand\ttabs\nand newlines\r\n",
    "Café crème brûlée",
    "Cafe\u0301 cre\u0300me (decomposed accents)",
    "ﬁnance ﬂow ǅ ㎏ ½ ² ℌ",
    "ＦＵＬＬ－ＷＩＤＴＨ　ｆｏｒｍｓ　１２３",
    "東京は日本の首都です。新しい単語：鬱",
    "北京是中国的首都，龘",
    "สวัสดีครับ ภาษาไทย",
    "مرحبا بالعالم",
    "Ελληνικά και Русский",
    "👨‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag",
    "control\u0001chars\u0007and\u001bescape\u007f",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "digits 0123456789 and 3.14159 and 1,000,000",
    "def f(x):\n    return x ** 2  # square",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    "<mask> is a user symbol, so is [[user]] here",
    "unknown \U0001F9EC DNA and \U00013000 hieroglyph",
    "",
    " ",
    "a",
    "▁already▁escaped",
    "Ünïcödé ÀÉÎÕÜ àéîõü",
]


def corpus_lines():
    bible = subprocess.run(["bible", "-f", "Gen1:1-Deu34:12"], check=True, capture_output=True, text=True).stdout
    lines = [line.split(" ", 1)[1] for line in bible.splitlines() if " " in line]
    for name in ["computers", "science", "wisdom", "linux", "literature"]:
        with open(f"/usr/share/games/fortunes/{name}", encoding="utf-8", errors="replace") as f:
            lines += [s.strip() for s in f.read().split("\n%\n") if s.strip()]
    return lines + MULTILINGUAL * 20


def test_lines():
    psalms = subprocess.run(["bible", "-f", "Psa23:1-6", "Joh1:1-14"], check=True, capture_output=True, text=True).stdout
    with open("/usr/share/games/fortunes/goedel", encoding="utf-8", errors="replace") as f:
        fortunes = [s.strip() for s in f.read().split("\n%\n") if s.strip()][:20]
    return TEST_LINES + [line.split(" ", 1)[1] for line in psalms.splitlines() if " " in line] + fortunes


MODELS = {
    # SentencePiece defaults (T5, ALBERT, XLM-R): Unigram, nmt_nfkc, with user and control symbols.
    "unigram": dict(model_type="unigram", vocab_size=2000, user_defined_symbols=["<mask>", "[[user]]"],
                    control_symbols=["<ctl>"]),
    # Llama 2's settings: BPE with byte fallback, identity normalisation, spaces kept, digits split.
    "bpe": dict(model_type="bpe", vocab_size=1500, byte_fallback=True, normalization_rule_name="identity",
                remove_extra_whitespaces=False, split_digits=True, allow_whitespace_only_pieces=True),
    # The other options: whitespace as suffix, nfkc_cf, byte fallback in a Unigram model.
    "unigram_suffix": dict(model_type="unigram", vocab_size=1200, byte_fallback=True, treat_whitespace_as_suffix=True,
                           normalization_rule_name="nfkc_cf", remove_extra_whitespaces=False),
}


def train(name, options, lines):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, num_threads=1,
                                   character_coverage=1.0, shuffle_input_sentence=False,
                                   minloglevel=2, **options)
    return out.getvalue()


def convert(model_bytes):
    """A tokenizer.json for a .model, by transformers' convert_slow_tokenizer rules (Llama for BPE,
    SpmConverter for Unigram)."""
    m = model_pb2.ModelProto()
    m.ParseFromString(model_bytes)
    pieces = [(p.piece, p.score) for p in m.pieces]
    vocab = {p: i for i, (p, _) in enumerate(pieces)}
    added = [{"id": i, "content": p.piece, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": p.type == 3 or p.type == 2}
             for i, p in enumerate(m.pieces) if p.type in (2, 3, 4)]
    ws_suffix = m.trainer_spec.treat_whitespace_as_suffix
    if m.trainer_spec.model_type == 2:
        # LlamaConverter: merges are every split of every piece into two pieces, ordered by the
        # piece's score (then by the parts' ids), as SentencePieceExtractor writes them.
        merges = []
        for piece, score in pieces:
            local = [(piece[:k], piece[k:], score) for k in range(1, len(piece))
                     if piece[:k] in vocab and piece[k:] in vocab]
            merges += sorted(local, key=lambda x: (vocab[x[0]], vocab[x[1]]))
        merges.sort(key=lambda x: x[2], reverse=True)
        model = {"type": "BPE", "dropout": None, "unk_token": m.trainer_spec.unk_piece, "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": m.trainer_spec.byte_fallback,
                 "ignore_merges": False, "vocab": vocab, "merges": [[a, b] for a, b, _ in merges]}
        normalizer = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                          {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
        pre_tokenizer = None
        decoder = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [vocab["<s>"]], "tokens": ["<s>"]}}}
    else:
        model = {"type": "Unigram", "unk_id": m.trainer_spec.unk_id, "vocab": [[p, s] for p, s in pieces],
                 "byte_fallback": m.trainer_spec.byte_fallback}
        steps = [{"type": "Precompiled", "precompiled_charsmap": __import__("base64").b64encode(
            m.normalizer_spec.precompiled_charsmap).decode()}] if m.normalizer_spec.precompiled_charsmap else []
        normalizer = {"type": "Sequence", "normalizers": steps + [
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
        # T5's tokenizer.json form: words at whitespace, each with its U+2581.
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}]}
        decoder = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
        post = {"type": "TemplateProcessing",
                "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                "special_tokens": {"</s>": {"id": "</s>", "ids": [vocab["</s>"]], "tokens": ["</s>"]}}}
        if ws_suffix:
            return None  # Hugging Face has no converter for whitespace-as-suffix models
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer, "post_processor": post, "decoder": decoder, "model": model}


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = corpus_lines()
    tests = test_lines()
    expected = {"lines": tests, "models": {}}
    for name, options in MODELS.items():
        blob = train(name, options, lines)
        with open(os.path.join(OUT, f"{name}.model"), "wb") as f:
            f.write(blob)
        sp = spm.SentencePieceProcessor(model_proto=blob)
        rows = []
        for text in tests:
            proto = sp.encode_as_immutable_proto(text)
            # The Python wrapper reports offsets in code points; the library's own are UTF-8 bytes
            # (what attnkit's C++ gives) and JavaScript's are UTF-16 units.
            utf8 = lambda cp: len(text[:cp].encode("utf-8"))
            utf16 = lambda cp: len(text[:cp].encode("utf-16-le")) // 2
            rows.append({"ids": [p.id for p in proto.pieces], "pieces": [p.piece for p in proto.pieces],
                         "begin": [utf8(p.begin) for p in proto.pieces], "end": [utf8(p.end) for p in proto.pieces],
                         "begin16": [utf16(p.begin) for p in proto.pieces], "end16": [utf16(p.end) for p in proto.pieces],
                         "decoded": sp.decode([p.id for p in proto.pieces])})
        expected["models"][name] = {"vocab_size": sp.get_piece_size(), "unk_id": sp.unk_id(), "bos_id": sp.bos_id(),
                                    "eos_id": sp.eos_id(), "pad_id": sp.pad_id(), "rows": rows}
        tj = convert(blob)
        if tj is not None:
            with open(os.path.join(OUT, f"{name}.tokenizer.json"), "w") as f:
                json.dump(tj, f, ensure_ascii=False, separators=(",", ":"))
        print(name, len(blob), "bytes,", sp.get_piece_size(), "pieces")
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()

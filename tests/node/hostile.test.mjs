// Hostile files and careless callers (issue 17): each finding of the security review is a case
// here, and a sweep calls every public function with a matrix of bad values and asserts that
// whatever is thrown is an AttnkitError with a code, and that the heaps stay flat.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AttnkitError, Tensor, load } from '../../web/attnkit.js';
import { ROOT, backends } from './helpers.mjs';
import { loaders } from '../../web/src/runtime/loaders.js';

const t = (dims, value = 0.5) => new Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(value), dims);
const detached = () => {
  const a = new Float32Array(4);
  structuredClone(a.buffer, { transfer: [a.buffer] });
  return a;
};
const BAD = [undefined, null, NaN, -1, 1.5, 1e300, 'x', true, {}, [], [[1], [2, 3]], 10n, Symbol('s'),
  new Float64Array(3), new Int32Array([-5, 1 << 30]), detached(), t([2, 3]), { data: new Float32Array(2), dims: [3] }];

function isCoded(e) {
  return e instanceof AttnkitError && typeof e.code === 'string' && e.code.startsWith('ERR_');
}

// Calls fn(...args) with each argument replaced by each bad value; returns the thrown values that
// are not coded AttnkitErrors (as descriptions).
async function sweep(name, fn, args) {
  const wrong = [];
  for (let i = 0; i < Math.max(args.length, 1); i++) {
    for (const bad of BAD) {
      const a = args.slice();
      a[i] = bad;
      try {
        const r = await fn(...a);
        if (typeof r?.dispose === 'function') r.dispose(); // a call that succeeds owns nothing after the test
      } catch (e) {
        if (!isCoded(e)) wrong.push(`${name} arg ${i} = ${typeof bad === 'symbol' ? 'Symbol' : String(bad?.constructor?.name ?? bad)}: ${e?.constructor?.name} ${e?.message ?? e}`);
      }
    }
  }
  return wrong;
}

// A SentencePiece model (Llama 2's options, trained by tests/golden/gen_sentencepiece.py).
const SPM_MODEL = new Uint8Array(fs.readFileSync(path.join(ROOT, 'tests/fixtures/sentencepiece/bpe.model')));

const GOOD_TOKENIZER = {
  model: { type: 'WordPiece', vocab: { '[UNK]': 0, '[CLS]': 1, '[SEP]': 2, hello: 3, world: 4, '##s': 5 } },
  pre_tokenizer: { type: 'BertPreTokenizer' },
};

for (const ak of await backends()) {
  test(`${ak.backend}: misspelt and foreign option keys are refused with the closest known name`, async () => {
    const q = t([1, 2, 3, 4]);
    const cases = [
      [() => ak.attention(q, q, q, { casual: true }), 'casual', 'causal'],
      [() => ak.attention(q, q, q, { is_causal: true }), 'is_causal', 'causal'],
      [() => ak.layerNorm(t([2, 4]), { weight: t([4]), bias: t([4]) }), 'weight', null],
      [() => ak.sinusoidalPositionalEncoding(4, 8, { lenght: 3 }), 'lenght', null],
      [() => new ak.EncoderLayer({ dim: 8, numHeads: 2, ffnDim: 16, num_heads: 2 }), 'num_heads', 'numHeads'],
      [() => new ak.Embeddings({ vocabSize: 4, dim: 8, max_positions: 4 }), 'max_positions', 'maxPositions'],
      [() => ak.rotary(q, { scaling: { type: 'linear', fator: 2 } }), 'scaling.fator', 'factor'],
    ];
    for (const [call, key, hint] of cases) {
      assert.throws(call, (e) => isCoded(e) && e.code === 'ERR_INVALID_ARGUMENT' && e.argument === key &&
        (hint ? e.message.includes(`did you mean '${hint}'?`) : /known: /.test(e.message)), key);
    }
    await assert.rejects(load({ simdd: false }), (e) => e.argument === 'simdd' && e.message.includes("did you mean 'simd'?"));
    const tok = await ak.Tokenizer.fromJSON(GOOD_TOKENIZER);
    assert.throws(() => tok.encode('hello', { max_length: 8 }), (e) => e.message.includes("did you mean 'maxLength'?"));
    assert.throws(() => tok.encode('hello', { addSpecialTokens: 'no' }), (e) => e.argument === 'addSpecialTokens');
    assert.throws(() => tok.encode(['hello', 'hello world'], { padId: 3e9 }), (e) => e.code === 'ERR_OUT_OF_RANGE');
    assert.throws(() => tok.decode([3], { skipSpecialTokens: 1 }), (e) => e.argument === 'skipSpecialTokens');
    tok.dispose();
    // null options are no options; a detached buffer is named, not read as empty.
    assert.deepEqual(ak.layerNorm(t([1, 2]), null).dims, [1, 2]);
    assert.throws(() => ak.layerNorm(detached()), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /detached/.test(e.message));
    assert.throws(() => ak.attention(q, q, q, { scale: NaN }), (e) => e.argument === 'scale');
    assert.throws(() => ak.attention(q, q, q, { returnWeights: 1 }), (e) => e.argument === 'returnWeights');
  });

  test(`${ak.backend}: special values as in PyTorch (NaN kept by relu, finfo.min masks, NaN weights)`, async () => {
    const relu = ak.activation(new Float32Array([NaN, -1, 2]), 'relu').data;
    assert.ok(Number.isNaN(relu[0]) && relu[1] === 0 && relu[2] === 2);
    // A row of finite very negative additive scores is a softmax (uniform here), not a masked row.
    const L = 5, d = 4;
    const q = t([1, 1, L, d], 0.25), v = new Tensor('float32', Float32Array.from({ length: L * d }, (_, i) => i), [1, 1, L, d]);
    const mask = new Tensor('float32', new Float32Array(L * L).fill(-3.4028234663852886e38), [1, 1, L, L]);
    const out = ak.attention(q, q, v, { mask }).data;
    for (let c = 0; c < d; c++) assert.ok(Math.abs(out[c] - (c + 2 * d)) < 1e-4, `uniform average, column ${c}`);
    // NaN in a key makes every row that sees it NaN; +inf in q too.
    const k = t([1, 1, L, d]);
    k.data[3] = NaN;
    assert.ok(ak.attention(q, k, v).data.every(Number.isNaN));
    // A checkpoint whose query weight is all NaN gives NaN hidden states, as in PyTorch.
    const dir = path.join(ROOT, 'tests/fixtures/models/bert-tiny');
    const state = await ak.loadSafetensors(new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors'))));
    const name = 'bert.encoder.layer.0.attention.self.query.weight';
    const w = state.tensors[name];
    const weights = { ...state.tensors, [name]: new Tensor('float32', new Float32Array(w.data.length).fill(NaN), w.dims) };
    const model = await ak.Model.fromPretrained({ config: fs.readFileSync(path.join(dir, 'config.json'), 'utf8'), weights });
    assert.ok(model.forward([[1, 2, 3]]).lastHiddenState.data.every(Number.isNaN));
    model.dispose();
  });

  test(`${ak.backend}: hostile tokenizer files are coded errors and leave other tokenizers intact`, async () => {
    const heap = await loaders(ak);
    const before = await ak.Tokenizer.fromJSON(GOOD_TOKENIZER);
    const ids = Array.from(before.encode('hello worlds').inputIds.data);
    const bad = (extra) => ({ ...GOOD_TOKENIZER, ...extra });
    const hostile = [
      ...[-18, -1, 2 ** 31, 2 ** 32 + 3].map((id) => bad({ added_tokens: [{ id, content: 'ZZZZZZZZZZ' }] })),
      { model: { type: 'WordPiece', vocab: { '[UNK]': 16777216 } } },
      bad({ added_tokens: [{ id: 7, content: 'x', special: 'yes' }] }),
      { model: { ...GOOD_TOKENIZER.model, continuing_subword_prefix: 1 } },
      { model: { ...GOOD_TOKENIZER.model, max_input_chars_per_word: -1 } },
      bad({ post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: 5, type_id: 0 } }], pair: [] } }),
      bad({ padding: { pad_id: 0, pad_type_id: 'x' } }),
      bad({ post_processor: { type: 'BertProcessing', cls: ['[CLS]', 1], sep: ['[SEP]', 99] } }),
      { model: { type: 'BPE', vocab: { a: 0, b: 1 }, merges: ['a b'] } },
    ];
    const sizeBefore = heap.heapSize();
    for (let round = 0; round < 3; round++) {
      for (const file of hostile) {
        await assert.rejects(ak.Tokenizer.fromJSON(file), (e) => isCoded(e), JSON.stringify(file).slice(0, 120));
      }
    }
    assert.ok(heap.heapSize() - sizeBefore < 64 << 20, 'a 57-byte file cannot grow the heap to gigabytes');
    assert.deepEqual(Array.from(before.encode('hello worlds').inputIds.data), ids, 'the earlier tokenizer still works');
    // An empty added token matches nothing; decode keeps a leading U+FEFF (byte-level BPE).
    const withEmpty = await ak.Tokenizer.fromJSON(bad({ added_tokens: [{ id: 6, content: '', special: true }] }));
    assert.deepEqual(Array.from(withEmpty.encode('hello').inputIds.data), [3]);
    withEmpty.dispose();
    const bpe = await ak.Tokenizer.fromJSON({
      model: { type: 'BPE', vocab: { 'ï': 0, '»': 1, '¿': 2, a: 3 }, merges: [] },
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false }, decoder: { type: 'ByteLevel' },
    });
    assert.equal(bpe.decode([0, 1, 2, 3]), '\uFEFFa');
    bpe.dispose();
    before.dispose();
  });

  test(`${ak.backend}: issue 33: WordPiece beside a long token, BPE without unk_token, long Sequences, rope_scaling keys`, async () => {
    // A 4 000-character word with max_input_chars_per_word 1e6 beside a 1 500-byte token (the old
    // search hashed every candidate up to it from each position: seconds).
    const vocab = { '[UNK]': 0, a: 1, b: 2, '##a': 3, '##b': 4, [`${'a'.repeat(1500)}b`]: 5 };
    const wordpiece = await ak.Tokenizer.fromJSON({ model: { type: 'WordPiece', vocab, max_input_chars_per_word: 1e6 } });
    const start = performance.now();
    const ids = wordpiece.encode('ab'.repeat(2000)).inputIds.data;
    assert.ok(performance.now() - start < 500, `${performance.now() - start} ms`);
    assert.deepEqual(Array.from(ids.subarray(0, 4)), [1, 4, 3, 4]);
    assert.equal(ids.length, 4000);
    wordpiece.dispose();
    // BPE without unk_token: an unknown symbol is dropped before the merges (Hugging Face's
    // merge_word), where the whole encode used to fail.
    const bpe = await ak.Tokenizer.fromJSON({ model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2 }, merges: ['a b'] } });
    assert.deepEqual(Array.from(bpe.encode('axb').inputIds.data), [2]);
    assert.deepEqual(Array.from(bpe.encode('x').inputIds.data), []);
    bpe.dispose();
    // A Sequence chains at most 64 steps (nested ones counted), refused by path before any text.
    const digits = { model: GOOD_TOKENIZER.model, pre_tokenizer: { type: 'Sequence', pretokenizers: Array(10000).fill({ type: 'Digits' }) } };
    await assert.rejects(ak.Tokenizer.fromJSON(digits), (e) => isCoded(e) && e.argument === 'pre_tokenizer.pretokenizers[64]');
    // rope_scaling values are named by their config.json key (a factor of 0 was refused later, as 'scaling.factor').
    const dir = path.join(ROOT, 'tests/fixtures/models/llama-tiny-bf16');
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    for (const [key, value] of [['factor', 0], ['factor', -1], ['low_freq_factor', 0], ['beta_fast', -1]]) {
      const rope = { ...config, rope_scaling: { rope_type: 'llama3', factor: 2, high_freq_factor: 4, [key]: value } };
      await assert.rejects(ak.modelSpec(rope), (e) => isCoded(e) && e.argument === `rope_scaling.${key}`, key);
    }
    const weights = (await ak.loadSafetensors(new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors'))))).tensors;
    await assert.rejects(ak.Model.fromPretrained({ config: { ...config, rope_scaling: { type: 'linear', factor: 0 } }, weights }),
      (e) => isCoded(e) && e.argument === 'rope_scaling.factor');
  });

  test(`${ak.backend}: file-given names are plain keys, and size products are bounded`, async () => {
    // A .safetensors whose tensors are named like Object.prototype's members.
    // (written as text: an object literal's __proto__ key would set the prototype instead)
    const header = '{"__proto__": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, ' +
      '"constructor": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}';
    const text = new TextEncoder().encode(header.padEnd(Math.ceil(header.length / 8) * 8));
    const file = new Uint8Array(8 + text.length + 8);
    new DataView(file.buffer).setBigUint64(0, BigInt(text.length), true);
    file.set(text, 8);
    new DataView(file.buffer).setFloat32(8 + text.length, 1.5, true);
    new DataView(file.buffer).setFloat32(8 + text.length + 4, 2.5, true);
    const { tensors } = await ak.loadSafetensors(file);
    assert.deepEqual(Object.keys(tensors).sort(), ['__proto__', 'constructor']);
    assert.equal(tensors.__proto__.data[0], 1.5); // eslint-disable-line no-proto
    assert.equal(tensors.constructor.data[0], 2.5);
    // RoBERTa positions past int32, typeVocabSize x dim past 2^32, and a padding mask of 3-D ids.
    assert.throws(() => ak.positionIds(1, 4, { inputIds: [5, 6, 7, 8], paddingIdx: 2147483647 }), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'paddingIdx');
    assert.throws(() => new ak.Embeddings({ vocabSize: 4, dim: 65536, typeVocabSize: 65536 }), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'typeVocabSize * dim');
    assert.throws(() => ak.paddingMask({ data: new Int32Array(8), dims: [2, 2, 2] }, 0), (e) => e.code === 'ERR_SHAPE_MISMATCH');
  });

  test(`${ak.backend}: every public function throws only coded AttnkitErrors, and leaks nothing`, async () => {
    const q = t([1, 2, 3, 4]);
    const causal = ak.causalMask(3, 3);
    const calls = {
      sinusoidalPositionalEncoding: [(...a) => ak.sinusoidalPositionalEncoding(...a), [4, 8, {}]],
      oneHot: [(...a) => ak.oneHot(...a), [[1, 2], 4, {}]],
      embedding: [(...a) => ak.embedding(...a), [[0, 1], t([3, 4]), {}]],
      layerNorm: [(...a) => ak.layerNorm(...a), [t([2, 4]), {}]],
      rmsNorm: [(...a) => ak.rmsNorm(...a), [t([2, 4]), {}]],
      positionIds: [(...a) => ak.positionIds(...a), [1, 4, {}]],
      paddingMask: [(...a) => ak.paddingMask(...a), [[1, 0], 0]],
      paddingMaskFromAttentionMask: [(...a) => ak.paddingMaskFromAttentionMask(...a), [[1, 0]]],
      causalMask: [(...a) => ak.causalMask(...a), [3, 3]],
      combineMasks: [(...a) => ak.combineMasks(...a), [causal, causal]],
      invertMask: [(...a) => ak.invertMask(...a), [causal]],
      toAdditiveMask: [(...a) => ak.toAdditiveMask(...a), [causal]],
      attention: [(...a) => ak.attention(...a), [q, q, q, {}]],
      alibiSlopes: [(...a) => ak.alibiSlopes(...a), [4]],
      rotary: [(...a) => ak.rotary(...a), [q, {}]],
      rotaryFrequencies: [(...a) => ak.rotaryFrequencies(...a), [4, {}]],
      linear: [(...a) => ak.linear(...a), [t([2, 4]), t([3, 4]), {}]],
      activation: [(...a) => ak.activation(...a), [t([5]), 'gelu']],
      Embeddings: [(o) => new ak.Embeddings(o).dispose(), [{ vocabSize: 4, dim: 8 }]],
      MultiHeadAttention: [(o) => new ak.MultiHeadAttention(o).dispose(), [{ dim: 8, numHeads: 2 }]],
      EncoderLayer: [(o) => new ak.EncoderLayer(o).dispose(), [{ dim: 8, numHeads: 2, ffnDim: 16 }]],
      DecoderLayer: [(o) => new ak.DecoderLayer(o).dispose(), [{ dim: 8, numHeads: 2, ffnDim: 16 }]],
      loadSafetensors: [(...a) => ak.loadSafetensors(...a), [new Uint8Array(16), {}]],
      loadGguf: [(...a) => ak.loadGguf(...a), [new Uint8Array(16), {}]],
      modelSpec: [(...a) => ak.modelSpec(...a), ['{}']],
      'Tokenizer.fromJSON': [(...a) => ak.Tokenizer.fromJSON(...a), [GOOD_TOKENIZER]],
      'Tokenizer.fromVocab': [(...a) => ak.Tokenizer.fromVocab(...a), ['[UNK]\na', {}]],
      'Tokenizer.fromGpt2': [(...a) => ak.Tokenizer.fromGpt2(...a), ['{"a": 0}', '#version: 0.2\n']],
      'Tokenizer.fromSentencePiece': [(...a) => ak.Tokenizer.fromSentencePiece(...a), [SPM_MODEL, {}]],
    };
    const mha = new ak.MultiHeadAttention({ dim: 8, numHeads: 2 });
    const layer = new ak.EncoderLayer({ dim: 8, numHeads: 2, ffnDim: 16 });
    const emb = new ak.Embeddings({ vocabSize: 4, dim: 8 });
    const tok = await ak.Tokenizer.fromJSON(GOOD_TOKENIZER);
    const spm = await ak.Tokenizer.fromSentencePiece(SPM_MODEL);
    const bertDir = path.join(ROOT, 'tests/fixtures/repos/bert');
    const model = await ak.Model.fromPretrained(bertDir);
    const gpt2 = await ak.Model.fromPretrained(path.join(ROOT, 'tests/fixtures/repos/gpt2'));
    Object.assign(calls, {
      'Model.forward': [(...a) => model.forward(...a), [[[2, 5, 3]], {}]],
      'Model.forward (GPT-2, logits)': [(...a) => gpt2.forward(...a), [[[2, 5, 3]], { lastTokenOnly: true, outputLogits: false }]],
      'Model.fromPretrained': [(...a) => ak.Model.fromPretrained(...a), [bertDir, {}]],
      'Tokenizer.fromPretrained': [(...a) => ak.Tokenizer.fromPretrained(...a), [bertDir, {}]],
      'Tokenizer.batchDecode': [(...a) => tok.batchDecode(...a), [[[3, 4]], {}]],
      'MultiHeadAttention.forward': [(...a) => mha.forward(...a), [t([1, 3, 8]), {}]],
      'MultiHeadAttention.setWeights': [(...a) => mha.setWeights(...a), [{ qWeight: t([8, 8]) }]],
      'EncoderLayer.forward': [(...a) => layer.forward(...a), [t([1, 3, 8]), {}]],
      'Embeddings.forward': [(...a) => emb.forward(...a), [[1, 2], {}]],
      'Tokenizer.encode': [(...a) => tok.encode(...a), ['hello world', {}]],
      'Tokenizer.decode': [(...a) => tok.decode(...a), [[3, 4], {}]],
      'Tokenizer.tokenize': [(...a) => tok.tokenize(...a), ['hello']],
      'Tokenizer.encode (SentencePiece)': [(...a) => spm.encode(...a), [['hello world', 'again'], { padId: 0 }]],
      'Tokenizer.decode (SentencePiece)': [(...a) => spm.decode(...a), [[5, 6], {}]],
    });
    const heap = await loaders(ak);
    const run = async () => {
      const wrong = [];
      for (const [name, [fn, args]] of Object.entries(calls)) wrong.push(...await sweep(name, fn, args));
      return wrong;
    };
    assert.deepEqual(await run(), []);
    const [core, files] = [ak.mallocInUse(), heap.mallocInUse()];
    assert.deepEqual(await run(), []);
    assert.equal(ak.mallocInUse(), core, 'the core heap is flat over a second sweep');
    assert.equal(heap.mallocInUse(), files, 'the loaders heap is flat over a second sweep');
    for (const m of [mha, layer, emb, tok, spm, model, gpt2]) m.dispose();
  });
}

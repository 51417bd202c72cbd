// GGUF files in one call: Model.fromPretrained and Tokenizer.fromPretrained on the fixtures of
// tests/golden/gen_gguf.py (a tiny llama in F32, F16, BF16, Q8_0, Q4_0 and Q4_K; gpt2 in F16; qwen2
// in F32), against the PyTorch reference gen_gguf.py recorded (greedy tokens, last-position
// logits) and against llama.cpp itself (tests/fixtures/gguf/llamacpp.json, recorded by
// tests/golden/gen_gguf_llamacpp.mjs: its token ids for a corpus, its greedy tokens and
// next-token log-probabilities for every file). Every source kind; hostile files refused with
// coded errors naming the GGUF key or tensor.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AttnkitError, env } from '../../../web/attnkit.js';
import { ROOT, backends, fixture, maxAbsDiff } from '../helpers.mjs';
import { ggufConfig } from '../../../web/src/models/gguf.js';
import { ggufBytes, vocabGgufs } from '../../fixtures/gguf/vocab_files.mjs';
import { startHub, useHub } from '../hub_server.mjs';

const fx = fixture('gguf/gguf.json');
const cpp = fixture('gguf/llamacpp.json');
const DIR = path.join(ROOT, 'tests/fixtures/gguf');
const read = (name) => new Uint8Array(fs.readFileSync(path.join(DIR, name)));
// The SIMD and scalar builds (the relaxed pass of scripts/test.sh gives its two builds instead).
const builds = await backends();
const simd = builds[0], scalar = builds.find((b) => b.backend === 'wasm-scalar') ?? builds.at(-1);

const TYPES = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_k'];
// Each file against PyTorch's forward with the weights as that file stores them (dequantised by
// ggml's rules: gen_gguf.py's asStored): float32 rounding apart. And the quantisation's own cost,
// against the float32 model: max |logit - PyTorch's float32 logit| at the prompt's last position,
// and at how many of the 24 positions of prompt + greedy continuation the top-1 token is the
// float32 file's. Measured (any build) and asserted a little above; printed by the test. (A tiny
// random model with rows of 32 is a hard case for 4-bit blocks: real models lose less.)
const BOUNDS = {
  f32: { maxDiff: 2e-5, top1: 24 }, f16: { maxDiff: 0.01, top1: 24 }, bf16: { maxDiff: 0.05, top1: 24 },
  q8_0: { maxDiff: 0.15, top1: 24 }, q4_0: { maxDiff: 1.2, top1: 12 }, q4_k: { maxDiff: 1.3, top1: 12 },
};
// llama.cpp computes with a float16 KV cache and, for quantized weights, 8-bit activations:
// its log-probabilities differ from attnkit's (float32 throughout) by up to this much.
const CPP_LOGPROB = { f32: 0.01, f16: 0.01, bf16: 0.03, q8_0: 0.15, q4_0: 0.15, q4_k: 0.15 };

const argmaxRows = (logits, V) => Array.from({ length: logits.length / V }, (_, i) => {
  let best = 0;
  for (let j = 1; j < V; j++) if (logits[i * V + j] > logits[i * V + best]) best = j;
  return best;
});
const logSoftmax = (x) => {
  const m = Math.max(...x);
  const lse = m + Math.log(x.reduce((a, v) => a + Math.exp(v - m), 0));
  return Array.from(x, (v) => v - lse);
};
// The largest |attnkit's log-probability - llama.cpp's| over the tokens llama.cpp gives one for.
const logProbDiff = (logits, theirs) => {
  const ours = logSoftmax(logits);
  let m = 0;
  theirs.forEach((v, i) => { if (v !== null) m = Math.max(m, Math.abs(ours[i] - v)); });
  return m;
};

test('each llama GGUF type loads in one call; logits and greedy tokens against PyTorch and llama.cpp', async () => {
  const ref = fx.llama.reference;
  const V = fx.llama.vocab_size;
  const prompt = new Int32Array(ref.prompt);
  // The float32 file's top-1 at every position of prompt + greedy continuation: the yardstick.
  const f32 = await simd.Model.fromPretrained(path.join(DIR, 'llama-f32.gguf'));
  const seq = Int32Array.from([...ref.prompt, ...ref.greedy]);
  const want = argmaxRows(f32.forward(seq, { outputLogits: true }).logits.data, V);
  f32.dispose();
  const report = [];
  for (const type of TYPES) {
    const file = `llama-${type}.gguf`;
    for (const ak of [simd, scalar]) {
      const model = await ak.Model.fromPretrained(path.join(DIR, file));
      try {
        assert.deepEqual(model.unusedWeights, []);
        assert.equal(model.spec.family, 'llama');
        assert.equal(model.spec.lmHead, 'separate');
        const last = model.forward(prompt, { lastTokenOnly: true }).logits.data;
        const out = await model.generate(prompt, { maxNewTokens: 32 });
        const greedy = Array.from(out.sequences.data.slice(prompt.length));
        // Exact: PyTorch with this file's weights as stored.
        const stored = type === 'f32' ? ref : fx.llama.asStored[file];
        const exact = maxAbsDiff(last, stored.lastLogits);
        assert.ok(exact <= 2e-5, `${file} (${ak.backend}): max |logit - PyTorch on the stored weights| ${exact}`);
        assert.deepEqual(greedy.slice(0, 8), stored.greedy, `${file}: PyTorch's 8 greedy tokens on the stored weights`);
        // llama.cpp's own run of the file: its 32 greedy tokens (4-bit files: its first 8, as its
        // 8-bit activations part ways later), its log-probabilities within its error.
        const theirs = cpp.models[file];
        const sameAsCpp = greedy.findIndex((t, i) => t !== theirs.greedy[i]);
        if (type.startsWith('q4')) assert.deepEqual(greedy.slice(0, 8), theirs.greedy.slice(0, 8), `${file}: llama.cpp's first 8 greedy tokens`);
        else assert.deepEqual(greedy, theirs.greedy, `${file}: llama.cpp's 32 greedy tokens`);
        const cppDiff = logProbDiff(last, theirs.logProbs);
        assert.ok(cppDiff <= CPP_LOGPROB[type], `${file}: max |log-prob - llama.cpp's| ${cppDiff}`);
        if (ak !== simd) continue;
        // The quantisation's cost against the float32 model.
        const maxDiff = maxAbsDiff(last, ref.lastLogits);
        const top1 = argmaxRows(model.forward(seq, { outputLogits: true }).logits.data, V).filter((t, i) => t === want[i]).length;
        report.push(`${type}: |logit - stored-weights PyTorch| ${exact.toExponential(1)}; vs float32: max |logit diff| ` +
          `${maxDiff.toExponential(2)}, top-1 agreement ${top1}/${want.length}; llama.cpp: ${sameAsCpp < 0 ? 'all 32' : `the first ${sameAsCpp}`} ` +
          `greedy tokens the same, max |log-prob diff| ${cppDiff.toExponential(2)}`);
        assert.ok(maxDiff <= BOUNDS[type].maxDiff, `${file}: max |logit - PyTorch float32| ${maxDiff}`);
        assert.ok(top1 >= BOUNDS[type].top1, `${file}: top-1 agreement with float32 ${top1}/${want.length}`);
      } finally {
        model.dispose();
      }
    }
  }
  console.log(report.join('\n'));
});

test('gpt2 (Conv1D weights transposed back, the tied head written twice) and qwen2 (biases, tied, not permuted)', async () => {
  for (const [arch, file, tol] of [['gpt2', 'gpt2-f16.gguf', 0.01], ['qwen2', 'qwen2-f32.gguf', 2e-5]]) {
    const ref = fx[arch].reference;
    for (const ak of [simd, scalar]) {
      const model = await ak.Model.fromPretrained(path.join(DIR, file));
      try {
        assert.equal(model.spec.family, arch);
        assert.equal(model.spec.lmHead, 'tied', `${file}: output.weight is token_embd.weight (gpt2) or absent (qwen2)`);
        assert.deepEqual(model.unusedWeights, []);
        const last = model.forward(new Int32Array(ref.prompt), { lastTokenOnly: true }).logits.data;
        assert.ok(maxAbsDiff(last, ref.lastLogits) <= tol, `${file} (${ak.backend}): ${maxAbsDiff(last, ref.lastLogits)}`);
        const out = await model.generate(new Int32Array(ref.prompt), { maxNewTokens: 32 });
        const greedy = Array.from(out.sequences.data.slice(ref.prompt.length));
        assert.deepEqual(greedy.slice(0, 8), ref.greedy, `${file}: PyTorch's greedy tokens`);
        assert.deepEqual(greedy, cpp.models[file].greedy, `${file}: llama.cpp's 32 greedy tokens`);
        assert.ok(logProbDiff(last, cpp.models[file].logProbs) <= 0.05);
      } finally {
        model.dispose();
      }
    }
  }
  // The config.json each file stands for (what convert_hf_to_gguf.py read).
  const cfg = (file) => {
    const bytes = read(file);
    return simd.loadGguf(bytes).then(({ metadata, tensors }) => ggufConfig('test', metadata, tensors, file));
  };
  assert.deepEqual(await cfg('qwen2-f32.gguf'), {
    model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'], vocab_size: fx.qwen2.vocab_size, hidden_size: 32, intermediate_size: 64,
    num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 64, rms_norm_eps: Math.fround(1e-6),
    rope_theta: 1e6, hidden_act: 'silu', tie_word_embeddings: true, bos_token_id: 286, eos_token_id: 288, pad_token_id: 286,
  });
  const g = await cfg('gpt2-f16.gguf');
  assert.deepEqual([g.model_type, g.n_embd, g.n_layer, g.n_head, g.n_positions, g.n_inner, g.tie_word_embeddings], ['gpt2', 32, 2, 4, 64, 128, true]);
});

test('every source kind: path, file: URL, bytes, ArrayBuffer, Response, File, [File]; progress; options checked', async () => {
  const ak = simd;
  const file = path.join(DIR, 'llama-q8_0.gguf');
  const bytes = read('llama-q8_0.gguf');
  const ref = fx.llama.reference;
  const check = async (make, what) => {
    const model = await ak.Model.fromPretrained(make());
    const greedy = await model.generate(new Int32Array(ref.prompt), { maxNewTokens: 8 });
    assert.deepEqual(Array.from(greedy.sequences.data.slice(ref.prompt.length)), ref.greedy, what);
    model.dispose();
    const tok = await ak.Tokenizer.fromPretrained(make());
    assert.equal(tok.bosTokenId, 1, what);
    tok.dispose();
  };
  await check(() => file, 'an absolute path');
  await check(() => path.relative(process.cwd(), file), 'a relative path');
  await check(() => pathToFileURL(file), 'a file: URL');
  await check(() => pathToFileURL(file).href, 'a file: URL string');
  await check(() => bytes, 'a Uint8Array');
  await check(() => bytes.slice().buffer, 'an ArrayBuffer');
  await check(() => new Response(bytes), 'a Response');
  await check(() => new File([bytes], 'model.gguf'), 'a File');
  await check(() => [new File([bytes], 'model.gguf')], 'a list of one File');
  // Progress: the file's bytes, ending with its total.
  const seen = [];
  (await ak.Model.fromPretrained(file, { onProgress: (loaded, total, ev) => seen.push([loaded, total, ev?.file]) })).dispose();
  assert.deepEqual(seen.at(-1), [bytes.length, bytes.length, 'llama-q8_0.gguf']);
  // Options: unknown ones refused with the closest name; revision is for Hub ids.
  await assert.rejects(ak.Model.fromPretrained(file, { onProgres: () => {} }),
    (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' && /did you mean 'onProgress'/.test(e.message));
  await assert.rejects(ak.Tokenizer.fromPretrained(file, { timout: 5 }),
    (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' && /did you mean 'timeout'/.test(e.message));
  await assert.rejects(ak.Model.fromPretrained(bytes, { revision: 'main' }),
    (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'revision');
  await assert.rejects(ak.Model.fromPretrained(file, { revision: 'main' }),
    (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'revision');
  await assert.rejects(ak.Tokenizer.fromPretrained(file, { revision: 'main' }),
    (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'revision');
  await assert.rejects(ak.Model.fromPretrained(bytes, { signal: AbortSignal.abort() }), (e) => e instanceof AttnkitError && e.code === 'ERR_ABORTED');
  await assert.rejects(ak.Model.fromPretrained(path.join(DIR, 'missing.gguf')),
    (e) => e instanceof AttnkitError && e.code === 'ERR_LOAD' && /missing\.gguf/.test(e.message));
  // Bytes that are not GGUF say what they are.
  await assert.rejects(ak.Model.fromPretrained(fs.readFileSync(path.join(ROOT, 'tests/fixtures/small.safetensors'))),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /not a GGUF file: it looks like a .safetensors file/.test(e.message));
});

test('the GGUF tokenizers give llama.cpp\'s token ids: SentencePiece by scores, byte-level BPE under four pre-tokenizers', async () => {
  const report = [];
  // The fixtures' tiny vocabularies, and real ones (a SentencePiece BPE model; GPT-2's 50 257
  // tokens as gpt-2, llama-bpe, qwen2 and default) in vocabulary-only files, with random texts.
  const vocab = vocabGgufs();
  for (const [file, want] of Object.entries(cpp.tokenizers)) {
    const tok = await simd.Tokenizer.fromPretrained(vocab[file] ?? path.join(DIR, file));
    try {
      assert.equal(tok.bosTokenId, want.bos, file);
      assert.equal(tok.eosTokenId, want.eos, file);
      let same = 0;
      for (const { text, ids } of want.cases) {
        const got = Array.from(tok.encode(text, { addSpecialTokens: false }).inputIds.data);
        assert.deepEqual(got, ids, `${file}: ${JSON.stringify(text)}`);
        same++;
        // With special tokens: BOS first when llama.cpp prepends it.
        const withBos = Array.from(tok.encode(text).inputIds.data);
        assert.deepEqual(withBos, want.prependBos ? [want.bos, ...ids] : ids, `${file}: ${JSON.stringify(text)} with special tokens`);
        // Text back, for texts without special tokens.
        if (!/<[|su]|\u2581/.test(text)) assert.equal(tok.decode(ids), text, `${file}: decode ${JSON.stringify(text)}`);
      }
      report.push(`${file}: ${same}/${want.cases.length} texts as llama.cpp`);
    } finally {
      tok.dispose();
    }
  }
  console.log(report.join('\n'));
});

test('a GGUF file over HTTP and in a Hub repository (\'org/name/file.gguf\', through the download cache)', async () => {
  const hub = await startHub({ 'org/tiny-gguf': 'tests/fixtures/gguf' });
  const restore = useHub(env, hub);
  try {
    const ref = fx.llama.reference;
    const greedy = async (model) => {
      const out = await model.generate(new Int32Array(ref.prompt), { maxNewTokens: 8 });
      model.dispose();
      return Array.from(out.sequences.data.slice(ref.prompt.length));
    };
    const url = `${hub.url}org/tiny-gguf/resolve/main/llama-q8_0.gguf?download=true`;
    assert.deepEqual(await greedy(await simd.Model.fromPretrained(url)), ref.greedy);
    assert.equal((await simd.Tokenizer.fromPretrained(new URL(url))).bosTokenId, 1);
    const before = hub.count('GET', 'llama-q8_0.gguf');
    assert.deepEqual(await greedy(await simd.Model.fromPretrained('org/tiny-gguf/llama-q8_0.gguf', { revision: 'main' })), ref.greedy);
    assert.equal((await simd.Tokenizer.fromPretrained('org/tiny-gguf/llama-q8_0.gguf')).eosTokenId, 2);
    assert.equal(hub.count('GET', 'llama-q8_0.gguf'), before + 1, 'downloaded once, then read from the cache');
    await assert.rejects(simd.Model.fromPretrained('org/tiny-gguf/missing.gguf'), (e) => e.code === 'ERR_LOAD' && /missing\.gguf/.test(e.message));
  } finally {
    restore();
    await hub.close();
  }
});

test('a tokenizer reads only the GGUF header of a File or a file on disk', async () => {
  // A tokenizer and 12 MB of tensor data after it.
  const bytes = ggufBytes([
    ['general.architecture', 8, 'llama'], ['tokenizer.ggml.model', 8, 'gpt2'], ['tokenizer.ggml.pre', 8, 'gpt-2'],
    ['tokenizer.ggml.tokens', 9, [8, ['a', 'b', 'ab']]], ['tokenizer.ggml.merges', 9, [8, ['a b']]],
  ], [['big', [1024, 3072]]]);
  assert.ok(bytes.length > 12e6);
  const slices = [];
  class SpyFile extends File {
    slice(...range) {
      slices.push(range);
      return super.slice(...range);
    }
  }
  const tok = await simd.Tokenizer.fromPretrained(new SpyFile([bytes], 'big.gguf'));
  assert.deepEqual(Array.from(tok.encode('abba').inputIds.data), [2, 1, 0]);
  assert.ok(slices.length > 0 && slices.every(([start, end]) => start === 0 && end <= 4 * 2 ** 20), JSON.stringify(slices));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-gguf-')), 'big.gguf');
  fs.writeFileSync(file, bytes);
  try {
    const seen = [];
    const t2 = await simd.Tokenizer.fromPretrained(file, { onProgress: (loaded, total) => seen.push([loaded, total]) });
    assert.deepEqual(Array.from(t2.encode('abba').inputIds.data), [2, 1, 0]);
    assert.ok(seen.length > 0 && seen.every(([loaded, total]) => loaded <= 4 * 2 ** 20 && total === bytes.length), JSON.stringify(seen));
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true });
  }
});

// A fixture with bytes changed in place (same lengths): `edits` is [[from string, to string], ...],
// each replacing the first occurrence after the previous one's (in the header).
function patched(name, edits) {
  const b = read(name);
  const enc = new TextEncoder();
  const find = (needle, from) => {
    for (let i = from; i + needle.length <= b.length; i++) {
      let k = 0;
      while (k < needle.length && b[i + k] === needle[k]) k++;
      if (k === needle.length) return i;
    }
    throw new Error(`${name}: no ${new TextDecoder().decode(needle)}`);
  };
  for (const [from, to, after = ''] of edits) {
    const start = after ? find(enc.encode(after), 0) : 0;
    const a = enc.encode(from), c = enc.encode(to);
    assert.equal(a.length, c.length);
    b.set(c, find(a, start));
  }
  return b;
}
// The tensor info of `tensor` with ne[0] and ne[1] swapped (a 2-D F32 tensor: the same bytes).
function swappedDims(name, tensor) {
  const b = read(name);
  const key = new TextEncoder().encode(tensor);
  for (let i = 8; i + key.length + 28 <= b.length; i++) {
    if (b.subarray(i, i + key.length).every((x, k) => x === key[k]) && new DataView(b.buffer).getUint32(i - 8, true) === key.length) {
      const at = i + key.length + 4; // past the name and n_dims
      const ne0 = b.slice(at, at + 8), ne1 = b.slice(at + 8, at + 16);
      b.set(ne1, at);
      b.set(ne0, at + 8);
      return b;
    }
  }
  throw new Error(`no tensor info ${tensor}`);
}

test('hostile GGUF models and tokenizers: coded errors naming the key or tensor', async () => {
  const ak = simd;
  const cases = [
    // An architecture attnkit does not map (general.architecture says so).
    ['model', patched('llama-f32.gguf', [['llama', 'mamba', 'general.architecture']]), 'general.architecture', 'ERR_INVALID_ARGUMENT', /'mamba' model/],
    // A tensor missing (renamed), one of the wrong shape, a required key missing.
    ['model', patched('llama-f32.gguf', [['blk.0.ffn_up.weight', 'blk.0.ffn_uq.weight']]), 'blk.0.ffn_up.weight', 'ERR_INVALID_ARGUMENT',
      /has no tensor blk\.0\.ffn_up\.weight/],
    ['model', swappedDims('llama-f32.gguf', 'blk.0.attn_k.weight'), 'blk.0.attn_k.weight', 'ERR_SHAPE_MISMATCH',
      /tensor blk\.0\.attn_k\.weight has dims \[32,16\].*expected \[16,32\]/],
    ['model', swappedDims('gpt2-f16.gguf', 'blk.1.ffn_up.weight'), 'blk.1.ffn_up.weight', 'ERR_SHAPE_MISMATCH', /expected \[128,32\]/],
    ['model', patched('llama-f32.gguf', [['llama.block_count', 'llama.block_cOunt']]), 'llama.block_count', 'ERR_INVALID_ARGUMENT',
      /has no llama\.block_count/],
    ['model', patched('qwen2-f32.gguf', [['blk.1.attn_k.bias', 'blk.1.attn_k.bia_']]), 'blk.1.attn_k.bias', 'ERR_INVALID_ARGUMENT', /has no tensor/],
    // A block past block_count.
    ['model', patched('qwen2-f32.gguf', [['\u0002\u0000\u0000\u0000', '\u0001\u0000\u0000\u0000', 'qwen2.block_count']]),
      'blk.1.attn_norm.weight', 'ERR_INVALID_ARGUMENT', /block 1, but qwen2\.block_count is 1/],
    // Tokenizers: a model and a pre-tokenizer llama.cpp has and attnkit does not map.
    ['tokenizer', patched('gpt2-f16.gguf', [['gpt2', 'bert', 'tokenizer.ggml.model']]), 'tokenizer.ggml.model', 'ERR_INVALID_ARGUMENT', /'bert' is not supported/],
    ['tokenizer', patched('qwen2-f32.gguf', [['qwen2', 'qwen9', 'tokenizer.ggml.pre']]), 'tokenizer.ggml.pre', 'ERR_INVALID_ARGUMENT',
      /tokenizer\.ggml\.pre 'qwen9' is not supported \(supported: gpt-2,/],
    ['tokenizer', patched('llama-f32.gguf', [['tokenizer.ggml.tokens', 'tokenizer.ggml.tokenz']]), 'tokenizer.ggml.tokens', 'ERR_INVALID_ARGUMENT',
      /tokenizer\.ggml\.tokens must be a non-empty array/],
  ];
  // Settings the families do not have, written as keys.
  const llamaKeys = (...more) => ggufBytes([
    ['general.architecture', 8, 'llama'], ['llama.vocab_size', 4, 16], ['llama.context_length', 4, 64], ['llama.embedding_length', 4, 32],
    ['llama.block_count', 4, 1], ['llama.feed_forward_length', 4, 64], ['llama.attention.head_count', 4, 4],
    ['llama.attention.layer_norm_rms_epsilon', 6, 1e-5], ...more]);
  cases.push(
    ['model', llamaKeys(['llama.rope.scaling.type', 8, 'su'], ['llama.rope.scaling.factor', 6, 2]), 'llama.rope.scaling.type', 'ERR_INVALID_ARGUMENT',
      /'su' is not supported \(supported: none, linear, yarn\)/],
    ['model', llamaKeys(['llama.rope.scaling.yarn_log_multiplier', 6, 0.1]), 'llama.rope.scaling.yarn_log_multiplier', 'ERR_INVALID_ARGUMENT', /not supported/],
    ['model', llamaKeys(['llama.expert_count', 4, 8]), 'llama.expert_count', 'ERR_INVALID_ARGUMENT', /mixture-of-experts/],
    ['model', llamaKeys(['llama.logit_scale', 6, 0.5]), 'llama.logit_scale', 'ERR_INVALID_ARGUMENT', /no such setting/],
    ['model', llamaKeys(['llama.rope.dimension_count', 4, 4]), 'llama.rope.dimension_count', 'ERR_INVALID_ARGUMENT', /partial rotary/],
    ['model', llamaKeys(['llama.attention.head_count_kv', 9, [5, [4]]]), 'llama.attention.head_count_kv', 'ERR_INVALID_ARGUMENT', /a value per layer/],
    ['model', llamaKeys(), 'token_embd.weight', 'ERR_INVALID_ARGUMENT', /has no tensor token_embd\.weight/],
  );
  for (const [kind, bytes, argument, code, message] of cases) {
    const load = kind === 'model' ? ak.Model.fromPretrained(bytes) : ak.Tokenizer.fromPretrained(bytes);
    await assert.rejects(load, (e) => {
      assert.ok(e instanceof AttnkitError, String(e));
      assert.equal(e.code, code, e.message);
      assert.equal(e.argument, argument, e.message);
      assert.match(e.message, message);
      return true;
    }, `${kind}: ${argument}`);
  }
});

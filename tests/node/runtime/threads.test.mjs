// The threaded build (wasm-simd128-threads): chosen by default in Node, refused options by name,
// the same bits as the single-thread SIMD build for every kernel it splits (attention, linear,
// a whole model's forward and greedy generation), no leaks, and errors that leave it working.
import test from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { load, AttnkitError } from '../../../web/attnkit.js';
import { AWKWARD, ROOT } from '../helpers.mjs';

// The relaxed-SIMD pass of scripts/test.sh (ATTNKIT_BACKENDS=relaxed) compares the relaxed builds'
// threads with their single thread instead; the tests of which build load() picks are then skipped.
const RELAXED = process.env.ATTNKIT_BACKENDS === 'relaxed';
const simd = RELAXED ? 'relaxed' : 'auto';
const onlySimd128 = { skip: RELAXED && 'the SIMD128 builds\' selection (the relaxed pass)' };
const threaded = await load({ simd, threads: 3 }); // more threads than this machine's 2 cores: still exact
const single = await load({ simd, threads: 1 });

function randn(n, seed) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const u = (s + 0.5) / 2 ** 32;
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos((2 * Math.PI * s) / 2 ** 32);
  }
  return out;
}

const sameBits = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength),
  Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;

/** Waits (up to 10 s) until the module's pool threads have all started: they load in the background. */
async function allRunning(ak) {
  for (let i = 0; i < 1000 && ak.threadsRunning < ak.threads; i++) await new Promise((r) => setTimeout(r, 10));
  return ak.threadsRunning;
}

test('the pool\'s workers start after load() resolves, and then all run', async () => {
  assert.equal(await allRunning(threaded), 3);
  assert.equal(single.threadsRunning, 1);
});

test('Node picks the threaded build with min(cores, 8) threads; threads: 1 picks the single-thread one and says so', onlySimd128, async () => {
  const ak = await load();
  assert.equal(ak.backend, 'wasm-simd128-threads');
  assert.equal(ak.threads, Math.min(os.availableParallelism(), 8));
  assert.equal(ak.threadsUnavailableReason, null);
  assert.deepEqual([threaded.backend, threaded.threads], ['wasm-simd128-threads', 3]);
  assert.deepEqual([single.backend, single.threads, single.threadsUnavailableReason], ['wasm-simd128', 1, 'threads: 1 was asked for']);
  const scalar = await load({ simd: false, threads: 2 });
  assert.deepEqual([scalar.backend, scalar.threads], ['wasm-scalar', 1]);
  assert.match(scalar.threadsUnavailableReason, /wasm-scalar build was chosen/);
  assert.equal(await load({ threads: 3 }), threaded); // single flight per configuration
});

test('a bad threads option is refused by name', onlySimd128, async () => {
  for (const bad of [0, 1.5, 65, '2', true, NaN]) {
    await assert.rejects(load({ threads: bad }), (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' &&
      e.argument === 'threads', String(bad));
  }
  await assert.rejects(load({ thread: 2 }), (e) => e.argument === 'thread' && /did you mean 'threads'/.test(e.message));
});

test('attention: the same bits on 3 threads as on one, on awkward and on large sizes', () => {
  let seed = 1;
  // [batch, heads, kvHeads, qLen, kvLen, headDim]: a task per (batch, head) and super-blocks as
  // tasks (few heads, long rows), decoding over a cache, GQA.
  const shapes = [[2, 4, 2, 65, 65, 17], [1, 2, 1, 771, 771, 63], [1, 1, 1, 1031, 1031, 64], [2, 6, 3, 1, 771, 64],
    [3, 8, 8, 129, 129, 32], ...AWKWARD.map((n) => [1, 3, 1, n, n, 7])];
  for (const [B, H, Hkv, Lq, Lk, d] of shapes) {
    const q = { data: randn(B * H * Lq * d, seed++), dims: [B, H, Lq, d] };
    const k = { data: randn(B * Hkv * Lk * d, seed++), dims: [B, Hkv, Lk, d] };
    const v = { data: randn(B * Hkv * Lk * d, seed++), dims: [B, Hkv, Lk, d] };
    const mask = { type: 'bool', data: Uint8Array.from({ length: B * Lk }, (_, i) => (i % 7 ? 1 : 0)), dims: [B, 1, 1, Lk] };
    for (const options of [{}, { causal: true }, { returnWeights: true }, { mask, alibi: true }]) {
      const a = threaded.attention(q, k, v, options), b = single.attention(q, k, v, options);
      const what = `${JSON.stringify([B, H, Hkv, Lq, Lk, d])} ${Object.keys(options)}`;
      assert.ok(sameBits((a.output ?? a).data, (b.output ?? b).data), what);
      if (a.weights) assert.ok(sameBits(a.weights.data, b.weights.data), `${what} weights`);
    }
  }
});

test('linear: the same bits on 3 threads as on one (row ranges, column ranges, both layouts)', () => {
  let seed = 100;
  for (const [rows, inF, outF] of [[771, 65, 63], [129, 130, 771], [1, 771, 771], [3, 257, 2049], [17, 63, 3001], [5, 1024, 4099]]) {
    const x = { data: randn(rows * inF, seed++), dims: [rows, inF] };
    const bias = randn(outF, seed++);
    for (const layout of ['outIn', 'inOut']) {
      const weight = { data: randn(inF * outF, seed++), dims: layout === 'outIn' ? [outF, inF] : [inF, outF] };
      const a = threaded.linear(x, weight, { layout, bias }), b = single.linear(x, weight, { layout, bias });
      assert.ok(sameBits(a.data, b.data), `${rows}x${inF}->${outF} ${layout}`);
    }
  }
});

test('a whole model: forward (hidden states, logits) and greedy generation give the same bits on 3 threads', async () => {
  const dir = path.join(ROOT, 'web/tutorial/model');
  const [mt, ms] = [await threaded.Model.fromPretrained(dir), await single.Model.fromPretrained(dir)];
  try {
    const ids = { data: Int32Array.from({ length: 2 * 200 }, (_, i) => (i * 37) % 4096), dims: [2, 200] };
    const a = mt.forward(ids, { outputLogits: true }), b = ms.forward(ids, { outputLogits: true });
    assert.ok(sameBits(a.lastHiddenState.data, b.lastHiddenState.data), 'hidden states');
    assert.ok(sameBits(a.logits.data, b.logits.data), 'logits');
    const prompt = { data: Int32Array.from([5, 17, 300, 42, 7]), dims: [1, 5] };
    const ga = await mt.generate(prompt, { maxNewTokens: 12 }), gb = await ms.generate(prompt, { maxNewTokens: 12 });
    assert.deepEqual(Array.from(ga.sequences.data), Array.from(gb.sequences.data));
  } finally {
    mt.dispose();
    ms.dispose();
  }
});

test('threaded calls leak nothing, and refused calls leave the module working', () => {
  const x = { data: randn(64 * 256, 7), dims: [1, 4, 256, 16] };
  threaded.attention(x, x, x, { causal: true });
  const before = threaded.mallocInUse();
  for (let i = 0; i < 5; i++) threaded.attention(x, x, x, { causal: true });
  assert.throws(() => threaded.attention(x, x, { data: x.data, dims: [1, 4, 255, 16] }), (e) => e instanceof AttnkitError);
  assert.throws(() => threaded.linear(x, { data: new Float32Array(3), dims: [3] }), (e) => e instanceof AttnkitError);
  assert.equal(threaded.mallocInUse(), before);
  assert.ok(sameBits(threaded.attention(x, x, x).data, single.attention(x, x, x).data));
});

test('named files: a wasmUrl map with the threaded key, or bytes with threads, run threaded; without, single-thread', onlySimd128, async () => {
  const dist = new URL('../../../web/dist/', import.meta.url);
  const byMap = await load({ wasmUrl: { 'wasm-simd128-threads': new URL('attnkit-simd-threads.wasm', dist) } });
  assert.deepEqual([byMap.backend, byMap.threads > 1], ['wasm-simd128-threads', true]);
  const bytes = (await import('node:fs')).readFileSync(new URL('attnkit-simd-threads.wasm', dist));
  const byBytes = await load({ wasmBinary: bytes, threads: 2 });
  assert.deepEqual([byBytes.backend, byBytes.threads], ['wasm-simd128-threads', 2]);
  const x = { data: randn(2 * 300 * 16, 9), dims: [1, 2, 300, 16] };
  assert.ok(sameBits(byBytes.attention(x, x, x, { causal: true }).data, single.attention(x, x, x, { causal: true }).data));
  const oneUrl = await load({ wasmUrl: new URL('attnkit-simd.wasm', dist) });
  assert.deepEqual([oneUrl.backend, oneUrl.threads], ['wasm-simd128', 1]);
  assert.match(oneUrl.threadsUnavailableReason, /wasmUrl was given without threads/);
});

test('the embedding stage of a large batch: the same bits on 3 threads as on one', () => {
  const [V, D, P, B, L] = [3001, 771, 512, 7, 509];
  const weights = { word: randn(V * D, 31), position: randn(P * D, 32), tokenType: randn(2 * D, 33),
    normWeight: randn(D, 34), normBias: randn(D, 35) };
  const ids = { data: Int32Array.from({ length: B * L }, (_, i) => (i * 7919) % V), dims: [B, L] };
  const types = { data: Int32Array.from({ length: B * L }, (_, i) => (i % L < L / 2 ? 0 : 1)), dims: [B, L] };
  const out = [threaded, single].map((ak) => {
    const m = new ak.Embeddings({ vocabSize: V, dim: D, maxPositions: P, typeVocabSize: 2 });
    try {
      m.setWeights(weights);
      return m.forward(ids, { tokenTypeIds: types }).data;
    } finally {
      m.dispose();
    }
  });
  assert.ok(sameBits(out[0], out[1]));
});

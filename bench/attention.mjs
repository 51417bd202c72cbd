// Multi-head attention, 1 x 12 heads x head dim 64, against onnxruntime-web (wasm, SIMD, 1 thread:
// com.microsoft MultiHeadAttention and an explicit MatMul/Softmax graph) and tfjs-wasm (SIMD,
// 1 thread), our scalar build and our native build, all in this run; the SIMD128 peak from
// bench/peak.cpp is the limit. Rounds are interleaved, so ratios inside a run are fair.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Tensor } from '../web/attnkit.js';
import { ROOT, fmt, interleaved, now, table } from './lib.mjs';
import { model, node, valueInfo, FLOAT } from './onnx.mjs';

const H = 12;
const D = 64;
const E = H * D;

/** GFLOP/s of the SIMD128 peak microbenchmark (12 mul+add chains), best of 7. */
export async function simdPeak() {
  const { default: create } = await import('../build/wasm/attnkit-peak.mjs');
  const m = await create({ wasmBinary: fs.readFileSync(path.join(ROOT, 'build/wasm/attnkit-peak.wasm')) });
  const lanes = m._peak_lanes();
  const chains = m._peak_chains();
  const iters = 2e9 / (chains * lanes * 2);
  m._peak_run(iters / 10, 0.9999, 0.0001);
  let best = 0;
  for (let r = 0; r < 7; r++) {
    const t0 = now();
    m._peak_run(iters, 0.9999, 0.0001);
    best = Math.max(best, (iters * chains * lanes * 2) / ((now() - t0) / 1e3) / 1e9);
  }
  return best;
}

/** onnxruntime-web's graphs for 1 x 12 heads x 64 at length L (bench/threads.mjs runs them too). */
export function ortGraphs(L) {
  const bld = (n) => valueInfo(n, FLOAT, [1, L, E]);
  const bhld = (n) => valueInfo(n, FLOAT, [1, H, L, D]);
  const mha = (causal) => model({
    nodes: [node('MultiHeadAttention', ['Q', 'K', 'V'], ['Y'], causal ? { num_heads: { i: H }, unidirectional: { i: 1 } }
      : { num_heads: { i: H } }, 'com.microsoft')],
    inputs: [bld('Q'), bld('K'), bld('V')], outputs: [bld('Y')], opsets: { '': 17, 'com.microsoft': 1 },
  });
  const explicit = model({
    nodes: [
      node('Transpose', ['K'], ['Kt'], { perm: { ints: [0, 1, 3, 2] } }),
      node('MatMul', ['Q', 'Kt'], ['S']),
      node('Mul', ['S', 'scale'], ['Ss']),
      node('Add', ['Ss', 'mask'], ['Sm']),
      node('Softmax', ['Sm'], ['P'], { axis: { i: -1 } }),
      node('MatMul', ['P', 'V'], ['Y']),
    ],
    inputs: [bhld('Q'), bhld('K'), bhld('V'), valueInfo('mask', FLOAT, [L, L]), valueInfo('scale', FLOAT, [])],
    outputs: [bhld('Y')],
  });
  return { mhaCausal: mha(true), mhaFull: mha(false), explicit };
}

function toBLD(x, L) {  // [H, L, D] -> [L, H*D]
  const y = new Float32Array(x.length);
  for (let h = 0; h < H; h++) for (let l = 0; l < L; l++) y.set(x.subarray((h * L + l) * D, (h * L + l + 1) * D), l * E + h * D);
  return y;
}

export async function benchAttention({ simd, scalar, lengths = [128, 512, 2048, 4096] }) {
  const peak = await simdPeak();
  console.log(`\nSIMD128 peak (bench/peak.cpp, 12 mul+add chains, best of 7): ${fmt(peak, 1)} GFLOP/s`);
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  const tf = await import('@tensorflow/tfjs-core');
  const tfw = await import('@tensorflow/tfjs-backend-wasm');
  tfw.setThreadsCount(1);
  await tf.setBackend('wasm');
  await tf.ready();

  let native = {};
  try {
    const out = execFileSync(path.join(ROOT, 'build/native/attnkit_bench_attention'), lengths.map(String)).toString();
    for (const line of out.trim().split('\n')) {
      const r = JSON.parse(line);
      native[`${r.L}/${r.causal}`] = r;
    }
  } catch (e) {
    native = { error: e.message };
  }

  const results = { peak, lengths: {} };
  const rows = [];
  for (const L of lengths) {
    const n = H * L * D;
    const rnd = () => Float32Array.from({ length: n }, () => Math.random() - 0.5);
    const q = rnd();
    const k = rnd();
    const v = rnd();
    const T = (x) => new Tensor('float32', x, [1, H, L, D]);
    const [Q, K, V] = [T(q), T(k), T(v)];
    const impls = {};
    const errors = {};
    let oursOut = null;
    impls['attnkit simd causal'] = () => { oursOut = simd.attention(Q, K, V, { causal: true }).data; };
    impls['attnkit simd bidirectional'] = () => simd.attention(Q, K, V);
    if (L <= 2048) impls['attnkit scalar causal'] = () => scalar.attention(Q, K, V, { causal: true });

    const g = ortGraphs(L);
    const sessions = [];
    const mask = new Float32Array(L * L);
    for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) mask[i * L + j] = -Infinity;
    const bld = [toBLD(q, L), toBLD(k, L), toBLD(v, L)].map((x) => new ort.Tensor('float32', x, [1, L, E]));
    const bhld = [q, k, v].map((x) => new ort.Tensor('float32', x, [1, H, L, D]));
    let ortOut = null;
    for (const [name, bytes, feeds] of [
      ['onnxruntime-web MHA causal', g.mhaCausal, { Q: bld[0], K: bld[1], V: bld[2] }],
      ['onnxruntime-web MHA bidirectional', g.mhaFull, { Q: bld[0], K: bld[1], V: bld[2] }],
      ['onnxruntime-web MatMul/Softmax causal', g.explicit, { Q: bhld[0], K: bhld[1], V: bhld[2],
        mask: new ort.Tensor('float32', mask, [L, L]), scale: new ort.Tensor('float32', Float32Array.of(1 / 8), []) }],
    ]) {
      try {
        const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
        sessions.push(s);
        const r = await s.run(feeds); // a failing length fails here, outside the timed rounds
        if (name.endsWith('MHA causal')) ortOut = r.Y.data;
        impls[name] = async () => { await s.run(feeds); };
      } catch (e) {
        errors[name] = String(e.message ?? e).slice(0, 120);
      }
    }
    const tfT = [];
    if (L <= 512) {
      const [tq, tk, tv] = [q, k, v].map((x) => tf.tensor3d(x, [H, L, D]));
      const tm = tf.tensor2d(mask, [L, L]);
      tfT.push(tq, tk, tv, tm);
      impls['tfjs-wasm causal'] = () => {
        const y = tf.tidy(() => tf.matMul(tf.softmax(tf.add(tf.mul(tf.matMul(tq, tk, false, true), 1 / 8), tm)), tv));
        y.dataSync();
        y.dispose();
      };
    }
    const r = await interleaved(impls, { warm: 2, rounds: L >= 4096 ? 3 : L >= 2048 ? 5 : 11, budgetMs: 20000 });
    for (const s of sessions) await s.release();
    for (const t of tfT) t.dispose();

    // Agreement with onnxruntime-web's causal MHA (layouts differ: compare through toBLD).
    const diff = ortOut && oursOut ? (() => {
      const a = toBLD(oursOut, L);
      let m = 0;
      for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - ortOut[i]));
      return m;
    })() : null;
    const dense = (4 * L * L * D * H) / 1e9;
    const causalWork = (4 * (L * (L + 1)) / 2 * D * H) / 1e9;
    for (const [c, key] of [[true, 'causal'], [false, 'bidirectional']]) {
      const nat = native[`${L}/${c}`];
      if (nat) r[`attnkit native (${process.arch} SSE4.1) ${key}`] = { cold: NaN, min: nat.min, median: nat.median };
    }
    const peerBest = (suffix) => Math.min(...Object.entries(r).filter(([n]) => !n.startsWith('attnkit') && n.endsWith(suffix)).map(([, x]) => x.median));
    const bestCausal = peerBest('causal');
    const bestFull = Math.min(peerBest('bidirectional'), peerBest('causal'));  // dense peers do the same work either way
    const ours = r['attnkit simd causal'].median;
    const oursFull = r['attnkit simd bidirectional'].median;
    results.lengths[L] = { ...r, errors, maxAbsDiffVsOrt: diff, causalSpeedup: bestCausal / ours,
      bidirectionalSpeedup: bestFull / oursFull,
      causalGflops: causalWork / (ours / 1e3), bidirectionalGflops: dense / (oursFull / 1e3),
      simdVsScalar: r['attnkit scalar causal'] ? r['attnkit scalar causal'].median / ours : null };
    for (const [name, x] of Object.entries(r)) {
      const work = name.startsWith('attnkit') && name.endsWith('causal') ? causalWork : dense;
      const gf = work / (x.median / 1e3);
      rows.push([L, name, Number.isNaN(x.cold) ? '' : fmt(x.cold), fmt(x.min), fmt(x.median), fmt(gf, 1),
        name.includes('scalar') || name.includes('native') ? '' : `${fmt((100 * gf) / peak, 0)} %`,
        `${fmt(x.median / (name.endsWith('bidirectional') ? oursFull : ours))}x`]);
    }
    for (const [name, e] of Object.entries(errors)) {
      const why = /safeint/i.test(e) ? 'integer overflow (SafeInt)' : /bad_alloc/.test(e) ? 'std::bad_alloc' : e.slice(0, 40);
      rows.push([L, name, `failed: ${why}`, '', '', '', '', '']);
    }
    console.error(`L=${L}: causal ${fmt(bestCausal / ours)}x the fastest peer, bidirectional ${fmt(bestFull / oursFull)}x; ` +
      `max |ours - ORT MHA| ${diff === null ? 'n/a' : diff.toExponential(1)}`);
  }
  table(`Multi-head attention, 1 x ${H} heads x head dim ${D}, float32, single thread (GFLOP/s count the work each does: ` +
    'dense peers 4·L²·d·H, our causal runs 4·L(L+1)/2·d·H; last column: time relative to ours in the same mode)',
    ['L', 'implementation', 'cold ms', 'ms min', 'ms median', 'GFLOP/s', '% of SIMD128 peak', 'vs attnkit simd'], rows);
  const sum = Object.entries(results.lengths).map(([L, x]) => [L, `${fmt(x.causalSpeedup)}x`, `${fmt(x.bidirectionalSpeedup)}x`,
    `${fmt((100 * x.causalGflops) / peak, 0)} % / ${fmt((100 * x.bidirectionalGflops) / peak, 0)} %`,
    x.simdVsScalar ? `${fmt(x.simdVsScalar)}x` : 'n/a', x.maxAbsDiffVsOrt === null ? 'n/a' : x.maxAbsDiffVsOrt.toExponential(1)]);
  table('Attention targets (causal >= 2.5x the fastest peer at L >= 512, bidirectional >= 1.5x, >= 65 % of peak, SIMD >= 3.5x scalar)',
    ['L', 'causal vs fastest peer', 'bidirectional vs fastest peer', '% of peak causal / bidirectional', 'SIMD vs scalar', 'max |Δ| vs ORT'], sum);
  return results;
}

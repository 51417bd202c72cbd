// `npm run bench -- threads`: thread scaling. Causal multi-head attention (1 x 12 heads x 64) at
// L = 128, 512, 2048 and 8192, and the 4-layer encoder of bench/model.mjs, at 1, 2 and the
// machine's thread count, attnkit against onnxruntime-web with the same number of threads.
//
// onnxruntime-web fixes its thread count when its wasm starts (once per process), so each thread
// count runs in a fresh process (this file, run with the count as its argument) that times
// attnkit and onnxruntime-web there, in turns of back-to-back calls (lib.mjs `blocked`), each turn
// after 50 ms of idle time and untimed warm-up calls: both libraries' idle threads spin a while
// after a call (attnkit's 0.1 ms, onnxruntime-web's about 20 ms of CPU, measured), and on a
// machine with as many threads as cores the other's spinning thread would steal a core; and a
// core idle for long wakes slowly (on this VM a forward pass after 100 ms of idle took twice as
// long at 2 threads), which the warm-up absorbs. For
// attention onnxruntime-web runs its com.microsoft MultiHeadAttention and an explicit
// MatMul/Softmax graph (L <= 2048); its faster one is the peer. attnkit at 1 thread is the
// single-thread SIMD build (what load({ threads: 1 }) runs); at more, the threaded build.
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { load, Tensor } from '../web/attnkit.js';
import { blocked, fmt } from './lib.mjs';
import { buildEncoder } from './model.mjs';
import { ortGraphs } from './attention.mjs';

const H = 12, D = 64, E = H * D;
const LENGTHS = [128, 512, 2048, 8192];

/** In a fresh process: every workload at `threads` threads, attnkit and onnxruntime-web. */
async function measure(threads) {
  const ak = await load({ threads });
  if (ak.threads !== threads) throw new Error(`attnkit runs ${ak.threads} threads, not ${threads}: ${ak.threadsUnavailableReason}`);
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const out = { threads, backend: ak.backend, attention: {}, encoder: null };
  for (const L of LENGTHS) {
    const n = H * L * D;
    const x = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.61) * 0.5);
    const T = new Tensor('float32', x, [1, H, L, D]);
    const impls = { attnkit: () => ak.attention(T, T, T, { causal: true }) };
    const sessions = [], errors = [];
    const bld = new ort.Tensor('float32', new Float32Array(L * E).map((_, i) => Math.sin(i * 0.61) * 0.5), [1, L, E]);
    const g = ortGraphs(L);
    const graphs = [['MultiHeadAttention', g.mhaCausal, { Q: bld, K: bld, V: bld }]];
    if (L <= 2048) {
      const mask = new Float32Array(L * L);
      for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) mask[i * L + j] = -Infinity;
      const bhld = new ort.Tensor('float32', x, [1, H, L, D]);
      graphs.push(['MatMul/Softmax', g.explicit, { Q: bhld, K: bhld, V: bhld, mask: new ort.Tensor('float32', mask, [L, L]),
        scale: new ort.Tensor('float32', Float32Array.of(1 / 8), []) }]);
    }
    for (const [name, graph, feeds] of graphs) {
      try {
        const session = await ort.InferenceSession.create(graph, opts);
        sessions.push(session);
        await session.run(feeds); // a length it cannot run fails here, outside the timed rounds
        impls[name] = () => session.run(feeds);
      } catch (e) {
        errors.push(`${name}: ${String(e.message ?? e).replace(/\s+/g, ' ').slice(0, 60)}`);
      }
    }
    const reps = L >= 8192 ? 2 : L >= 2048 ? 3 : L >= 512 ? 6 : 15;
    const timed = await blocked(impls, { warm: L >= 8192 ? 1 : 3, reps, blocks: L >= 8192 ? 2 : 3, pauseMs: 50 });
    const r = Object.fromEntries(Object.entries(timed).map(([k, v]) => [k, v.median]));
    const peers = Object.entries(r).filter(([k]) => k !== 'attnkit').sort((a, b) => a[1] - b[1]);
    out.attention[L] = { attnkit: r.attnkit, ort: peers[0]?.[1] ?? null, ortGraph: peers[0]?.[0] ?? null, all: r,
      ortError: errors.join('; ') || null };
    for (const s of sessions) await s.release();
  }
  const enc = buildEncoder();
  const m = await ak.Model.fromPretrained({ config: enc.config, weights: enc.sd });
  const session = await ort.InferenceSession.create(enc.graph, opts);
  const feeds = { ids: new ort.Tensor('int32', enc.ids, [enc.ids.length]), types: new ort.Tensor('int32', enc.types, [enc.types.length]) };
  const r = await blocked({
    attnkit: () => m.forward(enc.ids, { tokenTypeIds: enc.types }),
    'onnxruntime-web': () => session.run(feeds),
  }, { warm: 5, reps: 10, blocks: 3, pauseMs: 50 });
  out.encoder = { attnkit: r.attnkit.median, ort: r['onnxruntime-web'].median };
  m.dispose();
  await session.release();
  return out;
}

/** The section: one fresh process per thread count, then the scaling tables. */
export async function benchThreads({ table }) {
  const cores = Math.min(os.availableParallelism(), 8);
  const counts = [...new Set([1, 2, cores])];
  const runs = counts.map((n) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), String(n)],
    { encoding: 'utf8', maxBuffer: 1 << 24 }).trim().split('\n').at(-1)));
  const one = runs[0];
  const rows = [];
  const workloads = [...LENGTHS.map((L) => [`causal attention L=${L}`, (r) => r.attention[L]]), ['encoder (4 layers, 128 tokens)', (r) => r.encoder]];
  const summary = {};
  for (const [name, pick] of workloads) {
    for (const r of runs) {
      const x = pick(r), base = pick(one);
      const vsOrt = x.ort ? x.ort / x.attnkit : null;
      rows.push([name, r.threads, fmt(x.attnkit), fmt(base.attnkit / x.attnkit),
        x.ort ? `${fmt(x.ort)}${x.ortGraph ? ` (${x.ortGraph})` : ''}` : `failed: ${x.ortError}`,
        x.ort && base.ort ? fmt(base.ort / x.ort) : '-', vsOrt ? `${fmt(vsOrt)}x` : '-']);
      summary[`${name} @${r.threads}`] = { attnkitMs: x.attnkit, ortMs: x.ort, scaling: base.attnkit / x.attnkit, vsOrt };
    }
  }
  table(`Thread scaling (${os.cpus()[0]?.model}, ${os.availableParallelism()} cores): causal multi-head attention 1 x ${H} heads x ${D} ` +
    'and the bench/model.mjs encoder, attnkit and onnxruntime-web at the same thread count (median ms; one fresh process per count)',
    ['workload', 'threads', 'attnkit ms', 'attnkit scaling', 'onnxruntime-web ms', 'ORT scaling', 'attnkit vs ORT'], rows);
  const top = runs.at(-1).threads;
  const s = (name) => summary[`${name} @${top}`];
  console.log(`\nAt ${top} threads: causal attention L=2048 ${fmt(s('causal attention L=2048').scaling)}x and L=8192 ` +
    `${fmt(s('causal attention L=8192').scaling)}x our single thread, the encoder ${fmt(s('encoder (4 layers, 128 tokens)').scaling)}x ` +
    `(target >= 1.8x); L=128 ${fmt(s('causal attention L=128').scaling)}x (target: no slowdown). Against onnxruntime-web at ` +
    `${top} threads: causal L=512 ${fmt(s('causal attention L=512').vsOrt)}x (target >= 2.5x), encoder ` +
    `${fmt(s('encoder (4 layers, 128 tokens)').vsOrt)}x (target >= 1.5x).`);
  return { counts, runs, summary };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await measure(Number(process.argv[2]));
  console.log(JSON.stringify(result));
  process.exit(0); // onnxruntime-web's pool workers would keep the process alive
}

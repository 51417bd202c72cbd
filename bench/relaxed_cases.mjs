// The relaxed-SIMD build against the SIMD128 build (issue 37's targets, one thread each), in one
// engine: the 4-layer 256-wide encoder of bench/model.mjs (its shape: 4 heads, FFN 1024, GELU,
// 128 tokens, vocab 30522; random weights of its scales) and causal attention at L = 2048 with
// bench/attention.mjs's 12 heads of 64. No Node built-in: Node (bench/relaxed_node.mjs, with the flags
// Node 20 needs) and headless Chromium (bench/bench.mjs's relaxed section) import this same file.
// Rounds alternate the two builds, so that the machine's slow periods hit both.

const V = 30522, D = 256, LAYERS = 4, H = 4, F = 1024, P = 512, L = 128;
const AH = 12, AD = 64, AL = 2048;

function normal(n, scale, seed) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const u = (s + 0.5) / 2 ** 32;
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const r = Math.sqrt(-2 * Math.log(u)) * scale, t = (2 * Math.PI * s) / 2 ** 32;
    out[i] = r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

function encoder() {
  let seed = 1;
  const sd = {};
  const put = (name, n, s, plusOne = false) => {
    sd[name] = normal(n, s, seed++);
    if (plusOne) for (let i = 0; i < n; i++) sd[name][i] += 1;
  };
  put('embeddings.word_embeddings.weight', V * D, 0.5);
  put('embeddings.position_embeddings.weight', P * D, 0.3);
  put('embeddings.token_type_embeddings.weight', 2 * D, 0.3);
  put('embeddings.LayerNorm.weight', D, 0.1, true);
  put('embeddings.LayerNorm.bias', D, 0.1);
  for (let l = 0; l < LAYERS; l++) {
    const p = `encoder.layer.${l}.`;
    for (const m of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
      put(`${p}${m}.weight`, D * D, 0.06);
      put(`${p}${m}.bias`, D, 0.02);
    }
    put(`${p}attention.output.LayerNorm.weight`, D, 0.1, true);
    put(`${p}attention.output.LayerNorm.bias`, D, 0.1);
    put(`${p}intermediate.dense.weight`, F * D, 0.06);
    put(`${p}intermediate.dense.bias`, F, 0.02);
    put(`${p}output.dense.weight`, D * F, 0.03);
    put(`${p}output.dense.bias`, D, 0.02);
    put(`${p}output.LayerNorm.weight`, D, 0.1, true);
    put(`${p}output.LayerNorm.bias`, D, 0.1);
  }
  const config = {
    model_type: 'bert', vocab_size: V, hidden_size: D, num_hidden_layers: LAYERS, num_attention_heads: H,
    intermediate_size: F, hidden_act: 'gelu', max_position_embeddings: P, type_vocab_size: 2, layer_norm_eps: 1e-12,
  };
  const ids = Int32Array.from({ length: L }, (_, t) => (Math.imul(t + 7, 2654435761) >>> 0) % V);
  const types = Int32Array.from({ length: L }, (_, t) => (t < L / 2 ? 0 : 1));
  return { config, sd, ids, types };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// Each implementation warmed up (`warm` calls: the engine tiers up), then `rounds` rounds of one
// timed call each, alternating. Returns { name: { cold, min, median } } in ms.
async function alternate(impls, { warm = 3, rounds = 11 } = {}) {
  const t = {}, cold = {};
  for (const [name, fn] of Object.entries(impls)) {
    const a = performance.now();
    await fn();
    cold[name] = performance.now() - a;
    for (let i = 0; i < warm; i++) await fn();
    t[name] = [];
  }
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(impls)) {
      const a = performance.now();
      await fn();
      t[name].push(performance.now() - a);
    }
  }
  return Object.fromEntries(Object.keys(impls).map((k) => [k, { cold: cold[k], min: Math.min(...t[k]), median: median(t[k]) }]));
}

const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

/**
 * `load` is attnkit's; the builds are loaded with threads: 1. Returns, per case, each build's
 * timings, the ratio SIMD128 / relaxed (> 1: the relaxed build is faster) and the largest
 * difference between their outputs.
 */
export async function benchRelaxed(load, { rounds = 11 } = {}) {
  const simd = await load({ simd: true, threads: 1 });
  const relaxed = await load({ simd: 'relaxed', threads: 1 });
  const builds = { 'wasm-simd128': simd, 'wasm-simd128-relaxed': relaxed };
  const out = {};

  const { config, sd, ids, types } = encoder();
  const models = {}, outputs = {};
  for (const [name, ak] of Object.entries(builds)) models[name] = await ak.Model.fromPretrained({ config, weights: sd });
  const enc = await alternate(Object.fromEntries(Object.entries(models).map(([name, m]) => [name, () => {
    outputs[name] = m.forward(ids, { tokenTypeIds: types }).lastHiddenState.data;
  }])), { rounds });
  for (const m of Object.values(models)) m.dispose();
  out.encoder = { what: `encoder ${LAYERS} layers x ${D}, ${L} tokens`, ...enc,
    ratio: enc['wasm-simd128'].median / enc['wasm-simd128-relaxed'].median,
    maxAbsDiff: maxAbsDiff(outputs['wasm-simd128'], outputs['wasm-simd128-relaxed']) };

  const n = AH * AL * AD;
  const T = (seed) => ({ data: normal(n, 0.5, seed), dims: [1, AH, AL, AD] });
  const [q, k, v] = [T(101), T(102), T(103)];
  const att = await alternate(Object.fromEntries(Object.entries(builds).map(([name, ak]) => [name, () => {
    outputs[name] = ak.attention(q, k, v, { causal: true }).data;
  }])), { rounds: Math.max(5, Math.ceil(rounds / 2)) });
  out.attention = { what: `causal attention ${AH} heads x ${AD}, L = ${AL}`, ...att,
    ratio: att['wasm-simd128'].median / att['wasm-simd128-relaxed'].median,
    maxAbsDiff: maxAbsDiff(outputs['wasm-simd128'], outputs['wasm-simd128-relaxed']) };
  return out;
}

// Section 7, in the worker: the same attention call timed in the SIMD and the scalar build of
// attnkit. The first (cold) call is reported apart from the warm median: V8 compiles wasm in tiers,
// so a first call measures the compiler as much as the kernel.

function filled(n, seed) {
  const a = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 2147483648 - 1;
  }
  return a;
}

export async function timeAttention(load, { length, heads, headDim, reps = 9 }) {
  const dims = [1, heads, length, headDim];
  const n = heads * length * headDim;
  const q = { data: filled(n, 1), dims }, k = { data: filled(n, 2), dims }, v = { data: filled(n, 3), dims };
  const flops = 4 * heads * length * length * headDim; // Q·Kᵀ and weights·V, 2 flops per multiply-add
  const runs = [];
  for (const simd of [true, false]) {
    const backend = simd ? 'wasm-simd128' : 'wasm-scalar';
    let ak;
    try {
      ak = await load({ simd });
    } catch (e) {
      runs.push({ backend, error: e.message });
      continue;
    }
    let t = performance.now();
    ak.attention(q, k, v);
    const firstMs = performance.now() - t;
    // Browsers coarsen performance.now() (to 0.1 ms without cross-origin isolation), so each
    // sample times a batch of calls lasting about 10 ms.
    t = performance.now();
    for (let i = 0; i < 3; i++) ak.attention(q, k, v);
    const batch = Math.max(1, Math.ceil(10 / Math.max((performance.now() - t) / 3, 0.01)));
    const times = [];
    for (let i = 0; i < reps; i++) {
      t = performance.now();
      for (let j = 0; j < batch; j++) ak.attention(q, k, v);
      times.push((performance.now() - t) / batch);
    }
    times.sort((a, b) => a - b);
    const medianMs = times[Math.floor(times.length / 2)];
    runs.push({ backend, firstMs, medianMs, minMs: times[0], reps, batch, gflops: flops / (medianMs * 1e6) });
  }
  const [s, c] = runs;
  return { length, heads, headDim, flops, runs, speedup: s.medianMs && c.medianMs ? c.medianMs / s.medianMs : null };
}

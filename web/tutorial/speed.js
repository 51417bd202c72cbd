// Section 10, in the worker: the same attention call timed in the threaded SIMD build (where the
// page is cross-origin isolated), the single-thread SIMD build and the scalar build of attnkit. The
// first (cold) call is reported apart from the warm median: V8 compiles wasm in tiers, so a first
// call measures the compiler as much as the kernel.

function filled(n, seed) {
  const a = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 2147483648 - 1;
  }
  return a;
}

/**
 * Times ak.attention in each build. Each build is first warmed up (about `warmupMs` of calls, so
 * that V8's optimising tier has compiled it), then the builds are timed in alternating rounds,
 * so that whatever else holds the CPU meanwhile slows all alike. The first (cold) call is kept
 * apart. Where threads cannot run, `threadsUnavailableReason` says why and two builds are timed.
 */
export async function timeAttention(load, { length, heads, headDim, reps = 9, warmupMs = 150 }) {
  const dims = [1, heads, length, headDim];
  const n = heads * length * headDim;
  const q = { data: filled(n, 1), dims }, k = { data: filled(n, 2), dims }, v = { data: filled(n, 3), dims };
  const flops = 4 * heads * length * length * headDim; // Q·Kᵀ and weights·V, 2 flops per multiply-add
  const runs = [];
  let threadsUnavailableReason = null;
  for (const [backend, options] of [['wasm-simd128-threads', { simd: true }], ['wasm-simd128', { simd: true, threads: 1 }],
    ['wasm-scalar', { simd: false }]]) {
    try {
      const ak = await load(options);
      if (ak.backend !== backend) {
        // No threads here: load() fell back to the single-thread build, which is timed next anyway.
        threadsUnavailableReason = ak.threadsUnavailableReason;
        continue;
      }
      const t = performance.now();
      ak.attention(q, k, v);
      runs.push({ backend, threads: ak.threads, ak, firstMs: performance.now() - t, times: [] });
    } catch (e) {
      runs.push({ backend, error: e.message });
    }
  }
  const live = runs.filter((r) => !r.error);
  for (const r of live) {
    // Warm up, and size a batch of calls to about 10 ms: browsers coarsen performance.now() (to
    // 0.1 ms without cross-origin isolation).
    const t = performance.now();
    let calls = 0;
    while (performance.now() - t < warmupMs) { r.ak.attention(q, k, v); calls++; }
    r.batch = Math.max(1, Math.ceil(10 / Math.max((performance.now() - t) / calls, 0.01)));
  }
  for (let i = 0; i < reps; i++) {
    for (const r of live) {
      const t = performance.now();
      for (let j = 0; j < r.batch; j++) r.ak.attention(q, k, v);
      r.times.push((performance.now() - t) / r.batch);
    }
  }
  const out = runs.map((r) => {
    if (r.error) return r;
    const times = r.times.sort((a, b) => a - b);
    const medianMs = times[Math.floor(times.length / 2)];
    return { backend: r.backend, threads: r.threads, firstMs: r.firstMs, medianMs, minMs: times[0], reps, batch: r.batch,
      gflops: flops / (medianMs * 1e6) };
  });
  const time = (backend) => out.find((r) => r.backend === backend)?.medianMs;
  const ratio = (slow, fast) => (time(slow) && time(fast) ? time(slow) / time(fast) : null);
  return {
    length, heads, headDim, flops, warmupMs, runs: out, threadsUnavailableReason,
    speedup: ratio('wasm-scalar', 'wasm-simd128'), threadSpeedup: ratio('wasm-simd128', 'wasm-simd128-threads'),
  };
}

// The threaded build in Chromium: on a cross-origin-isolated page (and in a module worker of one)
// load() runs wasm-simd128-threads and its results have the single-thread build's bits; on a page
// served without the headers it falls back to the single-thread build and says why.
import test from 'node:test';
import assert from 'node:assert/strict';
import { openPage } from './browser.mjs';
import { relaxedBuilt } from '../node/helpers.mjs';

// Chromium passes the relaxed-SIMD known-answer test: load() runs the relaxed builds where they were built.
const SIMD = relaxedBuilt() ? 'wasm-simd128-relaxed' : 'wasm-simd128';

// In the page: the same attention (causal and not, long enough to be split) and linear on the
// default build and on threads: 1, compared bit for bit; and the same from a module worker.
async function compareBuilds() {
  const { load } = await import('/web/attnkit.js');
  const run = async () => {
    const [ak, one] = [await load(), await load({ threads: 1 })];
    // The pool's workers load in the background after load() resolves; wait until all run.
    for (let i = 0; i < 500 && ak.threadsRunning < ak.threads; i++) await new Promise((r) => setTimeout(r, 10));
    const fill = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 1000 + i * 0.37));
    const x = { data: fill(4 * 600 * 32, 1), dims: [1, 4, 600, 32] };
    const w = { data: fill(256 * 384, 2), dims: [384, 256] }, h = { data: fill(300 * 256, 3), dims: [300, 256] };
    const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
    return {
      backend: ak.backend, threads: ak.threads, running: ak.threadsRunning, reason: ak.threadsUnavailableReason, single: one.backend,
      causal: same(ak.attention(x, x, x, { causal: true }).data, one.attention(x, x, x, { causal: true }).data),
      full: same(ak.attention(x, x, x).data, one.attention(x, x, x).data),
      linear: same(ak.linear(h, w).data, one.linear(h, w).data),
    };
  };
  const page = await run();
  // The worker runs the same function, its `load` the worker's own import.
  const source = `import('${location.origin}/web/attnkit.js').then(async ({ load }) => {
    const run = ${run.toString()};
    postMessage(await run());
  }).catch((e) => postMessage({ error: String(e) }));`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
  const inWorker = await new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); });
  return { isolated: globalThis.crossOriginIsolated, page, worker: inWorker };
}

test('a cross-origin-isolated page and its module worker run the threaded build, with the single-thread bits', async (t) => {
  const { page, problems, close } = await openPage({ served: ['web'] });
  t.after(close);
  const r = await page.evaluate(compareBuilds);
  assert.equal(r.isolated, true);
  for (const where of ['page', 'worker']) {
    const x = r[where];
    assert.deepEqual(x, { backend: `${SIMD}-threads`, threads: x.threads, running: x.threads, reason: null,
      single: SIMD, causal: true, full: true, linear: true }, where);
    assert.ok(x.threads >= 2, `${where}: ${x.threads} threads`);
  }
  assert.deepEqual(problems, []);
});

test('a page served without COOP/COEP falls back to the single-thread build and says why', async (t) => {
  const { page, problems, close } = await openPage({ isolated: false }); // the tutorial's server, without the headers
  t.after(close);
  // The tutorial (its worker loads attnkit) runs, single-threaded, and says why.
  await page.evaluate(() => window.tutorial.ready);
  assert.match(await page.textContent('#backend'), new RegExp(`^${SIMD}, one thread: .*the page is not cross-origin isolated`));
  const r = await page.evaluate(async () => {
    const { load } = await import('/web/attnkit.js');
    const ak = await load();
    const explicit = await load({ threads: 4 });
    return { isolated: globalThis.crossOriginIsolated, backend: ak.backend, threads: ak.threads, reason: ak.threadsUnavailableReason,
      explicit: [explicit.backend, explicit.threads], works: ak.sinusoidalPositionalEncoding(2, 2).data.length };
  });
  assert.equal(r.isolated, false);
  assert.deepEqual([r.backend, r.threads, r.works], [SIMD, 1, 4]);
  assert.match(r.reason, /cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/);
  assert.deepEqual(r.explicit, [SIMD, 1]);
  assert.deepEqual(problems, []);
});

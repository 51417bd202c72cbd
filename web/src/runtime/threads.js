// The threaded build (wasm-simd128-threads): whether it can run here, how many threads, and how its
// Emscripten glue is loaded.
//
// Each pool worker imports the glue itself, by URL, so the main thread imports the glue from that
// same URL: in browsers a Blob URL of its text (part of the bundle, scripts/thread_sources.mjs
// says why), in Node its file. Shared memory needs cross-origin isolation in browsers (COOP + COEP
// headers); without it SharedArrayBuffer does not exist and the single-thread build runs.
import { isNode, nodeBuiltin } from './read_bytes.js';
import * as sources from '../../dist/attnkit-simd-threads.sources.js';

// (module (memory 1 1 shared) (func (result i32) i32.const 0 i32.atomic.load)): validates only
// where threads (shared memory and atomics) are supported.
const THREADS_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 5, 4, 1, 3, 1, 1,
  10, 10, 1, 8, 0, 65, 0, 0xfe, 16, 2, 0, 11,
]);

/** Why the threaded build cannot run here, or null when it can. */
export function threadsUnavailable() {
  if (typeof SharedArrayBuffer !== 'function') {
    return 'SharedArrayBuffer is not available: the page is not cross-origin isolated (serve it with ' +
      'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)';
  }
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    return 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin ' +
      'and Cross-Origin-Embedder-Policy: require-corp)';
  }
  try {
    if (!WebAssembly.validate(THREADS_PROBE)) return 'this engine does not support WebAssembly threads (shared memory and atomics)';
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch (e) {
    return `this engine cannot create shared WebAssembly memory (${e?.message ?? e})`;
  }
  return null;
}

/** min(the cores this page or process may use, 8). */
export function defaultThreadCount() {
  let cores = globalThis.navigator?.hardwareConcurrency;
  if (!(cores >= 1) && isNode && typeof globalThis.process.getBuiltinModule === 'function') {
    const os = nodeBuiltin('node:os');
    cores = os.availableParallelism?.() ?? os.cpus().length;
  }
  return Math.max(1, Math.min(cores >= 1 ? cores : 1, 8));
}

// The glue and the pool workers' script. Browsers: Blob URLs made once from their texts. Node: the
// files in the folder dist() names, the .wasm files' (worker_threads load the worker as CommonJS
// under its .cjs name); not `new URL` literals, which bundlers would copy for browsers that never
// use them.
let blobs;
function files(dist) {
  if (isNode) {
    const folder = dist();
    return { glue: new URL('attnkit-simd-threads.mjs', folder).href, worker: new URL('attnkit-simd-threads.worker.cjs', folder) };
  }
  const url = (text) => URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
  blobs ??= { glue: url(sources.glue), worker: url(sources.worker) };
  return blobs;
}

// How long the threaded module may take to instantiate before load() gives up on threads.
const START_TIMEOUT_MS = 30_000;

/**
 * Runs the threaded glue's factory with `options` plus what its pool needs: where its worker
 * script and glue are (workers import the glue by URL; in Node the files in the folder dist()
 * returns, the package's .wasm files' folder) and the pool's size (threads - 1 workers;
 * the calling thread is the last). `body(promise)` gets the promise of the module and runs before
 * the Node shims are taken away. Resolves to body's result.
 *
 * The module is ready once instantiated; its workers load in the background (the glue is patched:
 * scripts/thread_sources.mjs) and each thread joins the kernels' work when its worker is ready.
 * A worker that reports an error before then, or a module not ready after START_TIMEOUT_MS,
 * rejects instead of waiting for ever, and the workers are stopped. A worker that fails later
 * leaves its share of the work to the threads that run (ak.threadsRunning counts them).
 */
export async function instantiateThreaded(threads, dist, options, body) {
  const { glue, worker } = files(dist);
  let factory;
  try {
    ({ default: factory } = await import(/* @vite-ignore */ /* webpackIgnore: true */ glue));
  } catch (e) {
    throw new Error(`could not import the threaded build's glue (${e?.message ?? e})`);
  }
  let fail, timer;
  const failed = new Promise((_, reject) => { fail = reject; });
  const moduleOptions = {
    ...options,
    attnkitWorkers: threads - 1,
    mainScriptUrlOrBlob: glue,
    locateFile: (name) => (name.endsWith('.worker.js') ? worker : name),
    // The glue reports a worker's failure ("worker sent an error!") through printErr only.
    printErr: (text) => { if (/worker/i.test(String(text))) fail(new Error(`a pool worker failed: ${text}`)); },
  };
  const start = () => {
    timer = setTimeout(() => fail(new Error(`the threaded module was not ready within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    return Promise.race([factory(moduleOptions), failed]);
  };
  failed.catch(() => {}); // a failure after the race was decided has no listener
  const stopWorkers = () => {
    try {
      moduleOptions.PThread?.terminateAllThreads();
    } catch {
      // nothing more can be done for a pool that did not start
    }
  };
  const run = async () => {
    try {
      const promise = start();
      const result = await body(promise);
      // Node: idle pool workers must not keep the process alive.
      if (isNode) for (const w of [...moduleOptions.PThread.unusedWorkers, ...moduleOptions.PThread.runningWorkers]) w.unref?.();
      return result;
    } catch (e) {
      stopWorkers();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  };
  if (!isNode) return run();
  // The glue's Node branch is CommonJS: it calls require() and reads __dirname, installs process
  // handlers and sets global.Worker. Give it the first two while it starts, then put back all four.
  const g = globalThis, proc = g.process;
  const saved = { require: g.require, __dirname: g.__dirname, Worker: g.Worker };
  const had = { uncaughtException: proc.listeners('uncaughtException'), unhandledRejection: proc.listeners('unhandledRejection') };
  g.require ??= nodeBuiltin('node:module').createRequire(glue);
  g.__dirname ??= nodeBuiltin('node:url').fileURLToPath(new URL('.', glue));
  try {
    return await run();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete g[name];
      else g[name] = value;
    }
    for (const [event, before] of Object.entries(had)) {
      for (const l of proc.listeners(event)) if (!before.includes(l)) proc.removeListener(event, l);
    }
  }
}

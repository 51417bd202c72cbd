// `npm run bench [-- section ...]`: attnkit against its peers, measured in the same run.
// Sections: load, positional, embeddings, attention, model, generate, memory, tokenizers, threads, relaxed (default: all).
// Every section but threads runs one thread (load({ threads: 1 })). Prints markdown tables; writes bench/results/last.json.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import os from 'node:os';
import { load } from '../web/attnkit.js';
import { ROOT, fresh, fmt, interleaved, stats, table } from './lib.mjs';
import { benchEmbeddings } from './embeddings.mjs';
import { benchAttention } from './attention.mjs';
import { benchModel } from './model.mjs';
import { benchGenerate } from './generate.mjs';
import { benchLoadMemory } from './load_memory.mjs';
import { benchTokenizers } from './tokenizers.mjs';
import { benchThreads } from './threads.mjs';

const results = { machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, v8: process.versions.v8 } };
const sections = process.argv.slice(2);
const want = (s) => sections.length === 0 || sections.includes(s);

console.log(`# attnkit benchmark — ${results.machine.cpu}, ${results.machine.cores} cores, Node ${process.version}, single thread unless a section says otherwise`);

if (want('load')) {
  const files = [
    ['attnkit-simd', path.join(ROOT, 'web/dist/attnkit-simd.wasm'), path.join(ROOT, 'web/dist/attnkit-simd.mjs')],
    ['attnkit-simd-threads', path.join(ROOT, 'web/dist/attnkit-simd-threads.wasm'), path.join(ROOT, 'web/dist/attnkit-simd-threads.mjs')],
    ['attnkit-scalar', path.join(ROOT, 'web/dist/attnkit-scalar.wasm'), path.join(ROOT, 'web/dist/attnkit-scalar.mjs')],
    ['tfjs', path.join(ROOT, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'), null],
    ['ort', path.join(ROOT, 'node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm'), null],
    ['embind floor', path.join(ROOT, 'build/wasm/attnkit-embind-floor.wasm'), path.join(ROOT, 'build/wasm/attnkit-embind-floor.mjs')],
  ];
  const floorDriver = await embindFloorPackage();
  const N = 11;
  const rows = [];
  results.load = {};
  for (const [name, wasm, glue] of files) {
    const bytes = fs.readFileSync(wasm);
    const brotli = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
    const runs = name === 'embind floor' ? fresh(floorDriver, [], N) : fresh('bench/cold_load.mjs', [name], N);
    const total = stats(runs.map((r) => r.totalMs));
    const init = stats(runs.map((r) => r.initMs));
    const imported = stats(runs.map((r) => r.importMs));
    const firstOp = stats(runs.map((r) => r.firstOpMs));
    results.load[name] = { wasmBytes: bytes.length, brotliBytes: brotli, glueBytes: glue ? fs.statSync(glue).size : null, total, init, imported, firstOp };
    rows.push([name, bytes.length.toLocaleString('en'), brotli.toLocaleString('en'), fmt(imported.median), fmt(init.median),
      fmt(firstOp.median), fmt(total.min), fmt(total.median)]);
  }
  table(`Load: .wasm size and cold start in a fresh Node process (median of ${N})`,
    ['build', '.wasm bytes', 'brotli -11', 'import ms', 'init ms', 'first op ms', 'cold total ms min', 'cold total ms median'], rows);
  const ours = results.load['attnkit-simd'];
  console.log(`\nattnkit-simd: ${(ours.wasmBytes / 1024).toFixed(1)} KB (target <= 200 KB), ready + first op in ` +
    `${fmt(ours.total.median)} ms (target <= 15 ms); tfjs-wasm ${fmt(results.load.tfjs.total.median / ours.total.median, 1)}x ` +
    `and onnxruntime-web ${fmt(results.load.ort.total.median / ours.total.median, 1)}x longer to start. A module with ` +
    `one embind function, packaged and loaded the same way, starts in ${fmt(results.load['embind floor'].total.median)} ms: ` +
    `the floor of the design on this machine.`);
  const threaded = results.load['attnkit-simd-threads'];
  console.log(`attnkit-simd-threads (${os.availableParallelism()} threads: its pool's workers start and instantiate too) is ready ` +
    `after ${fmt(threaded.total.median)} ms, ${fmt(threaded.total.median / ours.total.median)}x the single-thread cold start (target <= 2x).`);
}

// build/wasm/embind-floor/: a package (with "exports", a minified glue, the same synchronous
// compile and instantiate as web/attnkit.js in Node) around bench/embind_floor.cpp's module, and
// a driver that times it like bench/cold_load.mjs. Returns the driver's path relative to ROOT.
async function embindFloorPackage() {
  const { transformSync } = await import('esbuild');
  const dir = path.join(ROOT, 'build/wasm/embind-floor');
  const pkg = path.join(dir, 'node_modules/embind-floor');
  fs.mkdirSync(pkg, { recursive: true });
  const glue = fs.readFileSync(path.join(ROOT, 'build/wasm/attnkit-embind-floor.mjs'), 'utf8');
  fs.writeFileSync(path.join(pkg, 'glue.mjs'), transformSync(glue, { minify: true, format: 'esm', target: 'es2020' }).code);
  fs.copyFileSync(path.join(ROOT, 'build/wasm/attnkit-embind-floor.wasm'), path.join(pkg, 'floor.wasm'));
  fs.writeFileSync(path.join(pkg, 'package.json'),
    JSON.stringify({ name: 'embind-floor', type: 'module', exports: { '.': { default: './index.mjs' } } }));
  fs.writeFileSync(path.join(pkg, 'index.mjs'), `import factory from './glue.mjs';
export function load() {
  const bytes = process.getBuiltinModule('node:fs').readFileSync(new URL('./floor.wasm', import.meta.url));
  const compiled = new WebAssembly.Module(bytes);
  return factory({ instantiateWasm: (imports, receive) => { receive(new WebAssembly.Instance(compiled, imports), compiled); return {}; } });
}
`);
  fs.writeFileSync(path.join(dir, 'driver.mjs'), `const t0 = performance.now();
const { load } = await import('embind-floor');
const tImport = performance.now();
const m = await load();
const tReady = performance.now();
m._addOne(1);
const tEnd = performance.now();
console.log(JSON.stringify({ importMs: tImport - t0, initMs: tReady - tImport, firstOpMs: tEnd - tReady, totalMs: tEnd - t0 }));
`);
  return path.relative(ROOT, path.join(dir, 'driver.mjs'));
}

if (want('positional')) {
  const [simd, scalar] = [await load({ simd: true, threads: 1 }), await load({ simd: false })];
  const L = 8192, D = 1024;
  // Plain JavaScript, the same float32 formula (Math.sin in double, stored as float32).
  // Every implementation writes into a reused output: a fresh 32 MiB array costs ~80 ms of
  // first-touch page faults on this VM, which would swamp the arithmetic being compared.
  const out = new Float32Array(L * D);
  const js = new Float32Array(L * D);
  const freq = new Float32Array(D / 2);
  const step = Math.fround(-Math.log(10000) / D);
  for (let k = 0; k < D / 2; k++) freq[k] = Math.fround(Math.exp(Math.fround(2 * k * step)));
  const plainJs = () => {
    for (let p = 0; p < L; p++) {
      for (let k = 0; k < D / 2; k++) {
        const a = Math.fround(p * freq[k]);
        js[p * D + 2 * k] = Math.sin(a);
        js[p * D + 2 * k + 1] = Math.cos(a);
      }
    }
  };
  const r = await interleaved({
    'attnkit wasm-simd128': () => simd.sinusoidalPositionalEncoding(L, D, { out }),
    'attnkit wasm-scalar': () => scalar.sinusoidalPositionalEncoding(L, D, { out }),
    'plain JavaScript': plainJs,
  }, { rounds: 9 });
  results.positional = { L, D, ...r };
  const base = r['attnkit wasm-simd128'].median;
  table(`Sinusoidal table ${L} x ${D} (${((L * D * 4) / 2 ** 20).toFixed(0)} MiB float32, into a reused output array, including the copy out of wasm)`,
    ['implementation', 'cold ms', 'warm ms min', 'warm ms median', 'vs SIMD'],
    Object.entries(r).map(([k, v]) => [k, fmt(v.cold), fmt(v.min), fmt(v.median), `${fmt(v.median / base)}x`]));
  console.log(`\nSIMD build is ${fmt(r['attnkit wasm-scalar'].median / base)}x faster than the scalar build on this table.`);
}

if (want('attention')) {
  results.attention = await benchAttention({ simd: await load({ simd: true, threads: 1 }), scalar: await load({ simd: false }) });
}

if (want('embeddings')) {
  results.embeddings = await benchEmbeddings({ simd: await load({ simd: true, threads: 1 }), scalar: await load({ simd: false }) });
}

if (want('memory')) {
  const { rows, results: r } = benchLoadMemory();
  results.memory = r;
  table('Loading a BERT-base-sized checkpoint (110 M parameters, 420 MiB of float32): peak memory, fresh process each',
    ['file dtype', 'path', 'file MB', 'peak MB above baseline', 'wasm heap MB', 'peak / float32 weights', 'ms'], rows);
}

if (want('tokenizers')) {
  results.tokenizers = await benchTokenizers(await load({ simd: true, threads: 1 }), table);
}

if (want('model')) {
  results.model = await benchModel({ simd: await load({ simd: true, threads: 1 }), scalar: await load({ simd: false }) });
}

if (want('threads')) {
  results.threads = await benchThreads({ table });
}

if (want('generate')) {
  results.generate = await benchGenerate({ simd: await load({ simd: true, threads: 1 }), scalar: await load({ simd: false }) });
}

if (want('relaxed')) {
  results.relaxed = await benchRelaxedBuilds();
}

// The relaxed-SIMD build against the SIMD128 build (bench/relaxed_cases.mjs, one thread each): in
// Node 20 in a child process with the flags it needs (--experimental-wasm-relaxed-simd, and
// --no-liftoff: its baseline tier computes the int8 dot wrongly), and in headless Chromium, which
// runs it without flags.
async function benchRelaxedBuilds() {
  if (!fs.existsSync(path.join(ROOT, 'web/dist/attnkit-simd-relaxed.wasm'))) {
    console.log('\nRelaxed SIMD: skipped (attnkit-simd-relaxed.wasm was not built: scripts/build.sh needs clang++-19)');
    return { skipped: 'not built' };
  }
  const { execFileSync } = await import('node:child_process');
  const out = {};
  out.node = JSON.parse(execFileSync(process.execPath, ['--experimental-wasm-relaxed-simd', '--no-liftoff',
    path.join(ROOT, 'bench/relaxed_node.mjs')], { encoding: 'utf8', maxBuffer: 1 << 24 }).trim().split('\n').pop());
  try {
    const { openPage } = await import('../tests/browser/browser.mjs');
    const { page, close } = await openPage({ served: ['web', 'bench'], isolated: false });
    try {
      out.chromium = await page.evaluate(async () => {
        const { load } = await import('/web/dist/attnkit.mjs'); // the package's bundle, as pages load it
        const { benchRelaxed } = await import('/bench/relaxed_cases.mjs');
        return benchRelaxed(load);
      });
      out.chromium.version = await page.evaluate(() => navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0]);
    } finally {
      await close();
    }
  } catch (e) {
    out.chromium = { error: e.message };
  }
  const rows = [];
  for (const [engine, r] of Object.entries(out)) {
    if (r.error) {
      rows.push([engine, `failed: ${r.error}`, '', '', '', '']);
      continue;
    }
    for (const c of ['encoder', 'attention']) {
      rows.push([engine === 'chromium' ? `Chromium ${r.version ?? ''}` : `Node ${process.version} (flags)`, r[c].what,
        fmt(r[c]['wasm-simd128'].median, 1), fmt(r[c]['wasm-simd128-relaxed'].median, 1), `${fmt(r[c].ratio)}x`,
        r[c].maxAbsDiff.toExponential(1)]);
    }
  }
  table('Relaxed SIMD (fused multiply-add) vs SIMD128, one thread, median ms (targets in Chromium: encoder >= 1.25x, causal attention L = 2048 >= 1.15x)',
    ['engine', 'case', 'SIMD128 ms', 'relaxed ms', 'relaxed speed-up', 'max |diff|'], rows);
  return out;
}

fs.mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
fs.writeFileSync(path.join(ROOT, 'bench/results/last.json'), JSON.stringify(results, null, 1));

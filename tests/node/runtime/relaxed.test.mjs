// The relaxed-SIMD builds' selection (docs/relaxed-simd.md): load({ simd: 'auto' }) takes them only
// where the engine validates relaxed opcodes and passes the known-answer test of every relaxed
// instruction they use; Node 20 runs them behind --experimental-wasm-relaxed-simd, and its baseline
// tier (Liftoff) computes relaxed_dot_i8x16_i7x16_add_s wrongly, which the test must catch. Each
// engine configuration is a child Node process with its flags. (Their numerics: the golden tests'
// relaxed pass in scripts/test.sh; their threads against their single thread: threads.test.mjs there.)
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { load, AttnkitError } from '../../../web/attnkit.js';
import { probeRelaxedSimd, relaxedUnavailable } from '../../../web/src/runtime/relaxed.js';
import { ROOT, relaxedBuilt, assertClose } from '../helpers.mjs';

const built = relaxedBuilt();
const needsBuild = { skip: !built && 'the relaxed-SIMD builds were not built (no clang++-19)' };
const node20 = process.version.startsWith('v20.');

// Runs `body` (the text of an async function of `load`, returning JSON-able data) in a child Node
// process with the V8 flags `flags`.
function child(flags, body) {
  const url = new URL('web/attnkit.js', `file://${ROOT}/`).href;
  const script = `import * as attnkit from ${JSON.stringify(url)};\n` +
    `const out = await (async ({ load }) => { ${body} })(attnkit);\n` +
    // (exit once the pipe has taken it all: the threaded module's workers would keep the process alive)
    'process.stdout.write(`${JSON.stringify(out)}\\n`, () => process.exit(0));\n';
  const text = execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 26 });
  return JSON.parse(text.trim().split('\n').pop());
}

const PICK = `
  const pick = async (o) => { try { const ak = await load(o); return [ak.backend, ak.relaxedUnavailableReason]; }
    catch (e) { return ['error', e.code, e.message]; } };
  return { auto: await pick({ threads: 1 }), autoThreads: await pick({}), forced: await pick({ simd: 'relaxed', threads: 1 }) };`;

test('the known-answer test refuses an engine that computes the int8 dot wrongly (Node 20, --liftoff-only)', needsBuild, () => {
  const r = child(['--experimental-wasm-relaxed-simd', '--liftoff-only'], PICK);
  if (!node20 && r.auto[0] === 'wasm-simd128-relaxed') return; // a later Node whose baseline tier is right
  assert.deepEqual(r.auto.slice(0, 1), ['wasm-simd128']);
  assert.match(r.auto[1], /computes i32x4\.relaxed_dot_i8x16_i7x16_add_s wrongly: \[-130048, .*\] for \[-64024, /);
  assert.equal(r.autoThreads[0], 'wasm-simd128-threads');
  assert.equal(r.autoThreads[1], r.auto[1]);
  assert.deepEqual(r.forced.slice(0, 2), ['error', 'ERR_RELAXED_SIMD_UNSUPPORTED']);
  assert.match(r.forced[2], /simd: 'relaxed' was requested but this engine computes i32x4\.relaxed_dot/);
});

test('Node 20 with the flag but its default tiering fails the test too (Liftoff runs first)', { skip: !node20 || needsBuild.skip }, () => {
  const r = child(['--experimental-wasm-relaxed-simd'], PICK);
  assert.equal(r.auto[0], 'wasm-simd128');
  assert.match(r.auto[1], /relaxed_dot_i8x16_i7x16_add_s wrongly/);
});

test('without relaxed SIMD (Node 20 without the flag) load() falls back to SIMD128 and says why; simd: \'relaxed\' is refused', async () => {
  if (relaxedUnavailable() === null) return; // an engine with relaxed SIMD on by default: the next test covers it
  assert.match(relaxedUnavailable(), /does not support WebAssembly relaxed SIMD/);
  const ak = await load({ threads: 1 });
  assert.deepEqual([ak.backend, ak.relaxedUnavailableReason], ['wasm-simd128', relaxedUnavailable()]);
  await assert.rejects(load({ simd: 'relaxed' }), (e) => e instanceof AttnkitError && e.code === 'ERR_RELAXED_SIMD_UNSUPPORTED' &&
    e.argument === 'simd' && /does not support WebAssembly relaxed SIMD/.test(e.message));
});

test('an engine that passes (--no-liftoff) gets the relaxed builds from simd: \'auto\', threaded by default', needsBuild, () => {
  const r = child(['--experimental-wasm-relaxed-simd', '--no-liftoff'], `${PICK.replace(/return \{/, 'const picks = {')}
    const { probeRelaxedSimd } = await import(${JSON.stringify(new URL('web/src/runtime/relaxed.js', `file://${ROOT}/`).href)});
    const simd = await load({ simd: true, threads: 1 });
    return { ...picks, probe: probeRelaxedSimd(), simd128: [simd.backend, simd.relaxedUnavailableReason] };`);
  assert.deepEqual(r.auto, ['wasm-simd128-relaxed', null]);
  assert.deepEqual(r.autoThreads, ['wasm-simd128-relaxed-threads', null]);
  assert.deepEqual(r.forced, ['wasm-simd128-relaxed', null]);
  assert.equal(r.probe.reason, null);
  assert.equal(typeof r.probe.fused, 'boolean');
  assert.deepEqual(r.simd128, ['wasm-simd128', 'simd: true asks for the SIMD128 build']);
});

test('files named by the user keep simd: \'auto\' on the SIMD128 build unless the map names the relaxed one', needsBuild, () => {
  const dist = new URL('web/dist/', `file://${ROOT}/`).href;
  const r = child(['--experimental-wasm-relaxed-simd', '--no-liftoff'], `
    const fs = await import('node:fs');
    const d = ${JSON.stringify(dist)};
    const bytes = fs.readFileSync(new URL('attnkit-simd.wasm', d));
    const a = await load({ wasmBinary: bytes });
    const b = await load({ wasmUrl: new URL('attnkit-simd.wasm', d) });
    const c = await load({ wasmUrl: { 'wasm-simd128-relaxed': new URL('attnkit-simd-relaxed.wasm', d) }, threads: 1 });
    const e = await load({ simd: 'relaxed', wasmBinary: fs.readFileSync(new URL('attnkit-simd-relaxed.wasm', d)) });
    return [a, b, c, e].map((ak) => [ak.backend, ak.relaxedUnavailableReason]);`);
  assert.deepEqual(r[0], ['wasm-simd128', "wasmBinary was given (the relaxed build's bytes need simd: 'relaxed')"]);
  assert.deepEqual(r[1], ['wasm-simd128', "wasmUrl was given without a 'wasm-simd128-relaxed' URL"]);
  assert.deepEqual(r[2], ['wasm-simd128-relaxed', null]);
  assert.deepEqual(r[3], ['wasm-simd128-relaxed', null]);
});

test('relaxed results: within float32 tolerance of the SIMD128 build, not its bits where the CPU fuses; threads give the single thread\'s bits', needsBuild, () => {
  const r = child(['--experimental-wasm-relaxed-simd', '--no-liftoff'], `
    const rand = (n, s) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 43758.5453 % 1);
    const x = { data: rand(37 * 300, 1), dims: [37, 300] }, w = { data: rand(130 * 300, 2), dims: [130, 300] };
    const q = { data: rand(2 * 4 * 67 * 32, 3), dims: [2, 4, 67, 32] }, k = { data: rand(2 * 4 * 67 * 32, 4), dims: [2, 4, 67, 32] };
    const v = { data: rand(2 * 4 * 67 * 32, 5), dims: [2, 4, 67, 32] };
    const run = (ak) => [...ak.linear(x, w).data, ...ak.linear(x, { data: w.data, dims: [300, 130] }, { layout: 'inOut' }).data,
      ...ak.attention(q, k, v, { causal: true }).data];
    const { probeRelaxedSimd } = await import(${JSON.stringify(new URL('web/src/runtime/relaxed.js', `file://${ROOT}/`).href)});
    return { fused: probeRelaxedSimd().fused, simd: run(await load({ simd: true, threads: 1 })),
      relaxed: run(await load({ simd: 'relaxed', threads: 1 })), threads: run(await load({ simd: 'relaxed', threads: 3 })) };`);
  const bits = (a) => Buffer.from(Float32Array.from(a).buffer);
  assert.ok(bits(r.threads).equals(bits(r.relaxed)), 'relaxed threads differ from the relaxed single thread');
  assertClose(r.relaxed, r.simd, 'relaxed vs SIMD128', 1e-4, 1e-4);
  if (r.fused) assert.ok(!bits(r.relaxed).equals(bits(r.simd)), 'a fusing engine gave the SIMD128 bits: no relaxed_madd ran?');
});

test('the simd option: a misspelt value names \'relaxed\', an unknown option its closest name', async () => {
  await assert.rejects(load({ simd: 'relax' }), (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' &&
    e.argument === 'simd' && /'auto', 'relaxed', true or false, got "relax"; did you mean 'relaxed'\?/.test(e.message));
  await assert.rejects(load({ simd: 1 }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'simd');
  await assert.rejects(load({ simdd: 'relaxed' }), (e) => e.argument === 'simdd' && /did you mean 'simd'\?/.test(e.message));
});

test('the probe module is what it says: it validates exactly where relaxed SIMD does', () => {
  const r = probeRelaxedSimd();
  if (r.reason === null) assert.equal(typeof r.fused, 'boolean');
  else assert.match(r.reason, /relaxed/);
  const flagged = child(['--experimental-wasm-relaxed-simd', '--no-liftoff'], `
    const { RELAXED_PROBE } = await import(${JSON.stringify(new URL('web/src/runtime/relaxed.js', `file://${ROOT}/`).href)});
    return WebAssembly.validate(RELAXED_PROBE);`);
  assert.equal(flagged, true);
});

test('the relaxed builds run under the SIMD128 builds\' glue: the package ships their .wasm files only', needsBuild, () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.ok(pkg.files.includes('web/dist/*.wasm'));
  assert.ok(!pkg.files.some((f) => f.includes('relaxed')), pkg.files.join(', '));
  // What scripts/check_relaxed_glue.mjs checks at build time, checked again on the files as built.
  const text = (name, ext) => fs.readFileSync(path.join(ROOT, 'web/dist', `${name}${ext}`), 'utf8').split(`${name}.`).join('X.');
  assert.equal(text('attnkit-simd-relaxed', '.mjs'), text('attnkit-simd', '.mjs'));
  assert.equal(text('attnkit-simd-relaxed-threads', '.mjs'), text('attnkit-simd-threads', '.mjs'));
  assert.equal(text('attnkit-simd-relaxed-threads', '.worker.js'), text('attnkit-simd-threads', '.worker.js'));
  const bundle = fs.readFileSync(path.join(ROOT, 'web/dist/attnkit.mjs'), 'utf8');
  assert.ok(!bundle.includes('attnkit-simd-relaxed.mjs') && !bundle.includes('attnkit-simd-relaxed-threads.mjs'));
});

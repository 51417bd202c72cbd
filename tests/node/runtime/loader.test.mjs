import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { load, simdSupported, AttnkitError } from '../../../web/attnkit.js';
import { ROOT } from '../helpers.mjs';

test('simd: auto picks the SIMD128 build where the engine has it (threaded in Node unless threads: 1)', async () => {
  assert.equal(simdSupported(), true); // Node >= 16.4 ships SIMD128
  assert.equal((await load()).backend, 'wasm-simd128-threads');
  assert.equal((await load({ simd: 'auto' })).backend, 'wasm-simd128-threads');
  assert.equal((await load({ simd: 'auto', threads: 1 })).backend, 'wasm-simd128');
  assert.equal((await load({ simd: false })).backend, 'wasm-scalar');
});

test('concurrent loads share one instance (single flight)', async () => {
  const [a, b] = await Promise.all([load({ simd: false }), load({ simd: false })]);
  assert.equal(a, b);
});

test('a bad simd option is rejected by name', async () => {
  await assert.rejects(load({ simd: 'yes' }), (e) => e instanceof AttnkitError && e.argument === 'simd' && /got "yes"/.test(e.message));
});

test('a missing wasm file says which path it tried and why; a later load still works', async () => {
  await assert.rejects(load({ wasmUrl: new URL('file:///no/such/attnkit.wasm') }), (e) =>
    e.code === 'ERR_LOAD' && e.message.includes('file:///no/such/attnkit.wasm') && /ENOENT/.test(e.message));
  await assert.rejects(load({ wasmUrl: 'http://127.0.0.1:9/attnkit.wasm' }), (e) =>
    e.code === 'ERR_LOAD' && e.message.includes('http://127.0.0.1:9/attnkit.wasm'));
  assert.equal((await load()).sinusoidalPositionalEncoding(2, 2).data.length, 4);
});

test('a file that is not wasm gives a clear instantiate error', async () => {
  await assert.rejects(load({ simd: false, wasmBinary: new Uint8Array([1, 2, 3, 4]) }), (e) =>
    e.code === 'ERR_LOAD' && /could not instantiate the wasm-scalar build from the given wasmBinary/.test(e.message));
});

test('a wasm module whose imports the glue cannot satisfy is refused, and loading still works', async () => {
  // (module (import "zz" "f" (func))): instantiation throws. In Node the instance is created
  // synchronously inside the glue's instantiateWasm callback; that throw must reject load().
  const wrong = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 2, 8, 1, 2, 122, 122, 1, 102, 0, 0]);
  await assert.rejects(load({ simd: true, wasmBinary: wrong }), (e) =>
    e.code === 'ERR_LOAD' && /could not instantiate the wasm-simd128 build from the given wasmBinary: .*"zz"/.test(e.message));
  assert.equal((await load()).sinusoidalPositionalEncoding(2, 2).data.length, 4);
});

test('wasmUrl and wasmBinary overrides load the named files', async () => {
  const file = path.join(ROOT, 'web/dist/attnkit-scalar.wasm');
  const viaBinary = await load({ simd: false, wasmBinary: fs.readFileSync(file) });
  assert.equal(viaBinary.backend, 'wasm-scalar');
  const viaUrl = await load({ wasmUrl: { 'wasm-simd128': new URL(`file://${path.join(ROOT, 'web/dist/attnkit-simd.wasm')}`) } });
  assert.equal(viaUrl.backend, 'wasm-simd128');
  assert.deepEqual(viaUrl.sinusoidalPositionalEncoding(3, 4).data.length, 12);
});

test('the package entry point (web/dist/attnkit.mjs, one bundled file) exports what web/attnkit.js does and works', async () => {
  const entry = await import('attnkit');
  const source = await import('../../../web/attnkit.js');
  assert.equal(import.meta.resolve('attnkit'), new URL('../../../web/dist/attnkit.mjs', import.meta.url).href);
  // The .wasm files are exported for self-hosting (load({ wasmBinary }) or a bundler's ?url import).
  for (const build of ['simd', 'scalar', 'loaders', 'simd-threads']) {
    const url = import.meta.resolve(`attnkit/dist/attnkit-${build}.wasm`);
    assert.equal(url, new URL(`../../../web/dist/attnkit-${build}.wasm`, import.meta.url).href);
    assert.ok(fs.existsSync(new URL(url)), url);
  }
  assert.deepEqual(Object.keys(entry).sort(), Object.keys(source).sort());
  // Node's threaded build reads its glue and worker script from files beside the .wasm files.
  for (const file of ['attnkit-simd-threads.mjs', 'attnkit-simd-threads.worker.cjs']) {
    assert.ok(fs.existsSync(new URL(`../../../web/dist/${file}`, import.meta.url)), file);
  }
  const ak = await entry.load(); // the threaded glue, imported by the bundle from its URL
  assert.deepEqual([ak.backend, ak.threads > 1], ['wasm-simd128-threads', true]);
  const want = (await source.load()).sinusoidalPositionalEncoding(17, 6, { layout: 'split' });
  const got = ak.sinusoidalPositionalEncoding(17, 6, { layout: 'split' });
  assert.ok(got instanceof entry.Tensor);
  // The minified bundle keeps the public classes' names (console.log(tensor) prints Tensor {...}).
  assert.deepEqual([got.constructor.name, ak.constructor.name, entry.AttnkitError.name, entry.Tokenizer.name],
    ['Tensor', 'Attnkit', 'AttnkitError', 'Tokenizer']);
  assert.deepEqual([Array.from(got.data), got.dims], [Array.from(want.data), want.dims]);
  // The loaders module is found next to the bundle too.
  const spec = await ak.modelSpec('{"model_type": "bert", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 8}');
  assert.equal(spec.family, 'bert');
  assert.throws(() => ak.sinusoidalPositionalEncoding(4, 3), (e) => e instanceof entry.AttnkitError && e.argument === 'dim');
});

test("an uncaught AttnkitError from the package prints a short report, not the bundle's minified line", async () => {
  const { spawnSync } = await import('node:child_process');
  const script = "const { load } = await import('attnkit'); (await load()).sinusoidalPositionalEncoding(4, 7);";
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /AttnkitError: sinusoidalPositionalEncoding: dim must be even/);
  assert.ok(r.stderr.length < 4000, `${r.stderr.length} characters printed`);
  assert.ok(r.stderr.split('\n').every((line) => line.length <= 400), 'a line over 400 characters');
});

test('on a Node without process.getBuiltinModule (< 20.16), load() fails with an AttnkitError naming the version', async () => {
  const { spawnSync } = await import('node:child_process');
  const script = "delete process.getBuiltinModule; const { load, AttnkitError } = await import('attnkit');" +
    "try { await load(); } catch (e) { console.log(e instanceof AttnkitError, e.code, e.message); }";
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.match(r.stdout, /^true ERR_LOAD load: could not read the wasm-simd128 build .*needs Node 20\.16 or later/, r.stdout + r.stderr);
});

test('an HTML page where the .wasm should be (a bundler that moved attnkit) is named, with the fix', async () => {
  const http = await import('node:http');
  const server = http.createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><body>app</body></html>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await assert.rejects(load({ wasmUrl: `http://127.0.0.1:${server.address().port}/attnkit-simd.wasm` }), (e) =>
      e.code === 'ERR_LOAD' && /not a \.wasm file but an HTML page: your bundler moved attnkit/.test(e.message) &&
      /optimizeDeps/.test(e.message));
  } finally {
    server.close();
  }
  assert.equal((await load()).backend, 'wasm-simd128-threads', 'a later load still works');
});

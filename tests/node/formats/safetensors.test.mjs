// .safetensors from JavaScript on both builds: the fixture file (values converted by torch), a
// streamed Response with progress, hostile files rejected by name with no leak.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AttnkitError } from '../../../web/attnkit.js';
import { ROOT, backends, fixture } from '../helpers.mjs';
import { loaders } from '../../../web/src/runtime/loaders.js';

const fx = fixture('safetensors.json');
const file = fs.readFileSync(path.join(ROOT, 'tests/fixtures', fx.file));
const [simd, scalar] = await backends();
const value = (v) => (v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v);

// A file from a header object and a data length (the format pads the header to 8 bytes).
function build(header, dataBytes = 0, rawHeader) {
  let text = new TextEncoder().encode(rawHeader ?? JSON.stringify(header));
  const padded = new Uint8Array(Math.ceil(text.length / 8) * 8).fill(32);
  padded.set(text);
  text = padded;
  const out = new Uint8Array(8 + text.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  return out;
}

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: loadSafetensors reads F32, F16 and BF16 exactly as torch converts them`, async () => {
    const { tensors, metadata } = await ak.loadSafetensors(file);
    assert.deepEqual(metadata, fx.metadata);
    assert.deepEqual(Object.keys(tensors).sort(), Object.keys(fx.tensors).sort());
    for (const [name, want] of Object.entries(fx.tensors)) {
      assert.deepEqual(tensors[name].dims, want.shape, name);
      assert.equal(tensors[name].type, 'float32');
      assert.deepEqual(Array.from(tensors[name].data), want.values.map(value), name);
      // -0 stays -0
      want.values.forEach((v, i) => assert.equal(Object.is(tensors[name].data[i], -0), Object.is(v, -0), `${name}[${i}]`));
    }
  });

  test(`${ak.backend}: every dtype torch writes is read: floats as float32, integers as they are`, async () => {
    const dt = fixture('safetensors_dtypes.json');
    const { tensors } = await ak.loadSafetensors(fs.readFileSync(path.join(ROOT, 'tests/fixtures', dt.file)));
    const types = { F64: 'float32', F16: 'float32', I64: 'int64', I32: 'int32', I16: 'int16', I8: 'int8', U8: 'uint8', BOOL: 'bool' };
    for (const [name, want] of Object.entries(dt.tensors)) {
      const t = tensors[name];
      assert.equal(t.type, types[want.dtype], name);
      assert.deepEqual(t.dims, want.shape, name);
      if (t.type === 'float32') assert.deepEqual(Array.from(t.data), want.values.map(value), name);
      else assert.deepEqual(Array.from(t.data, (x) => String(typeof x === 'bigint' ? x : Number(x))), want.values, name);
    }
    assert.ok(tensors.i64.data instanceof BigInt64Array && tensors.mask.data instanceof Uint8Array);
  });

  test(`${ak.backend}: loadSafetensors streams a Response with progress`, async () => {
    const seen = [];
    const response = new Response(new Blob([file]).stream(), { headers: { 'content-length': String(file.length) } });
    const { tensors } = await ak.loadSafetensors(response, { onProgress: (loaded, total) => seen.push([loaded, total]) });
    assert.ok(seen.length >= 1);
    assert.deepEqual(seen.at(-1), [file.length, file.length]);
    assert.deepEqual(tensors['embeddings.word'].dims, [3, 4]);
    await assert.rejects(ak.loadSafetensors(new Response('nope', { status: 404 })), (e) => e.code === 'ERR_LOAD');
  });

  test(`${ak.backend}: corrupt, truncated and hostile files are rejected by name, without leaks`, async () => {
    const t = (o) => ({ dtype: 'F32', shape: [1], data_offsets: [0, 4], ...o });
    const hugeLength = new Uint8Array(16);
    new DataView(hugeLength.buffer).setBigUint64(0, 1n << 40n, true);
    const cases = [
      [new Uint8Array(5), 'bytes', /fewer than the 8-byte header length/],
      [hugeLength, 'headerLength', /above the limit/],
      [file.subarray(0, 100), 'headerLength', /runs past the end/],
      [build(null, 0, '{"a": '), 'header', /not valid JSON/],
      [build(null, 0, '['.repeat(5000) + ']'.repeat(5000)), 'header', /deeper than 64/],
      [build({ a: t({ dtype: 'F8_E4M3' }) }, 4), 'a.dtype', /'F8_E4M3'; supported: F64, F32/],
      [build({ a: t({ dtype: 'I8' }) }, 4), 'a.data_offsets', /spans 4 bytes but its shape and I8 need 1/],
      [build({ a: t({ shape: [2] }) }, 4), 'a.data_offsets', /spans 4 bytes but its shape and F32 need 8/],
      [build({ a: t({ data_offsets: [0, 8], shape: [2] }) }, 4), 'a.data_offsets', /outside the 4 bytes of data/],
      [build({ a: t({ shape: [2], data_offsets: [0, 8] }), b: t({ data_offsets: [4, 8] }) }, 8), 'b.data_offsets', /overlap/],
      [build({ a: t({ shape: [1.5] }) }, 4), 'a.shape', /integers in \[0, 2\^32\]/],
      [build({ a: t({ shape: [0, 2 ** 64 - 1] }) }, 0), 'a.shape', /integers in \[0, 2\^32\]/],
      [build({ __metadata__: { n: 1 } }), '__metadata__.n', /must be strings/],
      // Hugging Face's rule: tensors tile the data (no gap, nothing after), and no key twice.
      [build({ a: t(), b: t({ data_offsets: [8, 12] }) }, 12), 'b.data_offsets', /leaving a gap after byte 4/],
      [build({ a: t() }, 8), 'bytes', /cover 4 of the 8 bytes of data/],
      [build(null, 4, `{"a": ${JSON.stringify(t())}, "a": ${JSON.stringify(t())}}`), 'a', /the key 'a' twice/],
      [build(null, 4, `{"a": {"dtype": "F32", "dtype": "F16", "shape": [1], "data_offsets": [0, 4]}}`), 'a.dtype', /twice/],
    ];
    const failAll = async () => {
      for (const [bytes, argument, message] of cases) {
        await assert.rejects(ak.loadSafetensors(bytes), (e) => {
          assert.ok(e instanceof AttnkitError, String(e));
          assert.equal(e.argument, argument, e.message);
          assert.match(e.message, message);
          return true;
        });
      }
    };
    await failAll();
    const heap = await loaders(ak); // the loaders module, where headers are parsed
    const inUse = heap.mallocInUse();
    for (let i = 0; i < 50; i++) await failAll();
    assert.equal(heap.mallocInUse(), inUse);
    await assert.rejects(ak.loadSafetensors('file.safetensors'), (e) => e.argument === 'source');
    assert.equal((await ak.loadSafetensors(file)).tensors.scalar.data[0], 7.5); // still works
  });
}

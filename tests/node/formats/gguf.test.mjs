// GGUF from JavaScript (ak.loadGguf): the files tests/golden/gen_gguf.py wrote read back as
// gguf.json records them (metadata values and types, tensor types, dims, bytes, and float32 values
// bit for bit), tensors copied into wasm memory, a streamed Response, a header longer than the first
// prefix, and hostile files refused with coded errors naming the key or tensor, without leaks.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AttnkitError, Tensor } from '../../../web/attnkit.js';
import { ROOT, backends, fixture } from '../helpers.mjs';
import { loaders } from '../../../web/src/runtime/loaders.js';

const fx = fixture('gguf/gguf.json');
const read = (name) => new Uint8Array(fs.readFileSync(path.join(ROOT, 'tests/fixtures/gguf', name)));
const [simd, , scalar] = await backends();

function fnv(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}
const bytesOf = (typed) => new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);

const ARRAY_TYPES = {
  u8: Uint8Array, i8: Int8Array, u16: Uint16Array, i16: Int16Array, u32: Uint32Array, i32: Int32Array,
  f32: Float32Array, u64: BigUint64Array, i64: BigInt64Array, f64: Float64Array,
};

// What gen_gguf.py recorded, as loadGguf gives it.
function expected({ type, element, value }) {
  if (type === 'u64' || type === 'i64') return BigInt(value);
  if (type !== 'array') return value;
  if (element === 'string' || element === 'bool') return value;
  const T = ARRAY_TYPES[element];
  return T.from(value.map((v) => (element === 'u64' || element === 'i64' ? BigInt(v) : v)));
}

// A GGUF writer for hostile files (little-endian fields appended in order).
class Writer {
  constructor() {
    this.parts = [];
  }
  raw(bytes) {
    this.parts.push(Uint8Array.from(bytes));
    return this;
  }
  num(n, bytes) {
    const b = new Uint8Array(bytes);
    const v = new DataView(b.buffer);
    if (bytes === 4) v.setUint32(0, n, true);
    else v.setBigUint64(0, BigInt(n), true);
    this.parts.push(b);
    return this;
  }
  u32(n) { return this.num(n, 4); }
  u64(n) { return this.num(n, 8); }
  str(s) {
    const b = typeof s === 'string' ? new TextEncoder().encode(s) : Uint8Array.from(s);
    return this.u64(b.length).raw(b);
  }
  head(tensors, kvs, version = 3) { return this.raw([0x47, 0x47, 0x55, 0x46]).u32(version).u64(tensors).u64(kvs); }
  info(name, ne, type, offset) {
    this.str(name).u32(ne.length);
    for (const n of ne) this.u64(n);
    return this.u32(type).u64(offset);
  }
  zeros(n) { return this.raw(new Uint8Array(n)); }
  pad(alignment = 32) { return this.zeros((alignment - (this.length % alignment)) % alignment); }
  get length() { return this.parts.reduce((a, p) => a + p.length, 0); }
  bytes() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

test('every fixture reads as gen_gguf.py wrote it: metadata values and types, tensors bit for bit', async () => {
  const ak = simd;
  for (const [file, want] of Object.entries(fx.files)) {
    const { metadata, tensors } = await ak.loadGguf(read(file));
    assert.equal(Object.getPrototypeOf(metadata), null);
    assert.deepEqual(Object.keys(metadata), want.keys, file);
    for (const key of want.keys) {
      const w = want.metadata[key];
      const got = metadata[key];
      const where = `${file} ${key}`;
      if (w.type === 'array' && w.element === 'string') {
        assert.equal(got.length, w.value.length, where);
        assert.deepEqual(got.toArray(), w.value, where);
      } else if (w.type === 'array' && w.element !== 'bool') {
        assert.equal(got.constructor, ARRAY_TYPES[w.element], where);
        assert.deepEqual(got, expected(w), where);
      } else {
        assert.deepEqual(got, expected(w), where);
      }
    }
    assert.deepEqual(Object.keys(tensors), Object.keys(want.tensors), file);
    for (const [name, w] of Object.entries(want.tensors)) {
      const t = tensors[name];
      const where = `${file} ${name}`;
      assert.equal(t.name, name);
      assert.equal(t.ggmlType, w.type, where);
      assert.equal(t.type, { Q8_0: 'q8_0', Q4_0: 'q4_0', Q4_K: 'q4_k' }[w.type] ?? 'float32', where);
      assert.deepEqual(t.dims, w.dims, where);
      assert.equal(t.size, w.dims.reduce((a, b) => a * b, 1), where);
      assert.equal(t.byteLength, w.size, where);
      assert.equal(t.bytes.byteOffset - read(file).byteOffset >= 0, true);
      assert.equal(fnv(t.bytes), w.fnv, where);
      const values = t.dequantize();
      assert.equal(fnv(bytesOf(values)), w.fnvFloat32, where);
      assert.deepEqual(Array.from(values.subarray(0, 8)), w.head, where);
      if (t.type === 'float32') assert.deepEqual(t.data, values, where);
      else assert.equal(t.data, undefined, where);
    }
  }
});

test('the llama fixture: the converter\'s keys, names, tokenizer arrays as views, Q/K permuted rows', async () => {
  const { metadata, tensors } = await simd.loadGguf(read('llama-q4_k.gguf'));
  assert.equal(metadata['general.architecture'], 'llama');
  assert.equal(metadata['llama.attention.head_count'], 4);
  assert.equal(metadata['llama.attention.head_count_kv'], 2);
  assert.equal(metadata['llama.rope.freq_base'], 10000);
  assert.equal(metadata['tokenizer.ggml.add_bos_token'], true);
  const tokens = metadata['tokenizer.ggml.tokens'];
  assert.equal(tokens.length, fx.llama.vocab_size);
  assert.equal(tokens.at(0), '<unk>');
  assert.equal(tokens.at(-1), tokens.toArray().at(-1));
  assert.equal(tokens.at(tokens.length), undefined);
  assert.equal(tokens.bytes(-tokens.length)[0], '<'.charCodeAt(0));
  assert.deepEqual([...tokens].slice(3, 5), ['<0x00>', '<0x01>']);
  assert.ok(metadata['tokenizer.ggml.scores'] instanceof Float32Array);
  assert.ok(metadata['tokenizer.ggml.token_type'] instanceof Int32Array);
  assert.equal(metadata['tokenizer.ggml.token_type'][3], 6); // BYTE
  assert.deepEqual(Object.keys(tensors).map((n) => `${n}:${tensors[n].ggmlType}`), [
    'token_embd.weight:Q4_0', 'blk.0.attn_norm.weight:F32', 'blk.0.attn_q.weight:Q4_0', 'blk.0.attn_k.weight:Q4_0',
    'blk.0.attn_v.weight:Q4_0', 'blk.0.attn_output.weight:Q4_0', 'blk.0.ffn_norm.weight:F32', 'blk.0.ffn_gate.weight:Q4_0',
    'blk.0.ffn_up.weight:Q4_0', 'blk.0.ffn_down.weight:Q4_K', 'output_norm.weight:F32', 'output.weight:Q4_0',
  ]);
  assert.deepEqual(tensors['blk.0.attn_k.weight'].dims, [16, 32]); // [kv heads x head dim, hidden]
  assert.deepEqual(tensors['blk.0.ffn_down.weight'].dims, [32, 256]);
  assert.equal(fx.llama.qk_permuted, true);
});

test('tensors are written into wasm memory as stored (blocks) or as float32, and work as weights', async () => {
  const ak = simd;
  const { tensors } = await ak.loadGguf(read('all-types.gguf'));
  for (const t of Object.values(tensors)) {
    const ptr = ak._malloc(Math.max(4 * t.size, t.byteLength, 4), 'test');
    try {
      t.writeTo(ak, ptr);
      if (t.type === 'float32') assert.deepEqual(ak._view(Float32Array, ptr, t.size), t.data, t.name);
      else assert.deepEqual(ak._view(Uint8Array, ptr, t.byteLength), t.bytes, t.name);
      t.writeFloat32To(ak, ptr);
      assert.deepEqual(ak._view(Float32Array, ptr, t.size), t.dequantize(), t.name);
    } finally {
      ak._m._free(ptr);
    }
  }
  // A float32 tensor is a Tensor for the ops; a quantized one is refused by name.
  const f16 = (await ak.loadGguf(read('llama-f16.gguf'))).tensors['blk.0.attn_q.weight'];
  const x = new Tensor('float32', new Float32Array(32).fill(0.5), [1, 32]);
  const y = ak.linear(x, f16);
  assert.deepEqual(y.dims, [1, 32]);
  const q = (await ak.loadGguf(read('llama-q8_0.gguf'))).tensors['blk.0.attn_q.weight'];
  assert.throws(() => ak.linear(x, q), (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'weight');
});

test('a streamed Response with progress, a header longer than the first prefix, options checked', async () => {
  const file = read('gpt2-f16.gguf');
  const seen = [];
  const response = new Response(new Blob([file]).stream(), { headers: { 'content-length': String(file.length) } });
  const { tensors } = await simd.loadGguf(response, { onProgress: (loaded, total) => seen.push([loaded, total]) });
  assert.deepEqual(seen.at(-1), [file.length, file.length]);
  assert.deepEqual(tensors['blk.0.attn_qkv.weight'].dims, [96, 32]);
  await assert.rejects(simd.loadGguf(new Response('nope', { status: 404 })), (e) => e.code === 'ERR_LOAD');
  await assert.rejects(simd.loadGguf(file, { onProgres: () => {} }),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /did you mean 'onProgress'/.test(e.message));
  // 700 000 tokens: a 6.3 MB header, read from a 4 MiB prefix and then the 6.3 MB the reader asks for.
  const n = 700000;
  const w = new Writer().head(1, 2).str('general.architecture').u32(8).str('llama');
  w.str('tokenizer.ggml.tokens').u32(9).u32(8).u64(n);
  const strings = new Uint8Array(9 * n);
  for (let i = 0; i < n; i++) {
    strings[9 * i] = 1;
    strings[9 * i + 8] = 97 + (i % 26);
  }
  w.raw(strings);
  w.info('a', [8], 0, 0).pad().zeros(32);
  const big = w.bytes();
  assert.ok(big.length > 6e6);
  const heap = await loaders(simd);
  const before = heap.mallocInUse();
  const { metadata } = await simd.loadGguf(big);
  assert.equal(metadata['tokenizer.ggml.tokens'].length, n);
  assert.equal(metadata['tokenizer.ggml.tokens'].at(n - 1), String.fromCharCode(97 + ((n - 1) % 26)));
  assert.ok(heap.mallocInUse() <= before + 65536, 'the loaders heap keeps nothing of the header');
});

const EMBD = fx.files['llama-q8_0.gguf'].tensors['token_embd.weight'].offset;
const t32 = (name, ne, offset = 0) => [name, ne, 0, offset];
const file = (kvs, infos, dataBytes = 64) => {
  const w = new Writer().head(infos.length, kvs.length);
  for (const kv of kvs) kv(w);
  for (const [name, ne, type, offset] of infos) w.info(name, ne, type, offset);
  return w.pad().zeros(dataBytes).bytes();
};
const kvU32 = (k, v) => (w) => w.str(k).u32(4).u32(v);

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: hostile GGUF files are coded errors naming the key or tensor, without leaks`, async () => {
    const cases = [
      [new Uint8Array(3), 'magic', 'ERR_INVALID_ARGUMENT', /not a GGUF file/],
      [fs.readFileSync(path.join(ROOT, 'tests/fixtures/small.safetensors')), 'source', 'ERR_INVALID_ARGUMENT',
        /this is not a GGUF file: it looks like a .safetensors file/],
      [read('llama-q8_0.gguf').subarray(0, 3000), 'tokenizer.ggml.tokens', 'ERR_OUT_OF_RANGE', /array of 310 string values, more than the \d+ bytes left/],
      [read('llama-q8_0.gguf').subarray(0, 4200), 'tokenizer.ggml.tokens', 'ERR_OUT_OF_RANGE', /the value of key 'tokenizer.ggml.tokens' \(string \d+\)/],
      [read('llama-q8_0.gguf').subarray(0, EMBD + 100), 'token_embd.weight', 'ERR_OUT_OF_RANGE', /tensor 'token_embd.weight'.* (outside|past the end of) the \d+-byte file/],
      [new Writer().head(0, 0, 1).bytes(), 'version', 'ERR_INVALID_ARGUMENT', /version 1/],
      [new Writer().head(0, 0, 0x03000000).bytes(), 'version', 'ERR_INVALID_ARGUMENT', /big-endian/],
      [new Writer().head(2n ** 64n - 1n, 0).bytes(), 'tensorCount', 'ERR_OUT_OF_RANGE', /18446744073709551615 tensors/],
      [new Writer().head(0, 2n ** 63n).zeros(32).bytes(), 'metadataCount', 'ERR_OUT_OF_RANGE', /metadata pairs/],
      [new Writer().head(0, 1).str('k').u32(8).u64(2n ** 64n - 1n).bytes(), 'k', 'ERR_OUT_OF_RANGE', /past the end/],
      [new Writer().head(0, 1).str('k').u32(9).u32(4).u64(2n ** 62n).zeros(8).bytes(), 'k', 'ERR_OUT_OF_RANGE', /array of 4611686018427387904/],
      [new Writer().head(0, 1).str('k').u32(9).u32(9).u64(1).u32(0).u64(1).raw([0]).bytes(), 'k', 'ERR_INVALID_ARGUMENT', /array of arrays/],
      [new Writer().head(0, 2).str('a').u32(7).raw([1]).str('a').u32(7).raw([0]).bytes(), 'a', 'ERR_INVALID_ARGUMENT', /appears twice/],
      [file([kvU32('general.alignment', 24)], []), 'general.alignment', 'ERR_INVALID_ARGUMENT', /power of 2/],
      [file([], [['w', [256, 2], 14, 0]]), 'w', 'ERR_INVALID_ARGUMENT', /ggml type 14 \(Q6_K\); attnkit reads F32, F16, BF16, Q8_0, Q4_0, Q4_K/],
      [file([], [['w', [40], 8, 0]]), 'w', 'ERR_INVALID_ARGUMENT', /rows of 40 elements/],
      [file([], [['w', [2 ** 31, 2 ** 31, 4], 0, 0]]), 'w', 'ERR_OUT_OF_RANGE', /2\^60/],
      [file([], [t32('a', [8]), t32('a', [8], 32)]), 'a', 'ERR_INVALID_ARGUMENT', /tensor name 'a' appears twice/],
      [file([], [t32('a', [16]), t32('b', [8], 32)]), 'b', 'ERR_INVALID_ARGUMENT', /overlapping tensor 'a'/],
      [file([], [t32('a', [8]), t32('b', [8], 96)]), 'b', 'ERR_INVALID_ARGUMENT', /leaving 64 bytes unused/],
      [file([], [t32('a', [8], 8)]), 'a', 'ERR_INVALID_ARGUMENT', /not a multiple of the alignment/],
      [file([], [t32('big', [100000])]), 'big', 'ERR_OUT_OF_RANGE', /outside the/],
      [file([], [t32('a', [8])], 200), 'bytes', 'ERR_INVALID_ARGUMENT', /follow the last tensor's data/],
      [file([], [t32('x'.repeat(64), [8])]), 'tensors[0]', 'ERR_INVALID_ARGUMENT', /1 to 63 bytes/],
      [file([(w) => w.str([0x6b, 0xff]).u32(4).u32(1)], []), 'metadata[0]', 'ERR_INVALID_ARGUMENT', /not valid UTF-8/],
    ];
    const failAll = async () => {
      for (const [bytes, argument, code, message] of cases) {
        await assert.rejects(ak.loadGguf(bytes), (e) => {
          assert.ok(e instanceof AttnkitError, String(e));
          assert.equal(e.code, code, e.message);
          assert.equal(e.argument, argument, e.message);
          assert.match(e.message, message);
          return true;
        });
      }
    };
    await failAll();
    const heap = await loaders(ak);
    const before = heap.mallocInUse();
    await failAll();
    assert.equal(heap.mallocInUse(), before, 'the loaders heap is flat over repeated failures');
    // A GGUF file given to the safetensors reader is named.
    await assert.rejects(ak.loadSafetensors(read('all-types.gguf')), (e) => /looks like a GGUF file \(llama.cpp\); ak.loadGguf reads it/.test(e.message));
    // Bad sources are coded.
    for (const bad of [undefined, null, 'x.gguf', 12, {}, [1, 2]]) {
      await assert.rejects(ak.loadGguf(bad), (e) => e instanceof AttnkitError && e.code === 'ERR_INVALID_ARGUMENT');
    }
  });
}

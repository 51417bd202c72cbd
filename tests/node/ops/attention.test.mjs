// Masks, attention, ALiBi and RoPE from JavaScript on both builds: PyTorch's outputs (fixtures
// from tests/golden/gen_fixtures.py), shapes, the 16k-token memory bound, errors and leaks.
import test from 'node:test';
import assert from 'node:assert/strict';
import { AttnkitError, Tensor, invertMask, toAdditiveMask } from '../../../web/attnkit.js';
import fs from 'node:fs';
import path from 'node:path';
import { load } from '../../../web/attnkit.js';
import { ROOT, backends, fixture, assertClose } from '../helpers.mjs';

const fx = fixture('attention.json');
const rfx = fixture('rotary.json');
const [simd, scalar] = await backends();
const f32 = (a) => Float32Array.from(a);

function inputs(c) {
  const [B, H, Hkv, Lq, Lk, d, dv] = c.dims;
  const q = new Tensor('float32', f32(c.q), [B, H, Lq, d]);
  const k = new Tensor('float32', f32(c.k), [B, Hkv, Lk, d]);
  const v = new Tensor('float32', f32(c.v), [B, Hkv, Lk, dv]);
  const opts = { causal: c.causal, alibi: c.alibi };
  if (c.scale !== undefined) opts.scale = c.scale;
  if (c.mask) {
    opts.mask = c.mask.type === 'bool'
      ? new Tensor('bool', Uint8Array.from(c.mask.data), c.mask.dims)
      : new Tensor('float32', Float32Array.from(c.mask.data, (x) => (x === null ? -Infinity : x)), c.mask.dims);
  }
  return { q, k, v, opts };
}

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: attention matches PyTorch (GQA, masks, causal, ALiBi, dead rows)`, () => {
    assert.ok(fx.cases.length >= 12);
    for (const c of fx.cases) {
      const { q, k, v, opts } = inputs(c);
      const out = ak.attention(q, k, v, opts);
      assert.deepEqual(out.dims, [c.dims[0], c.dims[1], c.dims[3], c.dims[6]], c.name);
      assertClose(out.data, c.out, c.name);
      if (c.weights) {
        const r = ak.attention(q, k, v, { ...opts, returnWeights: true });
        assert.deepEqual(r.weights.dims, [c.dims[0], c.dims[1], c.dims[3], c.dims[4]]);
        assertClose(r.output.data, c.out, `${c.name} (with weights)`);
        assertClose(r.weights.data, c.weights, `${c.name} weights`, 1e-6, 1e-4);
        assert.ok(r.weights.data.every((x) => !Number.isNaN(x)));
      }
    }
  });

  test(`${ak.backend}: masks match PyTorch; combine, invert, additive`, () => {
    const p = fx.masks.padding;
    const pm = ak.paddingMask(p.ids, p.padId);
    assert.equal(pm.type, 'bool');
    assert.deepEqual(pm.dims, [2, 1, 1, 4]);
    assert.deepEqual([...pm.data], p.out);
    assert.deepEqual([...ak.paddingMaskFromAttentionMask([[1, 1, 0, 0], [1, 0, 1, 0]]).data], p.out);
    for (const c of fx.masks.causal) {
      const m = ak.causalMask(c.q, c.k);
      assert.deepEqual(m.dims, [c.q, c.k]);
      assert.deepEqual([...m.data], c.out, `causal ${c.q}x${c.k}`);
    }
    const both = ak.combineMasks(pm, ak.causalMask(4));
    assert.deepEqual(both.dims, [2, 1, 4, 4]);
    assert.equal(both.data[0 * 16 + 3 * 4 + 1], 1); // batch 0, query 3 sees key 1
    assert.equal(both.data[0 * 16 + 3 * 4 + 2], 0); // key 2 is padding
    assert.equal(both.data[1 * 16 + 1 * 4 + 2], 0); // causal
    const add = ak.combineMasks(toAdditiveMask(pm), ak.causalMask(4));
    assert.equal(add.type, 'float32');
    assert.deepEqual([...add.data].map((x) => (x === 0 ? 1 : 0)), [...both.data]);
    assert.deepEqual([...invertMask(invertMask(pm)).data], [...pm.data]);
    assert.deepEqual([...invertMask(pm).data], p.out.map((x) => 1 - x));
    // A boolean mask and its additive form give the same attention.
    const c = fx.cases.find((x) => x.name === 'pad-and-causal');
    const { q, k, v, opts } = inputs(c);
    const a = ak.attention(q, k, v, opts).data;
    const b = ak.attention(q, k, v, { ...opts, mask: toAdditiveMask(opts.mask) }).data;
    assert.deepEqual([...a], [...b]);
  });

  test(`${ak.backend}: ALiBi slopes and RoPE match Hugging Face`, () => {
    for (const [n, want] of Object.entries(fx.alibiSlopes)) {
      assertClose(ak.alibiSlopes(Number(n)).data, want, `${n} heads`, 0, 1e-6);
    }
    for (const c of rfx.cases) {
      const x = new Tensor('float32', f32(c.x), c.dims);
      const opts = { rotaryDim: c.rotaryDim, base: c.base, layout: c.layout };
      if (c.scaling.type) opts.scaling = c.scaling;
      const L = c.dims[2];
      if (c.perBatch) opts.positions = [c.positions.slice(0, L), c.positions.slice(L)];
      else opts.offset = c.positions[0];
      const out = ak.rotary(x, opts);
      assert.deepEqual(out.dims, c.dims);
      assertClose(out.data, c.out, c.name);
      const { positions, offset, ...config } = opts; // rotary's position options are not frequencies' options
      const fr = ak.rotaryFrequencies(c.dims[3], { ...config, seqLength: Math.max(...c.positions) + 1 });
      assertClose(fr.invFreq, c.invFreq, `${c.name} invFreq`, 0, 2e-6);
    }
    // yarn's default attention factor: 0.1 ln(s) + 1
    const y = ak.rotaryFrequencies(16, { scaling: { type: 'yarn', factor: 4, originalMaxPositions: 64 } });
    assert.ok(Math.abs(y.attentionFactor - (0.1 * Math.log(4) + 1)) < 1e-6);
  });

  test(`${ak.backend}: attention rejects bad input with named arguments and leaks nothing`, () => {
    const t = (dims, fill = 0.5) => new Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(fill), dims);
    const q = t([1, 4, 3, 8]);
    const k = t([1, 2, 5, 8]);
    const v = t([1, 2, 5, 8]);
    const cases = [
      [() => ak.attention(q, t([1, 3, 5, 8]), t([1, 3, 5, 8])), 'ERR_SHAPE_MISMATCH', 'k', /multiple of the key\/value head count \(3\)/],
      [() => ak.attention(q, t([1, 2, 5, 7]), v), 'ERR_SHAPE_MISMATCH', 'k.dims', /head dim must equal q's \(8\), got 7/],
      [() => ak.attention(q, k, t([1, 2, 4, 8])), 'ERR_SHAPE_MISMATCH', 'v.dims', /\[2, 5\], got \[2, 4\]/],
      [() => ak.attention(q, k, v, { mask: new Uint8Array(4) }), 'ERR_SHAPE_MISMATCH', 'mask.dims', /mask dim 3 is 4, expected 5/],
      [() => ak.attention(q, k, v, { mask: new Int32Array(5) }), 'ERR_INVALID_ARGUMENT', 'mask', /boolean mask/],
      [() => ak.attention(q, k, v, { mask: new Tensor('bool', new Uint8Array(10), [2, 1, 1, 5]) }), 'ERR_SHAPE_MISMATCH', 'mask.dims', /expected 1 or 1 \(batch\)/],
      [() => ak.attention(q, k, v, { alibi: new Float32Array(3) }), 'ERR_SHAPE_MISMATCH', 'alibi', /expected heads = 4/],
      [() => ak.attention(q, k, v, { scale: 'big' }), 'ERR_INVALID_ARGUMENT', 'scale', /number/],
      [() => ak.attention(q, k, v, { scale: Infinity }), 'ERR_INVALID_ARGUMENT', 'scale', /finite/],
      [() => ak.attention(q, k, v, { causal: 1 }), 'ERR_INVALID_ARGUMENT', 'causal', /true or false/],
      [() => ak.attention(new Float64Array(4), k, v), 'ERR_INVALID_ARGUMENT', 'q', /Float32Array/],
      [() => ak.attention(t([4, 3, 8, 1, 1]), k, v), 'ERR_SHAPE_MISMATCH', 'q.dims', /\[batch, heads, length, dim\]/],
      [() => ak.attention(t([1, 64, 2048, 1]), t([1, 64, 4096, 1]), t([1, 64, 4096, 1]), { returnWeights: true }), 'ERR_OUT_OF_RANGE', 'weights', /536870912 output elements/],
      [() => ak.paddingMask([1, 2], 1.5), 'ERR_INVALID_ARGUMENT', 'padId', /integer/],
      [() => ak.paddingMaskFromAttentionMask([1, 3]), 'ERR_INVALID_ARGUMENT', 'attentionMask[1]', /0 \(padding\) or 1/],
      [() => ak.causalMask(-1, 3), 'ERR_OUT_OF_RANGE', 'queryLength', /got -1/],
      [() => ak.combineMasks(ak.causalMask(3), ak.causalMask(4)), 'ERR_SHAPE_MISMATCH', 'b.dims', /do not broadcast/],
      [() => ak.rotary(t([1, 2, 3, 8]), { rotaryDim: 3 }), 'ERR_INVALID_ARGUMENT', 'rotaryDim', /even/],
      [() => ak.rotary(t([1, 2, 3, 8]), { positions: [0, 1] }), 'ERR_SHAPE_MISMATCH', 'positions', /expected length = 3/],
      [() => ak.rotary(t([1, 2, 3, 8]), { positions: [0, -1, 2] }), 'ERR_OUT_OF_RANGE', 'positions[1]', /got -1/],
      [() => ak.rotary(t([1, 2, 3, 8]), { layout: 'pairs' }), 'ERR_INVALID_ARGUMENT', 'layout', /'half', 'interleaved'/],
      [() => ak.rotary(t([1, 2, 3, 8]), { scaling: { type: 'yarn', factor: 2 } }), 'ERR_OUT_OF_RANGE', 'scaling.originalMaxPositions', /got 0/],
      [() => ak.rotary(t([1, 2, 3, 8]), { scaling: { type: 'linear', fator: 2 } }), 'ERR_INVALID_ARGUMENT', 'scaling.fator', /unknown option 'scaling.fator'; did you mean 'factor'\?/],
      [() => ak.alibiSlopes(0), 'ERR_OUT_OF_RANGE', 'numHeads', /\[1, 4096\]/],
    ];
    const failAll = () => {
      for (const [fn, code, argument, message] of cases) {
        try {
          fn();
          assert.fail(`no error for ${fn}`);
        } catch (e) {
          assert.ok(e instanceof AttnkitError, `${e}`);
          if (code) {
            assert.equal(e.code, code, e.message);
            assert.equal(e.argument, argument, e.message);
            assert.match(e.message, message);
          }
        }
      }
    };
    failAll(); // warm-up: the first calls may grow the heap
    const inUse = ak.mallocInUse();
    for (let i = 0; i < 300; i++) failAll();
    assert.equal(ak.mallocInUse(), inUse);
    // and the module still works
    const out = ak.attention(q, k, v, { causal: true });
    assert.ok(out.data.every((x) => Math.abs(x - 0.5) < 1e-6));
  });
}

test('attention over 12 heads x 16 384 tokens x 64, causal, stays inside a 512 MB heap', { timeout: 600000 }, async () => {
  const H = 12;
  const L = 16384;
  const d = 64;
  const n = H * L * d;
  const mk = (seed) => {
    const a = new Float32Array(n);
    let x = seed;
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      a[i] = (x / 4294967296 - 0.5) * 0.5;
    }
    return new Tensor('float32', a, [1, H, L, d]);
  };
  const q = mk(1);
  const k = mk(2);
  const v = mk(3);
  // A fresh instance (wasmBinary bypasses the shared one), so earlier tests' heap does not count.
  const ak = await load({ simd: true, wasmBinary: fs.readFileSync(path.join(ROOT, 'web/dist/attnkit-simd.wasm')) });
  const out = ak.attention(q, k, v, { causal: true });
  assert.ok(ak.heapSize() <= 512 * 1024 * 1024, `heap grew to ${ak.heapSize()} bytes`);
  // Spot check rows against a float64 evaluation in JS: the first query sees only key 0.
  for (const [h, i] of [[0, 0], [5, 777], [11, L - 1]]) {
    const qi = q.data.subarray((h * L + i) * d, (h * L + i + 1) * d);
    const s = new Float64Array(i + 1);
    let max = -Infinity;
    for (let j = 0; j <= i; j++) {
      let dot = 0;
      for (let e = 0; e < d; e++) dot += qi[e] * k.data[(h * L + j) * d + e];
      s[j] = dot / 8;
      max = Math.max(max, s[j]);
    }
    let sum = 0;
    for (let j = 0; j <= i; j++) sum += s[j] = Math.exp(s[j] - max);
    for (let e = 0; e < d; e++) {
      let want = 0;
      for (let j = 0; j <= i; j++) want += (s[j] / sum) * v.data[(h * L + j) * d + e];
      const got = out.data[(h * L + i) * d + e];
      assert.ok(Math.abs(got - want) < 1e-5, `h=${h} i=${i} e=${e}: ${got} vs ${want}`);
    }
  }
});

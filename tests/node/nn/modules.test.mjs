// linear and the MultiHeadAttention module from JavaScript on both builds: PyTorch's outputs
// (fixtures from tests/golden/gen_fixtures.py), the KV cache, errors, leaks and dispose().
import test from 'node:test';
import assert from 'node:assert/strict';
import { AttnkitError, Tensor, invertMask } from '../../../web/attnkit.js';
import { backends, fixture, assertClose } from '../helpers.mjs';

const fx = fixture('modules.json');
const [simd, scalar] = await backends();
const f32 = (a) => Float32Array.from(a);

// A module set up from a fixture case: config and state dict as PyTorch / HF name them.
function moduleFor(ak, c) {
  const m = new ak.MultiHeadAttention({ ...c.config, causal: c.causal ?? false });
  m.setWeights(Object.fromEntries(Object.entries(c.weights).map(([k, v]) => [k, f32(v)])));
  return m;
}

function forwardOptions(c) {
  const [B, Lq] = c.dims;
  const opts = { returnWeights: true };
  if (c.key) {
    opts.key = new Tensor('float32', f32(c.key), [B, c.kvLength, c.config.kdim]);
    opts.value = new Tensor('float32', f32(c.value), [B, c.kvLength, c.config.vdim]);
  }
  if (c.keyPaddingMask) opts.attentionMask = new Tensor('int32', Int32Array.from(c.keyPaddingMask), [B, c.dims[1]]);
  if (c.additiveMask) opts.mask = new Tensor('float32', f32(c.additiveMask), [Lq, c.kvLength]);
  return opts;
}

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: linear matches torch.nn.Linear and GPT-2's Conv1D`, () => {
    for (const c of fx.linear) {
      const x = new Tensor('float32', f32(c.x), [c.rows, c.in]);
      const y = ak.linear(x, new Tensor('float32', f32(c.weight), [c.out, c.in]), { bias: c.b && f32(c.b) });
      assert.deepEqual(y.dims, [c.rows, c.out]);
      assertClose(y.data, c.y, `linear ${c.rows}x${c.in}->${c.out}`, 1e-4);
      const z = ak.linear(x, new Tensor('float32', f32(c.conv1dWeight), [c.in, c.out]), {
        bias: c.conv1dBias && f32(c.conv1dBias), layout: 'inOut',
      });
      assertClose(z.data, c.conv1dY, `conv1d ${c.rows}x${c.in}->${c.out}`, 1e-4);
    }
  });

  test(`${ak.backend}: MultiHeadAttention matches nn.MultiheadAttention, LLaMA and BLOOM-style attention`, () => {
    for (const c of fx.mha) {
      const m = moduleFor(ak, c);
      const { output, weights } = m.forward(new Tensor('float32', f32(c.query), c.dims), forwardOptions(c));
      assert.deepEqual(output.dims, c.dims, c.name);
      assertClose(output.data, c.out, `${c.name} output`);
      assertClose(weights.data, c.attnWeights, `${c.name} weights`, 2e-6);
      if (c.keyPaddingMask) { // PyTorch's key_padding_mask (true = ignore), converted by invertMask
        const kpm = new Tensor('bool', Uint8Array.from(c.keyPaddingMask, (v) => 1 - v), [c.dims[0], c.dims[1]]);
        const again = m.forward(new Tensor('float32', f32(c.query), c.dims), { attentionMask: invertMask(kpm) });
        assertClose(again.data, c.out, `${c.name} via invertMask`);
      }
      m.dispose();
    }
  });

  test(`${ak.backend}: the KV cache decodes token by token to the rows of a full causal pass`, () => {
    for (const c of fx.mha.filter((x) => x.causal)) {
      const m = moduleFor(ak, c);
      const [B, L, D] = c.dims;
      const rows = (from, n) => {
        const out = new Float32Array(B * n * D);
        for (let b = 0; b < B; b++) out.set(c.query.slice((b * L + from) * D, (b * L + from + n) * D), b * n * D);
        return new Tensor('float32', out, [B, n, D]);
      };
      const got = new Float32Array(B * L * D);
      let done = 0;
      for (const n of [L - 3, 1, 1, 1]) {
        const { output, weights } = m.forward(rows(done, n), { useCache: true, returnWeights: true });
        assert.deepEqual(weights.dims, [B, c.config.numHeads, n, done + n]);
        for (let b = 0; b < B; b++) got.set(output.data.subarray(b * n * D, (b + 1) * n * D), (b * L + done) * D);
        done += n;
        assert.equal(m.cacheLength, done);
      }
      assertClose(got, c.out, `${c.name} decoded`);
      // another batch size is refused while the cache holds rows
      const other = new Tensor('float32', new Float32Array((B + 1) * D), [B + 1, 1, D]);
      assert.throws(() => m.forward(other, { useCache: true }), (e) => e.argument === 'batch' && /resetCache/.test(e.message));
      m.resetCache();
      assert.equal(m.cacheLength, 0);
      m.dispose();
    }
  });

  test(`${ak.backend}: activations match torch.nn.functional`, () => {
    const x = f32(fx.activations.x);
    for (const kind of ['relu', 'gelu', 'gelu_tanh', 'silu']) {
      assertClose(ak.activation(x, kind).data, fx.activations[kind], kind, 2e-6, 0);
    }
    assertClose(ak.activation(x, 'gelu_new').data, fx.activations.gelu_tanh, 'gelu_new');
  });

  test(`${ak.backend}: EncoderLayer matches nn.TransformerEncoderLayer (post, pre) and sandwich / RMSNorm layers`, () => {
    for (const c of fx.encoderLayers) {
      const layer = new ak.EncoderLayer({ ...c.config, causal: c.causal });
      layer.setWeights(Object.fromEntries(Object.entries(c.weights).map(([k, v]) => [k, f32(v)])));
      const opts = { returnWeights: true };
      if (c.attentionMask) opts.attentionMask = new Tensor('int32', Int32Array.from(c.attentionMask), c.dims.slice(0, 2));
      const { output, weights } = layer.forward(new Tensor('float32', f32(c.x), c.dims), opts);
      assertClose(output.data, c.out, c.name, 5e-5);
      assert.deepEqual(weights.dims, [c.dims[0], c.config.numHeads, c.dims[1], c.dims[1]]);
      // each weight row is a distribution over the keys
      for (let r = 0; r < weights.data.length / c.dims[1]; r++) {
        const sum = weights.data.subarray(r * c.dims[1], (r + 1) * c.dims[1]).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - 1) < 1e-5, `${c.name}: weights row ${r} sums to ${sum}`);
      }
      layer.dispose();
    }
    const layer = new ak.EncoderLayer({ dim: 8, numHeads: 2, ffnDim: 16, norm: 'rmsnorm' });
    assert.throws(() => layer.forward(new Float32Array(16)), (e) => e.argument === 'x.dims');
    assert.throws(() => layer.forward(new Tensor('float32', new Float32Array(16), [2, 8])),
      (e) => e.argument === 'linear1.weight' && /never set/.test(e.message));
    assert.throws(() => layer.setWeights({ 'norm1.bias': new Float32Array(8) }), (e) => /RMSNorm has no bias/.test(e.message));
    assert.throws(() => layer.setWeights({ 'norm3.weight': new Float32Array(8) }), (e) => /sandwich/.test(e.message));
    assert.throws(() => new ak.EncoderLayer({ dim: 8, numHeads: 2, ffnDim: 16, activation: 'swish' }),
      (e) => e.argument === 'activation');
    layer.dispose();
  });

  test(`${ak.backend}: DecoderLayer matches nn.TransformerDecoderLayer; its cache decodes step by step`, () => {
    for (const c of fx.decoderLayers) {
      const layer = new ak.DecoderLayer(c.config);
      layer.setWeights(Object.fromEntries(Object.entries(c.weights).map(([k, v]) => [k, f32(v)])));
      const x = new Tensor('float32', f32(c.x), c.dims);
      const memory = new Tensor('float32', f32(c.memory), c.memoryDims);
      const memoryAttentionMask = new Tensor('int32', Int32Array.from(c.memoryMask), c.memoryDims.slice(0, 2));
      const { output, selfWeights, crossWeights } = layer.forward(x, { memory, memoryAttentionMask, returnWeights: true });
      assertClose(output.data, c.out, c.name, 5e-5);
      const [B, L, D] = c.dims, Lm = c.memoryDims[1];
      assert.deepEqual(selfWeights.dims, [B, 2, L, L]);
      assert.deepEqual(crossWeights.dims, [B, 2, L, Lm]);
      assert.equal(selfWeights.data[1], 0); // causal: query 0 does not see key 1
      assert.equal(crossWeights.data[(1 * 2 * L) * Lm + Lm - 1], 0); // batch 1's padded memory
      // One token at a time through the cache gives the full pass's rows.
      const step = new ak.DecoderLayer(c.config);
      step.setWeights(Object.fromEntries(Object.entries(c.weights).map(([k, v]) => [k, f32(v)])));
      for (let t = 0; t < L; t++) {
        const xt = new Float32Array(B * D);
        for (let b = 0; b < B; b++) xt.set(x.data.subarray((b * L + t) * D, (b * L + t + 1) * D), b * D);
        const y = step.forward(new Tensor('float32', xt, [B, 1, D]), { memory, memoryAttentionMask, useCache: true });
        for (let b = 0; b < B; b++) assertClose(y.data.subarray(b * D, (b + 1) * D), c.out.slice((b * L + t) * D, (b * L + t + 1) * D), `${c.name} step ${t}`, 5e-5);
      }
      assert.equal(step.cacheLength, L);
      assert.throws(() => step.forward(x), (e) => e.argument === 'memory');
      assert.throws(() => step.forward(x, { memory: new Tensor('float32', new Float32Array(6 * D), [1, 6, D]), useCache: true }),
        (e) => e.argument === 'batch' || e.argument === 'key');
      layer.dispose();
      step.dispose();
    }
  });

  test(`${ak.backend}: MultiHeadAttention rejects bad input with named arguments and leaks nothing`, () => {
    const m = new ak.MultiHeadAttention({ dim: 8, numHeads: 4, numKvHeads: 2, positional: 'rotary' });
    const x = (L, F = 8) => new Tensor('float32', new Float32Array(L * F).fill(0.25), [1, L, F]);
    const cases = [
      [() => m.forward(x(3)), 'ERR_INVALID_ARGUMENT', 'qWeight', /never set/],
      [() => m.setWeights({ qWeight: new Float32Array(63) }), 'ERR_SHAPE_MISMATCH', 'qWeight', /has 63 elements, expected numHeads \* headDim \* dim = 64/],
      [() => m.setWeights({ inProjWeight: new Float32Array(128), qBias: new Float32Array(7) }), 'ERR_SHAPE_MISMATCH', 'qBias', /expected numHeads \* headDim = 8/],
      [() => m.setWeights({ wq: new Float32Array(64) }), 'ERR_INVALID_ARGUMENT', 'wq', /unknown weight 'wq'/],
      [() => new ak.MultiHeadAttention({ dim: 10, numHeads: 3 }), 'ERR_INVALID_ARGUMENT', 'dim', /divisible by numHeads/],
      [() => new ak.MultiHeadAttention({ dim: 8, numHeads: 4, numKvHeads: 3 }), 'ERR_INVALID_ARGUMENT', 'numKvHeads', /multiple/],
      [() => new ak.MultiHeadAttention({ dim: 8, numHeads: 2, positional: 'relative' }), 'ERR_INVALID_ARGUMENT', 'positional', /'none', 'rotary', 'alibi'/],
      [() => new ak.MultiHeadAttention({ dim: 8, numHeads: 2, positional: 'rotary', rotary: { rotaryDim: 3 } }), 'ERR_INVALID_ARGUMENT', 'rotaryDim', /even/],
      [() => ak.linear(x(2), new Float32Array(7)), 'ERR_SHAPE_MISMATCH', 'weight.dims', /8 input features/],
      [() => ak.linear(x(2), new Tensor('float32', new Float32Array(24), [3, 8]), { bias: new Float32Array(2) }), 'ERR_SHAPE_MISMATCH', 'bias', /expected outFeatures = 3/],
      [() => ak.linear(x(2), new Tensor('float32', new Float32Array(24), [3, 8]), { layout: 'inOut' }), 'ERR_SHAPE_MISMATCH', 'weight.dims', /in dim 0/],
    ];
    const weights = { inProjWeight: new Float32Array(128).fill(0.1), outWeight: new Float32Array(64).fill(0.1) };
    const afterWeights = [
      [() => m.forward(x(3, 7)), 'ERR_SHAPE_MISMATCH', 'query.dims', /8 features/],
      [() => m.forward(x(3), { positionIds: [0, 1] }), 'ERR_SHAPE_MISMATCH', 'positionIds', /expected length = 3/],
      [() => m.forward(x(3), { positionIds: [0, 1, -2] }), 'ERR_OUT_OF_RANGE', 'positionIds[2]', /got -2/],
      [() => m.forward(x(3), { key: x(2), value: x(2) }), 'ERR_INVALID_ARGUMENT', 'key', /self-attention/],
      [() => m.forward(x(3), { mask: new Uint8Array(4) }), 'ERR_SHAPE_MISMATCH', 'mask.dims', /expected 3/],
      [() => m.forward(x(3), { attentionMask: [1, 1, 2] }), 'ERR_INVALID_ARGUMENT', 'attentionMask[2]', /0 \(padding\) or 1/],
      [() => m.forward(x(3), { causal: 'yes' }), 'ERR_INVALID_ARGUMENT', 'causal', /true or false/],
    ];
    const failAll = (list) => {
      for (const [fn, code, argument, message] of list) {
        assert.throws(fn, (e) => {
          assert.ok(e instanceof AttnkitError, `${e}`);
          assert.equal(e.code, code, e.message);
          assert.equal(e.argument, argument, e.message);
          assert.match(e.message, message);
          return true;
        });
      }
    };
    failAll(cases);
    m.setWeights(weights);
    failAll(afterWeights);
    failAll(cases.slice(1)); // the last error message is kept, so end every round on the same one
    const inUse = ak.mallocInUse();
    for (let i = 0; i < 100; i++) {
      failAll(afterWeights);
      failAll(cases.slice(1));
    }
    assert.equal(ak.mallocInUse(), inUse);
    // it still works; and a disposed module says so
    assert.equal(m.forward(x(3), { causal: true }).dims.join(), '1,3,8');
    m.dispose();
    m.dispose();
    assert.throws(() => m.forward(x(3)), (e) => e.code === 'ERR_DISPOSED');
    // creating and disposing modules returns their memory
    const before = ak.mallocInUse();
    for (let i = 0; i < 20; i++) {
      const t = new ak.MultiHeadAttention({ dim: 64, numHeads: 4 });
      t.setWeights({ inProjWeight: new Float32Array(3 * 64 * 64), outWeight: new Float32Array(64 * 64) });
      t.forward(new Tensor('float32', new Float32Array(5 * 64), [5, 64]), { useCache: true });
      t.dispose();
    }
    assert.equal(ak.mallocInUse(), before);
  });
}

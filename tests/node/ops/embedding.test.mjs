import test from 'node:test';
import assert from 'node:assert/strict';
import { AttnkitError, Tensor } from '../../../web/attnkit.js';
import { backends, fixture, maxAbsDiff } from '../helpers.mjs';

const fx = fixture('embedding.json');
const [simd, scalar] = await backends();
const f32 = (a) => Float32Array.from(a);

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: embedding lookup matches torch.nn.Embedding exactly (scale, padding row)`, () => {
    for (const c of fx.lookups) {
      const scale = c.scale === 'sqrt' ? true : c.scale ?? 1;
      const t = ak.embedding(Int32Array.from(c.ids), { data: f32(c.table), dims: [c.vocab, c.dim] }, { scale });
      assert.deepEqual(t.dims, [c.ids.length, c.dim]);
      assert.equal(maxAbsDiff(t.data, c.out), 0);
    }
  });

  test(`${ak.backend}: ids of any shape give [..., dim]`, () => {
    const table = new Tensor('float32', f32([0, 0, 1, 1, 2, 2]), [3, 2]);
    const t = ak.embedding(new Tensor('int32', Int32Array.from([2, 1, 0, 2, 2, 1]), [2, 3]), table);
    assert.deepEqual(t.dims, [2, 3, 2]);
    assert.deepEqual(Array.from(t.data), [2, 2, 1, 1, 0, 0, 2, 2, 2, 2, 1, 1]);
  });

  test(`${ak.backend}: maxNorm renormalises the caller's table like PyTorch`, () => {
    for (const c of fx.renorms) {
      const table = f32(c.table);
      const normType = c.normType === 'Infinity' ? Infinity : c.normType;
      const t = ak.embedding(c.ids, { data: table, dims: [c.vocab, c.dim] }, { maxNorm: c.maxNorm, normType });
      assert.ok(maxAbsDiff(t.data, c.out) < 1e-6);
      assert.ok(maxAbsDiff(table, c.tableAfter) < 1e-6);
    }
  });

  test(`${ak.backend}: oneHot matches F.one_hot`, () => {
    for (const c of fx.oneHot) {
      const t = ak.oneHot(c.ids, c.depth);
      assert.deepEqual(t.dims, [c.ids.length, c.depth]);
      assert.deepEqual(Array.from(t.data), c.out);
    }
  });

  test(`${ak.backend}: layerNorm / rmsNorm match PyTorch (tol 2e-5 * (1 + |mean|))`, () => {
    for (const c of fx.norms) {
      const x = new Tensor('float32', f32(c.x), [c.rows, c.dim]);
      const mean = Math.abs(c.x.reduce((a, b) => a + b, 0) / c.x.length);
      const tol = 2e-5 * (1 + mean);
      const ln = ak.layerNorm(x, { gamma: f32(c.gamma), beta: f32(c.beta), eps: c.eps });
      assert.deepEqual(ln.dims, [c.rows, c.dim]);
      assert.ok(maxAbsDiff(ln.data, c.layerNorm) < tol, `dim ${c.dim}`);
      assert.ok(maxAbsDiff(ak.layerNorm(x, { eps: c.eps }).data, c.layerNormPlain) < tol);
      assert.ok(maxAbsDiff(ak.rmsNorm(x, { weight: f32(c.rmsWeight), eps: c.eps }).data, c.rmsNorm) < 2e-5);
    }
  });

  test(`${ak.backend}: position ids follow Hugging Face (arange, left padding, RoBERTa)`, () => {
    for (const c of fx.positionIds) {
      const opts = { pastLength: c.past };
      if (c.kind === 'mask') opts.attentionMask = c.mask;
      if (c.kind === 'ids') Object.assign(opts, { inputIds: c.ids, paddingIdx: c.paddingIdx });
      const t = ak.positionIds(c.batch, c.length, opts);
      assert.equal(t.type, 'int32');
      assert.deepEqual(Array.from(t.data), c.out, `${c.kind} past ${c.past}`);
    }
  });

  test(`${ak.backend}: bad input names the argument, writes nothing, leaks nothing`, () => {
    const table = { data: new Float32Array(12), dims: [4, 3] };
    const cases = [
      [() => ak.embedding([0, 3, 4, -1], table), 'ERR_OUT_OF_RANGE', 'ids[2]', /ids\[2\] must be in \[0, 4\), got 4/],
      [() => ak.embedding([0, -1], table), 'ERR_OUT_OF_RANGE', 'ids[1]', /got -1/],
      [() => ak.embedding([0, 1.5], table), 'ERR_INVALID_ARGUMENT', 'ids[1]', /int32 integer, got 1.5/],
      [() => ak.embedding(new Float64Array(2), table), 'ERR_INVALID_ARGUMENT', 'ids', /got Float64Array/],
      [() => ak.embedding([0], { data: new Float32Array(11), dims: [4, 3] }), 'ERR_SHAPE_MISMATCH', 'table.dims', /12 elements but table.data has 11/],
      [() => ak.embedding([0], new Float32Array(12)), 'ERR_SHAPE_MISMATCH', 'table.dims', /\[vocabSize, dim\], got \[12\]/],
      [() => ak.embedding([0], table, { maxNorm: -1 }), 'ERR_OUT_OF_RANGE', 'maxNorm', /got -1/],
      [() => ak.oneHot([5], 3), 'ERR_OUT_OF_RANGE', 'ids[0]', /\[0, 3\), got 5/],
      [() => ak.layerNorm({ data: new Float32Array(6), dims: [2, 3] }, { gamma: new Float32Array(2) }), 'ERR_SHAPE_MISMATCH', 'gamma', /2 elements, expected dim = 3/],
      [() => ak.layerNorm([1, 2]), 'ERR_INVALID_ARGUMENT', 'x', /Float32Array or a float32 Tensor/],
      [() => ak.rmsNorm(new Float32Array(3), { eps: -1 }), 'ERR_OUT_OF_RANGE', 'eps', /got -1/],
      [() => ak.positionIds(1, 2, { attentionMask: [1, 2] }), 'ERR_INVALID_ARGUMENT', 'attentionMask[1]', /0 or 1, got 2/],
      [() => ak.positionIds(2, 2, { attentionMask: [1, 1] }), 'ERR_SHAPE_MISMATCH', 'attentionMask', /expected batch \* \(pastLength \+ length\) = 4/],
    ];
    for (const [call, code, argument, re] of cases) {
      assert.throws(call, (e) => e instanceof AttnkitError && e.code === code && e.argument === argument && re.test(e.message), `${argument}`);
    }
    const out = new Float32Array(9).fill(7);
    assert.throws(() => ak.embedding([0, 1, 9], table, { out }));
    assert.ok(out.every((v) => v === 7), 'out untouched after a failure');
    assert.throws(() => ak.embedding([0, 1, 9999], table));
    const before = ak.mallocInUse();
    for (let i = 0; i < 10000; i++) assert.throws(() => ak.embedding([0, 1, 1000 + (i % 9000)], table));
    assert.equal(ak.mallocInUse(), before);
  });
}

test('SIMD and scalar builds agree on LayerNorm over awkward sizes', () => {
  for (const dim of [1, 3, 4, 5, 7, 17, 63, 65, 771]) {
    const x = new Float32Array(3 * dim).map((_, i) => Math.sin(i * 0.37) * 3 + 50);
    const a = simd.layerNorm({ data: x, dims: [3, dim] }).data;
    const b = scalar.layerNorm({ data: x, dims: [3, dim] }).data;
    assert.ok(maxAbsDiff(a, b) < 1e-4, `dim ${dim}`);
  }
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { AttnkitError, Tensor } from '../../../web/attnkit.js';
import { backends, fixture, maxAbsDiff, AWKWARD } from '../helpers.mjs';

const fx = fixture('positional.json');
const [simd, scalar] = await backends();

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: sinusoidal table matches PyTorch (tol 2e-6 + p * 1.2e-7)`, () => {
    for (const c of fx.cases) {
      const t = ak.sinusoidalPositionalEncoding(c.length, c.dim, { base: c.base, layout: c.layout, offset: c.offset });
      assert.ok(t instanceof Tensor);
      assert.equal(t.type, 'float32');
      assert.deepEqual(t.dims, [c.length, c.dim]);
      assert.ok(t.data instanceof Float32Array);
      const tol = 2e-6 + (c.offset + c.length) * 1.2e-7;
      const err = maxAbsDiff(t.data, c.data);
      assert.ok(err < tol, `${c.layout} ${c.length}x${c.dim}@${c.offset}: error ${err} >= ${tol}`);
    }
  });

  test(`${ak.backend}: defaults are base 10000, interleaved, offset 0`, () => {
    const t = ak.sinusoidalPositionalEncoding(3, 4);
    const p = 2, w1 = Math.exp(2 * -(Math.log(10000) / 4));
    assert.ok(Math.abs(t.data[2 * 4 + 0] - Math.sin(p)) < 1e-6);
    assert.ok(Math.abs(t.data[2 * 4 + 1] - Math.cos(p)) < 1e-6);
    assert.ok(Math.abs(t.data[2 * 4 + 2] - Math.sin(p * w1)) < 1e-6);
    assert.ok(Math.abs(t.data[2 * 4 + 3] - Math.cos(p * w1)) < 1e-6);
    assert.equal(ak.sinusoidalPositionalEncoding(0, 4).data.length, 0);
  });

  test(`${ak.backend}: offset gives the rows of the longer table`, () => {
    const full = ak.sinusoidalPositionalEncoding(40, 10, { layout: 'split' });
    const part = ak.sinusoidalPositionalEncoding(7, 10, { layout: 'split', offset: 33 });
    assert.deepEqual(part.data, full.data.slice(33 * 10));
  });

  test(`${ak.backend}: bad arguments throw AttnkitError naming argument and value`, () => {
    const bad = [
      [[4, 7], 'ERR_INVALID_ARGUMENT', 'dim', /dim must be even.*got 7/],
      [[-1, 8], 'ERR_OUT_OF_RANGE', 'length', /length must be in \[0, 65536\], got -1/],
      [[2.5, 8], 'ERR_INVALID_ARGUMENT', 'length', /length must be an integer, got 2.5/],
      [[NaN, 8], 'ERR_INVALID_ARGUMENT', 'length', /got nan/i],
      [[4, 8, { base: 0 }], 'ERR_OUT_OF_RANGE', 'base', /base must be a finite number >= 1, got 0/],
      [[4, 8, { offset: 65533 }], 'ERR_OUT_OF_RANGE', 'offset', /65533 \+ 4/],
      [[4, 8, { offset: 1.5 }], 'ERR_INVALID_ARGUMENT', 'offset', /integer, got 1.5/],
      [[1e9, 8], 'ERR_OUT_OF_RANGE', 'length', /got 1000000000/],
      [[60000, 60000], 'ERR_OUT_OF_RANGE', 'length * dim', /3600000000 output elements/],
      [['4', 8], 'ERR_INVALID_ARGUMENT', 'length', /length must be a number, got string "4"/],
      [[4, 8n], 'ERR_INVALID_ARGUMENT', 'dim', /dim must be a number, got bigint 8n/],
      [[4, 8, { layout: 'sideways' }], 'ERR_INVALID_ARGUMENT', 'layout', /'interleaved', 'split', got "sideways"/],
    ];
    for (const [args, code, argument, re] of bad) {
      assert.throws(
        () => ak.sinusoidalPositionalEncoding(...args),
        (e) => e instanceof AttnkitError && e instanceof Error && e.code === code && e.argument === argument && re.test(e.message),
        `args ${JSON.stringify(args, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
      );
    }
  });

  test(`${ak.backend}: keeps working and leaks nothing over 10 000 failing calls`, () => {
    const good = ak.sinusoidalPositionalEncoding(5, 8).data;
    ak.sinusoidalPositionalEncoding(1000, 512); // let the heap reach its working size first
    // Odd five-digit dims: every failure keeps a last-error message of the same length.
    assert.throws(() => ak.sinusoidalPositionalEncoding(4, 10001));
    const before = ak.mallocInUse();
    for (let i = 0; i < 10000; i++) {
      assert.throws(() => ak.sinusoidalPositionalEncoding(4, 10001 + 2 * (i % 4000)));
      if (i % 1000 === 0) ak.sinusoidalPositionalEncoding(17, 34, { offset: i });
    }
    assert.equal(ak.mallocInUse(), before);
    assert.deepEqual(ak.sinusoidalPositionalEncoding(5, 8).data, good);
  });
}

test('SIMD and scalar builds agree on awkward sizes', () => {
  for (const half of AWKWARD) {
    for (const length of [1, 5, 17]) {
      for (const layout of ['interleaved', 'split']) {
        const a = simd.sinusoidalPositionalEncoding(length, 2 * half, { layout, offset: 1234 });
        const b = scalar.sinusoidalPositionalEncoding(length, 2 * half, { layout, offset: 1234 });
        assert.ok(maxAbsDiff(a.data, b.data) < 3e-7, `${layout} ${length}x${2 * half}`);
      }
    }
  }
});

test('out: fills the given array; a wrong one is rejected and left untouched', () => {
  for (const ak of [simd, scalar]) {
    const out = new Float32Array(12);
    const t = ak.sinusoidalPositionalEncoding(3, 4, { out });
    assert.equal(t.data, out);
    assert.deepEqual(out, ak.sinusoidalPositionalEncoding(3, 4).data);
    const wrong = new Float32Array(10).fill(7);
    assert.throws(() => ak.sinusoidalPositionalEncoding(3, 4, { out: wrong }),
      (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === 'out' && /length 12, got 10/.test(e.message));
    assert.ok(wrong.every((v) => v === 7));
    assert.throws(() => ak.sinusoidalPositionalEncoding(3, 4, { out: new Float64Array(12) }),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && /out must be a Float32Array, got Float64Array/.test(e.message));
    const before = ak.mallocInUse();
    assert.throws(() => ak.sinusoidalPositionalEncoding(3, 4, { out: wrong }));
    assert.equal(ak.mallocInUse(), before);
  }
});

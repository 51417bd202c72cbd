// The special-values matrix (tests/fixtures/special_values.json, written by real PyTorch through
// tests/golden/gen_fixtures.py special_values): NaN, +-inf, +-3e38, subnormals, finfo.min masks
// and zero eps through attention, the activations, the norms and linear, on both builds. NaN must
// be NaN where torch has NaN, infinities must match, finite values must be close.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Tensor } from '../../../web/attnkit.js';
import { backends, fixture } from '../helpers.mjs';

const F = fixture('special_values.json');
const floats = (list) => Float32Array.from(list, (x) => (x === 'nan' ? NaN : x === 'inf' ? Infinity : x === '-inf' ? -Infinity : x));

// The first index where got and want differ in kind (NaN, +-inf) or, both finite, by more than
// the tolerance; -1 when they agree.
function firstMismatch(got, want, atol = 1e-5, rtol = 1e-4) {
  for (let i = 0; i < want.length; i++) {
    const a = got[i], b = want[i];
    if (Number.isNaN(b) || Number.isNaN(a)) {
      if (Number.isNaN(a) !== Number.isNaN(b)) return i;
    } else if (!Number.isFinite(b) || !Number.isFinite(a)) {
      if (a !== b) return i;
    } else if (!(Math.abs(a - b) <= atol + rtol * Math.abs(b))) {
      return i;
    }
  }
  return -1;
}

function assertSame(got, want, what, atol, rtol) {
  const i = firstMismatch(got, want, atol, rtol);
  assert.equal(i, -1, `${what}: [${i}] = ${got[i]}, PyTorch ${want[i]}`);
}

for (const ak of await backends()) {
  test(`${ak.backend}: attention's special values are PyTorch's`, () => {
    for (const c of F.attention) {
      const [q, k, v] = [c.q, c.k, c.v].map((x) => new Tensor('float32', floats(x), c.dims));
      const L = c.dims[2];
      const mask = c.mask ? new Tensor('float32', floats(c.mask), [L, L]) : undefined;
      const r = ak.attention(q, k, v, { mask, causal: c.causal, returnWeights: true });
      assertSame(r.output.data, floats(c.out), `${c.name}: output`);
      assertSame(r.weights.data, floats(c.weights), `${c.name}: weights`);
    }
  });

  test(`${ak.backend}: activations keep NaN and the infinities as PyTorch does`, () => {
    const x = floats(F.activations.x);
    for (const c of F.activations.cases) {
      // GELU/SiLU of subnormals: torch keeps 5e-41 where attnkit's polynomials flush to zero,
      // within the absolute tolerance.
      assertSame(ak.activation(x, c.kind).data, floats(c.out), c.kind, 1e-6, 1e-5);
    }
  });

  test(`${ak.backend}: LayerNorm and RMSNorm at the float32 extremes and with eps 0 are PyTorch's`, () => {
    for (const c of F.norms) {
      const x = new Tensor('float32', floats(c.x), c.dims);
      const got = c.kind === 'layerNorm' ? ak.layerNorm(x, { eps: c.eps }) : ak.rmsNorm(x, { eps: c.eps });
      assertSame(got.data, floats(c.out), `${c.kind} eps ${c.eps}`);
    }
  });

  test(`${ak.backend}: linear propagates NaN and the infinities as PyTorch does`, () => {
    for (const c of F.linear) {
      const [rows, inp, out] = c.dims;
      const y = ak.linear(new Tensor('float32', floats(c.x), [rows, inp]), new Tensor('float32', floats(c.w), [out, inp]));
      assertSame(y.data, floats(c.out), `linear ${JSON.stringify(c.dims)}`);
    }
  });
}

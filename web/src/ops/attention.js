// Scaled dot-product attention and ALiBi slopes (C++ contract: src/attnkit/ops/attention.hpp).
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { boolean, describe, finite, floatInput, num, options as checkOptions } from '../runtime/args.js';
import { maskInput } from './masks.js';

// q/k/v: float32 tensors [B, H, L, d] (or [H, L, d], read as batch 1).
function headsInput(fn, name, x) {
  const t = floatInput(fn, name, x);
  if (t.dims.length !== 4 && t.dims.length !== 3) {
    throw new AttnkitError(`${fn}: ${name} must have dims [batch, heads, length, dim] or [heads, length, dim], ` +
      `got ${JSON.stringify(t.dims)}`, { code: 'ERR_SHAPE_MISMATCH', argument: `${name}.dims` });
  }
  return { data: t.data, dims: t.dims.length === 3 ? [1, ...t.dims] : t.dims, rank: t.dims.length };
}

/**
 * softmax(q k^T * scale + alibi + mask) v per head; see attnkit.d.ts for the full contract.
 * Returns the output Tensor [B, H, Lq, dv], or {output, weights} with returnWeights.
 */
export function attention(ak, q, k, v, options) {
  const fn = 'attention';
  const { mask, causal = false, scale, alibi, returnWeights = false } =
    checkOptions(fn, options, ['mask', 'causal', 'scale', 'alibi', 'returnWeights']);
  const Q = headsInput(fn, 'q', q);
  const K = headsInput(fn, 'k', k);
  const V = headsInput(fn, 'v', v);
  const [B, H, Lq, d] = Q.dims;
  const [Bk, Hkv, Lk, dk] = K.dims;
  const [Bv, Hv, Lv, dv] = V.dims;
  const mismatch = (argument, what) => {
    throw new AttnkitError(`${fn}: ${what}`, { code: 'ERR_SHAPE_MISMATCH', argument });
  };
  if (Bk !== B || Bv !== B) mismatch('k.dims', `q, k and v must have the same batch, got ${B}, ${Bk} and ${Bv}`);
  if (dk !== d) mismatch('k.dims', `k's head dim must equal q's (${d}), got ${dk}`);
  if (Hv !== Hkv || Lv !== Lk) {
    mismatch('v.dims', `v must have k's heads and length [${Hkv}, ${Lk}], got [${Hv}, ${Lv}]`);
  }
  boolean(fn, 'causal', causal);
  boolean(fn, 'returnWeights', returnWeights);
  const s = scale === undefined ? NaN : finite(fn, 'scale', scale);
  const m = mask === undefined || mask === null ? null : maskInput(fn, 'mask', mask);
  let alibiKind = 0;
  let slopes = null;
  if (alibi === true) alibiKind = 1;
  else if (alibi instanceof Float32Array) {
    alibiKind = 2;
    slopes = alibi;
  } else if (alibi !== undefined && alibi !== false) {
    throw new AttnkitError(`${fn}: alibi must be true (the paper's slopes) or a Float32Array of ${H} slopes, ` +
      `got ${describe(alibi)}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'alibi' });
  }
  const dims = new Float64Array([B, H, Hkv, Lq, Lk, d, dv]);
  const lengths = new Float64Array([Q.data.length, K.data.length, V.data.length]);
  const maskDims = new Float64Array(m ? m.dims4 : [1, 1, 1, 1]);
  const tail = [m?.kind ?? 0, 0, m?.data.length ?? 0, 0, s, causal, alibiKind, 0, slopes?.length ?? 0, !!returnWeights];
  // Sizes first, so that an oversize request fails before megabytes are copied into the heap.
  ak._withInputs([dims, lengths, maskDims], ([pd, pl, pmd]) => {
    tail[3] = pmd;
    ak._raw(fn, '_attention', [0, 0, 0, pd, pl, ...tail, true]);
  });
  const [output, weights] = ak._withInputs(
    [Q.data, K.data, V.data, dims, lengths, m?.data, maskDims, slopes],
    ([pq, pk, pv, pd, pl, pm, pmd, pa]) => ak._callWithWeights(fn, '_attention', [pq, pk, pv, pd, pl,
      m?.kind ?? 0, pm, m?.data.length ?? 0, pmd, s, causal, alibiKind, pa, slopes?.length ?? 0, !!returnWeights, false]),
  );
  const lead = Q.rank === 3 ? [] : [B];
  const out = new Tensor('float32', output, [...lead, H, Lq, dv]);
  if (!returnWeights) return out;
  return { output: out, weights: new Tensor('float32', weights ?? new Float32Array(0), [...lead, H, Lq, Lk]) };
}

/** ALiBi head slopes (the paper's rule, also for head counts that are not powers of two). */
export function alibiSlopes(ak, numHeads) {
  const fn = 'alibiSlopes';
  const n = num(fn, 'numHeads', numHeads);
  return new Tensor('float32', ak._call(fn, '_alibiSlopes', [n]), [n]);
}

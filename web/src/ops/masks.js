// Attention masks. Convention: a boolean mask (a 'bool' Tensor of Uint8Array 0/1) holds 1 where
// a query MAY attend to a key, as PyTorch's scaled_dot_product_attention and Hugging Face's
// attention_mask. Additive masks are float32 with 0 (attend) and -Infinity (do not). Masks
// broadcast like PyTorch to [batch, heads, queryLength, keyLength].
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { attached, checkDims, describe, idsInput, num } from '../runtime/args.js';

const BOOLEAN = 1;
const ADDITIVE = 2;

// A mask argument: a Tensor (or {data, dims}) of Uint8Array (boolean) or Float32Array
// (additive), or a bare Uint8Array / Float32Array (dims [length]). Returns {kind, data, dims4}.
export function maskInput(fn, name, m) {
  let data;
  let dims;
  if (m instanceof Uint8Array || m instanceof Float32Array) {
    data = m;
    dims = [m.length];
  } else if (m && typeof m === 'object' && (m.data instanceof Uint8Array || m.data instanceof Float32Array)) {
    checkDims(fn, name, m.dims, m.data.length);
    data = m.data;
    dims = [...m.dims];
  } else {
    const got = m && typeof m === 'object' && 'data' in m ? `a tensor of ${describe(m.data)}` : describe(m);
    throw new AttnkitError(
      `${fn}: ${name} must be a boolean mask (Uint8Array 0/1, 1 = may attend) or an additive float32 mask ` +
        `(Float32Array, 0 / -Infinity), as a Tensor or a bare array; got ${got}` +
        (m?.data instanceof Int32Array ? ' (for an int32 attentionMask use paddingMaskFromAttentionMask)' : ''),
      { code: 'ERR_INVALID_ARGUMENT', argument: name },
    );
  }
  attached(fn, name, data);
  if (dims.length < 1 || dims.length > 4) {
    throw new AttnkitError(`${fn}: ${name} must have 1 to 4 dims, got ${JSON.stringify(dims)}`, {
      code: 'ERR_SHAPE_MISMATCH',
      argument: `${name}.dims`,
    });
  }
  const dims4 = [1, 1, 1, 1].slice(dims.length).concat(dims);
  return { kind: data instanceof Uint8Array ? BOOLEAN : ADDITIVE, data, dims4 };
}

/** ids != padId as a boolean mask [batch, 1, 1, length] (ids [length] count as batch 1). */
export function paddingMask(ak, ids, padId) {
  const fn = 'paddingMask';
  const i = idsInput(fn, 'ids', ids);
  const p = num(fn, 'padId', padId);
  const dims = maskDims(fn, 'ids', i.dims);
  const data = ak._withInputs([i.data], ([pi]) =>
    ak._call(fn, '_paddingMask', [0, pi, i.data.length, p], undefined, Uint8Array));
  return new Tensor('bool', data, dims);
}

/** A Hugging Face attention_mask (1 = token, 0 = padding) as a boolean mask [batch, 1, 1, length]. */
export function paddingMaskFromAttentionMask(ak, attentionMask) {
  const fn = 'paddingMaskFromAttentionMask';
  const i = idsInput(fn, 'attentionMask', attentionMask);
  const dims = maskDims(fn, 'attentionMask', i.dims);
  const data = ak._withInputs([i.data], ([pi]) =>
    ak._call(fn, '_paddingMask', [1, pi, i.data.length, 0], undefined, Uint8Array));
  return new Tensor('bool', data, dims);
}

// [length] -> [1, 1, 1, length]; [batch, length] -> [batch, 1, 1, length]. Ids of any other rank
// have no padding-mask shape that matches their data.
function maskDims(fn, name, dims) {
  if (dims.length !== 1 && dims.length !== 2) {
    throw new AttnkitError(`${fn}: ${name} must have dims [length] or [batch, length], got ${JSON.stringify(dims)}`, {
      code: 'ERR_SHAPE_MISMATCH', argument: `${name}.dims`,
    });
  }
  return dims.length === 1 ? [1, 1, 1, dims[0]] : [dims[0], 1, 1, dims[1]];
}

/**
 * Causal mask [queryLength, keyLength], aligned to the bottom right: query i sees keys
 * j <= (keyLength - queryLength) + i, i.e. the cached keys and the new ones up to itself.
 */
export function causalMask(ak, queryLength, keyLength = queryLength) {
  const fn = 'causalMask';
  const q = num(fn, 'queryLength', queryLength);
  const k = num(fn, 'keyLength', keyLength);
  const data = ak._call(fn, '_causalMask', [q, k], undefined, Uint8Array);
  return new Tensor('bool', data, [q, k]);
}

/**
 * Where both masks allow attention: AND of two boolean masks (a 'bool' Tensor), or the sum of
 * additive forms when either is float32. Broadcasts to 4-D like PyTorch: the classic
 * "padding + tril" mask is combineMasks(paddingMask(ids, 0), causalMask(L)) -> [B, 1, L, L].
 */
export function combineMasks(ak, a, b) {
  const fn = 'combineMasks';
  const x = maskInput(fn, 'a', a);
  const y = maskInput(fn, 'b', b);
  const dims = x.dims4.map((d, k) => Math.max(d, y.dims4[k]));
  const both = x.kind === BOOLEAN && y.kind === BOOLEAN;
  const data = ak._withInputs([x.data, y.data], ([pa, pb]) =>
    ak._call(fn, '_combineMasks',
      [x.kind, pa, x.data.length, ...x.dims4, y.kind, pb, y.data.length, ...y.dims4],
      undefined, both ? Uint8Array : Float32Array));
  return new Tensor(both ? 'bool' : 'float32', data, dims);
}

/**
 * Converts between this library's boolean convention (1 = may attend) and the masked_fill one
 * of many tutorials (true = hide: scores.masked_fill(mask, -inf), nn.MultiheadAttention's
 * key_padding_mask). The conversion is its own inverse.
 */
export function invertMask(mask) {
  const m = maskInput('invertMask', 'mask', mask);
  if (m.kind !== BOOLEAN) {
    throw new AttnkitError('invertMask: mask must be boolean (Uint8Array); additive masks have no inverse', {
      code: 'ERR_INVALID_ARGUMENT',
      argument: 'mask',
    });
  }
  const out = new Uint8Array(m.data.length);
  for (let i = 0; i < out.length; i++) out[i] = m.data[i] ? 0 : 1;
  return new Tensor('bool', out, mask.dims ? [...mask.dims] : [out.length]);
}

/** A boolean mask as an additive float32 one: 1 -> 0, 0 -> -Infinity. */
export function toAdditiveMask(mask) {
  const m = maskInput('toAdditiveMask', 'mask', mask);
  if (m.kind === ADDITIVE) return new Tensor('float32', m.data.slice(), mask.dims ? [...mask.dims] : [m.data.length]);
  const out = new Float32Array(m.data.length);
  for (let i = 0; i < out.length; i++) out[i] = m.data[i] ? 0 : -Infinity;
  return new Tensor('float32', out, mask.dims ? [...mask.dims] : [out.length]);
}

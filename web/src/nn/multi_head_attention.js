// The MultiHeadAttention module (C++: src/attnkit/nn/multi_head_attention.hpp): projections, RoPE or
// ALiBi, grouped-query attention and a KV cache, with weights held in wasm memory by a handle.
import { AttnkitError } from '../runtime/errors.js';
import { HandleModule } from './handle_module.js';
import { Tensor } from '../runtime/tensor.js';
import { boolean, finite, floatInput, idsInput, num, oneOf, optionalNumber, options as checkOptions } from '../runtime/args.js';
import { combineMasks, maskInput, paddingMaskFromAttentionMask } from '../ops/masks.js';
import { rotaryFields } from '../ops/rotary.js';
import { ENUMS, WEIGHTS as BOUNDARY_WEIGHTS, writeMultiHeadAttentionConfig } from '../runtime/boundary.generated.js';

// Weight names (index = the C++ MhaWeight), with the PyTorch and Hugging Face spellings accepted
// by setWeights so that a state dict can be passed as it is.
export const WEIGHTS = BOUNDARY_WEIGHTS.MultiHeadAttention;
export const ALIASES = {
  in_proj_weight: 'inProjWeight', in_proj_bias: 'inProjBias',
  q_proj_weight: 'qWeight', k_proj_weight: 'kWeight', v_proj_weight: 'vWeight',
  'out_proj.weight': 'outWeight', 'out_proj.bias': 'outBias',
  'q_proj.weight': 'qWeight', 'k_proj.weight': 'kWeight', 'v_proj.weight': 'vWeight', 'o_proj.weight': 'outWeight',
  'q_proj.bias': 'qBias', 'k_proj.bias': 'kBias', 'v_proj.bias': 'vBias', 'o_proj.bias': 'outBias',
};

// [B, L, features] or [L, features] (batch 1).
export function sequenceInput(fn, name, x, features) {
  const t = floatInput(fn, name, x);
  if (t.dims.length !== 2 && t.dims.length !== 3) {
    throw new AttnkitError(`${fn}: ${name} must have dims [batch, length, ${features}] or [length, ${features}], ` +
      `got ${JSON.stringify(t.dims)}`, { code: 'ERR_SHAPE_MISMATCH', argument: `${name}.dims` });
  }
  const [B, L, F] = t.dims.length === 3 ? t.dims : [1, ...t.dims];
  if (F !== features) {
    throw new AttnkitError(`${fn}: ${name} must have ${features} features in its last dim, got ${F}`, {
      code: 'ERR_SHAPE_MISMATCH', argument: `${name}.dims`,
    });
  }
  return { data: t.data, B, L, rank: t.dims.length };
}

/** MultiHeadAttention's options (EncoderLayer and DecoderLayer add their own). */
export const ATTENTION_OPTIONS = ['dim', 'numHeads', 'numKvHeads', 'headDim', 'kdim', 'vdim', 'bias', 'outBias',
  'positional', 'rotary', 'scale', 'causal', 'weightLayout', 'qkNorm', 'qkNormEps', 'softcap'];

/**
 * The MultiHeadAttentionConfig fields (bindings/boundary.json) and the config object the module
 * reports. Shared with EncoderLayer. The caller has checked the option keys.
 */
export function attentionConfig(fn, {
  dim, numHeads, numKvHeads = 0, headDim = 0, kdim = 0, vdim = 0, bias = true, outBias = bias,
  positional = 'none', rotary = {}, scale, causal = false, weightLayout = 'outIn', qkNorm = false, qkNormEps = 1e-6,
  softcap = 0,
} = {}) {
  const heads = num(fn, 'numHeads', numHeads);
  const d = num(fn, 'dim', dim);
  const givenHeadDim = optionalNumber(fn, 'headDim', headDim, 0);
  const hd = givenHeadDim || d / heads;
  // Checked in this order (the first bad option is the one reported).
  const fields = {
    dim: d, numHeads: heads, numKvHeads: optionalNumber(fn, 'numKvHeads', numKvHeads, 0), headDim: givenHeadDim,
    kdim: optionalNumber(fn, 'kdim', kdim, 0), vdim: optionalNumber(fn, 'vdim', vdim, 0),
    bias: boolean(fn, 'bias', bias), outBias: boolean(fn, 'outBias', outBias),
    positional: ENUMS.PositionalBias[oneOf(fn, 'positional', positional, ENUMS.PositionalBias)],
    scale: scale === undefined ? NaN : finite(fn, 'scale', scale),
    rotary: rotaryFields(fn, Number.isInteger(hd) ? hd : 0, rotary),
    weightLayout: ENUMS.WeightLayout[oneOf(fn, 'weightLayout', weightLayout, ENUMS.WeightLayout)],
    qkNorm: boolean(fn, 'qkNorm', qkNorm), qkNormEps: finite(fn, 'qkNormEps', qkNormEps), softcap: finite(fn, 'softcap', softcap),
  };
  const config = {
    dim: d, numHeads: heads, numKvHeads: numKvHeads || heads, headDim: hd, kdim: kdim || d, vdim: vdim || d,
    bias, outBias, positional, causal: boolean(fn, 'causal', causal), weightLayout, qkNorm,
  };
  return { fields, config };
}

/** A weight matrix's dims in the config's layout: [out, in] ('outIn'), [in, out] ('inOut'). */
export const matrixDims = (c, out, inp) => (c.weightLayout === 'inOut' ? [inp, out] : [out, inp]);

/**
 * Dims of the attention weights for a config (`prefix` + name), in its weight layout: [out, in]
 * for 'outIn' (nn.Linear), [in, out] for 'inOut' (GPT-2's Conv1D). Each dim is [size, what sets
 * it] (the option names, which error messages show).
 */
export function attentionShapes(c, prefix = '') {
  const hd = c.headDim, H = [c.numHeads * hd, 'numHeads * headDim'], G = [c.numKvHeads * hd, 'numKvHeads * headDim'];
  const D = [c.dim, 'dim'];
  const w = (out, inp) => matrixDims(c, out, inp);
  const shapes = {
    qWeight: w(H, D), kWeight: w(G, [c.kdim, 'kdim']), vWeight: w(G, [c.vdim, 'vdim']),
    inProjWeight: w([H[0] + 2 * G[0], '(numHeads + 2 numKvHeads) * headDim'], D),
    outWeight: w(D, H), qBias: [H], kBias: [G], vBias: [G], inProjBias: [[H[0] + 2 * G[0], '(numHeads + 2 numKvHeads) * headDim']],
    outBias: [D], qNorm: [[hd, 'headDim']], kNorm: [[hd, 'headDim']],
  };
  return Object.fromEntries(Object.entries(shapes).map(([k, v]) => [prefix + k, v]));
}

/**
 * A forward call's mask (mask and/or Hugging Face attentionMask, combined) and RoPE positions, as
 * the raw functions take them.
 */
export function attentionInputs(ak, fn, { mask, attentionMask, positionIds }) {
  let m = null;
  if (mask !== undefined && mask !== null) m = maskInput(fn, 'mask', mask);
  if (attentionMask !== undefined && attentionMask !== null) {
    // int32 / arrays: Hugging Face's 1 / 0; a boolean mask [batch, keyLength] (e.g. invertMask of
    // PyTorch's key_padding_mask) is taken as it is.
    const isBool = attentionMask instanceof Uint8Array || attentionMask?.data instanceof Uint8Array;
    let pad;
    if (isBool) {
      const b = maskInput(fn, 'attentionMask', attentionMask);
      if (b.dims4[0] !== 1 || b.dims4[1] !== 1) {
        throw new AttnkitError(`${fn}: attentionMask must have dims [batch, keyLength] or [keyLength], got ` +
          `${JSON.stringify(attentionMask.dims ?? [attentionMask.length])}`, { code: 'ERR_SHAPE_MISMATCH', argument: 'attentionMask.dims' });
      }
      pad = { data: b.data, dims: [b.dims4[2], 1, 1, b.dims4[3]] };
    } else {
      pad = paddingMaskFromAttentionMask(ak, attentionMask);
    }
    m = maskInput(fn, 'attentionMask', m ? combineMasks(ak, { data: m.data, dims: m.dims4 }, pad) : pad);
  }
  const positions = positionIds === undefined ? null : idsInput(fn, 'positionIds', positionIds).data;
  return { m, positions, maskDims: new Float64Array(m ? m.dims4 : [1, 1, 1, 1]) };
}

// The output Tensor, or {output, weights} with the per-head weights [B, H, L, keyLength].
export function attentionResult(output, weights, dims, B, heads, L) {
  const out = new Tensor('float32', output, dims);
  if (!weights) return out;
  const lk = weights.length / (B * heads * L || 1);
  return { output: out, weights: new Tensor('float32', weights, [B, heads, L, lk]) };
}

export class MultiHeadAttention extends HandleModule {
  constructor(ak, options) {
    super();
    const fn = 'MultiHeadAttention';
    const { fields, config } = attentionConfig(fn, checkOptions(fn, options, ATTENTION_OPTIONS));
    this.config = config;
    const handle = ak._withInputs([writeMultiHeadAttentionConfig(fields)], ([pc]) => ak._raw(fn, '_mhaCreate', [pc])[0]);
    this._adopt(ak, handle, 'MultiHeadAttention', { free: '_mhaFree', weight: '_mhaWeight' }, WEIGHTS, ALIASES);
  }

  _shapes() {
    return attentionShapes(this.config);
  }

  /**
   * query [batch, L, dim] (or [L, dim]) -> output [batch, L, dim] (or [L, dim]); with
   * returnWeights, {output, weights} with weights [batch, heads, L, keyLength].
   * Options: key/value for cross-attention ([batch, Lk, kdim] / [batch, Lk, vdim]); mask (boolean,
   * 1 = may attend, or additive; broadcast to [batch, heads, L, keyLength]); attentionMask
   * ([batch, keyLength] of 1 = token / 0 = padding, Hugging Face's); causal; positionIds ([L] or
   * [batch, L], rotary only; default: cacheLength + 0..L-1); useCache.
   */
  forward(query, options) {
    const fn = 'forward';
    this._live(fn);
    const {
      key, value, mask, attentionMask, causal = this.config.causal, positionIds, useCache = false,
      returnWeights = false,
    } = checkOptions(fn, options, ['key', 'value', 'mask', 'attentionMask', 'causal', 'positionIds', 'useCache',
      'returnWeights']);
    const Q = sequenceInput(fn, 'query', query, this.config.dim);
    const K = key === undefined ? null : sequenceInput(fn, 'key', key, this.config.kdim);
    const V = value === undefined ? null : sequenceInput(fn, 'value', value, this.config.vdim);
    if (K && V && K.L !== V.L) {
      throw new AttnkitError(`${fn}: key and value must have the same length, got ${K.L} and ${V.L}`, {
        code: 'ERR_SHAPE_MISMATCH', argument: 'value.dims',
      });
    }
    const { m, positions: pos, maskDims } = attentionInputs(this._ak, fn, { mask, attentionMask, positionIds });
    const sizes = new Float64Array([Q.data.length, Q.B, Q.L, K?.data.length ?? 0, V?.data.length ?? 0,
      K?.L ?? V?.L ?? 0]);
    const flags = [boolean(fn, 'causal', causal), boolean(fn, 'useCache', useCache), boolean(fn, 'returnWeights', returnWeights)];
    const [output, weights] = this._ak._withInputs(
      [Q.data, K?.data, V?.data, sizes, m?.data, maskDims, pos],
      ([pq, pk, pv, ps, pm, pmd, pp]) => this._ak._callWithWeights(fn, '_mhaForward', [this._handle, pq, pk, pv, ps, m?.kind ?? 0, pm, m?.data.length ?? 0, pmd, pp,
        pos?.length ?? 0, ...flags]),
    );
    return attentionResult(output, weights, Q.rank === 3 ? [Q.B, Q.L, this.config.dim] : [Q.L, this.config.dim],
      Q.B, this.config.numHeads, Q.L);
  }

  /** Keys (and values) held by the KV cache per sequence. */
  get cacheLength() {
    this._live('cacheLength');
    return this._ak._m._mhaCacheLength(this._handle);
  }

  /** Empties the KV cache (a new sequence, or a new batch size). */
  resetCache() {
    this._live('resetCache');
    this._ak._m._mhaResetCache(this._handle);
    return this;
  }
}

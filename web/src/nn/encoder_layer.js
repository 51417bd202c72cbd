// The EncoderLayer module (C++: src/attnkit/nn/encoder_layer.hpp): self-attention and a feed-forward
// block with residuals and post / pre / sandwich normalisation.
import { HandleModule } from './handle_module.js';
import { boolean, num, oneOf, optionalNumber, options as checkOptions } from '../runtime/args.js';
import { ENUMS, WEIGHTS, writeEncoderLayerConfig } from '../runtime/boundary.generated.js';
import {
  ALIASES as ATTENTION_ALIASES, ATTENTION_OPTIONS, WEIGHTS as ATTENTION_WEIGHTS, attentionConfig, attentionInputs,
  attentionResult, attentionShapes, matrixDims, sequenceInput,
} from './multi_head_attention.js';

/** EncoderLayer's options: the attention's and the layer's own. */
export const LAYER_OPTIONS = [...ATTENTION_OPTIONS, 'ffnDim', 'activation', 'normPlacement', 'norm', 'eps', 'ffnBias',
  'ffnGated', 'parallel', 'attnNorm'];

export const FFN_WEIGHTS = WEIGHTS.FeedForward;
// Hugging Face's LLaMA MLP names for the gated feed-forward.
export const FFN_ALIASES = {
  'mlp.up_proj.weight': 'linear1.weight', 'mlp.gate_proj.weight': 'gate.weight', 'mlp.down_proj.weight': 'linear2.weight',
  'mlp.up_proj.bias': 'linear1.bias', 'mlp.gate_proj.bias': 'gate.bias', 'mlp.down_proj.bias': 'linear2.bias',
};
// torch.nn.TransformerEncoderLayer's state dict names its attention self_attn.*.
export function prefixed(prefix) {
  return Object.fromEntries([
    ...Object.entries(ATTENTION_ALIASES).map(([k, v]) => [`${prefix}.${k}`, v]),
    ...ATTENTION_WEIGHTS.map((k) => [`${prefix}.${k}`, k]),
  ]);
}

// The LayerSettings fields (bindings/boundary.json) and the layer's part of the config it reports.
export function layerSettings(fn, options) {
  const {
    ffnDim, activation = 'gelu', normPlacement = 'post', norm = 'layernorm', eps = 1e-5, ffnBias = true,
    ffnGated = false, parallel = false, attnNorm = true,
  } = options;
  const act = activation === 'gelu_new' ? 'gelu_tanh' : activation;
  const fields = {
    ffnDim: num(fn, 'ffnDim', ffnDim),
    activation: ENUMS.Activation[oneOf(fn, 'activation', act, ENUMS.Activation)],
    normPlacement: ENUMS.NormPlacement[oneOf(fn, 'normPlacement', normPlacement, ENUMS.NormPlacement)],
    norm: ENUMS.NormKind[oneOf(fn, 'norm', norm, ENUMS.NormKind)],
    eps: optionalNumber(fn, 'eps', eps, 1e-5),
    ffnBias: boolean(fn, 'ffnBias', ffnBias),
    ffnGated: boolean(fn, 'ffnGated', ffnGated),
    parallel: boolean(fn, 'parallel', parallel),
    attnNorm: boolean(fn, 'attnNorm', attnNorm),
  };
  return { fields, config: { ffnDim, activation: act, normPlacement, norm, eps, ffnBias, ffnGated, parallel, attnNorm } };
}

/** Dims of the norms' (norm1 .. normN) and the feed-forward's weights for a layer config. */
export function layerShapes(c, norms) {
  const w = (out, inp) => matrixDims(c, out, inp);
  const F = [c.ffnDim, 'ffnDim'], D = [c.dim, 'dim'];
  const shapes = {
    'linear1.weight': w(F, D), 'linear1.bias': [F], 'gate.weight': w(F, D), 'gate.bias': [F],
    'linear2.weight': w(D, F), 'linear2.bias': [D],
  };
  for (let i = 1; i <= norms; i++) shapes[`norm${i}.weight`] = shapes[`norm${i}.bias`] = [D];
  return shapes;
}

export class EncoderLayer extends HandleModule {
  /**
   * options: the MultiHeadAttention options (dim, numHeads, numKvHeads, headDim, bias, outBias,
   * positional, rotary, scale, causal, weightLayout 'outIn' | 'inOut') plus ffnDim, activation
   * ('gelu' = erf, 'gelu_tanh' = HF gelu_new, 'relu', 'silu'), ffnGated (LLaMA's MLP),
   * normPlacement ('post' BERT, 'pre' GPT-2, 'sandwich'), norm ('layernorm' | 'rmsnorm'), eps
   * (1e-5), ffnBias (true).
   */
  constructor(ak, options) {
    super();
    const fn = 'EncoderLayer';
    options = checkOptions(fn, options, LAYER_OPTIONS);
    const a = attentionConfig(fn, options);
    const l = layerSettings(fn, options);
    this.config = { ...a.config, ...l.config };
    const wire = writeEncoderLayerConfig({ attention: a.fields, layer: l.fields });
    const handle = ak._withInputs([wire], ([pc]) => ak._raw(fn, '_layerCreate', [pc])[0]);
    this._adopt(ak, handle, 'EncoderLayer', { free: '_layerFree', weight: '_layerWeight' }, WEIGHTS.EncoderLayer,
      { ...prefixed('self_attn'), ...FFN_ALIASES });
  }

  _shapes() {
    return { ...attentionShapes(this.config), ...layerShapes(this.config, 4) };
  }

  /**
   * x [batch, L, dim] (or [L, dim]) -> the same shape; with returnWeights {output, weights} with
   * the attention weights [batch, heads, L, cacheLength + L]. Options: mask, attentionMask, causal,
   * positionIds, useCache as in MultiHeadAttention.forward.
   */
  forward(x, options) {
    const fn = 'forward';
    this._live(fn);
    const { mask, attentionMask, causal = this.config.causal, positionIds, useCache = false, returnWeights = false } =
      checkOptions(fn, options, ['mask', 'attentionMask', 'causal', 'positionIds', 'useCache', 'returnWeights']);
    const X = sequenceInput(fn, 'x', x, this.config.dim);
    const { m, positions, maskDims } = attentionInputs(this._ak, fn, { mask, attentionMask, positionIds });
    const sizes = new Float64Array([X.data.length, X.B, X.L]);
    const flags = [boolean(fn, 'causal', causal), boolean(fn, 'useCache', useCache), boolean(fn, 'returnWeights', returnWeights)];
    const [output, weights] = this._ak._withInputs([X.data, sizes, m?.data, maskDims, positions],
      ([px, ps, pm, pmd, pp]) => this._ak._callWithWeights(fn, '_layerForward', [this._handle, px, ps, m?.kind ?? 0,
        pm, m?.data.length ?? 0, pmd, pp, positions?.length ?? 0, ...flags]));
    return attentionResult(output, weights, X.rank === 3 ? [X.B, X.L, this.config.dim] : [X.L, this.config.dim],
      X.B, this.config.numHeads, X.L);
  }

  /** Keys held by the self-attention's KV cache per sequence. */
  get cacheLength() {
    this._live('cacheLength');
    return this._ak._m._layerCache(this._handle, 0, 0);
  }

  /** Bytes the KV cache's storage holds (kept across resetCache, freed by dispose). */
  get cacheBytes() {
    this._live('cacheBytes');
    return this._ak._m._layerCache(this._handle, 4, 0);
  }

  resetCache() {
    this._live('resetCache');
    this._ak._m._layerCache(this._handle, 1, 0);
    return this;
  }

  // For Model: undo a failed step, and bound the cache by the context size.
  _truncateCache(length) {
    this._ak._m._layerCache(this._handle, 2, length);
  }

  _limitCache(positions) {
    this._ak._m._layerCache(this._handle, 3, positions);
  }

  // For Model's saveCache / loadCache: the cached keys and values, [batch, kvHeads, length,
  // headDim] each, and back (the C++ side checks the sizes against the layer's shape).
  _readCache(fn) {
    const m = this._ak._m;
    return {
      batch: m._layerCache(this._handle, 5, 0), length: m._layerCache(this._handle, 0, 0),
      key: this._ak._call(fn, '_layerCacheRead', [this._handle, 0]),
      value: this._ak._call(fn, '_layerCacheRead', [this._handle, 1]),
    };
  }

  _writeCache(fn, batch, length, key, value) {
    const sizes = new Float64Array([batch, length, key.length, value.length]);
    this._ak._withInputs([key, value, sizes], ([pk, pv, ps]) => this._ak._raw(fn, '_layerCacheWrite', [this._handle, pk, pv, ps]));
  }
}

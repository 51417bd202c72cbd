// The DecoderLayer module (C++: src/attnkit/nn/decoder_layer.hpp): masked self-attention,
// cross-attention over an encoder's output (memory) and a feed-forward block, with residuals and
// post / pre / sandwich normalisation (torch.nn.TransformerDecoderLayer).
import { AttnkitError } from '../runtime/errors.js';
import { HandleModule } from './handle_module.js';
import { boolean, options as checkOptions } from '../runtime/args.js';
import { Tensor } from '../runtime/tensor.js';
import {
  ALIASES as ATTENTION_ALIASES, WEIGHTS as ATTENTION_WEIGHTS, attentionConfig, attentionInputs, attentionShapes,
  sequenceInput,
} from './multi_head_attention.js';
import { FFN_ALIASES, LAYER_OPTIONS, layerSettings, layerShapes, prefixed } from './encoder_layer.js';
import { WEIGHTS, writeDecoderLayerConfig } from '../runtime/boundary.generated.js';

// torch.nn.TransformerDecoderLayer names: self_attn.*, multihead_attn.*.
const ALIASES = {
  ...prefixed('self_attn'),
  ...Object.fromEntries([
    ...Object.entries(ATTENTION_ALIASES).map(([k, v]) => [`multihead_attn.${k}`, `cross.${v}`]),
    ...ATTENTION_WEIGHTS.map((k) => [`multihead_attn.${k}`, `cross.${k}`]),
  ]),
  ...FFN_ALIASES,
};

export class DecoderLayer extends HandleModule {
  /**
   * options: the EncoderLayer options (the self-attention's and the layer's: dim, numHeads,
   * positional, causal (default true), ffnDim, activation, normPlacement, norm, ...), plus
   * crossAttention: {numHeads, numKvHeads, headDim, kdim, vdim, bias, outBias} (defaults: the
   * self-attention's heads and bias, kdim = vdim = dim) for the attention over the memory.
   */
  constructor(ak, options) {
    super();
    const fn = 'DecoderLayer';
    options = checkOptions(fn, options, [...LAYER_OPTIONS, 'crossAttention']);
    const { causal = true } = options;
    const crossAttention = checkOptions(fn, options.crossAttention, ['numHeads', 'numKvHeads', 'headDim', 'kdim', 'vdim',
      'bias', 'outBias', 'weightLayout', 'scale'], 'crossAttention');
    const self = attentionConfig(fn, { ...options, causal });
    const cross = attentionConfig(fn, {
      numHeads: options.numHeads, bias: options.bias, weightLayout: options.weightLayout, ...crossAttention,
      dim: options.dim, positional: 'none',
    });
    const l = layerSettings(fn, options);
    this.config = { ...self.config, ...l.config, crossAttention: cross.config };
    const wire = writeDecoderLayerConfig({ selfAttention: self.fields, crossAttention: cross.fields, layer: l.fields });
    const handle = ak._withInputs([wire], ([pc]) => ak._raw(fn, '_decoderCreate', [pc])[0]);
    this._adopt(ak, handle, 'DecoderLayer', { free: '_decoderFree', weight: '_decoderWeight' }, WEIGHTS.DecoderLayer, ALIASES);
  }

  _shapes() {
    return { ...attentionShapes(this.config), ...attentionShapes(this.config.crossAttention, 'cross.'),
      ...layerShapes(this.config, 6) };
  }

  /**
   * x [batch, L, dim] (or [L, dim]) and options.memory [batch, Lm, kdim] -> the shape of x; with
   * returnWeights {output, selfWeights [batch, heads, L, cached + L], crossWeights
   * [batch, crossHeads, L, Lm]}. Options: mask / attentionMask / causal / positionIds / useCache
   * for the self-attention (as MultiHeadAttention.forward), memoryMask / memoryAttentionMask
   * (Hugging Face's encoder_attention_mask, 1 = token) for the cross-attention.
   */
  forward(x, options) {
    const fn = 'forward';
    this._live(fn);
    const {
      memory, mask, attentionMask, memoryMask, memoryAttentionMask, causal = this.config.causal, positionIds,
      useCache = false, returnWeights = false,
    } = checkOptions(fn, options, ['memory', 'mask', 'attentionMask', 'memoryMask', 'memoryAttentionMask', 'causal',
      'positionIds', 'useCache', 'returnWeights']);
    const X = sequenceInput(fn, 'x', x, this.config.dim);
    if (memory === undefined) {
      throw new AttnkitError(`${fn}: a decoder layer needs memory (the encoder's output [batch, length, ${this.config.crossAttention.kdim}])`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'memory' });
    }
    const M = sequenceInput(fn, 'memory', memory, this.config.crossAttention.kdim);
    const self = attentionInputs(this._ak, fn, { mask, attentionMask, positionIds });
    const cross = attentionInputs(this._ak, fn, { mask: memoryMask, attentionMask: memoryAttentionMask });
    const sizes = new Float64Array([X.data.length, X.B, X.L, M.data.length, M.L]);
    const flags = [boolean(fn, 'causal', causal), boolean(fn, 'useCache', useCache), boolean(fn, 'returnWeights', returnWeights)];
    const sm = self.m, cm = cross.m, pos = self.positions;
    const [output, weights] = this._ak._withInputs(
      [X.data, sizes, sm?.data, self.maskDims, pos, M.data, cm?.data, cross.maskDims],
      ([px, ps, psm, psd, pp, pmem, pcm, pcd]) => this._ak._callWithWeights(fn, '_decoderForward', [this._handle, px,
        ps, sm?.kind ?? 0, psm, sm?.data.length ?? 0, psd, pp, pos?.length ?? 0, pmem, cm?.kind ?? 0, pcm,
        cm?.data.length ?? 0, pcd, ...flags]));
    const out = new Tensor('float32', output, X.rank === 3 ? [X.B, X.L, this.config.dim] : [X.L, this.config.dim]);
    if (!weights) return out;
    const H = this.config.numHeads, Hc = this.config.crossAttention.numHeads;
    const nCross = X.B * Hc * X.L * M.L;
    const nSelf = weights.length - nCross;
    return {
      output: out,
      selfWeights: new Tensor('float32', weights.subarray(0, nSelf), [X.B, H, X.L, nSelf / (X.B * H * X.L || 1)]),
      crossWeights: new Tensor('float32', weights.subarray(nSelf), [X.B, Hc, X.L, M.L]),
    };
  }

  /** Keys held by the self-attention's KV cache per sequence. */
  get cacheLength() {
    this._live('cacheLength');
    return this._ak._m._decoderCacheLength(this._handle);
  }

  resetCache() {
    this._live('resetCache');
    this._ak._m._decoderResetCache(this._handle);
    return this;
  }
}

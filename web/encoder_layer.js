// The EncoderLayer module (C++: src/attnkit/encoder_layer.hpp): self-attention and a feed-forward
// block with residuals and post / pre / sandwich normalisation.
import { HandleModule } from './handle_module.js';
import { boolean, num, oneOf, optionalNumber } from './args.js';
import {
  ALIASES as ATTENTION_ALIASES, WEIGHTS as ATTENTION_WEIGHTS, attentionConfig, attentionInputs, attentionResult,
  sequenceInput,
} from './multi_head_attention.js';

// Index = the C++ weight number: the attention's 0..9, then the layer's 10..21.
const WEIGHTS = [...ATTENTION_WEIGHTS, 'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias', 'norm3.weight',
  'norm3.bias', 'norm4.weight', 'norm4.bias', 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias'];
// torch.nn.TransformerEncoderLayer's state dict names its attention self_attn.*.
const ALIASES = Object.fromEntries([
  ...Object.entries(ATTENTION_ALIASES).map(([k, v]) => [`self_attn.${k}`, v]),
  ...ATTENTION_WEIGHTS.map((k) => [`self_attn.${k}`, k]),
]);

export class EncoderLayer extends HandleModule {
  /**
   * options: the MultiHeadAttention options (dim, numHeads, numKvHeads, bias, positional, rotary,
   * scale, causal) plus ffnDim, activation ('gelu' = erf, 'gelu_tanh' = HF gelu_new, 'relu'),
   * normPlacement ('post' BERT, 'pre' GPT-2, 'sandwich'), norm ('layernorm' | 'rmsnorm'), eps
   * (1e-5), ffnBias (true).
   */
  constructor(ak, options = {}) {
    super();
    const fn = 'EncoderLayer';
    const {
      ffnDim, activation = 'gelu', normPlacement = 'post', norm = 'layernorm', eps = 1e-5, ffnBias = true,
    } = options;
    const { vector, config } = attentionConfig(fn, options);
    const act = activation === 'gelu_new' ? 'gelu_tanh' : activation;
    vector.push(num(fn, 'ffnDim', ffnDim), oneOf(fn, 'activation', act, ['relu', 'gelu', 'gelu_tanh']),
      oneOf(fn, 'normPlacement', normPlacement, ['post', 'pre', 'sandwich']),
      oneOf(fn, 'norm', norm, ['none', 'layernorm', 'rmsnorm']), optionalNumber(fn, 'eps', eps, 1e-5),
      boolean(fn, 'ffnBias', ffnBias) ? 1 : 0);
    this.config = { ...config, ffnDim, activation: act, normPlacement, norm, eps, ffnBias };
    const handle = ak._withInputs([new Float64Array(vector)], ([pc]) => ak._raw(fn, '_layerCreate', [pc])[0]);
    this._adopt(ak, handle, 'EncoderLayer', { free: '_layerFree', weight: '_layerWeight' }, WEIGHTS, ALIASES);
  }

  /**
   * x [batch, L, dim] (or [L, dim]) -> the same shape; with returnWeights {output, weights} with
   * the attention weights [batch, heads, L, L]. Options: mask, attentionMask, causal, positionIds
   * as in MultiHeadAttention.forward.
   */
  forward(x, options = {}) {
    const fn = 'forward';
    this._live(fn);
    const { mask, attentionMask, causal = this.config.causal, positionIds, returnWeights = false } = options;
    const X = sequenceInput(fn, 'x', x, this.config.dim);
    const { m, positions, maskDims } = attentionInputs(this._ak, fn, { mask, attentionMask, positionIds });
    const sizes = new Float64Array([X.data.length, X.B, X.L]);
    const flags = [boolean(fn, 'causal', causal), boolean(fn, 'returnWeights', returnWeights)];
    const [output, weights] = this._ak._withInputs([X.data, sizes, m?.data, maskDims, positions],
      ([px, ps, pm, pmd, pp]) => this._ak._callWithWeights(fn, '_layerForward', [this._handle, px, ps, m?.kind ?? 0,
        pm, m?.data.length ?? 0, pmd, pp, positions?.length ?? 0, ...flags]));
    return attentionResult(output, weights, X.rank === 3 ? [X.B, X.L, this.config.dim] : [X.L, this.config.dim],
      X.B, this.config.numHeads, X.L);
  }
}

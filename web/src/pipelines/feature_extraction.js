// feature-extraction: hidden states, or one embedding per text (pooled over the attention mask,
// the first token or the last real token), optionally L2-normalised and binary-quantized as
// sentence-transformers' quantize_embeddings does (transformers.js's `quantize`, `precision`).
import { Tensor } from '../runtime/tensor.js';
import { bad, boolean, encodeBatch, oneOfOption, textsInput } from './common.js';

export const featureExtraction = {
  options: ['pooling', 'normalize', 'quantize', 'precision'],
  defaults: { pooling: 'none', normalize: false, quantize: false, precision: 'binary' },
  check(fn, o) {
    oneOfOption(fn, 'pooling', o.pooling, ['none', 'mean', 'cls', 'last']);
    boolean(fn, 'normalize', o.normalize);
    boolean(fn, 'quantize', o.quantize);
    oneOfOption(fn, 'precision', o.precision, ['binary', 'ubinary']);
  },
  create: () => {},
  /** texts -> a Tensor: [batch, L, dim] (pooling 'none') or [batch, dim]; a string is a batch of one. */
  run(ctx, fn, o, texts) {
    const { texts: list } = textsInput(fn, 'texts', texts);
    if (o.quantize && o.pooling === 'none') {
      throw bad(fn, 'quantize', "quantize packs one embedding per text: pass pooling ('mean', 'cls' or 'last')");
    }
    const enc = encodeBatch(ctx, list);
    let out;
    if (o.pooling === 'none') {
      out = ctx.model.forward(enc).lastHiddenState;
      if (o.normalize) normalizeRows(out.data, out.dims.at(-1));
    } else {
      out = ctx.model.forward(enc, { pooling: o.pooling, normalize: o.normalize }).pooled;
    }
    return o.quantize ? quantize(fn, out, o.precision) : out;
  },
};

// x / max(||x||, 1e-12) for each row of `dim` values (torch.nn.functional.normalize), in place.
function normalizeRows(data, dim) {
  for (let at = 0; at < data.length; at += dim) {
    let s = 0;
    for (let i = at; i < at + dim; i++) s += data[i] * data[i];
    const n = Math.max(Math.sqrt(s), 1e-12);
    for (let i = at; i < at + dim; i++) data[i] /= n;
  }
}

// sentence-transformers' binary quantization: one bit per value (> 0), packed 8 to a byte, first
// value in the high bit (numpy.packbits); 'binary' is int8 (the byte - 128), 'ubinary' uint8.
function quantize(fn, t, precision) {
  const [B, D] = t.dims;
  if (D % 8 !== 0) throw bad(fn, 'quantize', `quantize packs 8 values to a byte: the embedding size ${D} is not a multiple of 8`, 'ERR_SHAPE_MISMATCH');
  const signed = precision === 'binary';
  const out = signed ? new Int8Array(B * D / 8) : new Uint8Array(B * D / 8);
  for (let k = 0; k < out.length; k++) {
    let byte = 0;
    for (let b = 0; b < 8; b++) byte = (byte << 1) | (t.data[8 * k + b] > 0 ? 1 : 0);
    out[k] = signed ? byte - 128 : byte;
  }
  return new Tensor(signed ? 'int8' : 'uint8', out, [B, D / 8]);
}

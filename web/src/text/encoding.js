// An encoding's fields built on first read from its hidden state (Tokenizer._finish): each getter
// replaces itself with the value, which stays an own, enumerable, writable property.
import { Tensor } from '../runtime/tensor.js';

export const ENCODING_STATE = Symbol('attnkit.encoding');
const perRow = (s, make) => {
  const out = s.rows.map((r, b) => make(r, b, s));
  return s.batched ? out : out[0];
};
const ENCODING_FIELDS = {
  // Positions count the tokens only, as generation does (cumsum(mask) - 1, left pads at 1).
  positionIds(s) {
    const { B, L, left, rows } = s;
    const positions = new Int32Array(B * L);
    for (let b = 0; b < B; b++) {
      const first = left ? L - rows[b].ids.length : 0;
      for (let i = 0; i < L; i++) positions[b * L + i] = left ? (i < first ? 1 : i - first) : i;
    }
    return new Tensor('int32', positions, s.dims);
  },
  // 1 where the template added a token (or padding filled one), 0 for the text's own tokens:
  // transformers' special_tokens_mask.
  specialTokensMask(s) {
    const { B, L, left, rows } = s;
    const mask = new Int32Array(B * L).fill(1);
    for (let b = 0; b < B; b++) {
      const r = rows[b], first = left ? L - r.ids.length : 0;
      for (let k = 0; k < r.ids.length; k++) if (r.spans[2 * k] >= 0) mask[b * L + first + k] = 0;
    }
    return new Tensor('int32', mask, s.dims);
  },
  tokens: (s) => perRow(s, (r, b) => Array.from(s.ids.subarray(b * s.L, (b + 1) * s.L), (id) => s.vocab[id])),
  offsets: (s) => perRow(s, (r) => {
    const { L } = s;
    const out = new Array(L);
    const first = s.left ? L - r.ids.length : 0;
    for (let i = 0; i < L; i++) {
      const k = i - first;
      out[i] = k >= 0 && k < r.ids.length && r.spans[2 * k] >= 0 ? [r.spans[2 * k], r.spans[2 * k + 1]] : [0, 0];
    }
    return out;
  }),
};
export const LAZY_ENCODING = Object.fromEntries(Object.entries(ENCODING_FIELDS).map(([name, make]) => [name, {
  enumerable: true, configurable: true,
  get() {
    const value = make(this[ENCODING_STATE]);
    Object.defineProperty(this, name, { value, enumerable: true, writable: true, configurable: true });
    return value;
  },
}]));

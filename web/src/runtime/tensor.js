// The tensor object every op returns, and the few helpers people reach for when reading one
// (an element, nested arrays, the largest entries along an axis, one batch row or head).
import { AttnkitError } from './errors.js';

/**
 * Set by tokenizer.encode on the inputIds of a batch it padded: the attentionMask that goes with
 * them (Model.forward refuses to pool such ids without their mask: the pads would count).
 */
export const PADDED = Symbol('attnkit.padded');

const fail = (fn, argument, message, code = 'ERR_INVALID_ARGUMENT') => new AttnkitError(`${fn}: ${message}`, { code, argument });

// An axis in [-rank, rank) as its index in [0, rank).
function axisOf(fn, dims, axis) {
  const r = dims.length;
  if (!Number.isInteger(axis) || axis < -r || axis >= r) {
    throw fail(fn, 'axis', `axis must be an integer in [${-r}, ${r}) for a tensor of dims ${JSON.stringify(dims)}, got ${String(axis)}`,
      Number.isInteger(axis) ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT');
  }
  return axis < 0 ? axis + r : axis;
}

// [outer, size, inner] around an axis: element (o, i, n) is at (o * size + i) * inner + n.
function around(dims, a) {
  let outer = 1, inner = 1;
  for (let i = 0; i < a; i++) outer *= dims[i];
  for (let i = a + 1; i < dims.length; i++) inner *= dims[i];
  return [outer, dims[a], inner];
}

// x ranks above y: NaN first (as torch.argmax and torch.topk), then larger values; equal values
// keep their order (the lower index first).
const above = (x, y) => (x !== x ? y === y : y === y && x > y); // eslint-disable-line no-self-compare

/** A dense tensor, the same shape of object as onnxruntime-web's and transformers.js's. */
export class Tensor {
  constructor(type, data, dims) {
    this.type = type;
    this.data = data;
    this.dims = dims;
  }

  get size() {
    return this.data.length;
  }

  /**
   * The element at one index per dim (negative counts from the end): a number, or a bigint for
   * 64-bit integer tensors. A tensor of dims [] takes no index.
   */
  get(...indices) {
    const fn = 'Tensor.get';
    const dims = this.dims;
    if (indices.length !== dims.length) {
      throw fail(fn, 'indices', `a tensor of dims ${JSON.stringify(dims)} takes ${dims.length} indices, got ${indices.length}`,
        'ERR_SHAPE_MISMATCH');
    }
    let flat = 0;
    for (let d = 0; d < dims.length; d++) {
      let i = indices[d];
      if (!Number.isInteger(i) || i < -dims[d] || i >= dims[d]) {
        throw fail(fn, `indices[${d}]`, `index ${String(i)} is outside dim ${d} of size ${dims[d]}`,
          Number.isInteger(i) ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT');
      }
      if (i < 0) i += dims[d];
      flat = flat * dims[d] + i;
    }
    return this.data[flat];
  }

  /** The values as nested arrays, dims deep (numbers; bigints for 64-bit integers); dims [] gives the value. */
  tolist() {
    const { data, dims } = this;
    if (dims.length === 0) return data[0];
    const build = (d, offset, stride) => {
      const n = dims[d], inner = stride / n;
      const out = new Array(n);
      if (d === dims.length - 1) for (let i = 0; i < n; i++) out[i] = data[offset + i];
      else for (let i = 0; i < n; i++) out[i] = build(d + 1, offset + i * inner, inner);
      return out;
    };
    return build(0, 0, data.length);
  }

  /**
   * Indices of the largest values along `axis` (default -1, the last): an int32 tensor of the dims
   * without that axis. The first of equal values wins; NaN counts as the largest (torch.argmax).
   */
  argmax(axis = -1) {
    const fn = 'Tensor.argmax';
    const a = axisOf(fn, this.dims, axis);
    const [outer, size, inner] = around(this.dims, a);
    if (size === 0) throw fail(fn, 'axis', `axis ${axis} is empty (dims ${JSON.stringify(this.dims)})`, 'ERR_SHAPE_MISMATCH');
    const out = new Int32Array(outer * inner);
    const x = this.data;
    for (let o = 0; o < outer; o++) {
      for (let n = 0; n < inner; n++) {
        const base = o * size * inner + n;
        let best = 0, bv = x[base];
        for (let i = 1; i < size; i++) {
          const v = x[base + i * inner];
          if (above(v, bv)) [best, bv] = [i, v];
        }
        out[o * inner + n] = best;
      }
    }
    return new Tensor('int32', out, this.dims.filter((_, d) => d !== a));
  }

  /**
   * The k largest values along `axis` (default -1), largest first (equal values in index order,
   * NaN first): [values, indices] (also .values and .indices), values of this tensor's type and
   * indices int32, both with that axis of size k.
   */
  topk(k, axis = -1) {
    const fn = 'Tensor.topk';
    const a = axisOf(fn, this.dims, axis);
    const [outer, size, inner] = around(this.dims, a);
    if (!Number.isInteger(k) || k < 0 || k > size) {
      throw fail(fn, 'k', `k must be an integer in [0, ${size}] (the size of axis ${axis}), got ${String(k)}`,
        Number.isInteger(k) ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT');
    }
    const x = this.data;
    const values = new x.constructor(outer * k * inner), indices = new Int32Array(outer * k * inner);
    const order = Array.from({ length: size }, (_, i) => i);
    for (let o = 0; o < outer; o++) {
      for (let n = 0; n < inner; n++) {
        const base = o * size * inner + n;
        const at = (i) => x[base + i * inner];
        for (let i = 0; i < size; i++) order[i] = i;
        order.sort((i, j) => (above(at(i), at(j)) ? -1 : above(at(j), at(i)) ? 1 : i - j));
        for (let r = 0; r < k; r++) {
          const w = (o * k + r) * inner + n;
          values[w] = at(order[r]);
          indices[w] = order[r];
        }
      }
    }
    const dims = this.dims.map((d, i) => (i === a ? k : d));
    const result = [new Tensor(this.type, values, dims), new Tensor('int32', indices, [...dims])];
    result.values = result[0];
    result.indices = result[1];
    return result;
  }

  /**
   * A copy of part of the tensor, one argument per leading dim: an integer picks one entry and
   * drops the dim (negative counts from the end), [start, end] keeps a range (Python's slice
   * rules: negative from the end, clamped, null for the end), null or nothing keeps the whole dim.
   * `attentions.slice(0, 3)` is head 3 of the first batch row, [L, L].
   */
  slice(...slices) {
    const fn = 'Tensor.slice';
    const dims = this.dims;
    if (slices.length > dims.length) {
      throw fail(fn, 'slices', `a tensor of dims ${JSON.stringify(dims)} takes at most ${dims.length} slices, got ${slices.length}`,
        'ERR_SHAPE_MISMATCH');
    }
    const ranges = dims.map((n, d) => {
      const s = slices[d];
      if (s === undefined || s === null) return [0, n, true];
      if (Number.isInteger(s)) {
        if (s < -n || s >= n) throw fail(fn, `slices[${d}]`, `index ${s} is outside dim ${d} of size ${n}`, 'ERR_OUT_OF_RANGE');
        const i = s < 0 ? s + n : s;
        return [i, i + 1, false];
      }
      const bound = (v, dflt) => {
        if (v === null || v === undefined) return dflt;
        if (!Number.isInteger(v)) throw fail(fn, `slices[${d}]`, `a range's bounds must be integers or null, got ${JSON.stringify(s)}`);
        return Math.min(Math.max(v < 0 ? v + n : v, 0), n);
      };
      if (!Array.isArray(s) || s.length !== 2) {
        throw fail(fn, `slices[${d}]`, `each slice must be an integer, [start, end] or null, got ${Array.isArray(s) ? JSON.stringify(s) : String(s)}`);
      }
      const start = bound(s[0], 0), end = bound(s[1], n);
      return [start, Math.max(start, end), true];
    });
    const counts = ranges.map(([s, e]) => e - s);
    const total = counts.reduce((p, c) => p * c, 1);
    const out = new this.data.constructor(total);
    const strides = dims.map((_, d) => dims.slice(d + 1).reduce((p, c) => p * c, 1));
    // Rows along the last dim are copied whole (one subarray each).
    const last = dims.length - 1;
    if (total > 0) {
      const idx = new Array(dims.length).fill(0);
      let w = 0;
      const rowLength = last >= 0 ? counts[last] : 1;
      for (;;) {
        let from = 0;
        for (let d = 0; d < last; d++) from += (ranges[d][0] + idx[d]) * strides[d];
        if (last >= 0) from += ranges[last][0];
        out.set(this.data.subarray(from, from + rowLength), w);
        w += rowLength;
        let d = last - 1;
        while (d >= 0 && ++idx[d] === counts[d]) idx[d--] = 0;
        if (d < 0) break;
      }
    }
    return new Tensor(this.type, out, ranges.flatMap(([s, e, keep]) => (keep ? [e - s] : [])));
  }
}

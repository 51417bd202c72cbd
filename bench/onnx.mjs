// A minimal ONNX model writer (protobuf wire format by hand) so the benchmark can build the
// onnxruntime-web peer's graphs in JavaScript. Field numbers follow onnx/onnx.proto3.
const enc = new TextEncoder();

function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

class Msg {
  constructor() { this.parts = []; }
  bytes(field, data) {
    const d = data instanceof Msg ? data.finish() : typeof data === 'string' ? enc.encode(data) : data;
    this.parts.push(Uint8Array.from([...varint((field << 3) | 2), ...varint(d.length)]), d);
    return this;
  }
  int(field, v) { this.parts.push(Uint8Array.from([...varint(field << 3), ...varint(v)])); return this; }
  float(field, v) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.parts.push(Uint8Array.from(varint((field << 3) | 5)), b);
    return this;
  }
  finish() {
    const n = this.parts.reduce((a, p) => a + p.length, 0);
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}

export const FLOAT = 1, INT32 = 6, INT64 = 7;

/** dims: numbers or strings (symbolic). */
export function valueInfo(name, elemType, dims) {
  const shape = new Msg();
  for (const d of dims) shape.bytes(1, typeof d === 'string' ? new Msg().bytes(2, d) : new Msg().int(1, d));
  const tensorType = new Msg().int(1, elemType).bytes(2, shape);
  return new Msg().bytes(1, name).bytes(2, new Msg().bytes(1, tensorType));
}

/** A float32, int32 or int64 initializer from a typed array. */
export function tensor(name, array, dims) {
  const t = new Msg();
  for (const d of dims) t.int(1, d);
  t.int(2, array instanceof Int32Array ? INT32 : array instanceof BigInt64Array ? INT64 : FLOAT).bytes(8, name);
  t.bytes(9, new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
  return t;
}

/** attrs: { name: number (float if not integer or in `floats`), int via {i: n}, ints via {ints: []} } */
export function node(opType, inputs, outputs, attrs = {}, domain = '') {
  const n = new Msg();
  for (const i of inputs) n.bytes(1, i);
  for (const o of outputs) n.bytes(2, o);
  n.bytes(4, opType);
  for (const [k, v] of Object.entries(attrs)) {
    const a = new Msg().bytes(1, k);
    if (typeof v === 'object' && 'i' in v) a.int(3, v.i).int(20, 2);
    else if (typeof v === 'object' && 'ints' in v) { for (const x of v.ints) a.int(8, x); a.int(20, 7); }
    else a.float(2, v).int(20, 1);
    n.bytes(5, a);
  }
  if (domain) n.bytes(7, domain);
  return n;
}

export function model({ nodes, inputs, outputs, initializers = [], opsets = { '': 17 } }) {
  const g = new Msg();
  for (const n of nodes) g.bytes(1, n);
  g.bytes(2, 'attnkit_bench');
  for (const t of initializers) g.bytes(5, t);
  for (const i of inputs) g.bytes(11, i);
  for (const o of outputs) g.bytes(12, o);
  const m = new Msg().int(1, 8).bytes(2, 'attnkit-bench');
  for (const [domain, version] of Object.entries(opsets)) m.bytes(8, new Msg().bytes(1, domain).int(2, version));
  return m.bytes(7, g).finish();
}

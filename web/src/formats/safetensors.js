// Reading .safetensors files. The C++ side validates the header (src/attnkit/formats/safetensors.hpp); it
// lives in attnkit-loaders.wasm, loaded on first use, so the kernels' module stays small. Tensors
// come out as float32 Tensors (F16 and BF16 converted); F32 data is copied as is, which assumes a
// little-endian host like every browser and Node platform.
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { attached, callback, describe, okResponse, options as checkOptions } from '../runtime/args.js';
import { bodyBytes } from '../runtime/read_bytes.js';
import { convertHint, sniff } from './file_source.js';
import { loaders } from '../runtime/loaders.js';

export function bytesOf(fn, source) {
  if (source instanceof Uint8Array) return attached(fn, 'source', source);
  if (source instanceof ArrayBuffer) return new Uint8Array(attached(fn, 'source', source));
  if (ArrayBuffer.isView(source)) return new Uint8Array(attached(fn, 'source', source).buffer, source.byteOffset, source.byteLength);
  throw new AttnkitError(`${fn}: expected an ArrayBuffer, Uint8Array or Response, got ${describe(source)}`, {
    code: 'ERR_INVALID_ARGUMENT', argument: 'source',
  });
}

// The dtypes by the C++ TensorDType number: floating-point ones come back as float32 tensors
// (F16, BF16 and F64 converted in wasm), integer ones as integer tensors of their own width.
const INTEGER_DTYPES = {
  4: ['int64', BigInt64Array], 5: ['int32', Int32Array], 6: ['int16', Int16Array], 7: ['int8', Int8Array],
  8: ['uint8', Uint8Array], 9: ['bool', Uint8Array], 10: ['uint16', Uint16Array], 11: ['uint32', Uint32Array],
  12: ['uint64', BigUint64Array],
};

const DTYPE_BYTES = [4, 2, 2, 8, 8, 4, 2, 1, 1, 1, 2, 4, 8];
const CONVERT_CHUNK = 1 << 20; // elements converted at a time when writing F16/BF16/F64 into a module

/**
 * A tensor still in its file's bytes: dims and type are known, `data` is converted on first use,
 * and a module copies it straight into its wasm memory (`writeTo`) with no float32 copy of the
 * whole tensor in JavaScript. Model.fromPretrained reads checkpoints this way.
 */
export class StoredTensor {
  constructor(heap, fn, bytes, entry) {
    this._heap = heap;
    this._fn = fn;
    this._raw = bytes.subarray(entry.begin, entry.end);
    this._dtype = entry.dtype;
    this._data = null;
    this.type = INTEGER_DTYPES[entry.dtype]?.[0] ?? 'float32';
    this.dims = entry.shape;
    this.size = entry.shape.reduce((a, b) => a * b, 1);
  }

  get data() {
    if (!this._data) this._data = convert(this._heap, this._fn, this._raw, this._dtype, this.size);
    return this._data;
  }

  /** Writes the float32 values into the wasm memory of `heap` (a WasmHeap: the core module) at byte offset `ptr`. */
  writeTo(heap, ptr) {
    if (this._dtype === 0) {
      heap._view(Uint8Array, ptr, this._raw.length).set(this._raw);
      return;
    }
    const width = DTYPE_BYTES[this._dtype];
    for (let i = 0; i < this.size; i += CONVERT_CHUNK) {
      const n = Math.min(CONVERT_CHUNK, this.size - i);
      const part = convert(this._heap, this._fn, this._raw.subarray(i * width, (i + n) * width), this._dtype, n);
      heap._view(Float32Array, ptr + 4 * i, n).set(part);
    }
  }
}

// count values of a dtype (raw little-endian bytes) -> a typed array of their type.
function convert(heap, fn, raw, dtype, count) {
  const integer = INTEGER_DTYPES[dtype];
  if (integer || dtype === 0) {
    const data = new (integer ? integer[1] : Float32Array)(count);
    new Uint8Array(data.buffer).set(raw); // a copy: the file's bytes may sit at any alignment
    return data;
  }
  return heap._withInputs([raw], ([p]) => heap._call(fn, '_toFloat32', [p, count, dtype]));
}

// The bytes a file's header says it has (at least, when the header itself is cut), or 0 when it
// cannot tell; a file with fewer is a download or copy cut short.
function describedBytes(u8, headerLength) {
  if (u8.length < 9 || u8[8] !== 0x7b || headerLength > 100e6) return 0; // '{': the header of a .safetensors file
  if (8 + headerLength > u8.length) return 8 + headerLength;
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + headerLength)));
  } catch {
    return 0;
  }
  let end = 0;
  for (const [name, t] of Object.entries(header ?? {})) {
    const last = name === '__metadata__' ? 0 : Number(t?.data_offsets?.[1]);
    if (Number.isFinite(last) && last > end) end = last;
  }
  return 8 + headerLength + end;
}

// A validation error of a file cut short, with what its length suggests: an incomplete download.
function cutShort(e, u8, headerLength) {
  const need = describedBytes(u8, headerLength);
  if (!(e instanceof AttnkitError) || need <= u8.length) return e;
  return new AttnkitError(`${e.message}: the file has ${u8.length} of the ${need}${8 + headerLength > u8.length ? ' or more' : ''} bytes ` +
    'its header describes, so it is incomplete (an interrupted download or copy?): fetch it again', { code: e.code, argument: e.argument });
}

// Validates a whole file's header with the loaders module `heap`: {tensors: {name: StoredTensor}, metadata}.
function parse(heap, fn, u8) {
  const size = u8.length;
  const headerLength = size >= 8 ? Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true)) : 0;
  try {
    heap._raw(fn, '_safetensorsPrefix', [headerLength, size]);
  } catch (e) {
    // A file of another kind: say which (a pytorch_model.bin read as .safetensors reported a
    // header of 7163379965118073856 bytes).
    const kind = sniff(u8);
    if (kind && kind !== 'a .safetensors file') {
      throw new AttnkitError(`${fn}: this is not a .safetensors file: it looks like ${kind}${convertHint(kind)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'source',
      });
    }
    throw cutShort(e, u8, headerLength);
  }
  try {
    heap._withInputs([u8.subarray(8, 8 + headerLength)], ([ph]) => heap._raw(fn, '_safetensorsIndex', [ph, headerLength, size]));
  } catch (e) {
    throw cutShort(e, u8, headerLength);
  }
  const index = JSON.parse(heap._m._safetensorsIndexJson());
  const tensors = Object.create(null); // file-given names as keys: '__proto__' is a name like any other
  for (const t of index.tensors) tensors[t.name] = new StoredTensor(heap, fn, u8, t);
  return { tensors, metadata: index.metadata };
}

/** The tensors of a file's bytes as StoredTensors (Model.fromPretrained's path). */
export async function storedSafetensors(ak, bytes) {
  return parse(await loaders(ak), 'Model.fromPretrained', bytes);
}

// Every StoredTensor of a parse as a Tensor (loadSafetensors' result).
function materialize({ tensors, metadata }) {
  const out = Object.create(null);
  for (const name of Object.keys(tensors)) {
    const t = tensors[name];
    out[name] = new Tensor(t.type, t.data, t.dims);
  }
  return { tensors: out, metadata };
}

/**
 * A file's bytes from an ArrayBuffer, typed array or fetch Response (streamed, with
 * onProgress(loadedBytes, totalBytes or undefined)): what loadSafetensors and loadGguf read.
 */
export async function sourceBytes(fn, source, onProgress) {
  if (source && typeof source === 'object' && typeof source.arrayBuffer === 'function' && 'body' in source) {
    okResponse(fn, 'source', source);
    const total = Number(source.headers?.get?.('content-length')) || undefined;
    let loaded = 0;
    const onBytes = onProgress && ((n) => onProgress((loaded += n), total));
    return bodyBytes(fn, source.url ? `source (${source.url})` : 'source', source, { onBytes, argument: 'source' });
  }
  const bytes = bytesOf(fn, source);
  onProgress?.(bytes.length, bytes.length);
  return bytes;
}

/**
 * Reads a .safetensors file from an ArrayBuffer, Uint8Array or fetch Response (streamed, with
 * onProgress(loadedBytes, totalBytes or undefined)), then parses it.
 */
export async function loadSafetensors(ak, source, options) {
  const fn = 'loadSafetensors';
  const onProgress = callback(fn, 'onProgress', checkOptions(fn, options, ['onProgress']).onProgress);
  const bytes = await sourceBytes(fn, source, onProgress);
  return materialize(parse(await loaders(ak), fn, bytes));
}

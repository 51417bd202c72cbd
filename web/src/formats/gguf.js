// Reading GGUF files (llama.cpp's format). The C++ side validates the header
// (src/attnkit/formats/gguf.hpp) in attnkit-loaders.wasm and reports where every value and tensor
// lies; values are then read here from the file's own bytes by those offsets, and tensor data stays
// in the file's bytes until it is used: a tensor is copied into a module's wasm memory (writeTo)
// with no float32 copy of it in JavaScript, and the tokenizer's arrays are views, not copies.
// Little-endian hosts only (every browser and Node platform), as the safetensors reader.
import { AttnkitError } from '../runtime/errors.js';
import { callback, options as checkOptions } from '../runtime/args.js';
import { loaders } from '../runtime/loaders.js';
import { convertHint, sniff } from './file_source.js';
import { sourceBytes } from './safetensors.js';

// The header is read from a prefix of the file: this much first, then what the reader asks for or
// twice as much (a llama-3 vocabulary's header is about 8 MB; the tensor data is never copied).
const FIRST_PREFIX = 1 << 22;
const CONVERT_CHUNK = 1 << 20; // elements converted at a time (a multiple of every block)

// ggml types read: [attnkit type, ggml name, block elements, block bytes].
const TYPES = {
  0: ['float32', 'F32', 1, 4], 1: ['float32', 'F16', 1, 2], 30: ['float32', 'BF16', 1, 2],
  8: ['q8_0', 'Q8_0', 32, 34], 2: ['q4_0', 'Q4_0', 32, 18], 12: ['q4_k', 'Q4_K', 256, 144],
};

// Metadata value types (gguf_type): typed-array constructors of the numeric ones by number.
const STRING = 8;
const BOOL = 7;
const ARRAYS = {
  0: Uint8Array, 1: Int8Array, 2: Uint16Array, 3: Int16Array, 4: Uint32Array, 5: Int32Array, 6: Float32Array,
  10: BigUint64Array, 11: BigInt64Array, 12: Float64Array,
};
const UTF8 = new TextDecoder();

/**
 * A GGUF array of strings, left in the file's bytes (tokenizer.ggml.tokens and .merges hold 10^5
 * strings and more): `length`, `at(i)` (negative counts from the end, as Array's), `bytes(i)` (the
 * stored bytes: writers may store raw bytes, which at() shows as U+FFFD), `toArray()`, iteration.
 */
export class GgufStrings {
  constructor(bytes, offset, count) {
    this._bytes = bytes;
    this._offset = offset;
    this._starts = null; // byte offset of each string's text, and one past the last
    this.length = count;
  }

  _index() {
    if (!this._starts) {
      const view = new DataView(this._bytes.buffer, this._bytes.byteOffset, this._bytes.byteLength);
      const starts = new Float64Array(this.length + 1);
      let p = this._offset;
      for (let i = 0; i < this.length; i++) {
        // (the reader checked every length against the file: each fits in a double exactly)
        const n = view.getUint32(p, true) + view.getUint32(p + 4, true) * 2 ** 32;
        starts[i] = p + 8;
        p += 8 + n;
      }
      starts[this.length] = p + 8;
      this._starts = starts;
    }
    return this._starts;
  }

  /** The stored bytes of string i (a view into the file), or undefined past the end. */
  bytes(i) {
    const k = Math.trunc(Number(i));
    const j = k < 0 ? k + this.length : k;
    if (!(j >= 0 && j < this.length)) return undefined;
    const starts = this._index();
    return this._bytes.subarray(starts[j], starts[j + 1] - 8);
  }

  /** String i as text (UTF-8 decoded, malformed bytes as U+FFFD), or undefined past the end. */
  at(i) {
    const b = this.bytes(i);
    return b && UTF8.decode(b);
  }

  toArray() {
    return Array.from(this);
  }

  * [Symbol.iterator]() {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}

/**
 * A tensor still in its file's bytes (the shape of the safetensors reader's StoredTensor): `type`
 * 'float32' for F32, F16 and BF16 (whose `data` is converted on first use) or the block format
 * 'q8_0', 'q4_0', 'q4_k' (whose `bytes` are the blocks as stored); `dims` in PyTorch's order
 * (ggml's ne reversed: [out, in] for a weight); `dequantize()` gives float32 values of any type.
 * writeTo copies it into a module's wasm memory: float32 values, or the raw blocks of a quantized
 * type; writeFloat32To copies float32 values of any type.
 */
export class GgufTensor {
  constructor(heap, fn, bytes, [name, type, ne, offset, size]) {
    const [kind, ggml, block, blockBytes] = TYPES[type];
    this._heap = heap;
    this._fn = fn;
    this._ggml = type;
    this._block = block;
    this._blockBytes = blockBytes;
    this._data = null;
    this.name = name;
    this.type = kind;
    this.ggmlType = ggml;
    this.dims = [...ne].reverse();
    this.size = ne.reduce((a, b) => a * b, 1);
    this.byteLength = size;
    this.bytes = bytes.subarray(offset, offset + size);
  }

  /** The float32 values of an F32, F16 or BF16 tensor (undefined for quantized ones: see dequantize). */
  get data() {
    if (this.type !== 'float32') return undefined;
    if (!this._data) this._data = this.dequantize();
    return this._data;
  }

  /** Every value as float32, in a new Float32Array (ggml's dequantisation, bit for bit). */
  dequantize() {
    const out = new Float32Array(this.size);
    if (this._ggml === 0) {
      new Uint8Array(out.buffer).set(this.bytes); // a copy: the file's bytes may sit at any alignment
      return out;
    }
    this._chunks((i, part) => out.set(part, i));
    return out;
  }

  // Runs fn(first element, float32 values) over chunks of whole blocks.
  _chunks(fn) {
    for (let i = 0; i < this.size; i += CONVERT_CHUNK) {
      const n = Math.min(CONVERT_CHUNK, this.size - i);
      const from = (i / this._block) * this._blockBytes;
      const raw = this.bytes.subarray(from, from + (n / this._block) * this._blockBytes);
      fn(i, this._heap._withInputs([raw], ([p]) => this._heap._call(this._fn, '_ggufDequantize', [p, n, this._ggml])));
    }
  }

  /** Writes the tensor into the wasm memory of `heap` (a WasmHeap) at byte offset `ptr`: float32 values, or the blocks of a quantized type. */
  writeTo(heap, ptr) {
    if (this.type !== 'float32' || this._ggml === 0) {
      heap._view(Uint8Array, ptr, this.byteLength).set(this.bytes);
      return;
    }
    this.writeFloat32To(heap, ptr);
  }

  /** Writes the float32 values (dequantised) into the wasm memory of `heap` at byte offset `ptr`. */
  writeFloat32To(heap, ptr) {
    if (this._ggml === 0) {
      heap._view(Uint8Array, ptr, this.byteLength).set(this.bytes);
      return;
    }
    this._chunks((i, part) => heap._view(Float32Array, ptr + 4 * i, part.length).set(part));
  }
}

// A metadata value from the file's bytes: numbers (64-bit integers as BigInt), booleans, strings,
// typed arrays of numeric arrays (copies: the file's bytes may sit at any alignment), arrays of
// booleans, GgufStrings of string arrays.
function value(bytes, view, [, type, element, count, offset, size]) {
  switch (type) {
    case 0: return view.getUint8(offset);
    case 1: return view.getInt8(offset);
    case 2: return view.getUint16(offset, true);
    case 3: return view.getInt16(offset, true);
    case 4: return view.getUint32(offset, true);
    case 5: return view.getInt32(offset, true);
    case 6: return view.getFloat32(offset, true);
    case BOOL: return view.getUint8(offset) === 1;
    case STRING: return UTF8.decode(bytes.subarray(offset, offset + size));
    case 10: return view.getBigUint64(offset, true);
    case 11: return view.getBigInt64(offset, true);
    case 12: return view.getFloat64(offset, true);
    default: break; // 9: an array
  }
  if (element === STRING) return new GgufStrings(bytes, offset, count);
  if (element === BOOL) return Array.from(bytes.subarray(offset, offset + count), (b) => b === 1);
  const out = new ARRAYS[element](count);
  new Uint8Array(out.buffer).set(bytes.subarray(offset, offset + size));
  return out;
}

// The header validated with the loaders module `heap`, from prefixes of the file as long as it
// asks: `prefix(n)` gives the file's first n bytes (synchronously from its whole bytes, or a promise
// of them from a reader of the file's start), `size` is the file's length. Resolves (or returns,
// when prefix does) to [the index, the last prefix read].
function index(heap, fn, prefix, size) {
  let given = Math.min(size, FIRST_PREFIX);
  const attempt = (bytes) => {
    try {
      heap._withInputs([bytes.subarray(0, given)], ([p]) => heap._raw(fn, '_ggufIndex', [p, given, size]));
      return [JSON.parse(heap._m._ggufIndexJson()), bytes];
    } catch (e) {
      const needed = e?.code === 'ERR_OUT_OF_RANGE' && e.argument === 'bytes' ? heap._m._ggufNeeded() : 0;
      if (needed > given && needed <= size) {
        given = Math.min(size, Math.max(needed, 2 * given));
        return null;
      }
      const kind = e?.argument === 'magic' ? sniff(bytes) : null;
      if (kind) {
        throw new AttnkitError(`${fn}: this is not a GGUF file: it looks like ${kind}${convertHint(kind)}`, {
          code: 'ERR_INVALID_ARGUMENT', argument: 'source',
        });
      }
      throw e;
    }
  };
  const first = prefix(given);
  if (!(first instanceof Promise)) {
    for (let bytes = first; ;) {
      const done = attempt(bytes);
      if (done) return done;
      bytes = prefix(given);
    }
  }
  return (async () => {
    for (let bytes = await first; ;) {
      const done = attempt(bytes);
      if (done) return done;
      bytes = await prefix(given);
    }
  })();
}

// The metadata values of an index, read from `bytes` (the file, or a prefix holding its header).
function metadataOf(found, bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // File-given names as keys of null-prototype objects: '__proto__' is a name like any other.
  const metadata = Object.create(null);
  for (const kv of found.metadata) metadata[kv[0]] = value(bytes, view, kv);
  return metadata;
}

/** A GGUF file's bytes parsed with the loaders module `heap`: { metadata, tensors } (Model.fromPretrained's path). */
export function parseGguf(heap, fn, bytes) {
  const [found] = index(heap, fn, (n) => bytes.subarray(0, n), bytes.length);
  const metadata = metadataOf(found, bytes);
  const tensors = Object.create(null);
  for (const t of found.tensors) tensors[t[0]] = new GgufTensor(heap, fn, bytes, t);
  return { metadata, tensors };
}

/**
 * The metadata of a GGUF file read from its start only (Tokenizer.fromPretrained's path: a
 * tokenizer is in the header, the gigabytes after it are not read): `read(n)` resolves to the
 * file's first n bytes, `size` is its length; the header is validated against the whole size.
 */
export async function ggufMetadataFrom(ak, fn, read, size) {
  const [found, bytes] = await index(await loaders(ak), fn, read, size);
  return metadataOf(found, bytes);
}

/** The tensors and metadata of a GGUF file's bytes, with the loaders module of `ak`. */
export async function storedGguf(ak, bytes, fn = 'Model.fromPretrained') {
  return parseGguf(await loaders(ak), fn, bytes);
}

/**
 * Reads a GGUF file from an ArrayBuffer, typed array or fetch Response (streamed, with
 * onProgress(loadedBytes, totalBytes or undefined)), then parses it: { metadata, tensors }.
 */
export async function loadGguf(ak, source, options) {
  const fn = 'loadGguf';
  const onProgress = callback(fn, 'onProgress', checkOptions(fn, options, ['onProgress']).onProgress);
  const bytes = await sourceBytes(fn, source, onProgress);
  return parseGguf(await loaders(ak), fn, bytes);
}

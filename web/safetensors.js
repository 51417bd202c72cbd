// Reading .safetensors files. The C++ side validates the header (src/attnkit/safetensors.hpp); it
// lives in attnkit-loaders.wasm, loaded on first use, so the kernels' module stays small. Tensors
// come out as float32 Tensors (F16 and BF16 converted); F32 data is copied as is, which assumes a
// little-endian host like every browser and Node platform.
import { AttnkitError } from './errors.js';
import { Tensor } from './tensor.js';
import { attached, callback, describe, options as checkOptions } from './args.js';
import { WasmHeap } from './heap.js';
import { readBytes, resolveUrl } from './read_bytes.js';
import { convertHint, responseBytes, sniff } from './pretrained.js';

const pending = new Map();

/** The loaders module for this Attnkit (loaded once per URL; a failed load may be retried). */
export function loaders(ak) {
  const key = String(ak._loadersUrl ?? '');
  if (!pending.has(key)) {
    const promise = (async () => {
      let url;
      try {
        url = ak._loadersUrl ? resolveUrl(ak._loadersUrl) : new URL('./dist/attnkit-loaders.wasm', import.meta.url);
      } catch (e) {
        throw new AttnkitError(`load: wasmUrl['wasm-loaders'] is not a valid URL (${e.message})`, {
          code: 'ERR_INVALID_ARGUMENT', argument: 'wasmUrl',
        });
      }
      let bytes;
      try {
        bytes = await readBytes(url);
      } catch (e) {
        throw new AttnkitError(`could not read the loaders module from ${url.href}: ${e.message}`, { code: 'ERR_LOAD' });
      }
      const { default: factory } = await import('./dist/attnkit-loaders.mjs');
      return new WasmHeap(await factory({ wasmBinary: bytes, print: () => {}, printErr: () => {} }));
    })();
    pending.set(key, promise);
    promise.catch(() => pending.delete(key));
  }
  return pending.get(key);
}

function bytesOf(fn, source) {
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

// Parses a whole file with the loaders module `heap`: {tensors: {name: Tensor}, metadata}.
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
    throw e;
  }
  heap._withInputs([u8.subarray(8, 8 + headerLength)], ([ph]) => heap._raw(fn, '_safetensorsIndex', [ph, headerLength, size]));
  const index = JSON.parse(heap._m._safetensorsIndexJson());
  const tensors = Object.create(null); // file-given names as keys: '__proto__' is a name like any other
  for (const t of index.tensors) {
    const raw = u8.subarray(t.begin, t.end);
    const count = t.shape.reduce((a, b) => a * b, 1);
    const integer = INTEGER_DTYPES[t.dtype];
    let data, type = 'float32';
    if (integer) {
      const [name, Type] = integer;
      type = name;
      data = new Type(count);
      new Uint8Array(data.buffer).set(raw); // a copy: the file's bytes may sit at any alignment
    } else if (t.dtype === 0) {
      data = new Float32Array(count);
      new Uint8Array(data.buffer).set(raw);
    } else {
      data = heap._withInputs([raw], ([p]) => heap._call(fn, '_toFloat32', [p, count, t.dtype]));
    }
    tensors[t.name] = new Tensor(type, data, t.shape);
  }
  return { tensors, metadata: index.metadata };
}

/**
 * Reads a .safetensors file from an ArrayBuffer, Uint8Array or fetch Response (streamed, with
 * onProgress(loadedBytes, totalBytes or undefined)), then parses it.
 */
export async function loadSafetensors(ak, source, options) {
  const fn = 'loadSafetensors';
  const onProgress = callback(fn, 'onProgress', checkOptions(fn, options, ['onProgress']).onProgress);
  if (source && typeof source === 'object' && typeof source.arrayBuffer === 'function' && 'body' in source) {
    if (!source.ok) {
      throw new AttnkitError(`${fn}: the response is HTTP ${source.status} ${source.statusText ?? ''}`.trim(), {
        code: 'ERR_LOAD', argument: 'source',
      });
    }
    const total = Number(source.headers?.get?.('content-length')) || undefined;
    let loaded = 0;
    const bytes = await responseBytes(source, onProgress && ((n) => onProgress((loaded += n), total)));
    return parse(await loaders(ak), fn, bytes);
  }
  const bytes = bytesOf(fn, source);
  onProgress?.(bytes.length, bytes.length);
  return parse(await loaders(ak), fn, bytes);
}

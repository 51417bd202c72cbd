// Reading .safetensors files (C++ validates the header: src/attnkit/safetensors.hpp). Tensors
// come out as float32 Tensors (F16 and BF16 converted); F32 data is copied as is, which assumes a
// little-endian host like every browser and Node platform.
import { AttnkitError } from './errors.js';
import { Tensor } from './tensor.js';
import { describe } from './args.js';

function bytesOf(fn, source) {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new AttnkitError(`${fn}: expected an ArrayBuffer, Uint8Array or Response, got ${describe(source)}`, {
    code: 'ERR_INVALID_ARGUMENT', argument: 'source',
  });
}

/** Parses a whole .safetensors file: {tensors: {name: Tensor}, metadata: {key: value}}. */
export function parseSafetensors(ak, source) {
  const fn = 'parseSafetensors';
  const u8 = bytesOf(fn, source);
  const size = u8.length;
  const headerLength = size >= 8 ? Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true)) : 0;
  ak._raw(fn, '_safetensorsPrefix', [headerLength, size]);
  ak._withInputs([u8.subarray(8, 8 + headerLength)], ([ph]) => ak._raw(fn, '_safetensorsIndex', [ph, headerLength, size]));
  const index = JSON.parse(ak._m._safetensorsIndexJson());
  const tensors = {};
  for (const t of index.tensors) {
    const raw = u8.subarray(t.begin, t.end);
    const count = t.shape.reduce((a, b) => a * b, 1);
    let data;
    if (t.dtype === 0) {
      data = new Float32Array(count);
      new Uint8Array(data.buffer).set(raw); // a copy: the file's bytes may sit at any alignment
    } else {
      data = ak._withInputs([raw], ([p]) => ak._call(fn, '_toFloat32', [p, count, t.dtype]));
    }
    tensors[t.name] = new Tensor('float32', data, t.shape);
  }
  return { tensors, metadata: index.metadata };
}

/**
 * Reads a .safetensors file from an ArrayBuffer, Uint8Array or fetch Response (streamed, with
 * onProgress(loadedBytes, totalBytes or undefined)), then parses it.
 */
export async function loadSafetensors(ak, source, { onProgress } = {}) {
  const fn = 'loadSafetensors';
  if (source && typeof source === 'object' && typeof source.arrayBuffer === 'function' && 'body' in source) {
    if (!source.ok) {
      throw new AttnkitError(`${fn}: the response is HTTP ${source.status} ${source.statusText ?? ''}`.trim(), {
        code: 'ERR_LOAD', argument: 'source',
      });
    }
    const total = Number(source.headers?.get?.('content-length')) || undefined;
    if (!source.body || !onProgress) return parseSafetensors(ak, await source.arrayBuffer());
    const chunks = [];
    let loaded = 0;
    for (const reader = source.body.getReader(); ;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.length;
      onProgress(loaded, total);
    }
    const all = new Uint8Array(loaded);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    return parseSafetensors(ak, all);
  }
  const bytes = bytesOf(fn, source);
  onProgress?.(bytes.length, bytes.length);
  return parseSafetensors(ak, bytes);
}

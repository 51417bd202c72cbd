// The loaders module (attnkit-loaders.wasm: file readers and tokenizers, src/formats and src/text),
// loaded on first use so that the kernels' module stays small.
import { WasmHeap } from './heap.js';
import { readPackageWasm } from './read_bytes.js';
import createLoadersModule from '../../dist/attnkit-loaders.mjs';

const pending = new Map();

/** The loaders module for this Attnkit (loaded once per URL; a failed load may be retried). */
export function loaders(ak) {
  const key = String(ak._loadersUrl ?? '');
  if (!pending.has(key)) {
    const promise = (async () => {
      const { bytes } = await readPackageWasm('the loaders module', ak._loadersUrl, "wasmUrl['wasm-loaders']",
        () => new URL('../../dist/attnkit-loaders.wasm', import.meta.url));
      return new WasmHeap(await createLoadersModule({ wasmBinary: bytes, print: () => {}, printErr: () => {} }));
    })();
    pending.set(key, promise);
    promise.catch(() => pending.delete(key));
  }
  return pending.get(key);
}

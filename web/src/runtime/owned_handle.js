// C++ objects addressed by a handle in a wasm module. OwnedHandle owns the handle: it frees it on
// dispose(), or when the JavaScript object is garbage-collected if the user forgot (tokenizers and
// the nn modules build on it).
import { AttnkitError } from './errors.js';

const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ m, free, handle }) => m[free](handle))
  : null;

export class OwnedHandle {
  /** heap: the WasmHeap holding the object; what: its name in messages; free: its raw free function. */
  _own(heap, handle, what, free) {
    this._heap = heap;
    this._handle = handle;
    this._what = what;
    this._free = free;
    finalizer?.register(this, { m: heap._m, free, handle }, this);
  }

  _live(fn) {
    if (!this._handle) {
      throw new AttnkitError(`${fn}: this ${this._what} was disposed`, { code: 'ERR_DISPOSED' });
    }
  }

  /** Frees the object's wasm memory. Further calls throw ERR_DISPOSED; calling it twice is fine. */
  dispose() {
    if (!this._handle) return;
    finalizer?.unregister(this);
    this._heap._m[this._free](this._handle);
    this._handle = 0;
  }
}

// A module whose weights and state live in C++ (Embeddings, MultiHeadAttention, EncoderLayer),
// addressed by a handle. Owns the handle: frees it on dispose(), or when the object is garbage-
// collected if the user forgot; copies weights in with every size checked first.
import { AttnkitError } from './errors.js';
import { describe, floatInput } from './args.js';

const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ m, free, handle }) => m[free](handle))
  : null;

export class HandleModule {
  /**
   * ak: the loaded Attnkit; handle: from its `_xCreate`; kind: the class name in messages;
   * raw: {free, weight} names of the raw functions; names: weight names (index = the C++ weight
   * number); aliases: other spellings (PyTorch, Hugging Face) mapped onto names.
   */
  _adopt(ak, handle, kind, raw, names, aliases = {}) {
    this._ak = ak;
    this._handle = handle;
    this._kind = kind;
    this._rawNames = raw;
    this._weightNames = names;
    this._aliases = aliases;
    finalizer?.register(this, { m: ak._m, free: raw.free, handle }, this);
  }

  _live(fn) {
    if (!this._handle) {
      throw new AttnkitError(`${fn}: this ${this._kind} module was disposed`, { code: 'ERR_DISPOSED' });
    }
  }

  /**
   * Copies weights (Float32Arrays or float32 Tensors) into the module. The C++ side checks every
   * size first (naming the weight, its expected and actual length), then all are written, so a
   * bad weight leaves the module unchanged.
   */
  setWeights(weights) {
    const fn = 'setWeights';
    this._live(fn);
    if (!weights || typeof weights !== 'object') {
      throw new AttnkitError(`${fn}: weights must be an object, got ${describe(weights)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'weights',
      });
    }
    const given = [];
    for (const [key, value] of Object.entries(weights)) {
      const which = this._weightNames.indexOf(this._aliases[key] ?? key);
      if (which < 0) {
        const also = Object.keys(this._aliases).length ? ' (or the PyTorch / Hugging Face names)' : '';
        throw new AttnkitError(`${fn}: unknown weight '${key}'; expected ${this._weightNames.join(', ')}${also}`, {
          code: 'ERR_INVALID_ARGUMENT', argument: key,
        });
      }
      if (value !== undefined) given.push([which, floatInput(fn, key, value).data]);
    }
    const { weight } = this._rawNames;
    for (const [which, data] of given) this._ak._raw(fn, weight, [this._handle, which, data.length, true]);
    for (const [which, data] of given) {
      const [ptr] = this._ak._raw(fn, weight, [this._handle, which, data.length, false]);
      this._ak._m.HEAPF32.set(data, ptr >>> 2); // a fresh view: nothing allocates in between
    }
    return this;
  }

  /** Frees the module's wasm memory. Further calls throw ERR_DISPOSED; calling it twice is fine. */
  dispose() {
    if (!this._handle) return;
    finalizer?.unregister(this);
    this._ak._m[this._rawNames.free](this._handle);
    this._handle = 0;
  }
}

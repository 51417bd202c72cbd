// HandleModule: an OwnedHandle (a C++ module in the core wasm module) with weights copied in, every
// size checked first (Embeddings, MultiHeadAttention, EncoderLayer, DecoderLayer).
import { AttnkitError } from '../runtime/errors.js';
import { describe, floatInput } from '../runtime/args.js';
import { OwnedHandle } from '../runtime/owned_handle.js';

const isStored = (v) => typeof v?.writeTo === 'function' && Array.isArray(v.dims) && typeof v.type === 'string';

export class HandleModule extends OwnedHandle {
  /**
   * ak: the loaded Attnkit; handle: from its `_xCreate`; kind: the class name in messages;
   * raw: {free, weight} names of the raw functions; names: weight names (index = the C++ weight
   * number); aliases: other spellings (PyTorch, Hugging Face) mapped onto names.
   */
  _adopt(ak, handle, kind, raw, names, aliases = {}) {
    this._own(ak, handle, `${kind} module`, raw.free);
    this._rawNames = raw;
    this._weightNames = names;
    this._aliases = aliases;
  }

  /** The Attnkit this module lives in. */
  get _ak() {
    return this._heap;
  }

  /**
   * Copies weights (Float32Arrays or float32 Tensors) into the module. The C++ side checks every
   * size first (naming the weight, its expected and actual length), then all are written, so a
   * bad weight leaves the module unchanged.
   */
  setWeights(weights) {
    this._writeWeights(this._checkWeights(weights));
    return this;
  }

  // Every check setWeights makes (names, types, dims, and the C++ side's sizes), nothing written:
  // returns the plan _writeWeights carries out. Model checks all its modules before it writes any.
  _checkWeights(weights) {
    const fn = 'setWeights';
    this._live(fn);
    if (!weights || typeof weights !== 'object') {
      throw new AttnkitError(`${fn}: weights must be an object, got ${describe(weights)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'weights',
      });
    }
    const given = [];
    const shapes = this._shapes?.() ?? {};
    for (const [key, value] of Object.entries(weights)) {
      const name = Object.hasOwn(this._aliases, key) ? this._aliases[key] : key;
      const which = this._weightNames.indexOf(name);
      if (which < 0) {
        const also = Object.keys(this._aliases).length ? ' (or the PyTorch / Hugging Face names)' : '';
        throw new AttnkitError(`${fn}: unknown weight '${key}'; expected ${this._weightNames.join(', ')}${also}`, {
          code: 'ERR_INVALID_ARGUMENT', argument: key,
        });
      }
      if (value === undefined) continue;
      // A tensor still in its file's bytes (a StoredTensor of the file readers, told by its
      // writeTo) is copied straight into wasm memory below; anything else must be float32 data.
      const stored = isStored(value);
      if (stored && value.type !== 'float32') {
        throw new AttnkitError(`${fn}: ${key} holds ${value.type} values; weights are floating-point`, {
          code: 'ERR_INVALID_ARGUMENT', argument: key,
        });
      }
      const t = stored ? value : floatInput(fn, key, value);
      // A tensor's dims must be the weight's shape (a transposed or flattened one has the right
      // count and the wrong meaning); a bare Float32Array is read in the module's layout.
      const want = shapes[name]; // [[size, what sets it], ...]
      if (want && !(value instanceof Float32Array) && (t.dims.length !== want.length || t.dims.some((d, i) => d !== want[i][0]))) {
        throw new AttnkitError(`${fn}: ${key} has dims ${JSON.stringify(t.dims)}, expected ` +
          `${JSON.stringify(want.map(([n]) => n))} (${want.map(([, what]) => what).join(', ')})`, {
          code: 'ERR_SHAPE_MISMATCH', argument: key,
        });
      }
      given.push([which, stored ? value.size : t.data.length, stored ? value : t.data]);
    }
    const { weight } = this._rawNames;
    for (const [which, count] of given) this._ak._raw(fn, weight, this._weightArgs(which, count, true));
    return given;
  }

  // The raw weight function's arguments after the slot (a Model's parts add the part and layer).
  _weightArgs(which, count, checkOnly) {
    return [this._handle, which, count, checkOnly];
  }

  _writeWeights(given) {
    for (const [which, count, data] of given) {
      const [ptr] = this._ak._raw('setWeights', this._rawNames.weight, this._weightArgs(which, count, false));
      // Fresh views: nothing allocates in the core module in between.
      if (isStored(data)) data.writeTo(this._ak, ptr);
      else this._ak._view(Float32Array, ptr, data.length).set(data);
    }
  }
}

// Copying weights into a module's wasm storage: every size is checked by the C++ side first
// (which names the weight, its expected and its actual length), then all are written, so a bad
// weight leaves the module unchanged.
import { AttnkitError } from './errors.js';
import { describe, floatInput } from './args.js';

/**
 * names: the module's weight names (index = the C++ weight number) and aliases: other spellings
 * (PyTorch, Hugging Face) mapped onto them. raw: the `_xWeight(slot, handle, which, length,
 * checkOnly)` function reporting a weight's storage.
 */
export function writeWeights(ak, fn, raw, handle, weights, names, aliases = {}) {
  if (!weights || typeof weights !== 'object') {
    throw new AttnkitError(`${fn}: weights must be an object, got ${describe(weights)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: 'weights',
    });
  }
  const given = [];
  for (const [key, value] of Object.entries(weights)) {
    const which = names.indexOf(aliases[key] ?? key);
    if (which < 0) {
      const also = Object.keys(aliases).length ? ' (or the PyTorch / Hugging Face names)' : '';
      throw new AttnkitError(`${fn}: unknown weight '${key}'; expected ${names.filter(Boolean).join(', ')}${also}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: key,
      });
    }
    if (value !== undefined) given.push([which, floatInput(fn, key, value).data]);
  }
  for (const [which, data] of given) ak._raw(fn, raw, [handle, which, data.length, true]);
  for (const [which, data] of given) {
    const [ptr] = ak._raw(fn, raw, [handle, which, data.length, false]);
    ak._m.HEAPF32.set(data, ptr >>> 2); // a fresh view: nothing allocates in between
  }
}

// How a checkpoint names its tensors, per family: declared with the family's config.json reader
// in src/models/families/<family>.cpp and delivered in the spec (spec.tensors); here compiled for
// Model.setWeights (regular expressions) and the fused tensors split at load.
import { AttnkitError } from '../runtime/errors.js';
import { describe } from '../runtime/args.js';
import { loaders } from '../runtime/loaders.js';
import { textInput } from '../runtime/read_bytes.js';

const compiled = new WeakMap();

/**
 * The spec's tensor table with its patterns compiled: prefixes (stripped from names), embeddings,
 * layer (RegExp: layer number, name), layerPrefix, layerWeights (our name, or a fused tensor
 * {split, into}), final, lmHead, mlm, tiedDecoder, pooler, heads, ignore, configKeys.
 */
export function familyTensors(spec) {
  const t = spec?.tensors;
  if (!t || typeof t !== 'object') {
    throw new AttnkitError(`Model: the spec has no tensor table (spec.tensors); make specs with ak.modelSpec(config), got ${describe(t)}`,
      { code: 'ERR_INVALID_ARGUMENT', argument: 'spec' });
  }
  if (compiled.has(t)) return compiled.get(t);
  const re = (source) => (typeof source === 'string' ? new RegExp(source) : undefined);
  const f = {
    prefixes: [], embeddings: {}, layerWeights: {}, final: {}, ...t,
    layer: re(t.layer) ?? /^$/, tiedDecoder: re(t.tiedDecoder), ignore: re(t.ignore) ?? /^$/,
  };
  compiled.set(t, f);
  return f;
}

/**
 * A fused tensor's parts: rule {split, into} of a layer's weight table, the tensor (Float32Array
 * data and dims) -> [[our name, Float32Array], ...]; null when its size does not split evenly.
 */
export function splitFused(rule, data, heads) {
  const n = data.length;
  if (rule.split === 'halves') {
    if (n % 2) return null;
    return [[rule.into[0], data.slice(0, n / 2)], [rule.into[1], data.slice(n / 2)]];
  }
  // perHead: [heads, 3, headDim, cols] (cols 1 for a bias).
  if (n % (3 * heads)) return null;
  const block = n / (3 * heads);
  const parts = rule.into.map(() => new Float32Array(heads * block));
  for (let h = 0; h < heads; h++) {
    for (let k = 0; k < 3; k++) parts[k].set(data.subarray((3 * h + k) * block, (3 * h + k + 1) * block), h * block);
  }
  return rule.into.map((name, k) => [name, parts[k]]);
}

/** config.json (text, bytes, parsed object, or Response) -> the model spec of model_config.hpp. */
export async function modelSpec(ak, config) {
  const fn = 'Model.fromPretrained';
  const text = await textInput(fn, 'config', config);
  const heap = await loaders(ak);
  const bytes = new TextEncoder().encode(text);
  heap._withInputs([bytes], ([p]) => heap._raw(fn, '_modelSpec', [p, bytes.length]));
  return JSON.parse(heap._m._modelSpecJson());
}

// A Hugging Face folder read as Model.fromPretrained reads it: config.json's spec and the tensors of
// model.safetensors (or of the shards model.safetensors.index.json lists).
import { AttnkitError } from '../runtime/errors.js';
import { callback, describe, options as checkOptions } from '../runtime/args.js';
import { storedSafetensors } from '../formats/safetensors.js';
import { SOURCE_OPTIONS, convertHint, fileSource, readJson, readText } from '../formats/file_source.js';
import { modelSpec } from './families.js';

// Files a checkpoint may come as that attnkit does not read, with what to do about them.
const OTHER_WEIGHTS = ['pytorch_model.bin', 'pytorch_model.bin.index.json', 'tf_model.h5', 'model.onnx', 'flax_model.msgpack'];

/**
 * The spec (from config.json) and the tensors (model.safetensors, or the shards of
 * model.safetensors.index.json) of a Hugging Face folder, without building the model: what
 * Model.fromPretrained reads, for callers that take the tensors apart (the tutorial).
 */
export async function readCheckpoint(ak, source, options) {
  const fn = 'Model.fromPretrained';
  const o = checkOptions(fn, options, ['onProgress', ...SOURCE_OPTIONS]);
  const onProgress = callback(fn, 'onProgress', o.onProgress);
  const src = fileSource(fn, source, o);
  if (!(await src.has('config.json'))) {
    throw new AttnkitError(`${fn}: there is no config.json in ${src.label}`, { code: 'ERR_LOAD', argument: 'config.json' });
  }
  const spec = await modelSpec(ak, await readText(fn, src, 'config.json'));
  // The weights: one file, or shards listed by an index.
  let files;
  let index = null;
  if (await src.has('model.safetensors')) files = ['model.safetensors'];
  else if (await src.has('model.safetensors.index.json')) {
    index = await readJson(fn, src, 'model.safetensors.index.json');
    const map = index?.weight_map;
    if (!map || typeof map !== 'object' || Array.isArray(map)) {
      throw new AttnkitError(`${fn}: model.safetensors.index.json has no weight_map object`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'model.safetensors.index.json',
      });
    }
    files = [...new Set(Object.values(map))];
    for (const f of files) {
      if (typeof f !== 'string' || !/^[\w.-]+\.safetensors$/.test(f) || f.includes('..')) {
        throw new AttnkitError(`${fn}: model.safetensors.index.json names a shard ${describe(f)}; shards are .safetensors files beside it`,
          { code: 'ERR_INVALID_ARGUMENT', argument: 'model.safetensors.index.json' });
      }
    }
  } else {
    for (const other of OTHER_WEIGHTS) {
      if (await src.has(other)) {
        throw new AttnkitError(`${fn}: ${src.label} has ${other} but no model.safetensors${convertHint('PyTorch')}`, {
          code: 'ERR_LOAD', argument: other,
        });
      }
    }
    throw new AttnkitError(`${fn}: there is no model.safetensors or model.safetensors.index.json in ${src.label}`, {
      code: 'ERR_LOAD', argument: 'model.safetensors',
    });
  }
  const sizes = await Promise.all(files.map((f) => src.size(f)));
  const total = sizes.every((s) => s !== undefined) ? sizes.reduce((a, b) => a + b, 0) : undefined;
  let loaded = 0;
  const tensors = Object.create(null);
  const from = new Map();
  for (const f of files) {
    const bytes = await src.bytes(f, onProgress && ((n, file) => onProgress((loaded += n), total, file)));
    let state;
    try {
      state = await storedSafetensors(ak, bytes); // tensors stay in the file's bytes until written
    } catch (e) {
      if (e instanceof AttnkitError) {
        throw new AttnkitError(`${fn}: ${src.where(f)}: ${e.message.replace(`${fn}: `, '')}`, { code: e.code, argument: f });
      }
      throw e;
    }
    for (const [name, t] of Object.entries(state.tensors)) {
      if (from.has(name)) {
        throw new AttnkitError(`${fn}: the tensor '${name}' is in both ${from.get(name)} and ${f}`, { code: 'ERR_INVALID_ARGUMENT', argument: name });
      }
      from.set(name, f);
      tensors[name] = t;
    }
  }
  if (index) {
    for (const [name, f] of Object.entries(index.weight_map)) {
      if (from.get(name) !== f) {
        throw new AttnkitError(`${fn}: model.safetensors.index.json puts '${name}' in ${f}, which does not hold it`, {
          code: 'ERR_INVALID_ARGUMENT', argument: name,
        });
      }
    }
  }
  return { spec, tensors };
}

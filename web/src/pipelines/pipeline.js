// ak.pipeline(task, source, options): a model and its tokenizer from one Hugging Face folder,
// behind an async function that takes a task's inputs and returns its outputs shaped as
// transformers.js's pipelines return them (docs/pipelines.md). The registry: each task's file
// declares its options (with their defaults), checks them, checks the model when the pipeline is
// made (create), and runs a call (run). Options given to pipeline() are the defaults of every call.
// The tasks use a few internals of the layers below, as the packages' own code: a tokenizer's
// pieces before its template and its template (question answering's windows), its decoder steps
// (token classification's words), a model's head checks; tests/node/pipelines/ holds them to it.
import { AttnkitError } from '../runtime/errors.js';
import { callback, describe, options as checkOptions } from '../runtime/args.js';
import { SOURCE_OPTIONS, fileSource, readJson, readText } from '../formats/file_source.js';
import { loadModel } from '../models/model.js';
import { Tokenizer } from '../text/tokenizer.js';
import { featureExtraction } from './feature_extraction.js';
import { textClassification } from './text_classification.js';
import { tokenClassification } from './token_classification.js';
import { fillMask } from './fill_mask.js';
import { questionAnswering } from './question_answering.js';
import { zeroShotClassification } from './zero_shot_classification.js';
import { textGeneration } from './text_generation.js';
import { readChatTemplate } from './chat_template.js';

/** The tasks: name -> {options, defaults, check, create, run, inputs (how many arguments before the options)}. */
export const TASKS = {
  'feature-extraction': { ...featureExtraction, inputs: 1 },
  'text-classification': { ...textClassification, inputs: 1 },
  'token-classification': { ...tokenClassification, inputs: 1 },
  'fill-mask': { ...fillMask, inputs: 1 },
  'question-answering': { ...questionAnswering, inputs: 2 },
  'zero-shot-classification': { ...zeroShotClassification, inputs: 2 },
  'text-generation': { ...textGeneration, inputs: 1 },
};

/** transformers.js's other names for them. */
export const ALIASES = { embeddings: 'feature-extraction', 'sentiment-analysis': 'text-classification', ner: 'token-classification' };

// transformers.js tasks attnkit does not run yet, and why.
const LATER = {
  'text2text-generation': 'encoder-decoder models (T5, BART)', summarization: 'encoder-decoder models (T5, BART)',
  translation: 'encoder-decoder models (T5, Marian, NLLB)',
};

// How the files are read: fromPretrained's options, passed on to Model.fromPretrained and
// Tokenizer.fromPretrained (revision and cache for Hub ids); onProgress hears both.
const LOAD_OPTIONS = ['onProgress', ...SOURCE_OPTIONS];
// The small files a pipeline reads itself besides what Model and Tokenizer read.
const OWN_FILES = ['config.json', 'tokenizer_config.json', 'chat_template.jinja', 'chat_template.json'];

function taskOf(fn, task) {
  if (typeof task !== 'string') throw new AttnkitError(`${fn}: task must be a string, got ${describe(task)}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'task' });
  const name = ALIASES[task] ?? task;
  if (Object.hasOwn(TASKS, name)) return name;
  const later = Object.keys(LATER).find((k) => name === k || name.startsWith(`${k}_`));
  if (later) {
    throw new AttnkitError(`${fn}: '${task}' needs ${LATER[later]}, which attnkit does not run yet`, { code: 'ERR_INVALID_ARGUMENT', argument: 'task' });
  }
  const known = [...Object.keys(TASKS), ...Object.keys(ALIASES)];
  const near = closest(task, known);
  throw new AttnkitError(`${fn}: unknown task '${task}'${near ? `; did you mean '${near}'?` : ''} (known: ${known.join(', ')})`,
    { code: 'ERR_INVALID_ARGUMENT', argument: 'task' });
}

function closest(word, known) {
  const distance = (a, b) => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row;
    }
    return prev[b.length];
  };
  let best = null, d = Infinity;
  for (const k of known) {
    const x = distance(word.toLowerCase().replace(/_/g, '-'), k);
    if (x < d) [best, d] = [k, x];
  }
  return d <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/**
 * Each task's model when pipeline() is given none (transformers.js has one per task, by Hub id).
 * Empty until Hub ids resolve (issue 39's Hub part); a task's entry here is then used as its source.
 */
export const DEFAULT_MODELS = {};

// The source as Model.fromPretrained and Tokenizer.fromPretrained take it. Hub ids ('org/name')
// are theirs to resolve (the formats layer's file source), with the revision and cache options
// pipeline() passes on.
function modelSource(fn, task, source) {
  if (source !== undefined && source !== null) return source;
  if (Object.hasOwn(DEFAULT_MODELS, task)) return DEFAULT_MODELS[task];
  throw new AttnkitError(`${fn}: pass the model's source: a folder path (Node), a URL, picked files or an object of files ` +
    `(attnkit has no default model for '${task}' yet)`, { code: 'ERR_INVALID_ARGUMENT', argument: 'source' });
}

// An object of files whose small JSON files are Responses: read once here, since both this and
// the loaders read them (a Response's body is read once).
async function shareSmallFiles(source) {
  const plain = source && typeof source === 'object' && Object.getPrototypeOf(source) === Object.prototype;
  if (!plain || typeof Response !== 'function') return source;
  const copy = { ...source };
  for (const name of [...OWN_FILES, 'special_tokens_map.json']) {
    if (copy[name] instanceof Response && copy[name].ok) copy[name] = await copy[name].text();
  }
  return copy;
}

// One onProgress for the model's and the tokenizer's loads: (bytes of every file so far, the
// weights' total plus the sizes of the other files met so far, the file's event).
function combinedProgress(onProgress) {
  const files = new Map();
  let weights;
  const report = (file) => {
    files.set(file.file, file);
    let loaded = 0, extra = 0;
    for (const f of files.values()) {
      loaded += f.loaded;
      if (!/\.safetensors$/.test(f.file)) extra += f.total ?? f.loaded;
    }
    onProgress(loaded, weights === undefined ? undefined : weights + extra, file);
  };
  return {
    model: (loaded, total, file) => {
      weights = total;
      report(file);
    },
    tokenizer: (loaded, total, file) => report(file),
  };
}

/** ak.pipeline(task, source, options) -> an async function with task, model, tokenizer and dispose(). */
export async function pipeline(ak, task, source, options) {
  const fn = 'pipeline';
  const name = taskOf(fn, task);
  const def = TASKS[name];
  const o = checkOptions(fn, options, [...LOAD_OPTIONS, ...def.options]);
  callback(fn, 'onProgress', o.onProgress);
  const defaults = { ...def.defaults };
  for (const k of def.options) if (o[k] !== undefined) defaults[k] = o[k];
  def.check(name, defaults);
  const net = {};
  for (const k of SOURCE_OPTIONS) if (o[k] !== undefined) net[k] = o[k];
  const src = await shareSmallFiles(modelSource(fn, name, source));

  const files = fileSource(fn, src, net);
  const optional = async (file) => ((await files.has(file)) ? readText(fn, files, file) : null);
  const progress = o.onProgress ? combinedProgress(o.onProgress) : null;
  const settled = await Promise.allSettled([
    loadModel(ak, src, { ...net, ...(progress ? { onProgress: progress.model } : {}) }),
    Tokenizer.fromPretrained(ak, src, { ...net, ...(progress ? { onProgress: progress.tokenizer } : {}) }),
    (async () => ((await files.has('config.json')) ? readJson(fn, files, 'config.json') : null))(),
    (async () => ((await files.has('tokenizer_config.json')) ? readJson(fn, files, 'tokenizer_config.json') : null))(),
  ]);
  const failed = settled.find((s) => s.status === 'rejected');
  const [model, tokenizer, config, tokenizerConfig] = settled.map((s) => (s.status === 'fulfilled' ? s.value : null));
  const disposeAll = () => {
    model?.dispose();
    tokenizer?.dispose();
  };
  if (failed) {
    disposeAll();
    throw failed.reason;
  }
  const cleanUp = tokenizerConfig?.clean_up_tokenization_spaces === true;
  const ctx = {
    ak, model, tokenizer, config, tokenizerConfig, chatTemplate: null,
    decode: (ids, opts) => tokenizer.decode(ids, { cleanUpTokenizationSpaces: cleanUp, ...opts }),
  };
  try {
    if (name === 'text-generation') ctx.chatTemplate = await readChatTemplate(fn, optional, tokenizerConfig);
    def.create(ctx, name);
  } catch (e) {
    disposeAll();
    throw e;
  }

  let disposed = false;
  const run = async (...args) => {
    if (disposed) throw new AttnkitError(`${name}: this pipeline was disposed`, { code: 'ERR_DISPOSED' });
    if (args.length > def.inputs + 1) {
      throw new AttnkitError(`${name}: takes ${def.inputs === 1 ? 'the inputs' : `${def.inputs} inputs`} and an options object, got ${args.length} arguments`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'options' });
    }
    if (args.length < def.inputs) {
      throw new AttnkitError(`${name}: takes ${def.inputs} inputs (${name === 'question-answering' ? 'question, context' : 'texts, candidateLabels'}), got ${args.length}`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'inputs' });
    }
    const given = checkOptions(name, args[def.inputs], def.options);
    const merged = { ...defaults };
    for (const [k, v] of Object.entries(given)) if (v !== undefined) merged[k] = v;
    def.check(name, merged);
    return def.run(ctx, name, merged, ...args.slice(0, def.inputs));
  };
  return Object.assign(run, {
    task: name, model, tokenizer,
    /** Frees the model's and the tokenizer's wasm memory; later calls throw ERR_DISPOSED. */
    dispose() {
      if (disposed) return;
      disposed = true;
      disposeAll();
    },
  });
}

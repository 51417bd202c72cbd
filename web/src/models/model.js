// A Transformer model from Hugging Face files: config.json (mapped by the C++ loaders module,
// src/attnkit/models/model_config.hpp) and .safetensors weights under their Hugging Face names, run
// by one C++ object (src/attnkit/models/model.hpp): embeddings, layers, final norm, heads and the
// KV cache, one call per forward pass. The families' weight names are in families.js, the reading
// of a checkpoint folder in checkpoint.js.
import { AttnkitError } from '../runtime/errors.js';
import { PADDED, Tensor } from '../runtime/tensor.js';
import { boolean, describe, idsInput, options as checkOptions } from '../runtime/args.js';
import { WEIGHTS, writeForwardOptions, writeModelConfig } from '../runtime/boundary.generated.js';
import { OwnedHandle } from '../runtime/owned_handle.js';
import { HandleModule } from '../nn/handle_module.js';
import { embeddingsConfig, embeddingsShapes } from '../nn/embeddings.js';
import { LAYER_OPTIONS, layerSettings, layerShapes } from '../nn/encoder_layer.js';
import { attentionConfig, attentionShapes } from '../nn/multi_head_attention.js';
import { loadSafetensors } from '../formats/safetensors.js';
import { generate, generateText } from './generate.js';
import { familyTensors, modelSpec, splitFused } from './families.js';
import { readCheckpoint } from './checkpoint.js';
import { readGgufCheckpoint } from './gguf.js';
import { isGgufSource } from '../formats/gguf_source.js';

// The package entry (web/attnkit.js) takes modelSpec from here, with Model and loadModel.
export { modelSpec };

function tensorsOf(weights) {
  return weights && typeof weights.tensors === 'object' ? weights.tensors : weights;
}

// The float32 values a Model of this spec holds: its weights (and the biases and norms a
// checkpoint may leave at their defaults).
function modelFloats(spec) {
  const e = spec.embeddings, l = spec.layer, D = l.dim;
  const hd = l.headDim * l.numHeads, kv = l.headDim * l.numKvHeads;
  const perLayer = D * (hd + 2 * kv) + hd * D + (hd + 2 * kv + D) + 8 * D + l.ffnDim * D * (l.ffnGated ? 3 : 2) + 3 * l.ffnDim + D;
  return (e.vocabSize + (e.positional === 'none' ? 0 : e.maxPositions) + e.typeVocabSize + 2) * e.dim +
    spec.numLayers * perLayer + 2 * D + (spec.lmHead === 'separate' ? e.vocabSize * D : 0);
}

// tokenizer.encode's result (an object with inputIds beside attentionMask), not ids themselves.
const isEncoding = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) && !ArrayBuffer.isView(x) &&
  !('data' in x) && 'inputIds' in x;

// The parts of a Model whose weights it stores (ModelPart, src/attnkit/models/model.hpp), with
// their weight names (index = the C++ weight number).
const PART = { embeddings: 0, layer: 1, final: 2, lmHead: 3, mlm: 4, pooler: 5, task: 6 };
const PART_WEIGHTS = {
  embeddings: WEIGHTS.Embeddings, layer: WEIGHTS.EncoderLayer, final: ['weight', 'bias'], lmHead: ['word'],
  mlm: ['denseWeight', 'denseBias', 'normWeight', 'normBias', 'bias'], pooler: ['weight', 'bias'],
  task: ['denseWeight', 'denseBias', 'weight', 'bias', 'normWeight', 'normBias'],
};
const POOLING = ['mean', 'cls', 'last', 'pooler'];

// One part's weights, checked and written like a module's (HandleModule) through the model's
// handle: the same size checks, messages and stored-tensor copies.
class PartWeights extends HandleModule {
  constructor(model, part, layer, shapes) {
    super();
    this._heap = model._heap;
    this._model = model;
    this._part = PART[part];
    this._layer = layer;
    this._rawNames = { weight: '_modelWeight' };
    this._weightNames = PART_WEIGHTS[part];
    this._aliases = {};
    this._partShapes = shapes;
  }

  get _handle() {
    return this._model._handle;
  }

  set _handle(v) {}

  _shapes() {
    return this._partShapes;
  }

  _weightArgs(which, count, checkOnly) {
    return [this._model._handle, this._part, this._layer, which, count, checkOnly];
  }
}

export class Model extends OwnedHandle {
  /**
   * spec: from modelSpec (config.json). Weights start unset; call setWeights with a Hugging Face
   * state dict (or use Model.fromPretrained / ak.loadModel).
   */
  constructor(ak, spec) {
    super();
    const fn = 'Model';
    if (typeof ak?._raw !== 'function' || spec === undefined) {
      throw new AttnkitError(`${fn}: load a model with \`await ak.Model.fromPretrained(source)\` (a folder, URL or Hub id), or ` +
        'build one with `new ak.Model(spec)` (spec: `await ak.modelSpec(config)`), where `ak = await load()`',
      { code: 'ERR_INVALID_ARGUMENT', argument: typeof ak?._raw !== 'function' ? 'ak' : 'spec' });
    }
    this.spec = spec;
    this._family = familyTensors(spec);
    const layerOptions = checkOptions(fn, spec.layer, LAYER_OPTIONS, 'layer');
    const emb = embeddingsConfig(fn, spec.embeddings);
    const att = attentionConfig(fn, layerOptions);
    const lay = layerSettings(fn, layerOptions);
    const wire = writeModelConfig({
      embeddings: emb.fields, layer: { attention: att.fields, layer: lay.fields }, numLayers: spec.numLayers,
      causal: att.config.causal,
      positionIds: spec.positionIds ?? 'arange', layerScale: spec.layerScale ?? 'none',
      finalNorm: spec.finalNorm?.norm ?? 'none', finalEps: spec.finalNorm?.eps ?? 1e-5, lmHead: spec.lmHead ?? 'none',
      mlmHead: Boolean(this._family.mlm),
      // RoBERTa's lm_head applies gelu whatever hidden_act says; BERT's and DistilBERT's the config's.
      mlmActivation: spec.mlmActivation ?? (spec.family === 'roberta' || spec.family === 'xlm-roberta' ? 'gelu' : lay.fields.activation),
      contextSize: spec.embeddings.maxPositions, window: spec.slidingWindow ?? 0,
      taskHead: spec.head?.task ?? 'none', numLabels: spec.head?.numLabels ?? 0, headPool: spec.head?.pool ?? 'first',
      headDense: spec.head?.dense ?? 'none', headActivation: spec.head?.activation ?? 'none', headBias: spec.head?.bias ?? true,
      padTokenId: Number.isInteger(spec.padTokenId) ? spec.padTokenId : -1,
      windowEvery: spec.windowPattern?.every ?? 0, windowGlobal: spec.windowPattern?.global ?? 0,
      localRopeBase: spec.localRopeBase ?? 0, finalLogitSoftcap: spec.finalLogitSoftcap ?? 0,
      hiddenBeforeFinalNorm: spec.hiddenBeforeFinalNorm ?? false, firstAttnNorm: spec.firstAttnNorm ?? true,
      headNorm: spec.head?.norm ?? false,
    });
    this._config = { ...att.config, ...lay.config };
    // Every float32 the model will hold, checked against the heap before the first is allocated.
    ak._raw(fn, '_heapCheck', [4 * modelFloats(spec)]);
    const handle = ak._withInputs([wire], ([pc]) => ak._raw(fn, '_modelCreate', [pc])[0]);
    this._own(ak, handle, 'Model', '_modelFree');
    const c = this._config;
    this._parts = {
      embeddings: new PartWeights(this, 'embeddings', 0, embeddingsShapes(emb.config)),
      layers: Array.from({ length: spec.numLayers }, (_, i) =>
        new PartWeights(this, 'layer', i, { ...attentionShapes(c), ...layerShapes(c, 4) })),
      final: new PartWeights(this, 'final', 0, { weight: [[c.dim, 'dim']], bias: [[c.dim, 'dim']] }),
      lmHead: new PartWeights(this, 'lmHead', 0, { word: embeddingsShapes(emb.config).word }),
      mlm: new PartWeights(this, 'mlm', 0, {}),
      pooler: new PartWeights(this, 'pooler', 0, {}),
      task: new PartWeights(this, 'task', 0, {}),
    };
    /** Tensors of the last setWeights that no part takes. */
    this.unusedWeights = [];
    // The KV cache holds at most the model's positions (n_positions, max_position_embeddings).
    this.contextSize = spec.embeddings.maxPositions;
    // generate() queues its calls on _generateQueue and owns the cache while _generating.
    this._generateQueue = null;
    this._generating = false;
    this._inGenerateStep = false;
  }

  get _ak() {
    return this._heap;
  }

  /**
   * What config.json says of the model's task: {modelType, architecture, numLabels, id2label,
   * label2id} (id2label and label2id as the file has them, or null).
   */
  get config() {
    const s = this.spec;
    return {
      modelType: s.family, architecture: s.architecture ?? null, numLabels: s.head?.numLabels ?? null,
      id2label: s.id2label ?? null, label2id: s.label2id ?? null,
    };
  }

  /** Layers of the model (config.json's num_hidden_layers / n_layer). */
  get numLayers() {
    return this.spec.numLayers;
  }

  /** Positions held by the KV cache (0 when empty). */
  get cacheLength() {
    this._live('cacheLength');
    return this._ak._m._modelCache(this._handle, 0);
  }

  /** Bytes of the KV cache storage (kept by resetCache for reuse; freed by dispose). */
  get cacheBytes() {
    this._live('cacheBytes');
    return this._ak._m._modelCache(this._handle, 2);
  }

  /**
   * A copy of the KV cache: {batch, length, mask (Int32Array [batch, length] or null: every
   * position a token), layers: per layer {key, value} Tensors [batch, kvHeads, length, headDim]}.
   * loadCache (or forward's pastKeyValues) puts it back, here or in a model of the same shape: to
   * branch a decoding, or to keep a prompt's cache and start from it again.
   */
  saveCache() {
    const fn = 'saveCache';
    this._live(fn);
    this._checkCacheFree(fn);
    const m = this._ak._m, ak = this._ak;
    const batch = m._modelCache(this._handle, 3), length = m._modelCache(this._handle, 0);
    const dims = [batch, this._config.numKvHeads, length, this._config.headDim];
    const layers = Array.from({ length: this.numLayers }, (_, i) => ({
      key: new Tensor('float32', ak._call(fn, '_modelCacheRead', [this._handle, i, 0]), dims),
      value: new Tensor('float32', ak._call(fn, '_modelCacheRead', [this._handle, i, 1]), dims),
    }));
    const mask = ak._call(fn, '_modelCacheRead', [this._handle, 0, 2], undefined, Int32Array);
    const cache = { batch, length, mask: mask.length ? mask : null, layers };
    // A sliding window's cache keeps only its last positions: where it starts, and the tokens before.
    const start = m._modelCache(this._handle, 4);
    if (start > 0) {
      const tokens = ak._call(fn, '_modelCacheRead', [this._handle, 0, 3], undefined, Int32Array);
      Object.assign(cache, { start, startTokens: tokens.length ? tokens : null });
    }
    return cache;
  }

  /** Replaces the KV cache with one saveCache returned (see saveCache); returns the model. */
  loadCache(cache) {
    const fn = 'loadCache';
    this._live(fn);
    this._checkCacheFree(fn);
    this._putCache(fn, 'cache', this._checkCache(fn, 'cache', cache));
    return this;
  }

  // A cache for loadCache / pastKeyValues, checked here as far as JavaScript can (the layers'
  // sizes are checked by C++ as it copies): {batch, length, mask, data: per layer [key, value]}.
  _checkCache(fn, name, cache) {
    const bad = (what, code = 'ERR_INVALID_ARGUMENT') => new AttnkitError(`${fn}: ${name} ${what}`, { code, argument: name });
    if (cache === null || typeof cache !== 'object') throw bad(`must be what saveCache() returned, got ${describe(cache)}`);
    const { batch, length, mask = null, layers, start = 0, startTokens = null } = cache;
    if (!Number.isInteger(batch) || batch < 0 || !Number.isInteger(length) || length < 0) {
      throw bad(`must have integer batch and length >= 0, got batch ${describe(batch)}, length ${describe(length)}`);
    }
    if (!Number.isInteger(start) || start < 0) throw bad(`start must be an integer >= 0, got ${describe(start)}`);
    if (start + length > this.contextSize) throw bad(`holds ${start + length} positions; this model has ${this.contextSize}`, 'ERR_OUT_OF_RANGE');
    if (startTokens !== null && (!(startTokens instanceof Int32Array) || startTokens.length !== batch)) {
      throw bad(`startTokens must be null or an Int32Array of batch = ${batch} elements, got ${describe(startTokens)}`, 'ERR_SHAPE_MISMATCH');
    }
    if (!Array.isArray(layers) || layers.length !== this.numLayers) {
      throw bad(`must have one {key, value} per layer (${this.numLayers}), got ${Array.isArray(layers) ? layers.length : describe(layers)}`, 'ERR_SHAPE_MISMATCH');
    }
    if (mask !== null && (!(mask instanceof Int32Array) || mask.length !== batch * length)) {
      throw bad(`mask must be null or an Int32Array of batch * length = ${batch * length} elements, got ${describe(mask)}`, 'ERR_SHAPE_MISMATCH');
    }
    const data = layers.map((l, i) => {
      const k = l?.key?.data ?? l?.key, v = l?.value?.data ?? l?.value;
      if (!(k instanceof Float32Array) || !(v instanceof Float32Array)) {
        throw bad(`layers[${i}] must have Float32Array (or float32 Tensor) key and value, got ${describe(k)} and ${describe(v)}`);
      }
      return [k, v];
    });
    return { batch, length, mask, data, start, startTokens };
  }

  // Puts a checked cache in every layer, all or nothing (C++ checks each layer's sizes and leaves
  // the cache empty when one is refused).
  _putCache(fn, name, { batch, length, mask, data, start = 0, startTokens = null }) {
    const ak = this._ak;
    if (length === 0) {
      ak._m._modelCache(this._handle, 1);
      return;
    }
    const sizes = new Float64Array([batch, length, mask ? mask.length : 0, start, startTokens ? startTokens.length : 0]);
    const arrays = data.flat();
    try {
      ak._withInputs([sizes, mask, startTokens, ...arrays], ([ps, pm, pt, ...ptrs]) => {
        const pairs = (off) => new Uint32Array(data.flatMap(([k, v], i) => [ptrs[2 * i + off], (off ? v : k).length]));
        const keys = pairs(0), values = pairs(1);
        return ak._withInputs([keys, values], ([pk, pv]) => ak._raw(fn, '_modelCacheWrite', [this._handle, ps, pm, pk, pv, pt]));
      });
    } catch (e) {
      ak._m._modelCache(this._handle, 1);
      // The C++ side names the argument pastKeyValues; loadCache's is `cache`.
      if (typeof e.argument === 'string' && e.argument.startsWith('pastKeyValues')) e.argument = name + e.argument.slice('pastKeyValues'.length);
      throw e;
    }
  }

  /** Empties the KV cache (forward with useCache then starts at position 0). */
  resetCache() {
    this._live('resetCache');
    this._checkCacheFree('resetCache');
    this._ak._m._modelCache(this._handle, 1);
    return this;
  }

  // A generate() owns the KV cache from its first step to its last: the cache's users outside it
  // are refused (they would interleave with its steps and both would read the wrong keys).
  _checkCacheFree(fn) {
    if (this._generating && !this._inGenerateStep) {
      throw new AttnkitError(`${fn}: a generate() on this model is running and owns its KV cache; await it first ` +
        '(generate calls on one model queue by themselves)', { code: 'ERR_BUSY' });
    }
  }

  /** Runs f as the running generate's own step (the only caller the cache takes while it runs). */
  _ownCache(f) {
    this._inGenerateStep = true;
    try {
      return f();
    } finally {
      this._inGenerateStep = false;
    }
  }

  /**
   * Hugging Face state dict {name: Float32Array | Tensor} (or loadSafetensors' result). Every
   * weight the model needs must be present; tensors it does not use are listed in unusedWeights.
   */
  setWeights(weights) {
    const fn = 'setWeights';
    this._live(fn);
    const tensors = tensorsOf(weights);
    if (!tensors || typeof tensors !== 'object') {
      throw new AttnkitError(`${fn}: weights must be a state dict object, got ${describe(weights)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'weights',
      });
    }
    const f = this._family;
    const own = (table, key) => (Object.hasOwn(table, key) ? table[key] : undefined);
    const emb = {}, final = {}, head = {}, mlm = {}, pooler = {}, task = {}, layers = this._parts.layers.map(() => ({}));
    const taskNames = this.spec.head ? f.heads?.[this.spec.head.task] ?? {} : {};
    const source = new Map(); // the part and our name -> the checkpoint's name, for messages
    const unused = [];
    const put = (target, ours, value, full, where) => {
      if (Object.hasOwn(target, ours)) {
        throw new AttnkitError(`${fn}: the weights name ${where}'s ${ours} twice: '${source.get(`${where}/${ours}`)}' and '${full}'`, {
          code: 'ERR_INVALID_ARGUMENT', argument: full,
        });
      }
      target[ours] = value;
      source.set(`${where}/${ours}`, full);
    };
    const hasFinal = Boolean(this.spec.finalNorm);
    for (const [full, value] of Object.entries(tensors)) {
      const prefix = f.prefixes.find((p) => full.startsWith(p));
      const name = prefix ? full.slice(prefix.length) : full;
      if (f.ignore.test(name)) continue;
      const m = f.layer.exec(name);
      const layerWeight = m && own(f.layerWeights, m[2]);
      if (own(f.embeddings, name)) put(emb, f.embeddings[name], value, full, 'embeddings');
      else if (own(f.final, name) && hasFinal) put(final, f.final[name], value, full, 'final');
      else if (m && layerWeight) {
        // Layer numbers are written as Hugging Face writes them: no leading zeros, none past the config's.
        const i = Number(m[1]);
        if (String(i) !== m[1] || i >= layers.length) {
          throw new AttnkitError(`${fn}: '${full}' names layer ${m[1]}, but config.json gives ${layers.length} layers ` +
            `(${f.layerPrefix}0 .. ${f.layerPrefix}${layers.length - 1})`, { code: 'ERR_INVALID_ARGUMENT', argument: full });
        }
        if (typeof layerWeight === 'string') put(layers[i], layerWeight, value, full, `layer ${i}`);
        else {
          // A fused tensor: its parts, each under our name (errors name the checkpoint's tensor).
          const data = value?.data ?? value;
          const parts = data instanceof Float32Array ? splitFused(layerWeight, data, this._config.numHeads) : null;
          if (!parts) {
            throw new AttnkitError(`${fn}: '${full}' must be float32 data that splits into ${layerWeight.into.join(', ')}, got ${describe(value)}`,
              { code: 'ERR_SHAPE_MISMATCH', argument: full });
          }
          for (const [ours, part] of parts) put(layers[i], ours, part, full, `layer ${i}`);
        }
      } else if (name === (f.lmHead ?? 'lm_head.weight') && this.spec.lmHead === 'separate') put(head, 'word', value, full, 'lm_head');
      else if (own(taskNames, full) || own(taskNames, name)) put(task, taskNames[own(taskNames, full) ? full : name], value, full, 'the task head');
      else if (f.mlm && own(f.mlm, name)) put(mlm, f.mlm[name], value, full, 'the masked-LM head');
      else if (f.pooler && own(f.pooler, name)) put(pooler, f.pooler[name], value, full, 'the pooler');
      else if (f.tiedDecoder?.test(name)) continue;
      else unused.push(full);
    }
    // LongRoPE's factors come from config.json's rope_scaling, into every layer.
    if (this.spec.ropeFactors) {
      layers.forEach((l, i) => put(l, 'ropeFactors', Float32Array.from(this.spec.ropeFactors), 'rope_scaling', `layer ${i}`));
    }
    // Gemma's RMSNorm multiplies by (1 + weight): the norms' weights move by one here.
    if (this.spec.normPlusOne) {
      const plusOne = (v) => {
        const d = v?.data ?? v;
        return d instanceof Float32Array ? d.map((x) => x + 1) : v;
      };
      for (const l of layers) for (const k of Object.keys(l)) if (/^norm\d\.weight$/.test(k)) l[k] = plusOne(l[k]);
      if (final.weight) final.weight = plusOne(final.weight);
    }
    // Biases a family leaves out (ModernBERT's norm_bias, classifier_bias, decoder_bias false) are zeros.
    const D = this._config.dim, zeros = (n) => new Float32Array(n);
    if (this.spec.normBias === false && Object.keys(mlm).length) mlm.normBias ??= zeros(D);
    if (this.spec.headDenseBias === false && Object.keys(mlm).length) mlm.denseBias ??= zeros(D);
    if (this.spec.decoderBias === false && Object.keys(mlm).length) mlm.bias ??= zeros(this.spec.embeddings.vocabSize);
    if (this.spec.head?.norm) {
      if (this.spec.normBias === false) task.normBias ??= zeros(D);
      if (this.spec.headDenseBias === false) task.denseBias ??= zeros(D);
    }
    const missing = this._missing(emb, layers, final) ?? this._missingHead(task, pooler, taskNames);
    if (missing) {
      throw new AttnkitError(`${fn}: the weights lack ${missing} (${Object.keys(tensors).length} tensors given)`, {
        code: 'ERR_INVALID_ARGUMENT', argument: missing,
      });
    }
    // Errors name our weight and our options; say the checkpoint's tensor and the config.json
    // settings instead.
    const keys = f.configKeys;
    const named = (where, part, given) => {
      try {
        return [part, part._checkWeights(given)];
      } catch (e) {
        const full = source.get(`${where}/${e.argument}`);
        if (full && e instanceof AttnkitError) {
          const text = e.message.replace(/^setWeights: \S+ /, '').replace(/\b(numKvHeads|numHeads|headDim|ffnDim|vocabSize|maxPositions|typeVocabSize|numLabels|dim)\b/g, (k) => keys[k] ?? k);
          throw new AttnkitError(`${fn}: '${full}' ${text}`, { code: e.code, argument: full });
        }
        throw e;
      }
    };
    // A head is there only with all its tensors; one given in part is listed as unused.
    const whole = (given, names, where) => {
      if (names.every((k) => given[k] !== undefined)) return true;
      unused.push(...Object.keys(given).map((k) => source.get(`${where}/${k}`)));
      return false;
    };
    const p = this._parts;
    // Every part's weights are checked before any is written.
    const plans = [named('embeddings', p.embeddings, emb), ...p.layers.map((l, i) => named(`layer ${i}`, l, layers[i]))];
    if (hasFinal) plans.push(named('final', p.final, final));
    if (head.word) plans.push(named('lm_head', p.lmHead, head));
    if (whole(mlm, PART_WEIGHTS.mlm, 'the masked-LM head')) plans.push(named('the masked-LM head', p.mlm, mlm));
    if (whole(pooler, PART_WEIGHTS.pooler, 'the pooler')) plans.push(named('the pooler', p.pooler, pooler));
    if (this.spec.head) plans.push(named('the task head', p.task, task));
    for (const [part, plan] of plans) part._writeWeights(plan);
    this.unusedWeights = unused;
    return this;
  }

  // The task head's first missing tensor (config.json's architectures names the head), or null.
  _missingHead(task, pooler, names) {
    const h = this.spec.head;
    if (!h) return null;
    const name = (ours) => Object.keys(names).find((k) => names[k] === ours) ?? ours;
    const need = ['weight', ...(h.bias ? ['bias'] : []), ...(h.dense === 'own' ? ['denseWeight', 'denseBias'] : []),
      ...(h.norm ? ['normWeight', 'normBias'] : [])];
    for (const w of need) if (task[w] === undefined) return name(w);
    if (h.dense === 'pooler') {
      for (const w of ['weight', 'bias']) if (pooler[w] === undefined) return Object.keys(this._family.pooler).find((k) => this._family.pooler[k] === w);
    }
    return null;
  }

  // The first Hugging Face name the model needs and did not get, or null.
  _missing(emb, layers, final) {
    const f = this._family, s = this.spec;
    const name = (table, ours) => Object.keys(table).find((k) => table[k] === ours || table[k]?.into?.includes(ours));
    const biases = s.normBias !== false; // ModernBERT's norm_bias false: LayerNorms without bias
    const needEmb = ['word', ...(s.embeddings.positional === 'learned' ? ['position'] : []),
      ...(s.embeddings.typeVocabSize > 0 ? ['tokenType'] : []),
      ...(s.embeddings.norm === 'layernorm' ? ['normWeight', ...(biases ? ['normBias'] : [])] : [])];
    for (const w of needEmb) if (!emb[w]) return name(f.embeddings, w);
    const l = s.layer;
    const fused = Object.values(f.layerWeights).includes('inProjWeight'); // GPT-2's c_attn
    const needLayer = [
      ...(fused ? ['inProjWeight', ...(l.bias ? ['inProjBias'] : [])]
        : ['qWeight', 'kWeight', 'vWeight', ...(l.bias ? ['qBias', 'kBias', 'vBias'] : [])]),
      'outWeight', ...(l.outBias ? ['outBias'] : []), ...(l.qkNorm ? ['qNorm', 'kNorm'] : []),
      'norm1.weight', 'norm2.weight', ...(l.norm === 'layernorm' && biases ? ['norm1.bias', 'norm2.bias'] : []),
      ...(l.normPlacement === 'sandwich' ? ['norm3.weight', 'norm4.weight', ...(l.norm === 'layernorm' ? ['norm3.bias', 'norm4.bias'] : [])] : []),
      'linear1.weight', 'linear2.weight', ...(l.ffnGated ? ['gate.weight'] : []),
      ...(l.ffnBias ? ['linear1.bias', 'linear2.bias', ...(l.ffnGated ? ['gate.bias'] : [])] : []),
    ];
    for (let i = 0; i < layers.length; i++) {
      for (const w of needLayer) {
        if (i === 0 && s.firstAttnNorm === false && w.startsWith('norm1.')) continue; // ModernBERT: none there
        if (layers[i][w] === undefined) return `${f.layerPrefix}${i}.${name(f.layerWeights, w)}`;
      }
    }
    if (s.finalNorm) for (const w of Object.values(f.final)) if (!final[w] && (biases || w !== 'bias')) return name(f.final, w);
    return null;
  }

  /**
   * inputIds [batch, L] (or [L]), or tokenizer.encode's whole result (its mask and token types
   * taken with its ids) -> {lastHiddenState [batch, L, dim], hiddenStates (with
   * outputHiddenStates: the embeddings' output and each layer's, numLayers + 1 tensors; with a
   * final norm the last is after it, as in transformers), attentions (with outputAttentions:
   * per layer [batch, heads, L, cacheLength + L])}. attentionMask [batch, L]: 1 = token, 0 = padding.
   * Positions are 0..L-1 (RoBERTa: counted past the padding id) unless positionIds are given.
   * useCache (causal models): attend over the KV cache too and append this call's keys and values;
   * positions continue from the cache, per row from the mask when one was given (cumsum(mask) - 1,
   * padding at 1, as generation counts left-padded rows); attentionMask then covers the cached
   * positions and these ([batch, cacheLength + L]), or only these ([batch, L]).
   * One call into the C++ model; each output asked for is copied out once.
   */
  forward(inputIds, options) {
    const fn = 'forward';
    const o = checkOptions(fn, options, ['attentionMask', 'tokenTypeIds', 'positionIds', 'outputAttentions', 'outputHiddenStates',
      'outputLogits', 'lastTokenOnly', 'useCache', 'pastKeyValues', 'pooling', 'normalize']);
    // tokenizer.encode's whole result: its ids, its mask and (for models with token types) its
    // token types; options given beside it win.
    if (isEncoding(inputIds)) {
      const enc = inputIds;
      inputIds = enc.inputIds;
      if (o.attentionMask === undefined && enc.attentionMask !== undefined) o.attentionMask = enc.attentionMask;
      if (o.tokenTypeIds === undefined && enc.tokenTypeIds !== undefined && this.spec.embeddings.typeVocabSize > 0) o.tokenTypeIds = enc.tokenTypeIds;
    }
    const {
      attentionMask, tokenTypeIds, positionIds, outputAttentions = false, outputHiddenStates = false, outputLogits = false,
      lastTokenOnly = false, useCache = false, pastKeyValues, pooling, normalize = false,
    } = o;
    for (const [k, v] of Object.entries({ outputAttentions, outputHiddenStates, outputLogits, lastTokenOnly, useCache, normalize })) boolean(fn, k, v);
    this._live(fn);
    const logits = outputLogits || lastTokenOnly;
    if (logits) this._checkHead(fn, lastTokenOnly ? 'lastTokenOnly' : 'outputLogits');
    if (pooling !== undefined) this._checkPooling(fn, pooling);
    if (pooling !== undefined && useCache) {
      throw new AttnkitError(`${fn}: pooling reads the whole sequence; it does not combine with useCache`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'pooling' });
    }
    if (normalize && pooling === undefined) {
      throw new AttnkitError(`${fn}: normalize applies to a pooled embedding; pass pooling ('mean', 'cls', 'last' or 'pooler')`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'normalize' });
    }
    if (pastKeyValues !== undefined && !useCache) {
      throw new AttnkitError(`${fn}: pastKeyValues continues a KV cache; pass useCache: true with it`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'pastKeyValues' });
    }
    if (useCache && !this.spec.layer.causal) {
      throw new AttnkitError(`${fn}: useCache: ${this.spec.family} models attend both ways, so there is nothing to cache ` +
        '(the KV cache serves causal models: GPT-2, LLaMA)', { code: 'ERR_INVALID_ARGUMENT', argument: 'useCache' });
    }
    const ids = idsInput(fn, 'inputIds', inputIds);
    if (ids.dims.length < 1 || ids.dims.length > 2) {
      throw new AttnkitError(`${fn}: inputIds must have dims [length] or [batch, length], got ${JSON.stringify(ids.dims)}`,
        { code: 'ERR_SHAPE_MISMATCH', argument: 'inputIds' });
    }
    const [B, L] = ids.dims.length === 2 ? ids.dims : [1, ids.dims[0]];
    if (pooling !== undefined && attentionMask === undefined) this._checkUnpadded(fn, inputIds, ids, B, L);
    const mask = attentionMask === undefined ? null : idsInput(fn, 'attentionMask', attentionMask).data;
    const types = tokenTypeIds === undefined ? null : idsInput(fn, 'tokenTypeIds', tokenTypeIds).data;
    const positions = positionIds === undefined ? null : idsInput(fn, 'positionIds', positionIds).data;
    if (useCache) {
      this._checkCacheFree(fn);
      // With pastKeyValues, the step is checked against that cache before it replaces the model's
      // (all or nothing); the C++ model then checks the step again against what it holds.
      if (pastKeyValues !== undefined) {
        const start = this._checkCache(fn, 'pastKeyValues', pastKeyValues);
        this._checkStep(fn, B, L, mask, start);
        this._putCache(fn, 'pastKeyValues', start);
      }
    }
    const wire = writeForwardOptions({
      batch: B, length: L, typesLength: types?.length ?? 0, positionsLength: positions?.length ?? 0,
      maskLength: mask?.length ?? 0, useCache, wantHidden: outputHiddenStates, wantAttentions: outputAttentions,
      logits: lastTokenOnly ? 'last' : logits ? 'all' : 'none', pooling: pooling ?? 'none', normalize,
    });
    const ak = this._ak;
    const out = ak._withInputs([ids.data, types, positions, mask, wire], ([pi, pt, pp, pm, pw]) =>
      ak._callSlots(fn, '_modelForward', [this._handle, pi, pt, pp, pm, pw], 5));
    const D = this._config.dim, H = this._config.numHeads, V = this.spec.embeddings.vocabSize;
    const result = { lastHiddenState: new Tensor('float32', out[0], [B, L, D]) };
    if (outputHiddenStates) {
      const n = B * L * D;
      result.hiddenStates = Array.from({ length: this.numLayers + 1 }, (_, i) =>
        new Tensor('float32', out[1].subarray(i * n, (i + 1) * n), [B, L, D]));
    }
    if (outputAttentions) {
      const n = out[2].length / this.numLayers, T = n / (B * H * L);
      result.attentions = Array.from({ length: this.numLayers }, (_, i) =>
        new Tensor('float32', out[2].subarray(i * n, (i + 1) * n), [B, H, L, T]));
    }
    const h = this.spec.head;
    if (logits && h?.task === 'span') {
      // Question answering: qa_outputs' two columns, start and end.
      const start = new Float32Array(B * L), end = new Float32Array(B * L);
      for (let i = 0; i < B * L; i++) start[i] = out[3][2 * i], end[i] = out[3][2 * i + 1];
      result.startLogits = new Tensor('float32', start, [B, L]);
      result.endLogits = new Tensor('float32', end, [B, L]);
    } else if (logits && h) {
      result.logits = new Tensor('float32', out[3], h.task === 'sequence' ? [B, h.numLabels] : [B, L, h.numLabels]);
    } else if (logits) {
      result.logits = new Tensor('float32', out[3], lastTokenOnly ? [B, V] : [B, L, V]);
    }
    if (pooling !== undefined) result.pooled = new Tensor('float32', out[4], [B, D]);
    return result;
  }

  // A cached step's fit to a cache {batch, length} it will continue: its batch, the context, the mask.
  _checkStep(fn, B, L, mask, c) {
    const past = c.length, total = past + L;
    if (c.start + total > this.contextSize) {
      throw new AttnkitError(`${fn}: the KV cache holds ${c.start + past} positions and inputIds adds ${L}; the model has ` +
        `${this.contextSize} (config.json) (call resetCache() to start over)`, { code: 'ERR_OUT_OF_RANGE', argument: 'inputIds' });
    }
    if (past > 0 && c.batch !== B) {
      throw new AttnkitError(`${fn}: the KV cache holds a batch of ${c.batch}, got inputIds with batch ${B} (call resetCache() to start over)`,
        { code: 'ERR_SHAPE_MISMATCH', argument: 'inputIds' });
    }
    if (total > this.contextSize) {
      throw new AttnkitError(`${fn}: the KV cache holds ${past} positions and inputIds adds ${L}; the model has ${this.contextSize} ` +
        '(config.json) (call resetCache() to start over)', { code: 'ERR_OUT_OF_RANGE', argument: 'inputIds' });
    }
    if (mask && mask.length !== B * L && mask.length !== B * total) {
      throw new AttnkitError(`${fn}: with useCache, attentionMask must have [batch, cacheLength + length] = ${B * total} or ` +
        `[batch, length] = ${B * L} elements, got ${mask.length}`, { code: 'ERR_SHAPE_MISMATCH', argument: 'attentionMask' });
    }
  }

  // Pooling without a mask counts every position: a padded batch would pool its pads too. Ids
  // that tokenizer.encode padded say so; other ids holding config.json's pad_token_id are taken
  // for padding (an attentionMask of ones says they are tokens).
  _checkUnpadded(fn, given, ids, B, L) {
    const fix = 'pass its attentionMask (or the whole encoding: model.forward(encoding, options))';
    if (given?.[PADDED]) {
      throw new AttnkitError(`${fn}: pooling a padded batch without its mask would average the pads in; ${fix}`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'attentionMask' });
    }
    const pad = this.spec.padTokenId;
    if (!Number.isInteger(pad)) return;
    const at = ids.data.indexOf(pad);
    if (at >= 0) {
      throw new AttnkitError(`${fn}: inputIds[${Math.floor(at / L)}] holds the pad id ${pad} (config.json's pad_token_id) and no ` +
        `attentionMask was given: pooling would count the pads; ${fix}, or a mask of ones if those are tokens`,
      { code: 'ERR_INVALID_ARGUMENT', argument: 'attentionMask' });
    }
  }

  _checkPooling(fn, pooling) {
    if (!POOLING.includes(pooling)) {
      throw new AttnkitError(`${fn}: pooling must be 'mean', 'cls', 'last' or 'pooler', got ${describe(pooling)}`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'pooling' });
    }
    if (pooling === 'pooler' && !this._ak._m._modelHasHead(this._handle, PART.pooler)) {
      throw new AttnkitError(`${fn}: pooling 'pooler' needs BERT's pooler.dense weights, which ${this._family.pooler ? 'the weights lack' :
        `${this.spec.family} models do not have`}; use 'mean' or 'cls'`, { code: 'ERR_INVALID_ARGUMENT', argument: 'pooling' });
    }
  }

  _checkHead(fn, argument) {
    const has = (part) => this._ak._m._modelHasHead(this._handle, PART[part]) === 1;
    if (this.spec.head) {
      if (argument === 'generate') {
        throw new AttnkitError(`${fn}: this is a ${this.spec.architecture} (a ${this.spec.head.task}-classification head); ` +
          'generate needs a causal language model', { code: 'ERR_INVALID_ARGUMENT', argument: 'model' });
      }
      return;
    }
    if (this._family.mlm) {
      if (!has('mlm')) {
        throw new AttnkitError(`${fn}: ${argument}: the weights have no masked-LM head (BertForMaskedLM's cls.predictions.* or ` +
          "RobertaForMaskedLM's lm_head.*), so there are no logits", { code: 'ERR_INVALID_ARGUMENT', argument });
      }
      return;
    }
    if (!this.spec.lmHead) {
      throw new AttnkitError(`${fn}: ${argument}: ${this.spec.family} models have no language-model head in attnkit yet ` +
        '(GPT-2 and LLaMA do)', { code: 'ERR_INVALID_ARGUMENT', argument });
    }
    if (!has('lmHead')) {
      throw new AttnkitError(`${fn}: ${argument}: the weights had no lm_head.weight (config.json's tie_word_embeddings ` +
        'is false), so there are no logits', { code: 'ERR_INVALID_ARGUMENT', argument: 'lm_head.weight' });
    }
  }

  /**
   * Generates up to maxNewTokens after inputIds ([L] or a left-padded [batch, L] with
   * attentionMask), with the KV cache: greedy by default, sampling with doSample. Resolves to
   * {sequences, logits?, scores?, probabilities?}. See web/src/models/generate.js and the README.
   */
  generate(inputIds, options) {
    return generate(this, inputIds, options);
  }

  /** generate from text: prompt (or prompts) -> {text, sequences, ...}; onToken streams text. */
  generateText(tokenizer, prompt, options) {
    return generateText(this, tokenizer, prompt, options);
  }

  /** Frees the model's wasm memory (weights and KV cache). */
  dispose() {
    super.dispose();
  }
}

/**
 * A model from a Hugging Face folder: `source` is a base URL, a folder path (Node), picked Files,
 * or an object of file name -> contents; config.json and model.safetensors (or
 * model.safetensors.index.json and its shards) are read from it. The older form, one object
 * {config, weights, onProgress}, still works. onProgress(loadedBytes, totalBytes or undefined)
 * counts every weights file.
 */
export async function loadModel(ak, source, options) {
  const fn = 'Model.fromPretrained';
  if (source && typeof source === 'object' && Object.hasOwn(source, 'config') && !Object.hasOwn(source, 'config.json')) {
    if (options !== undefined) {
      throw new AttnkitError(`${fn}: give options inside the {config, weights, onProgress} object, or use fromPretrained(source, options)`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'options' });
    }
    return loadModelFrom(ak, checkOptions(fn, source, ['config', 'weights', 'onProgress']));
  }
  // A .gguf (a URL or path, a File, bytes, a Response): llama.cpp's file, read by ./gguf.js.
  const read = isGgufSource(source) ? readGgufCheckpoint : readCheckpoint;
  const { spec, tensors } = await read(ak, source, options);
  return buildModel(ak, spec, tensors);
}

function buildModel(ak, spec, state) {
  // A checkpoint too small for its config.json is refused before the model is allocated: memory
  // stays a small multiple of what was read (a 600-byte config may otherwise ask for gigabytes
  // before its weights are found wanting). Every real checkpoint holds its projection and
  // embedding matrices, well over half of the model's values.
  const tensors = tensorsOf(state);
  if (tensors && typeof tensors === 'object') {
    let given = 0;
    for (const t of Object.values(tensors)) given += t?.size ?? t?.data?.length ?? t?.length ?? 0;
    const need = modelFloats(spec);
    if (given < need / 2) {
      throw new AttnkitError(`Model.fromPretrained: config.json describes a model of ${need} values, but the checkpoint holds ` +
        `${given}: it is not this model's checkpoint (or the config's sizes are wrong)`, { code: 'ERR_SHAPE_MISMATCH', argument: 'weights' });
    }
  }
  const model = new Model(ak, spec);
  try {
    model.setWeights(state);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}

// The object form: config (config.json text, object or Response) and weights (.safetensors bytes
// or Response, or a loaded state dict).
async function loadModelFrom(ak, { config, weights, onProgress }) {
  const spec = await modelSpec(ak, config);
  const state = weights instanceof ArrayBuffer || ArrayBuffer.isView(weights) ||
    (typeof Response === 'function' && weights instanceof Response)
    ? await loadSafetensors(ak, weights, { onProgress })
    : weights;
  return buildModel(ak, spec, state);
}

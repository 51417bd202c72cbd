// A Transformer model from Hugging Face files: config.json (mapped by the C++ loaders module,
// src/attnkit/models/model_config.hpp) and .safetensors weights under their Hugging Face names, built from
// an Embeddings module, EncoderLayers and a final norm. The families' weight names are in families.js,
// the reading of a checkpoint folder in checkpoint.js.
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { boolean, describe, idsInput, options as checkOptions } from '../runtime/args.js';
import { Embeddings } from '../nn/embeddings.js';
import { paddingMaskFromAttentionMask } from '../ops/masks.js';
import { EncoderLayer } from '../nn/encoder_layer.js';
import { loadSafetensors } from '../formats/safetensors.js';
import { generate, generateText } from './generate.js';
import { FAMILIES, modelSpec } from './families.js';
import { readCheckpoint } from './checkpoint.js';

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

export class Model {
  /**
   * spec: from modelSpec (config.json). Weights start unset; call setWeights with a Hugging Face
   * state dict (or use Model.fromPretrained / ak.loadModel).
   */
  constructor(ak, spec) {
    this._ak = ak;
    this.spec = spec;
    this._family = FAMILIES[spec.family];
    if (!this._family) {
      throw new AttnkitError(`Model: unsupported family ${describe(spec.family)}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'family' });
    }
    this._modules = [];
    // Every float32 the modules will hold, checked against the heap before the first is allocated.
    const e = spec.embeddings, D = spec.layer.dim;
    ak._raw('Model', '_heapCheck', [4 * modelFloats(spec)]);
    try {
      this.embeddings = this._own(new Embeddings(ak, spec.embeddings));
      this.layers = [];
      const hd = spec.layer.headDim;
      for (let i = 0; i < spec.numLayers; i++) {
        const scale = spec.layerScale === 'inverseLayerIdx' ? (spec.layer.scale ?? 1 / Math.sqrt(hd)) / (i + 1) : spec.layer.scale;
        this.layers.push(this._own(new EncoderLayer(ak, { ...spec.layer, scale })));
      }
      // The causal-LM head, an output embedding: the word table itself (tied) or its own
      // [vocab, dim] table (lm_head.weight), whose logits are x @ table.T.
      this._head = spec.lmHead === 'tied' ? this.embeddings
        : spec.lmHead === 'separate' ? this._own(new Embeddings(ak, { vocabSize: e.vocabSize, dim: D, positional: 'none', norm: 'none' }))
          : null;
      this._headSet = spec.lmHead === 'tied';
    } catch (e) {
      this.dispose();
      throw e;
    }
    this._final = spec.finalNorm
      ? { weight: new Float32Array(D).fill(1), bias: spec.finalNorm.norm === 'layernorm' ? new Float32Array(D) : undefined }
      : null;
    /** Tensors of the last setWeights that no module takes. */
    this.unusedWeights = [];
    this._mlm = null; // BERT's / RoBERTa's masked-LM head weights, when the checkpoint has them
    this._pooler = null;
    // The KV cache of every layer holds at most the model's positions (n_positions,
    // max_position_embeddings): its memory is bounded by 2 * layers * batch * kvHeads * headDim * 4
    // bytes per position. _cache: null, or {batch, length, mask (Int32Array [batch, length] once a
    // mask was given, else null)}.
    this.contextSize = spec.embeddings.maxPositions;
    for (const layer of this.layers) layer._limitCache(this.contextSize);
    this._cache = null;
    // generate() queues its calls on _generateQueue and owns the cache while _generating.
    this._generateQueue = null;
    this._generating = false;
    this._inGenerateStep = false;
  }

  /** Positions held by the KV cache (0 when empty). */
  get cacheLength() {
    return this._cache?.length ?? 0;
  }

  /** Bytes of the layers' KV cache storage (kept by resetCache for reuse; freed by dispose). */
  get cacheBytes() {
    let bytes = 0;
    for (const layer of this.layers) bytes += layer.cacheBytes;
    return bytes;
  }

  /**
   * A copy of the KV cache: {batch, length, mask (Int32Array [batch, length] or null: every
   * position a token), layers: per layer {key, value} Tensors [batch, kvHeads, length, headDim]}.
   * loadCache (or forward's pastKeyValues) puts it back, here or in a model of the same shape: to
   * branch a decoding, or to keep a prompt's cache and start from it again.
   */
  saveCache() {
    const fn = 'saveCache';
    if (!this.embeddings) throw new AttnkitError(`${fn}: this Model was disposed`, { code: 'ERR_DISPOSED' });
    this._checkCacheFree(fn);
    const c = this._cache;
    const layers = this.layers.map((layer) => {
      const r = layer._readCache(fn);
      const dims = [r.batch, this.spec.layer.numKvHeads || this.spec.layer.numHeads, r.length, this.spec.layer.headDim];
      return { key: new Tensor('float32', r.key, dims), value: new Tensor('float32', r.value, dims) };
    });
    return { batch: c?.batch ?? 0, length: c?.length ?? 0, mask: c?.mask ? c.mask.slice() : null, layers };
  }

  /** Replaces the KV cache with one saveCache returned (see saveCache); returns the model. */
  loadCache(cache) {
    const fn = 'loadCache';
    if (!this.embeddings) throw new AttnkitError(`${fn}: this Model was disposed`, { code: 'ERR_DISPOSED' });
    this._checkCacheFree(fn);
    this._putCache(fn, 'cache', this._checkCache(fn, 'cache', cache));
    return this;
  }

  // A cache for loadCache / pastKeyValues, checked here as far as JavaScript can (the layers'
  // shapes are checked by C++ as it copies): {batch, length, mask, data: per layer [key, value]}.
  _checkCache(fn, name, cache) {
    const bad = (what, code = 'ERR_INVALID_ARGUMENT') => new AttnkitError(`${fn}: ${name} ${what}`, { code, argument: name });
    if (cache === null || typeof cache !== 'object') throw bad(`must be what saveCache() returned, got ${describe(cache)}`);
    const { batch, length, mask = null, layers } = cache;
    if (!Number.isInteger(batch) || batch < 0 || !Number.isInteger(length) || length < 0) {
      throw bad(`must have integer batch and length >= 0, got batch ${describe(batch)}, length ${describe(length)}`);
    }
    if (length > this.contextSize) throw bad(`holds ${length} positions; this model has ${this.contextSize}`, 'ERR_OUT_OF_RANGE');
    if (!Array.isArray(layers) || layers.length !== this.layers.length) {
      throw bad(`must have one {key, value} per layer (${this.layers.length}), got ${Array.isArray(layers) ? layers.length : describe(layers)}`, 'ERR_SHAPE_MISMATCH');
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
    return { batch, length, mask, data };
  }

  // Puts a checked cache in every layer, all or nothing: a layer that refuses it (its shapes)
  // leaves every layer's cache empty.
  _putCache(fn, name, { batch, length, mask, data }) {
    try {
      data.forEach(([k, v], i) => {
        if (length === 0) this.layers[i].resetCache();
        else this.layers[i]._writeCache(fn, batch, length, k, v);
      });
    } catch (e) {
      this.resetCache();
      // The C++ side names the argument pastKeyValues; loadCache's is `cache`.
      if (typeof e.argument === 'string' && e.argument.startsWith('pastKeyValues')) e.argument = name + e.argument.slice('pastKeyValues'.length);
      throw e;
    }
    this._cache = length === 0 ? null : { batch, length, mask: mask ? mask.slice() : null };
  }

  /** Empties the KV cache of every layer (forward with useCache then starts at position 0). */
  resetCache() {
    this._checkCacheFree('resetCache');
    for (const layer of this.layers) layer.resetCache();
    this._cache = null;
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

  _own(m) {
    this._modules.push(m);
    return m;
  }

  /**
   * Hugging Face state dict {name: Float32Array | Tensor} (or loadSafetensors' result). Every
   * weight the model needs must be present; tensors it does not use are listed in unusedWeights.
   */
  setWeights(weights) {
    const fn = 'setWeights';
    const tensors = tensorsOf(weights);
    if (!tensors || typeof tensors !== 'object') {
      throw new AttnkitError(`${fn}: weights must be a state dict object, got ${describe(weights)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'weights',
      });
    }
    const f = this._family;
    const own = (table, key) => (Object.hasOwn(table, key) ? table[key] : undefined);
    const emb = {}, final = {}, head = {}, mlm = {}, pooler = {}, layers = this.layers.map(() => ({}));
    const source = new Map(); // the module and our name -> the checkpoint's name, for messages
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
    for (const [full, value] of Object.entries(tensors)) {
      const prefix = f.prefixes.find((p) => full.startsWith(p));
      const name = prefix ? full.slice(prefix.length) : full;
      if (f.ignore.test(name)) continue;
      const m = f.layer.exec(name);
      const layerWeight = m && own(f.layerWeights, m[2]);
      if (own(f.embeddings, name)) put(emb, f.embeddings[name], value, full, 'embeddings');
      else if (own(f.final, name) && this._final) put(final, f.final[name], value, full, 'final');
      else if (m && layerWeight) {
        // Layer numbers are written as Hugging Face writes them: no leading zeros, none past the config's.
        const i = Number(m[1]);
        if (String(i) !== m[1] || i >= this.layers.length) {
          throw new AttnkitError(`${fn}: '${full}' names layer ${m[1]}, but config.json gives ${this.layers.length} layers ` +
            `(${f.layerPrefix}0 .. ${f.layerPrefix}${this.layers.length - 1})`, { code: 'ERR_INVALID_ARGUMENT', argument: full });
        }
        put(layers[i], layerWeight, value, full, `layer ${i}`);
      } else if (name === 'lm_head.weight' && this.spec.lmHead === 'separate') put(head, 'word', value, full, 'lm_head');
      else if (f.mlm && own(f.mlm, name)) put(mlm, f.mlm[name], value, full, 'the masked-LM head');
      else if (f.pooler && own(f.pooler, name)) put(pooler, f.pooler[name], value, full, 'the pooler');
      else if (f.tiedDecoder?.test(name)) continue;
      else unused.push(full);
    }
    const missing = this._missing(emb, layers, final);
    if (missing) {
      throw new AttnkitError(`${fn}: the weights lack ${missing} (${Object.keys(tensors).length} tensors given)`, {
        code: 'ERR_INVALID_ARGUMENT', argument: missing,
      });
    }
    // Errors from the modules name our weight and our options; say the checkpoint's tensor and
    // the config.json settings instead.
    const keys = f.configKeys;
    const named = (where, check) => {
      try {
        return check();
      } catch (e) {
        const full = source.get(`${where}/${e.argument}`);
        if (full && e instanceof AttnkitError) {
          const text = e.message.replace(/^setWeights: \S+ /, '').replace(/\b(numKvHeads|numHeads|headDim|ffnDim|vocabSize|maxPositions|typeVocabSize|dim)\b/g, (k) => keys[k] ?? k);
          throw new AttnkitError(`${fn}: '${full}' ${text}`, { code: e.code, argument: full });
        }
        throw e;
      }
    };
    // Every module's weights are checked before any is written.
    const plans = [named('embeddings', () => this.embeddings._checkWeights(emb)),
      ...this.layers.map((l, i) => named(`layer ${i}`, () => l._checkWeights(layers[i])))];
    const headPlan = head.word ? named('lm_head', () => this._head._checkWeights(head)) : null;
    const D = this.spec.layer.dim, V = this.spec.embeddings.vocabSize;
    // The weights kept in JavaScript (final norm, heads): name -> length; null when one is missing
    // (a head is there only with all its tensors; _missing has checked the final norm's).
    const vectors = (where, label, given, dims) => {
      const out = {};
      for (const [k, n] of Object.entries(dims)) {
        if (given[k] === undefined) return null;
        const t = given[k]?.data ?? given[k];
        if (!(t instanceof Float32Array) || t.length !== n) {
          throw new AttnkitError(`${fn}: ${label}'s ${k} must be a Float32Array of ${n}, got ${describe(t)}`,
            { code: 'ERR_SHAPE_MISMATCH', argument: source.get(`${where}/${k}`) ?? k });
        }
        out[k] = t;
      }
      return out;
    };
    const finals = this._final &&
      vectors('final', 'the final norm', final, Object.fromEntries(Object.values(f.final).map((k) => [k, D])));
    const mlmWeights = vectors('the masked-LM head', 'the masked-LM head', mlm,
      { denseWeight: D * D, denseBias: D, normWeight: D, normBias: D, bias: V });
    const poolerWeights = vectors('the pooler', 'the pooler', pooler, { weight: D * D, bias: D });
    // All checked: write.
    [this.embeddings, ...this.layers].forEach((m, i) => m._writeWeights(plans[i]));
    if (finals) Object.assign(this._final, finals);
    if (headPlan) this._head._writeWeights(headPlan);
    this._headSet = this.spec.lmHead === 'tied' || headPlan !== null;
    this._mlm = mlmWeights;
    this._pooler = poolerWeights;
    // Tensors of a head given in part are listed as unused (the head stays off).
    if (!mlmWeights) unused.push(...Object.keys(mlm).map((k) => source.get(`the masked-LM head/${k}`)));
    if (!poolerWeights) unused.push(...Object.keys(pooler).map((k) => source.get(`the pooler/${k}`)));
    this.unusedWeights = unused;
    return this;
  }

  // The first Hugging Face name the model needs and did not get, or null.
  _missing(emb, layers, final) {
    const f = this._family, s = this.spec;
    const name = (table, ours) => Object.keys(table).find((k) => table[k] === ours);
    const needEmb = ['word', ...(s.embeddings.positional === 'learned' ? ['position'] : []),
      ...(s.embeddings.typeVocabSize > 0 ? ['tokenType'] : []), ...(s.embeddings.norm === 'layernorm' ? ['normWeight', 'normBias'] : [])];
    for (const w of needEmb) if (!emb[w]) return name(f.embeddings, w);
    const l = s.layer;
    const fused = Object.values(f.layerWeights).includes('inProjWeight'); // GPT-2's c_attn
    const needLayer = [
      ...(fused ? ['inProjWeight', ...(l.bias ? ['inProjBias'] : [])]
        : ['qWeight', 'kWeight', 'vWeight', ...(l.bias ? ['qBias', 'kBias', 'vBias'] : [])]),
      'outWeight', ...(l.outBias ? ['outBias'] : []),
      'norm1.weight', 'norm2.weight', ...(l.norm === 'layernorm' ? ['norm1.bias', 'norm2.bias'] : []),
      'linear1.weight', 'linear2.weight', ...(l.ffnGated ? ['gate.weight'] : []),
      ...(l.ffnBias ? ['linear1.bias', 'linear2.bias', ...(l.ffnGated ? ['gate.bias'] : [])] : []),
    ];
    for (let i = 0; i < layers.length; i++) {
      for (const w of needLayer) if (layers[i][w] === undefined) return `${f.layerPrefix}${i}.${name(f.layerWeights, w)}`;
    }
    if (this._final) for (const w of Object.values(f.final)) if (!final[w]) return name(f.final, w);
    return null;
  }

  /**
   * inputIds [batch, L] (or [L]) -> {lastHiddenState [batch, L, dim], hiddenStates (with
   * outputHiddenStates: the embeddings' output and each layer's, numLayers + 1 tensors; with a
   * final norm the last is after it, as in transformers), attentions (with outputAttentions:
   * per layer [batch, heads, L, cacheLength + L])}. attentionMask [batch, L]: 1 = token, 0 = padding.
   * Positions are 0..L-1 (RoBERTa: counted past the padding id) unless positionIds are given.
   * useCache (causal models): attend over the KV cache too and append this call's keys and values;
   * positions continue from the cache, per row from the mask when one was given (cumsum(mask) - 1,
   * padding at 1, as generation counts left-padded rows); attentionMask then covers the cached
   * positions and these ([batch, cacheLength + L]), or only these ([batch, L]).
   */
  forward(inputIds, options) {
    const fn = 'forward';
    const {
      attentionMask, tokenTypeIds, positionIds, outputAttentions = false, outputHiddenStates = false, outputLogits = false,
      lastTokenOnly = false, useCache = false, pastKeyValues, pooling, normalize = false,
    } = checkOptions(fn, options, ['attentionMask', 'tokenTypeIds', 'positionIds', 'outputAttentions', 'outputHiddenStates',
      'outputLogits', 'lastTokenOnly', 'useCache', 'pastKeyValues', 'pooling', 'normalize']);
    for (const [k, v] of Object.entries({ outputAttentions, outputHiddenStates, outputLogits, lastTokenOnly, useCache, normalize })) boolean(fn, k, v);
    if (!this.embeddings) throw new AttnkitError(`${fn}: this Model was disposed`, { code: 'ERR_DISPOSED' });
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
    const ids = idsInput(fn, 'inputIds', inputIds);
    const [B, L] = ids.dims.length === 2 ? ids.dims : [1, ids.dims[0]];
    const given = attentionMask === undefined ? undefined : idsInput(fn, 'attentionMask', attentionMask).data;
    let positions = positionIds;
    let mask = given === undefined ? undefined : { data: given, dims: [B, L] };
    let cache = null;
    if (pastKeyValues !== undefined && !useCache) {
      throw new AttnkitError(`${fn}: pastKeyValues continues a KV cache; pass useCache: true with it`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'pastKeyValues' });
    }
    if (useCache) {
      this._checkCacheFree(fn);
      // With pastKeyValues, the step is checked against that cache before it replaces the model's.
      const start = pastKeyValues === undefined ? null : this._checkCache(fn, 'pastKeyValues', pastKeyValues);
      cache = this._cacheStep(fn, B, L, given, start ? (start.length ? start : null) : this._cache);
      if (start) this._putCache(fn, 'pastKeyValues', start);
      mask = cache.mask ? { data: cache.mask, dims: [B, cache.total] } : undefined;
      if (positions === undefined) positions = cache.positions;
    } else if (positions === undefined && this.spec.positionIds === 'padding') {
      positions = this._ak.positionIds(B, L, { inputIds: ids.data, paddingIdx: this.spec.embeddings.paddingIdx });
    }
    const past = cache ? cache.total - L : 0;
    const learned = this.spec.embeddings.positional === 'learned';
    let x = this.embeddings.forward({ data: ids.data, dims: [B, L] }, {
      tokenTypeIds, positionIds: learned ? positions : undefined, pastLength: learned && positions === undefined ? past : 0,
    });
    const hidden = [], attentions = [];
    const rope = this.spec.layer.positional === 'rotary' ? positions : undefined;
    // The padding mask, made once for every layer.
    const pad = mask === undefined ? undefined : paddingMaskFromAttentionMask(this._ak, mask);
    try {
      for (const layer of this.layers) {
        if (outputHiddenStates) hidden.push(x);
        const r = layer.forward(x, { mask: pad, positionIds: rope, returnWeights: outputAttentions, useCache });
        if (outputAttentions) {
          attentions.push(r.weights);
          x = r.output;
        } else {
          x = r;
        }
      }
    } catch (e) {
      // A failed step leaves every layer's cache as it was before the call.
      if (cache) for (const layer of this.layers) layer._truncateCache(past);
      throw e;
    }
    if (cache) this._cache = { batch: B, length: cache.total, mask: cache.mask };
    if (this._final) {
      x = this.spec.finalNorm.norm === 'rmsnorm'
        ? this._ak.rmsNorm(x, { weight: this._final.weight, eps: this.spec.finalNorm.eps })
        : this._ak.layerNorm(x, { gamma: this._final.weight, beta: this._final.bias, eps: this.spec.finalNorm.eps });
    }
    if (outputHiddenStates) hidden.push(x);
    const result = { lastHiddenState: new Tensor('float32', x.data, [B, L, this.spec.layer.dim]) };
    if (outputHiddenStates) result.hiddenStates = hidden;
    if (outputAttentions) result.attentions = attentions;
    if (logits) result.logits = this._logits(fn, x.data, B, L, lastTokenOnly);
    if (pooling !== undefined) result.pooled = this._pool(x.data, B, L, pooling, normalize, given ?? null);
    return result;
  }

  _checkPooling(fn, pooling) {
    if (!['mean', 'cls', 'last', 'pooler'].includes(pooling)) {
      throw new AttnkitError(`${fn}: pooling must be 'mean', 'cls', 'last' or 'pooler', got ${describe(pooling)}`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'pooling' });
    }
    if (pooling === 'pooler' && !this._pooler) {
      throw new AttnkitError(`${fn}: pooling 'pooler' needs BERT's pooler.dense weights, which ${this._family.pooler ? 'the weights lack' :
        `${this.spec.family} models do not have`}; use 'mean' or 'cls'`, { code: 'ERR_INVALID_ARGUMENT', argument: 'pooling' });
    }
  }

  // Sentence embeddings [B, D] from the last hidden states, as sentence-transformers pools: the
  // mean over the attention mask (sum(h * m) / max(sum(m), 1e-9)), the first token, each row's
  // last real token, or BERT's pooler; normalize: divided by max(L2 norm, 1e-12) (F.normalize).
  _pool(h, B, L, pooling, normalize, mask) {
    const D = this.spec.layer.dim;
    let out = new Float32Array(B * D);
    for (let b = 0; b < B; b++) {
      const row = out.subarray(b * D, (b + 1) * D);
      const at = (i) => h.subarray((b * L + i) * D, (b * L + i + 1) * D);
      const on = (i) => !mask || mask[b * L + i] !== 0;
      if (pooling === 'mean') {
        const sum = new Float64Array(D);
        let n = 0;
        for (let i = 0; i < L; i++) {
          if (!on(i)) continue;
          n++;
          const v = at(i);
          for (let d = 0; d < D; d++) sum[d] += v[d];
        }
        for (let d = 0; d < D; d++) row[d] = sum[d] / Math.max(n, 1e-9);
      } else if (pooling === 'last') {
        let i = L - 1;
        while (i > 0 && !on(i)) i--;
        row.set(at(i));
      } else {
        row.set(at(0));
      }
    }
    if (pooling === 'pooler') {
      out = this._ak.linear(new Tensor('float32', out, [B, D]), new Tensor('float32', this._pooler.weight, [D, D]), { bias: this._pooler.bias }).data;
      for (let i = 0; i < out.length; i++) out[i] = Math.tanh(out[i]);
    }
    if (normalize) {
      for (let b = 0; b < B; b++) {
        const row = out.subarray(b * D, (b + 1) * D);
        let ss = 0;
        for (const v of row) ss += v * v;
        const n = Math.max(Math.sqrt(ss), 1e-12);
        for (let d = 0; d < D; d++) row[d] /= n;
      }
    }
    return new Tensor('float32', out, [B, D]);
  }

  // A cached call's checks and inputs, continuing cache c ({batch, length, mask} or null): the
  // whole mask [B, total] (null while every position is a token) and, with padding, each new
  // token's position cumsum(mask) - 1 (padding at 1).
  _cacheStep(fn, B, L, given, c) {
    if (!this.spec.layer.causal) {
      throw new AttnkitError(`${fn}: useCache: ${this.spec.family} models attend both ways, so there is nothing to cache ` +
        '(the KV cache serves causal models: GPT-2, LLaMA)', { code: 'ERR_INVALID_ARGUMENT', argument: 'useCache' });
    }
    const past = c?.length ?? 0, total = past + L;
    if (c && c.batch !== B) {
      throw new AttnkitError(`${fn}: the KV cache holds a batch of ${c.batch}, got inputIds with batch ${B} (call resetCache() to start over)`,
        { code: 'ERR_SHAPE_MISMATCH', argument: 'inputIds' });
    }
    if (total > this.contextSize) {
      throw new AttnkitError(`${fn}: the KV cache holds ${past} positions and inputIds adds ${L}; the model has ${this.contextSize} ` +
        '(config.json) (call resetCache() to start over)', { code: 'ERR_OUT_OF_RANGE', argument: 'inputIds' });
    }
    let mask = null;
    if (given !== undefined) {
      if (given.length !== B * L && given.length !== B * total) {
        throw new AttnkitError(`${fn}: with useCache, attentionMask must have [batch, cacheLength + length] = ${B * total} or ` +
          `[batch, length] = ${B * L} elements, got ${given.length}`, { code: 'ERR_SHAPE_MISMATCH', argument: 'attentionMask' });
      }
      mask = new Int32Array(B * total);
      for (let b = 0; b < B; b++) {
        if (given.length === B * total) mask.set(given.subarray(b * total, (b + 1) * total), b * total);
        else {
          if (c?.mask) mask.set(c.mask.subarray(b * past, (b + 1) * past), b * total);
          else mask.fill(1, b * total, b * total + past);
          mask.set(given.subarray(b * L, (b + 1) * L), b * total + past);
        }
      }
    } else if (c?.mask) {
      mask = new Int32Array(B * total).fill(1);
      for (let b = 0; b < B; b++) mask.set(c.mask.subarray(b * past, (b + 1) * past), b * total);
    }
    if (mask && mask.every((v) => v === 1)) mask = null;
    let positions;
    if (mask) {
      positions = new Int32Array(B * L);
      for (let b = 0; b < B; b++) {
        let n = 0;
        for (let j = 0; j < total; j++) {
          if (mask[b * total + j]) n++;
          if (j >= past) positions[b * L + j - past] = mask[b * total + j] ? n - 1 : 1;
        }
      }
      positions = { data: positions, dims: [B, L] };
    }
    return { total, mask, positions };
  }

  _checkHead(fn, argument) {
    if (this._family.mlm) {
      if (!this._mlm) {
        throw new AttnkitError(`${fn}: ${argument}: the weights have no masked-LM head (BertForMaskedLM's cls.predictions.* or ` +
          "RobertaForMaskedLM's lm_head.*), so there are no logits", { code: 'ERR_INVALID_ARGUMENT', argument });
      }
      return;
    }
    if (!this._head) {
      throw new AttnkitError(`${fn}: ${argument}: ${this.spec.family} models have no language-model head in attnkit yet ` +
        '(GPT-2 and LLaMA do)', { code: 'ERR_INVALID_ARGUMENT', argument });
    }
    if (!this._headSet) {
      throw new AttnkitError(`${fn}: ${argument}: the weights had no lm_head.weight (config.json's tie_word_embeddings ` +
        'is false), so there are no logits', { code: 'ERR_INVALID_ARGUMENT', argument: 'lm_head.weight' });
    }
  }

  // The head over the final hidden states [B, L, D]: logits [B, L, V], or [B, V] from each row's last
  // position (never the whole [B, L, V] then).
  _logits(fn, hidden, B, L, lastOnly) {
    const D = this.spec.layer.dim, V = this.spec.embeddings.vocabSize;
    let rows = hidden;
    if (lastOnly) {
      rows = new Float32Array(B * D);
      for (let b = 0; b < B; b++) rows.set(hidden.subarray((b * L + L - 1) * D, (b * L + L) * D), b * D);
    }
    const n = lastOnly ? B : B * L;
    let data;
    if (this._mlm) {
      // The masked-LM head: LayerNorm(act(dense(x))) @ word.T + bias.
      const m = this._mlm, act = this.spec.family === 'roberta' ? 'gelu' : this.spec.layer.activation;
      let t = this._ak.linear(new Tensor('float32', rows, [n, D]), new Tensor('float32', m.denseWeight, [D, D]), { bias: m.denseBias });
      t = this._ak.activation(t, act);
      t = this._ak.layerNorm(t, { gamma: m.normWeight, beta: m.normBias, eps: this.spec.layer.eps });
      data = this.embeddings._logits(fn, t.data, n);
      for (let r = 0; r < n; r++) for (let v = 0; v < V; v++) data[r * V + v] += m.bias[v];
    } else {
      data = this._head._logits(fn, rows, n);
    }
    return new Tensor('float32', data, lastOnly ? [B, V] : [B, L, V]);
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

  /** Frees every module's wasm memory. */
  dispose() {
    this._cache = null;
    for (const m of this._modules) m.dispose();
    this._modules = [];
    this.embeddings = null;
    this.layers = [];
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
  const { spec, tensors } = await readCheckpoint(ak, source, options);
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

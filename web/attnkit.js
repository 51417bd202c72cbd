// attnkit: the JavaScript face of the wasm module.
//
// Two layers. The raw embind functions (`_name`, in bindings/attnkit_bindings.cpp) work on heap
// offsets and return status codes; this file owns all wasm memory on the user's behalf: it copies
// inputs in, results out, frees everything in `finally`, and turns status codes into AttnkitError.
// It never keeps a heap view across a call (memory growth detaches them).

// The builds' Emscripten glue is part of the bundle: one file, no dynamic import(), so that every
// bundler (Vite's worker build included) takes the package as one module with three assets.
import createSimdModule from './dist/attnkit-simd.mjs';
import createScalarModule from './dist/attnkit-scalar.mjs';
import { AttnkitError } from './src/runtime/errors.js';
import { WasmHeap } from './src/runtime/heap.js';
import { isNode, readPackageWasm } from './src/runtime/read_bytes.js';
import { Tensor } from './src/runtime/tensor.js';
import { ENUMS } from './src/runtime/boundary.generated.js';
import { describe, floatInput, idsInput, num, oneOf, optionalNumber, options as checkOptions } from './src/runtime/args.js';
import { Embeddings } from './src/nn/embeddings.js';
import * as masks from './src/ops/masks.js';
import * as attn from './src/ops/attention.js';
import * as rope from './src/ops/rotary.js';
import { linear } from './src/ops/linear.js';
import { MultiHeadAttention } from './src/nn/multi_head_attention.js';
import { EncoderLayer } from './src/nn/encoder_layer.js';
import { DecoderLayer } from './src/nn/decoder_layer.js';
import { Model, loadModel, modelSpec } from './src/models/model.js';
import { loadSafetensors } from './src/formats/safetensors.js';
import { loadGguf } from './src/formats/gguf.js';
import { Tokenizer } from './src/text/tokenizer.js';
import { pipeline as createPipeline } from './src/pipelines/pipeline.js';
import { cache, env } from './src/formats/hub.js';
import { defaultThreadCount, instantiateThreaded, threadsUnavailable } from './src/runtime/threads.js';
import { relaxedUnavailable } from './src/runtime/relaxed.js';

export { AttnkitError, Tensor, Embeddings, MultiHeadAttention, EncoderLayer, DecoderLayer, Model, Tokenizer };
export { invertMask, toAdditiveMask } from './src/ops/masks.js';
export { sampling } from './src/models/sampling.js';
// Where Hub ids are read from, and the download cache (shared by every Attnkit; also ak.env, ak.cache).
export { env, cache };

// (module (func (result v128) v128.const i32x4 0 0 0 0)): validates only where SIMD128 exists.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0, 0xfd, 12,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]);

/** True when this JavaScript engine runs WebAssembly SIMD128. */
export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

const BUILDS = {
  'wasm-simd128': {
    factory: createSimdModule,
    wasm: () => new URL('./dist/attnkit-simd.wasm', import.meta.url),
  },
  'wasm-scalar': {
    factory: createScalarModule,
    wasm: () => new URL('./dist/attnkit-scalar.wasm', import.meta.url),
  },
  // Its glue is started by web/threads.js (in browsers from a Blob URL of its text: the pool's
  // workers import it by URL too).
  'wasm-simd128-threads': {
    wasm: () => new URL('./dist/attnkit-simd-threads.wasm', import.meta.url),
    threaded: true,
  },
  // The relaxed-SIMD builds (docs/relaxed-simd.md): the SIMD128 builds' sources with fused
  // multiply-adds, chosen only where the engine passed web/src/runtime/relaxed.js's known-answer
  // test. Linked alike, they have the SIMD128 builds' glue (scripts/check_relaxed_glue.mjs), which runs them.
  'wasm-simd128-relaxed': {
    factory: createSimdModule,
    wasm: () => new URL('./dist/attnkit-simd-relaxed.wasm', import.meta.url),
  },
  'wasm-simd128-relaxed-threads': {
    wasm: () => new URL('./dist/attnkit-simd-relaxed-threads.wasm', import.meta.url),
    threaded: true,
  },
};
const THREADED = { 'wasm-simd128': 'wasm-simd128-threads', 'wasm-simd128-relaxed': 'wasm-simd128-relaxed-threads' };

// The single-thread build for load()'s simd option, and why the relaxed build is not it (null when
// it is). 'auto' takes the relaxed build where the engine proved itself, unless the user named the
// files of one build (wasmBinary; wasmUrl as one URL, or a map without 'wasm-simd128-relaxed').
function pickSimd(simd, wasmBinary, wasmUrl) {
  if (simd === 'auto' || simd === 'relaxed' || simd === true) {
    if (!simdSupported()) {
      if (simd === 'auto') return ['wasm-scalar', 'this engine does not support WebAssembly SIMD128'];
      throw new AttnkitError(
        `load: simd: ${describe(simd)} was requested but this engine does not support WebAssembly SIMD128; ` +
          "use simd: 'auto' or simd: false",
        { code: 'ERR_SIMD_UNSUPPORTED', argument: 'simd' },
      );
    }
  }
  if (simd === true) return ['wasm-simd128', 'simd: true asks for the SIMD128 build'];
  if (simd === false) return ['wasm-scalar', 'simd: false asks for the scalar build'];
  if (simd === 'relaxed') {
    const why = relaxedUnavailable();
    if (why) {
      throw new AttnkitError(`load: simd: 'relaxed' was requested but ${why}; use simd: 'auto' or true`, {
        code: 'ERR_RELAXED_SIMD_UNSUPPORTED', argument: 'simd',
      });
    }
    return ['wasm-simd128-relaxed', null];
  }
  if (simd === 'auto') {
    const urlMap = wasmUrl && typeof wasmUrl === 'object' && !(wasmUrl instanceof URL);
    if (wasmBinary) return ['wasm-simd128', "wasmBinary was given (the relaxed build's bytes need simd: 'relaxed')"];
    if (wasmUrl && !(urlMap && wasmUrl['wasm-simd128-relaxed'])) {
      return ['wasm-simd128', "wasmUrl was given without a 'wasm-simd128-relaxed' URL"];
    }
    const why = relaxedUnavailable();
    return why ? ['wasm-simd128', why] : ['wasm-simd128-relaxed', null];
  }
  const hint = typeof simd === 'string' && /^rel/i.test(simd) ? "; did you mean 'relaxed'?" : '';
  throw new AttnkitError(`load: simd must be 'auto', 'relaxed', true or false, got ${describe(simd)}${hint}`, {
    code: 'ERR_INVALID_ARGUMENT',
    argument: 'simd',
  });
}

const pending = new Map();

// The build and thread count for load()'s options: [backend, threads, why threads are not used,
// why the relaxed build is not used]. Threads run when SIMD does and the engine allows them
// (threadsUnavailable), with `threads` threads (default min(cores, 8)); threads: 1 asks for the
// single-thread build. When the user names the files (wasmBinary: the bytes of one build; wasmUrl:
// one URL, or a map without the threaded build's key) threads run only when asked for by number.
function pickBackend(simd, threads, wasmBinary, wasmUrl) {
  const fn = 'load';
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1 || threads > 64)) {
    throw new AttnkitError(`${fn}: threads must be an integer from 1 to 64, got ${describe(threads)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: 'threads',
    });
  }
  const [single, relaxed] = pickSimd(simd, wasmBinary, wasmUrl);
  const threaded = THREADED[single];
  if (!threaded) return [single, 1, `the ${single} build was chosen (simd: ${describe(simd)})`, relaxed];
  if (threads === 1) return [single, 1, 'threads: 1 was asked for', relaxed];
  if (wasmBinary && threads === undefined) return [single, 1, 'wasmBinary was given without threads', relaxed];
  const urlMap = wasmUrl && typeof wasmUrl === 'object' && !(wasmUrl instanceof URL);
  if (wasmUrl && threads === undefined && !(urlMap && wasmUrl[threaded])) {
    return [single, 1, `wasmUrl was given without threads (or a '${threaded}' URL)`, relaxed];
  }
  const why = threadsUnavailable();
  if (why) return [single, 1, why, relaxed];
  const n = threads ?? defaultThreadCount();
  if (n === 1) return [single, 1, 'this machine reports one core', relaxed];
  return [threaded, n, null, relaxed];
}

/**
 * Loads the wasm module once per configuration (concurrent calls share one load).
 * @param {{simd?: 'auto'|boolean, threads?: number, wasmUrl?: string|URL|{[backend: string]: string|URL},
 *          wasmBinary?: ArrayBuffer|Uint8Array}} [options]
 */
export function load(options) {
  let backend, threads, unavailable, relaxed, wasmUrl, wasmBinary, simd;
  try {
    ({ simd = 'auto', threads, wasmUrl, wasmBinary } = checkOptions('load', options, ['simd', 'threads', 'wasmUrl', 'wasmBinary']));
    [backend, threads, unavailable, relaxed] = pickBackend(simd, threads, wasmBinary, wasmUrl);
  } catch (e) {
    return Promise.reject(e);
  }
  const urlMap = wasmUrl && typeof wasmUrl === 'object' && !(wasmUrl instanceof URL);
  const explicitUrl = urlMap ? wasmUrl[backend] : wasmUrl;
  const key = wasmBinary ? null : `${backend}|${threads}|${explicitUrl ?? ''}|${simd === 'auto'}`;
  if (key && pending.has(key)) return pending.get(key);
  const loadersUrl = urlMap ? wasmUrl['wasm-loaders'] : undefined;
  const start = (b, n, why, relaxedWhy) => instantiate(b, n, why, urlMap ? wasmUrl[b] : b === backend ? explicitUrl : undefined,
    b === backend ? wasmBinary : undefined, loadersUrl, relaxedWhy);
  let promise = start(backend, threads, unavailable, relaxed);
  const single = Object.keys(THREADED).find((b) => THREADED[b] === backend);
  if (single && !wasmBinary) {
    // The threaded build could not start (its .wasm missing, a pool worker that failed or never
    // started, a Content-Security-Policy without blob:): the single-thread build runs, and says why.
    promise = promise.catch((e) => start(single, 1, `the threaded build did not load: ${e.message}`, relaxed));
  }
  if (simd === 'auto' && (backend === 'wasm-simd128-relaxed' || single === 'wasm-simd128-relaxed')) {
    // The relaxed build could not start (not built, not copied by a bundler): the SIMD128 build
    // runs, with as many threads, and says why.
    promise = promise.catch((e) => {
      const why = `the relaxed-SIMD build did not load: ${e.message}`;
      return single ? start('wasm-simd128-threads', threads, null, why)
        .catch((e2) => start('wasm-simd128', 1, `the threaded build did not load: ${e2.message}`, why))
        : start('wasm-simd128', 1, unavailable, why);
    });
  }
  if (key) {
    pending.set(key, promise);
    promise.catch(() => pending.delete(key)); // a failed load may be retried
  }
  return promise;
}

/** transformers.js's `pipeline(task, source, options)`, on the module load() gives with no options. */
export async function pipeline(task, source, options) {
  return (await load()).pipeline(task, source, options);
}

async function instantiate(backend, threads, unavailable, explicitUrl, wasmBinary, loadersUrl, relaxedUnavailableReason = null) {
  const build = BUILDS[backend];
  const { bytes, url } = wasmBinary ? { bytes: wasmBinary } : await readPackageWasm(`the ${backend} build`, explicitUrl, 'wasmUrl', build.wasm);
  try {
    // Node: compile and instantiate synchronously (each a little quicker cold than V8's
    // asynchronous path); browsers: asynchronously, off the main thread.
    const compiled = isNode ? new WebAssembly.Module(bytes) : await WebAssembly.compile(bytes);
    let failed;
    const instantiated = new Promise((_, reject) => { failed = reject; });
    const options = {
      instantiateWasm: (imports, receive) => {
        if (!isNode) {
          WebAssembly.instantiate(compiled, imports).then((instance) => receive(instance, compiled), failed);
          return {};
        }
        let instance;
        try {
          instance = new WebAssembly.Instance(compiled, imports);
        } catch (e) {
          failed(e);
          return {};
        }
        receive(instance, compiled);
        return {};
      },
      print: () => {}, printErr: () => {},
    };
    const start = (module) => {
      const ak = new Attnkit(module, backend, loadersUrl, unavailable, relaxedUnavailableReason);
      if (threads > 1) ak._raw('load', '_setThreads', [threads]);
      return ak;
    };
    if (!build.threaded) return start(await Promise.race([instantiated, build.factory(options)]));
    // (Node only: bundlers may turn the literal into a path that is no base URL, Turbopack for one.)
    const dist = () => new URL('.', BUILDS['wasm-simd128'].wasm());
    return await instantiateThreaded(threads, dist, options, async (module) => start(await Promise.race([instantiated, module])));
  } catch (e) {
    const where = wasmBinary ? 'the given wasmBinary' : url.href;
    throw new AttnkitError(`load: could not instantiate the ${backend} build from ${where}: ${e?.message ?? e}`, {
      code: 'ERR_LOAD',
    });
  }
}

/** A loaded attnkit module. Everything it returns is plain JavaScript memory. */
export class Attnkit extends WasmHeap {
  constructor(module, backend, loadersUrl, threadsUnavailableReason = null, relaxedUnavailableReason = null) {
    if (typeof module?._malloc !== 'function') {
      throw new AttnkitError("Attnkit: the module object comes from `await load()` (import { load } from 'attnkit'), not from new Attnkit()",
        { code: 'ERR_INVALID_ARGUMENT', argument: 'module' });
    }
    super(module);
    /** 'wasm-simd128-relaxed-threads' | 'wasm-simd128-relaxed' | 'wasm-simd128-threads' | 'wasm-simd128' | 'wasm-scalar' */
    this.backend = backend;
    /** Why the threaded build is not the one running (null when it is). */
    this.threadsUnavailableReason = threadsUnavailableReason;
    /** Why the relaxed-SIMD build is not the one running (null when it is). */
    this.relaxedUnavailableReason = relaxedUnavailableReason;
    this._loadersUrl = loadersUrl; // where web/safetensors.js finds attnkit-loaders.wasm
    /** Where Hub ids ('org/name') are read from: remoteHost, remotePathTemplate, localModelPath, ... (shared). */
    this.env = env;
    /** The download cache of Hub files: list(), delete(id), clear() (shared). */
    this.cache = cache;
    const ak = this;
    // The module classes bound to this Attnkit: `new ak.EncoderLayer(options)`.
    const bound = (Base) => class extends Base {
      constructor(options) {
        super(ak, options);
      }
    };
    /** `new ak.Embeddings(options)`: the input embedding stage as a module (web/embeddings.js). */
    this.Embeddings = bound(Embeddings);
    /** `new ak.MultiHeadAttention(options)`: attention with its own weights and KV cache. */
    this.MultiHeadAttention = bound(MultiHeadAttention);
    /** `new ak.EncoderLayer(options)`: attention + feed-forward with residuals and norms. */
    this.EncoderLayer = bound(EncoderLayer);
    /** `new ak.DecoderLayer(options)`: self-attention, cross-attention over memory, feed-forward. */
    this.DecoderLayer = bound(DecoderLayer);
    /**
     * `await ak.Model.fromPretrained({config, weights, onProgress})`: a model from Hugging Face
     * config.json + .safetensors; `new ak.Model(spec)` from a spec (ak.modelSpec(config)).
     */
    this.Model = class extends bound(Model) {
      static fromPretrained(source, options) {
        return loadModel(ak, source, options);
      }
    };
    /**
     * `await ak.Tokenizer.fromJSON(tokenizerJson)`, `.fromVocab(vocabTxt, {lowercase})`,
     * `.fromGpt2(encoderJson, vocabBpe)`: WordPiece and byte-level BPE tokenizers (web/tokenizer.js).
     */
    this.Tokenizer = {
      fromJSON: (json) => Tokenizer.fromJSON(ak, json),
      fromVocab: (vocab, options) => Tokenizer.fromVocab(ak, vocab, options),
      fromGpt2: (encoderJson, vocabBpe) => Tokenizer.fromGpt2(ak, encoderJson, vocabBpe),
      fromSentencePiece: (tokenizerModel, options) => Tokenizer.fromSentencePiece(ak, tokenizerModel, options),
      fromPretrained: (source, options) => Tokenizer.fromPretrained(ak, source, options),
    };
  }

  /** Threads the kernels run on: the pool's workers plus the calling thread (1 without threads). */
  get threads() {
    return this._m._threads();
  }

  /**
   * Threads taking work now: the calling thread and the workers that have started. Workers start in
   * the background after load() resolves, so this rises to `threads` shortly after; a worker that
   * failed to start leaves it below (its share of the work goes to the others).
   */
  get threadsRunning() {
    return this._m._threadsRunning();
  }

  /**
   * Sinusoidal positional encoding table [length, dim] (Vaswani et al.; PyTorch's float32 formula).
   * layout 'interleaved': sin on even, cos on odd columns; 'split': all sines, then all cosines.
   * `out`: an optional Float32Array(length * dim) to fill instead of allocating a new one.
   */
  sinusoidalPositionalEncoding(length, dim, options) {
    const fn = 'sinusoidalPositionalEncoding';
    const { base = 10000, layout = 'interleaved', offset = 0, out } = checkOptions(fn, options, ['base', 'layout', 'offset', 'out']);
    const args = [
      num(fn, 'length', length),
      num(fn, 'dim', dim),
      num(fn, 'base', base),
      num(fn, 'offset', offset),
      oneOf(fn, 'layout', layout, ENUMS.SinusoidalLayout),
    ];
    const data = this._call(fn, '_sinusoidal', args, out);
    return new Tensor('float32', data, [length, dim]);
  }

  /** One-hot rows: ids [...] -> float32 [..., depth] (torch.nn.functional.one_hot, as float). */
  oneHot(ids, depth, options) {
    const fn = 'oneHot';
    const { out } = checkOptions(fn, options, ['out']);
    const i = idsInput(fn, 'ids', ids);
    const d = num(fn, 'depth', depth);
    const data = this._withInputs([i.data], ([pi]) => this._call(fn, '_oneHot', [pi, i.data.length, d], out));
    return new Tensor('float32', data, [...i.dims, d]);
  }

  /**
   * Embedding lookup: ids [...] into table [vocab, dim] -> float32 [..., dim], times `scale`
   * (true = sqrt(dim), as in the Annotated Transformer). maxNorm/normType renormalise the
   * referenced rows of `table` in place first, as torch.nn.Embedding(max_norm=...) does.
   */
  embedding(ids, table, options) {
    const fn = 'embedding';
    const { scale = 1, maxNorm, normType = 2, out } = checkOptions(fn, options, ['scale', 'maxNorm', 'normType', 'out']);
    const i = idsInput(fn, 'ids', ids);
    const t = floatInput(fn, 'table', table);
    if (t.dims.length !== 2) {
      throw new AttnkitError(`${fn}: table must have dims [vocabSize, dim], got ${JSON.stringify(t.dims)}`, {
        code: 'ERR_SHAPE_MISMATCH',
        argument: 'table.dims',
      });
    }
    const [vocab, dim] = t.dims;
    const s = scale === true ? Math.sqrt(dim) : scale === false ? 1 : num(fn, 'scale', scale);
    const mn = optionalNumber(fn, 'maxNorm', maxNorm, NaN);
    const nt = num(fn, 'normType', normType);
    const data = this._withInputs([i.data, t.data], ([pi, pt]) => {
      const r = this._call(fn, '_embedding', [pi, i.data.length, pt, t.data.length, vocab, dim, s, mn, nt], out);
      if (maxNorm !== undefined) {
        // the renormalised rows go back into the caller's table, as in PyTorch
        t.data.set(this._view(Float32Array, pt, t.data.length));
      }
      return r;
    });
    return new Tensor('float32', data, [...i.dims, dim]);
  }

  /** LayerNorm over the last dim of x (torch.nn.LayerNorm): gamma/beta optional [dim]. */
  layerNorm(x, options) {
    const { gamma, beta, eps = 1e-5, out } = checkOptions('layerNorm', options, ['gamma', 'beta', 'eps', 'out']);
    return this._norm('layerNorm', 0, x, gamma, beta, eps, out, 'gamma');
  }

  /** RMSNorm over the last dim of x (HF LlamaRMSNorm): x / sqrt(mean(x^2) + eps) * weight. */
  rmsNorm(x, options) {
    const { weight, eps = 1e-6, out } = checkOptions('rmsNorm', options, ['weight', 'eps', 'out']);
    return this._norm('rmsNorm', 1, x, weight, undefined, eps, out, 'weight');
  }

  _norm(fn, kind, x, gamma, beta, eps, out, gammaName) {
    const xi = floatInput(fn, 'x', x);
    const dim = xi.dims[xi.dims.length - 1] ?? 0;
    const g = gamma === undefined ? null : floatInput(fn, gammaName, gamma).data;
    const b = beta === undefined ? null : floatInput(fn, 'beta', beta).data;
    const e = num(fn, 'eps', eps);
    const data = this._withInputs([xi.data, g, b], ([px, pg, pb]) =>
      this._call(fn, '_norm', [kind, px, xi.data.length, dim, pg, g?.length ?? 0, pb, b?.length ?? 0, e], out));
    return new Tensor('float32', data, xi.dims);
  }

  /**
   * Position ids, int32 [batch, length]:
   * - default: pastLength + arange(length);
   * - { attentionMask } ([batch, pastLength + length], 1 = token): cumsum(mask) - 1, 1 at padding
   *   (Hugging Face generation with left padding);
   * - { inputIds, paddingIdx } (RoBERTa): positions start at paddingIdx + 1, padding keeps paddingIdx.
   */
  positionIds(batch, length, options) {
    const fn = 'positionIds';
    const { pastLength = 0, attentionMask, inputIds, paddingIdx } =
      checkOptions(fn, options, ['pastLength', 'attentionMask', 'inputIds', 'paddingIdx']);
    const b = num(fn, 'batch', batch);
    const l = num(fn, 'length', length);
    const p = num(fn, 'pastLength', pastLength);
    let kind = 0;
    let src = null;
    if (attentionMask !== undefined && inputIds !== undefined) {
      throw new AttnkitError(`${fn}: give attentionMask or inputIds, not both`, {
        code: 'ERR_INVALID_ARGUMENT',
        argument: 'attentionMask',
      });
    }
    if (attentionMask !== undefined) {
      kind = 1;
      src = idsInput(fn, 'attentionMask', attentionMask).data;
    } else if (inputIds !== undefined) {
      kind = 2;
      src = idsInput(fn, 'inputIds', inputIds).data;
      num(fn, 'paddingIdx', paddingIdx);
    }
    const data = this._withInputs([src], ([ps]) =>
      this._call(fn, '_positionIds', [kind, b, l, p, ps, src?.length ?? 0, paddingIdx ?? 0], undefined, Int32Array));
    return new Tensor('int32', data, [b, l]);
  }
  // --------------------------------------------------------------------- masks and attention
  /** ids != padId as a boolean mask [batch, 1, 1, length] (1 = may attend). */
  paddingMask(ids, padId) {
    return masks.paddingMask(this, ids, padId);
  }

  /** An attention_mask (1 = token, 0 = padding) as a boolean mask [batch, 1, 1, length]. */
  paddingMaskFromAttentionMask(attentionMask) {
    return masks.paddingMaskFromAttentionMask(this, attentionMask);
  }

  /** Bottom-right aligned causal mask [queryLength, keyLength]. */
  causalMask(queryLength, keyLength = queryLength) {
    return masks.causalMask(this, queryLength, keyLength);
  }

  /** AND of boolean masks (sum of additive ones), broadcast to 4-D. */
  combineMasks(a, b) {
    return masks.combineMasks(this, a, b);
  }

  /** See web/masks.js: converts to and from the masked_fill convention (true = hide). */
  invertMask(mask) {
    return masks.invertMask(mask);
  }

  /** Boolean mask -> additive float32 (0 / -Infinity). */
  toAdditiveMask(mask) {
    return masks.toAdditiveMask(mask);
  }

  /** softmax(q k^T * scale + alibi + mask) v; see attnkit.d.ts. */
  attention(q, k, v, options) {
    return attn.attention(this, q, k, v, options);
  }

  /** ALiBi slopes for numHeads heads. */
  alibiSlopes(numHeads) {
    return attn.alibiSlopes(this, numHeads);
  }

  /** RoPE applied to x [batch, heads, length, headDim]. */
  rotary(x, options) {
    return rope.rotary(this, x, options);
  }

  /** y = x W^T + b: weight [out, in] (layout 'outIn', nn.Linear) or [in, out] ('inOut', Conv1D). */
  linear(x, weight, options) {
    return linear(this, x, weight, options);
  }

  /**
   * Reads a .safetensors file from bytes or a fetch Response (streamed, with onProgress) and
   * parses it: {tensors: {name: Tensor}, metadata}. The first call loads attnkit-loaders.wasm.
   */
  loadSafetensors(source, options) {
    return loadSafetensors(this, source, options);
  }

  /**
   * Reads a GGUF file (llama.cpp) from bytes or a fetch Response (streamed, with onProgress) and
   * parses it: {metadata, tensors: {name: GgufTensor}}. The first call loads attnkit-loaders.wasm.
   */
  loadGguf(source, options) {
    return loadGguf(this, source, options);
  }

  /** config.json (text, object or Response) -> the model spec Model is built from (async). */
  modelSpec(config) {
    return modelSpec(this, config);
  }

  /**
   * A task in one call, as transformers.js's pipeline(): `await ak.pipeline('feature-extraction',
   * source, { pooling: 'mean', normalize: true })` -> an async function of the task's inputs, with
   * dispose(). web/src/pipelines/, docs/pipelines.md.
   */
  pipeline(task, source, options) {
    return createPipeline(this, task, source, options);
  }

  /** Element-wise activation: 'relu', 'gelu' (erf, torch.nn.GELU), 'gelu_tanh' (HF gelu_new), 'silu'. */
  activation(x, kind = 'gelu') {
    const fn = 'activation';
    const t = floatInput(fn, 'x', x);
    const k = oneOf(fn, 'kind', kind === 'gelu_new' ? 'gelu_tanh' : kind, ENUMS.Activation);
    const data = this._withInputs([t.data], ([px]) => this._call(fn, '_activation', [px, t.data.length, k]));
    return new Tensor('float32', data, t.dims);
  }

  /** RoPE inverse frequencies and attention factor for a scaling. */
  rotaryFrequencies(headDim, options) {
    return rope.rotaryFrequencies(this, headDim, options);
  }
}

// The public classes keep their names in the minified bundle (console.log(tensor) prints
// Tensor {...}, e.constructor.name is 'AttnkitError').
const PUBLIC_CLASSES = { Attnkit, AttnkitError, Tensor, Embeddings, MultiHeadAttention, EncoderLayer, DecoderLayer, Model, Tokenizer };
for (const [name, c] of Object.entries(PUBLIC_CLASSES)) Object.defineProperty(c, 'name', { value: name });

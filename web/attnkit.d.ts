// Type declarations for attnkit (web/attnkit.js). They need only lib es2022: the web types the API
// takes (URL, Response, File, FileList, Blob) come from the DOM lib or @types/node when the user has
// them, and are absent (never) otherwise.

/** A global class's instance type when the user's libs declare it (DOM, WebWorker, @types/node). */
type GlobalInstance<K extends string> = typeof globalThis extends { [P in K]: { prototype: infer I } } ? I : never;
/** The WHATWG URL (browsers, Node). */
type URL = GlobalInstance<'URL'>;
/** A fetch Response. */
type Response = GlobalInstance<'Response'>;
type File = GlobalInstance<'File'>;
type FileList = GlobalInstance<'FileList'>;
type Blob = GlobalInstance<'Blob'>;

export type Backend =
  | 'wasm-simd128-relaxed-threads'
  | 'wasm-simd128-relaxed'
  | 'wasm-simd128-threads'
  | 'wasm-simd128'
  | 'wasm-scalar';

export type ErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_OUT_OF_RANGE'
  | 'ERR_SHAPE_MISMATCH'
  | 'ERR_OUT_OF_MEMORY'
  | 'ERR_SIMD_UNSUPPORTED'
  | 'ERR_RELAXED_SIMD_UNSUPPORTED'
  | 'ERR_LOAD'
  | 'ERR_DISPOSED'
  | 'ERR_ABORTED'
  | 'ERR_TIMEOUT'
  | 'ERR_BUSY'
  | 'ERR_INVALID_VALUE';

/** Thrown for bad arguments and load failures. */
export class AttnkitError extends Error {
  readonly name: 'AttnkitError';
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** The argument at fault, spelled as in the call ("dim", "inputIds[3]"), when there is one. */
  readonly argument?: string;
}

/** A dense tensor: the same shape of object as onnxruntime-web's and transformers.js's. */
/** Element types: float32 results, int32 ids, bool masks, and the integer dtypes of .safetensors files. */
export type TensorType = 'float32' | 'int32' | 'bool' | 'int64' | 'int16' | 'int8' | 'uint8' | 'uint16' | 'uint32' | 'uint64';
export type TensorData = Float32Array | Int32Array | Uint8Array | BigInt64Array | Int16Array | Int8Array | Uint16Array | Uint32Array | BigUint64Array;

export class Tensor<T extends TensorData = Float32Array> {
  constructor(type: TensorType, data: T, dims: number[]);
  readonly type: TensorType;
  readonly data: T;
  readonly dims: number[];
  /** Number of elements. */
  readonly size: number;
  /** The element at one index per dim (negative counts from the end); a tensor of dims [] takes none. */
  get(...indices: number[]): TensorElement<T>;
  /** The values as nested arrays, dims deep (a tensor of dims [] gives its value). */
  tolist(): any;
  /** Indices of the largest values along axis (default -1): int32, that axis removed. First of equals; NaN is the largest. */
  argmax(axis?: number): Tensor<Int32Array>;
  /** The k largest along axis (default -1), largest first: [values, indices], also as .values and .indices. */
  topk(k: number, axis?: number): TopK<T>;
  /**
   * A copy of part of the tensor, one slice per leading dim: an index drops the dim, [start, end]
   * keeps a range (Python's rules, null for the end), null keeps the dim. `attentions[0].slice(0, 3)`: head 3 of row 0.
   */
  slice(...slices: TensorSlice[]): Tensor<T>;
}

/** An element of a tensor's data: bigint for 64-bit integers, else number. */
export type TensorElement<T extends TensorData> = T extends BigInt64Array | BigUint64Array ? bigint : number;
/** One dim of Tensor.slice: an index, a [start, end] range (null: to the end), or null / undefined for all of it. */
export type TensorSlice = number | [number | null, number | null] | null | undefined;
/** Tensor.topk's result. */
export type TopK<T extends TensorData> = [Tensor<T>, Tensor<Int32Array>] & { values: Tensor<T>; indices: Tensor<Int32Array> };

/** A boolean mask tensor: type 'bool', one byte per element (1 = may attend). */
export interface BoolTensor extends Tensor<Uint8Array> {
  readonly type: 'bool';
}

export interface LoadOptions {
  /**
   * 'auto' (default): the relaxed-SIMD build where the engine validates relaxed SIMD and passes a
   * known-answer test of the relaxed instructions (else `relaxedUnavailableReason` says why), the
   * SIMD128 build where it runs SIMD128, the scalar build elsewhere. 'relaxed' forces the relaxed
   * build (ERR_RELAXED_SIMD_UNSUPPORTED where it cannot run), true the SIMD128 one, false the scalar one.
   */
  simd?: 'auto' | 'relaxed' | boolean;
  /**
   * Threads for the kernels (1-64; default min(cores, 8)). With SIMD, more than one runs the
   * 'wasm-simd128-threads' build where the engine allows it: always in Node, in browsers on
   * cross-origin-isolated pages; elsewhere the single-thread build runs and
   * `threadsUnavailableReason` says why. 1 asks for the single-thread build. When wasmBinary or
   * wasmUrl names the files, threads run only when asked for here.
   */
  threads?: number;
  /** Where the .wasm is (default: web/dist next to this module). One URL, or one per backend. */
  wasmUrl?: string | URL | Partial<Record<Backend | 'wasm-loaders', string | URL>>;
  /** The .wasm bytes themselves; skips fetching. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** True when this JavaScript engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean;

/** Loads (once per configuration) and resolves to a ready module. */
export function load(options?: LoadOptions): Promise<Attnkit>;

export type SinusoidalLayout = 'interleaved' | 'split';

export interface SinusoidalOptions {
  /** Wavelength base (default 10000); finite, >= 1. */
  base?: number;
  /** 'interleaved' (default): sin on even, cos on odd columns. 'split': all sines, then all cosines. */
  layout?: SinusoidalLayout;
  /** First position (default 0); offset + length <= 65536. */
  offset?: number;
  /** Fill this array (length * dim elements) instead of allocating; written only on success. */
  out?: Float32Array;
}

/**
 * Token ids: an Int32Array or BigInt64Array ([n]), an array of integers, an array of equal-length
 * arrays ([batch, n]), or an int32 / int64 tensor (transformers.js's and onnxruntime's included);
 * int64 values must fit int32.
 */
export type Ids = Int32Array | BigInt64Array | number[] | number[][] | Tensor<Int32Array> | Tensor<BigInt64Array>
  | { data: Int32Array | BigInt64Array; dims: number[] };

/** float32 data: a Float32Array (1-D) or a float32 Tensor (any dims). */
export type Floats = Float32Array | Tensor<Float32Array> | { data: Float32Array; dims: number[] };

export interface EmbeddingOptions {
  /** Multiplies every row: true = sqrt(dim) (the Annotated Transformer), false/1 = none. */
  scale?: number | boolean;
  /** torch.nn.Embedding max_norm: referenced rows of `table` are renormalised in place first. */
  maxNorm?: number;
  /** The p of the p-norm for maxNorm (default 2; Infinity allowed). */
  normType?: number;
  out?: Float32Array;
}

export interface PositionIdsOptions {
  /** Tokens already in a KV cache (default 0). */
  pastLength?: number;
  /** [batch, pastLength + length], 1 = token, 0 = padding: cumsum(mask) - 1, 1 at padding (Hugging Face). */
  attentionMask?: Ids;
  /** RoBERTa: positions from ids, counting from paddingIdx + 1; padding keeps paddingIdx. */
  inputIds?: Ids;
  paddingIdx?: number;
}

export interface EmbeddingsOptions {
  vocabSize: number;
  dim: number;
  /** Rows of the position table (default 512). */
  maxPositions?: number;
  /** Rows of the token-type (segment) table; 0 (default) = none. */
  typeVocabSize?: number;
  /** 'learned' (default; BERT/GPT-2), 'sinusoidal' (computed, no weights), or 'none'. */
  positional?: 'learned' | 'sinusoidal' | 'none';
  /** Options of the computed sinusoidal table. */
  sinusoidal?: { base?: number; layout?: SinusoidalLayout };
  /** Multiplies the word rows only: true = sqrt(dim). Default 1. */
  scale?: number | boolean;
  /** As torch.nn.Embedding's padding_idx: documentation only, forward returns the stored row. */
  paddingIdx?: number;
  /** 'layernorm' (default), 'rmsnorm' or 'none'. */
  norm?: 'layernorm' | 'rmsnorm' | 'none';
  /** Norm epsilon: default 1e-12 for LayerNorm (BERT), 1e-6 for RMSNorm. */
  eps?: number;
}

export interface EmbeddingsWeights {
  /** [vocabSize * dim] */
  word?: Floats;
  /** [maxPositions * dim], learned positions only */
  position?: Floats;
  /** [typeVocabSize * dim] */
  tokenType?: Floats;
  /** [dim], LayerNorm gamma or RMSNorm weight (default 1) */
  normWeight?: Floats;
  /** [dim], LayerNorm beta (default 0) */
  normBias?: Floats;
}

export interface EmbeddingsForwardOptions {
  /** Same shape as inputIds; type 0 when absent. */
  tokenTypeIds?: Ids;
  /** [batch, length] or [length] shared by the batch. */
  positionIds?: Ids;
  /** [batch, pastLength + length]; positions cumsum(mask) - 1 (1 at padding) when positionIds is absent. */
  attentionMask?: Ids;
  /** Tokens already seen (default 0): positions start there. */
  pastLength?: number;
  out?: Float32Array;
}

/** The input embedding stage; weights live in wasm memory until dispose(). */
export class Embeddings {
  /** The bound form is `new ak.Embeddings(options)`. */
  constructor(ak: Attnkit, options: EmbeddingsOptions);
  readonly config: Required<Omit<EmbeddingsOptions, 'sinusoidal' | 'paddingIdx'>> & { paddingIdx?: number };
  /** Copies the given weights in; all sizes are checked before any is written. */
  setWeights(weights: EmbeddingsWeights): this;
  /** norm(word[id] * scale + tokenType[type] + position[pos]) → [batch, length, dim]. */
  forward(inputIds: Ids, options?: EmbeddingsForwardOptions): Tensor<Float32Array>;
  /** Frees the wasm memory; later calls throw ERR_DISPOSED. Idempotent. */
  dispose(): void;
}

/**
 * A mask: boolean (Uint8Array, 1 = may attend, as PyTorch's scaled_dot_product_attention) or
 * additive (Float32Array, 0 / -Infinity), as a Tensor (dims broadcast like PyTorch to
 * [batch, heads, queryLength, keyLength], 1 to 4 dims) or a bare array (dims [keyLength]).
 */
export type Mask = Uint8Array | Float32Array | Tensor<Uint8Array> | Tensor<Float32Array> | { data: Uint8Array | Float32Array; dims: number[] };

export interface AttentionOptions {
  mask?: Mask;
  /** Causal mask aligned to the bottom right: query i sees keys j <= (Lk - Lq) + i. */
  causal?: boolean;
  /** Multiplies q·k; default 1/sqrt(headDim). */
  scale?: number;
  /** true: the ALiBi paper's slopes for the head count; or one slope per head. */
  alibi?: boolean | Float32Array;
  /** Also return the softmax weights [B, H, Lq, Lk] (materialised; otherwise never). */
  returnWeights?: boolean;
}

export interface RotaryScalingOptions {
  type: 'none' | 'linear' | 'dynamic' | 'yarn' | 'llama3';
  factor?: number;
  /** dynamic: max_position_embeddings; yarn/llama3: original_max_position_embeddings. */
  originalMaxPositions?: number;
  lowFreqFactor?: number;
  highFreqFactor?: number;
  betaFast?: number;
  betaSlow?: number;
  attentionFactor?: number;
  mscale?: number;
  mscaleAllDim?: number;
  truncate?: boolean;
}

export interface RotaryOptions {
  /** Dims rotated (even, <= headDim; default all); the rest pass through. */
  rotaryDim?: number;
  base?: number;
  /** 'half': LLaMA/NeoX rotate_half; 'interleaved': GPT-J/RoFormer pairs. */
  layout?: 'half' | 'interleaved';
  scaling?: RotaryScalingOptions;
}

export interface MultiHeadAttentionOptions {
  /** embed_dim: features of the query and of the output. */
  dim: number;
  numHeads: number;
  /** Key/value heads (grouped-query attention); default numHeads. */
  numKvHeads?: number;
  /** Default dim / numHeads. */
  headDim?: number;
  /** Features of the key / value inputs for cross-attention (default dim). */
  kdim?: number;
  vdim?: number;
  /** q/k/v projection biases (default true). */
  bias?: boolean;
  /** Output projection bias (default: bias). */
  outBias?: boolean;
  positional?: 'none' | 'rotary' | 'alibi';
  /** RoPE settings when positional is 'rotary' (headDim comes from the module). */
  rotary?: RotaryOptions;
  /** Default 1/sqrt(headDim). */
  scale?: number;
  /** Default for forward's causal. */
  causal?: boolean;
  /**
   * 'outIn' (nn.Linear, default) or 'inOut' (GPT-2's Conv1D: c_attn [dim, 3 dim], set as
   * inProjWeight; self-attention only when kdim = vdim = dim).
   */
  weightLayout?: 'outIn' | 'inOut';
  /** Qwen3: RMSNorm of each head's queries and keys over headDim, before RoPE (weights qNorm, kNorm); default false. */
  qkNorm?: boolean;
  /** The q/k norms' epsilon; default 1e-6. */
  qkNormEps?: number;
  /** Gemma 2: scores become softcap * tanh(score / softcap) before the masks; 0 (default) = none. */
  softcap?: number;
}

/**
 * Weights, all matrices [out, in] as nn.Linear stores them. PyTorch's names (in_proj_weight,
 * in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, out_proj.weight, out_proj.bias) and
 * Hugging Face's (q_proj.weight, ..., o_proj.weight, o_proj.bias) are accepted too.
 */
export interface MultiHeadAttentionWeights {
  qWeight?: Floats;
  kWeight?: Floats;
  vWeight?: Floats;
  /** q, k and v stacked: [(numHeads + 2 numKvHeads) * headDim, dim] (needs kdim = vdim = dim). */
  inProjWeight?: Floats;
  outWeight?: Floats;
  qBias?: Floats;
  kBias?: Floats;
  vBias?: Floats;
  inProjBias?: Floats;
  outBias?: Floats;
  [name: string]: Floats | undefined;
}

export interface MultiHeadAttentionForwardOptions {
  /** Cross-attention inputs [batch, Lk, kdim] / [batch, Lk, vdim]. */
  key?: Floats;
  value?: Floats;
  /** Broadcast to [batch, heads, L, keyLength] (keyLength includes cached keys). */
  mask?: Mask;
  /** Hugging Face attention_mask [batch, keyLength]: 1 = token, 0 = padding. */
  attentionMask?: Ids;
  /** Bottom-right aligned (default: the module's causal). */
  causal?: boolean;
  /** RoPE positions [L] or [batch, L]; default cacheLength + 0..L-1. */
  positionIds?: Ids;
  /** Append this call's keys/values to the KV cache and attend over all of it (self-attention). */
  useCache?: boolean;
  returnWeights?: boolean;
}

export class MultiHeadAttention {
  /** The bound form is `new ak.MultiHeadAttention(options)`. */
  constructor(ak: Attnkit, options: MultiHeadAttentionOptions);
  readonly config: Required<Omit<MultiHeadAttentionOptions, 'rotary' | 'scale'>>;
  setWeights(weights: MultiHeadAttentionWeights): this;
  /** query [batch, L, dim] or [L, dim] → the same shape. */
  forward(query: Floats, options?: MultiHeadAttentionForwardOptions & { returnWeights?: false }): Tensor<Float32Array>;
  forward(query: Floats, options: MultiHeadAttentionForwardOptions & { returnWeights: true }): { output: Tensor<Float32Array>; weights: Tensor<Float32Array> };
  /** returnWeights known only at run time: either shape ('output' in result tells). */
  forward(query: Floats, options?: MultiHeadAttentionForwardOptions): Tensor<Float32Array> | { output: Tensor<Float32Array>; weights: Tensor<Float32Array> };
  /** Keys held by the KV cache per sequence. */
  readonly cacheLength: number;
  resetCache(): this;
  /** Frees the wasm memory; later calls throw ERR_DISPOSED. Idempotent. */
  dispose(): void;
}

export interface EncoderLayerOptions extends MultiHeadAttentionOptions {
  /** dim_feedforward / intermediate_size. */
  ffnDim: number;
  /** 'gelu' (erf, torch.nn.GELU), 'gelu_tanh' / 'gelu_new' (tanh approximation), 'relu', 'silu'. Default 'gelu'. */
  activation?: 'gelu' | 'gelu_tanh' | 'gelu_new' | 'relu' | 'silu';
  /** LLaMA's gated feed-forward: linear2(act(gate(x)) * linear1(x)) (gate.weight = mlp.gate_proj.weight). */
  ffnGated?: boolean;
  /** GPT-NeoX's parallel residual, x + attn(norm1(x)) + ffn(norm2(x)) (normPlacement 'pre'); default false. */
  parallel?: boolean;
  /** false: no norm before the attention (ModernBERT's first layer; normPlacement 'pre'); default true. */
  attnNorm?: boolean;
  /** 'post' (BERT, nn.TransformerEncoderLayer default), 'pre' (GPT-2), 'sandwich'. Default 'post'. */
  normPlacement?: 'post' | 'pre' | 'sandwich';
  norm?: 'layernorm' | 'rmsnorm';
  /** Default 1e-5. */
  eps?: number;
  /** Feed-forward biases (default true). */
  ffnBias?: boolean;
}

export class EncoderLayer {
  /** The bound form is `new ak.EncoderLayer(options)`. */
  constructor(ak: Attnkit, options: EncoderLayerOptions);
  readonly config: Record<string, unknown>;
  /**
   * torch.nn.TransformerEncoderLayer's state dict names (self_attn.in_proj_weight, linear1.weight,
   * norm1.weight, ...; norm3/norm4 in the sandwich placement) or the MultiHeadAttention names.
   */
  setWeights(weights: { [name: string]: Floats | undefined }): this;
  forward(x: Floats, options?: Omit<MultiHeadAttentionForwardOptions, 'key' | 'value'> & { returnWeights?: false }): Tensor<Float32Array>;
  forward(x: Floats, options: Omit<MultiHeadAttentionForwardOptions, 'key' | 'value'> & { returnWeights: true }): { output: Tensor<Float32Array>; weights: Tensor<Float32Array> };
  forward(x: Floats, options?: Omit<MultiHeadAttentionForwardOptions, 'key' | 'value'>): Tensor<Float32Array> | { output: Tensor<Float32Array>; weights: Tensor<Float32Array> };
  /** Keys held by the self-attention's KV cache per sequence. */
  readonly cacheLength: number;
  /** Bytes of the KV cache's storage (kept by resetCache, freed by dispose). */
  readonly cacheBytes: number;
  resetCache(): this;
  dispose(): void;
}

export interface DecoderLayerOptions extends EncoderLayerOptions {
  /** The attention over the memory (defaults: the self-attention's heads and bias, kdim = vdim = dim). */
  crossAttention?: { numHeads?: number; numKvHeads?: number; headDim?: number; kdim?: number; vdim?: number; bias?: boolean; outBias?: boolean; weightLayout?: 'outIn' | 'inOut'; scale?: number };
}

export interface DecoderLayerForwardOptions extends Omit<MultiHeadAttentionForwardOptions, 'key' | 'value'> {
  /** The encoder's output [batch, memoryLength, kdim]. */
  memory: Floats;
  /** Broadcast to [batch, crossHeads, L, memoryLength]. */
  memoryMask?: Mask;
  /** Hugging Face encoder_attention_mask [batch, memoryLength]: 1 = token. */
  memoryAttentionMask?: Ids;
}

export class DecoderLayer {
  /** The bound form is `new ak.DecoderLayer(options)`. */
  constructor(ak: Attnkit, options: DecoderLayerOptions);
  readonly config: Record<string, unknown>;
  /** torch.nn.TransformerDecoderLayer names (self_attn.*, multihead_attn.*, norm1..3, linear1/2), or cross.* for the cross-attention. */
  setWeights(weights: { [name: string]: Floats | undefined }): this;
  forward(x: Floats, options: DecoderLayerForwardOptions & { returnWeights?: false }): Tensor<Float32Array>;
  forward(x: Floats, options: DecoderLayerForwardOptions & { returnWeights: true }): { output: Tensor<Float32Array>; selfWeights: Tensor<Float32Array>; crossWeights: Tensor<Float32Array> };
  forward(x: Floats, options: DecoderLayerForwardOptions): Tensor<Float32Array> | { output: Tensor<Float32Array>; selfWeights: Tensor<Float32Array>; crossWeights: Tensor<Float32Array> };
  readonly cacheLength: number;
  resetCache(): this;
  dispose(): void;
}

/** What config.json maps to (src/attnkit/model_config.hpp). */
export type ModelFamily = 'bert' | 'roberta' | 'xlm-roberta' | 'distilbert' | 'modernbert' | 'gpt2' | 'gpt_neox' | 'bloom'
  | 'llama' | 'qwen2' | 'qwen3' | 'mistral' | 'phi3' | 'gemma2';

/** A task head (config.json's architectures: *ForSequenceClassification, ...ForTokenClassification, ...ForQuestionAnswering). */
export interface TaskHeadSpec {
  task: 'sequence' | 'token' | 'span';
  numLabels: number;
  /** The row a sequence head reads: the first token, each row's last non-padding token (decoders), or the mean over the mask. */
  pool: 'first' | 'lastToken' | 'mean';
  dense: 'none' | 'own' | 'pooler';
  activation: 'none' | 'tanh' | 'relu' | 'gelu';
  bias: boolean;
  norm?: boolean;
}

export interface ModelSpec {
  family: ModelFamily;
  /** config.json's first architectures entry, when it names a task head. */
  architecture?: string;
  head?: TaskHeadSpec;
  id2label?: { [id: string]: string };
  label2id?: { [label: string]: number };
  /** How the family's checkpoints name their tensors (src/models/families/<family>.cpp). */
  tensors: object;
  numLayers: number;
  embeddings: EmbeddingsOptions;
  positionIds: 'arange' | 'padding';
  layer: EncoderLayerOptions & { headDim: number };
  layerScale?: 'inverseLayerIdx';
  finalNorm: null | { norm: 'layernorm' | 'rmsnorm'; eps: number };
  /** The causal-LM head: the word table (tie_word_embeddings) or its own lm_head.weight; null for BERT and RoBERTa. */
  lmHead: 'tied' | 'separate' | null;
  /** config.json's eos_token_id as a list (empty when none); generation stops a row at any of them. */
  eosTokenIds: number[];
  bosTokenId: number | null;
  padTokenId: number | null;
  /** config.json settings without effect on a forward pass (dropouts, token ids, dtype, ...). */
  ignored: string[];
  /** config.json settings attnkit does not know: not applied. */
  unknown: string[];
}

export interface ModelOutput {
  /** [batch, L, dim] */
  lastHiddenState: Tensor<Float32Array>;
  /** With outputHiddenStates: numLayers + 1 tensors (the embeddings' output first; after the final norm last, as transformers). */
  hiddenStates?: Tensor<Float32Array>[];
  /** With outputAttentions: per layer [batch, heads, L, L]. */
  attentions?: Tensor<Float32Array>[];
  /**
   * With outputLogits: [batch, L, vocab]; with lastTokenOnly: [batch, vocab] (the last position of
   * each row). A task head's instead: [batch, numLabels] (sequence) or [batch, L, numLabels] (token).
   */
  logits?: Tensor<Float32Array>;
  /** A question-answering head's (outputLogits): [batch, L] each. */
  startLogits?: Tensor<Float32Array>;
  endLogits?: Tensor<Float32Array>;
  /** With pooling: a sentence embedding per row [batch, dim]. */
  pooled?: Tensor<Float32Array>;
}

export interface ModelForwardOptions {
  attentionMask?: Ids;
  tokenTypeIds?: Ids;
  positionIds?: Ids;
  outputAttentions?: boolean;
  outputHiddenStates?: boolean;
  /** The language-model head's logits for every position: `logits` [batch, L, vocab] (GPT-2, LLaMA). */
  outputLogits?: boolean;
  /** Only the last position's logits: `logits` [batch, vocab] (what generation needs; the full [batch, L, vocab] is never made). */
  lastTokenOnly?: boolean;
  /**
   * Causal models: attend over the KV cache and append to it; positions continue from it (per row
   * cumsum(mask) - 1 when a mask was given); attentionMask then covers [batch, cacheLength + L] or [batch, L].
   */
  useCache?: boolean;
  /** With useCache: first replace the model's KV cache with this one (from saveCache, here or in a model of the same shape). */
  pastKeyValues?: KVCache;
  /** A sentence embedding per row in `pooled`: the mean over the mask, the first token, the last real token, or BERT's pooler. */
  pooling?: 'mean' | 'cls' | 'last' | 'pooler';
  /** L2-normalise the pooled embedding. */
  normalize?: boolean;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
  cleanUpTokenizationSpaces?: boolean;
}

/** A model's KV cache as a value (Model.saveCache / loadCache / forward's pastKeyValues). */
export interface KVCache {
  batch: number;
  /** Positions held. */
  length: number;
  /** [batch, length], 1 = token, 0 = padding; null when every position is a token. */
  mask: Int32Array | null;
  /** Per layer: keys and values [batch, kvHeads, length, headDim]. */
  layers: { key: Tensor<Float32Array>; value: Tensor<Float32Array> }[];
  /** Positions before the first one held (a sliding window on every layer drops the oldest). */
  start?: number;
  /** Per row, the tokens among those `start` positions (null or absent: all of them). */
  startTokens?: Int32Array | null;
}

export interface GenerateEvent {
  /** 0 for the first new token. */
  step: number;
  /** This step's token per row (finished rows get padTokenId). */
  tokenIds: Int32Array;
  /** Which rows have finished (an eos id or a stop string). */
  finished: boolean[];
}

export interface GenerateOptions {
  /** New tokens at most (default 20); the prompt plus these must fit the model's positions. */
  maxNewTokens?: number;
  /** Sample instead of greedy argmax (default false). */
  doSample?: boolean;
  /** Sampling: logits / temperature (> 0, default 1). */
  temperature?: number;
  /** Sampling: keep the k most likely tokens (default 50, 0 = off). */
  topK?: number;
  /** Sampling: keep the most likely tokens whose mass reaches topP (in (0, 1], default 1 = off). */
  topP?: number;
  /** Sampling: drop tokens below minP times the most likely one's probability (in [0, 1], default 0). */
  minP?: number;
  /** Divide positive and multiply negative logits of tokens already in the row (> 0, default 1 = off). */
  repetitionPenalty?: number;
  /** Sampling: a 32-bit seed for the documented xoshiro128** generator (default: random). */
  seed?: number;
  /** Ids that finish a row (default: config.json's eos_token_id; null = none). */
  eosTokenId?: number | number[] | null;
  /** What finished rows continue with (default: config.json's pad or eos id). */
  padTokenId?: number;
  /** Texts that finish a row once its new text contains one (needs tokenizer). */
  stopStrings?: string | string[];
  tokenizer?: Tokenizer;
  /** Called after each step; a returned promise is awaited. */
  onToken?: (event: GenerateEvent) => void | Promise<void>;
  /** An AbortSignal: cancels between steps (generate rejects with ERR_ABORTED). */
  signal?: { readonly aborted: boolean; readonly reason?: unknown };
  /** Left padding: [batch, L], 1 = token, 0 = padding. */
  attentionMask?: Ids;
  /** Each step's raw logits [batch, vocab] in `logits`. */
  outputLogits?: boolean;
  /** Each step's processed scores [batch, vocab] (penalties, temperature, filters) in `scores`. */
  outputScores?: boolean;
  /** Each step's distribution [batch, vocab] (greedy: softmax of the scores) in `probabilities`. */
  outputProbabilities?: boolean;
}

export interface GenerateOutput {
  /** The prompt and the new tokens: [batch, L + n] (or [L + n] for a [L] prompt). */
  sequences: Tensor<Int32Array>;
  logits?: Tensor<Float32Array>[];
  scores?: Tensor<Float32Array>[];
  probabilities?: Tensor<Float32Array>[];
}

export interface GenerateTextEvent<T extends string | string[] = string> extends GenerateEvent {
  /** Newly complete text since the last call (one string per prompt for a list of prompts). */
  text: T;
}

export interface GenerateTextOptions<T extends string | string[] = string> extends Omit<GenerateOptions, 'attentionMask' | 'tokenizer' | 'onToken'> {
  /** The tokenizer's template (LLaMA's BOS); default true. */
  addSpecialTokens?: boolean;
  onToken?: (event: GenerateTextEvent<T>) => void | Promise<void>;
}

export class Model {
  /** The bound form is `new ak.Model(spec)`. */
  constructor(ak: Attnkit, spec: ModelSpec);
  readonly spec: ModelSpec;
  /** Layers (config.json's num_hidden_layers / n_layer). */
  readonly numLayers: number;
  /** What config.json says of the task: labels as the file has them (null without a task head). */
  readonly config: {
    modelType: ModelFamily; architecture: string | null; numLabels: number | null;
    id2label: { [id: string]: string } | null; label2id: { [label: string]: number } | null;
  };
  /** Tensors of the last setWeights that no module takes. */
  readonly unusedWeights: string[];
  /** A Hugging Face state dict (names as in the checkpoint, heads' prefixes such as "bert." accepted). */
  setWeights(weights: { [name: string]: Floats } | Safetensors): this;
  /**
   * inputIds [batch, L] or [L], or tokenizer.encode's whole result (its mask, and its token types
   * when the model has them; options beside it win); attentionMask 1 = token, 0 = padding. Pooling
   * a padded batch without its mask is refused. The outputs asked for with a literal `true` are
   * present in the result's type.
   */
  forward<O extends ModelForwardOptions = {}>(inputIds: Ids | ModelInputs, options?: O): ModelOutput
    & (O extends { outputHiddenStates: true } ? { hiddenStates: Tensor<Float32Array>[] } : {})
    & (O extends { outputAttentions: true } ? { attentions: Tensor<Float32Array>[] } : {})
    & (O extends { outputLogits: true } | { lastTokenOnly: true } ? { logits: Tensor<Float32Array> } : {})
    & (O extends { pooling: string } ? { pooled: Tensor<Float32Array> } : {});
  /** The model's positions (n_positions / max_position_embeddings): the KV cache's bound. */
  readonly contextSize: number;
  /** Positions held by the KV cache. */
  readonly cacheLength: number;
  /** Bytes of the layers' KV cache storage. */
  readonly cacheBytes: number;
  resetCache(): this;
  /** A copy of the KV cache, to branch a decoding or reuse a prompt's keys and values. */
  saveCache(): KVCache;
  /** Replaces the KV cache with a saved one (all layers, or none on error). */
  loadCache(cache: KVCache): this;
  /** Greedy or sampled continuation of inputIds with the KV cache (GPT-2, LLaMA). */
  generate(inputIds: Ids, options?: GenerateOptions): Promise<GenerateOutput>;
  /** generate from text: the new text of one prompt, or of each prompt of a list (one left-padded batch). */
  generateText(tokenizer: Tokenizer, prompt: string, options?: GenerateTextOptions<string>): Promise<GenerateOutput & { text: string }>;
  generateText(tokenizer: Tokenizer, prompt: string[], options?: GenerateTextOptions<string[]>): Promise<GenerateOutput & { text: string[] }>;
  dispose(): void;
}

/** What model.forward takes in place of ids: an encoding (tokenizer.encode's result) or an object like it. */
export interface ModelInputs {
  inputIds: Ids;
  attentionMask?: Ids;
  tokenTypeIds?: Ids;
}

export interface Encoding<T> {
  inputIds: Tensor<Int32Array>;
  attentionMask: Tensor<Int32Array>;
  tokenTypeIds: Tensor<Int32Array>;
  positionIds: Tensor<Int32Array>;
  tokens: T extends string ? string[] : string[][];
  /** [start, end) UTF-16 indices into the text; [0, 0] for added special tokens and padding. */
  offsets: T extends string ? [number, number][] : [number, number][][];
  /** 1 for the tokens the template added and padding, 0 for the text's (transformers' special_tokens_mask). */
  specialTokensMask: Tensor<Int32Array>;
}

export interface EncodeOptions<T> {
  pair?: T;
  addSpecialTokens?: boolean;
  maxLength?: number;
  truncation?: boolean | 'longest_first' | 'only_first' | 'only_second';
  padding?: boolean | 'max_length' | 'longest';
  padId?: number;
  /** Where the pads go (default: the tokenizer's paddingSide, from padding_side). */
  paddingSide?: 'left' | 'right';
}

export class Tokenizer {
  /** Tokenizers come from files: `ak.Tokenizer.fromPretrained(...)` and the other factories. */
  private constructor();
  /** The factories with the module first; `ak.Tokenizer.fromJSON(json)` is the bound form of each. */
  static fromJSON(ak: Attnkit, tokenizerJson: TextSource): Promise<Tokenizer>;
  static fromSentencePiece(ak: Attnkit, tokenizerModel: ArrayBuffer | ArrayBufferView | Response,
    options?: { addBosToken?: boolean; addEosToken?: boolean }): Promise<Tokenizer>;
  static fromVocab(ak: Attnkit, vocabTxt: TextSource, options?: { lowercase?: boolean }): Promise<Tokenizer>;
  static fromGpt2(ak: Attnkit, encoderJson: TextSource, vocabBpe: TextSource): Promise<Tokenizer>;
  static fromPretrained(ak: Attnkit, source: PretrainedSource | GgufSource, options?: PretrainedNetworkOptions): Promise<Tokenizer>;
  /** The model: WordPiece, BPE (byte-level, or SentencePiece's with byte fallback) or Unigram. */
  readonly model: 'wordpiece' | 'bpe' | 'unigram';
  /** Token strings by id. */
  readonly vocab: string[];
  /** Special tokens (from tokenizer_config.json / special_tokens_map.json with fromPretrained); null when absent. */
  readonly padToken: string | null; readonly padTokenId: number | null;
  readonly unkToken: string | null; readonly unkTokenId: number | null;
  readonly clsToken: string | null; readonly clsTokenId: number | null;
  readonly sepToken: string | null; readonly sepTokenId: number | null;
  readonly maskToken: string | null; readonly maskTokenId: number | null;
  readonly bosToken: string | null; readonly bosTokenId: number | null;
  readonly eosToken: string | null; readonly eosTokenId: number | null;
  /** model_max_length: the default maxLength when truncating (null: none). */
  readonly modelMaxLength: number | null;
  /** padding_side: where encode pads by default. */
  readonly paddingSide: 'left' | 'right';
  encode<T extends string | string[]>(text: T, options?: EncodeOptions<T>): Encoding<T>;
  tokenize(text: string): string[];
  /**
   * One sequence [length]; a batch is refused (use batchDecode). cleanUpTokenizationSpaces:
   * transformers' clean-up of spaces before punctuation and contractions.
   */
  decode(ids: Ids | number[], options?: DecodeOptions): string;
  /** A batch [batch, length] -> one string per row. */
  batchDecode(ids: Ids | number[][], options?: DecodeOptions): string[];
  dispose(): void;
}

type TextSource = string | ArrayBuffer | ArrayBufferView | Response | object;

/**
 * A Hugging Face folder: a Hub id ('org/name', read through `env`, kept in the download cache), a
 * base URL (string or URL; relative to the page in browsers), a folder path (Node), picked files
 * (a FileList or File[], a picked directory included), or an object of file name -> contents.
 * A string with a scheme is a URL; one beginning with './', '../', '/' or '~' a path (in browsers
 * a URL relative to the page); in Node one naming a file or folder that exists a path; else a Hub
 * id when it has the form 'name' or 'org/name', and a path (a relative URL in browsers) when not.
 */
export type PretrainedSource = string | URL | FileList | File[] | { [fileName: string]: TextSource | Blob };
/**
 * One GGUF file (llama.cpp's; the llama, qwen2 and gpt2 architectures) for Model.fromPretrained
 * and Tokenizer.fromPretrained: a URL or path ending in '.gguf', a File or Blob, its bytes, a Response.
 */
export type GgufSource = string | URL | Blob | File[] | ArrayBuffer | ArrayBufferView | Response;

/** One file of a load, in progress events: its bytes so far and whether they came from the download cache. */
export interface FileProgress {
  /** The file's name in the folder ('model.safetensors'). */
  file: string;
  /** Its bytes read so far. */
  loaded: number;
  /** Its size when known (Content-Length, the file on disk, the cache entry). */
  total?: number;
  /** The bytes came from the download cache (a Hub id's file), not the network or the folder. */
  fromCache: boolean;
  /** The file is whole: the last event of the file (with `loaded === total`). */
  done: boolean;
}

/**
 * fromPretrained's progress: bytes of the load so far, its total when known (Model: every
 * weights file; Tokenizer: undefined), and the event of the file being read.
 */
export type LoadProgress = (loaded: number, total: number | undefined, file: FileProgress) => void;

/** How fromPretrained waits on the network (files fetched from a URL, Responses among given files). */
export interface PretrainedNetworkOptions {
  /** An AbortSignal: aborts the load, a body being read included (ERR_ABORTED, cause: the signal's reason). */
  signal?: { readonly aborted: boolean; readonly reason?: unknown; addEventListener(type: 'abort', listener: () => void): void;
    removeEventListener(type: 'abort', listener: () => void): void };
  /**
   * A stall limit in ms, not a deadline: no response, or no byte of a body, for this long rejects
   * with ERR_TIMEOUT. Default 30 000; 0 or Infinity for none.
   */
  timeout?: number;
  /** A Hub id's branch, tag or commit (default 'main'); refused for other sources. */
  revision?: string;
  /** false: neither read nor write the download cache for this load (default: `env.useCache`). */
  cache?: boolean;
  /** Per file and chunk: (loaded, total, file). */
  onProgress?: LoadProgress;
}

/**
 * Where Hub ids are read from, and the download cache: `ak.env` (also exported as `env`), shared
 * by every Attnkit. Every assignment is checked (ERR_INVALID_ARGUMENT; an unknown key names the
 * closest one); `delete env.key` restores a default.
 */
export interface Env {
  /** The Hub's address: 'https://huggingface.co/' by default (a mirror, or a local stand-in). */
  remoteHost: string;
  /** A repository's files under remoteHost: '{model}/resolve/{revision}/' (Hugging Face's layout) by default. */
  remotePathTemplate: string;
  /** A folder path (Node) or base URL holding <org>/<name>/ folders, looked in first, file by file; null (default) for none. */
  localModelPath: string | null;
  /** false: never use the network for Hub ids (localModelPath and the download cache only). Default true. */
  allowRemoteModels: boolean;
  /** Whether Hub files are kept in the download cache (a load's `cache` option wins). Default true. */
  useCache: boolean;
  /**
   * Node: the download cache's folder; reads as the default ($XDG_CACHE_HOME/attnkit, else
   * ~/.cache/attnkit, ~/Library/Caches/attnkit on macOS, %LOCALAPPDATA%\attnkit\Cache on Windows)
   * while unset (null). Browsers keep the cache in the Cache API, or OPFS where it is missing (null here).
   */
  cacheDir: string | null;
}

/** A file of the download cache. */
export interface CacheEntry {
  /** The entry's id (for `cache.delete(id)`): from the file's URL and revision. */
  id: string;
  /** The Hub id ('org/name'). */
  model: string;
  revision: string;
  /** The file's name ('model.safetensors'). */
  file: string;
  /** Where it was downloaded from. */
  url: string;
  /** Bytes. */
  size: number;
  /** The server's ETag and Last-Modified when it was stored (what revalidation compares), or null. */
  etag: string | null;
  lastModified: string | null;
  /** When it was stored (ISO 8601). */
  cachedAt: string | null;
}

/** The download cache of Hub files: `ak.cache` (also exported as `cache`). */
export interface DownloadCache {
  /** Every cached file. */
  list(): Promise<CacheEntry[]>;
  /** Deletes the entry with this id, or every file of a Hub id ('org/name'); resolves to the number deleted. */
  delete(id: string): Promise<number>;
  /** Deletes every entry; resolves to the number deleted. */
  clear(): Promise<number>;
}

/** Hub settings: `ak.env` of every Attnkit. */
export const env: Env;
/** The download cache: `ak.cache` of every Attnkit. */
export const cache: DownloadCache;

export interface Safetensors {
  /**
   * Floating-point tensors as float32 (F16 and BF16 converted exactly, F64 rounded); integer and
   * BOOL tensors as they are: I64 'int64' (BigInt64Array), I32 'int32', I16 'int16', I8 'int8',
   * U8 'uint8', BOOL 'bool' (Uint8Array 0/1), U16 'uint16', U32 'uint32', U64 'uint64'
   * (BigUint64Array). A null-prototype object: any tensor name is a key, '__proto__' included.
   */
  tensors: { [name: string]: Tensor<TensorData> };
  metadata: { [key: string]: string };
}

/** A GGUF tensor's type in attnkit: F32, F16 and BF16 tensors read as 'float32'; quantized ones keep their block format. */
export type GgufTensorType = 'float32' | 'q8_0' | 'q4_0' | 'q4_k';

/**
 * A tensor of a GGUF file, still in the file's bytes: Model.fromPretrained copies it into wasm
 * memory with no float32 copy in JavaScript.
 */
export interface GgufTensor {
  readonly name: string;
  /** 'float32' for F32, F16 and BF16 tensors; 'q8_0', 'q4_0' or 'q4_k' for ggml's blocks. */
  readonly type: GgufTensorType;
  /** How the file stores it. */
  readonly ggmlType: 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K';
  /** PyTorch's order: ggml's dims (ne) reversed, [out, in] for a weight. */
  readonly dims: number[];
  readonly size: number;
  /** The stored bytes, a view into the file's bytes: values, or ggml's blocks (block_q8_0, block_q4_0, block_q4_K). */
  readonly bytes: Uint8Array;
  readonly byteLength: number;
  /** A 'float32' tensor's values (F16 and BF16 converted exactly) on first use; undefined for quantized ones. */
  readonly data: Float32Array | undefined;
  /** Every value as float32 in a new array: ggml's dequantisation, bit for bit. */
  dequantize(): Float32Array;
}

/** A GGUF array of strings, read from the file's bytes when asked (tokenizer.ggml.tokens, .merges). */
export interface GgufStrings extends Iterable<string> {
  readonly length: number;
  /** String i as text (negative i counts from the end); undefined past the end. */
  at(index: number): string | undefined;
  /** The stored bytes of string i (writers may store bytes that are not UTF-8). */
  bytes(index: number): Uint8Array | undefined;
  toArray(): string[];
}

/**
 * A GGUF metadata value: uint8 .. int32, float32 and float64 as numbers, uint64 and int64 as
 * bigint, bool as boolean, string as string; arrays as typed arrays of their type (a copy), bool
 * arrays as boolean[], string arrays as GgufStrings.
 */
export type GgufValue = number | bigint | boolean | string | GgufStrings | boolean[] | Uint8Array | Int8Array |
  Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array | BigUint64Array | BigInt64Array;

export interface Gguf {
  /** A null-prototype object: every key of the file, in file order. */
  metadata: { [key: string]: GgufValue };
  /** A null-prototype object: every tensor by name, in file order. */
  tensors: { [name: string]: GgufTensor };
}

/** Converts to/from the masked_fill convention (true = hide); its own inverse. */
export function invertMask(mask: Mask): BoolTensor;
/** Boolean mask → additive float32 (1 → 0, 0 → -Infinity). */
export function toAdditiveMask(mask: Mask): Tensor<Float32Array>;

/** Scores of one row: a Float32Array, Float64Array or array of numbers. */
export type ScoreRow = Float32Array | Float64Array | number[];

/** The sampling options of sampling.distribution (generate's, with topK off by default). */
export interface SamplingOptions {
  /** Divides the logits first; > 0 (default 1). */
  temperature?: number;
  /** Keeps the k largest (ties with the k-th stay); 0 = off (default). */
  topK?: number;
  /** Keeps the most likely tokens whose total reaches topP; in (0, 1], 1 = off (default). */
  topP?: number;
  /** Drops tokens below minP times the largest probability; in [0, 1], 0 = off (default). */
  minP?: number;
}

/** generate's seeded generator (xoshiro128**): the same numbers in every engine and build. */
export interface Rng {
  /** An unsigned 32-bit integer. */
  next(): number;
  /** A number in [0, 1): next() / 2^32. */
  uniform(): number;
}

/** How generate chooses tokens, step by step, every argument checked (tutorials show it). */
export const sampling: {
  /** softmax in float64; all zeros when no score is finite. */
  softmax(scores: ScoreRow): Float64Array;
  /** The first index of the largest score (NaN counts as largest, as torch.argmax). */
  argmax(scores: ScoreRow): number;
  /** softmax(logits / temperature) after top-k, top-p and min-p, as transformers' warpers: what generate samples from. */
  distribution(logits: ScoreRow, options?: SamplingOptions): Float64Array;
  /** The id a uniform draw u in [0, 1) picks from probabilities. */
  sampleFrom(probabilities: ScoreRow, u: number): number;
  /** generate's generator for a seed in [0, 2^32). */
  createRng(seed: number): Rng;
};

// ------------------------------------------------------------------------------------ pipelines
/** The tasks of ak.pipeline, with transformers.js's other names (embeddings, sentiment-analysis, ner). */
export interface Pipelines {
  'feature-extraction': FeatureExtractionPipeline;
  embeddings: FeatureExtractionPipeline;
  'text-classification': TextClassificationPipeline;
  'sentiment-analysis': TextClassificationPipeline;
  'token-classification': TokenClassificationPipeline;
  ner: TokenClassificationPipeline;
  'fill-mask': FillMaskPipeline;
  'question-answering': QuestionAnsweringPipeline;
  'zero-shot-classification': ZeroShotClassificationPipeline;
  'text-generation': TextGenerationPipeline;
}
export type PipelineTask = keyof Pipelines;

/** Each task's options: given to pipeline() they are the defaults of every call; a call's own win. */
export interface PipelineTaskOptions {
  'feature-extraction': FeatureExtractionOptions;
  embeddings: FeatureExtractionOptions;
  'text-classification': TextClassificationOptions;
  'sentiment-analysis': TextClassificationOptions;
  'token-classification': TokenClassificationOptions;
  ner: TokenClassificationOptions;
  'fill-mask': FillMaskOptions;
  'question-answering': QuestionAnsweringOptions;
  'zero-shot-classification': ZeroShotClassificationOptions;
  'text-generation': TextGenerationOptions;
}
/** pipeline()'s options: how the files are read (fromPretrained's) and the task's defaults. */
export type PipelineOptions<T extends PipelineTask> = PretrainedNetworkOptions & PipelineTaskOptions[T];

/** What every pipeline has besides being called. */
export interface PipelineBase {
  /** The task's own name (an alias resolved). */
  readonly task: 'feature-extraction' | 'text-classification' | 'token-classification' | 'fill-mask' | 'question-answering' |
    'zero-shot-classification' | 'text-generation';
  readonly model: Model;
  readonly tokenizer: Tokenizer;
  /** Frees the model's and the tokenizer's memory; later calls reject with ERR_DISPOSED. */
  dispose(): void;
}

export interface FeatureExtractionOptions {
  /** 'none' (default): hidden states [batch, L, dim]; else one embedding per text [batch, dim]: the mean over the mask, the first token, the last real token. */
  pooling?: 'none' | 'mean' | 'cls' | 'last';
  /** L2-normalise each vector (default false). */
  normalize?: boolean;
  /** Pack each pooled embedding to one bit per value (> 0), 8 to a byte (default false). */
  quantize?: boolean;
  /** With quantize: int8 bytes less 128 ('binary', default) or uint8 ('ubinary'), as sentence-transformers. */
  precision?: 'binary' | 'ubinary';
}
export interface FeatureExtractionPipeline extends PipelineBase {
  /** A string is a batch of one. With quantize (here or as the pipeline's default) the tensor is int8 / uint8. */
  (texts: string | string[], options?: FeatureExtractionOptions & { quantize?: false }): Promise<Tensor<Float32Array>>;
  (texts: string | string[], options: FeatureExtractionOptions & { quantize: true }): Promise<Tensor<Int8Array> | Tensor<Uint8Array>>;
  (texts: string | string[], options?: FeatureExtractionOptions): Promise<Tensor<Float32Array> | Tensor<Int8Array> | Tensor<Uint8Array>>;
}

export interface TextClassificationOptions {
  /** How many labels (default 1); null: all of them. */
  topK?: number | null;
  /** Default from config.json: none for problem_type 'regression', sigmoid for 'multi_label_classification' or one label, else softmax. */
  functionToApply?: 'softmax' | 'sigmoid' | 'none';
}
export interface TextClassificationResult {
  label: string;
  score: number;
}
export interface TextClassificationPipeline extends PipelineBase {
  /** One text: its topK labels (one for topK 1). */
  (texts: string, options?: TextClassificationOptions): Promise<TextClassificationResult[]>;
  /** Several: one label each for topK 1, else a list each. */
  (texts: string[], options?: TextClassificationOptions): Promise<TextClassificationResult[] | TextClassificationResult[][]>;
}

export interface TokenClassificationOptions {
  /** 'none' (default): every token; 'simple': B- / I- groups; 'first' / 'average' / 'max': words first, then groups. */
  aggregationStrategy?: 'none' | 'simple' | 'first' | 'average' | 'max';
  /** Labels (or groups) to leave out; default ['O']. */
  ignoreLabels?: string[];
}
/** A token (aggregationStrategy 'none'): start and end are UTF-16 offsets into the text. */
export interface TokenClassificationEntity {
  entity: string;
  score: number;
  index: number;
  word: string;
  start: number;
  end: number;
}
/** A group of tokens or words (the other strategies). */
export interface TokenClassificationGroup {
  entity_group: string;
  score: number;
  word: string;
  start: number;
  end: number;
}
export type TokenClassificationOutput = TokenClassificationEntity[] | TokenClassificationGroup[];
export interface TokenClassificationPipeline extends PipelineBase {
  (texts: string, options?: TokenClassificationOptions): Promise<TokenClassificationOutput>;
  (texts: string[], options?: TokenClassificationOptions): Promise<TokenClassificationOutput[]>;
}

export interface FillMaskOptions {
  /** Tokens per mask (default 5). */
  topK?: number;
}
export interface FillMaskResult {
  score: number;
  token: number;
  token_str: string;
  /** The text decoded with the token in place (special tokens skipped when the text has one mask). */
  sequence: string;
}
export interface FillMaskPipeline extends PipelineBase {
  /** A text with one mask: its list; with several: a list per mask. */
  (texts: string, options?: FillMaskOptions): Promise<FillMaskResult[] | FillMaskResult[][]>;
  (texts: string[], options?: FillMaskOptions): Promise<(FillMaskResult[] | FillMaskResult[][])[]>;
}

export interface QuestionAnsweringOptions {
  /** Answers (default 1: one object, not a list). */
  topK?: number;
  /** Context tokens a window shares with the one before (default min(maxSeqLen / 2, 128)). */
  docStride?: number;
  /** Tokens of a window, question and special tokens included (default min(model_max_length, 384), at most the model's positions). */
  maxSeqLen?: number;
  /** Tokens of an answer at most (default 15). */
  maxAnswerLen?: number;
  /** Also consider "no answer" ({answer: '', start: 0, end: 0}; default false). */
  handleImpossibleAnswer?: boolean;
  /** Widen an answer to whole words (default true). */
  alignToWords?: boolean;
}
export interface QuestionAnsweringResult {
  answer: string;
  score: number;
  /** [start, end) UTF-16 offsets into the context. */
  start: number;
  end: number;
}
export interface QuestionAnsweringPipeline extends PipelineBase {
  (question: string, context: string, options?: QuestionAnsweringOptions): Promise<QuestionAnsweringResult | QuestionAnsweringResult[]>;
  /** Several questions, on one context or one each. */
  (question: string[], context: string | string[], options?: QuestionAnsweringOptions): Promise<(QuestionAnsweringResult | QuestionAnsweringResult[])[]>;
}

export interface ZeroShotClassificationOptions {
  /** The hypothesis, its one {} the label (default 'This example is {}.'). */
  hypothesisTemplate?: string;
  /** Score each label on its own (entailment vs contradiction) instead of softmax over the labels (default false). */
  multiLabel?: boolean;
}
export interface ZeroShotClassificationResult {
  sequence: string;
  /** Best first. */
  labels: string[];
  scores: number[];
}
export interface ZeroShotClassificationPipeline extends PipelineBase {
  /** candidateLabels: a list, or one string of comma-separated labels. */
  (texts: string, candidateLabels: string | string[], options?: ZeroShotClassificationOptions): Promise<ZeroShotClassificationResult>;
  (texts: string[], candidateLabels: string | string[], options?: ZeroShotClassificationOptions): Promise<ZeroShotClassificationResult[]>;
}

/** A chat message, as chat templates read it. */
export interface ChatMessage {
  role: string;
  content: unknown;
  [key: string]: unknown;
}
export type Chat = ChatMessage[];
export interface TextGenerationOptions extends Omit<GenerateOptions, 'attentionMask' | 'tokenizer' | 'onToken' | 'outputLogits' | 'outputScores' | 'outputProbabilities'> {
  /** Strings: the prompt and the new text (default true), or only the new text. */
  returnFullText?: boolean;
  /** Strings: the tokenizer's template (LLaMA's BOS; default true). A chat's template writes its own. */
  addSpecialTokens?: boolean;
  /** A Jinja chat template, or the name of one of the model's; default the model's. */
  chatTemplate?: string;
  /** The template's `tools` and `documents` variables. */
  tools?: object[];
  documents?: object[];
  /** After each step: the new text since the last call (a string per input for a list). */
  onToken?: (event: GenerateTextEvent<any>) => void | Promise<void>;
}
export interface TextGenerationResult<T> {
  /** The text (or, for a chat, the messages with the assistant's answer appended). */
  generated_text: T;
}
export interface TextGenerationPipeline extends PipelineBase {
  (input: string, options?: TextGenerationOptions): Promise<TextGenerationResult<string>[]>;
  (input: Chat, options?: TextGenerationOptions): Promise<TextGenerationResult<Chat>[]>;
  (input: string[], options?: TextGenerationOptions): Promise<TextGenerationResult<string>[][]>;
  (input: Chat[], options?: TextGenerationOptions): Promise<TextGenerationResult<Chat>[][]>;
}

/** transformers.js's `pipeline(task, source, options)`, on the module `load()` gives with no options. */
export function pipeline<T extends PipelineTask>(task: T, source: PretrainedSource, options?: PipelineOptions<T>): Promise<Pipelines[T]>;

export class Attnkit {
  /** Which build is running. */
  readonly backend: Backend;
  /** Threads the kernels run on (the caller plus the pool's workers; 1 without threads). */
  readonly threads: number;
  /**
   * Threads taking work now: the caller and the workers that have started (they start in the
   * background after load() resolves; one that failed to start leaves this below `threads`).
   */
  readonly threadsRunning: number;
  /** Why the threaded build is not the one running, or null when it is. */
  readonly threadsUnavailableReason: string | null;
  /** Why the relaxed-SIMD build is not the one running, or null when it is. */
  readonly relaxedUnavailableReason: string | null;
  /** Where Hub ids are read from (shared with every Attnkit and the `env` export). */
  readonly env: Env;
  /** The download cache of Hub files (shared, the `cache` export). */
  readonly cache: DownloadCache;
  /** Bytes of wasm heap currently allocated (for leak checks). */
  mallocInUse(): number;
  /** Size of the wasm linear memory in bytes. */
  heapSize(): number;
  /** Sinusoidal positional encoding table, dims [length, dim]. */
  sinusoidalPositionalEncoding(length: number, dim: number, options?: SinusoidalOptions): Tensor<Float32Array>;
  /** One-hot rows: ids [...] → float32 [..., depth]. */
  oneHot(ids: Ids, depth: number, options?: { out?: Float32Array }): Tensor<Float32Array>;
  /** Embedding lookup: ids [...] into table [vocab, dim] → [..., dim]. */
  embedding(ids: Ids, table: Floats, options?: EmbeddingOptions): Tensor<Float32Array>;
  /** LayerNorm over the last dim (biased variance, stable for large offsets). */
  layerNorm(x: Floats, options?: { gamma?: Floats; beta?: Floats; eps?: number; out?: Float32Array }): Tensor<Float32Array>;
  /** RMSNorm over the last dim: x / sqrt(mean(x^2) + eps) * weight. */
  rmsNorm(x: Floats, options?: { weight?: Floats; eps?: number; out?: Float32Array }): Tensor<Float32Array>;
  /** Position ids, int32 [batch, length]. */
  positionIds(batch: number, length: number, options?: PositionIdsOptions): Tensor<Int32Array>;
  /** ids != padId → boolean mask [batch, 1, 1, length]. */
  paddingMask(ids: Ids, padId: number): BoolTensor;
  /** Hugging Face attention_mask (1 = token) → boolean mask [batch, 1, 1, length]. */
  paddingMaskFromAttentionMask(attentionMask: Ids): BoolTensor;
  /** Bottom-right aligned causal mask [queryLength, keyLength]. */
  causalMask(queryLength: number, keyLength?: number): BoolTensor;
  /** AND of two boolean masks (sum of additive forms if either is float32), broadcast to 4-D. */
  combineMasks(a: Mask, b: Mask): BoolTensor | Tensor<Float32Array>;
  invertMask(mask: Mask): BoolTensor;
  toAdditiveMask(mask: Mask): Tensor<Float32Array>;
  /**
   * softmax(q·kᵀ·scale + alibi + mask)·v. q [B, H, Lq, d], k [B, Hkv, Lk, d], v [B, Hkv, Lk, dv]
   * (or without B), H a multiple of Hkv (GQA/MQA). Fully masked queries give zeros, never NaN.
   */
  attention(q: Floats, k: Floats, v: Floats, options?: AttentionOptions & { returnWeights?: false }): Tensor<Float32Array>;
  attention(q: Floats, k: Floats, v: Floats, options: AttentionOptions & { returnWeights: true }): { output: Tensor<Float32Array>; weights: Tensor<Float32Array> };
  /** returnWeights known only at run time: either shape ('output' in result tells). */
  attention(q: Floats, k: Floats, v: Floats, options?: AttentionOptions): Tensor<Float32Array> | { output: Tensor<Float32Array>; weights: Tensor<Float32Array> };
  /** ALiBi slopes for numHeads heads (the paper's rule, also for non-powers of two). */
  alibiSlopes(numHeads: number): Tensor<Float32Array>;
  /** RoPE on x [batch, heads, length, headDim] (2 to 4 dims); positions [length] or [batch, length], else offset + arange. */
  rotary(x: Floats, options?: RotaryOptions & { positions?: Ids; offset?: number }): Tensor<Float32Array>;
  /** RoPE inverse frequencies (rotaryDim/2) and the cos/sin factor for a scaling; seqLength for 'dynamic'. */
  rotaryFrequencies(headDim: number, options?: RotaryOptions & { seqLength?: number }): { invFreq: Float32Array; attentionFactor: number };
  /** y = x Wᵀ + b over the last dim: weight [out, in] ('outIn', nn.Linear) or [in, out] ('inOut', GPT-2 Conv1D). */
  linear(x: Floats, weight: Floats, options?: { bias?: Floats; layout?: 'outIn' | 'inOut' }): Tensor<Float32Array>;
  /** Element-wise 'relu', 'gelu' (erf) or 'gelu_tanh' / 'gelu_new'. */
  activation(x: Floats, kind?: 'relu' | 'gelu' | 'gelu_tanh' | 'gelu_new' | 'silu'): Tensor<Float32Array>;
  /** config.json (text, bytes, parsed object or Response) → the spec a Model is built from. */
  modelSpec(config: TextSource): Promise<ModelSpec>;
  /**
   * A task in one call, inputs and outputs as transformers.js's pipelines: a model and its tokenizer
   * from `source` (what fromPretrained takes), behind an async function of the task's inputs.
   */
  pipeline<T extends PipelineTask>(task: T, source: PretrainedSource, options?: PipelineOptions<T>): Promise<Pipelines[T]>;
  /** `new ak.DecoderLayer(options)`: self-attention, cross-attention over memory, feed-forward. */
  readonly DecoderLayer: new (options: DecoderLayerOptions) => DecoderLayer;
  /**
   * `await ak.Model.fromPretrained(source, { onProgress, signal, timeout })` from a Hugging Face folder (config.json
   * and model.safetensors, or model.safetensors.index.json and its shards) or a GGUF file, the older
   * `fromPretrained({config, weights, onProgress})`, or `new ak.Model(spec)`.
   */
  readonly Model: {
    new (spec: ModelSpec): Model;
    fromPretrained(source: PretrainedSource | GgufSource, options?: PretrainedNetworkOptions): Promise<Model>;
    fromPretrained(options: { config: TextSource; weights: ArrayBuffer | ArrayBufferView | Response | { [name: string]: Floats } | Safetensors; onProgress?: (loaded: number, total?: number) => void }): Promise<Model>;
  };
  /**
   * Tokenizers from Hugging Face tokenizer.json, BERT's vocab.txt, GPT-2's encoder.json + vocab.bpe,
   * or a SentencePiece model file.
   */
  readonly Tokenizer: {
    fromJSON(tokenizerJson: TextSource): Promise<Tokenizer>;
    /**
     * A SentencePiece tokenizer.model (Unigram or BPE with byte fallback), with the library's own
     * normalisation, segmentation and decoding; special tokens only when asked.
     */
    fromSentencePiece(tokenizerModel: ArrayBuffer | ArrayBufferView | Response,
      options?: { addBosToken?: boolean; addEosToken?: boolean }): Promise<Tokenizer>;
    fromVocab(vocabTxt: TextSource, options?: { lowercase?: boolean }): Promise<Tokenizer>;
    fromGpt2(encoderJson: TextSource, vocabBpe: TextSource): Promise<Tokenizer>;
    /** tokenizer.json (or vocab.txt, or vocab.json + merges.txt) with tokenizer_config.json and special_tokens_map.json. */
    fromPretrained(source: PretrainedSource | GgufSource, options?: PretrainedNetworkOptions): Promise<Tokenizer>;
  };
  /** Reads bytes or a fetch Response (streamed, with progress) and parses (header validated in C++, in attnkit-loaders.wasm, loaded on first use). */
  loadSafetensors(source: ArrayBuffer | ArrayBufferView | Response, options?: { onProgress?: (loaded: number, total?: number) => void }): Promise<Safetensors>;
  /** Reads a GGUF file (llama.cpp) from bytes or a fetch Response (streamed, with progress); its header is validated in C++, in attnkit-loaders.wasm. */
  loadGguf(source: ArrayBuffer | ArrayBufferView | Response, options?: { onProgress?: (loaded: number, total?: number) => void }): Promise<Gguf>;
  /** `new ak.EncoderLayer(options)`: attention + feed-forward with residuals and norms. */
  readonly EncoderLayer: new (options: EncoderLayerOptions) => EncoderLayer;
  /** `new ak.Embeddings(options)`: the embedding stage bound to this module. */
  readonly Embeddings: new (options: EmbeddingsOptions) => Embeddings;
  /** `new ak.MultiHeadAttention(options)`: attention with its own weights and KV cache. */
  readonly MultiHeadAttention: new (options: MultiHeadAttentionOptions) => MultiHeadAttention;
}

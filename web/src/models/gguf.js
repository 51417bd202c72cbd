// GGUF files (llama.cpp's format) as Model.fromPretrained reads them, for the llama, qwen2 and gpt2
// architectures: the file's metadata becomes the Hugging Face config.json that
// convert_hf_to_gguf.py read (llama.embedding_length -> hidden_size, ...), mapped by the same family
// registry as a Hugging Face folder's, and its tensors are given Hugging Face's names with the
// converter's changes undone: LLaMA's q/k rows back in rotate_half order (the converter interleaves
// each head's halves for ggml's rotary), GPT-2's Conv1D weights transposed back to [in, out].
// Every tensor is dequantised to float32 as it is written into the model (F32, F16, BF16, Q8_0,
// Q4_0, Q4_K): one tensor's float32 values at a time in JavaScript, never the whole model's.
// Integer kernels that run Q8_0 / Q4_0 blocks as stored are the next step (issue 36).
import { AttnkitError } from '../runtime/errors.js';
import { callback, describe, options as checkOptions } from '../runtime/args.js';
import { storedGguf } from '../formats/gguf.js';
import { SOURCE_OPTIONS } from '../formats/file_source.js';
import { ggufSourceBytes, ggufSourceName } from '../formats/gguf_source.js';
import { modelSpec } from './families.js';

/** The GGUF architectures Model.fromPretrained reads (general.architecture). */
export const GGUF_ARCHITECTURES = ['llama', 'qwen2', 'gpt2'];

// rope.scaling.* keys read (the others change the rotary in ways attnkit does not map; refused).
const ROPE_SCALING_KEYS = ['type', 'factor', 'original_context_length', 'attn_factor', 'yarn_beta_fast', 'yarn_beta_slow', 'finetuned'];
// <arch>.* keys that change the model's arithmetic in ways the llama, qwen2 and gpt2 families do not
// have (other architectures' settings written under these names); refused by name.
const UNMAPPED_KEYS = ['logit_scale', 'embedding_scale', 'residual_scale', 'attention.scale', 'attention.clamp_kqv',
  'attn_logit_softcapping', 'final_logit_softcapping', 'use_parallel_residual'];

const invalid = (fn, message, argument) => new AttnkitError(`${fn}: ${message}`, { code: 'ERR_INVALID_ARGUMENT', argument });

// Metadata readers: a key's value checked, errors naming the key.
function reader(fn, file, metadata) {
  const has = (key) => Object.hasOwn(metadata, key);
  const number = (key, { dflt, integer = false, min = -Infinity } = {}) => {
    if (!has(key)) {
      if (dflt !== undefined) return dflt;
      throw invalid(fn, `${file} has no ${key} (convert_hf_to_gguf writes it for this architecture)`, key);
    }
    let v = metadata[key];
    if (typeof v === 'bigint') v = Number(v);
    if (ArrayBuffer.isView(v) || Array.isArray(v)) {
      throw invalid(fn, `${key} holds a value per layer (${v.length} values); attnkit's layers share one`, key);
    }
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min) {
      throw invalid(fn, `${key} must be ${integer ? 'an integer' : 'a number'}${min > -Infinity ? ` >= ${min}` : ''}, got ${describe(metadata[key])}`, key);
    }
    return v;
  };
  const string = (key, dflt) => {
    if (!has(key)) {
      if (dflt !== undefined) return dflt;
      throw invalid(fn, `${file} has no ${key}`, key);
    }
    if (typeof metadata[key] !== 'string') throw invalid(fn, `${key} must be a string, got ${describe(metadata[key])}`, key);
    return metadata[key];
  };
  return { has, number, string, size: (key, dflt) => number(key, { dflt, integer: true, min: 1 }) };
}

/**
 * The config.json a GGUF file's metadata describes (what convert_hf_to_gguf.py read to write it),
 * as the family registry takes it. `tensors`: the file's tensors (output.weight's absence means
 * tied embeddings; llama 3's rope_freqs.weight becomes per-frequency rotary factors).
 */
export function ggufConfig(fn, metadata, tensors, file = 'the GGUF file') {
  const r = reader(fn, file, metadata);
  const arch = r.string('general.architecture');
  if (!GGUF_ARCHITECTURES.includes(arch)) {
    throw invalid(fn, `${file} is a '${arch}' model (general.architecture); Model.fromPretrained reads GGUF files of ` +
      `the ${GGUF_ARCHITECTURES.join(', ')} architectures`, 'general.architecture');
  }
  const k = (name) => `${arch}.${name}`;
  for (const key of UNMAPPED_KEYS.map(k)) {
    if (r.has(key)) throw invalid(fn, `${key} is set: attnkit's ${arch} model has no such setting`, key);
  }
  for (const key of [k('expert_count'), k('expert_used_count')]) {
    if (r.has(key) && r.number(key, { integer: true, min: 0 }) > 0) {
      throw invalid(fn, `${key} is ${metadata[key]}: mixture-of-experts models are not supported`, key);
    }
  }
  const tokens = metadata['tokenizer.ggml.tokens'];
  const embd = tensors['token_embd.weight'];
  // The vocabulary: the tokenizer's tokens (llama.cpp's n_vocab), else vocab_size, else the table's rows.
  const vocab = tokens && typeof tokens.length === 'number' && tokens.length > 0 ? tokens.length
    : r.has(k('vocab_size')) ? r.size(k('vocab_size')) : embd?.dims?.[0];
  if (!Number.isInteger(vocab) || vocab < 1) {
    throw invalid(fn, `${file} gives no vocabulary size (tokenizer.ggml.tokens, ${k('vocab_size')} or token_embd.weight)`, 'tokenizer.ggml.tokens');
  }
  const dim = r.size(k('embedding_length'));
  const layers = r.size(k('block_count'));
  const heads = r.size(k('attention.head_count'));
  const ffn = r.size(k('feed_forward_length'));
  const context = r.size(k('context_length'));
  // A separate output.weight unless it is token_embd.weight again (GPT-2's converter writes the tied table twice).
  const out = tensors['output.weight'];
  const tied = !out || (out.ggmlType === embd?.ggmlType && sameBytes(out.bytes, embd.bytes));
  // (an id past the vocabulary is ignored, as llama.cpp ignores it)
  const special = (key) => {
    const id = r.has(key) ? r.number(key, { integer: true, min: 0 }) : undefined;
    return id < vocab ? id : undefined;
  };
  const bos = special('tokenizer.ggml.bos_token_id');
  const eos = [special('tokenizer.ggml.eos_token_id'), special('tokenizer.ggml.eot_token_id'), special('tokenizer.ggml.eom_token_id')]
    .filter((id, i, all) => id !== undefined && all.indexOf(id) === i);
  const pad = special('tokenizer.ggml.padding_token_id');
  const ids = {
    ...(bos !== undefined ? { bos_token_id: bos } : {}),
    ...(eos.length ? { eos_token_id: eos.length === 1 ? eos[0] : eos } : {}),
    ...(pad !== undefined ? { pad_token_id: pad } : {}),
  };
  if (arch === 'gpt2') {
    return {
      model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], vocab_size: vocab, n_embd: dim, n_layer: layers, n_head: heads,
      n_positions: context, n_ctx: context, n_inner: ffn,
      layer_norm_epsilon: r.number(k('attention.layer_norm_epsilon'), { min: 0 }), activation_function: 'gelu_new',
      tie_word_embeddings: tied, ...ids,
    };
  }
  const kv = r.has(k('attention.head_count_kv')) ? r.size(k('attention.head_count_kv')) : heads;
  const keyLength = r.has(k('attention.key_length')) ? r.size(k('attention.key_length')) : undefined;
  if (keyLength !== undefined && r.has(k('attention.value_length')) && r.size(k('attention.value_length')) !== keyLength) {
    throw invalid(fn, `${k('attention.value_length')} (${metadata[k('attention.value_length')]}) differs from ${k('attention.key_length')} ` +
      `(${keyLength}); attnkit's heads have one size`, k('attention.value_length'));
  }
  const headDim = keyLength ?? (dim % heads === 0 ? dim / heads : undefined);
  const rot = r.has(k('rope.dimension_count')) ? r.size(k('rope.dimension_count')) : headDim;
  if (headDim !== undefined && rot !== headDim) {
    throw invalid(fn, `${k('rope.dimension_count')} is ${rot} and the head dim ${headDim}: partial rotary embeddings are not ` +
      `supported for ${arch} GGUF files`, k('rope.dimension_count'));
  }
  const config = {
    model_type: arch, architectures: [arch === 'qwen2' ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'], vocab_size: vocab,
    hidden_size: dim, intermediate_size: ffn, num_hidden_layers: layers, num_attention_heads: heads, num_key_value_heads: kv,
    max_position_embeddings: context, rms_norm_eps: r.number(k('attention.layer_norm_rms_epsilon'), { min: 0 }),
    rope_theta: r.number(k('rope.freq_base'), { dflt: 10000, min: 0 }), hidden_act: 'silu', tie_word_embeddings: tied, ...ids,
  };
  if (keyLength !== undefined && keyLength * heads !== dim) config.head_dim = keyLength;
  // LLaMA with biases (llama.cpp takes each of them if present).
  const biases = arch === 'llama' && Object.keys(tensors).some((n) => /^blk\.\d+\.attn_(q|k|v|output)\.bias$/.test(n));
  if (biases) config.attention_bias = true;
  const scaling = ropeScaling(fn, r, metadata, arch, tensors, context, rot);
  if (scaling) config.rope_scaling = scaling;
  return config;
}

// rope.scaling.* -> config.json's rope_scaling; llama 3's rope_freqs.weight (its frequencies'
// divisors, which the converter computed from rope_scaling) as LongRoPE factors, which divide the
// same frequencies (no attention scaling, no switch: original_max_position_embeddings = the context).
function ropeScaling(fn, r, metadata, arch, tensors, context, rot) {
  const prefix = `${arch}.rope.scaling.`;
  for (const key of Object.keys(metadata)) {
    if (key.startsWith(prefix) && !ROPE_SCALING_KEYS.includes(key.slice(prefix.length))) {
      throw invalid(fn, `${key} is not supported (read: ${ROPE_SCALING_KEYS.map((x) => prefix + x).join(', ')})`, key);
    }
  }
  const type = r.string(`${prefix}type`, 'none');
  const freqs = tensors['rope_freqs.weight'];
  if (freqs) {
    if (type !== 'none') {
      throw invalid(fn, `the file has both rope_freqs.weight and ${prefix}type '${type}'; attnkit reads one or the other`, `${prefix}type`);
    }
    if (freqs.dims.length !== 1 || freqs.dims[0] !== rot / 2) {
      throw new AttnkitError(`${fn}: tensor rope_freqs.weight has dims ${JSON.stringify(freqs.dims)}, expected [${rot / 2}] ` +
        '(rotary dims / 2)', { code: 'ERR_SHAPE_MISMATCH', argument: 'rope_freqs.weight' });
    }
    const f = Array.from(freqs.dequantize());
    if (!f.every((x) => Number.isFinite(x) && x > 0)) {
      throw invalid(fn, 'rope_freqs.weight must hold finite factors above 0', 'rope_freqs.weight');
    }
    return { rope_type: 'longrope', short_factor: f, long_factor: f, original_max_position_embeddings: context, attention_factor: 1 };
  }
  if (type === 'none') return null;
  const factor = r.number(`${prefix}factor`, { min: 1 });
  if (type === 'linear') return { rope_type: 'linear', factor };
  if (type === 'yarn') {
    // llama.cpp multiplies its attn_factor by YaRN's own 0.1 ln(factor) + 1; transformers' attention_factor is the product.
    const attn = r.number(`${prefix}attn_factor`, { dflt: 1, min: 0 });
    const out = { rope_type: 'yarn', factor, original_max_position_embeddings: r.size(`${prefix}original_context_length`, context) };
    if (attn !== 1) out.attention_factor = attn * (0.1 * Math.log(factor) + 1);
    if (r.has(`${prefix}yarn_beta_fast`)) out.beta_fast = r.number(`${prefix}yarn_beta_fast`, { min: 0 });
    if (r.has(`${prefix}yarn_beta_slow`)) out.beta_slow = r.number(`${prefix}yarn_beta_slow`, { min: 0 });
    return out;
  }
  throw invalid(fn, `${prefix}type '${type}' is not supported (supported: none, linear, yarn)`, `${prefix}type`);
}

function sameBytes(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------- tensors

// A GGUF tensor under its Hugging Face name, as Model.setWeights takes a stored tensor: float32
// `type`, Hugging Face's `dims`, and writeTo(heap, ptr) that dequantises it into the model's wasm
// memory (rows un-permuted or the matrix transposed on the way, from one tensor-sized array).
class GgufWeight {
  constructor(tensor, dims, reorder = null) {
    this.type = 'float32';
    this.dims = dims;
    this.size = tensor.size;
    this.ggufName = tensor.name;
    this.ggmlType = tensor.ggmlType;
    this._tensor = tensor;
    this._reorder = reorder;
  }

  /** The float32 values in Hugging Face's layout (a new array). */
  get data() {
    const out = new Float32Array(this.size);
    this._fill(out);
    return out;
  }

  _fill(out) {
    const v = this._tensor.dequantize();
    if (this._reorder) this._reorder(v, out);
    else out.set(v);
  }

  writeTo(heap, ptr) {
    if (!this._reorder) {
      this._tensor.writeFloat32To(heap, ptr);
      return;
    }
    const v = this._tensor.dequantize(); // (in the loaders module: the model's heap does not move)
    this._reorder(v, heap._view(Float32Array, ptr, this.size));
  }
}

// convert_hf_to_gguf's LlamaModel.permute undone: within each of `heads` heads of `headDim` rows
// (of `cols` values), GGUF row 2j + s is Hugging Face's row s * headDim / 2 + j.
const unpermute = (heads, headDim, cols) => (src, dst) => {
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < half; j++) {
      for (let s = 0; s < 2; s++) {
        const from = (h * headDim + 2 * j + s) * cols, to = (h * headDim + s * half + j) * cols;
        dst.set(src.subarray(from, from + cols), to);
      }
    }
  }
};

// [rows, cols] -> [cols, rows] (GPT-2's Conv1D layout).
const transpose = (rows, cols) => (src, dst) => {
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) dst[j * rows + i] = src[i * cols + j];
};

/**
 * The GGUF tensors of a `config` (ggufConfig's) under Hugging Face's names, each checked for
 * presence and shape by its GGUF name; tensors the architecture does not use keep their GGUF name
 * (the model lists them in unusedWeights). Errors name the GGUF tensor.
 */
export function ggufTensors(fn, config, tensors, file = 'the GGUF file') {
  const gpt2 = config.model_type === 'gpt2';
  const D = gpt2 ? config.n_embd : config.hidden_size;
  const L = gpt2 ? config.n_layer : config.num_hidden_layers;
  const H = gpt2 ? config.n_head : config.num_attention_heads;
  const KV = gpt2 ? H : config.num_key_value_heads;
  const hd = config.head_dim ?? D / H;
  const F = gpt2 ? config.n_inner : config.intermediate_size;
  const V = config.vocab_size;
  const out = Object.create(null);
  const used = new Set(['rope_freqs.weight']);
  const take = (name, hf, dims, why, { optional = false, reorder = null, hfDims = dims } = {}) => {
    const t = tensors[name];
    if (!t) {
      if (optional) return false;
      throw invalid(fn, `${file} has no tensor ${name} (${why})`, name);
    }
    if (t.dims.length !== dims.length || t.dims.some((d, i) => d !== dims[i])) {
      throw new AttnkitError(`${fn}: tensor ${name} has dims ${JSON.stringify(t.dims)} (ggml ne ${JSON.stringify([...t.dims].reverse())}), ` +
        `expected ${JSON.stringify(dims)} (${why})`, { code: 'ERR_SHAPE_MISMATCH', argument: name });
    }
    used.add(name);
    out[hf] = new GgufWeight(t, hfDims, reorder);
    return true;
  };
  const tieNote = config.tie_word_embeddings ? '' : ' (the file has output.weight)';
  if (gpt2) {
    take('token_embd.weight', 'transformer.wte.weight', [V, D], 'vocabulary x embedding_length');
    take('position_embd.weight', 'transformer.wpe.weight', [config.n_positions, D], 'context_length x embedding_length');
    take('output_norm.weight', 'transformer.ln_f.weight', [D], 'embedding_length');
    take('output_norm.bias', 'transformer.ln_f.bias', [D], 'embedding_length');
    if (!config.tie_word_embeddings) take('output.weight', 'lm_head.weight', [V, D], `vocabulary x embedding_length${tieNote}`);
    else used.add('output.weight');
  } else {
    take('token_embd.weight', 'model.embed_tokens.weight', [V, D], 'vocabulary x embedding_length');
    take('output_norm.weight', 'model.norm.weight', [D], 'embedding_length');
    if (!config.tie_word_embeddings) take('output.weight', 'lm_head.weight', [V, D], `vocabulary x embedding_length${tieNote}`);
  }
  const zeros = (hf, n) => {
    if (!out[hf]) out[hf] = new Float32Array(n);
  };
  for (let i = 0; i < L; i++) {
    const g = (w) => `blk.${i}.${w}`;
    if (gpt2) {
      const h = (w) => `transformer.h.${i}.${w}`;
      take(g('attn_norm.weight'), h('ln_1.weight'), [D], 'embedding_length');
      take(g('attn_norm.bias'), h('ln_1.bias'), [D], 'embedding_length');
      // Conv1D's [in, out] was stored as [out, in] (ggml's rows are the inputs): transposed back.
      take(g('attn_qkv.weight'), h('attn.c_attn.weight'), [3 * D, D], '3 x embedding_length, embedding_length',
        { reorder: transpose(3 * D, D), hfDims: [D, 3 * D] });
      take(g('attn_qkv.bias'), h('attn.c_attn.bias'), [3 * D], '3 x embedding_length');
      take(g('attn_output.weight'), h('attn.c_proj.weight'), [D, D], 'embedding_length x embedding_length',
        { reorder: transpose(D, D), hfDims: [D, D] });
      take(g('attn_output.bias'), h('attn.c_proj.bias'), [D], 'embedding_length');
      take(g('ffn_norm.weight'), h('ln_2.weight'), [D], 'embedding_length');
      take(g('ffn_norm.bias'), h('ln_2.bias'), [D], 'embedding_length');
      take(g('ffn_up.weight'), h('mlp.c_fc.weight'), [F, D], 'feed_forward_length x embedding_length',
        { reorder: transpose(F, D), hfDims: [D, F] });
      take(g('ffn_up.bias'), h('mlp.c_fc.bias'), [F], 'feed_forward_length');
      take(g('ffn_down.weight'), h('mlp.c_proj.weight'), [D, F], 'embedding_length x feed_forward_length',
        { reorder: transpose(D, F), hfDims: [F, D] });
      take(g('ffn_down.bias'), h('mlp.c_proj.bias'), [D], 'embedding_length');
      continue;
    }
    const m = (w) => `model.layers.${i}.${w}`;
    // LLaMA's q and k rows were interleaved per head for ggml's rotary (q by head_count, k by head_count_kv).
    const llama = config.model_type === 'llama';
    take(g('attn_norm.weight'), m('input_layernorm.weight'), [D], 'embedding_length');
    take(g('attn_q.weight'), m('self_attn.q_proj.weight'), [H * hd, D], 'head_count x head dim, embedding_length',
      { reorder: llama ? unpermute(H, hd, D) : null });
    take(g('attn_k.weight'), m('self_attn.k_proj.weight'), [KV * hd, D], 'head_count_kv x head dim, embedding_length',
      { reorder: llama ? unpermute(KV, hd, D) : null });
    take(g('attn_v.weight'), m('self_attn.v_proj.weight'), [KV * hd, D], 'head_count_kv x head dim, embedding_length');
    take(g('attn_output.weight'), m('self_attn.o_proj.weight'), [D, H * hd], 'embedding_length, head_count x head dim');
    take(g('ffn_norm.weight'), m('post_attention_layernorm.weight'), [D], 'embedding_length');
    take(g('ffn_gate.weight'), m('mlp.gate_proj.weight'), [F, D], 'feed_forward_length x embedding_length');
    take(g('ffn_up.weight'), m('mlp.up_proj.weight'), [F, D], 'feed_forward_length x embedding_length');
    take(g('ffn_down.weight'), m('mlp.down_proj.weight'), [D, F], 'embedding_length x feed_forward_length');
    if (config.model_type === 'qwen2' || config.attention_bias) {
      // Qwen2's q/k/v biases (all required); LLaMA's optional ones, the absent as zeros.
      const optional = config.model_type !== 'qwen2';
      take(g('attn_q.bias'), m('self_attn.q_proj.bias'), [H * hd], 'head_count x head dim', { optional, reorder: llama ? unpermute(H, hd, 1) : null });
      take(g('attn_k.bias'), m('self_attn.k_proj.bias'), [KV * hd], 'head_count_kv x head dim', { optional, reorder: llama ? unpermute(KV, hd, 1) : null });
      take(g('attn_v.bias'), m('self_attn.v_proj.bias'), [KV * hd], 'head_count_kv x head dim', { optional });
      if (config.attention_bias) {
        take(g('attn_output.bias'), m('self_attn.o_proj.bias'), [D], 'embedding_length', { optional: true });
        zeros(m('self_attn.q_proj.bias'), H * hd);
        zeros(m('self_attn.k_proj.bias'), KV * hd);
        zeros(m('self_attn.v_proj.bias'), KV * hd);
        zeros(m('self_attn.o_proj.bias'), D);
      }
    }
  }
  // The rest: a block past block_count is refused (llama.cpp refuses any tensor it does not read);
  // others are passed on under their GGUF names, for the model's unusedWeights.
  for (const [name, t] of Object.entries(tensors)) {
    if (used.has(name)) continue;
    const blk = /^blk\.(\d+)\./.exec(name);
    if (blk && Number(blk[1]) >= L) {
      throw invalid(fn, `tensor ${name} is of block ${blk[1]}, but ${config.model_type}.block_count is ${L}`, name);
    }
    out[name] = t;
  }
  return out;
}

/**
 * A GGUF source read as Model.fromPretrained reads one: { spec, tensors (Hugging Face names),
 * config (the config.json it stands for), metadata }.
 */
export async function readGgufCheckpoint(ak, source, options) {
  const fn = 'Model.fromPretrained';
  const o = checkOptions(fn, options, ['onProgress', ...SOURCE_OPTIONS]);
  const onProgress = callback(fn, 'onProgress', o.onProgress);
  const bytes = await ggufSourceBytes(fn, source, { ...o, onProgress });
  const file = ggufSourceName(source);
  const { metadata, tensors } = await storedGguf(ak, bytes, fn);
  const config = ggufConfig(fn, metadata, tensors, file);
  const state = ggufTensors(fn, config, tensors, file);
  let spec;
  try {
    spec = await modelSpec(ak, config);
  } catch (e) {
    // The family reader names config.json's keys; say which GGUF file they came from.
    if (e instanceof AttnkitError) throw new AttnkitError(`${e.message} (the config.json that ${file}'s metadata describes)`, { code: e.code, argument: e.argument });
    throw e;
  }
  return { spec, tensors: state, config, metadata };
}

// The model families attnkit builds: how each names its weights in a Hugging Face checkpoint, and
// config.json -> the model spec (mapped by the C++ loaders module, src/attnkit/models/model_config.hpp).
import { loaders } from '../runtime/loaders.js';
import { textInput } from '../runtime/read_bytes.js';

// Per family: the checkpoint prefixes to strip (heads' checkpoints nest the base model), and each
// Hugging Face tensor name -> [module, weight] with module 'embeddings', a layer number, or
// 'final'. Names matching `ignore` are buffers, not weights.
export const FAMILIES = {
  bert: {
    prefixes: ['bert.', 'roberta.'],
    embeddings: {
      'embeddings.word_embeddings.weight': 'word', 'embeddings.position_embeddings.weight': 'position',
      'embeddings.token_type_embeddings.weight': 'tokenType', 'embeddings.LayerNorm.weight': 'normWeight',
      'embeddings.LayerNorm.bias': 'normBias',
    },
    layer: /^encoder\.layer\.(\d+)\.(.+)$/,
    layerPrefix: 'encoder.layer.',
    layerWeights: {
      'attention.self.query.weight': 'qWeight', 'attention.self.query.bias': 'qBias',
      'attention.self.key.weight': 'kWeight', 'attention.self.key.bias': 'kBias',
      'attention.self.value.weight': 'vWeight', 'attention.self.value.bias': 'vBias',
      'attention.output.dense.weight': 'outWeight', 'attention.output.dense.bias': 'outBias',
      'attention.output.LayerNorm.weight': 'norm1.weight', 'attention.output.LayerNorm.bias': 'norm1.bias',
      'intermediate.dense.weight': 'linear1.weight', 'intermediate.dense.bias': 'linear1.bias',
      'output.dense.weight': 'linear2.weight', 'output.dense.bias': 'linear2.bias',
      'output.LayerNorm.weight': 'norm2.weight', 'output.LayerNorm.bias': 'norm2.bias',
    },
    final: {},
    // The masked-LM heads (BertForMaskedLM's cls.predictions.*, RobertaForMaskedLM's lm_head.*),
    // top-level names; the decoder is the word table (tied: a stored decoder.weight is the same
    // tensor, which transformers ties on load too) and decoder.bias an alias of the head's bias.
    mlm: {
      'cls.predictions.transform.dense.weight': 'denseWeight', 'cls.predictions.transform.dense.bias': 'denseBias',
      'cls.predictions.transform.LayerNorm.weight': 'normWeight', 'cls.predictions.transform.LayerNorm.bias': 'normBias',
      'cls.predictions.bias': 'bias',
      'lm_head.dense.weight': 'denseWeight', 'lm_head.dense.bias': 'denseBias',
      'lm_head.layer_norm.weight': 'normWeight', 'lm_head.layer_norm.bias': 'normBias',
      'lm_head.bias': 'bias',
    },
    tiedDecoder: /^(cls\.predictions|lm_head)\.decoder\.(weight|bias)$/,
    // BertModel's pooler: tanh(dense(h[:, 0])).
    pooler: { 'pooler.dense.weight': 'weight', 'pooler.dense.bias': 'bias' },
    // The task heads (config.json's architectures): top-level names -> the task part's weights.
    // BertForSequenceClassification's dense is the pooler above.
    heads: {
      sequence: { 'classifier.weight': 'weight', 'classifier.bias': 'bias' },
      token: { 'classifier.weight': 'weight', 'classifier.bias': 'bias' },
      span: { 'qa_outputs.weight': 'weight', 'qa_outputs.bias': 'bias' },
    },
    ignore: /^embeddings\.position_ids$|^embeddings\.token_type_ids$/,
    configKeys: {
      dim: 'hidden_size', numHeads: 'num_attention_heads', numKvHeads: 'num_attention_heads', headDim: 'head size',
      ffnDim: 'intermediate_size', vocabSize: 'vocab_size', maxPositions: 'max_position_embeddings',
      typeVocabSize: 'type_vocab_size', numLabels: 'num_labels (the entries of id2label)',
    },
  },
  gpt2: {
    prefixes: ['transformer.'],
    embeddings: { 'wte.weight': 'word', 'wpe.weight': 'position' },
    layer: /^h\.(\d+)\.(.+)$/,
    layerPrefix: 'h.',
    layerWeights: {
      'ln_1.weight': 'norm1.weight', 'ln_1.bias': 'norm1.bias',
      'attn.c_attn.weight': 'inProjWeight', 'attn.c_attn.bias': 'inProjBias',
      'attn.c_proj.weight': 'outWeight', 'attn.c_proj.bias': 'outBias',
      'ln_2.weight': 'norm2.weight', 'ln_2.bias': 'norm2.bias',
      'mlp.c_fc.weight': 'linear1.weight', 'mlp.c_fc.bias': 'linear1.bias',
      'mlp.c_proj.weight': 'linear2.weight', 'mlp.c_proj.bias': 'linear2.bias',
    },
    final: { 'ln_f.weight': 'weight', 'ln_f.bias': 'bias' },
    heads: { sequence: { 'score.weight': 'weight' } },
    ignore: /^h\.\d+\.attn\.(bias|masked_bias)$/, // the causal-mask buffers of older checkpoints
    configKeys: {
      dim: 'n_embd', numHeads: 'n_head', numKvHeads: 'n_head', headDim: 'head size', ffnDim: 'n_inner',
      vocabSize: 'vocab_size', maxPositions: 'n_positions',
    },
  },
  llama: {
    prefixes: ['model.'],
    embeddings: { 'embed_tokens.weight': 'word' },
    layer: /^layers\.(\d+)\.(.+)$/,
    layerPrefix: 'layers.',
    layerWeights: {
      'input_layernorm.weight': 'norm1.weight', 'post_attention_layernorm.weight': 'norm2.weight',
      'self_attn.q_proj.weight': 'qWeight', 'self_attn.k_proj.weight': 'kWeight',
      'self_attn.v_proj.weight': 'vWeight', 'self_attn.o_proj.weight': 'outWeight',
      'self_attn.q_proj.bias': 'qBias', 'self_attn.k_proj.bias': 'kBias', 'self_attn.v_proj.bias': 'vBias',
      'self_attn.o_proj.bias': 'outBias',
      'mlp.gate_proj.weight': 'gate.weight', 'mlp.up_proj.weight': 'linear1.weight',
      'mlp.down_proj.weight': 'linear2.weight', 'mlp.gate_proj.bias': 'gate.bias',
      'mlp.up_proj.bias': 'linear1.bias', 'mlp.down_proj.bias': 'linear2.bias',
      // Qwen3's per-head RMSNorm of queries and keys.
      'self_attn.q_norm.weight': 'qNorm', 'self_attn.k_norm.weight': 'kNorm',
    },
    final: { 'norm.weight': 'weight' },
    heads: { sequence: { 'score.weight': 'weight' } },
    ignore: /^layers\.\d+\.self_attn\.rotary_emb\.inv_freq$/,
    configKeys: {
      dim: 'hidden_size', numHeads: 'num_attention_heads', numKvHeads: 'num_key_value_heads', headDim: 'head_dim',
      ffnDim: 'intermediate_size', vocabSize: 'vocab_size', maxPositions: 'max_position_embeddings',
    },
  },
};
// A fused tensor, split at load (its checkpoint name -> our names):
//   perHead: rows [heads, 3, headDim] -> q, k, v of [heads * headDim] rows each (GPT-NeoX's and
//   BLOOM's query_key_value: each head's q, k and v side by side);
//   halves: rows [2, n] -> the first n rows and the last n (Phi-3's gate_up_proj: gate then up).
const perHead = (...into) => ({ split: 'perHead', into });
const halves = (...into) => ({ split: 'halves', into });

// GPT-NeoX (Pythia): a parallel residual, rotary on part of each head, embed_out as the head.
FAMILIES.gpt_neox = {
  prefixes: ['gpt_neox.'],
  embeddings: { 'embed_in.weight': 'word' },
  layer: /^layers\.(\d+)\.(.+)$/,
  layerPrefix: 'layers.',
  layerWeights: {
    'input_layernorm.weight': 'norm1.weight', 'input_layernorm.bias': 'norm1.bias',
    'post_attention_layernorm.weight': 'norm2.weight', 'post_attention_layernorm.bias': 'norm2.bias',
    'attention.query_key_value.weight': perHead('qWeight', 'kWeight', 'vWeight'),
    'attention.query_key_value.bias': perHead('qBias', 'kBias', 'vBias'),
    'attention.dense.weight': 'outWeight', 'attention.dense.bias': 'outBias',
    'mlp.dense_h_to_4h.weight': 'linear1.weight', 'mlp.dense_h_to_4h.bias': 'linear1.bias',
    'mlp.dense_4h_to_h.weight': 'linear2.weight', 'mlp.dense_4h_to_h.bias': 'linear2.bias',
  },
  final: { 'final_layer_norm.weight': 'weight', 'final_layer_norm.bias': 'bias' },
  lmHead: 'embed_out.weight',
  heads: { sequence: { 'score.weight': 'weight' } },
  ignore: /^layers\.\d+\.attention\.(bias|masked_bias|rotary_emb\.inv_freq)$/,
  configKeys: {
    dim: 'hidden_size', numHeads: 'num_attention_heads', numKvHeads: 'num_attention_heads', headDim: 'head size',
    ffnDim: 'intermediate_size', vocabSize: 'vocab_size', maxPositions: 'max_position_embeddings',
  },
};

// BLOOM: ALiBi, a LayerNorm on the embeddings, the head tied to the word table.
FAMILIES.bloom = {
  prefixes: ['transformer.'],
  embeddings: {
    'word_embeddings.weight': 'word', 'word_embeddings_layernorm.weight': 'normWeight',
    'word_embeddings_layernorm.bias': 'normBias',
  },
  layer: /^h\.(\d+)\.(.+)$/,
  layerPrefix: 'h.',
  layerWeights: {
    'input_layernorm.weight': 'norm1.weight', 'input_layernorm.bias': 'norm1.bias',
    'post_attention_layernorm.weight': 'norm2.weight', 'post_attention_layernorm.bias': 'norm2.bias',
    'self_attention.query_key_value.weight': perHead('qWeight', 'kWeight', 'vWeight'),
    'self_attention.query_key_value.bias': perHead('qBias', 'kBias', 'vBias'),
    'self_attention.dense.weight': 'outWeight', 'self_attention.dense.bias': 'outBias',
    'mlp.dense_h_to_4h.weight': 'linear1.weight', 'mlp.dense_h_to_4h.bias': 'linear1.bias',
    'mlp.dense_4h_to_h.weight': 'linear2.weight', 'mlp.dense_4h_to_h.bias': 'linear2.bias',
  },
  final: { 'ln_f.weight': 'weight', 'ln_f.bias': 'bias' },
  heads: { sequence: { 'score.weight': 'weight' } },
  ignore: /^$/,
  configKeys: {
    dim: 'hidden_size', numHeads: 'n_head', numKvHeads: 'n_head', headDim: 'head size', ffnDim: '4 * hidden_size',
    vocabSize: 'vocab_size', maxPositions: 'the context (2048)',
  },
};

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

// Phi-3: LLaMA's blocks with q, k, v in one qkv_proj (q rows, then k, then v: our inProjWeight)
// and gate and up in one gate_up_proj (gate rows first).
FAMILIES.phi3 = {
  ...FAMILIES.llama,
  layerWeights: {
    'input_layernorm.weight': 'norm1.weight', 'post_attention_layernorm.weight': 'norm2.weight',
    'self_attn.qkv_proj.weight': 'inProjWeight', 'self_attn.o_proj.weight': 'outWeight',
    'mlp.gate_up_proj.weight': halves('gate.weight', 'linear1.weight'), 'mlp.down_proj.weight': 'linear2.weight',
  },
};

// Gemma 2: a norm before and after each sub-layer (our sandwich: norm1/norm2 before attention /
// feed-forward, norm3/norm4 after), GeGLU as LLaMA's gate/up/down; the head tied.
FAMILIES.gemma2 = {
  ...FAMILIES.llama,
  layerWeights: {
    ...FAMILIES.llama.layerWeights,
    'input_layernorm.weight': 'norm1.weight', 'pre_feedforward_layernorm.weight': 'norm2.weight',
    'post_attention_layernorm.weight': 'norm3.weight', 'post_feedforward_layernorm.weight': 'norm4.weight',
  },
};

// ModernBERT: fused Wqkv (q, k, v rows: our inProjWeight), GeGLU Wi (input rows, then gate), no
// attn_norm in layer 0; the masked-LM head is head.dense / head.norm / decoder (tied) + decoder.bias.
FAMILIES.modernbert = {
  prefixes: ['model.'],
  embeddings: {
    'embeddings.tok_embeddings.weight': 'word', 'embeddings.norm.weight': 'normWeight', 'embeddings.norm.bias': 'normBias',
  },
  layer: /^layers\.(\d+)\.(.+)$/,
  layerPrefix: 'layers.',
  layerWeights: {
    'attn_norm.weight': 'norm1.weight', 'attn_norm.bias': 'norm1.bias',
    'attn.Wqkv.weight': 'inProjWeight', 'attn.Wqkv.bias': 'inProjBias', 'attn.Wo.weight': 'outWeight', 'attn.Wo.bias': 'outBias',
    'mlp_norm.weight': 'norm2.weight', 'mlp_norm.bias': 'norm2.bias',
    'mlp.Wi.weight': halves('gate.weight', 'linear1.weight'), 'mlp.Wi.bias': halves('gate.bias', 'linear1.bias'),
    'mlp.Wo.weight': 'linear2.weight', 'mlp.Wo.bias': 'linear2.bias',
  },
  final: { 'final_norm.weight': 'weight', 'final_norm.bias': 'bias' },
  mlm: {
    'head.dense.weight': 'denseWeight', 'head.dense.bias': 'denseBias', 'head.norm.weight': 'normWeight',
    'head.norm.bias': 'normBias', 'decoder.bias': 'bias',
  },
  tiedDecoder: /^decoder\.weight$/,
  heads: {
    sequence: {
      'head.dense.weight': 'denseWeight', 'head.dense.bias': 'denseBias', 'head.norm.weight': 'normWeight',
      'head.norm.bias': 'normBias', 'classifier.weight': 'weight', 'classifier.bias': 'bias',
    },
    token: { 'classifier.weight': 'weight', 'classifier.bias': 'bias' },
  },
  ignore: /^$/,
  configKeys: {
    dim: 'hidden_size', numHeads: 'num_attention_heads', numKvHeads: 'num_attention_heads', headDim: 'head size',
    ffnDim: 'intermediate_size', vocabSize: 'vocab_size', maxPositions: 'max_position_embeddings',
    numLabels: 'num_labels (the entries of id2label)',
  },
};

// DistilBERT: BERT's layers under other names, no token types; its masked-LM head is
// vocab_transform, the activation, vocab_layer_norm and vocab_projector (tied to the word table).
FAMILIES.distilbert = {
  prefixes: ['distilbert.'],
  embeddings: {
    'embeddings.word_embeddings.weight': 'word', 'embeddings.position_embeddings.weight': 'position',
    'embeddings.LayerNorm.weight': 'normWeight', 'embeddings.LayerNorm.bias': 'normBias',
  },
  layer: /^transformer\.layer\.(\d+)\.(.+)$/,
  layerPrefix: 'transformer.layer.',
  layerWeights: {
    'attention.q_lin.weight': 'qWeight', 'attention.q_lin.bias': 'qBias',
    'attention.k_lin.weight': 'kWeight', 'attention.k_lin.bias': 'kBias',
    'attention.v_lin.weight': 'vWeight', 'attention.v_lin.bias': 'vBias',
    'attention.out_lin.weight': 'outWeight', 'attention.out_lin.bias': 'outBias',
    'sa_layer_norm.weight': 'norm1.weight', 'sa_layer_norm.bias': 'norm1.bias',
    'ffn.lin1.weight': 'linear1.weight', 'ffn.lin1.bias': 'linear1.bias',
    'ffn.lin2.weight': 'linear2.weight', 'ffn.lin2.bias': 'linear2.bias',
    'output_layer_norm.weight': 'norm2.weight', 'output_layer_norm.bias': 'norm2.bias',
  },
  final: {},
  mlm: {
    'vocab_transform.weight': 'denseWeight', 'vocab_transform.bias': 'denseBias',
    'vocab_layer_norm.weight': 'normWeight', 'vocab_layer_norm.bias': 'normBias', 'vocab_projector.bias': 'bias',
  },
  tiedDecoder: /^vocab_projector\.weight$/,
  heads: {
    sequence: {
      'pre_classifier.weight': 'denseWeight', 'pre_classifier.bias': 'denseBias', 'classifier.weight': 'weight', 'classifier.bias': 'bias',
    },
    token: { 'classifier.weight': 'weight', 'classifier.bias': 'bias' },
    span: { 'qa_outputs.weight': 'weight', 'qa_outputs.bias': 'bias' },
  },
  ignore: /^embeddings\.position_ids$/,
  configKeys: {
    dim: 'dim', numHeads: 'n_heads', numKvHeads: 'n_heads', headDim: 'head size', ffnDim: 'hidden_dim',
    vocabSize: 'vocab_size', maxPositions: 'max_position_embeddings', numLabels: 'num_labels (the entries of id2label)',
  },
};
// RoBERTa's sequence head: RobertaClassificationHead, out_proj(tanh(dense(h[:, 0]))).
FAMILIES.roberta = {
  ...FAMILIES.bert,
  heads: {
    ...FAMILIES.bert.heads,
    sequence: {
      'classifier.dense.weight': 'denseWeight', 'classifier.dense.bias': 'denseBias',
      'classifier.out_proj.weight': 'weight', 'classifier.out_proj.bias': 'bias',
    },
  },
};
FAMILIES['xlm-roberta'] = FAMILIES.roberta;
// Built like LLaMA: Qwen2 (q/k/v biases), Qwen3 (q_norm, k_norm), Mistral (a sliding window).
FAMILIES.qwen2 = FAMILIES.llama;
FAMILIES.qwen3 = FAMILIES.llama;
FAMILIES.mistral = FAMILIES.llama;

/** config.json (text, bytes, parsed object, or Response) -> the model spec of model_config.hpp. */
export async function modelSpec(ak, config) {
  const fn = 'Model.fromPretrained';
  const text = await textInput(fn, 'config', config);
  const heap = await loaders(ak);
  const bytes = new TextEncoder().encode(text);
  heap._withInputs([bytes], ([p]) => heap._raw(fn, '_modelSpec', [p, bytes.length]));
  return JSON.parse(heap._m._modelSpecJson());
}

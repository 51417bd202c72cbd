// A whole Transformer as one object (llm.c's GPT2 + gpt2_forward): the embeddings, the layer stack,
// the final norm, the heads and the KV cache, owned together, so that a forward pass or a decoding
// step is one call: ids in, the states and logits asked for out.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attnkit/ops/activation.hpp"

#include "attnkit/core/float_buffer.hpp"
#include "attnkit/core/status.hpp"
#include "attnkit/nn/embeddings.hpp"
#include "attnkit/nn/encoder_layer.hpp"

namespace attnkit {

// Where a model without explicit position ids takes them from.
enum class PositionIdsRule : int {
  arange = 0,   // past + 0, 1, 2, ...
  padding = 1,  // RoBERTa: from the ids, counting tokens that are not paddingIdx, past paddingIdx
};

// How each layer's attention scale follows its depth.
enum class LayerScaleRule : int {
  none = 0,
  inverse_layer_idx = 1,  // GPT-2's scale_attn_by_inverse_layer_idx: scale / (layer + 1)
};

// The language-model head over the final hidden states.
enum class LmHead : int {
  none = 0,
  tied = 1,      // the word table (x @ word.T)
  separate = 2,  // its own [vocab, dim] table (lm_head.weight)
};

constexpr int kMaxModelLayers = 4096;

// A task head over the final states (Hugging Face's *ForSequenceClassification,
// *ForTokenClassification, *ForQuestionAnswering): which rows it reads, an optional dense layer
// with an activation, then the classifier [num_labels, dim].
enum class TaskHead : int {
  none = 0,
  sequence = 1,  // one row per sequence -> logits [B, num_labels]
  token = 2,     // every row -> [B, L, num_labels]
  span = 3,      // every row -> [B, L, 2]: start and end logits (question answering)
};
enum class HeadPool : int {
  first = 0,       // the first token (BERT's [CLS], RoBERTa's <s>)
  last_token = 1,  // each row's last token that is not pad_token_id (decoders' `score`)
  mean = 2,        // the mean over the attention mask (ModernBERT's classifier_pooling "mean")
};
enum class HeadDense : int {
  none = 0,
  own = 1,     // its own dense [dim, dim] (DistilBERT's pre_classifier, RoBERTa's classifier.dense)
  pooler = 2,  // BERT's pooler (ModelPart::pooler) is the dense
};
enum class HeadActivation : int { none = 0, tanh = 1, relu = 2, gelu = 3 };

// ModelConfig as bindings/boundary.json declares it. Sizes travel as doubles (checked, named).
struct ModelConfig {
  EmbeddingsConfig embeddings;
  EncoderLayerConfig layer;          // every layer's (GPT-2's scale varies by layer_scale)
  double num_layers = 0;
  bool causal = false;               // decoders: each position attends to itself and the past
  PositionIdsRule position_ids = PositionIdsRule::arange;
  LayerScaleRule layer_scale = LayerScaleRule::none;
  NormKind final_norm = NormKind::none;
  double final_eps = 1e-5;
  LmHead lm_head = LmHead::none;
  bool mlm_head = false;             // BERT / RoBERTa's masked-LM head (see ModelPart::mlm)
  Activation mlm_activation = Activation::gelu;
  double context_size = 0;           // the most positions a sequence (and the KV cache) may hold
  // A local attention window (0 = none): causal models see the `window` keys up to and including
  // the query; bidirectional ones (ModernBERT) the keys within window / 2 of it. On every layer
  // (window_every 0), or on every layer but those with i % window_every == window_global
  // (Gemma 2: 2, 1; ModernBERT: 3, 0), whose rotary base is then local_rope_base when set.
  double window = 0;
  TaskHead task_head = TaskHead::none;
  double num_labels = 0;             // the classifier's rows (2 for span)
  HeadPool head_pool = HeadPool::first;
  HeadDense head_dense = HeadDense::none;
  HeadActivation head_activation = HeadActivation::none;
  bool head_bias = true;             // the classifier's bias
  double pad_token_id = -1;          // last_token pooling's padding id (-1: none, batch 1 only)
  double window_every = 0, window_global = 0;
  double local_rope_base = 0;        // the windowed layers' rotary base (0 = the layers' own)
  double final_logit_softcap = 0;    // Gemma 2: logits = c tanh(logits / c) (0 = none)
  bool hidden_before_final_norm = false;  // ModernBERT: hidden states' last entry before the final norm
  bool first_attn_norm = true;       // false: layer 0 has no norm before its attention (ModernBERT)
  bool head_norm = false;            // a LayerNorm after the task head's dense and activation (ModernBERT)
};

Status check_model_config(const ModelConfig& c);

// The parts whose weights Model::weight stores. Weight numbers within a part:
//   embeddings: EmbeddingsWeight; layer: the EncoderLayer's numbers (encoder_layer.hpp);
//   final_norm: 0 weight, 1 bias [dim]; lm_head: 0 the [vocab, dim] table;
//   mlm: 0 dense.weight [dim, dim], 1 dense.bias, 2 norm weight, 3 norm bias [dim], 4 bias [vocab]
//        (LayerNorm(act(dense(x))) @ word.T + bias, BertForMaskedLM's cls.predictions);
//   pooler: 0 dense.weight [dim, dim], 1 dense.bias [dim] (BertPooler: tanh(dense(h[:, 0])));
//   task: 0 dense.weight [dim, dim], 1 dense.bias [dim] (HeadDense::own), 2 classifier.weight
//         [num_labels, dim], 3 classifier.bias [num_labels], 4 norm weight, 5 norm bias [dim] (head_norm).
enum class ModelPart : int { embeddings = 0, layer = 1, final_norm = 2, lm_head = 3, mlm = 4, pooler = 5, task = 6 };

enum class LogitsMode : int { none = 0, all = 1, last = 2 };
enum class Pooling : int { none = 0, mean = 1, cls = 2, last = 3, pooler = 4 };

// A forward call's sizes (elements of each input; null inputs have 0) and what it returns.
struct ForwardOptions {
  double batch = 1, length = 0;
  double types_length = 0, positions_length = 0, mask_length = 0;
  bool use_cache = false;        // causal models: continue the KV cache (undone if the step fails)
  bool want_hidden = false;      // every layer's input and the final state: [layers + 1, B, L, D]
  bool want_attentions = false;  // [layers, B, heads, L, past + L]
  LogitsMode logits = LogitsMode::none;
  Pooling pooling = Pooling::none;
  bool normalize = false;        // the pooled rows divided by max(L2 norm, 1e-12)
};

class Model : public HeapObject {
 public:
  static Status create(const ModelConfig& config, std::unique_ptr<Model>& out);

  // Storage of one weight after checking `length` (see Embeddings::weight); `layer` for part layer.
  Status weight(ModelPart part, int layer, int which, double length, float*& data, bool check_only = false);
  // Whether every weight of a head is set (mlm: all five; pooler: both; lm_head: tied, or its table).
  bool has_head(ModelPart part) const;

  // One forward pass over ids [batch, length].
  //   types: [batch, length] or null; positions: [batch, length] or [length], or null: then
  //   RoBERTa's rule, or with use_cache from the attention mask (cumsum - 1, 1 at padding), else
  //   past + arange. mask: the attention mask (1 = token), [batch, length], or with use_cache
  //   [batch, cache_length() + length] (else the cached mask is continued).
  //   The sizes and flags are a ForwardOptions (what JavaScript writes, bindings/boundary.json).
  struct Inputs : ForwardOptions {
    const int32_t* ids = nullptr;
    const int32_t* types = nullptr;
    const int32_t* positions = nullptr;
    const int32_t* mask = nullptr;
  };
  // Sizes of the outputs of a prepared call, in floats (0 = not asked).
  struct Sizes {
    std::size_t last_hidden = 0, hidden = 0, attentions = 0, logits = 0, pooled = 0;
  };
  struct Outputs {
    float* last_hidden = nullptr;  // [B, L, D]
    float* hidden = nullptr;
    float* attentions = nullptr;
    float* logits = nullptr;       // [B, L, V] or [B, V]
    float* pooled = nullptr;       // [B, D]
  };
  // Every check (ids, shapes, heads asked for, cache room), nothing written.
  Status prepare(const Inputs& in, Sizes& sizes);
  // Runs a prepared call into caller-allocated outputs of prepare's sizes.
  Status run(const Inputs& in, const Outputs& out);

  // The KV cache: positions held, its batch (0 while empty), the mask of the cached positions
  // ([batch, length], empty while every position is a token).
  int cache_length() const { return cache_length_; }
  int cache_batch() const { return cache_length_ > 0 ? cache_batch_ : 0; }
  const Buffer<int32_t>& cache_mask() const { return cache_mask_; }
  void reset_cache();
  double cache_bytes() const;
  // Positions dropped from the front of the cache (a sliding window on every layer keeps the last
  // `window` keys: the cache holds at most 2 x window positions), and per row the tokens among
  // them (size 0: every dropped position was a token).
  int cache_start() const { return cache_start_; }
  const Buffer<int32_t>& cache_start_tokens() const { return start_tokens_; }
  // Replaces the cache: per layer keys and values [batch, kv_heads, length, head_dim], the mask
  // [batch, length] or null, the positions before it (start) and per row the tokens among them
  // (or null: all). All or nothing: on error every layer's cache is empty.
  Status write_cache(int batch, int length, const int32_t* mask, const float* const* keys, const float* const* values,
                     int start = 0, const int32_t* start_tokens = nullptr);
  int num_layers() const { return static_cast<int>(layers_.size()); }
  EncoderLayer& layer(int i) { return *layers_[static_cast<std::size_t>(i)]; }
  const ModelConfig& config() const { return config_; }

 private:
  Model() = default;
  Status prepare_cache_step(const Inputs& in);
  Embeddings::Inputs embeddings_inputs(const Inputs& in) const;
  MultiHeadAttention::Inputs layer_inputs(const Inputs& in, const float* x, bool rope, bool windowed) const;
  bool windowed(std::size_t layer) const {
    const double n = config_.window_every;
    return config_.window > 0 && (n == 0 || std::fmod(static_cast<double>(layer), n) != config_.window_global);
  }
  Status logits(const Inputs& in, const float* x, float* y);
  Status task_logits(const Inputs& in, const float* x, float* y);
  Status pool(float* out, const float* h, int B, int L, Pooling pooling, bool normalize, const int32_t* mask);

  ModelConfig config_;
  int dim_ = 0, vocab_ = 0, heads_ = 0;
  std::unique_ptr<Embeddings> embeddings_, head_;
  std::vector<std::unique_ptr<EncoderLayer>> layers_;
  FloatBuffer final_;    // weight [D], bias [D]
  FloatBuffer mlm_;      // dense.weight [D*D], dense.bias, norm weight, norm bias [D], bias [V]
  FloatBuffer pooler_;   // weight [D*D], bias [D]
  FloatBuffer task_;     // dense weight [D*D], dense bias [D], classifier [N*D], bias [N], norm [D], norm bias [D]
  bool mlm_set_[5] = {}, pooler_set_[2] = {}, task_set_[6] = {}, head_set_ = false;
  FloatBuffer work_;       // two hidden states taking turns (when they are not an output)
  FloatBuffer head_work_;  // the heads' and pooling's scratch
  // The cache's bookkeeping beside the layers' K and V: batch, length, mask.
  // (Buffers, not std::vector: a failed allocation is an error here, not an abort.)
  int cache_batch_ = 0, cache_length_ = 0, cache_start_ = 0;
  Buffer<int32_t> cache_mask_;  // size 0 while every cached position is a token
  Buffer<int32_t> start_tokens_;  // per row, the tokens among the dropped positions (size 0: all)
  Status drop_cache_front(int n);
  // A prepared step: the whole mask [B, total] (size 0: every position a token), its boolean form
  // for the layers, and the position ids [B, L] (size 0: the default rule).
  Buffer<int32_t> step_mask_, step_positions_;
  Buffer<uint8_t> step_pad_;     // [B, 1, 1, total] (size 0: no padding)
  Buffer<uint8_t> step_window_;  // [B, 1, L, total] for the windowed layers (size 0: the window sees everything)
  int step_past_ = 0, step_total_ = 0;
  std::size_t step_weights_ = 0;  // attention weights per layer
};

}  // namespace attnkit

// Multi-head attention as a module with its own weights (torch.nn.MultiheadAttention, Hugging
// Face LlamaAttention / BertSelfAttention): input projections, RoPE or ALiBi, grouped-query
// attention, a KV cache for incremental decoding, and the output projection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#include "attnkit/ops/attention.hpp"
#include "attnkit/core/float_buffer.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/ops/rotary.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

enum class PositionalBias : int { none = 0, rotary = 1, alibi = 2 };

// Sizes travel as doubles so that check_multi_head_attention_config can name bad values.
struct MultiHeadAttentionConfig {
  double dim = 0;        // embed_dim: features of the query input and of the output
  double heads = 0;      // query heads
  double kv_heads = 0;   // key/value heads (0 = heads); heads must be a multiple (GQA, MQA)
  double head_dim = 0;   // 0 = dim / heads
  double kdim = 0;       // features of the key input (0 = dim), cross-attention
  double vdim = 0;       // features of the value input (0 = dim)
  bool bias = true;      // q, k, v projection biases
  bool out_bias = true;  // output projection bias
  PositionalBias positional = PositionalBias::none;
  RotaryConfig rotary;   // used when positional == rotary; head_dim is filled in
  double scale = std::numeric_limits<double>::quiet_NaN();  // NaN = 1 / sqrt(head_dim)
  WeightLayout layout = WeightLayout::out_in;  // in_out: GPT-2's Conv1D c_attn / c_proj
  bool qk_norm = false;      // Qwen3: RMSNorm of each head's query and key over head_dim, before RoPE
  double qk_norm_eps = 1e-6;
  double softcap = 0;        // Gemma 2: scores become softcap * tanh(score / softcap) (0 = none)
};

Status check_multi_head_attention_config(const MultiHeadAttentionConfig& c);

// The weights, as setWeights names them in JavaScript. With layout out_in every projection is
// stored [out, in] (nn.Linear) and Q, K and V back to back, so when kdim == vdim == dim the three
// are nn.MultiheadAttention's in_proj_weight [(H + 2 Hkv) * head_dim, dim] and in_proj can be set at
// once. With layout in_out (Conv1D) the projections are [in, out]; when kdim == vdim == dim the
// fused one is GPT-2's c_attn [dim, (H + 2 Hkv) * head_dim], whose q, k and v columns interleave
// in memory, so only in_proj can be set (and only self-attention runs).
enum class MhaWeight : int {
  q = 0, k = 1, v = 2, in_proj = 3, out = 4,
  q_bias = 5, k_bias = 6, v_bias = 7, in_proj_bias = 8, out_bias = 9,
  q_norm = 10, k_norm = 11,  // [head_dim] each, with qk_norm (1 until set)
  rope_factors = 12,         // longrope: the short then the long factors, rotary_dim / 2 each (1 until set)
};
constexpr int kMhaWeights = 13;

class MultiHeadAttention : public HeapObject {
 public:
  // Validates and allocates the weights (zero; the projection weights must be set before forward).
  static Status create(const MultiHeadAttentionConfig& config, std::unique_ptr<MultiHeadAttention>& out);

  // Storage of one weight after checking `length` (see Embeddings::weight).
  Status weight(MhaWeight which, double length, float*& data, bool check_only = false);

  // One forward call.
  //   query: [batch, q_len, dim]. key/value: [batch, kv_len, kdim] / [batch, kv_len, vdim] for
  //   cross-attention, both null for self-attention (keys and values from the query).
  //   mask: broadcast to [batch, heads, q_len, total_kv_len] where total_kv_len includes cached keys.
  //   positions (rotary): [q_len] or [batch, q_len], null = cache_length() + arange(q_len).
  //   use_cache (self-attention only): append this call's keys and values (after RoPE) to the cache
  //   and attend over all of it; the cache keeps its batch size until reset_cache().
  //   Output [batch, q_len, dim]; weights [batch, heads, q_len, total_kv_len] when requested.
  struct Inputs {
    const float* query = nullptr;
    double query_length = 0, batch = 1, q_len = 0;
    const float* key = nullptr;
    const float* value = nullptr;
    double key_length = 0, value_length = 0, kv_len = 0;
    MaskKind mask_kind = MaskKind::none;
    const void* mask = nullptr;
    double mask_length = 0;
    double mask_dims[4] = {1, 1, 1, 1};
    const int32_t* positions = nullptr;
    double positions_length = 0;
    bool causal = false;
    bool use_cache = false;
    bool want_weights = false;
  };

  // Every check, before anything is allocated or written; sets the output sizes.
  Status prepare(const Inputs& in, std::size_t& out_elements, std::size_t& weight_elements) const;
  // Runs a prepared call. Can fail only with out_of_memory (scratch or cache growth), leaving the
  // cache as it was.
  Status run(float* out, float* weights, const Inputs& in);

  void reset_cache() { cache_length_ = 0, cache_batch_ = 0; }
  // Drops cached positions past `length` (a caller undoing a failed step).
  void truncate_cache(int length) { cache_length_ = length < cache_length_ ? length : cache_length_; }
  // Drops the first `n` cached positions (a sliding window's keys no query will see again); the
  // rest move to the front.
  void drop_cache_front(int n);
  int cache_length() const { return cache_length_; }
  // The most positions the cache may hold (a model's context size): a call that would pass it is
  // refused in prepare, and the cache never grows its storage past it.
  void set_cache_limit(int positions) { cache_limit_ = positions < 1 ? 1 : positions; }
  // The cache as it stands: cache_batch() rows (0 while empty) of [kv_heads, cache_length(),
  // head_dim] keys and values. read_cache copies the keys (values = false) or the values into out,
  // cache_values() floats.
  int cache_batch() const { return cache_length_ > 0 ? cache_batch_ : 0; }
  std::size_t cache_values() const {
    return static_cast<std::size_t>(cache_batch()) * kv_heads_ * cache_length_ * head_dim_;
  }
  void read_cache(bool values, float* out) const;
  // Floats one cached position holds per batch row, in K or in V: kv_heads * head_dim.
  std::size_t cache_position_values() const { return static_cast<std::size_t>(kv_heads_) * head_dim_; }
  // Replaces the cache with k and v, each [batch, kv_heads, length, head_dim] (what read_cache
  // wrote, here or in a module of the same shape). batch >= 1, 0 <= length <= the cache limit (else
  // invalid_argument, the cache untouched); out_of_memory leaves the cache empty.
  Status write_cache(const float* k, const float* v, int batch, int length);
  // Bytes the cache's K and V storage holds now.
  double cache_bytes() const { return k_cache_.data() ? 2.0 * sizeof(float) * k_cache_.size() : 0; }

 private:
  MultiHeadAttention() = default;
  Status ensure_cache(int batch, int needed);
  bool fused_in_out() const { return config_.layout == WeightLayout::in_out && kdim_ == dim_ && vdim_ == dim_; }

  MultiHeadAttentionConfig config_;
  int dim_ = 0, heads_ = 0, kv_heads_ = 0, head_dim_ = 0, kdim_ = 0, vdim_ = 0;
  float scale_ = 1;
  FloatBuffer w_in_, b_in_, w_out_, b_out_, slopes_, qk_norm_;  // qk_norm_: q's then k's [head_dim]
  FloatBuffer rope_factors_;  // longrope: short then long [rotary_dim / 2] each
  bool set_[4] = {false, false, false, false};  // q, k, v, out weights
  // Scratch reused across calls, and the cache [batch, kv_heads, capacity, head_dim] for K and V.
  FloatBuffer scratch_, k_cache_, v_cache_;
  RotaryTables rotary_tables_;
  int cache_capacity_ = 0, cache_length_ = 0, cache_batch_ = 0, cache_limit_ = 1 << 24;
};

}  // namespace attnkit

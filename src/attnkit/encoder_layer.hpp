// A Transformer encoder layer: self-attention and a feed-forward block, each with a residual
// connection and normalisation in one of three placements (torch.nn.TransformerEncoderLayer,
// Hugging Face BertLayer, GPT-2's block without its causal mask, CogView's sandwich).
#pragma once

#include <cstddef>
#include <memory>

#include "attnkit/activation.hpp"
#include "attnkit/embeddings.hpp"
#include "attnkit/float_buffer.hpp"
#include "attnkit/multi_head_attention.hpp"
#include "attnkit/status.hpp"

namespace attnkit {

enum class NormPlacement : int {
  post = 0,      // x = norm1(x + attn(x));        x = norm2(x + ffn(x))         (BERT, the paper)
  pre = 1,       // x = x + attn(norm1(x));        x = x + ffn(norm2(x))         (GPT-2, pre-LN)
  sandwich = 2,  // x = x + norm3(attn(norm1(x))); x = x + norm4(ffn(norm2(x)))  (CogView)
};

struct EncoderLayerConfig {
  MultiHeadAttentionConfig attention;  // dim, heads, kv_heads, bias, positional, rotary, scale
  double ffn_dim = 0;                  // dim_feedforward / intermediate_size
  Activation activation = Activation::gelu;
  NormPlacement placement = NormPlacement::post;
  NormKind norm = NormKind::layer_norm;  // layer_norm (weight + bias) or rms_norm (weight only)
  double eps = 1e-5;
  bool ffn_bias = true;
};

Status check_encoder_layer_config(const EncoderLayerConfig& c);

// Weights besides the attention's (which keep their MhaWeight numbers 0..9): norms have weight
// 1 and bias 0 until set; the feed-forward matrices are [out, in] (nn.Linear).
enum class LayerWeight : int {
  norm1_weight = 10, norm1_bias, norm2_weight, norm2_bias, norm3_weight, norm3_bias, norm4_weight, norm4_bias,
  linear1_weight, linear1_bias, linear2_weight, linear2_bias,
};

class EncoderLayer {
 public:
  static Status create(const EncoderLayerConfig& config, std::unique_ptr<EncoderLayer>& out);

  // `which`: an MhaWeight (0..9) or a LayerWeight (10..21).
  Status weight(int which, double length, float*& data, bool check_only = false);

  // x: [batch, length, dim] in `in.query` (key/value must be null: self-attention);
  // out: [batch, length, dim]; weights: the attention's, when requested.
  Status prepare(const MultiHeadAttention::Inputs& in, std::size_t& out_elements, std::size_t& weight_elements) const;
  Status run(float* out, float* weights, const MultiHeadAttention::Inputs& in);

  MultiHeadAttention& attention() { return *attention_; }

 private:
  EncoderLayer() = default;
  void norm(float* out, const float* x, std::size_t rows, int which) const;  // which: 0..3 = norm1..norm4

  EncoderLayerConfig config_;
  int dim_ = 0, ffn_ = 0;
  std::unique_ptr<MultiHeadAttention> attention_;
  FloatBuffer norms_;  // 4 x (weight [dim], bias [dim])
  FloatBuffer w1_, b1_, w2_, b2_;
  bool ffn_set_[2] = {false, false};
  FloatBuffer scratch_;
};

}  // namespace attnkit

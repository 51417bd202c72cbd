// A Transformer encoder layer: self-attention and a feed-forward block, each with a residual
// connection and normalisation in one of three placements (torch.nn.TransformerEncoderLayer,
// Hugging Face BertLayer; with causal attention GPT-2's and LLaMA's blocks).
#pragma once

#include <cstddef>
#include <memory>

#include "attnkit/nn/multi_head_attention.hpp"
#include "attnkit/core/float_buffer.hpp"
#include "attnkit/core/status.hpp"
#include "attnkit/nn/sublayer.hpp"

namespace attnkit {

// The settings every layer shares besides its attention.
struct LayerSettings {
  double ffn_dim = 0;                  // dim_feedforward / intermediate_size
  Activation activation = Activation::gelu;
  NormPlacement placement = NormPlacement::post;
  NormKind norm = NormKind::layer_norm;  // layer_norm (weight + bias) or rms_norm (weight only)
  double eps = 1e-5;
  bool ffn_bias = true;
  bool ffn_gated = false;              // LLaMA's MLP: linear2(act(gate(x)) * linear1(x))
  bool parallel = false;               // GPT-NeoX's parallel residual: x + attn(norm1(x)) + ffn(norm2(x)) (pre-norm)
  bool attn_norm = true;               // false: no norm before the attention (ModernBERT's first layer; pre-norm)
};

Status check_layer_settings(const LayerSettings& s, double dim);
// A layer's feed-forward network and its norms around `sublayers` sub-layers, from the layer's
// settings and its (self-)attention's config (dim, weight layout).
Status init_sublayers(const LayerSettings& s, const MultiHeadAttentionConfig& attention, int sublayers,
                      FeedForward& ffn, NormSet& norms);

struct EncoderLayerConfig {
  MultiHeadAttentionConfig attention;  // dim, heads, kv_heads, bias, positional, rotary, scale, layout
  LayerSettings layer;                 // the feed-forward uses attention.layout too
};

Status check_encoder_layer_config(const EncoderLayerConfig& c);

// Weight numbers: the attention's MhaWeight 0..11, then norm1..norm4 weight/bias 12..19 (norm3/4
// only with sandwich), then the feed-forward's linear1, linear2, gate weight/bias 20..25.
constexpr int kEncoderNorms = kMhaWeights, kEncoderFfn = kEncoderNorms + 8, kEncoderWeights = kEncoderFfn + 6;

class EncoderLayer : public HeapObject {
 public:
  static Status create(const EncoderLayerConfig& config, std::unique_ptr<EncoderLayer>& out);

  Status weight(int which, double length, float*& data, bool check_only = false);

  // x: [batch, length, dim] in `in.query` (key/value must be null: self-attention);
  // out: [batch, length, dim]; weights: the attention's, when requested.
  Status prepare(const MultiHeadAttention::Inputs& in, std::size_t& out_elements, std::size_t& weight_elements) const;
  Status run(float* out, float* weights, const MultiHeadAttention::Inputs& in);

  MultiHeadAttention& attention() { return *attention_; }

 private:
  EncoderLayer() = default;

  EncoderLayerConfig config_;
  std::unique_ptr<MultiHeadAttention> attention_;
  NormSet norms_;
  FeedForward ffn_;
  FloatBuffer scratch_;
};

}  // namespace attnkit

// A Transformer decoder layer: masked self-attention, cross-attention over an encoder's output
// ("memory"), and a feed-forward block, each with a residual connection and normalisation in one
// of three placements (torch.nn.TransformerDecoderLayer, the paper's decoder, Hugging Face's
// BertLayer with add_cross_attention).
#pragma once

#include <cstddef>
#include <memory>

#include "attnkit/nn/encoder_layer.hpp"

namespace attnkit {

struct DecoderLayerConfig {
  MultiHeadAttentionConfig self_attention;   // positional (RoPE/ALiBi) applies here only
  MultiHeadAttentionConfig cross_attention;  // dim = self_attention.dim; kdim = vdim = memory features
  LayerSettings layer;
};

Status check_decoder_layer_config(const DecoderLayerConfig& c);

// Weight numbers: self-attention 0..11 and cross-attention 12..23 (each as MhaWeight), norm1..norm6
// weight/bias 24..35 (norm1 self, norm2 cross, norm3 feed-forward; norm4..6 their sandwich output
// norms), then the feed-forward's linear1, linear2, gate weight/bias 36..41.
constexpr int kDecoderCross = kMhaWeights, kDecoderNorms = 2 * kMhaWeights, kDecoderFfn = kDecoderNorms + 12,
              kDecoderWeights = kDecoderFfn + 6;

class DecoderLayer : public HeapObject {
 public:
  static Status create(const DecoderLayerConfig& config, std::unique_ptr<DecoderLayer>& out);

  Status weight(int which, double length, float*& data, bool check_only = false);

  // self: the target sequence x [batch, length, dim] in query, its mask, positions, causal,
  //   use_cache (the self-attention's KV cache), want_weights; key/value must be null.
  // cross: memory [batch, memoryLength, kdim] in key and value (the same pointer may be passed
  //   twice), kv_len, and the memory mask [batch|1, heads|1, length|1, memoryLength]; its query,
  //   positions and flags are ignored (want_weights follows self).
  struct Inputs {
    MultiHeadAttention::Inputs self, cross;
  };

  // Sizes: the output [batch, length, dim], and with want_weights the self-attention weights
  // [batch, heads, length, cached + length] followed by the cross-attention weights
  // [batch, crossHeads, length, memoryLength] in one buffer.
  Status prepare(const Inputs& in, std::size_t& out_elements, std::size_t& weight_elements) const;
  Status run(float* out, float* weights, const Inputs& in);

  MultiHeadAttention& self_attention() { return *self_; }

 private:
  DecoderLayer() = default;
  MultiHeadAttention::Inputs cross_inputs(const Inputs& in) const;

  DecoderLayerConfig config_;
  std::unique_ptr<MultiHeadAttention> self_, cross_;
  NormSet norms_;
  FeedForward ffn_;
  FloatBuffer scratch_;
};

}  // namespace attnkit

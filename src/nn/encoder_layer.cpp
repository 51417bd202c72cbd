#include "attnkit/nn/encoder_layer.hpp"

#include <algorithm>
#include <new>

namespace attnkit {

Status check_layer_settings(const LayerSettings& l, double dim) {
  FeedForwardConfig f;
  f.dim = dim, f.ffn_dim = l.ffn_dim, f.activation = l.activation;
  Status s = check_feed_forward_config(f);
  if (!s.ok()) return s;
  const int place = static_cast<int>(l.placement), norm = static_cast<int>(l.norm);
  if (place < 0 || place > 2) return Status::error(Code::invalid_argument, "normPlacement", "normPlacement must be 'post', 'pre' or 'sandwich'");
  if (norm < 1 || norm > 2) return Status::error(Code::invalid_argument, "norm", "norm must be 'layernorm' or 'rmsnorm'");
  if (!l.attn_norm && l.placement != NormPlacement::pre) {
    return Status::error(Code::invalid_argument, "attnNorm", "attnNorm false takes normPlacement 'pre'");
  }
  if (l.parallel && l.placement != NormPlacement::pre) {
    return Status::error(Code::invalid_argument, "parallel", "a parallel residual takes normPlacement 'pre'");
  }
  return check_norm(0, dim, l.eps);
}

Status init_sublayers(const LayerSettings& l, const MultiHeadAttentionConfig& a, int sublayers, FeedForward& ffn,
                      NormSet& norms) {
  FeedForwardConfig f;
  f.dim = a.dim, f.ffn_dim = l.ffn_dim, f.activation = l.activation, f.bias = l.ffn_bias, f.gated = l.ffn_gated;
  f.layout = a.layout;
  Status s = ffn.init(f);
  if (!s.ok()) return s;
  if (!norms.init(sublayers, static_cast<int>(a.dim), l.placement, l.norm, l.eps)) {
    return Status::error(Code::out_of_memory, "dim", "could not allocate the norms");
  }
  return s;
}

Status check_encoder_layer_config(const EncoderLayerConfig& c) {
  Status s = check_multi_head_attention_config(c.attention);
  return s.ok() ? check_layer_settings(c.layer, c.attention.dim) : s;
}

Status EncoderLayer::create(const EncoderLayerConfig& config, std::unique_ptr<EncoderLayer>& out) {
  Status s = check_encoder_layer_config(config);
  if (!s.ok()) return s;
  std::unique_ptr<EncoderLayer> l(new EncoderLayer());
  if (!l) return Status::error(Code::out_of_memory, "EncoderLayer", "could not allocate the layer");
  s = MultiHeadAttention::create(config.attention, l->attention_);
  if (s.ok()) s = init_sublayers(config.layer, config.attention, 2, l->ffn_, l->norms_);
  if (!s.ok()) return s;
  l->config_ = config;
  out = std::move(l);
  return s;
}

Status EncoderLayer::weight(int which, double length, float*& data, bool check_only) {
  if (which >= 0 && which < kEncoderNorms) return attention_->weight(static_cast<MhaWeight>(which), length, data, check_only);
  if (which >= kEncoderNorms && which < kEncoderFfn) return norms_.weight(which - kEncoderNorms, length, data);
  if (which >= kEncoderFfn && which < kEncoderWeights) return ffn_.weight(which - kEncoderFfn, length, data, check_only);
  return Status::error(Code::invalid_argument, "weights", "unknown weight");
}

Status EncoderLayer::prepare(const MultiHeadAttention::Inputs& in, std::size_t& out_elements,
                             std::size_t& weight_elements) const {
  Status s = ffn_.check_ready();
  if (!s.ok()) return s;
  if (in.key || in.value) {
    return Status::error(Code::invalid_argument, "key", "an encoder layer attends to its own input; key/value are not taken");
  }
  return attention_->prepare(in, out_elements, weight_elements);
}

Status EncoderLayer::run(float* out, float* weights, const MultiHeadAttention::Inputs& in) {
  const int D = static_cast<int>(config_.attention.dim);
  const std::size_t rows = static_cast<std::size_t>(in.batch * in.q_len);
  if (!scratch_.reserve(2 * rows * D)) return Status::error(Code::out_of_memory, "x", "could not allocate the layer's scratch");
  float* h = scratch_.data();
  float* a = h + rows * D;
  std::copy(in.query, in.query + rows * D, out);
  const NormPlacement p = config_.layer.placement;
  if (config_.layer.parallel) {
    // GPT-NeoX: both sub-layers read the layer's input; out = (ffn(norm2(x)) + attn(norm1(x))) + x.
    if (!scratch_.reserve(3 * rows * D)) return Status::error(Code::out_of_memory, "x", "could not allocate the layer's scratch");
    h = scratch_.data(), a = h + rows * D;
    float* f = a + rows * D;
    MultiHeadAttention::Inputs ai = in;
    norms_.apply(h, in.query, rows, config_.layer.attn_norm ? 0 : -1);
    ai.query = h;
    Status s = attention_->run(a, weights, ai);
    if (!s.ok()) return s;
    norms_.apply(h, in.query, rows, 1);
    s = ffn_.run(f, h, rows);
    if (!s.ok()) return s;
    for (std::size_t i = 0; i < rows * D; ++i) out[i] = (f[i] + a[i]) + in.query[i];
    return s;
  }
  Status s = residual(out, rows, D, p, norms_, config_.layer.attn_norm ? 0 : -1, 2, h, a, [&](float* o, const float* x) {
    MultiHeadAttention::Inputs ai = in;
    ai.query = x;
    return attention_->run(o, weights, ai);
  });
  if (s.ok()) s = residual(out, rows, D, p, norms_, 1, 3, h, a, [&](float* o, const float* x) { return ffn_.run(o, x, rows); });
  return s;
}

}  // namespace attnkit

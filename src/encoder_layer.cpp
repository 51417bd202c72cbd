#include "attnkit/encoder_layer.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "attnkit/linear.hpp"
#include "attnkit/norm.hpp"

namespace attnkit {

namespace {
const char* layer_weight_name(int which) {
  static const char* const names[] = {"norm1.weight", "norm1.bias", "norm2.weight",   "norm2.bias",
                                      "norm3.weight", "norm3.bias", "norm4.weight",   "norm4.bias",
                                      "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"};
  return names[which - 10];
}

// x += y over n floats (the residual connections; a memory-bound pass next to the matmuls).
void add_in_place(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}
}  // namespace

Status check_encoder_layer_config(const EncoderLayerConfig& c) {
  Status s = check_multi_head_attention_config(c.attention);
  if (s.ok()) s = check_integer("ffnDim", c.ffn_dim, 1, 1 << 18);
  if (s.ok()) s = check_output_size("ffnDim * dim", c.ffn_dim * c.attention.dim);
  if (!s.ok()) return s;
  const int act = static_cast<int>(c.activation), place = static_cast<int>(c.placement), norm = static_cast<int>(c.norm);
  if (act < 0 || act > 2) return Status::error(Code::invalid_argument, "activation", "activation must be 'relu', 'gelu' or 'gelu_tanh'");
  if (place < 0 || place > 2) return Status::error(Code::invalid_argument, "normPlacement", "normPlacement must be 'post', 'pre' or 'sandwich'");
  if (norm < 1 || norm > 2) return Status::error(Code::invalid_argument, "norm", "norm must be 'layernorm' or 'rmsnorm'");
  return check_norm(0, c.attention.dim, c.eps);
}

Status EncoderLayer::create(const EncoderLayerConfig& config, std::unique_ptr<EncoderLayer>& out) {
  Status s = check_encoder_layer_config(config);
  if (!s.ok()) return s;
  std::unique_ptr<EncoderLayer> l(new (std::nothrow) EncoderLayer());
  if (!l) return Status::error(Code::out_of_memory, "EncoderLayer", "could not allocate the layer");
  s = MultiHeadAttention::create(config.attention, l->attention_);
  if (!s.ok()) return s;
  l->config_ = config;
  l->dim_ = static_cast<int>(config.attention.dim);
  l->ffn_ = static_cast<int>(config.ffn_dim);
  const std::size_t D = l->dim_, F = l->ffn_;
  if (!l->norms_.assign(8 * D, 0.f) || !l->w1_.assign(F * D, 0.f) || !l->b1_.assign(F, 0.f) ||
      !l->w2_.assign(D * F, 0.f) || !l->b2_.assign(D, 0.f)) {
    return Status::error(Code::out_of_memory, "ffnDim", "could not allocate the feed-forward weights");
  }
  for (int k = 0; k < 4; ++k) std::fill_n(l->norms_.data() + 2 * k * D, D, 1.f);  // norm weights 1, biases 0
  out = std::move(l);
  return s;
}

Status EncoderLayer::weight(int which, double length, float*& data, bool check_only) {
  if (which >= 0 && which <= 9) return attention_->weight(static_cast<MhaWeight>(which), length, data, check_only);
  if (which < 10 || which > 21) return Status::error(Code::invalid_argument, "weights", "unknown weight");
  const char* name = layer_weight_name(which);
  const std::size_t D = dim_, F = ffn_;
  double expected = 0;
  const char* formula = "";
  if (which < static_cast<int>(LayerWeight::linear1_weight)) {
    const int k = (which - 10) / 2;
    const bool bias = (which - 10) % 2 == 1;
    if (k >= 2 && config_.placement != NormPlacement::sandwich) {
      return Status::error(Code::invalid_argument, name,
                           std::string(name) + " exists only with normPlacement 'sandwich'");
    }
    if (bias && config_.norm == NormKind::rms_norm) {
      return Status::error(Code::invalid_argument, name, std::string(name) + ": RMSNorm has no bias");
    }
    expected = static_cast<double>(D), formula = "dim";
    data = norms_.data() + (2 * k + (bias ? 1 : 0)) * D;
  } else {
    const bool bias = which == static_cast<int>(LayerWeight::linear1_bias) || which == static_cast<int>(LayerWeight::linear2_bias);
    if (bias && !config_.ffn_bias) {
      return Status::error(Code::invalid_argument, name, std::string(name) + ": this layer was created with ffnBias: false");
    }
    switch (static_cast<LayerWeight>(which)) {
      case LayerWeight::linear1_weight: expected = static_cast<double>(F * D), formula = "ffnDim * dim", data = w1_.data(); break;
      case LayerWeight::linear1_bias: expected = static_cast<double>(F), formula = "ffnDim", data = b1_.data(); break;
      case LayerWeight::linear2_weight: expected = static_cast<double>(D * F), formula = "dim * ffnDim", data = w2_.data(); break;
      default: expected = static_cast<double>(D), formula = "dim", data = b2_.data(); break;
    }
  }
  Status s = check_length(name, length, expected, formula);
  if (!s.ok()) return s;
  if (!check_only && which == static_cast<int>(LayerWeight::linear1_weight)) ffn_set_[0] = true;
  if (!check_only && which == static_cast<int>(LayerWeight::linear2_weight)) ffn_set_[1] = true;
  return s;
}

Status EncoderLayer::prepare(const MultiHeadAttention::Inputs& in, std::size_t& out_elements,
                             std::size_t& weight_elements) const {
  for (int k = 0; k < 2; ++k)
    if (!ffn_set_[k]) {
      const char* name = layer_weight_name(k ? static_cast<int>(LayerWeight::linear2_weight)
                                             : static_cast<int>(LayerWeight::linear1_weight));
      return Status::error(Code::invalid_argument, name, std::string(name) + " was never set (call setWeights first)");
    }
  if (in.key || in.value) {
    return Status::error(Code::invalid_argument, "key", "an encoder layer attends to its own input; key/value are not taken");
  }
  return attention_->prepare(in, out_elements, weight_elements);
}

void EncoderLayer::norm(float* out, const float* x, std::size_t rows, int which) const {
  const float* w = norms_.data() + 2 * which * dim_;
  if (config_.norm == NormKind::rms_norm) rms_norm(out, x, rows, dim_, w, config_.eps);
  else layer_norm(out, x, rows, dim_, w, w + dim_, config_.eps);
}

Status EncoderLayer::run(float* out, float* weights, const MultiHeadAttention::Inputs& in) {
  const std::size_t rows = static_cast<std::size_t>(in.batch * in.q_len), D = dim_, F = ffn_;
  const std::size_t need = 2 * rows * D + rows * F;
  if (!scratch_.reserve(need)) return Status::error(Code::out_of_memory, "x", "could not allocate the layer's scratch");
  float* h = scratch_.data();  // normalised input of a sub-block
  float* a = h + rows * D;    // a sub-block's output
  float* f = a + rows * D;    // the feed-forward hidden layer
  const float* x = in.query;
  MultiHeadAttention::Inputs ai = in;
  const bool post = config_.placement == NormPlacement::post, sandwich = config_.placement == NormPlacement::sandwich;
  const float* b1 = config_.ffn_bias ? b1_.data() : nullptr;
  const float* b2 = config_.ffn_bias ? b2_.data() : nullptr;

  // Attention sub-block.
  if (!post) {
    norm(h, x, rows, 0);
    ai.query = h;
  }
  Status s = attention_->run(a, weights, ai);
  if (!s.ok()) return s;
  if (sandwich) norm(a, a, rows, 2);
  add_in_place(a, x, rows * D);  // a = x + attention
  if (post) norm(out, a, rows, 0);
  else std::copy(a, a + rows * D, out);

  // Feed-forward sub-block on `out`.
  const float* ffn_in = out;
  if (!post) {
    norm(h, out, rows, 1);
    ffn_in = h;
  }
  linear(f, ffn_in, rows, dim_, ffn_, w1_.data(), WeightLayout::out_in, b1);
  activation(f, rows * F, config_.activation);
  linear(a, f, rows, ffn_, dim_, w2_.data(), WeightLayout::out_in, b2);
  if (sandwich) norm(a, a, rows, 3);
  if (post) {
    add_in_place(a, out, rows * D);
    norm(out, a, rows, 1);
  } else {
    add_in_place(out, a, rows * D);
  }
  return s;
}

}  // namespace attnkit

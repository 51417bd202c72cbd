#include "attnkit/nn/sublayer.hpp"

#include <algorithm>

namespace attnkit {

bool NormSet::init(int sublayers, int dim, NormPlacement placement, NormKind kind, double eps) {
  sublayers_ = sublayers, dim_ = dim, placement_ = placement, kind_ = kind, eps_ = static_cast<float>(eps);
  const std::size_t D = dim;
  if (!data_.assign(2 * count() * D, 0.f)) return false;
  for (int k = 0; k < count(); ++k) std::fill_n(data_.data() + 2 * k * D, D, 1.f);  // weights 1, biases 0
  return true;
}

std::string NormSet::name(int which) {
  return "norm" + std::to_string(which / 2 + 1) + (which % 2 ? ".bias" : ".weight");
}

Status NormSet::weight(int which, double length, float*& data) const {
  const int k = which / 2;
  const bool bias = which % 2 == 1;
  const std::string n = name(which);
  if (k >= sublayers_ && placement_ != NormPlacement::sandwich) {
    return Status::error(Code::invalid_argument, n, n + " exists only with normPlacement 'sandwich'");
  }
  if (bias && kind_ == NormKind::rms_norm) return Status::error(Code::invalid_argument, n, n + ": RMSNorm has no bias");
  Status s = check_length(n.c_str(), length, dim_, "dim");
  if (s.ok()) data = const_cast<float*>(data_.data()) + static_cast<std::size_t>(which) * dim_;
  return s;
}

void NormSet::apply(float* out, const float* x, std::size_t rows, int k) const {
  if (k < 0) {
    if (out != x) std::copy(x, x + rows * static_cast<std::size_t>(dim_), out);
    return;
  }
  const float* w = data_.data() + 2 * static_cast<std::size_t>(k) * dim_;
  if (kind_ == NormKind::rms_norm) rms_norm(out, x, rows, dim_, w, eps_);
  else layer_norm(out, x, rows, dim_, w, w + dim_, eps_);
}

Status check_feed_forward_config(const FeedForwardConfig& c) {
  Status s = check_integer("ffnDim", c.ffn_dim, 1, 1 << 18);
  if (s.ok()) s = check_output_size("ffnDim * dim", c.ffn_dim * c.dim);
  if (!s.ok()) return s;
  const int act = static_cast<int>(c.activation);
  if (act < 0 || act > 3) {
    return Status::error(Code::invalid_argument, "activation", "activation must be 'relu', 'gelu', 'gelu_tanh' or 'silu'");
  }
  if (c.layout != WeightLayout::out_in && c.layout != WeightLayout::in_out) {
    return Status::error(Code::invalid_argument, "weightLayout", "weightLayout must be 'outIn' or 'inOut'");
  }
  return s;
}

const char* FeedForward::name(int which) {
  static const char* const names[] = {"linear1.weight", "linear1.bias", "linear2.weight",
                                      "linear2.bias",   "gate.weight",  "gate.bias"};
  return names[which];
}

Status FeedForward::init(const FeedForwardConfig& c) {
  Status s = check_feed_forward_config(c);
  if (!s.ok()) return s;
  c_ = c;
  dim_ = static_cast<int>(c.dim), ffn_ = static_cast<int>(c.ffn_dim);
  const std::size_t D = dim_, F = ffn_;
  const int matrices = c.gated ? 3 : 2;
  for (int m = 0; m < matrices; ++m)
    if (!w_[m].assign(F * D, 0.f) || !b_[m].assign(m == 1 ? D : F, 0.f)) {
      return Status::error(Code::out_of_memory, "ffnDim", "could not allocate the feed-forward weights");
    }
  return s;
}

Status FeedForward::weight(int which, double length, float*& data, bool check_only) {
  const int m = which / 2;
  const bool bias = which % 2 == 1;
  const char* n = name(which);
  if (m == 2 && !c_.gated) {
    return Status::error(Code::invalid_argument, n, std::string(n) + " exists only in a gated feed-forward (ffnGated: true)");
  }
  if (bias && !c_.bias) {
    return Status::error(Code::invalid_argument, n, std::string(n) + ": this layer was created with ffnBias: false");
  }
  const double D = dim_, F = ffn_;
  Status s = bias ? check_length(n, length, m == 1 ? D : F, m == 1 ? "dim" : "ffnDim")
                  : check_length(n, length, F * D, m == 1 ? "dim * ffnDim" : "ffnDim * dim");
  if (!s.ok()) return s;
  data = bias ? b_[m].data() : w_[m].data();
  if (!check_only && !bias) set_[m] = true;
  return s;
}

Status FeedForward::check_ready() const {
  for (int m = 0; m < (c_.gated ? 3 : 2); ++m)
    if (!set_[m]) {
      const char* n = name(2 * m);
      return Status::error(Code::invalid_argument, n, std::string(n) + " was never set (call setWeights first)");
    }
  return Status::success();
}

Status FeedForward::run(float* out, const float* x, std::size_t rows) {
  const std::size_t F = ffn_;
  if (!scratch_.reserve(rows * F * (c_.gated ? 2 : 1))) {
    return Status::error(Code::out_of_memory, "x", "could not allocate the feed-forward scratch");
  }
  auto bias = [&](int m) { return c_.bias ? b_[m].data() : nullptr; };
  float* f = scratch_.data();
  linear(f, x, rows, dim_, ffn_, w_[0].data(), c_.layout, bias(0));
  if (c_.gated) {
    float* g = f + rows * F;
    linear(g, x, rows, dim_, ffn_, w_[2].data(), c_.layout, bias(2));
    activation(g, rows * F, c_.activation);
    for (std::size_t i = 0; i < rows * F; ++i) f[i] *= g[i];
  } else {
    activation(f, rows * F, c_.activation);
  }
  linear(out, f, rows, ffn_, dim_, w_[1].data(), c_.layout, bias(1));
  return Status::success();
}

}  // namespace attnkit

// What encoder and decoder layers are built from (the paper's "sub-layers"): the norms around
// each sub-layer, the position-wise feed-forward network, and the residual connection in each norm
// placement.
#pragma once

#include <cstddef>
#include <string>

#include "attnkit/ops/activation.hpp"
#include "attnkit/nn/embeddings.hpp"
#include "attnkit/core/float_buffer.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/ops/norm.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

// Where the norms sit around a sub-layer f (attention or feed-forward):
enum class NormPlacement : int {
  post = 0,      // x = norm_in(x + f(x))                  (BERT, the paper, nn.Transformer*Layer)
  pre = 1,       // x = x + f(norm_in(x))                  (GPT-2, LLaMA, norm_first=True)
  sandwich = 2,  // x = x + norm_out(f(norm_in(x)))        (CogView's sandwich LN)
};

// The norms of a layer with `sublayers` sub-layers: norm1..normN before (pre, sandwich) or after
// (post) each sub-layer, and with sandwich also normN+1..norm2N on each sub-layer's output.
// LayerNorm has weight and bias (1 and 0 until set), RMSNorm a weight only.
class NormSet {
 public:
  bool init(int sublayers, int dim, NormPlacement placement, NormKind kind, double eps);
  int count() const { return 2 * sublayers_; }  // weight numbers: 2 k (weight), 2 k + 1 (bias)
  // `which` in [0, 2 * count()): checks that the norm exists and `length` == dim.
  Status weight(int which, double length, float*& data) const;
  // out = norm k (0-based) of x over rows of dim; out may alias x. k < 0: out = x (no norm).
  void apply(float* out, const float* x, std::size_t rows, int k) const;
  static std::string name(int which);  // "norm3.bias"

 private:
  FloatBuffer data_;  // per norm: weight [dim], bias [dim]
  int sublayers_ = 0, dim_ = 0;
  NormPlacement placement_ = NormPlacement::post;
  NormKind kind_ = NormKind::layer_norm;
  float eps_ = 1e-5f;
};

// The feed-forward network: linear2(act(linear1(x))), or gated (LLaMA's MLP)
// linear2(act(gate(x)) * linear1(x)) with linear1 = up_proj, gate = gate_proj, linear2 = down_proj.
struct FeedForwardConfig {
  double dim = 0, ffn_dim = 0;
  Activation activation = Activation::gelu;
  bool bias = true;
  bool gated = false;
  WeightLayout layout = WeightLayout::out_in;  // in_out: GPT-2's c_fc [dim, ffn] / c_proj [ffn, dim]
};

Status check_feed_forward_config(const FeedForwardConfig& c);

class FeedForward {
 public:
  static constexpr int kWeights = 6;  // linear1 w/b, linear2 w/b, gate w/b
  Status init(const FeedForwardConfig& c);
  Status weight(int which, double length, float*& data, bool check_only);
  Status check_ready() const;  // every matrix set
  // out [rows, dim] from x [rows, dim]; out must not alias x.
  Status run(float* out, const float* x, std::size_t rows);
  static const char* name(int which);  // "linear1.weight"

 private:
  FeedForwardConfig c_;
  int dim_ = 0, ffn_ = 0;
  FloatBuffer w_[3], b_[3];  // linear1, linear2, gate
  bool set_[3] = {false, false, false};
  FloatBuffer scratch_;
};

// The residual connection around sub-layer f under a placement, in place on the hidden state
// x [rows, dim]. f(out, in) writes the sub-layer's [rows, dim] output; h and a are scratch of
// rows * dim floats each.
template <class F>
Status residual(float* x, std::size_t rows, int dim, NormPlacement placement, const NormSet& norms, int norm_in,
                int norm_out, float* h, float* a, F&& f) {
  const std::size_t n = rows * static_cast<std::size_t>(dim);
  Status s;
  if (placement == NormPlacement::post) {
    s = f(a, static_cast<const float*>(x));
    if (!s.ok()) return s;
    for (std::size_t i = 0; i < n; ++i) a[i] += x[i];  // a memory-bound pass beside the matmuls
    norms.apply(x, a, rows, norm_in);
    return s;
  }
  norms.apply(h, x, rows, norm_in);
  s = f(a, static_cast<const float*>(h));
  if (!s.ok()) return s;
  if (placement == NormPlacement::sandwich) norms.apply(a, a, rows, norm_out);
  for (std::size_t i = 0; i < n; ++i) x[i] += a[i];
  return s;
}

}  // namespace attnkit

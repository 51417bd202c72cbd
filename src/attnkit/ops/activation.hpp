// Element-wise activations of the feed-forward block.
#pragma once

#include <cstddef>

namespace attnkit {

enum class Activation : int {
  relu = 0,       // max(x, 0)
  gelu = 1,       // x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)): torch.nn.GELU(), BERT's "gelu"
  gelu_tanh = 2,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GELU(approximate='tanh'), HF "gelu_new"
  silu = 3,       // x * sigmoid(x): torch.nn.SiLU, HF "silu" / "swish" (LLaMA's gated feed-forward)
};

// In place over n floats.
void activation(float* x, std::size_t n, Activation kind);

namespace ref {
void activation(float* x, std::size_t n, Activation kind);  // std::erf / std::tanh
}
namespace simd {
// erf by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7) and tanh from exp(-2|u|), both with the
// polynomial exp2 of simd/exp.hpp: |gelu error| <= ~1e-7 * (1 + |x|); sigmoid from exp(-|x|).
void activation(float* x, std::size_t n, Activation kind);
}

}  // namespace attnkit

#include "attnkit/activation.hpp"

#include <algorithm>
#include <cmath>

namespace attnkit {

namespace ref {
void activation(float* x, std::size_t n, Activation kind) {
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[i];
    switch (kind) {
      case Activation::relu: x[i] = std::max(x[i], 0.f); break;
      case Activation::gelu: x[i] = static_cast<float>(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))); break;
      case Activation::gelu_tanh:
        x[i] = static_cast<float>(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
        break;
      case Activation::silu: x[i] = static_cast<float>(v / (1 + std::exp(-v))); break;
    }
  }
}
}  // namespace ref

void activation(float* x, std::size_t n, Activation kind) {
#if ATTNKIT_HAVE_SIMD
  simd::activation(x, n, kind);
#else
  ref::activation(x, n, kind);
#endif
}

}  // namespace attnkit

#include "attnkit/ops/activation.hpp"
#include "attnkit/core/parallel.hpp"

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
  // Element-wise, each vector through the same function (the tail too): ranges on the pool.
  constexpr double kGrain = 1 << 16;
  parallel_ranges(n, 64, task_count(static_cast<double>(n), kGrain),
                  [&](std::size_t i0, std::size_t i1) { simd::activation(x + i0, i1 - i0, kind); });
#else
  ref::activation(x, n, kind);
#endif
}

}  // namespace attnkit

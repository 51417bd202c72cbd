// xsimd kernels for one-hot and the embedding gather (contracts in attnkit/ops/embedding.hpp).
#include <cstring>

#include "attnkit/ops/embedding.hpp"
#include "attnkit/core/simd_arch.hpp"

namespace attnkit::simd {

template <class Arch>
struct scaled_copy {
  // y[i] = x[i] * s: vector body, scalar tail.
  void operator()(Arch, float* y, const float* x, int n, float s) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const bf vs(s);
    int i = 0;
    for (; i + 2 * N <= n; i += 2 * N) {
      (bf::load_unaligned(x + i) * vs).store_unaligned(y + i);
      (bf::load_unaligned(x + i + N) * vs).store_unaligned(y + i + N);
    }
    for (; i + N <= n; i += N) (bf::load_unaligned(x + i) * vs).store_unaligned(y + i);
    for (; i < n; ++i) y[i] = x[i] * s;
  }
};

template <class Arch>
struct zero_fill {
  void operator()(Arch, float* y, std::size_t n) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr std::size_t N = bf::size;
    const bf z(0.0f);
    std::size_t i = 0;
    for (; i + N <= n; i += N) z.store_unaligned(y + i);
    for (; i < n; ++i) y[i] = 0.0f;
  }
};

void one_hot(float* out, const int32_t* ids, std::size_t n, int depth) {
  zero_fill<simd_arch>{}(simd_arch{}, out, n * static_cast<std::size_t>(depth));
  for (std::size_t t = 0; t < n; ++t) out[t * depth + ids[t]] = 1.0f;
}

void embedding(float* out, const int32_t* ids, std::size_t n, const float* table, int dim, float scale) {
  for (std::size_t t = 0; t < n; ++t) {
    const float* row = table + static_cast<std::size_t>(ids[t]) * dim;
    if (scale == 1.0f) {
      std::memcpy(out + t * dim, row, sizeof(float) * dim);  // a plain gather is a copy
    } else {
      scaled_copy<simd_arch>{}(simd_arch{}, out + t * dim, row, dim, scale);
    }
  }
}

}  // namespace attnkit::simd

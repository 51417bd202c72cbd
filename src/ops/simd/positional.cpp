// xsimd kernel for the sinusoidal positional encoding (contract in attnkit/ops/positional.hpp).
#include <algorithm>

#include "attnkit/ops/positional.hpp"
#include "attnkit/core/simd_arch.hpp"
#include "ops/simd/sincos.hpp"

namespace attnkit::simd {

// One row at a time; each vector step turns N frequencies into N sines and N cosines with a
// single range reduction, then writes them in the requested layout. The tail pads the last
// frequencies into a full vector so every column gets bit-identical arithmetic.
template <class Arch>
struct sinusoidal_kernel {
  void operator()(Arch, float* out, const float* freq, int length, int dim, int offset,
                  SinusoidalLayout layout) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const int half = dim / 2;
    const int body = half - half % N;
    const bool interleaved = layout == SinusoidalLayout::interleaved;

    for (int i = 0; i < length; ++i) {
      float* row = out + static_cast<std::size_t>(i) * dim;
      const bf p(static_cast<float>(offset + i));
      int k = 0;
      for (; k < body; k += N) {
        bf s, c;
        // float32 product first, exactly as PyTorch rounds the angle
        sincos(p * bf::load_unaligned(freq + k), s, c);
        if (interleaved) {
          xsimd::zip_lo(s, c).store_unaligned(row + 2 * k);
          xsimd::zip_hi(s, c).store_unaligned(row + 2 * k + N);
        } else {
          s.store_unaligned(row + k);
          c.store_unaligned(row + half + k);
        }
      }
      if (k < half) {  // tail: fewer than N frequencies left
        alignas(64) float f[N] = {}, sv[N], cv[N];
        std::copy(freq + k, freq + half, f);
        bf s, c;
        sincos(p * bf::load_aligned(f), s, c);
        s.store_aligned(sv);
        c.store_aligned(cv);
        for (int j = 0; k + j < half; ++j) {
          if (interleaved) {
            row[2 * (k + j)] = sv[j];
            row[2 * (k + j) + 1] = cv[j];
          } else {
            row[k + j] = sv[j];
            row[half + k + j] = cv[j];
          }
        }
      }
    }
  }
};

void sinusoidal(float* out, const float* freq, int length, int dim, int offset,
                SinusoidalLayout layout) {
  sinusoidal_kernel<simd_arch>{}(simd_arch{}, out, freq, length, dim, offset, layout);
}

}  // namespace attnkit::simd

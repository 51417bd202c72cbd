// xsimd kernel for applying RoPE (contract in attnkit/ops/rotary.hpp): out = x * C + partner(x) * S
// over the rotated dims, a copy of the rest. Tables are precomputed per position, so the row
// loop is pure multiply-add: for 'half' the partner of a vector is the vector rotaryDim/2
// further (or back); for 'interleaved' it is the same vector with its pairs swapped.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "attnkit/ops/rotary.hpp"
#include "attnkit/core/simd_arch.hpp"

namespace attnkit::simd {

namespace {
struct swap_pairs {
  static constexpr unsigned get(unsigned i, unsigned) { return i ^ 1u; }
};

template <class Arch>
struct rotary_row {
  // y may alias x: every output vector is computed from inputs loaded before it is stored.
  void operator()(Arch, float* y, const float* x, const float* C, const float* S, int rd, int d,
                  RotaryLayout layout) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const int half = rd / 2;
    int i = 0;
    if (layout == RotaryLayout::half) {
      for (; i + N <= half; i += N) {
        const bf a = bf::load_unaligned(x + i), b = bf::load_unaligned(x + half + i);
        xsimd::fma(a, bf::load_unaligned(C + i), b * bf::load_unaligned(S + i)).store_unaligned(y + i);
        xsimd::fma(b, bf::load_unaligned(C + half + i), a * bf::load_unaligned(S + half + i)).store_unaligned(y + half + i);
      }
      for (; i < half; ++i) {
        const float a = x[i], b = x[half + i];
        y[i] = a * C[i] + b * S[i];
        y[half + i] = b * C[half + i] + a * S[half + i];
      }
    } else {
      const auto swap = xsimd::make_batch_constant<xsimd::batch<uint32_t, Arch>, swap_pairs>();
      for (; i + N <= rd; i += N) {
        const bf a = bf::load_unaligned(x + i);
        xsimd::fma(a, bf::load_unaligned(C + i), xsimd::swizzle(a, swap) * bf::load_unaligned(S + i))
            .store_unaligned(y + i);
      }
      for (; i < rd; i += 2) {  // rd is even and N is even: pairs never straddle the tail
        const float a = x[i], b = x[i + 1];
        y[i] = a * C[i] + b * S[i];
        y[i + 1] = b * C[i + 1] + a * S[i + 1];
      }
    }
    if (y != x) std::copy(x + rd, x + d, y + rd);
  }
};
}  // namespace

void rotary_rows(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
                 bool per_batch, const float* C, const float* S, int rd, int d, RotaryLayout layout) {
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int l = 0; l < length; ++l) {
        const std::size_t t = (per_batch ? static_cast<std::size_t>(b) * length + l : l) * rd;
        rotary_row<simd_arch>{}(simd_arch{}, out.row(b, h, l), x.row(b, h, l), C + t, S + t, rd, d, layout);
      }
}

}  // namespace attnkit::simd

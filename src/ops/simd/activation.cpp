// xsimd activations (contract in attnkit/ops/activation.hpp).
#include <cmath>

#include "attnkit/ops/activation.hpp"
#include "attnkit/core/simd_arch.hpp"
#include "ops/simd/exp.hpp"

namespace attnkit::simd {

namespace {

template <class Arch>
struct gelu_erf {
  using bf = xsimd::batch<float, Arch>;
  bf operator()(bf x) const {
    // erf(z), z = x / sqrt 2, by A&S 7.1.26 on |z|, sign restored: erf is odd.
    const bf z = x * bf(0.70710678118654752f);
    const bf a = xsimd::abs(z);
    const bf t = bf(1.f) / xsimd::fma(a, bf(0.3275911f), bf(1.f));
    bf p = bf(1.061405429f);
    p = xsimd::fma(p, t, bf(-1.453152027f));
    p = xsimd::fma(p, t, bf(1.421413741f));
    p = xsimd::fma(p, t, bf(-0.284496736f));
    p = xsimd::fma(p, t, bf(0.254829592f));
    const bf e = exp2_nonpositive<Arch>{}(-(a * a) * bf(1.4426950408889634f));  // exp(-z^2)
    const bf erf_abs = bf(1.f) - p * t * e;
    const bf erf = xsimd::select(z < bf(0.f), -erf_abs, erf_abs);
    return bf(0.5f) * x * (bf(1.f) + erf);
  }
};

template <class Arch>
struct gelu_tanh {
  using bf = xsimd::batch<float, Arch>;
  bf operator()(bf x) const {
    const bf u = bf(0.7978845608028654f) * (x + bf(0.044715f) * x * x * x);
    // tanh(|u|) = (1 - e) / (1 + e), e = exp(-2|u|) <= 1.
    const bf e = exp2_nonpositive<Arch>{}(xsimd::abs(u) * bf(-2.8853900817779268f));
    const bf th = (bf(1.f) - e) / (bf(1.f) + e);
    return bf(0.5f) * x * (bf(1.f) + xsimd::select(u < bf(0.f), -th, th));
  }
};

template <class Arch>
struct silu {
  using bf = xsimd::batch<float, Arch>;
  bf operator()(bf x) const {
    // sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, e = exp(-|x|) <= 1: no overflow.
    const bf e = exp2_nonpositive<Arch>{}(xsimd::abs(x) * bf(-1.4426950408889634f));
    const bf r = bf(1.f) / (bf(1.f) + e);
    return x * xsimd::select(x < bf(0.f), e * r, r);
  }
};

template <class Arch>
struct relu {
  using bf = xsimd::batch<float, Arch>;
  // Not xsimd::max: SSE's maxps (and its SIMD128 lowering) returns the second operand for a NaN,
  // and torch.relu keeps NaN.
  bf operator()(bf x) const { return xsimd::select(x < bf(0.f), bf(0.f), x); }
};

// Vector body, then the tail through the same function on a zero-padded vector.
template <class Arch, class F>
void apply(float* x, std::size_t n, F f) {
  using bf = xsimd::batch<float, Arch>;
  constexpr std::size_t N = bf::size;
  std::size_t i = 0;
  for (; i + N <= n; i += N) f(bf::load_unaligned(x + i)).store_unaligned(x + i);
  if (i < n) {
    alignas(64) float tail[N] = {};
    for (std::size_t k = i; k < n; ++k) tail[k - i] = x[k];
    f(bf::load_aligned(tail)).store_aligned(tail);
    for (std::size_t k = i; k < n; ++k) x[k] = tail[k - i];
  }
}

}  // namespace

void activation(float* x, std::size_t n, Activation kind) {
  switch (kind) {
    case Activation::relu: apply<simd_arch>(x, n, relu<simd_arch>{}); break;
    case Activation::gelu: apply<simd_arch>(x, n, gelu_erf<simd_arch>{}); break;
    case Activation::gelu_tanh: apply<simd_arch>(x, n, gelu_tanh<simd_arch>{}); break;
    case Activation::silu: apply<simd_arch>(x, n, silu<simd_arch>{}); break;
  }
}

}  // namespace attnkit::simd

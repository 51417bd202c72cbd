// Row kernels for LayerNorm and RMSNorm over one contiguous row of `dim` floats, shared by the
// standalone norms and the fused embedding pass (which normalises each row while it is in cache).
// Reductions keep four vector accumulators (the adds of one do not wait on the others), then a
// scalar tail; the affine pass is a vector body with a scalar tail.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "attnkit/ops/norm.hpp"

namespace attnkit::simd {

template <class Arch>
struct row_sum {
  // sum of (x[i] - shift) and of (x[i] - shift)^2 in one sweep.
  void operator()(Arch, const float* x, int dim, float shift, float& sum, float& sumsq) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const bf c(shift);
    bf s0(0.f), s1(0.f), s2(0.f), s3(0.f), q0(0.f), q1(0.f), q2(0.f), q3(0.f);
    int i = 0;
    for (; i + 4 * N <= dim; i += 4 * N) {
      const bf a = bf::load_unaligned(x + i) - c, b = bf::load_unaligned(x + i + N) - c;
      const bf e = bf::load_unaligned(x + i + 2 * N) - c, f = bf::load_unaligned(x + i + 3 * N) - c;
      s0 += a; s1 += b; s2 += e; s3 += f;
      q0 = xsimd::fma(a, a, q0); q1 = xsimd::fma(b, b, q1);
      q2 = xsimd::fma(e, e, q2); q3 = xsimd::fma(f, f, q3);
    }
    for (; i + N <= dim; i += N) {
      const bf a = bf::load_unaligned(x + i) - c;
      s0 += a;
      q0 = xsimd::fma(a, a, q0);
    }
    sum = xsimd::hadd((s0 + s1) + (s2 + s3));
    sumsq = xsimd::hadd((q0 + q1) + (q2 + q3));
    for (; i < dim; ++i) {
      const float a = x[i] - shift;
      sum += a;
      sumsq += a * a;
    }
  }
};

template <class Arch>
struct row_affine {
  // y[i] = (x[i] * rstd - mean * rstd) * gamma[i] + beta[i]; gamma/beta may be null (1, 0). The
  // order is PyTorch's (x * scale + bias with the mean folded into the bias), which decides the
  // special values: a constant row of 3e38, or eps = 0 on a constant row, is inf - inf = NaN. The null
  // checks pick a loop once per row: branches inside the loop measured 20 % slower in V8.
  void operator()(Arch, float* y, const float* x, int dim, float mean, float rstd, const float* gamma,
                  const float* beta) const {
    if (gamma && beta) return apply<true, true>(y, x, dim, mean, rstd, gamma, beta);
    if (gamma) return apply<true, false>(y, x, dim, mean, rstd, gamma, beta);
    if (beta) return apply<false, true>(y, x, dim, mean, rstd, gamma, beta);
    apply<false, false>(y, x, dim, mean, rstd, gamma, beta);
  }

  // One variant, for callers that know which of gamma/beta exist (the fused embedding row keeps
  // its hot loop to a single variant: V8 allocates registers worse in a function holding all four).
  // M = false: no mean at all (RMSNorm), so that rstd = inf times a zero mean is no NaN.
  template <bool G, bool B, bool M = true>
  static void apply(float* y, const float* x, int dim, float mean, float rstd, const float* gamma,
                   const float* beta) {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const bf mr(M ? mean * rstd : 0.0f), r(rstd);
    auto at = [&](int i) {
      bf v = bf::load_unaligned(x + i) * r;
      if (M) v -= mr;
      if (G) v *= bf::load_unaligned(gamma + i);
      if (B) v += bf::load_unaligned(beta + i);
      v.store_unaligned(y + i);
    };
    int i = 0;
    for (; i + 2 * N <= dim; i += 2 * N) {
      at(i);
      at(i + N);
    }
    for (; i + N <= dim; i += N) at(i);
    for (; i < dim; ++i) {
      float v = M ? x[i] * rstd - mean * rstd : x[i] * rstd;
      if (G) v *= gamma[i];
      if (B) v += beta[i];
      y[i] = v;
    }
  }
};

// LayerNorm's mean and 1/sqrt(var + eps) of the row x, from its sum and sum of squares (taken
// about 0 by the caller's first sweep). E[x^2] - E[x]^2 loses at most 3 bits while
// mean^2 <= 8 var; beyond that (a large common offset) it would cancel, so the statistics are
// taken again about the mean in a second sweep over the (cache-resident) row.
//
// At the float32 extremes the statistics overflow as PyTorch's do: a variance beyond float32's
// range is +inf, so rstd = 0; and a row whose spread (max - min) itself overflows normalises to
// NaN, as PyTorch's float32 Welford update (x - running mean) overflows there. A sum of squares
// that overflowed about 0 is taken again about the mean before it is believed.
template <class Arch>
inline void layer_norm_stats(const float* x, int dim, float sum, float sumsq, float eps, float& mean,
                             float& rstd) {
  mean = sum / dim;
  float var = sumsq / dim - mean * mean;
  if (!(mean * mean <= 8.0f * var)) {
    row_sum<Arch>{}(Arch{}, x, dim, mean, sum, sumsq);
    const float d = sum / dim;  // ~0: the rounding left in the mean, corrected for exactly
    var = sumsq / dim - d * d;
    mean += d;
  }
  // Rare: float32 sums that overflowed (or NaN / inf in the row). The reference's statistics
  // then decide, with PyTorch's overflow rules (attnkit/ops/norm.hpp).
  if (!std::isfinite(var) || !std::isfinite(mean)) return layer_norm_statistics(x, dim, eps, mean, rstd);
  rstd = 1.0f / std::sqrt(std::max(var, 0.0f) + eps);
}

template <class Arch>
inline void layer_norm_row(float* y, const float* x, int dim, const float* gamma, const float* beta,
                           float eps) {
  float sum, sumsq, mean, rstd;
  row_sum<Arch>{}(Arch{}, x, dim, 0.0f, sum, sumsq);
  layer_norm_stats<Arch>(x, dim, sum, sumsq, eps, mean, rstd);
  row_affine<Arch>{}(Arch{}, y, x, dim, mean, rstd, gamma, beta);
}

template <class Arch>
inline void rms_norm_row(float* y, const float* x, int dim, const float* weight, float eps) {
  float sum, sumsq;
  row_sum<Arch>{}(Arch{}, x, dim, 0.0f, sum, sumsq);
  const float rrms = 1.0f / std::sqrt(sumsq / dim + eps);
  if (weight) row_affine<Arch>::template apply<true, false, false>(y, x, dim, 0.0f, rrms, weight, nullptr);
  else row_affine<Arch>::template apply<false, false, false>(y, x, dim, 0.0f, rrms, nullptr, nullptr);
}

}  // namespace attnkit::simd

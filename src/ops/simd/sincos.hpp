// sin and cos of a float32 batch in one pass, for angles |x| < 102943 (k = round(x * 2/pi) < 2^16).
//
// Why not xsimd::sin/cos: on the SSE path under Emscripten they use float<->int conversions that
// SIMD128 lacks and that are emulated lane by lane. This version keeps every step in float lanes:
//   1. k = round(x * 2/pi) by the 1.5 * 2^23 trick; its low bits give the quadrant for free.
//   2. r = x - k * pi/2 (Cody-Waite): pi/2 = C1 + C2 + C3 + C4, with C1..C3 holding 8 significant
//      bits each, so k * Ci is exact for k < 2^16 and the first subtractions lose nothing.
//   3. Taylor series on |r| <= pi/4 (truncation error < 2e-9, below float32 resolution).
//   4. Quadrant q: swap sin/cos when q is odd, flip signs by xor-ing the sign bit.
#pragma once

#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace attnkit::simd {

// pi/2 split; the residual pi/2 - (C1 + C2 + C3 + C4) is about 5e-17 (checked by a test).
constexpr float kPio2C1 = 0x1.92p+0f;       // 1.5703125
constexpr float kPio2C2 = 0x1.fap-12f;      // 4.825592041015625e-4
constexpr float kPio2C3 = 0x1.54p-20f;      // 1.2665987014770508e-6
constexpr float kPio2C4 = 0x1.10b462p-30f;  // 9.920936294705030e-10
constexpr float kSinCosMaxAngle = 102943.0f;

template <class A>
inline void sincos(xsimd::batch<float, A> x, xsimd::batch<float, A>& s_out,
                   xsimd::batch<float, A>& c_out) {
  using bf = xsimd::batch<float, A>;
  using bi = xsimd::batch<int32_t, A>;
  const bf magic(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer, kept in low bits
  const bf shifted = xsimd::fma(x, bf(0.636619772367581343f), magic);
  const bf k = shifted - magic;
  const bi q = xsimd::bitwise_cast<bi>(shifted);  // low bits of the mantissa == k mod 4

  bf r = x - k * bf(kPio2C1);
  r = r - k * bf(kPio2C2);
  r = r - k * bf(kPio2C3);
  r = r - k * bf(kPio2C4);
  const bf r2 = r * r;

  // sin r = r - r^3/3! + r^5/5! - r^7/7! + r^9/9!
  bf ps = bf(1.0f / 362880.0f);
  ps = xsimd::fma(ps, r2, bf(-1.0f / 5040.0f));
  ps = xsimd::fma(ps, r2, bf(1.0f / 120.0f));
  ps = xsimd::fma(ps, r2, bf(-1.0f / 6.0f));
  const bf sin_r = xsimd::fma(ps * r2, r, r);
  // cos r = 1 - r^2/2! + r^4/4! - r^6/6! + r^8/8! - r^10/10!
  bf pc = bf(-1.0f / 3628800.0f);
  pc = xsimd::fma(pc, r2, bf(1.0f / 40320.0f));
  pc = xsimd::fma(pc, r2, bf(-1.0f / 720.0f));
  pc = xsimd::fma(pc, r2, bf(1.0f / 24.0f));
  pc = xsimd::fma(pc, r2, bf(-0.5f));
  const bf cos_r = xsimd::fma(pc, r2, bf(1.0f));

  const auto swap = xsimd::bool_cast((q & bi(1)) != bi(0));
  const bf s = xsimd::select(swap, cos_r, sin_r);
  const bf c = xsimd::select(swap, sin_r, cos_r);
  // quadrant 2, 3 negate sin; quadrant 1, 2 negate cos.
  const bi sign_s = (q & bi(2)) << 30;
  const bi sign_c = ((q + bi(1)) & bi(2)) << 30;
  s_out = xsimd::bitwise_cast<bf>(xsimd::bitwise_cast<bi>(s) ^ sign_s);
  c_out = xsimd::bitwise_cast<bf>(xsimd::bitwise_cast<bi>(c) ^ sign_c);
}

}  // namespace attnkit::simd

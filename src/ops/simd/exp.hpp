// 2^t for t <= 0 in xsimd batch arithmetic, for softmax (which works in log2 units: the
// attention kernel folds log2(e) into its scores, so no multiply is spent here).
//
// Why not xsimd::exp: on the SSE-lowered-to-SIMD128 path its float<->int rounding conversions are
// emulated lane by lane and it measured 4x slower. Here the rounding uses the 1.5 * 2^23 trick
// (adding it leaves round(t) in the low mantissa bits) and 2^n is built with an integer shift, so
// every step is one SIMD128 instruction.
//
// 2^t with t = n + f, n = round(t), f in [-1/2, 1/2];
// 2^f by its Taylor series to degree 6 (relative error < 1.3e-7 on that interval).
// t is clamped at -127, where the exponent field becomes 0 and the result is exactly +0: so
// 2^-inf = 0 (masked keys get exactly zero weight) and results below ~1e-38 flush to zero.
#pragma once

#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace attnkit::simd {

template <class Arch>
struct exp2_nonpositive {
  using bf = xsimd::batch<float, Arch>;
  using bi = xsimd::batch<int32_t, Arch>;

  bf operator()(bf x) const {
    const bf t = xsimd::max(x, bf(-127.f));
    const bf magic(12582912.f);  // 1.5 * 2^23
    const bf r = t + magic;
    const bf f = t - (r - magic);
    // (ln 2)^k / k!
    bf p = bf(1.540353039338161e-4f);
    p = xsimd::fma(p, f, bf(1.3333558146428443e-3f));
    p = xsimd::fma(p, f, bf(9.618129107628477e-3f));
    p = xsimd::fma(p, f, bf(5.550410866482158e-2f));
    p = xsimd::fma(p, f, bf(0.2402265069591007f));
    p = xsimd::fma(p, f, bf(0.6931471805599453f));
    p = xsimd::fma(p, f, bf(1.f));
    // The low bits of r hold n (two's complement in the mantissa); (n + 127) << 23 is 2^n.
    bi scale = xsimd::bitwise_cast<bi>(r) + bi(127);
    scale <<= 23;  // an immediate shift: one i32x4.shl
    return p * xsimd::bitwise_cast<bf>(scale);
  }
};

}  // namespace attnkit::simd

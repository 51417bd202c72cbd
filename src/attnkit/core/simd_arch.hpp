// The one place that says which xsimd architecture the kernels are instantiated for.
//
// xsimd 8.1 (Debian's) has no WebAssembly architecture. Compiled by em++ with -msimd128 -msse4.1,
// its SSE4.1 code uses intrinsics that Emscripten lowers to WebAssembly SIMD128 instructions.
// With an xsimd that has a native wasm arch, change the Emscripten branch to `xsimd::wasm` (and
// drop -msse4.1 from ATTNKIT_WASM_SIMD_FLAGS in CMakeLists.txt).
//
// Audit note: not every SSE intrinsic maps 1:1 to SIMD128. Float<->int rounding conversions are
// emulated lane by lane, which is why xsimd::exp/sin are avoided in kernels (see the polynomial
// helpers next to the kernels that need them).
//
// The relaxed-SIMD build (ATTNKIT_RELAXED_SIMD=1: attnkit-simd-relaxed*, its SIMD units compiled by
// clang-19 with -mrelaxed-simd, docs/relaxed-simd.md) differs only in madd() below.
#pragma once

#include <xsimd/xsimd.hpp>

#ifndef ATTNKIT_RELAXED_SIMD
#define ATTNKIT_RELAXED_SIMD 0
#endif
#if ATTNKIT_RELAXED_SIMD
#if !defined(__wasm_relaxed_simd__)
#error "ATTNKIT_RELAXED_SIMD needs a compiler with -mrelaxed-simd (clang >= 16 for wasm32)"
#endif
#include <wasm_simd128.h>
#endif

namespace attnkit {

#if defined(__EMSCRIPTEN__)
using simd_arch = xsimd::sse4_1;
#else
using simd_arch = xsimd::default_arch;  // whatever ATTNKIT_NATIVE_SIMD_FLAGS enabled
#endif

using vfloat = xsimd::batch<float, simd_arch>;
constexpr std::size_t kLanes = vfloat::size;

// a * b + c for the hot multiply-adds (linear's dot products and rank-1 updates, attention's
// scores and weighted sums). The relaxed build: f32x4.relaxed_madd, fused (rounded once) on engines
// whose CPU has FMA, mul + add on others (the engine's choice is fixed: the same inputs give the
// same bits in every call and thread). Elsewhere: xsimd::fma, which is mul + add (rounded twice) on
// SIMD128 and a fused FMA natively where ATTNKIT_NATIVE_SIMD_FLAGS enables one. Polynomials (exp,
// sin/cos, erf) and norms keep xsimd::fma in every build.
template <class A>
inline xsimd::batch<float, A> madd(const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& b,
                                   const xsimd::batch<float, A>& c) {
#if ATTNKIT_RELAXED_SIMD
  using reg = typename xsimd::batch<float, A>::register_type;
  return xsimd::batch<float, A>(reg(wasm_f32x4_relaxed_madd(v128_t(reg(a)), v128_t(reg(b)), v128_t(reg(c)))));
#else
  return xsimd::fma(a, b, c);
#endif
}

}  // namespace attnkit

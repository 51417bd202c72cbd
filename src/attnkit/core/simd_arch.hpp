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
#pragma once

#include <xsimd/xsimd.hpp>

namespace attnkit {

#if defined(__EMSCRIPTEN__)
using simd_arch = xsimd::sse4_1;
#else
using simd_arch = xsimd::default_arch;  // whatever ATTNKIT_NATIVE_SIMD_FLAGS enabled
#endif

using vfloat = xsimd::batch<float, simd_arch>;
constexpr std::size_t kLanes = vfloat::size;

}  // namespace attnkit

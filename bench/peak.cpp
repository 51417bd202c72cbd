// SIMD128 peak-throughput microbenchmark: kChains independent chains of acc = acc * m + a on
// xsimd batches (no FMA in SIMD128, so a multiply and an add). The limit the attention kernel's
// GFLOP/s are compared with. flops = iterations * kChains * lanes * 2.
#include <cstdint>

#include "attnkit/core/simd_arch.hpp"

namespace {
constexpr int kChains = 12;  // enough independent chains to cover the multiply + add latency
}

extern "C" {
int peak_lanes() { return static_cast<int>(attnkit::kLanes); }

float peak_run(double iterations, float m, float a) {
  using attnkit::vfloat;
  vfloat acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = vfloat(1.0f + 0.001f * i);
  const vfloat vm(m), va(a);
  const auto n = static_cast<int64_t>(iterations);
  for (int64_t it = 0; it < n; ++it) {
#pragma clang loop unroll(full)
    for (int i = 0; i < kChains; ++i) acc[i] = acc[i] * vm + va;
  }
  vfloat s(0.f);
  for (int i = 0; i < kChains; ++i) s += acc[i];
  return xsimd::hadd(s);  // a checksum, so the loop is not optimised away
}

int peak_chains() { return kChains; }
}

// Does keeping weights in half precision speed up decoding's matrix-vector products in wasm SIMD128?
// The LM head of bench/generate.mjs (50257 x 256, out_in layout, one row of x) three ways: float32
// rows (as src/ops/simd/linear.cpp's dot_row), F16 rows widened in registers (finite values: magnitude
// bits << 13 times 2^112, sign or'ed), BF16 rows widened (zero-extend, << 16). SIMD128 has no
// half-precision conversion, so F16 costs 7 integer/float operations per 4 weights.
// Not part of the build (docs/performance.md, "Generation", quotes its figures):
//   em++ -O3 -msimd128 -sINITIAL_MEMORY=256MB bench/half_gemv.cpp -o /tmp/half.js
//   node --no-experimental-fetch /tmp/half.js
#include <wasm_simd128.h>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <cmath>
static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
constexpr int IN = 256, OUT = 50257;
// f32 rows: one row, 4 accumulators
static void gemv_f32(float* y, const float* x, const float* w) {
  for (int o = 0; o < OUT; ++o) {
    const float* r = w + (size_t)o * IN;
    v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < IN; i += 16) {
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(wasm_v128_load(r + i), wasm_v128_load(x + i)));
      a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(wasm_v128_load(r + i + 4), wasm_v128_load(x + i + 4)));
      a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(wasm_v128_load(r + i + 8), wasm_v128_load(x + i + 8)));
      a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(wasm_v128_load(r + i + 12), wasm_v128_load(x + i + 12)));
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3));
    y[o] = wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3);
  }
}
// Half-precision lanes (zero-extended to 32 bits) -> float32.
// F16, finite values (normal and subnormal): magnitude bits << 13, times 2^112, sign or'ed.
struct widen_f16 {
  v128_t operator()(v128_t h32) const {
    const v128_t mag = wasm_v128_and(wasm_i32x4_shl(h32, 13), wasm_i32x4_splat(0x0fffe000));
    const v128_t sign = wasm_v128_and(wasm_i32x4_shl(h32, 16), wasm_i32x4_splat((int)0x80000000));
    return wasm_v128_or(wasm_f32x4_mul(mag, wasm_f32x4_splat(0x1p112f)), sign);
  }
};
// BF16: the 16 bits become the high half (a shuffle with zeros instead was slower).
struct widen_bf16 {
  v128_t operator()(v128_t h32) const { return wasm_i32x4_shl(h32, 16); }
};
template <class Widen>
static void gemv_half(float* y, const float* x, const uint16_t* w) {
  const Widen widen;
  for (int o = 0; o < OUT; ++o) {
    const uint16_t* r = w + (size_t)o * IN;
    v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < IN; i += 16) {
      v128_t h0 = wasm_v128_load(r + i), h1 = wasm_v128_load(r + i + 8);
      a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(widen(wasm_u32x4_extend_low_u16x8(h0)), wasm_v128_load(x + i)));
      a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(widen(wasm_u32x4_extend_high_u16x8(h0)), wasm_v128_load(x + i + 4)));
      a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(widen(wasm_u32x4_extend_low_u16x8(h1)), wasm_v128_load(x + i + 8)));
      a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(widen(wasm_u32x4_extend_high_u16x8(h1)), wasm_v128_load(x + i + 12)));
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3));
    y[o] = wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3);
  }
}
static uint16_t to_f16(float f) { // round-toward-zero is enough for a timing input
  uint32_t u; memcpy(&u, &f, 4); uint32_t s = (u >> 16) & 0x8000; int e = ((u >> 23) & 0xff) - 127 + 15; uint32_t m = (u >> 13) & 0x3ff;
  if (e <= 0) return (uint16_t)s; if (e >= 31) return (uint16_t)(s | 0x7bff); return (uint16_t)(s | e << 10 | m);
}
int main() {
  float* w = (float*)malloc((size_t)OUT * IN * 4); uint16_t* h = (uint16_t*)malloc((size_t)OUT * IN * 2); uint16_t* bf = (uint16_t*)malloc((size_t)OUT * IN * 2);
  float x[IN], y1[OUT], y2[OUT], y3[OUT];
  uint32_t seed = 1;
  for (size_t i = 0; i < (size_t)OUT * IN; ++i) { seed = seed * 1664525u + 1013904223u; float f = ((int)(seed >> 8) - (1 << 23)) / (float)(1 << 23) * 0.1f; h[i] = to_f16(f); }
  for (size_t i = 0; i < (size_t)OUT * IN; ++i) { uint32_t hv = h[i]; uint32_t sgn = (hv & 0x8000) << 16; uint32_t e = (hv >> 10) & 31, m = hv & 0x3ff; float f = e ? ldexpf(1.f + m / 1024.f, (int)e - 15) : ldexpf(m / 1024.f, -14); uint32_t u; memcpy(&u, &f, 4); u |= sgn; memcpy(&w[i], &u, 4); bf[i] = (uint16_t)(u >> 16); }
  for (int i = 0; i < IN; ++i) x[i] = (i % 7) * 0.1f - 0.3f;
  double best[3] = {1e9, 1e9, 1e9};
  for (int rep = 0; rep < 15; ++rep) {
    double t = now(); gemv_f32(y1, x, w); best[0] = fmin(best[0], now() - t);
    t = now(); gemv_half<widen_f16>(y2, x, h); best[1] = fmin(best[1], now() - t);
    t = now(); gemv_half<widen_bf16>(y3, x, bf); best[2] = fmin(best[2], now() - t);
  }
  double md = 0; for (int o = 0; o < OUT; ++o) md = fmax(md, fabs(y1[o] - y2[o]));
  printf("f32 %.2f ms (%.1f GB/s)  f16 %.2f ms (%.1f GB/s of f16)  bf16 %.2f ms   max|f32-f16| %.2e  y %.4f %.4f %.4f\n", best[0], OUT * IN * 4 / best[0] / 1e6, best[1], OUT * IN * 2 / best[1] / 1e6, best[2], md, y1[7], y2[7], y3[7]);
}

// xsimd kernels for the Q8_0 / Q4_0 dot products (contract in attnkit/ops/quant.hpp).
//
// xsimd 8.1 has no widening or multiply-add of integer lanes, so the integer core is written with
// the SSE4.1 intrinsics that Emscripten lowers one-to-one to SIMD128:
//   _mm_cvtepi8_epi16(_mm_loadl_epi64(p))  eight int8 widened to int16   (v128.load64_zero + i16x8.extend_low_i8x16_s)
//   _mm_madd_epi16(a, b)                   a0 b0 + a1 b1, ... into int32 (i32x4.dot_i16x8_s)
// Both exist at every x86 level the SIMD units are built for, so the kernels are instantiated for
// the 128-bit xsimd::sse4_1 natively too (a wider build would want a 256-bit core of its own).
// The float side (the scales, the four running sums) is xsimd batches of that architecture.
//
// A block pair's 32 products give one int32 vector (4 lanes of 8 products each); four blocks'
// vectors are transposed and added into one vector of four block sums (exact: integers), turned
// into floats and scaled lane by lane exactly as the reference scales each block. One float
// accumulator suffices: it takes one add per four blocks (128 elements), far below its latency.
// A row's last blocks (blocks % 4) go through the same code with the missing lanes zero.
#include <algorithm>
#include <type_traits>
#include <vector>

#include <smmintrin.h>

#include "attnkit/ops/quant.hpp"
#include "attnkit/core/simd_arch.hpp"

namespace attnkit::simd {

namespace {

using quant_arch = xsimd::sse4_1;

#if ATTNKIT_RELAXED_SIMD
// The relaxed-SIMD build: i32x4.relaxed_dot_i8x16_i7x16_add_s multiplies 16 int8 by 16 values in
// 0..127 and adds the products four by four into int32 lanes, exactly (its result is relaxed only
// for a second operand >= 128, which it never gets here). Only the four lanes' total matters, so
// the sums are the other builds' bits. Q8_0 weights go in as their low seven bits and their sign:
// w = (w & 0x7f) - 128 [w < 0], so sum x w = dot(x, w & 0x7f) - 128 dot(x, w >>> 7). Q4_0: the
// nibbles n are 0..15 as they are, sum x (n - 8) = dot(x, n) - dot(x, 8).
inline v128_t dot_i7(v128_t a, v128_t b, v128_t acc) { return wasm_i32x4_relaxed_dot_i8x16_i7x16_add(a, b, acc); }

inline __m128i products(const BlockQ8_0& w, const BlockQ8_0& x) {
  const v128_t w0 = wasm_v128_load(w.qs), w1 = wasm_v128_load(w.qs + 16);
  const v128_t x0 = wasm_v128_load(x.qs), x1 = wasm_v128_load(x.qs + 16);
  const v128_t low7 = wasm_i8x16_splat(0x7f), zero = wasm_i32x4_splat(0);
  const v128_t s = dot_i7(x1, wasm_v128_and(w1, low7), dot_i7(x0, wasm_v128_and(w0, low7), zero));
  const v128_t neg = dot_i7(x1, wasm_u8x16_shr(w1, 7), dot_i7(x0, wasm_u8x16_shr(w0, 7), zero));
  return (__m128i)wasm_i32x4_sub(s, wasm_i32x4_shl(neg, 7));
}

inline __m128i products(const BlockQ4_0& w, const BlockQ8_0& x) {
  const v128_t bytes = wasm_v128_load(w.qs);
  const v128_t lo = wasm_v128_and(bytes, wasm_i8x16_splat(0x0F)), hi = wasm_u8x16_shr(bytes, 4);
  const v128_t x0 = wasm_v128_load(x.qs), x1 = wasm_v128_load(x.qs + 16);
  const v128_t eight = wasm_i8x16_splat(8), zero = wasm_i32x4_splat(0);
  const v128_t s = dot_i7(x1, hi, dot_i7(x0, lo, zero));
  return (__m128i)wasm_i32x4_sub(s, dot_i7(x1, eight, dot_i7(x0, eight, zero)));
}
#else
// Eight int8 at p as int16.
inline __m128i widen8(const int8_t* p) {
  return _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// The 32 products of a block pair, summed in 4 int32 lanes (any int8: pairs of products reach at
// most 2 * 128 * 128 = 2^15, the lanes 2^17).
inline __m128i products(const BlockQ8_0& w, const BlockQ8_0& x) {
  __m128i s0 = _mm_madd_epi16(widen8(w.qs), widen8(x.qs));
  __m128i s1 = _mm_madd_epi16(widen8(w.qs + 8), widen8(x.qs + 8));
  s0 = _mm_add_epi32(s0, _mm_madd_epi16(widen8(w.qs + 16), widen8(x.qs + 16)));
  s1 = _mm_add_epi32(s1, _mm_madd_epi16(widen8(w.qs + 24), widen8(x.qs + 24)));
  return _mm_add_epi32(s0, s1);
}

// Q4_0: the 16 bytes hold elements 0..15 in their low nibbles, 16..31 in their high ones; each
// nibble minus 8 is an int8 in [-8, 7], widened like Q8_0's quants.
inline __m128i products(const BlockQ4_0& w, const BlockQ8_0& x) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs));
  const __m128i low4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(bytes, low4), eight);
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4), eight);
  __m128i s0 = _mm_madd_epi16(_mm_cvtepi8_epi16(lo), widen8(x.qs));
  __m128i s1 = _mm_madd_epi16(_mm_cvtepi8_epi16(_mm_unpackhi_epi64(lo, lo)), widen8(x.qs + 8));
  s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_cvtepi8_epi16(hi), widen8(x.qs + 16)));
  s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_cvtepi8_epi16(_mm_unpackhi_epi64(hi, hi)), widen8(x.qs + 24)));
  return _mm_add_epi32(s0, s1);
}
#endif  // ATTNKIT_RELAXED_SIMD

// [sum(a), sum(b), sum(c), sum(d)] of four vectors of 4 int32.
inline __m128i sum4(__m128i a, __m128i b, __m128i c, __m128i d) {
  const __m128i ab = _mm_add_epi32(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));  // a02 b02 a13 b13
  const __m128i cd = _mm_add_epi32(_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));  // c02 d02 c13 d13
  return _mm_add_epi32(_mm_unpacklo_epi64(ab, cd), _mm_unpackhi_epi64(ab, cd));
}

// The integer sums of blocks b .. b + count (count <= 4; the other lanes 0).
template <class WBlock>
inline __m128i block_sums4(const WBlock* w, const BlockQ8_0* x, std::size_t b, std::size_t count) {
  if (count == 4)
    return sum4(products(w[b], x[b]), products(w[b + 1], x[b + 1]), products(w[b + 2], x[b + 2]),
                products(w[b + 3], x[b + 3]));
  const __m128i z = _mm_setzero_si128();
  return sum4(products(w[b], x[b]), count > 1 ? products(w[b + 1], x[b + 1]) : z,
              count > 2 ? products(w[b + 2], x[b + 2]) : z, z);
}

// Four fp16 scales (in the low halves of int32 lanes) as floats: fp16_to_fp32 lane-wise, the same
// bits. Normal halves: the exponent rebiased by an integer add; subnormals: mantissa * 2^-24 by
// an int -> float conversion (no float subnormal is formed, which would stall x86); inf and NaN:
// the exponent field all ones (NaN gets its quiet bit).
template <class Arch>
inline xsimd::batch<float, Arch> halves_to_floats(__m128i h) {
  const __m128i exponent = _mm_and_si128(h, _mm_set1_epi32(0x7C00));
  const __m128i mantissa = _mm_and_si128(h, _mm_set1_epi32(0x03FF));
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  const __m128i magnitude = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7FFF)), 13);
  const __m128i is_sub = _mm_cmpeq_epi32(exponent, _mm_setzero_si128());
  const __m128i is_special = _mm_cmpeq_epi32(exponent, _mm_set1_epi32(0x7C00));
  // normal: + (127 - 15) << 23; inf / NaN: twice that, 31 + 2 * 112 = 255
  __m128i bits = _mm_add_epi32(magnitude, _mm_set1_epi32(112 << 23));
  bits = _mm_add_epi32(bits, _mm_and_si128(is_special, _mm_set1_epi32(112 << 23)));
  const __m128i nan_quiet = _mm_andnot_si128(_mm_cmpeq_epi32(mantissa, _mm_setzero_si128()), _mm_set1_epi32(0x00400000));
  bits = _mm_or_si128(bits, _mm_and_si128(is_special, nan_quiet));
  const __m128 sub = _mm_mul_ps(_mm_cvtepi32_ps(mantissa), _mm_set1_ps(0x1p-24f));
  const __m128 v = _mm_blendv_ps(_mm_castsi128_ps(bits), sub, _mm_castsi128_ps(is_sub));
  return xsimd::batch<float, Arch>(_mm_or_ps(v, _mm_castsi128_ps(sign)));
}

// Where the scales come from: the blocks' fp16 d (converted four at a time), or floats already
// converted (a row of activations used against many weight rows).
template <class Arch, class Block>
struct block_scales {
  const Block* blocks;
  xsimd::batch<float, Arch> four(std::size_t b, std::size_t count) const {
    return halves_to_floats<Arch>(_mm_setr_epi32(blocks[b].d, count > 1 ? blocks[b + 1].d : 0,
                                                 count > 2 ? blocks[b + 2].d : 0, count > 3 ? blocks[b + 3].d : 0));
  }
};

template <class Arch>
struct float_scales {
  const float* d;
  xsimd::batch<float, Arch> four(std::size_t b, std::size_t count) const {
    if (count == 4) return xsimd::batch<float, Arch>::load_unaligned(d + b);
    alignas(16) float v[4] = {0, 0, 0, 0};
    std::copy(d + b, d + b + count, v);
    return xsimd::batch<float, Arch>::load_aligned(v);
  }
};

// sum over blocks of the terms, each formed as the reference forms it:
//   Q8_0 weights: isum * (d_w * d_x);  Q4_0 weights: (isum * d_w) * d_x.
template <class Arch>
struct quant_dot {
  static_assert(std::is_base_of<xsimd::sse4_1, Arch>::value, "the integer core is SSE4.1 / SIMD128");
  using bf = xsimd::batch<float, Arch>;
  using bi = xsimd::batch<int32_t, Arch>;

  template <class WBlock, class WScales, class XScales>
  float operator()(const WBlock* w, const BlockQ8_0* x, std::size_t nb, const WScales& ws, const XScales& xs) const {
    bf acc(0.f);
    for (std::size_t b = 0; b < nb; b += 4) {
      const std::size_t count = std::min<std::size_t>(4, nb - b);
      const bf isum = xsimd::batch_cast<float>(bi(block_sums4(w, x, b, count)));
      const bf dw = ws.four(b, count), dx = xs.four(b, count);
      if constexpr (std::is_same<WBlock, BlockQ8_0>::value) acc += isum * (dw * dx);
      else acc += (isum * dw) * dx;
    }
    return xsimd::hadd(acc);
  }
};

template <class WBlock>
void block_dots_of(int32_t* sums, const WBlock* w, const BlockQ8_0* x, std::size_t blocks) {
  for (std::size_t b = 0; b < blocks; b += 4) {
    const std::size_t count = std::min<std::size_t>(4, blocks - b);
    alignas(16) int32_t s[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(s), block_sums4(w, x, b, count));
    std::copy(s, s + count, sums + b);
  }
}

template <class Arch, class WBlock>
void linear_rows(float* y, const BlockQ8_0* xq, const float* xd, std::size_t rows, int in, int out, const WBlock* w,
                 const float* bias, int o_begin, int o_end) {
  const std::size_t nb = static_cast<std::size_t>(in) / kQuantBlock;
  const float_scales<Arch> xs_of_row{xd};
  if (rows == 1) {  // decoding: each weight row's scales converted as it streams by
    for (int o = o_begin; o < o_end; ++o) {
      const WBlock* wo = w + o * nb;
      const float s = quant_dot<Arch>{}(wo, xq, nb, block_scales<Arch, WBlock>{wo}, xs_of_row);
      y[o] = bias ? s + bias[o] : s;
    }
    return;
  }
  // Several rows: a weight row's scales converted once, then the row against every row of x.
  std::vector<float> wd(nb);
  for (int o = o_begin; o < o_end; ++o) {
    const WBlock* wo = w + o * nb;
    for (std::size_t b = 0; b < nb; ++b) wd[b] = fp16_to_fp32(wo[b].d);
    const float_scales<Arch> ws{wd.data()};
    for (std::size_t r = 0; r < rows; ++r) {
      const float s = quant_dot<Arch>{}(wo, xq + r * nb, nb, ws, float_scales<Arch>{xd + r * nb});
      y[r * out + o] = bias ? s + bias[o] : s;
    }
  }
}

}  // namespace

void block_dots(int32_t* sums, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t blocks) {
  block_dots_of(sums, w, x, blocks);
}

void block_dots(int32_t* sums, const BlockQ4_0* w, const BlockQ8_0* x, std::size_t blocks) {
  block_dots_of(sums, w, x, blocks);
}

float vec_dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x) {
  return quant_dot<quant_arch>{}(w, x, n / kQuantBlock, block_scales<quant_arch, BlockQ8_0>{w},
                                 block_scales<quant_arch, BlockQ8_0>{x});
}

float vec_dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x) {
  return quant_dot<quant_arch>{}(w, x, n / kQuantBlock, block_scales<quant_arch, BlockQ4_0>{w},
                                 block_scales<quant_arch, BlockQ8_0>{x});
}

void linear_quant(float* y, const BlockQ8_0* xq, const float* xd, std::size_t rows, int in, int out, const void* w,
                  QuantType type, const float* bias, int o_begin, int o_end) {
  if (type == QuantType::q8_0)
    linear_rows<quant_arch>(y, xq, xd, rows, in, out, static_cast<const BlockQ8_0*>(w), bias, o_begin, o_end);
  else
    linear_rows<quant_arch>(y, xq, xd, rows, in, out, static_cast<const BlockQ4_0*>(w), bias, o_begin, o_end);
}

}  // namespace attnkit::simd

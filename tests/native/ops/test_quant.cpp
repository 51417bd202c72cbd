// Q8_0 / Q4_0 (attnkit/ops/quant.hpp): fp16, the quantisers against hand-worked blocks (ggml's
// quantize_row_q8_0_ref / quantize_row_q4_0_ref semantics, worked out by hand from ggml-quants.c),
// round trips, the xsimd dot products against the reference, and the linear layer against float32.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "attnkit/core/parallel.hpp"
#include "attnkit/ops/quant.hpp"
#include "fixtures.hpp"

using namespace attnkit;

namespace {

constexpr double kU = 0x1p-24;  // float32 unit roundoff
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

std::vector<float> block_of(std::initializer_list<std::pair<int, float>> set, float fill = 0.f) {
  std::vector<float> x(kQuantBlock, fill);
  for (const auto& [j, v] : set) x[j] = v;
  return x;
}

BlockQ8_0 q8(const std::vector<float>& x) {
  BlockQ8_0 b;
  EXPECT_TRUE(quantize_q8_0(&b, x.data(), x.size()).ok());
  return b;
}

BlockQ4_0 q4(const std::vector<float>& x) {
  BlockQ4_0 b;
  EXPECT_TRUE(quantize_q4_0(&b, x.data(), x.size()).ok());
  return b;
}

std::vector<float> dq(const BlockQ8_0& b) {
  std::vector<float> y(kQuantBlock);
  ref::dequantize_row_q8_0(y.data(), &b, kQuantBlock);
  return y;
}

std::vector<float> dq(const BlockQ4_0& b) {
  std::vector<float> y(kQuantBlock);
  ref::dequantize_row_q4_0(y.data(), &b, kQuantBlock);
  return y;
}

// Blocks with random quants over the whole int8 / nibble range (-128 included) and random scales.
template <class Block>
std::vector<Block> random_blocks(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  std::vector<Block> v(n);
  for (auto& b : v) {
    b.d = fp32_to_fp16(scale(rng));
    for (auto& q : b.qs) q = static_cast<std::remove_reference_t<decltype(q)>>(rng() & 0xFF);
  }
  return v;
}

float scale_of(const BlockQ8_0& b) { return fp16_to_fp32(b.d); }
float scale_of(const BlockQ4_0& b) { return fp16_to_fp32(b.d); }

// A block's term as the reference forms it, and sum |term| over a row (for the summation bound).
float term(const BlockQ8_0& w, const BlockQ8_0& x) {
  return static_cast<float>(ref::block_dot(w, x)) * (scale_of(w) * scale_of(x));
}
float term(const BlockQ4_0& w, const BlockQ8_0& x) {
  return static_cast<float>(ref::block_dot(w, x)) * scale_of(w) * scale_of(x);
}
template <class WBlock>
double abs_term_sum(const WBlock* w, const BlockQ8_0* x, std::size_t nb) {
  double s = 0;
  for (std::size_t b = 0; b < nb; ++b) s += std::fabs(term(w[b], x[b]));
  return s;
}

// Largest |x - x^| over a block with stored scale d16 (d the exact scale, d16 = fp16(d)): the quant
// rounds x / d (error <= 0.5 d), and the dequantiser multiplies by d16 (error <= |q| |d - d16|),
// with |d - d16| <= e = max(2^-11 |d16|, 2^-25) (half an fp16 step; 2^-25 where d16 is subnormal,
// below 2^-14: blocks with amax < 127 * 2^-14 = 0.0078 for Q8_0, 8 * 2^-14 = 0.00049 for Q4_0).
//   Q8_0: 0.5 (|d16| + e) + 127 e   (= 0.5623 |d16| for normal d16)
//   Q4_0: 1.0 (|d16| + e) + 8 e     (the clip: the value opposite max, 8.5 -> 7, is off by one d)
double half_step(float d16) { return std::max(std::fabs(d16) * 0x1p-11, 0x1p-25); }
double q8_error_bound(float d16) { return 0.5 * (std::fabs(d16) + half_step(d16)) + 127 * half_step(d16); }
double q4_error_bound(float d16) { return std::fabs(d16) + half_step(d16) + 8 * half_step(d16); }

// Two float sums of the same nb terms in different orders differ by at most 2 nb u sum |term|
// (each is within (nb - 1) u sum |term| of the exact sum, to first order); 2u more for the bias.
double order_bound(std::size_t nb, double abs_sum) { return 2.0 * (nb + 1) * kU * abs_sum * 1.001; }

const std::vector<int> kColumns{32, 64, 96, 768, 32 * 33};
const std::vector<int> kRows{1, 3, 17};

}  // namespace

// ---------------------------------------------------------------------------------------- fp16

TEST(QuantFp16, EveryHalfRoundTripsAndKnownValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {  // NaN: stays NaN, back to ggml's 0x7E00 with its sign
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(fp32_to_fp16(f), (h & 0x8000) | 0x7E00) << std::hex << h;
    } else {
      ASSERT_EQ(fp32_to_fp16(f), h) << std::hex << h;
    }
  }
  EXPECT_EQ(fp16_to_fp32(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_fp32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);  // the smallest subnormal
  EXPECT_EQ(fp16_to_fp32(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(fp16_to_fp32(0x0400), 0x1p-14f);
  EXPECT_EQ(fp16_to_fp32(0x7C00), kInf);
  EXPECT_EQ(bits_of(fp16_to_fp32(0x8000)), 0x80000000u);
  EXPECT_EQ(fp32_to_fp16(0.1f), 0x2E66);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(kInf), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(-kInf), 0xFC00);
  EXPECT_EQ(fp32_to_fp16(kNaN), 0x7E00);
  EXPECT_EQ(fp32_to_fp16(-kNaN), 0xFE00);
  EXPECT_EQ(fp32_to_fp16(1e-30f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(fp32_to_fp16(1e30f), 0x7C00);
}

// Round to nearest, ties to even, checked at every midpoint between consecutive halves (exact in
// float) and one float step either side of it; the top: 65520 (the midpoint above 65504) is inf.
TEST(QuantFp16, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const float lo = fp16_to_fp32(static_cast<uint16_t>(h)), hi = fp16_to_fp32(static_cast<uint16_t>(h + 1));
    const float mid = lo + (hi - lo) / 2;
    ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(lo) + hi) / 2);
    const uint32_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(fp32_to_fp16(mid), even) << std::hex << h;
    ASSERT_EQ(fp32_to_fp16(std::nextafter(mid, 0.f)), h) << std::hex << h;
    ASSERT_EQ(fp32_to_fp16(std::nextafter(mid, kInf)), h + 1) << std::hex << h;
    ASSERT_EQ(fp32_to_fp16(-mid), even | 0x8000) << std::hex << h;
  }
  EXPECT_EQ(fp32_to_fp16(std::nextafter(65520.0f, 0.f)), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);  // half the smallest subnormal: the tie goes to even 0
  EXPECT_EQ(fp32_to_fp16(std::nextafter(0x1p-25f, 1.f)), 0x0001);
}

// ---------------------------------------------------------------------------------------- Q8_0

TEST(QuantQ8_0, QuantiserMatchesHandWorkedBlocks) {
  {  // amax 127: d = 1 exactly, id = 1; roundf takes halves away from zero (2.5 -> 3, not 2)
    const auto x = block_of({{0, 127}, {1, 2.5f}, {2, -2.5f}, {3, 0.5f}, {4, -0.5f}, {5, 1.5f}, {6, -1.49f},
                             {7, 126.5f}, {8, -127}});
    const BlockQ8_0 b = q8(x);
    EXPECT_EQ(b.d, 0x3C00);
    const int want[9] = {127, 3, -3, 1, -1, 2, -1, 127, -127};
    for (int j = 0; j < 9; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
    for (int j = 9; j < 32; ++j) EXPECT_EQ(b.qs[j], 0) << j;
  }
  {  // all zero (and negative zero): d = +0, quants 0
    for (float z : {0.0f, -0.0f}) {
      const BlockQ8_0 b = q8(block_of({}, z));
      EXPECT_EQ(b.d, 0x0000);
      for (int8_t q : b.qs) EXPECT_EQ(q, 0);
      for (float v : dq(b)) EXPECT_EQ(v, 0.0f);
    }
  }
  {  // the largest magnitude negative: amax = 254, d = 2 (positive: Q8_0 is symmetric), id = 0.5
    const BlockQ8_0 b = q8(block_of({{0, 1}, {1, 3}, {2, -3}, {3, 100}, {5, -254}}));
    EXPECT_EQ(b.d, 0x4000);
    const int want[6] = {1, 2, -2, 50, 0, -127};  // 0.5 -> 1, 1.5 -> 2, -1.5 -> -2
    for (int j = 0; j < 6; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
  }
  {  // d = 1/127 is stored rounded to fp16 (0x2008 = 2^-7 * 1032/1024); quants use the exact id
    const BlockQ8_0 b = q8(block_of({}, 1.0f));
    EXPECT_EQ(b.d, 0x2008);
    for (int8_t q : b.qs) EXPECT_EQ(q, 127);
    for (float v : dq(b)) EXPECT_EQ(v, 0.99993896484375f);  // 127 * 1032 * 2^-17
  }
  {  // a NaN last: amax ends NaN, d = NaN (0x7E00), every quant 0
    const BlockQ8_0 b = q8(block_of({{0, 5}, {31, kNaN}}, 1.0f));
    EXPECT_EQ(b.d, 0x7E00);
    for (int8_t q : b.qs) EXPECT_EQ(q, 0);
  }
  {  // a NaN inside: the next value replaces it in amax, forgetting the 100 before it; d = 50/127,
     // 100 * 127/50 = 254 wraps to -2 (x86's conversion), the NaN's quant is 0
    const BlockQ8_0 b = q8(block_of({{0, 100}, {1, kNaN}, {2, 50}}));
    EXPECT_EQ(b.d, 0x364D);
    EXPECT_EQ(b.qs[0], -2);
    EXPECT_EQ(b.qs[1], 0);
    EXPECT_EQ(b.qs[2], 127);
  }
  {  // an inf: d = inf, id = 0, all quants 0 (inf * 0 = NaN -> 0); dequantised, all NaN
    for (float inf : {kInf, -kInf}) {
      const BlockQ8_0 b = q8(block_of({{0, 1}, {1, inf}, {2, -2}}));
      EXPECT_EQ(b.d, 0x7C00);
      for (int8_t q : b.qs) EXPECT_EQ(q, 0);
      for (float v : dq(b)) EXPECT_TRUE(std::isnan(v));
    }
  }
}

// ---------------------------------------------------------------------------------------- Q4_0

TEST(QuantQ4_0, QuantiserMatchesHandWorkedBlocks) {
  {  // max = -8 (the first of equal magnitudes: x[17] = -8 too): d = 1, id = 1; nibble =
     // min(15, trunc(x + 8.5)): halves round up (0.5 -> 1, -0.5 -> 0), 7.5 clips to 7
    const auto x = block_of({{0, -8}, {1, 7}, {2, 7.5f}, {3, 0.5f}, {4, -0.5f}, {5, 1.5f}, {6, -1.5f}, {7, -7.5f},
                             {8, 0.49f}, {16, 0.5f}, {17, -8}, {18, 3}});
    const BlockQ4_0 b = q4(x);
    EXPECT_EQ(b.d, 0x3C00);
    // low nibbles: elements 0..15; high nibbles: 16..31
    const uint8_t want[16] = {0x90, 0x0F, 0xBF, 0x89, 0x88, 0x8A, 0x87, 0x81, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88};
    for (int j = 0; j < 16; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
    const auto y = dq(b);
    const float want_y[9] = {-8, 7, 7, 1, 0, 2, -1, -7, 0};
    for (int j = 0; j < 9; ++j) EXPECT_EQ(y[j], want_y[j]) << j;
    EXPECT_EQ(y[16], 1.0f);
    EXPECT_EQ(y[17], -8.0f);
    EXPECT_EQ(y[18], 3.0f);
  }
  {  // max positive (8, first; -8 later): d = 8 / -8 = -1, so 8 -> nibble 0; -8 -> 16.5 -> clips to 15 (-7 d = 7... of -1: -7)
    const BlockQ4_0 b = q4(block_of({{0, 2}, {1, -2.5f}, {3, 8}, {20, -8}}));
    EXPECT_EQ(b.d, 0xBC00);
    EXPECT_EQ(b.qs[0], 0x86);  // 2 -> -2 + 8.5 -> 6
    EXPECT_EQ(b.qs[1], 0x8B);  // -2.5 -> 11
    EXPECT_EQ(b.qs[3], 0x80);
    EXPECT_EQ(b.qs[4], 0xF8);  // element 20 in the high nibble of byte 4
    const auto y = dq(b);
    EXPECT_EQ(y[0], 2.0f);
    EXPECT_EQ(y[1], -3.0f);
    EXPECT_EQ(y[3], 8.0f);
    EXPECT_EQ(y[20], -7.0f);
  }
  {  // the largest magnitude negative: max = -4, d = 0.5, id = 2
    const BlockQ4_0 b = q4(block_of({{0, 3.75f}, {1, 1.25f}, {2, -1.25f}, {10, -4}, {26, 2}}));
    EXPECT_EQ(b.d, 0x3800);
    EXPECT_EQ(b.qs[0], 0x8F);   // 7.5 + 8.5 = 16 -> 15
    EXPECT_EQ(b.qs[1], 0x8B);   // 2.5 + 8.5 = 11
    EXPECT_EQ(b.qs[2], 0x86);   // -2.5 + 8.5 = 6
    EXPECT_EQ(b.qs[10], 0xC0);  // -4 -> 0; element 26 (4 + 8.5 -> 12) above it
    const auto y = dq(b);
    EXPECT_EQ(y[0], 3.5f);
    EXPECT_EQ(y[1], 1.5f);
    EXPECT_EQ(y[2], -1.0f);
    EXPECT_EQ(y[10], -4.0f);
    EXPECT_EQ(y[26], 2.0f);
  }
  {  // all zero: max = 0, d = 0 / -8 = -0 (0x8000), every nibble 8
    const BlockQ4_0 b = q4(block_of({}));
    EXPECT_EQ(b.d, 0x8000);
    for (uint8_t q : b.qs) EXPECT_EQ(q, 0x88);
    for (float v : dq(b)) EXPECT_EQ(v, 0.0f);
  }
  {  // NaN never becomes max; its nibble is 0 (NaN + 8.5 -> 0): it dequantises to -8 d
    const BlockQ4_0 b = q4(block_of({{0, kNaN}, {1, 8}, {2, 1}}));
    EXPECT_EQ(b.d, 0xBC00);
    EXPECT_EQ(b.qs[0], 0x80);
    EXPECT_EQ(b.qs[1], 0x80);
    EXPECT_EQ(b.qs[2], 0x87);
    EXPECT_EQ(dq(b)[0], 8.0f);
    const BlockQ4_0 all = q4(block_of({}, kNaN));  // all NaN: max stays 0, d = -0, nibbles 0
    EXPECT_EQ(all.d, 0x8000);
    for (uint8_t q : all.qs) EXPECT_EQ(q, 0x00);
  }
  {  // inf becomes max: d = -inf (0xFC00), id = -0: finite values -> nibble 8, the inf -> 0
    const BlockQ4_0 b = q4(block_of({{0, 1}, {1, kInf}, {2, -3}}));
    EXPECT_EQ(b.d, 0xFC00);
    EXPECT_EQ(b.qs[0], 0x88);
    EXPECT_EQ(b.qs[1], 0x80);
    EXPECT_EQ(b.qs[2], 0x88);
    const auto y = dq(b);
    EXPECT_TRUE(std::isnan(y[0]));  // 0 * -inf
    EXPECT_EQ(y[1], kInf);          // -8 * -inf
  }
}

// Dequantised values are within q8_error_bound / q4_error_bound of the input (sd 1e-3 puts Q8_0's
// scales among the subnormal halves). Quantising the dequantised row again gives the same blocks
// (the largest magnitude maps to exactly +-127 / -8 again).
TEST(QuantRoundTrip, DequantisedWithinBoundAndRequantisesToTheSameBlocks) {
  for (int n : kColumns) {
    for (float sd : {1.0f, 1e-3f, 300.0f}) {
      const auto x = attnkit_test::random_normal(n, n + 11, sd);
      const std::size_t nb = n / kQuantBlock;
      std::vector<BlockQ8_0> b8(nb), again8(nb);
      std::vector<BlockQ4_0> b4(nb), again4(nb);
      std::vector<float> y8(n), y4(n);
      ASSERT_TRUE(quantize_q8_0(b8.data(), x.data(), n).ok());
      ASSERT_TRUE(quantize_q4_0(b4.data(), x.data(), n).ok());
      ASSERT_TRUE(dequantize_q8_0(y8.data(), b8.data(), n).ok());
      ASSERT_TRUE(dequantize_q4_0(y4.data(), b4.data(), n).ok());
      for (int i = 0; i < n; ++i) {
        ASSERT_LE(std::fabs(x[i] - y8[i]), q8_error_bound(scale_of(b8[i / 32]))) << "n=" << n << " i=" << i;
        ASSERT_LE(std::fabs(x[i] - y4[i]), q4_error_bound(scale_of(b4[i / 32]))) << "n=" << n << " i=" << i;
      }
      ASSERT_TRUE(quantize_q8_0(again8.data(), y8.data(), n).ok());
      ASSERT_TRUE(quantize_q4_0(again4.data(), y4.data(), n).ok());
      EXPECT_EQ(std::memcmp(b8.data(), again8.data(), nb * sizeof(BlockQ8_0)), 0) << "n=" << n << " sd=" << sd;
      EXPECT_EQ(std::memcmp(b4.data(), again4.data(), nb * sizeof(BlockQ4_0)), 0) << "n=" << n << " sd=" << sd;
    }
  }
}

// ------------------------------------------------------------------------------ reference vs xsimd

// The integer part of every block is exact: the same int32 as the scalar loop, for quants over
// the whole int8 range (-128 included) and every nibble.
TEST(QuantDot, SimdBlockSumsEqualReferenceExactly) {
  for (int n : kColumns) {
    const std::size_t nb = n / kQuantBlock;
    for (int r : kRows) {
      const auto w8 = random_blocks<BlockQ8_0>(nb * r, n + r);
      const auto w4 = random_blocks<BlockQ4_0>(nb * r, n + r + 1);
      const auto x = random_blocks<BlockQ8_0>(nb * r, n + r + 2);
      std::vector<int32_t> s8(nb * r), s4(nb * r);
      simd::block_dots(s8.data(), w8.data(), x.data(), nb * r);
      simd::block_dots(s4.data(), w4.data(), x.data(), nb * r);
      for (std::size_t b = 0; b < nb * r; ++b) {
        ASSERT_EQ(s8[b], ref::block_dot(w8[b], x[b])) << "n=" << n << " b=" << b;
        ASSERT_EQ(s4[b], ref::block_dot(w4[b], x[b])) << "n=" << n << " b=" << b;
      }
    }
  }
  // the extremes: -128 * -128 everywhere (2^19 per block), -128 * 127, nibble 0 (-8) * -128
  BlockQ8_0 a{}, c{};
  BlockQ4_0 f{};
  for (auto& q : a.qs) q = -128;
  for (auto& q : c.qs) q = 127;
  int32_t s;
  simd::block_dots(&s, &a, &a, 1);
  EXPECT_EQ(s, 32 * 128 * 128);
  simd::block_dots(&s, &a, &c, 1);
  EXPECT_EQ(s, -32 * 128 * 127);
  simd::block_dots(&s, &f, &a, 1);
  EXPECT_EQ(s, 32 * 8 * 128);
}

// The float dot: every term is formed as ggml forms it, only the order of the sum differs, so
// |simd - ref| <= 2 (blocks + 1) u sum |term| (order_bound). With all scales 1 every term is an
// integer and every partial sum is exact (< 2^24): then the two are equal.
TEST(QuantDot, SimdMatchesReferenceOnAwkwardSizes) {
  for (int n : kColumns) {
    const std::size_t nb = n / kQuantBlock;
    for (int rows : kRows) {
      auto w8 = random_blocks<BlockQ8_0>(nb * rows, 3 * n + rows);
      auto w4 = random_blocks<BlockQ4_0>(nb * rows, 3 * n + rows + 1);
      auto x = random_blocks<BlockQ8_0>(nb, 3 * n + rows + 2);
      for (int r = 0; r < rows; ++r) {
        const BlockQ8_0* w8r = w8.data() + r * nb;
        const BlockQ4_0* w4r = w4.data() + r * nb;
        const float r8 = ref::vec_dot_q8_0_q8_0(n, w8r, x.data()), s8 = simd::vec_dot_q8_0_q8_0(n, w8r, x.data());
        const float r4 = ref::vec_dot_q4_0_q8_0(n, w4r, x.data()), s4 = simd::vec_dot_q4_0_q8_0(n, w4r, x.data());
        EXPECT_LE(std::fabs(r8 - s8), order_bound(nb, abs_term_sum(w8r, x.data(), nb))) << "n=" << n << " r=" << r;
        EXPECT_LE(std::fabs(r4 - s4), order_bound(nb, abs_term_sum(w4r, x.data(), nb))) << "n=" << n << " r=" << r;
      }
      // scales 1: integer terms, |sum| < 2^24 for these sizes with quants in [-16, 16)
      for (auto& b : w8) {
        b.d = 0x3C00;
        for (auto& q : b.qs) q = static_cast<int8_t>(q / 8);
      }
      for (auto& b : w4) b.d = 0x3C00;
      for (auto& b : x) {
        b.d = 0x3C00;
        for (auto& q : b.qs) q = static_cast<int8_t>(q / 8);
      }
      for (int r = 0; r < rows; ++r) {
        const BlockQ8_0* w8r = w8.data() + r * nb;
        const BlockQ4_0* w4r = w4.data() + r * nb;
        ASSERT_LT(abs_term_sum(w8r, x.data(), nb), 1 << 24);
        ASSERT_LT(abs_term_sum(w4r, x.data(), nb), 1 << 24);
        EXPECT_EQ(simd::vec_dot_q8_0_q8_0(n, w8r, x.data()), ref::vec_dot_q8_0_q8_0(n, w8r, x.data())) << n;
        EXPECT_EQ(simd::vec_dot_q4_0_q8_0(n, w4r, x.data()), ref::vec_dot_q4_0_q8_0(n, w4r, x.data())) << n;
      }
    }
  }
}

// The kernels convert fp16 scales four at a time with vector code: every half, in every lane (and
// in a row's last, partial group), gives fp16_to_fp32's value. One block carries the scale under
// test with isum = 1, the others zero quants and scale 0, so the dot is that scale.
TEST(QuantDot, SimdScaleConversionMatchesFp16ToFp32ForEveryHalf) {
  std::vector<BlockQ8_0> w(4), x(4);
  std::vector<BlockQ4_0> w4(4);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float want = fp16_to_fp32(static_cast<uint16_t>(h));
    for (int blocks : {4, 3}) {
      for (int lane = 0; lane < blocks; ++lane) {
        for (int b = 0; b < 4; ++b) {
          w[b] = BlockQ8_0{};
          x[b] = BlockQ8_0{};
          w4[b] = BlockQ4_0{};
          for (auto& q : w4[b].qs) q = 0x88;  // nibbles 8: zero
        }
        w[lane].d = static_cast<uint16_t>(h);
        w[lane].qs[0] = 1;
        w4[lane].d = static_cast<uint16_t>(h);
        w4[lane].qs[0] = 0x89;
        x[lane].d = 0x3C00;
        x[lane].qs[0] = 1;
        const float s8 = simd::vec_dot_q8_0_q8_0(blocks * kQuantBlock, w.data(), x.data());
        const float s4 = simd::vec_dot_q4_0_q8_0(blocks * kQuantBlock, w4.data(), x.data());
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(s8) && std::isnan(s4)) << std::hex << h;
        } else {
          ASSERT_EQ(s8, want) << std::hex << h << " lane " << lane;
          ASSERT_EQ(s4, want) << std::hex << h << " lane " << lane;
        }
      }
    }
  }
}

// -------------------------------------------------------------------------------------- linear

namespace {

// The quantized linear layer against the float32 product x W^T, for every output:
//   y_q = sum over blocks of d_w d_x isum = sum_i x^_i w^_i (up to float rounding of the terms),
//   y_q - x.w = sum_i e_x,i w^_i + x_i e_w,i, with |e_x,i| <= q8_error_bound(d_x) and |e_w,i| <=
//   q8_error_bound(d_w) or q4_error_bound(d_w) (as in the round trip). So, per output,
//   |y_q - x.w| <= sum_b (q8_error_bound(d_xb) |w^_b|_1 + error_bound(d_wb) |x_b|_1) + float rounding.
// Relative to |x| |w|: |e_b|_2 <= sqrt(32) 0.5623 amax_b / 127 <= 0.0250 |w_b|_2 (amax <= the
// 2-norm), and Cauchy-Schwarz over blocks gives |y_q - x.w| <= (0.0250 + 0.0250 + 0.0250^2) |x| |w|
// = 0.051 |x| |w| for Q8_0 weights with normal (not subnormal fp16) scales: the worst case,
// reached only by adversarial data. On Gaussian
// data the errors are independent and uniform: sd ~ sqrt(2/12) d = 0.0078 / sqrt(in) of |x| |w|;
// the test asserts 1e-2 (Q8_0) and 0.1 (Q4_0: d = amax / 8, sixteen times Q8_0's) and prints what
// it measures.
struct Errors {
  double q8 = 0, q4 = 0;
};

template <class WBlock>
void check_against_float(const std::vector<float>& y, const std::vector<float>& x, const std::vector<float>& w,
                         const std::vector<WBlock>& wq, const float* bias, int rows, int in, int out,
                         double& worst_relative) {
  const std::size_t nb = in / kQuantBlock;
  std::vector<BlockQ8_0> xq(nb);
  std::vector<float> what(in);
  for (int r = 0; r < rows; ++r) {
    ref::quantize_row_q8_0(xq.data(), x.data() + static_cast<std::size_t>(r) * in, in);
    for (int o = 0; o < out; ++o) {
      const float* xr = x.data() + static_cast<std::size_t>(r) * in;
      const float* wo = w.data() + static_cast<std::size_t>(o) * in;
      const WBlock* wqo = wq.data() + o * nb;
      if constexpr (std::is_same<WBlock, BlockQ8_0>::value) ref::dequantize_row_q8_0(what.data(), wqo, in);
      else ref::dequantize_row_q4_0(what.data(), wqo, in);
      double exact = 0, abs_prod = 0, nx = 0, nw = 0, bound = 0;
      for (int i = 0; i < in; ++i) {
        exact += static_cast<double>(xr[i]) * wo[i];
        abs_prod += std::fabs(static_cast<double>(xr[i]) * wo[i]);
        nx += static_cast<double>(xr[i]) * xr[i];
        nw += static_cast<double>(wo[i]) * wo[i];
      }
      for (std::size_t b = 0; b < nb; ++b) {
        double x1 = 0, w1 = 0;
        for (int j = 0; j < kQuantBlock; ++j) {
          x1 += std::fabs(xr[b * kQuantBlock + j]);
          w1 += std::fabs(what[b * kQuantBlock + j]);
        }
        const float dw = scale_of(wqo[b]);
        const double ew = std::is_same<WBlock, BlockQ8_0>::value ? q8_error_bound(dw) : q4_error_bound(dw);
        bound += q8_error_bound(scale_of(xq[b])) * w1 + ew * x1;
      }
      const double got = y[static_cast<std::size_t>(r) * out + o] - (bias ? bias[o] : 0.f);
      const double rounding = order_bound(nb, abs_term_sum(wqo, xq.data(), nb)) + 1e-6 * (abs_prod + std::fabs(got));
      ASSERT_LE(std::fabs(got - exact), bound + rounding) << "in=" << in << " r=" << r << " o=" << o;
      worst_relative = std::max(worst_relative, std::fabs(got - exact) / std::sqrt(nx * nw));
    }
  }
}

}  // namespace

TEST(QuantLinear, SimdEntryMatchesReferenceOnAwkwardSizes) {
  const int out = 13;
  for (int in : kColumns) {
    const std::size_t nb = in / kQuantBlock;
    const auto wf = attnkit_test::random_normal(static_cast<std::size_t>(out) * in, in + 5, 0.02f);
    const auto bias = attnkit_test::random_normal(out, in + 6);
    std::vector<BlockQ8_0> w8(out * nb);
    std::vector<BlockQ4_0> w4(out * nb);
    ref::quantize_row_q8_0(w8.data(), wf.data(), wf.size());
    ref::quantize_row_q4_0(w4.data(), wf.data(), wf.size());
    for (int rows : kRows) {
      const auto x = attnkit_test::random_normal(static_cast<std::size_t>(rows) * in, in + rows, 1.5f);
      for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
        for (QuantType type : {QuantType::q8_0, QuantType::q4_0}) {
          const void* w = type == QuantType::q8_0 ? static_cast<const void*>(w8.data()) : w4.data();
          std::vector<float> yr(static_cast<std::size_t>(rows) * out), ys(yr.size(), kNaN);
          ref::linear_quant(yr.data(), x.data(), rows, in, out, w, type, b);
          ASSERT_TRUE(linear_quant(ys.data(), x.data(), rows, in, out, w, type, b).ok());
          std::vector<BlockQ8_0> xq(nb);
          for (int r = 0; r < rows; ++r) {
            ref::quantize_row_q8_0(xq.data(), x.data() + static_cast<std::size_t>(r) * in, in);
            for (int o = 0; o < out; ++o) {
              const double abs_sum = type == QuantType::q8_0 ? abs_term_sum(w8.data() + o * nb, xq.data(), nb)
                                                            : abs_term_sum(w4.data() + o * nb, xq.data(), nb);
              const std::size_t k = static_cast<std::size_t>(r) * out + o;
              // the bias is added after the sum in both: 2u |y| more
              const double tol = order_bound(nb, abs_sum) + 2 * kU * std::fabs(yr[k]);
              ASSERT_LE(std::fabs(yr[k] - ys[k]), tol) << "in=" << in << " rows=" << rows << " r=" << r << " o=" << o;
            }
          }
        }
      }
    }
  }
}

TEST(QuantLinear, MatchesFloat32ProductWithinTheDerivedBound) {
  const int out = 7;
  Errors worst;
  for (int in : kColumns) {
    const std::size_t nb = in / kQuantBlock;
    Errors here;
    for (int rows : kRows) {
      const auto wf = attnkit_test::random_normal(static_cast<std::size_t>(out) * in, 7 * in + rows, 0.05f);
      const auto x = attnkit_test::random_normal(static_cast<std::size_t>(rows) * in, 7 * in + rows + 1);
      const auto bias = attnkit_test::random_normal(out, 9);
      std::vector<BlockQ8_0> w8(out * nb);
      std::vector<BlockQ4_0> w4(out * nb);
      ASSERT_TRUE(quantize_q8_0(w8.data(), wf.data(), wf.size()).ok());
      ASSERT_TRUE(quantize_q4_0(w4.data(), wf.data(), wf.size()).ok());
      std::vector<float> y(static_cast<std::size_t>(rows) * out);
      ASSERT_TRUE(linear_quant(y.data(), x.data(), rows, in, out, w8.data(), QuantType::q8_0, bias.data()).ok());
      check_against_float(y, x, wf, w8, bias.data(), rows, in, out, here.q8);
      ASSERT_TRUE(linear_quant(y.data(), x.data(), rows, in, out, w4.data(), QuantType::q4_0, nullptr).ok());
      check_against_float(y, x, wf, w4, nullptr, rows, in, out, here.q4);
    }
    std::printf("[ quant    ] in %4d: worst |y - x.w| / (|x| |w|): Q8_0 %.2e, Q4_0 %.2e\n", in, here.q8, here.q4);
    worst.q8 = std::max(worst.q8, here.q8);
    worst.q4 = std::max(worst.q4, here.q4);
  }
  EXPECT_LT(worst.q8, 1e-2);
  EXPECT_LT(worst.q4, 1e-1);
}

TEST(QuantLinear, SameBitsAtAnyThreadCount) {
  const int rows = 3, in = 768, out = 1000;
  const auto wf = attnkit_test::random_normal(static_cast<std::size_t>(out) * in, 41, 0.02f);
  const auto x = attnkit_test::random_normal(static_cast<std::size_t>(rows) * in, 42);
  std::vector<BlockQ4_0> w4(out * in / kQuantBlock);
  ref::quantize_row_q4_0(w4.data(), wf.data(), wf.size());
  std::vector<float> one(static_cast<std::size_t>(rows) * out), two(one.size());
  ASSERT_TRUE(linear_quant(one.data(), x.data(), rows, in, out, w4.data(), QuantType::q4_0, nullptr).ok());
  ASSERT_TRUE(set_thread_count(2).ok());
  ASSERT_TRUE(linear_quant(two.data(), x.data(), rows, in, out, w4.data(), QuantType::q4_0, nullptr).ok());
  set_thread_count(1);
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
}

TEST(QuantLinear, RefusesBadSizesNamingTheArgument) {
  std::vector<float> x(3 * 100, 1.f), y(3 * 4, 42.f);
  std::vector<BlockQ8_0> w(4 * 4);
  Status s = linear_quant(y.data(), x.data(), 3, 100, 4, w.data(), QuantType::q8_0, nullptr);
  EXPECT_EQ(s.code, Code::invalid_argument);
  EXPECT_EQ(s.argument, "inFeatures");
  EXPECT_EQ(s.message, "inFeatures must be a multiple of 32 (the Q8_0 / Q4_0 block size), got 100");
  for (float v : y) EXPECT_EQ(v, 42.f);  // nothing written
  s = linear_quant(y.data(), x.data(), 3, 16, 4, w.data(), QuantType::q4_0, nullptr);
  EXPECT_EQ(s.argument, "inFeatures");
  EXPECT_EQ(s.code, Code::invalid_argument);
  s = linear_quant(y.data(), x.data(), 3, 0, 4, w.data(), QuantType::q8_0, nullptr);
  EXPECT_EQ(s.argument, "inFeatures");
  EXPECT_EQ(s.code, Code::out_of_range);
  s = linear_quant(y.data(), x.data(), 3, 32, 0, w.data(), QuantType::q8_0, nullptr);
  EXPECT_EQ(s.argument, "outFeatures");
  s = linear_quant(y.data(), x.data(), 3, 32, 4, w.data(), static_cast<QuantType>(3), nullptr);
  EXPECT_EQ(s.code, Code::invalid_argument);
  EXPECT_EQ(s.argument, "type");
  EXPECT_EQ(check_linear_quant(2.5, 32, 4, QuantType::q8_0).argument, "rows");
  EXPECT_EQ(check_linear_quant(1, 1024, 1 << 20, QuantType::q8_0).argument, "outFeatures * inFeatures");
  EXPECT_TRUE(linear_quant(nullptr, nullptr, 0, 32, 4, w.data(), QuantType::q8_0, nullptr).ok());  // no rows
  BlockQ8_0 b8[2];
  BlockQ4_0 b4[2];
  EXPECT_EQ(quantize_q8_0(b8, x.data(), 33).argument, "elements");
  EXPECT_EQ(quantize_q4_0(b4, x.data(), 48).code, Code::invalid_argument);
  EXPECT_EQ(dequantize_q8_0(x.data(), b8, 31).argument, "elements");
  EXPECT_EQ(dequantize_q4_0(x.data(), b4, 1).argument, "elements");
}

// Timing, not a check: ./attnkit_tests --gtest_filter='Quant*' --gtest_also_run_disabled_tests
TEST(QuantSpeed, DISABLED_SimdDotVsReference) {
  const int in = 4096, out = 1024;
  const std::size_t nb = in / kQuantBlock;
  const auto w8 = random_blocks<BlockQ8_0>(out * nb, 1);
  const auto w4 = random_blocks<BlockQ4_0>(out * nb, 2);
  const auto x = random_blocks<BlockQ8_0>(nb, 3);
  auto time = [&](const char* what, auto&& dot) {
    volatile float sink = 0;
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int o = 0; o < out; ++o) sink = sink + dot(o);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("[ quant    ] %-24s %7.3f ms per %d x %d (%.2f Gelem/s)\n", what, best * 1e3, out, in,
                static_cast<double>(out) * in / best * 1e-9);
    return best;
  };
  const double r8 = time("ref q8_0 x q8_0", [&](int o) { return ref::vec_dot_q8_0_q8_0(in, w8.data() + o * nb, x.data()); });
  const double s8 = time("simd q8_0 x q8_0", [&](int o) { return simd::vec_dot_q8_0_q8_0(in, w8.data() + o * nb, x.data()); });
  const double r4 = time("ref q4_0 x q8_0", [&](int o) { return ref::vec_dot_q4_0_q8_0(in, w4.data() + o * nb, x.data()); });
  const double s4 = time("simd q4_0 x q8_0", [&](int o) { return simd::vec_dot_q4_0_q8_0(in, w4.data() + o * nb, x.data()); });
  std::printf("[ quant    ] speed-up: q8_0 %.1fx, q4_0 %.1fx\n", r8 / s8, r4 / s4);
  // The whole entry (activation quantisation included) against the float32 linear's shape.
  const auto xf = attnkit_test::random_normal(in, 4);
  std::vector<float> y(out);
  for (QuantType type : {QuantType::q8_0, QuantType::q4_0}) {
    const void* w = type == QuantType::q8_0 ? static_cast<const void*>(w8.data()) : w4.data();
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      ASSERT_TRUE(linear_quant(y.data(), xf.data(), 1, in, out, w, type, nullptr).ok());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("[ quant    ] linear_quant %s 1 x %d -> %d: %.3f ms\n", type == QuantType::q8_0 ? "q8_0" : "q4_0", in,
                out, best * 1e3);
  }
}

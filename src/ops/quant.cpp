// Q8_0 / Q4_0 blocks: fp16 conversion, argument checks, the scalar reference (ggml's semantics,
// see attnkit/ops/quant.hpp) and the dispatching entry.
#include "attnkit/ops/quant.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnkit/core/parallel.hpp"

namespace attnkit {

namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// v / 2^shift rounded to nearest, ties to even (shift in [1, 31]).
uint32_t shift_round_even(uint32_t v, int shift) {
  const uint32_t q = v >> shift;
  const uint32_t rest = v & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return q + (rest > half || (rest == half && (q & 1)) ? 1 : 0);
}

// ggml casts floats to int8 with a C cast ((int8_t)roundf(v), (int8_t)(v + 8.5f)), undefined in C
// for NaN, inf and values outside int8; on x86-64 it compiles to cvttss2si: truncation toward zero,
// INT32_MIN for NaN or values outside int32, and the int8 is the low byte. For finite blocks the
// values stay in range (|x * id| <= 127 for Q8_0, x * id + 8.5 in [0.5, 16.5] for Q4_0), where this
// is the plain conversion. A NaN inside a Q8_0 block can make amax forget an earlier, larger value
// (see quant.hpp); that value's x * id then exceeds 127 and wraps as on x86 (254 -> -2).
int8_t to_int8_as_x86(float v) {
  const int32_t i = std::fabs(v) < 2147483648.0f ? static_cast<int32_t>(v) : INT32_MIN;  // NaN: false
  return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint32_t>(i) & 0xFF));
}

}  // namespace

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FF;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float (no float subnormal involved)
    const float v = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exponent == 0x1F) {  // inf, or NaN (quiet bit set, payload kept)
    return float_of(sign | 0x7F800000u | mantissa << 13 | (mantissa ? 0x00400000u : 0u));
  }
  return float_of(sign | (exponent + 127 - 15) << 23 | mantissa << 13);  // normal: rebias the exponent
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t b = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000);
  const uint32_t a = b & 0x7FFFFFFFu;  // |f|
  if (a > 0x7F800000u) return sign | 0x7E00;  // NaN
  if (a >= 0x477FF000u) return sign | 0x7C00;  // >= 65520 (and inf): rounds past 65504
  if (a >= 0x38800000u) {
    // >= 2^-14: a normal half. Rebias the exponent (127 -> 15) and round the mantissa from 23 to 10
    // bits; a carry out of the mantissa correctly bumps the exponent (up to 0x7BFF at most here).
    return sign | static_cast<uint16_t>(shift_round_even(a - ((127u - 15u) << 23), 13));
  }
  // Below 2^-14: a multiple of 2^-24. |f| = m * 2^(e - 150) with m the 24-bit significand, so
  // |f| / 2^-24 = m / 2^(126 - e), shift 14 (e = 112) .. 31; smaller values round to 0.
  const int e = static_cast<int>(a >> 23);
  if (e < 126 - 31) return sign;
  const uint32_t m = (a & 0x7FFFFFu) | (e ? 0x800000u : 0u);
  return sign | static_cast<uint16_t>(shift_round_even(m, 126 - e));
}

namespace ref {

void quantize_row_q8_0(BlockQ8_0* y, const float* x, std::size_t n) {
  for (std::size_t b = 0; b < n / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    float amax = 0.0f;
    for (int j = 0; j < kQuantBlock; ++j) {
      const float a = std::fabs(xb[j]);
      amax = amax > a ? amax : a;  // ggml's MAX(amax, fabsf(v)): a NaN replaces amax, the next value replaces the NaN
    }
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;  // NaN != 0: id = NaN
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < kQuantBlock; ++j) y[b].qs[j] = to_int8_as_x86(std::round(xb[j] * id));
  }
}

void quantize_row_q4_0(BlockQ4_0* y, const float* x, std::size_t n) {
  for (std::size_t b = 0; b < n / kQuantBlock; ++b) {
    const float* xb = x + b * kQuantBlock;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQuantBlock; ++j) {
      if (amax < std::fabs(xb[j])) {  // strict: the first of equal magnitudes wins; NaN never does
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      const uint8_t lo = static_cast<uint8_t>(std::min<int>(15, to_int8_as_x86(xb[j] * id + 8.5f)));
      const uint8_t hi = static_cast<uint8_t>(std::min<int>(15, to_int8_as_x86(xb[j + 16] * id + 8.5f)));
      y[b].qs[j] = static_cast<uint8_t>(lo | hi << 4);
    }
  }
}

void dequantize_row_q8_0(float* y, const BlockQ8_0* x, std::size_t n) {
  for (std::size_t b = 0; b < n / kQuantBlock; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQuantBlock; ++j) y[b * kQuantBlock + j] = x[b].qs[j] * d;
  }
}

void dequantize_row_q4_0(float* y, const BlockQ4_0* x, std::size_t n) {
  for (std::size_t b = 0; b < n / kQuantBlock; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      y[b * kQuantBlock + j] = ((x[b].qs[j] & 0x0F) - 8) * d;
      y[b * kQuantBlock + j + 16] = ((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

int32_t block_dot(const BlockQ8_0& w, const BlockQ8_0& x) {
  int32_t s = 0;
  for (int j = 0; j < kQuantBlock; ++j) s += w.qs[j] * x.qs[j];
  return s;
}

int32_t block_dot(const BlockQ4_0& w, const BlockQ8_0& x) {
  int32_t s = 0;
  for (int j = 0; j < kQuantBlock / 2; ++j) {
    s += ((w.qs[j] & 0x0F) - 8) * x.qs[j];
    s += ((w.qs[j] >> 4) - 8) * x.qs[j + 16];
  }
  return s;
}

float vec_dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x) {
  float sum = 0.0f;
  for (std::size_t b = 0; b < n / kQuantBlock; ++b)
    sum += static_cast<float>(block_dot(w[b], x[b])) * (fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d));
  return sum;
}

float vec_dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x) {
  float sum = 0.0f;
  for (std::size_t b = 0; b < n / kQuantBlock; ++b)
    sum += static_cast<float>(block_dot(w[b], x[b])) * fp16_to_fp32(w[b].d) * fp16_to_fp32(x[b].d);
  return sum;
}

void linear_quant(float* y, const float* x, std::size_t rows, int in, int out, const void* w, QuantType type,
                  const float* bias) {
  const std::size_t nb = static_cast<std::size_t>(in) / kQuantBlock;
  std::vector<BlockQ8_0> xq(nb);
  for (std::size_t r = 0; r < rows; ++r) {
    quantize_row_q8_0(xq.data(), x + r * in, in);
    for (int o = 0; o < out; ++o) {
      float s;
      if (type == QuantType::q8_0) s = vec_dot_q8_0_q8_0(in, static_cast<const BlockQ8_0*>(w) + o * nb, xq.data());
      else s = vec_dot_q4_0_q8_0(in, static_cast<const BlockQ4_0*>(w) + o * nb, xq.data());
      y[r * out + o] = bias ? s + bias[o] : s;
    }
  }
}

}  // namespace ref

Status check_quant_elements(const char* what, double n) {
  if (std::fmod(n, kQuantBlock) != 0) {
    return Status::error(Code::invalid_argument, what,
                         std::string(what) + " must be a multiple of 32 (the Q8_0 / Q4_0 block size), got " +
                             show_number(n));
  }
  return Status::success();
}

// The four row conversions: n checked, then the reference (they run once per row at load).
template <class Row>
Status checked_row(std::size_t n, Row row) {
  Status s = check_quant_elements("elements", static_cast<double>(n));
  if (s.ok()) row();
  return s;
}

Status quantize_q8_0(BlockQ8_0* y, const float* x, std::size_t n) {
  return checked_row(n, [&] { ref::quantize_row_q8_0(y, x, n); });
}

Status quantize_q4_0(BlockQ4_0* y, const float* x, std::size_t n) {
  return checked_row(n, [&] { ref::quantize_row_q4_0(y, x, n); });
}

Status dequantize_q8_0(float* y, const BlockQ8_0* x, std::size_t n) {
  return checked_row(n, [&] { ref::dequantize_row_q8_0(y, x, n); });
}

Status dequantize_q4_0(float* y, const BlockQ4_0* x, std::size_t n) {
  return checked_row(n, [&] { ref::dequantize_row_q4_0(y, x, n); });
}

Status check_linear_quant(double rows, double in, double out, QuantType type) {
  Status s = check_integer("rows", rows, 0, kMaxOutputElements);
  if (s.ok()) s = check_integer("inFeatures", in, 1, 1 << 20);
  if (s.ok()) s = check_quant_elements("inFeatures", in);
  if (s.ok()) s = check_integer("outFeatures", out, 1, 1 << 20);
  if (s.ok()) s = check_output_size("rows * outFeatures", rows * out);
  if (s.ok()) s = check_output_size("outFeatures * inFeatures", in * out);
  if (s.ok() && type != QuantType::q8_0 && type != QuantType::q4_0) {
    s = Status::error(Code::invalid_argument, "type",
                      "type must be Q8_0 (8) or Q4_0 (2), got " + std::to_string(static_cast<int>(type)));
  }
  // The activations quantized: a block (34 bytes) and a float scale per 32 elements of x.
  if (s.ok()) s = check_heap("x quantized to Q8_0", rows * (in / kQuantBlock) * (sizeof(BlockQ8_0) + sizeof(float)));
  return s;
}

Status linear_quant(float* y, const float* x, std::size_t rows, int in, int out, const void* w, QuantType type,
                    const float* bias) {
  Status s = check_linear_quant(static_cast<double>(rows), in, out, type);
  if (!s.ok() || rows == 0) return s;
#if ATTNKIT_HAVE_SIMD
  const std::size_t nb = static_cast<std::size_t>(in) / kQuantBlock;
  std::vector<BlockQ8_0> xq(rows * nb);
  std::vector<float> xd(rows * nb);
  for (std::size_t r = 0; r < rows; ++r) ref::quantize_row_q8_0(xq.data() + r * nb, x + r * in, in);
  for (std::size_t i = 0; i < xq.size(); ++i) xd[i] = fp16_to_fp32(xq[i].d);
  // Grain as linear's (2^18 multiply-adds); output columns split anywhere give the same bits.
  const int tasks = task_count(static_cast<double>(rows) * in * out, 1 << 18);
  parallel_ranges(static_cast<std::size_t>(out), 1, tasks, [&](std::size_t o0, std::size_t o1) {
    simd::linear_quant(y, xq.data(), xd.data(), rows, in, out, w, type, bias, static_cast<int>(o0),
                       static_cast<int>(o1));
  });
#else
  ref::linear_quant(y, x, rows, in, out, w, type, bias);
#endif
  return s;
}

}  // namespace attnkit

// Quantized weights in llama.cpp's GGUF block formats Q8_0 and Q4_0, and the kernels over them:
// ggml's reference quantisers (bit for bit), the dequantisers, the dot products of a quantized row
// with Q8_0-quantized activations, and a linear layer over a quantized weight matrix.
//
// The semantics are ggml's (ggml/src/ggml-common.h: block_q8_0, block_q4_0; ggml/src/ggml-quants.c:
// quantize_row_q8_0_ref, quantize_row_q4_0_ref, dequantize_row_q8_0, dequantize_row_q4_0;
// ggml/src/ggml-impl.h: GGML_FP32_TO_FP16 / GGML_FP16_TO_FP32; ggml/src/ggml-cpu/quants.c:
// ggml_vec_dot_q8_0_q8_0_generic, ggml_vec_dot_q4_0_q8_0_generic). Sizes are in elements and
// must be multiples of kQuantBlock: the validated entry points refuse others, the ref:: and
// simd:: kernels assume them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnkit/core/status.hpp"

namespace attnkit {

// Elements per block, both formats (ggml's QK8_0 and QK4_0).
constexpr int kQuantBlock = 32;

// IEEE 754 binary16 <-> binary32. A half is held as its 16 bits.
//   fp16_to_fp32: exact (every half is a float); a NaN stays a NaN (sign and payload kept, quiet
//     bit set).
//   fp32_to_fp16: round to nearest, ties to even (ggml's GGML_FP32_TO_FP16); magnitudes from
//     65520 up (the midpoint above the largest half, 65504) give inf; values below 2^-14 give
//     subnormal halves (multiples of 2^-24), below 2^-25 (and 2^-25 itself: the tie goes to the even 0)
//     a signed zero; any NaN gives 0x7E00 with the NaN's sign (ggml's choice: the payload is dropped).
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);

// The blocks as they lie in a GGUF file (little-endian, as x86 and wasm are): a GGUF tensor of
// type Q8_0 / Q4_0 with rows of `in` elements is [rows][in / 32] of these, with no padding, and
// can be used in place (the bytes only need to be 2-byte aligned; GGUF aligns tensor data to 32).
//   Q8_0: x[j] = d * qs[j].
//   Q4_0: element j < 16 is the low nibble of qs[j], element 16 + j the high nibble of qs[j];
//         x = d * (nibble - 8), nibbles in [0, 15] so values in [-8, 7] * d.
struct BlockQ8_0 {
  uint16_t d;  // scale, fp16 bits
  int8_t qs[kQuantBlock];
};
struct BlockQ4_0 {
  uint16_t d;  // scale, fp16 bits
  uint8_t qs[kQuantBlock / 2];
};
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 2, "block_q8_0 is 34 bytes: fp16 d, int8 qs[32]");
static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 2, "block_q4_0 is 18 bytes: fp16 d, uint8 qs[16]");

// The formats by ggml's ggml_type numbers (a GGUF tensor info's type field).
enum class QuantType : int {
  q4_0 = 2,
  q8_0 = 8,
};

// Bytes of a row of n elements (n a multiple of 32): 34 or 18 per block.
constexpr std::size_t quant_row_bytes(QuantType type, std::size_t n) {
  return n / kQuantBlock * (type == QuantType::q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0));
}

// Checks that `what` (an element count) is a multiple of 32: invalid_argument naming `what`.
Status check_quant_elements(const char* what, double n);

// Quantisers, bit-exact with ggml's reference ones, over n elements (n / 32 blocks):
//   Q8_0: per block amax = max |x| (ggml's MAX(amax, fabsf(v)) chain), d = amax / 127,
//         id = d ? 1/d : 0, qs[j] = roundf(x[j] * id) (halves away from zero).
//   Q4_0: per block the value of largest magnitude `max` (the first one met, signed),
//         d = max / -8 (so that max itself maps to -8), id = d ? 1/d : 0,
//         nibble = min(15, (int8_t)(x * id + 8.5f)) (truncation: halves round up; the value of
//         opposite sign and equal magnitude clips to 7).
//   d is stored by fp32_to_fp16. An all-zero block gets d = +0 (Q8_0) or -0 (Q4_0, 0x8000: 0/-8)
//   and quants 0 (Q8_0) or nibbles 8 (Q4_0).
// Non-finite inputs (ggml's C casts of NaN and inf to int8 are undefined; this follows what its
// code does on x86-64, where they compile to cvttss2si, which gives INT32_MIN, low byte 0):
//   Q8_0: a NaN makes amax NaN until the next element replaces it (the MAX chain): only a NaN
//         last in the block leaves d NaN (then every quant is 0); elsewhere its quant is 0 and the
//         values before it no longer count in amax: one larger than the final amax quantizes past
//         127 and wraps to its low byte (100, NaN, 50, 0, ...: d = 50/127, 100 -> 254 -> -2). An inf gives d = inf, id = 0: the other quants are 0 and its own (inf * 0 =
//         NaN) is 0; dequantised, the block is all NaN.
//   Q4_0: a NaN never becomes `max`; its own nibble is 0 (NaN + 8.5 -> 0, the value -8 d). An
//         inf becomes max, d = -inf (for +inf), id = -0: finite elements get nibble 8, the inf 0.
Status quantize_q8_0(BlockQ8_0* y, const float* x, std::size_t n);
Status quantize_q4_0(BlockQ4_0* y, const float* x, std::size_t n);
// Dequantisers (ggml's dequantize_row_q8_0 / q4_0): y[j] = d * q, in float.
Status dequantize_q8_0(float* y, const BlockQ8_0* x, std::size_t n);
Status dequantize_q4_0(float* y, const BlockQ4_0* x, std::size_t n);

// Linear layer over a quantized weight, as ggml's mul_mat runs it on the CPU:
//   x: float32 [rows, in]; w: [out] rows of in / 32 blocks of `type` (W[out][in], torch.nn.Linear's
//   layout, as GGUF stores it); bias: float32 [out] or nullptr; y: float32 [rows, out].
//   Each row of x is quantized to Q8_0 by the reference quantiser (quantize_q8_0, per 32-block;
//   ggml's own SIMD activation quantisers differ from its _ref in the last bit: x86 AVX and wasm take
//   id = 127 / amax and round halves to even), then
//   y[r][o] = sum over blocks b of term_b (+ bias[o], added after the sum), where
//     term_b = isum_b * (d_w * d_x)   (Q8_0 weights: ggml_vec_dot_q8_0_q8_0)
//     term_b = (isum_b * d_w) * d_x   (Q4_0 weights: ggml_vec_dot_q4_0_q8_0)
//   and isum_b is the exact integer dot of the block's 32 quant pairs (Q4_0: nibble - 8).
// Every term is computed as ggml computes it; their float sum may run in a different order than
// ggml's left-to-right one (the SIMD build keeps four partial sums): |difference| <=
// 2 * blocks * 2^-24 * sum |term_b| (to first order). Error against the float32 product: see
// tests/native/ops/test_quant.cpp: for Q8_0 weights at most 0.051 |x_r| |w_o| while the scales are
// normal halves (adversarial data); on Gaussian data ~0.008 / sqrt(in) of it (measured: 4.6e-3 at
// in = 32, 5.9e-4 at in = 1056; Q4_0: 4.3e-2 and 7.1e-3).
// Refused: in not a multiple of 32 (invalid_argument, "inFeatures"), sizes out of range, an unknown
// type ("type"). Large products run on thread_count() threads (ranges of output columns: the
// same bits at any thread count).
Status check_linear_quant(double rows, double in, double out, QuantType type);
Status linear_quant(float* y, const float* x, std::size_t rows, int in, int out, const void* w, QuantType type,
                    const float* bias);

namespace ref {
void quantize_row_q8_0(BlockQ8_0* y, const float* x, std::size_t n);
void quantize_row_q4_0(BlockQ4_0* y, const float* x, std::size_t n);
void dequantize_row_q8_0(float* y, const BlockQ8_0* x, std::size_t n);
void dequantize_row_q4_0(float* y, const BlockQ4_0* x, std::size_t n);
// The integer dot of one block pair (ggml's sumi).
int32_t block_dot(const BlockQ8_0& w, const BlockQ8_0& x);
int32_t block_dot(const BlockQ4_0& w, const BlockQ8_0& x);
// ggml's generic vec_dot: sumf += term_b for b = 0, 1, ... (terms as in linear_quant above), as
// C evaluates it without contraction (wasm, x86 without FMA). A ggml built with -mfma in GNU C mode
// (its default x86 variants) fuses the add into an fma and can differ in the last bits.
float vec_dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x);
float vec_dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x);
void linear_quant(float* y, const float* x, std::size_t rows, int in, int out, const void* w, QuantType type,
                  const float* bias);
}  // namespace ref

namespace simd {
// 128-bit integer kernels (SSE4.1 natively, SIMD128 in wasm): each block's int8 pairs are widened
// to int16 (pmovsxbw / i16x8.extend_low_i8x16_s) and multiplied and added in pairs into int32
// (pmaddwd / i32x4.dot_i16x8_s): exact for any int8 quants, -128 included. Four blocks' sums are
// reduced together, turned into floats (exact: |isum| <= 2^19) and scaled lane-wise exactly as the
// reference scales each term; lane k sums the terms of blocks k, k + 4, ...
// The integer sum of each block, as the dot products compute it (for tests): sums[b] == ref::block_dot.
void block_dots(int32_t* sums, const BlockQ8_0* w, const BlockQ8_0* x, std::size_t blocks);
void block_dots(int32_t* sums, const BlockQ4_0* w, const BlockQ8_0* x, std::size_t blocks);
float vec_dot_q8_0_q8_0(std::size_t n, const BlockQ8_0* w, const BlockQ8_0* x);
float vec_dot_q4_0_q8_0(std::size_t n, const BlockQ4_0* w, const BlockQ8_0* x);
// Output columns o_begin .. o_end of every row, from activations already quantized:
// xq [rows][in / 32] blocks and xd [rows][in / 32] their scales as floats (fp16_to_fp32(d)).
void linear_quant(float* y, const BlockQ8_0* xq, const float* xd, std::size_t rows, int in, int out, const void* w,
                  QuantType type, const float* bias, int o_begin, int o_end);
}  // namespace simd

}  // namespace attnkit

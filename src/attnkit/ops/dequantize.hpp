// GGUF tensor data -> float32: the element types a GGUF reader accepts (F32, F16, BF16, Q8_0,
// Q4_0, Q4_K) turned into float32 values, and the Q4_K block format.
//
// Q8_0 and Q4_0 are attnkit/ops/quant.hpp's blocks and dequantisers. Q4_K is ggml's k-quant of
// 4 bits (ggml/src/ggml-common.h: block_q4_K, QK_K = 256; ggml/src/ggml-quants.c:
// dequantize_row_q4_K, get_scale_min_k4): the semantics are ggml's, the code is written from them.
// Element types are named by ggml's ggml_type numbers, as a GGUF tensor info stores them (the
// formats layer reads them: attnkit/formats/gguf.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnkit/core/status.hpp"
#include "attnkit/ops/quant.hpp"

namespace attnkit {

// Elements per Q4_K super-block (ggml's QK_K), and per sub-block of it (8 sub-blocks).
constexpr int kQuantSuperBlock = 256;

// A Q4_K super-block as it lies in a GGUF file (little-endian), 144 bytes, no padding:
//   d, dmin: fp16 bits, the scales of the sub-blocks' scales and of their minimums;
//   scales[12]: eight 6-bit scales sc[j] and eight 6-bit minimums m[j], packed (ggml's
//     get_scale_min_k4): for j < 4, sc[j] = scales[j] & 63 and m[j] = scales[j + 4] & 63; for
//     j >= 4, sc[j] = (scales[j + 4] & 0xF) | (scales[j - 4] >> 6) << 4 and
//     m[j] = (scales[j + 4] >> 4) | (scales[j] >> 6) << 4;
//   qs[128]: 4-bit quants. Sub-blocks 2i and 2i + 1 (i = 0..3) share qs[32 i .. 32 i + 31]:
//     element l of sub-block 2i is the low nibble of qs[32 i + l], of sub-block 2i + 1 the high one.
// Element l of sub-block j: x = (d * sc[j]) * q - (dmin * m[j]), each product rounded to float
// and the difference too (ggml's d1 * q - m1; no fused multiply-add).
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQuantSuperBlock / 2];
};
static_assert(sizeof(BlockQ4_K) == 144 && alignof(BlockQ4_K) == 2, "block_q4_K is 144 bytes: d, dmin, scales[12], qs[128]");

// The GGUF element types this library reads, by ggml_type number.
enum class GgmlType : int {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q8_0 = 8,
  q4_k = 12,
  bf16 = 30,
};

// Elements per block and bytes per block of a type: F32 1 and 4, F16 and BF16 1 and 2, Q8_0 32 and
// 34, Q4_0 32 and 18, Q4_K 256 and 144; 0 and 0 for any other number.
int ggml_block_elements(int type);
int ggml_block_bytes(int type);

// Q4_K -> float32 over n elements (n / 256 super-blocks): invalid_argument ("elements") unless
// n is a multiple of 256.
Status dequantize_q4_k(float* y, const BlockQ4_K* x, std::size_t n);

// n elements of GGUF data of ggml type `type` (little-endian bytes at `x`, any alignment) ->
// float32 y[n]:
//   F32: the bits as they are (NaN payloads kept); F16: exact (fp16_to_fp32); BF16: the bits
//   widened (<< 16), exact, NaN kept; Q8_0, Q4_0: quant.hpp's dequantisers; Q4_K: as above.
// Refused: a type not in GgmlType (invalid_argument, "type", naming the number), n not a
// multiple of the type's block (invalid_argument, "elements").
// Blocks are read with memcpy, so x need not be aligned (a file's bytes can sit anywhere).
Status dequantize(float* y, const void* x, std::size_t n, int type);

namespace ref {
// ggml's get_scale_min_k4: the 6-bit scale and minimum of sub-block j (0..7).
void q4_k_scale_min(int j, const uint8_t* scales, uint8_t& sc, uint8_t& m);
// ggml's dequantize_row_q4_K over n / 256 super-blocks.
void dequantize_row_q4_k(float* y, const BlockQ4_K* x, std::size_t n);
}  // namespace ref

}  // namespace attnkit

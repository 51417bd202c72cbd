// GGUF tensor data -> float32 (attnkit/ops/dequantize.hpp): the Q4_K reference, written from
// ggml's dequantize_row_q4_K semantics, and the checked dispatch over the element types.
#include "attnkit/ops/dequantize.hpp"

#include <cstring>
#include <string>

namespace attnkit {

namespace {

struct TypeInfo {
  int type, elements, bytes;
};
constexpr TypeInfo kTypes[] = {
    {0, 1, 4}, {1, 1, 2}, {2, kQuantBlock, sizeof(BlockQ4_0)}, {8, kQuantBlock, sizeof(BlockQ8_0)},
    {12, kQuantSuperBlock, sizeof(BlockQ4_K)}, {30, 1, 2},
};

const TypeInfo* info(int type) {
  for (const auto& t : kTypes)
    if (t.type == type) return &t;
  return nullptr;
}

// Blocks of type Block from possibly unaligned bytes, one at a time through an aligned copy.
template <class Block, class Row>
void blockwise(float* y, const void* x, std::size_t blocks, int per_block, Row row) {
  const auto* p = static_cast<const unsigned char*>(x);
  Block b;
  for (std::size_t i = 0; i < blocks; ++i) {
    std::memcpy(&b, p + i * sizeof(Block), sizeof(Block));
    row(y + i * per_block, &b, static_cast<std::size_t>(per_block));
  }
}

}  // namespace

int ggml_block_elements(int type) {
  const TypeInfo* t = info(type);
  return t ? t->elements : 0;
}

int ggml_block_bytes(int type) {
  const TypeInfo* t = info(type);
  return t ? t->bytes : 0;
}

namespace ref {

void q4_k_scale_min(int j, const uint8_t* scales, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = scales[j] & 63;
    m = scales[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((scales[j + 4] & 0xF) | (scales[j - 4] >> 6) << 4);
    m = static_cast<uint8_t>((scales[j + 4] >> 4) | (scales[j] >> 6) << 4);
  }
}

void dequantize_row_q4_k(float* y, const BlockQ4_K* x, std::size_t n) {
  for (std::size_t b = 0; b < n / kQuantSuperBlock; ++b) {
    const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
    for (int pair = 0; pair < 4; ++pair) {  // sub-blocks 2 pair and 2 pair + 1 share 32 bytes of qs
      const uint8_t* q = x[b].qs + 32 * pair;
      for (int half = 0; half < 2; ++half) {
        uint8_t sc, m;
        q4_k_scale_min(2 * pair + half, x[b].scales, sc, m);
        const float scale = d * sc, min = dmin * m;
        float* out = y + b * kQuantSuperBlock + 64 * pair + 32 * half;
        for (int l = 0; l < 32; ++l) {
          const int v = half ? q[l] >> 4 : q[l] & 0xF;
          const float scaled = scale * static_cast<float>(v);  // two roundings, as ggml's d1 * q - m1
          out[l] = scaled - min;
        }
      }
    }
  }
}

}  // namespace ref

Status dequantize_q4_k(float* y, const BlockQ4_K* x, std::size_t n) {
  if (n % kQuantSuperBlock != 0) {
    return Status::error(Code::invalid_argument, "elements",
                         "elements must be a multiple of 256 (the Q4_K super-block), got " + std::to_string(n));
  }
  ref::dequantize_row_q4_k(y, x, n);
  return Status::success();
}

Status dequantize(float* y, const void* x, std::size_t n, int type) {
  const TypeInfo* t = info(type);
  if (!t) {
    return Status::error(Code::invalid_argument, "type",
                         "type must be a GGUF element type attnkit reads (F32 0, F16 1, Q4_0 2, Q8_0 8, Q4_K 12, "
                         "BF16 30), got " + std::to_string(type));
  }
  if (n % static_cast<std::size_t>(t->elements) != 0) {
    return Status::error(Code::invalid_argument, "elements",
                         "elements must be a multiple of " + std::to_string(t->elements) + " (the block of type " +
                             std::to_string(type) + "), got " + std::to_string(n));
  }
  if (n == 0) return Status::success();  // (y and x may then be null)
  const auto* p = static_cast<const unsigned char*>(x);
  const std::size_t blocks = n / static_cast<std::size_t>(t->elements);
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32:
      std::memcpy(y, p, 4 * n);  // little-endian host (x86, wasm)
      break;
    case GgmlType::f16:
    case GgmlType::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        const uint16_t h = static_cast<uint16_t>(p[2 * i] | p[2 * i + 1] << 8);
        if (type == static_cast<int>(GgmlType::f16)) {
          y[i] = fp16_to_fp32(h);
        } else {
          const uint32_t bits = static_cast<uint32_t>(h) << 16;
          std::memcpy(y + i, &bits, 4);
        }
      }
      break;
    case GgmlType::q8_0:
      blockwise<BlockQ8_0>(y, x, blocks, kQuantBlock, ref::dequantize_row_q8_0);
      break;
    case GgmlType::q4_0:
      blockwise<BlockQ4_0>(y, x, blocks, kQuantBlock, ref::dequantize_row_q4_0);
      break;
    case GgmlType::q4_k:
      blockwise<BlockQ4_K>(y, x, blocks, kQuantSuperBlock, ref::dequantize_row_q4_k);
      break;
  }
  return Status::success();
}

}  // namespace attnkit

// Attention masks. One convention throughout: a boolean mask holds 1 where a query MAY attend to
// a key (PyTorch's scaled_dot_product_attention, Hugging Face's attention_mask). An additive
// mask holds 0 there and -inf where it may not. masked_fill-style tutorial code uses the inverse
// boolean convention (true = hide); web/masks.js converts.
//
// Masks are uint8 tensors that broadcast like PyTorch to [batch, heads, queryLength, keyLength].
// Building them is not a hot loop (the attention kernel reads them in place, and causal masking
// inside the kernel needs no mask at all), so these have one scalar implementation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnkit/ops/attention.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

// out[i] = ids[i] != pad_id, for n ids (a [batch, length] batch gives a [batch, 1, 1, length] mask).
Status padding_mask(uint8_t* out, const int32_t* ids, std::size_t n, double pad_id);

// out[i] = attention_mask[i] (1 = token, 0 = padding); values other than 0 and 1 are refused.
Status padding_mask_from_attention_mask(uint8_t* out, const int32_t* attention_mask, std::size_t n);

// Causal mask [q_len, kv_len], aligned to the bottom right: out[i][j] = j <= (kv_len - q_len) + i.
// With kv_len = past + q_len, query i of the new block sees the cache and the keys up to itself.
Status check_causal_mask(double q_len, double kv_len);
void causal_mask(uint8_t* out, int q_len, int kv_len);

// A mask operand for combine_masks: kind boolean or additive, dims of a 4-D broadcastable shape.
struct MaskOperand {
  MaskKind kind = MaskKind::boolean;
  const void* data = nullptr;
  int dims[4] = {1, 1, 1, 1};
};

// Broadcast dims of a and b ([B|1, H|1, Lq|1, Lk|1] each): dims must be equal or 1 per axis.
Status check_combine_masks(const double a_dims[4], double a_length, const double b_dims[4], double b_length,
                           int out_dims[4]);

// The mask that lets a query attend where both a and b let it: logical AND when both are
// boolean (out uint8), else the sum of their additive forms (out float32; boolean 0 -> -inf).
void combine_masks(void* out, const MaskOperand& a, const MaskOperand& b, const int out_dims[4]);

}  // namespace attnkit

// Linear (affine) layer: torch.nn.Linear and GPT-2's Conv1D, without a transposed copy of either.
#pragma once

#include <cstddef>

#include "attnkit/core/status.hpp"

namespace attnkit {

// How a weight matrix is stored.
enum class WeightLayout : int {
  out_in = 0,  // W[out][in]: torch.nn.Linear.weight, nn.MultiheadAttention.in_proj_weight
  in_out = 1,  // W[in][out]: GPT-2's Conv1D (transformers.pytorch_utils.Conv1D), TF Dense
};

// y = x W^T + b over rows.
//   x: float32 [rows, in]; y: float32 [rows, out] (must not alias x); bias: [out] or nullptr.
//   y[r][o] = bias[o] + sum_i x[r][i] * W(o, i), W(o, i) = w[o * in + i] (out_in) or
//   w[i * out + o] (in_out).
// Sums run in float32 in an order that differs from PyTorch's; results agree within float32
// rounding (relative ~1e-6 * sqrt(in)). Large products run on thread_count() threads (rows, or
// for a few rows output columns, split so that every thread count gives the same bits).
void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias);

// Sizes from JavaScript: rows, in and out integers in range, rows * out and out * in within the
// output limit.
Status check_linear(double rows, double in, double out);

namespace ref {
void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias);
}
namespace simd {
// out_in: 4 rows x 2 weight rows per register block, each a dot product over `in` accumulated in
// vectors and reduced once at the end. in_out: 4 rows x 2 vectors of outputs per block, the rank-1
// update acc += x[r][i] * W[i][o..o+8) (the weight row is read contiguously).
// Only the output columns o_begin .. o_end of every row are computed; a column's arithmetic is
// the same in any range whose o_begin is a multiple of kColumnAlign (the in_out strips, 4 vectors
// wide, start there; 64 covers every vector width up to AVX-512).
// Rows go in blocks of 4 from the first, the rest (rows % 4) one by one: a range of rows that
// starts at a multiple of 4 also computes each row as the whole call would.
constexpr int kColumnAlign = 64;
void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias, int o_begin, int o_end);
}

}  // namespace attnkit

// Normalisation over the last dimension.
#pragma once

#include <cstddef>

#include "attnkit/core/status.hpp"

namespace attnkit {

// LayerNorm (torch.nn.LayerNorm over the last dim, elementwise affine).
//   x, out: float32 [rows, dim] (out may alias x); gamma, beta: [dim] (nullptr = 1 and 0).
//   out[r][i] = (x[r][i] - mean_r) / sqrt(var_r + eps) * gamma[i] + beta[i], with the biased
//   variance var_r = mean((x[r] - mean_r)^2). The SIMD build takes E[x^2] - E[x]^2 from one
//   sweep while mean^2 <= 8 var (at most 3 bits lost) and a second sweep about the mean beyond,
//   so a large common offset in a row never cancels the variance away.
//   Special values are PyTorch's: the output is computed as x * rstd - mean * rstd (PyTorch's
//   x * scale + bias), the variance is a float32 (+inf past its range, so rstd = 0), and a row
//   whose spread max - min overflows float32 is NaN (PyTorch's float32 Welford update overflows
//   there); NaN or an infinity in a row makes it NaN, eps = 0 on a constant row gives NaN.
Status layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                  const float* beta, double eps);

// RMSNorm (Zhang & Sennrich 2019; Hugging Face LlamaRMSNorm / T5LayerNorm).
//   out[r][i] = x[r][i] / sqrt(mean(x[r]^2) + eps) * weight[i]   (weight nullptr = 1)
Status rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight,
                double eps);

// Shared argument checks (also used by the fused embedding module).
Status check_norm(double rows, double dim, double eps);

// A row's LayerNorm statistics the careful way: sums in double, then the float32 mean and
// rstd = 1 / sqrt(float32 variance + eps) with the overflow rules above. The reference uses it
// for every row, the SIMD kernel for rows whose float32 statistics overflowed.
void layer_norm_statistics(const float* x, int dim, float eps, float& mean, float& rstd);

namespace ref {
void layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                const float* beta, float eps);
void rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, float eps);
}  // namespace ref

namespace simd {
void layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                const float* beta, float eps);
void rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, float eps);
}  // namespace simd

}  // namespace attnkit

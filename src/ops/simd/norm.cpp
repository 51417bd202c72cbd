// xsimd kernels for LayerNorm and RMSNorm (contracts in attnkit/ops/norm.hpp).
#include "attnkit/ops/norm.hpp"
#include "attnkit/core/simd_arch.hpp"
#include "ops/simd/row_norm.hpp"

namespace attnkit::simd {

void layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                const float* beta, float eps) {
  for (std::size_t r = 0; r < rows; ++r)
    layer_norm_row<simd_arch>(out + r * dim, x + r * dim, dim, gamma, beta, eps);
}

void rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, float eps) {
  for (std::size_t r = 0; r < rows; ++r) rms_norm_row<simd_arch>(out + r * dim, x + r * dim, dim, weight, eps);
}

}  // namespace attnkit::simd

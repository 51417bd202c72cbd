#include "attnkit/ops/norm.hpp"
#include "attnkit/core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnkit {

void layer_norm_statistics(const float* x, int dim, float eps, float& mean, float& rstd) {
  double sum = 0;
  for (int i = 0; i < dim; ++i) sum += x[i];
  const double m = sum / dim;
  double sq = 0;
  for (int i = 0; i < dim; ++i) sq += (x[i] - m) * (x[i] - m);
  mean = static_cast<float>(m);
  rstd = 1.0f / std::sqrt(static_cast<float>(sq / dim) + eps);
  if (rstd == 0.0f && std::isfinite(mean)) {
    float lo = x[0], hi = x[0];
    for (int i = 1; i < dim; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
    if (std::isinf(hi - lo)) mean = rstd = std::numeric_limits<float>::quiet_NaN();
  }
}

namespace ref {
// Statistics in double (exact enough to be the reference), then PyTorch's float32 arithmetic:
// the variance (or mean square) is a float32, +inf once it leaves the range, and the output is
// x * scale + bias with the mean folded into the bias. So the special values are PyTorch's:
// NaN/inf in a row make it NaN, eps = 0 on a constant row is inf - inf = NaN, an overflowing
// variance gives rstd = 0, and a row whose spread overflows float32 is NaN (see row_norm.hpp).
void layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                const float* beta, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    float mean, rstd;
    layer_norm_statistics(xr, dim, eps, mean, rstd);
    for (int i = 0; i < dim; ++i) {
      const float g = gamma ? gamma[i] : 1.0f, b = beta ? beta[i] : 0.0f;
      yr[i] = (xr[i] * rstd - mean * rstd) * g + b;
    }
  }
}

void rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    double sq = 0;
    for (int i = 0; i < dim; ++i) sq += static_cast<double>(xr[i]) * xr[i];
    const float rrms = 1.0f / std::sqrt(static_cast<float>(sq) / dim + eps);  // HF: float32 mean of x^2
    for (int i = 0; i < dim; ++i) yr[i] = xr[i] * rrms * (weight ? weight[i] : 1.0f);
  }
}
}  // namespace ref

Status check_norm(double rows, double dim, double eps) {
  Status s = check_integer("rows", rows, 0, kMaxOutputElements);
  if (!s.ok()) return s;
  s = check_integer("dim", dim, 1, 1 << 20);
  if (!s.ok()) return s;
  if (!std::isfinite(eps) || eps < 0 || eps > 1) {
    return Status::error(Code::out_of_range, "eps", "eps must be a finite number in [0, 1], got " + show_number(eps));
  }
  return check_output_size("rows * dim", rows * dim);
}

#if ATTNKIT_HAVE_SIMD
// Elements below which a norm stays on one thread (a few passes over each: ~3 ns per element).
constexpr double kNormGrain = 1 << 16;
#endif

Status layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                  const float* beta, double eps) {
  Status s = check_norm(static_cast<double>(rows), dim, eps);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  // Rows are independent: ranges of rows on the pool, large batches only.
  parallel_ranges(rows, 1, task_count(static_cast<double>(rows) * dim, kNormGrain),
                  [&](std::size_t r0, std::size_t r1) {
                    simd::layer_norm(out + r0 * dim, x + r0 * dim, r1 - r0, dim, gamma, beta, static_cast<float>(eps));
                  });
#else
  ref::layer_norm(out, x, rows, dim, gamma, beta, static_cast<float>(eps));
#endif
  return s;
}

Status rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, double eps) {
  Status s = check_norm(static_cast<double>(rows), dim, eps);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  parallel_ranges(rows, 1, task_count(static_cast<double>(rows) * dim, kNormGrain),
                  [&](std::size_t r0, std::size_t r1) {
                    simd::rms_norm(out + r0 * dim, x + r0 * dim, r1 - r0, dim, weight, static_cast<float>(eps));
                  });
#else
  ref::rms_norm(out, x, rows, dim, weight, static_cast<float>(eps));
#endif
  return s;
}

}  // namespace attnkit

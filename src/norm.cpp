#include "attnkit/norm.hpp"

#include <cmath>

namespace attnkit {

namespace ref {
void layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                const float* beta, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    double sum = 0;
    for (int i = 0; i < dim; ++i) sum += xr[i];
    const double mean = sum / dim;
    double sq = 0;
    for (int i = 0; i < dim; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(sq / dim + eps);
    for (int i = 0; i < dim; ++i) {
      const double g = gamma ? gamma[i] : 1.0, b = beta ? beta[i] : 0.0;
      yr[i] = static_cast<float>((xr[i] - mean) * rstd * g + b);
    }
  }
}

void rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = out + r * dim;
    double sq = 0;
    for (int i = 0; i < dim; ++i) sq += static_cast<double>(xr[i]) * xr[i];
    const double rrms = 1.0 / std::sqrt(sq / dim + eps);
    for (int i = 0; i < dim; ++i) yr[i] = static_cast<float>(xr[i] * rrms * (weight ? weight[i] : 1.0));
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

Status layer_norm(float* out, const float* x, std::size_t rows, int dim, const float* gamma,
                  const float* beta, double eps) {
  Status s = check_norm(static_cast<double>(rows), dim, eps);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  simd::layer_norm(out, x, rows, dim, gamma, beta, static_cast<float>(eps));
#else
  ref::layer_norm(out, x, rows, dim, gamma, beta, static_cast<float>(eps));
#endif
  return s;
}

Status rms_norm(float* out, const float* x, std::size_t rows, int dim, const float* weight, double eps) {
  Status s = check_norm(static_cast<double>(rows), dim, eps);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  simd::rms_norm(out, x, rows, dim, weight, static_cast<float>(eps));
#else
  ref::rms_norm(out, x, rows, dim, weight, static_cast<float>(eps));
#endif
  return s;
}

}  // namespace attnkit

// Linear layer: argument checks, the scalar reference and the dispatching entry.
#include "attnkit/linear.hpp"

namespace attnkit {

namespace ref {
void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * in;
    for (int o = 0; o < out; ++o) {
      float acc = bias ? bias[o] : 0.f;
      for (int i = 0; i < in; ++i) {
        const float wi = layout == WeightLayout::out_in ? w[static_cast<std::size_t>(o) * in + i]
                                                        : w[static_cast<std::size_t>(i) * out + o];
        acc += xr[i] * wi;
      }
      y[r * out + o] = acc;
    }
  }
}
}  // namespace ref

Status check_linear(double rows, double in, double out) {
  Status s = check_integer("rows", rows, 0, kMaxOutputElements);
  if (s.ok()) s = check_integer("inFeatures", in, 1, 1 << 20);
  if (s.ok()) s = check_integer("outFeatures", out, 1, 1 << 20);
  if (s.ok()) s = check_output_size("rows * outFeatures", rows * out);
  if (s.ok()) s = check_output_size("outFeatures * inFeatures", in * out);
  return s;
}

void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias) {
#if ATTNKIT_HAVE_SIMD
  simd::linear(y, x, rows, in, out, w, layout, bias);
#else
  ref::linear(y, x, rows, in, out, w, layout, bias);
#endif
}

}  // namespace attnkit

// Linear layer: argument checks, the scalar reference and the dispatching entry.
#include "attnkit/ops/linear.hpp"

#include <algorithm>

#include "attnkit/core/parallel.hpp"

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
  // Below ~2^18 multiply-adds (64 us in wasm) a task costs about what waking a thread does.
  constexpr double kGrain = 1 << 18;
  const int tasks = task_count(static_cast<double>(rows) * in * out, kGrain);
  if (rows >= static_cast<std::size_t>(16 * thread_count())) {
    // Row ranges that start at multiples of 4 (each thread streams all of W through its cache).
    parallel_ranges(rows, 4, tasks, [&](std::size_t r0, std::size_t r1) {
      simd::linear(y + r0 * out, x + r0 * in, r1 - r0, in, out, w, layout, bias, 0, out);
    });
  } else {
    // Few rows (decoding): column ranges that start at multiples of kColumnAlign.
    parallel_ranges(out, simd::kColumnAlign, tasks, [&](std::size_t o0, std::size_t o1) {
      simd::linear(y, x, rows, in, out, w, layout, bias, static_cast<int>(o0), static_cast<int>(o1));
    });
  }
#else
  ref::linear(y, x, rows, in, out, w, layout, bias);
#endif
}

}  // namespace attnkit

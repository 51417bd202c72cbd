#include "attnkit/ops/positional.hpp"

#include <cmath>

namespace attnkit {

std::vector<float> sinusoidal_frequencies(int dim, float base) {
  // PyTorch: torch.exp(torch.arange(0, dim, 2) * -(math.log(base) / dim)). The scalar is a Python
  // float (double) that PyTorch rounds to float32 before the float32 multiply.
  const float step = static_cast<float>(-(std::log(static_cast<double>(base)) / dim));
  std::vector<float> freq(static_cast<std::size_t>(dim / 2));
  for (int k = 0; k < dim / 2; ++k) {
    freq[k] = std::exp(static_cast<float>(2 * k) * step);
  }
  return freq;
}

namespace ref {
void sinusoidal(float* out, const float* freq, int length, int dim, int offset,
                SinusoidalLayout layout) {
  const int half = dim / 2;
  for (int i = 0; i < length; ++i) {
    float* row = out + static_cast<std::size_t>(i) * dim;
    const float p = static_cast<float>(offset + i);
    for (int k = 0; k < half; ++k) {
      const float a = p * freq[k];
      if (layout == SinusoidalLayout::interleaved) {
        row[2 * k] = std::sin(a);
        row[2 * k + 1] = std::cos(a);
      } else {
        row[k] = std::sin(a);
        row[half + k] = std::cos(a);
      }
    }
  }
}
}  // namespace ref

Status check_sinusoidal(const SinusoidalParams& p) {
  Status s = check_integer("length", p.length, 0, kMaxSinusoidalPosition);
  if (!s.ok()) return s;
  s = check_integer("dim", p.dim, 2, kMaxSinusoidalPosition);
  if (!s.ok()) return s;
  if (static_cast<long long>(p.dim) % 2 != 0) {
    return Status::error(Code::invalid_argument, "dim",
                         "dim must be even (sin/cos pairs), got " + show_number(p.dim));
  }
  if (!std::isfinite(p.base) || p.base < 1) {
    return Status::error(Code::out_of_range, "base",
                         "base must be a finite number >= 1, got " + show_number(p.base));
  }
  s = check_integer("offset", p.offset, 0, kMaxSinusoidalPosition);
  if (!s.ok()) return s;
  if (p.offset + p.length > kMaxSinusoidalPosition) {
    return Status::error(Code::out_of_range, "offset",
                         "offset + length must be <= 65536, got " + show_number(p.offset) +
                             " + " + show_number(p.length));
  }
  return check_output_size("length * dim", p.length * p.dim);
}

std::size_t sinusoidal_size(const SinusoidalParams& p) {
  return static_cast<std::size_t>(p.length) * static_cast<std::size_t>(p.dim);
}

Status sinusoidal_positional_encoding(float* out, const SinusoidalParams& p) {
  Status s = check_sinusoidal(p);
  if (!s.ok()) return s;
  const int length = static_cast<int>(p.length), dim = static_cast<int>(p.dim);
  const int offset = static_cast<int>(p.offset);
  const std::vector<float> freq = sinusoidal_frequencies(dim, static_cast<float>(p.base));
#if ATTNKIT_HAVE_SIMD
  simd::sinusoidal(out, freq.data(), length, dim, offset, p.layout);
#else
  ref::sinusoidal(out, freq.data(), length, dim, offset, p.layout);
#endif
  return s;
}

}  // namespace attnkit

// Positional encodings.
#pragma once

#include <cstdint>
#include <vector>

#include "attnkit/core/status.hpp"

namespace attnkit {

enum class SinusoidalLayout : int {
  interleaved = 0,  // Vaswani et al. / the Annotated Transformer: sin on even, cos on odd columns
  split = 1,        // RoFormer / GPT-J: all sines first, then all cosines
};

struct SinusoidalParams {
  double length = 0;      // number of positions (rows); integer in [0, 65536]
  double dim = 0;         // model width (columns); even integer in [2, 65536]
  double base = 10000.0;  // wavelength base; finite, >= 1
  double offset = 0;      // first position; integer, offset + length <= 65536
  SinusoidalLayout layout = SinusoidalLayout::interleaved;
};

// Positions are limited to 2^16: beyond that float32 angles carry almost no fractional bits (the
// table turns to noise in PyTorch too) and the SIMD kernel's range reduction is exact only below.
constexpr double kMaxSinusoidalPosition = 65536.0;

// Sinusoidal positional encoding (Vaswani et al. 2017, section 3.5), PyTorch-exact in float32.
//
//   out: float32 [length, dim], row-major; row i is position p = offset + i.
//   Column pair k in [0, dim/2) uses the frequency w_k = exp(float(2k) * float(-ln(base) / dim))
//   and the angle a = float(p) * w_k, both rounded to float32 exactly as the Annotated
//   Transformer's PositionalEncoding computes them in PyTorch.
//     interleaved: out[i][2k]   = sin(a), out[i][2k+1]       = cos(a)
//     split:       out[i][k]    = sin(a), out[i][dim/2 + k]  = cos(a)
//
// Validates params (Status names the argument) and then fills `out`, which the caller sizes with
// sinusoidal_size(); nothing is written when validation fails. Uses the xsimd kernel in SIMD
// builds (ATTNKIT_HAVE_SIMD) and the scalar reference otherwise.
Status sinusoidal_positional_encoding(float* out, const SinusoidalParams& params);

// Validation alone: ok when params describe a table that sinusoidal_positional_encoding can fill.
Status check_sinusoidal(const SinusoidalParams& params);

// length * dim, for params that passed check_sinusoidal.
std::size_t sinusoidal_size(const SinusoidalParams& params);

// The dim/2 frequencies w_k above (shared by the reference and the kernel).
std::vector<float> sinusoidal_frequencies(int dim, float base);

namespace ref {
// Scalar reference: std::sin / std::cos of each float32 angle. Arguments already validated.
void sinusoidal(float* out, const float* freq, int length, int dim, int offset,
                SinusoidalLayout layout);
}  // namespace ref

namespace simd {
// xsimd kernel, same contract as ref::sinusoidal. Only in SIMD builds.
void sinusoidal(float* out, const float* freq, int length, int dim, int offset,
                SinusoidalLayout layout);
}  // namespace simd

}  // namespace attnkit

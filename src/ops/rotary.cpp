#include "attnkit/ops/rotary.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <string>

namespace attnkit {

namespace {
constexpr double kPi = 3.14159265358979323846;

Status check_finite_at_least(const char* what, double v, double lo) {
  if (!std::isfinite(v) || v < lo) {
    return Status::error(Code::out_of_range, what,
                         std::string(what) + " must be a finite number >= " + show_number(lo) + ", got " + show_number(v));
  }
  return Status::success();
}

// base^(float(2i) / float(rd)) in float32, as torch evaluates it; the inverse frequency is 1 / it.
float frequency_power(double base, int i, int rd) {
  const float e = static_cast<float>(2 * i) / static_cast<float>(rd);
  return static_cast<float>(std::pow(static_cast<double>(static_cast<float>(base)), static_cast<double>(e)));
}
}  // namespace

Status check_rotary(const RotaryConfig& c) {
  Status s = check_integer("headDim", c.head_dim, 2, 4096);
  const double rd = c.rotary_dim == 0 ? c.head_dim : c.rotary_dim;
  if (s.ok()) s = check_integer("rotaryDim", rd, 2, c.head_dim);
  if (s.ok() && std::fmod(rd, 2) != 0) {
    s = Status::error(Code::invalid_argument, "rotaryDim", "rotaryDim must be even, got " + show_number(rd));
  }
  if (s.ok()) s = check_finite_at_least("base", c.base, 1.0000001);
  if (s.ok() && c.layout != RotaryLayout::half && c.layout != RotaryLayout::interleaved) {
    s = Status::error(Code::invalid_argument, "layout", "layout must be 'half' or 'interleaved'");
  }
  if (!s.ok() || c.scaling == RotaryScaling::none) return s;
  if (static_cast<int>(c.scaling) < 0 || static_cast<int>(c.scaling) > 5) {
    return Status::error(Code::invalid_argument, "scaling.type",
                         "scaling.type must be 'linear', 'dynamic', 'yarn', 'llama3' or 'longrope'");
  }
  s = check_finite_at_least("scaling.factor", c.factor, 1);
  if (s.ok() && c.scaling != RotaryScaling::linear) {
    s = check_integer("scaling.originalMaxPositions", c.original_max_positions, 1, 1 << 24);
  }
  if (s.ok() && c.scaling == RotaryScaling::dynamic && rd <= 2) {
    s = Status::error(Code::out_of_range, "rotaryDim", "dynamic scaling needs rotaryDim > 2, got " + show_number(rd));
  }
  if (s.ok() && c.scaling == RotaryScaling::llama3) {
    s = check_finite_at_least("scaling.lowFreqFactor", c.low_freq_factor, 0);
    if (s.ok()) s = check_finite_at_least("scaling.highFreqFactor", c.high_freq_factor, 0);
    if (s.ok() && !(c.high_freq_factor > c.low_freq_factor && c.low_freq_factor > 0)) {
      s = Status::error(Code::out_of_range, "scaling.highFreqFactor",
                        "llama3 scaling needs 0 < lowFreqFactor < highFreqFactor, got " +
                            show_number(c.low_freq_factor) + " and " + show_number(c.high_freq_factor));
    }
  }
  if (s.ok() && c.scaling == RotaryScaling::yarn) {
    s = check_finite_at_least("scaling.betaFast", c.beta_fast, 1e-9);
    if (s.ok()) s = check_finite_at_least("scaling.betaSlow", c.beta_slow, 1e-9);
    if (s.ok() && !std::isnan(c.attention_factor)) s = check_finite_at_least("scaling.attentionFactor", c.attention_factor, 0);
    if (s.ok()) s = check_finite_at_least("scaling.mscale", c.mscale, 0);
    if (s.ok()) s = check_finite_at_least("scaling.mscaleAllDim", c.mscale_all_dim, 0);
  }
  return s;
}

void rotary_frequencies(const RotaryConfig& c, double seq_len, float* inv, float& attention_factor, const float* factors) {
  const int rd = static_cast<int>(c.rotary_dim == 0 ? c.head_dim : c.rotary_dim), half = rd / 2;
  const float factor = static_cast<float>(c.factor);
  attention_factor = 1.f;
  double base = c.base;
  if (c.scaling == RotaryScaling::dynamic && seq_len > c.original_max_positions) {
    base *= std::pow(c.factor * seq_len / c.original_max_positions - (c.factor - 1), rd / (rd - 2.0));
  }
  for (int i = 0; i < half; ++i) inv[i] = 1.0f / frequency_power(base, i, rd);

  switch (c.scaling) {
    case RotaryScaling::none:
    case RotaryScaling::dynamic:
      break;
    case RotaryScaling::longrope: {
      const float* ext = factors ? factors + (seq_len > c.original_max_positions ? half : 0) : nullptr;
      for (int i = 0; i < half; ++i) inv[i] = 1.0f / ((ext ? ext[i] : 1.0f) * frequency_power(c.base, i, rd));
      if (!std::isnan(c.attention_factor)) attention_factor = static_cast<float>(c.attention_factor);
      else if (c.factor > 1) attention_factor = static_cast<float>(std::sqrt(1 + std::log(c.factor) / std::log(c.original_max_positions)));
      break;
    }
    case RotaryScaling::linear:
      for (int i = 0; i < half; ++i) inv[i] /= factor;
      break;
    case RotaryScaling::llama3: {
      const double orig = c.original_max_positions;
      const double low_wavelen = orig / c.low_freq_factor, high_wavelen = orig / c.high_freq_factor;
      for (int i = 0; i < half; ++i) {
        const float wavelen = static_cast<float>(2 * kPi) / inv[i];
        if (wavelen > low_wavelen) {
          inv[i] = inv[i] / factor;
        } else if (!(wavelen < high_wavelen)) {  // medium: interpolate
          const float smooth = static_cast<float>((orig / wavelen - c.low_freq_factor) /
                                                  (c.high_freq_factor - c.low_freq_factor));
          inv[i] = (1 - smooth) * inv[i] / factor + smooth * inv[i];
        }
      }
      break;
    }
    case RotaryScaling::yarn: {
      const auto mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
      if (!std::isnan(c.attention_factor)) {
        attention_factor = static_cast<float>(c.attention_factor);
      } else if (c.mscale != 0 && c.mscale_all_dim != 0) {
        attention_factor = static_cast<float>(mscale(c.factor, c.mscale) / mscale(c.factor, c.mscale_all_dim));
      } else {
        attention_factor = static_cast<float>(mscale(c.factor, 1));
      }
      // The dim whose wavelength makes `rotations` turns over the original context.
      const auto correction_dim = [&](double rotations) {
        return rd * std::log(c.original_max_positions / (rotations * 2 * kPi)) / (2 * std::log(c.base));
      };
      double low = correction_dim(c.beta_fast), high = correction_dim(c.beta_slow);
      if (c.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0);
      high = std::min(high, rd - 1.0);
      if (low == high) high += 0.001;  // as HF: avoids a zero-width ramp
      for (int i = 0; i < half; ++i) {
        const float pos_freq = frequency_power(c.base, i, rd);
        const float extrapolated = 1.0f / pos_freq, interpolated = 1.0f / (factor * pos_freq);
        const float ramp = std::min(1.f, std::max(0.f, static_cast<float>((i - low) / (high - low))));
        const float keep = 1.f - ramp;  // share of the unscaled frequency
        inv[i] = interpolated * (1 - keep) + extrapolated * keep;
      }
      break;
    }
  }
}

void rotary_tables(const RotaryConfig& c, const float* inv, float att, const int32_t* positions, std::size_t count,
                   float* C, float* S) {
  const int rd = static_cast<int>(c.rotary_dim == 0 ? c.head_dim : c.rotary_dim), half = rd / 2;
  for (std::size_t p = 0; p < count; ++p) {
    float* cr = C + p * rd;
    float* sr = S + p * rd;
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(positions[p]) * inv[i];  // float32, as HF's matmul
      const float co = static_cast<float>(std::cos(static_cast<double>(angle))) * att;
      const float si = static_cast<float>(std::sin(static_cast<double>(angle))) * att;
      if (c.layout == RotaryLayout::half) {
        cr[i] = cr[i + half] = co;
        sr[i] = -si;
        sr[i + half] = si;
      } else {
        cr[2 * i] = cr[2 * i + 1] = co;
        sr[2 * i] = -si;
        sr[2 * i + 1] = si;
      }
    }
  }
}

namespace ref {
void rotary_rows(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
                 bool per_batch, const float* C, const float* S, int rd, int d, RotaryLayout layout) {
  const int half = rd / 2;
  std::vector<float> row(static_cast<std::size_t>(d));
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int l = 0; l < length; ++l) {
        const std::size_t t = (per_batch ? static_cast<std::size_t>(b) * length + l : l) * rd;
        const float* xr = x.row(b, h, l);
        for (int i = 0; i < rd; ++i) {
          const int partner = layout == RotaryLayout::half ? (i < half ? i + half : i - half) : (i ^ 1);
          row[i] = xr[i] * C[t + i] + xr[partner] * S[t + i];
        }
        for (int i = rd; i < d; ++i) row[i] = xr[i];
        std::copy(row.begin(), row.end(), out.row(b, h, l));  // via `row`: out may alias x
      }
}
}  // namespace ref

Status check_rotary_positions(const int32_t* positions, std::size_t count, const char* what) {
  for (std::size_t p = 0; p < count; ++p) {
    if (positions[p] < 0 || positions[p] >= (1 << 24)) {
      const std::string at = std::string(what) + "[" + std::to_string(p) + "]";
      return Status::error(Code::out_of_range, at, at + " must be in [0, 16777215], got " + std::to_string(positions[p]));
    }
  }
  return Status::success();
}

Status RotaryTables::build(const RotaryConfig& c, const int32_t* positions, std::size_t count, const float* factors) {
  c_ = c;
  rotary_dim_ = static_cast<int>(c.rotary_dim == 0 ? c.head_dim : c.rotary_dim);
  count_ = count;
  const std::size_t rd = rotary_dim_;
  if (!tables_.reserve(2 * count * rd + rd / 2)) {
    return Status::error(Code::out_of_memory, "positions", "could not allocate the rotary cos/sin tables");
  }
  int32_t max_position = -1;
  for (std::size_t p = 0; p < count; ++p) max_position = std::max(max_position, positions[p]);
  float* C = tables_.data();
  float* S = C + count * rd;
  float* inv = S + count * rd;
  float att = 1;
  rotary_frequencies(c, max_position + 1.0, inv, att, factors);
  rotary_tables(c, inv, att, positions, count, C, S);
  return Status::success();
}

void RotaryTables::apply(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
                         bool per_batch) const {
  const float* C = tables_.data();
  const float* S = C + count_ * rotary_dim_;
#if ATTNKIT_HAVE_SIMD
  simd::rotary_rows(out, x, batch, heads, length, per_batch, C, S, rotary_dim_, static_cast<int>(c_.head_dim), c_.layout);
#else
  ref::rotary_rows(out, x, batch, heads, length, per_batch, C, S, rotary_dim_, static_cast<int>(c_.head_dim), c_.layout);
#endif
}

Status rotary(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
              const int32_t* positions, bool per_batch, const RotaryConfig& c) {
  const std::size_t count = per_batch ? static_cast<std::size_t>(batch) * length : static_cast<std::size_t>(length);
  Status s = check_rotary(c);
  if (s.ok() && c.scaling == RotaryScaling::longrope) {
    s = Status::error(Code::invalid_argument, "scaling.type",
                      "longrope takes its factors from a model (MultiHeadAttention's ropeFactors); the rotary op has none");
  }
  if (s.ok()) s = check_rotary_positions(positions, count, "positions");
  RotaryTables tables;
  if (s.ok()) s = tables.build(c, positions, count);
  if (s.ok()) tables.apply(out, x, batch, heads, length, per_batch);
  return s;
}

}  // namespace attnkit

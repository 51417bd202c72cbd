// Rotary position embedding, RoPE (Su et al. 2021, RoFormer), with the frequency scalings of
// Hugging Face's modeling_rope_utils.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnkit/ops/attention.hpp"
#include "attnkit/core/float_buffer.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

enum class RotaryLayout : int {
  half = 0,         // LLaMA / GPT-NeoX rotate_half: dim k pairs with dim k + rotaryDim/2
  interleaved = 1,  // GPT-J / RoFormer rotate_every_two: dim 2k pairs with dim 2k + 1
};

enum class RotaryScaling : int { none = 0, linear = 1, dynamic = 2, yarn = 3, llama3 = 4, longrope = 5 };

struct RotaryConfig {
  double head_dim = 0;    // the rotated tensor's last dim
  double rotary_dim = 0;  // leading dims rotated (even, <= head_dim; 0 = all); the rest pass through
  double base = 10000;    // rope_theta
  RotaryLayout layout = RotaryLayout::half;
  RotaryScaling scaling = RotaryScaling::none;
  double factor = 1;
  // dynamic: max_position_embeddings; yarn, llama3: original_max_position_embeddings.
  double original_max_positions = 0;
  double low_freq_factor = 1, high_freq_factor = 4;  // llama3
  double beta_fast = 32, beta_slow = 1;              // yarn
  double attention_factor = std::numeric_limits<double>::quiet_NaN();  // yarn; NaN = derived
  double mscale = 0, mscale_all_dim = 0;             // yarn (DeepSeek-style attention factor)
  bool truncate = true;                              // yarn: floor/ceil the correction range
};

Status check_rotary(const RotaryConfig& c);

// The rotary_dim/2 inverse frequencies and the factor cos and sin are multiplied by, as
// Hugging Face computes them in float32:
//   none:    inv[i] = 1 / base^(2i / rd)
//   linear:  inv[i] / factor
//   dynamic: base' = base * (factor * L / orig - (factor - 1))^(rd / (rd - 2)) when the longest
//            sequence L = max position + 1 exceeds orig, else plain
//   yarn:    inv blended between inv / factor and inv by a linear ramp over the dims whose
//            rotation counts fall between beta_fast and beta_slow over orig positions;
//            attention factor 0.1 ln(factor) + 1 (or from mscale / mscale_all_dim, or given)
//   llama3:  wavelengths above orig / low_freq_factor divided by factor, below
//            orig / high_freq_factor kept, smoothly interpolated in between.
//   longrope (Phi-3): inv[i] = 1 / (ext[i] * base^(2i / rd)) with ext the short factors while
//            L <= orig and the long ones past it (`factors`: short then long, rd/2 each);
//            attention factor sqrt(1 + ln(factor) / ln(orig)) (1 when factor <= 1), or given.
// `seq_len` matters for dynamic and longrope; `factors` only for longrope (required there).
void rotary_frequencies(const RotaryConfig& c, double seq_len, float* inv_freq, float& attention_factor,
                        const float* factors = nullptr);

// cos/sin tables for `count` positions, each row rotary_dim wide in the layout's pairing:
//   half:        C = [cos f, cos f],          S = [-sin f, sin f]
//   interleaved: C = [c0, c0, c1, c1, ...],   S = [-s0, s0, -s1, s1, ...]
// so that out[i] = x[i] * C[i] + x[partner(i)] * S[i]; times the attention factor.
void rotary_tables(const RotaryConfig& c, const float* inv_freq, float attention_factor, const int32_t* positions,
                   std::size_t count, float* cos_table, float* sin_table);

// Checks positions[0..count) are in [0, 2^24); errors name `what`[i].
Status check_rotary_positions(const int32_t* positions, std::size_t count, const char* what);

// cos/sin tables for a set of (checked) positions, built once and applied to any number of views:
// a module rotates q and k with the same tables.
class RotaryTables {
 public:
  // c must have passed check_rotary. Fails only with out_of_memory.
  // factors: longrope's short and long factors (rd/2 each), else null.
  Status build(const RotaryConfig& c, const int32_t* positions, std::size_t count, const float* factors = nullptr);
  // Rotates [batch, heads, length, head_dim] views: row (b, h, l) takes position index
  // b * length + l (per_batch) or l. `x` and `out` may be the same view (in place).
  void apply(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
             bool per_batch) const;

 private:
  RotaryConfig c_;
  int rotary_dim_ = 0;
  std::size_t count_ = 0;
  FloatBuffer tables_;  // cos [count][rotary_dim], then sin
};

// The whole op on [batch, heads, length, head_dim] views: row (b, h, l) takes position
// positions[b * length + l] (per_batch) or positions[l]. Validates the config and positions
// (0 <= p < 2^24) and builds the tables; `x` and `out` may be the same view (in place).
Status rotary(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
              const int32_t* positions, bool per_batch, const RotaryConfig& c);

namespace ref {
void rotary_rows(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
                 bool per_batch, const float* cos_table, const float* sin_table, int rotary_dim, int head_dim,
                 RotaryLayout layout);
}
namespace simd {
void rotary_rows(const Heads<float>& out, const Heads<const float>& x, int batch, int heads, int length,
                 bool per_batch, const float* cos_table, const float* sin_table, int rotary_dim, int head_dim,
                 RotaryLayout layout);
}

}  // namespace attnkit

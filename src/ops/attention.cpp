#include "attnkit/ops/attention.hpp"
#include "attnkit/core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace attnkit {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Is key j visible to query i, and what does the mask add? Shared by the reference and the tests'
// understanding of the contract; the SIMD kernel applies the same rules a tile at a time.
inline float mask_term(const MaskView& m, std::size_t row, int j) {
  if (m.kind == MaskKind::boolean) return static_cast<const uint8_t*>(m.data)[row + j] ? 0.f : kNegInf;
  if (m.kind == MaskKind::additive) return static_cast<const float*>(m.data)[row + j];
  return 0.f;
}
}  // namespace

Status check_attention_shape(double batch, double heads, double kv_heads, double q_len, double kv_len,
                             double head_dim, double v_dim, AttentionShape& shape) {
  Status s = check_integer("batch", batch, 1, 1 << 20);
  if (s.ok()) s = check_integer("heads", heads, 1, 4096);
  if (s.ok()) s = check_integer("kvHeads", kv_heads, 1, 4096);
  if (s.ok()) s = check_integer("queryLength", q_len, 0, 1 << 22);
  if (s.ok()) s = check_integer("keyLength", kv_len, 0, 1 << 22);
  if (s.ok()) s = check_integer("headDim", head_dim, 1, 4096);
  if (s.ok()) s = check_integer("valueDim", v_dim, 1, 4096);
  if (!s.ok()) return s;
  if (std::fmod(heads, kv_heads) != 0) {
    return Status::error(Code::shape_mismatch, "k",
                         "the query's head count (" + show_number(heads) +
                             ") must be a multiple of the key/value head count (" + show_number(kv_heads) + ")");
  }
  if (s.ok()) s = check_output_size("q", batch * heads * q_len * head_dim);
  if (s.ok()) s = check_output_size("k", batch * kv_heads * kv_len * head_dim);
  if (s.ok()) s = check_output_size("v", batch * kv_heads * kv_len * v_dim);
  if (s.ok()) s = check_output_size("output", batch * heads * q_len * v_dim);
  if (!s.ok()) return s;
  shape = {static_cast<int>(batch), static_cast<int>(heads), static_cast<int>(kv_heads), static_cast<int>(q_len),
           static_cast<int>(kv_len), static_cast<int>(head_dim), static_cast<int>(v_dim)};
  return s;
}

Status check_attention_mask(MaskKind kind, const double dims[4], double length, const AttentionShape& shape,
                            MaskView& mask) {
  mask = MaskView{};
  if (kind == MaskKind::none) return Status::success();
  if (kind != MaskKind::boolean && kind != MaskKind::additive) {
    return Status::error(Code::invalid_argument, "mask", "mask must be boolean (uint8) or additive (float32)");
  }
  static const char* const names[4] = {"batch", "heads", "queryLength", "keyLength"};
  const double full[4] = {static_cast<double>(shape.batch), static_cast<double>(shape.heads),
                          static_cast<double>(shape.q_len), static_cast<double>(shape.kv_len)};
  double n = 1;
  for (int a = 0; a < 4; ++a) {
    const bool ok = dims[a] == full[a] || (a < 3 && dims[a] == 1);
    if (!ok) {
      return Status::error(Code::shape_mismatch, "mask.dims",
                           "mask dim " + std::to_string(a) + " is " + show_number(dims[a]) + ", expected " +
                               (a < 3 ? "1 or " : "") + show_number(full[a]) + " (" + names[a] +
                               "); masks broadcast to [batch, heads, queryLength, keyLength]");
    }
    n *= dims[a];
  }
  Status s = check_length("mask", length, n, "the product of mask.dims");
  if (!s.ok()) return s;
  mask.kind = kind;
  for (int a = 0; a < 4; ++a) mask.dims[a] = static_cast<int>(dims[a]);
  return s;
}

namespace ref {
void attention(const AttentionArgs& a, float* score, bool exact) {
  // PyTorch's math path, element for element: every score is computed, masks are added (0 or
  // -inf; a boolean 0 or the causal limit adds -inf, as masked_fill into an additive bias does),
  // softmax propagates NaN, and the weighted sum includes zero weights (0 * NaN = NaN, as a matmul).
  // On finite inputs (exact = false) masked keys and zero weights cannot change a result, and
  // are skipped: the scalar build's speed.
  const AttentionShape& s = a.shape;
  const int group = s.heads / s.kv_heads, offset = s.kv_len - s.q_len;
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const int g = h / group;
      for (int i = 0; i < s.q_len; ++i) {
        // q is scaled first, as nn.MultiheadAttention does (scale 0 stays 0 with a huge q.k).
        float* q = score + s.kv_len;
        const float* qr = a.q.row(b, h, i);
        for (int c = 0; c < s.head_dim; ++c) q[c] = qr[c] * a.scale;
        const int p = offset + i;  // this query's position
        const std::size_t mrow = a.mask.row_offset(b, h, i);
        float max = kNegInf;
        bool nan = false;
        for (int j = 0; j < s.kv_len; ++j) {
          if (!exact && ((a.causal && j > p) || (a.mask.kind == MaskKind::boolean && mask_term(a.mask, mrow, j) != 0.f))) {
            score[j] = kNegInf;
            continue;
          }
          const float* k = a.k.row(b, g, j);
          float x = 0;
          for (int c = 0; c < s.head_dim; ++c) x += q[c] * k[c];
          if (a.softcap > 0) x = a.softcap * std::tanh(x / a.softcap);
          if (a.alibi) x += a.alibi[h] * static_cast<float>(j - p);
          x += mask_term(a.mask, mrow, j);
          if (a.causal && j > p) x += kNegInf;
          score[j] = x;
          nan |= std::isnan(x);
          max = std::max(max, x);
        }
        float* out = a.out.row(b, h, i);
        float* w = a.weights ? a.weights + ((static_cast<std::size_t>(b) * s.heads + h) * s.q_len + i) * s.kv_len
                             : nullptr;
        std::fill(out, out + s.v_dim, 0.f);
        if (nan) max = std::numeric_limits<float>::quiet_NaN();
        if (max == kNegInf) {  // every key masked: zeros, not NaN (the documented exception)
          if (w) std::fill(w, w + s.kv_len, 0.f);
          continue;
        }
        float sum = 0;
        for (int j = 0; j < s.kv_len; ++j) sum += score[j] = std::exp(score[j] - max);
        for (int j = 0; j < s.kv_len; ++j) {
          const float wj = score[j] / sum;
          if (w) w[j] = wj;
          if (!exact && wj == 0) continue;
          const float* v = a.v.row(b, g, j);
          for (int c = 0; c < s.v_dim; ++c) out[c] += wj * v[c];
        }
      }
    }
  }
}

void attention(const AttentionArgs& a) {
  std::vector<float> score(static_cast<std::size_t>(a.shape.kv_len) + a.shape.head_dim);
  attention(a, score.data(), true);
}
}  // namespace ref

Status check_attention_scale(double scale) {
  if (!std::isfinite(scale)) {
    return Status::error(Code::invalid_argument, "scale", "scale must be a finite number, got " + show_number(scale));
  }
  return Status::success();
}

namespace ref {
float max_abs(const Heads<const float>& x, int batch, int heads, int length, int n) {
  float m = 0;
  bool finite = true;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < length; ++i) {
        const float* r = x.row(b, h, i);
        for (int c = 0; c < n; ++c) {
          const float v = std::fabs(r[c]);
          finite &= v <= std::numeric_limits<float>::max();  // false for NaN and inf
          m = std::max(m, v);
        }
      }
  return finite ? m : std::numeric_limits<float>::infinity();
}
}  // namespace ref

namespace {
// The input check's scan: the xsimd one in SIMD builds (in wasm the scalar loop cost ~5 % of a
// causal L = 2048 run).
float max_abs(const Heads<const float>& x, int batch, int heads, int length, int n) {
#if ATTNKIT_HAVE_SIMD
  return simd::max_abs(x, batch, heads, length, n);
#else
  return ref::max_abs(x, batch, heads, length, n);
#endif
}
}  // namespace

bool attention_needs_reference(const AttentionArgs& a) {
  const AttentionShape& s = a.shape;
  // Scores and sums stay far from float32's range (3.4e38) below this: then no score overflows,
  // and the tiled kernel's unnormalised output (at most keyLength * max|v|) stays finite too.
  constexpr double kSafe = 1e30;
  const double q = max_abs(a.q, s.batch, s.heads, s.q_len, s.head_dim);
  const double k = max_abs(a.k, s.batch, s.kv_heads, s.kv_len, s.head_dim);
  const double v = max_abs(a.v, s.batch, s.kv_heads, s.kv_len, s.v_dim);
  double bias = 0;
  if (a.alibi)
    for (int h = 0; h < s.heads; ++h) bias += std::fabs(static_cast<double>(a.alibi[h])) * s.kv_len;  // NaN stays NaN
  const double qs = q * std::fabs(a.scale);  // the kernel scales q first: that must stay finite too
  if (!(qs < kSafe && k < kSafe && qs * k * s.head_dim + bias < kSafe && v * std::max(s.kv_len, 1) < kSafe)) return true;
  if (a.mask.kind == MaskKind::additive) {
    // The kernel scales masks by log2(e), saturating at the lowest float. Fine: -inf (masked),
    // values within +-FLT_MAX / log2(e), and the lowest float itself (Hugging Face's finfo.min,
    // whose rows stay a softmax). Anything else (NaN, +inf, other values beyond that range,
    // which saturation would make equal) goes to the reference.
    constexpr float kLowest = std::numeric_limits<float>::lowest(), kRange = 2.3e38f;
    const std::size_t n = static_cast<std::size_t>(a.mask.dims[0]) * a.mask.dims[1] * a.mask.dims[2] * a.mask.dims[3];
    const float* m = static_cast<const float*>(a.mask.data);
    bool bad = false;
    for (std::size_t i = 0; i < n; ++i) {
      const float x = m[i];
      bad |= !((x >= -kRange && x <= kRange) || x == kLowest || x == -std::numeric_limits<float>::infinity());
    }
    if (bad) return true;
  }
  return false;
}

Status attention(const AttentionArgs& a) {
  Status s = check_attention_scale(a.scale);
  if (!s.ok()) return s;
  const bool special = attention_needs_reference(a);
#if ATTNKIT_HAVE_SIMD
  const bool reference = special;
#else
  const bool reference = true;
#endif
  if (reference) {
    float* row = static_cast<float*>(std::malloc(sizeof(float) * (static_cast<std::size_t>(a.shape.kv_len) + a.shape.head_dim)));
    if (!row) return Status::error(Code::out_of_memory, "keyLength", "could not allocate the attention row");
    ref::attention(a, row, special);
    std::free(row);
    return s;
  }
#if ATTNKIT_HAVE_SIMD
  const std::size_t n = attention_scratch_floats(a.shape, a.weights != nullptr, thread_count());
  float* scratch = static_cast<float*>(std::malloc(n * sizeof(float)));
  if (!scratch) {
    return Status::error(Code::out_of_memory, "keyLength",
                         "could not allocate " + show_number(static_cast<double>(n) * 4) +
                             " bytes of attention scratch in the wasm heap");
  }
  simd::attention(a, scratch);
  std::free(scratch);
#endif
  return s;
}

}  // namespace attnkit

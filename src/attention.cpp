#include "attnkit/attention.hpp"

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
void attention(const AttentionArgs& a) {
  const AttentionShape& s = a.shape;
  const int group = s.heads / s.kv_heads, offset = s.kv_len - s.q_len;
  std::vector<float> score(static_cast<std::size_t>(s.kv_len));
  for (int b = 0; b < s.batch; ++b) {
    for (int h = 0; h < s.heads; ++h) {
      const int g = h / group;
      for (int i = 0; i < s.q_len; ++i) {
        const float* q = a.q.row(b, h, i);
        const int p = offset + i;  // this query's position
        const std::size_t mrow = a.mask.row_offset(b, h, i);
        float max = kNegInf;
        for (int j = 0; j < s.kv_len; ++j) {
          float x = kNegInf;
          if (!(a.causal && j > p)) {
            const float* k = a.k.row(b, g, j);
            float dot = 0;
            for (int c = 0; c < s.head_dim; ++c) dot += q[c] * k[c];
            x = dot * a.scale + mask_term(a.mask, mrow, j);
            if (a.alibi) x += a.alibi[h] * static_cast<float>(j - p);
          }
          score[j] = x;
          max = std::max(max, x);
        }
        float* out = a.out.row(b, h, i);
        float* w = a.weights ? a.weights + ((static_cast<std::size_t>(b) * s.heads + h) * s.q_len + i) * s.kv_len
                             : nullptr;
        std::fill(out, out + s.v_dim, 0.f);
        if (max == kNegInf) {  // every key masked: zeros, not NaN
          if (w) std::fill(w, w + s.kv_len, 0.f);
          continue;
        }
        float sum = 0;
        for (int j = 0; j < s.kv_len; ++j) sum += score[j] = std::exp(score[j] - max);
        for (int j = 0; j < s.kv_len; ++j) {
          const float wj = score[j] / sum;
          if (w) w[j] = wj;
          if (wj == 0) continue;
          const float* v = a.v.row(b, g, j);
          for (int c = 0; c < s.v_dim; ++c) out[c] += wj * v[c];
        }
      }
    }
  }
}
}  // namespace ref

Status check_attention_scale(double scale) {
  if (!std::isfinite(scale)) {
    return Status::error(Code::invalid_argument, "scale", "scale must be a finite number, got " + show_number(scale));
  }
  return Status::success();
}

Status attention(const AttentionArgs& a) {
  Status s = check_attention_scale(a.scale);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  const std::size_t n = attention_scratch_floats(a.shape, a.weights != nullptr);
  float* scratch = static_cast<float*>(std::malloc(n * sizeof(float)));
  if (!scratch) {
    return Status::error(Code::out_of_memory, "keyLength",
                         "could not allocate " + show_number(static_cast<double>(n) * 4) +
                             " bytes of attention scratch in the wasm heap");
  }
  simd::attention(a, scratch);
  std::free(scratch);
#else
  ref::attention(a);
#endif
  return s;
}

}  // namespace attnkit

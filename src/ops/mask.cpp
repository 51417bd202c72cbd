#include "attnkit/ops/mask.hpp"

#include <limits>
#include <string>

namespace attnkit {

Status padding_mask(uint8_t* out, const int32_t* ids, std::size_t n, double pad_id) {
  Status s = check_integer("padId", pad_id, -2147483648.0, 2147483647.0);
  if (!s.ok()) return s;
  const int32_t pad = static_cast<int32_t>(pad_id);
  for (std::size_t i = 0; i < n; ++i) out[i] = ids[i] != pad;
  return s;
}

Status padding_mask_from_attention_mask(uint8_t* out, const int32_t* m, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (m[i] != 0 && m[i] != 1) {
      const std::string at = "attentionMask[" + std::to_string(i) + "]";
      return Status::error(Code::invalid_argument, at, at + " must be 0 (padding) or 1 (token), got " + std::to_string(m[i]));
    }
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(m[i]);
  return Status::success();
}

Status check_causal_mask(double q_len, double kv_len) {
  Status s = check_integer("queryLength", q_len, 0, 1 << 20);
  if (s.ok()) s = check_integer("keyLength", kv_len, 0, 1 << 20);
  if (s.ok()) s = check_output_size("queryLength * keyLength", q_len * kv_len);
  return s;
}

void causal_mask(uint8_t* out, int q_len, int kv_len) {
  const long offset = static_cast<long>(kv_len) - q_len;
  for (int i = 0; i < q_len; ++i)
    for (int j = 0; j < kv_len; ++j) out[static_cast<std::size_t>(i) * kv_len + j] = j <= offset + i;
}

Status check_combine_masks(const double a[4], double a_length, const double b[4], double b_length, int out[4]) {
  double na = 1, nb = 1, n = 1;
  for (int k = 0; k < 4; ++k) {
    for (double v : {a[k], b[k]}) {
      Status s = check_integer("mask.dims", v, 1, 1 << 22);
      if (!s.ok()) return s;
    }
    if (a[k] != b[k] && a[k] != 1 && b[k] != 1) {
      return Status::error(Code::shape_mismatch, "b.dims",
                           "masks do not broadcast: dim " + std::to_string(k) + " is " + show_number(a[k]) +
                               " in the first and " + show_number(b[k]) + " in the second (each must be 1 or equal)");
    }
    na *= a[k];
    nb *= b[k];
    out[k] = static_cast<int>(a[k] > b[k] ? a[k] : b[k]);
    n *= out[k];
  }
  Status s = check_length("a", a_length, na, "the product of a.dims");
  if (s.ok()) s = check_length("b", b_length, nb, "the product of b.dims");
  if (s.ok()) s = check_output_size("combined mask", n);
  return s;
}

namespace {
float additive_at(const MaskOperand& m, std::size_t i) {
  if (m.kind == MaskKind::boolean)
    return static_cast<const uint8_t*>(m.data)[i] ? 0.f : -std::numeric_limits<float>::infinity();
  return static_cast<const float*>(m.data)[i];
}

// Index into m for the broadcast position (i0, i1, i2, i3).
std::size_t at(const MaskOperand& m, int i0, int i1, int i2, int i3) {
  const int* d = m.dims;
  return ((static_cast<std::size_t>(d[0] > 1 ? i0 : 0) * d[1] + (d[1] > 1 ? i1 : 0)) * d[2] + (d[2] > 1 ? i2 : 0)) *
             d[3] + (d[3] > 1 ? i3 : 0);
}
}  // namespace

void combine_masks(void* out, const MaskOperand& a, const MaskOperand& b, const int d[4]) {
  const bool both_boolean = a.kind == MaskKind::boolean && b.kind == MaskKind::boolean;
  std::size_t o = 0;
  for (int i0 = 0; i0 < d[0]; ++i0)
    for (int i1 = 0; i1 < d[1]; ++i1)
      for (int i2 = 0; i2 < d[2]; ++i2)
        for (int i3 = 0; i3 < d[3]; ++i3, ++o) {
          const std::size_t ia = at(a, i0, i1, i2, i3), ib = at(b, i0, i1, i2, i3);
          if (both_boolean) {
            static_cast<uint8_t*>(out)[o] =
                static_cast<const uint8_t*>(a.data)[ia] && static_cast<const uint8_t*>(b.data)[ib];
          } else {
            static_cast<float*>(out)[o] = additive_at(a, ia) + additive_at(b, ib);
          }
        }
}

}  // namespace attnkit

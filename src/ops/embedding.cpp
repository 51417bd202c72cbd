#include "attnkit/ops/embedding.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace attnkit {

Status check_ids(const char* what, const int32_t* ids, std::size_t n, int64_t limit) {
  for (std::size_t t = 0; t < n; ++t) {
    if (ids[t] < 0 || ids[t] >= limit) {
      return Status::error(Code::out_of_range, std::string(what) + "[" + std::to_string(t) + "]",
                           std::string(what) + "[" + std::to_string(t) + "] must be in [0, " +
                               std::to_string(limit) + "), got " + std::to_string(ids[t]));
    }
  }
  return Status::success();
}

namespace ref {
void one_hot(float* out, const int32_t* ids, std::size_t n, int depth) {
  for (std::size_t t = 0; t < n; ++t)
    for (int j = 0; j < depth; ++j) out[t * depth + j] = ids[t] == j ? 1.0f : 0.0f;
}

void embedding(float* out, const int32_t* ids, std::size_t n, const float* table, int dim, float scale) {
  for (std::size_t t = 0; t < n; ++t) {
    const float* row = table + static_cast<std::size_t>(ids[t]) * dim;
    for (int i = 0; i < dim; ++i) out[t * dim + i] = row[i] * scale;
  }
}
}  // namespace ref

Status check_one_hot(const int32_t* ids, std::size_t n, double depth) {
  Status s = check_integer("depth", depth, 1, 1 << 24);
  if (!s.ok()) return s;
  s = check_output_size("ids.length * depth", static_cast<double>(n) * depth);
  if (!s.ok()) return s;
  return check_ids("ids", ids, n, static_cast<int64_t>(depth));
}

Status check_embedding(const int32_t* ids, std::size_t n, double vocab, double dim, double scale) {
  Status s = check_integer("vocabSize", vocab, 1, 1 << 28);
  if (!s.ok()) return s;
  s = check_integer("dim", dim, 1, 1 << 20);
  if (!s.ok()) return s;
  if (!std::isfinite(scale)) {
    return Status::error(Code::invalid_argument, "scale", "scale must be finite, got " + show_number(scale));
  }
  s = check_output_size("ids.length * dim", static_cast<double>(n) * dim);
  if (!s.ok()) return s;
  return check_ids("ids", ids, n, static_cast<int64_t>(vocab));
}

Status one_hot(float* out, const int32_t* ids, std::size_t n, int depth) {
  Status s = check_one_hot(ids, n, depth);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  simd::one_hot(out, ids, n, depth);
#else
  ref::one_hot(out, ids, n, depth);
#endif
  return s;
}

Status embedding(float* out, const int32_t* ids, std::size_t n, const float* table, int vocab, int dim,
                 float scale) {
  Status s = check_embedding(ids, n, vocab, dim, scale);
  if (!s.ok()) return s;
#if ATTNKIT_HAVE_SIMD
  simd::embedding(out, ids, n, table, dim, scale);
#else
  ref::embedding(out, ids, n, table, dim, scale);
#endif
  return s;
}

Status embedding_renorm(float* table, int vocab, int dim, const int32_t* ids, std::size_t n,
                        double max_norm, double norm_type) {
  if (!std::isfinite(max_norm) || max_norm <= 0) {
    return Status::error(Code::out_of_range, "maxNorm", "maxNorm must be a finite number > 0, got " + show_number(max_norm));
  }
  if (!(norm_type > 0) || std::isnan(norm_type)) {
    return Status::error(Code::out_of_range, "normType", "normType must be > 0 (Infinity allowed), got " + show_number(norm_type));
  }
  Status s = check_ids("ids", ids, n, vocab);
  if (!s.ok()) return s;
  std::vector<bool> seen(static_cast<std::size_t>(vocab), false);
  for (std::size_t t = 0; t < n; ++t) {
    if (seen[ids[t]]) continue;  // each row once, as torch.embedding_renorm_ does with unique ids
    seen[ids[t]] = true;
    float* row = table + static_cast<std::size_t>(ids[t]) * dim;
    double norm = 0;
    if (std::isinf(norm_type)) {
      for (int i = 0; i < dim; ++i) norm = std::max(norm, std::fabs(static_cast<double>(row[i])));
    } else if (norm_type == 1) {
      for (int i = 0; i < dim; ++i) norm += std::fabs(row[i]);
    } else if (norm_type == 2) {
      for (int i = 0; i < dim; ++i) norm += static_cast<double>(row[i]) * row[i];
      norm = std::sqrt(norm);
    } else {
      for (int i = 0; i < dim; ++i) norm += std::pow(std::fabs(static_cast<double>(row[i])), norm_type);
      norm = std::pow(norm, 1.0 / norm_type);
    }
    if (norm > max_norm) {
      const float f = static_cast<float>(max_norm / (norm + 1e-7));
      for (int i = 0; i < dim; ++i) row[i] *= f;
    }
  }
  return s;
}

Status check_position_ids(double batch, double length, double past) {
  Status s = check_integer("batch", batch, 0, 1 << 24);
  if (!s.ok()) return s;
  s = check_integer("length", length, 0, 1 << 24);
  if (!s.ok()) return s;
  s = check_integer("pastLength", past, 0, 1 << 24);
  if (!s.ok()) return s;
  return check_output_size("batch * length", batch * length);
}

Status position_ids_arange(int32_t* out, int batch, int length, int past) {
  Status s = check_position_ids(batch, length, past);
  if (!s.ok()) return s;
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < length; ++t) out[static_cast<std::size_t>(b) * length + t] = past + t;
  return s;
}

Status position_ids_from_mask(int32_t* out, const int32_t* mask, int batch, int length, int past) {
  Status s = check_position_ids(batch, length, past);
  if (!s.ok()) return s;
  const int total = past + length;
  for (std::size_t i = 0; i < static_cast<std::size_t>(batch) * total; ++i) {
    if (mask[i] != 0 && mask[i] != 1) {
      return Status::error(Code::invalid_argument, "attentionMask[" + std::to_string(i) + "]",
                           "attentionMask[" + std::to_string(i) + "] must be 0 or 1, got " + std::to_string(mask[i]));
    }
  }
  for (int b = 0; b < batch; ++b) {
    const int32_t* m = mask + static_cast<std::size_t>(b) * total;
    int32_t cum = 0;
    for (int t = 0; t < total; ++t) {
      cum += m[t];
      if (t >= past) out[static_cast<std::size_t>(b) * length + (t - past)] = m[t] ? cum - 1 : 1;
    }
  }
  return s;
}

Status position_ids_from_ids(int32_t* out, const int32_t* ids, int batch, int length, int padding_idx,
                             int past) {
  Status s = check_position_ids(batch, length, past);
  if (!s.ok()) return s;
  for (int b = 0; b < batch; ++b) {
    int32_t cum = 0;
    for (int t = 0; t < length; ++t) {
      const std::size_t i = static_cast<std::size_t>(b) * length + t;
      const bool token = ids[i] != padding_idx;
      cum += token;
      out[i] = token ? cum + past + padding_idx : padding_idx;
    }
  }
  return s;
}

}  // namespace attnkit

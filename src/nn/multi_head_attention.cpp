#include "attnkit/nn/multi_head_attention.hpp"

#include "attnkit/ops/norm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "attnkit/ops/alibi.hpp"
#include "attnkit/ops/linear.hpp"

namespace attnkit {

namespace {

const char* weight_name(MhaWeight w) {
  static const char* const names[] = {"qWeight", "kWeight", "vWeight", "inProjWeight", "outWeight",
                                      "qBias",   "kBias",   "vBias",   "inProjBias",   "outBias",
                                      "qNorm",   "kNorm",   "ropeFactors"};
  return names[static_cast<int>(w)];
}

Status oom(const char* what, double floats) {
  return Status::error(Code::out_of_memory, what,
                       "could not allocate " + show_number(floats * 4) + " bytes in the wasm heap for " + what);
}

}  // namespace

Status check_multi_head_attention_config(const MultiHeadAttentionConfig& c) {
  Status s = check_integer("dim", c.dim, 1, 1 << 16);
  if (s.ok()) s = check_integer("numHeads", c.heads, 1, 4096);
  if (s.ok()) s = check_integer("numKvHeads", c.kv_heads, 0, 4096);
  if (s.ok()) s = check_integer("headDim", c.head_dim, 0, 4096);
  if (s.ok()) s = check_integer("kdim", c.kdim, 0, 1 << 16);
  if (s.ok()) s = check_integer("vdim", c.vdim, 0, 1 << 16);
  if (s.ok() && !(std::isfinite(c.softcap) && c.softcap >= 0)) {
    s = Status::error(Code::invalid_argument, "softcap", "softcap must be a finite number >= 0 (0 = none), got " + show_number(c.softcap));
  }
  if (s.ok() && !(std::isfinite(c.qk_norm_eps) && c.qk_norm_eps >= 0)) {
    s = Status::error(Code::invalid_argument, "qkNormEps", "qkNormEps must be a finite number >= 0, got " + show_number(c.qk_norm_eps));
  }
  if (!s.ok()) return s;
  const double kv = c.kv_heads == 0 ? c.heads : c.kv_heads;
  if (std::fmod(c.heads, kv) != 0) {
    return Status::error(Code::invalid_argument, "numKvHeads",
                         "numHeads (" + show_number(c.heads) + ") must be a multiple of numKvHeads (" +
                             show_number(kv) + ")");
  }
  if (c.head_dim == 0 && std::fmod(c.dim, c.heads) != 0) {
    return Status::error(Code::invalid_argument, "dim",
                         "dim (" + show_number(c.dim) + ") must be divisible by numHeads (" + show_number(c.heads) +
                             ") unless headDim is given");
  }
  const double hd = c.head_dim == 0 ? c.dim / c.heads : c.head_dim;
  const double k = c.kdim == 0 ? c.dim : c.kdim, v = c.vdim == 0 ? c.dim : c.vdim;
  s = check_output_size("q/k/v weights", hd * (c.heads * c.dim + kv * (k + v)));
  if (s.ok()) s = check_output_size("outWeight", c.dim * c.heads * hd);
  if (!s.ok()) return s;
  if (c.positional != PositionalBias::none && c.positional != PositionalBias::rotary &&
      c.positional != PositionalBias::alibi) {
    return Status::error(Code::invalid_argument, "positional", "positional must be 'none', 'rotary' or 'alibi'");
  }
  if (c.positional == PositionalBias::rotary) {
    RotaryConfig r = c.rotary;
    r.head_dim = hd;
    s = check_rotary(r);
    if (!s.ok()) return s;
  }
  if (!std::isnan(c.scale)) s = check_attention_scale(c.scale);
  if (s.ok() && c.layout != WeightLayout::out_in && c.layout != WeightLayout::in_out) {
    return Status::error(Code::invalid_argument, "weightLayout", "weightLayout must be 'outIn' or 'inOut'");
  }
  return s;
}

Status MultiHeadAttention::create(const MultiHeadAttentionConfig& config, std::unique_ptr<MultiHeadAttention>& out) {
  Status s = check_multi_head_attention_config(config);
  if (!s.ok()) return s;
  std::unique_ptr<MultiHeadAttention> m(new MultiHeadAttention());
  if (!m) return oom("MultiHeadAttention", 0);
  m->config_ = config;
  m->dim_ = static_cast<int>(config.dim);
  m->heads_ = static_cast<int>(config.heads);
  m->kv_heads_ = static_cast<int>(config.kv_heads == 0 ? config.heads : config.kv_heads);
  m->head_dim_ = static_cast<int>(config.head_dim == 0 ? config.dim / config.heads : config.head_dim);
  m->kdim_ = static_cast<int>(config.kdim == 0 ? config.dim : config.kdim);
  m->vdim_ = static_cast<int>(config.vdim == 0 ? config.dim : config.vdim);
  m->config_.rotary.head_dim = m->head_dim_;
  m->scale_ = static_cast<float>(std::isnan(config.scale) ? 1.0 / std::sqrt(m->head_dim_) : config.scale);
  const std::size_t hd = m->head_dim_, H = m->heads_, G = m->kv_heads_;
  const std::size_t n_in = hd * (H * m->dim_ + G * m->kdim_ + G * m->vdim_), n_bias = hd * (H + 2 * G);
  const std::size_t n_out = static_cast<std::size_t>(m->dim_) * H * hd;
  if (!m->w_in_.assign(n_in, 0.f) || !m->b_in_.assign(n_bias, 0.f) || !m->w_out_.assign(n_out, 0.f) ||
      !m->b_out_.assign(m->dim_, 0.f) || !m->slopes_.assign(H, 0.f) ||
      !m->qk_norm_.assign(config.qk_norm ? 2 * static_cast<std::size_t>(m->head_dim_) : 0, 1.f) ||
      !m->rope_factors_.assign(config.rotary.scaling == RotaryScaling::longrope
                                   ? static_cast<std::size_t>(config.rotary.rotary_dim > 0 ? config.rotary.rotary_dim : m->head_dim_)
                                   : 0, 1.f)) {
    return oom("the attention weights", static_cast<double>(n_in + n_out));
  }
  if (config.positional == PositionalBias::alibi) {
    s = alibi_slopes(m->slopes_.data(), m->heads_);
    if (!s.ok()) return s;
  }
  out = std::move(m);
  return s;
}

Status MultiHeadAttention::weight(MhaWeight which, double length, float*& data, bool check_only) {
  const double hd = head_dim_, H = heads_, G = kv_heads_;
  double expected = 0;
  const char* formula = "";
  float* at = nullptr;
  const bool is_bias = static_cast<int>(which) >= static_cast<int>(MhaWeight::q_bias) &&
                       static_cast<int>(which) <= static_cast<int>(MhaWeight::out_bias);
  if (fused_in_out() && static_cast<int>(which) < 3) {
    return Status::error(Code::invalid_argument, weight_name(which),
                         std::string("with weightLayout 'inOut' q, k and v are one matrix [dim, (numHeads + 2 * "
                                     "numKvHeads) * headDim] (GPT-2's c_attn): set inProjWeight instead of ") +
                             weight_name(which));
  }
  switch (which) {
    case MhaWeight::q: expected = H * hd * dim_, formula = "numHeads * headDim * dim", at = w_in_.data(); break;
    case MhaWeight::k:
      expected = G * hd * kdim_, formula = "numKvHeads * headDim * kdim", at = w_in_.data() + static_cast<std::size_t>(H * hd * dim_);
      break;
    case MhaWeight::v:
      expected = G * hd * vdim_, formula = "numKvHeads * headDim * vdim";
      at = w_in_.data() + static_cast<std::size_t>(H * hd * dim_ + G * hd * kdim_);
      break;
    case MhaWeight::in_proj:
      if (kdim_ != dim_ || vdim_ != dim_) {
        return Status::error(Code::invalid_argument, "inProjWeight",
                             "inProjWeight needs kdim == vdim == dim (got kdim " + std::to_string(kdim_) + ", vdim " +
                                 std::to_string(vdim_) + ", dim " + std::to_string(dim_) +
                                 "); set qWeight, kWeight and vWeight instead");
      }
      expected = (H + 2 * G) * hd * dim_, formula = "(numHeads + 2 * numKvHeads) * headDim * dim", at = w_in_.data();
      break;
    case MhaWeight::out: expected = dim_ * H * hd, formula = "dim * numHeads * headDim", at = w_out_.data(); break;
    case MhaWeight::q_bias: expected = H * hd, formula = "numHeads * headDim", at = b_in_.data(); break;
    case MhaWeight::k_bias: expected = G * hd, formula = "numKvHeads * headDim", at = b_in_.data() + static_cast<std::size_t>(H * hd); break;
    case MhaWeight::v_bias:
      expected = G * hd, formula = "numKvHeads * headDim", at = b_in_.data() + static_cast<std::size_t>((H + G) * hd);
      break;
    case MhaWeight::in_proj_bias: expected = (H + 2 * G) * hd, formula = "(numHeads + 2 * numKvHeads) * headDim", at = b_in_.data(); break;
    case MhaWeight::out_bias: expected = dim_, formula = "dim", at = b_out_.data(); break;
    case MhaWeight::q_norm:
    case MhaWeight::k_norm:
      if (!config_.qk_norm) {
        return Status::error(Code::invalid_argument, weight_name(which),
                             std::string("this module was created without qkNorm; it has no ") + weight_name(which));
      }
      expected = hd, formula = "headDim", at = qk_norm_.data() + (which == MhaWeight::k_norm ? head_dim_ : 0);
      break;
    case MhaWeight::rope_factors:
      if (config_.positional != PositionalBias::rotary || config_.rotary.scaling != RotaryScaling::longrope) {
        return Status::error(Code::invalid_argument, "ropeFactors", "ropeFactors belong to rotary scaling 'longrope'");
      }
      expected = static_cast<double>(rope_factors_.size()), formula = "rotaryDim", at = rope_factors_.data();
      break;
    default: return Status::error(Code::invalid_argument, "weights", "unknown weight");
  }
  const bool has_bias = which == MhaWeight::out_bias ? config_.out_bias : config_.bias;
  if (is_bias && !has_bias) {
    return Status::error(Code::invalid_argument, weight_name(which),
                         std::string("this module was created with ") +
                             (which == MhaWeight::out_bias ? "outBias: false" : "bias: false") + "; it has no " +
                             weight_name(which));
  }
  Status s = check_length(weight_name(which), length, expected, formula);
  if (!s.ok()) return s;
  data = at;
  if (!check_only) {
    if (which == MhaWeight::in_proj) set_[0] = set_[1] = set_[2] = true;
    if (static_cast<int>(which) < 3) set_[static_cast<int>(which)] = true;
    if (which == MhaWeight::out) set_[3] = true;
  }
  return s;
}

Status MultiHeadAttention::prepare(const Inputs& in, std::size_t& out_elements, std::size_t& weight_elements) const {
  static const MhaWeight needed[4] = {MhaWeight::q, MhaWeight::k, MhaWeight::v, MhaWeight::out};
  for (int w = 0; w < 4; ++w)
    if (!set_[w]) {
      return Status::error(Code::invalid_argument, weight_name(needed[w]),
                           std::string(weight_name(needed[w])) + " was never set (call setWeights first)");
    }
  Status s = check_integer("batch", in.batch, 1, 1 << 20);
  if (s.ok()) s = check_integer("queryLength", in.q_len, 0, 1 << 22);
  if (s.ok()) s = check_length("query", in.query_length, in.batch * in.q_len * dim_, "batch * length * dim");
  if (!s.ok()) return s;
  const bool cross = in.key || in.value;
  double total = in.q_len;
  if (cross) {
    if (!in.key || !in.value) {
      const char* missing = in.key ? "value" : "key";
      return Status::error(Code::invalid_argument, missing,
                           std::string("cross-attention needs both key and value; ") + missing + " is missing");
    }
    if (in.use_cache) {
      return Status::error(Code::invalid_argument, "useCache", "the KV cache applies to self-attention only");
    }
    if (config_.positional != PositionalBias::none) {
      return Status::error(Code::invalid_argument, "key",
                           "positional 'rotary' and 'alibi' apply to self-attention; this module cannot take key/value");
    }
    s = check_integer("keyLength", in.kv_len, 0, 1 << 22);
    if (s.ok()) s = check_length("key", in.key_length, in.batch * in.kv_len * kdim_, "batch * keyLength * kdim");
    if (s.ok()) s = check_length("value", in.value_length, in.batch * in.kv_len * vdim_, "batch * keyLength * vdim");
    if (!s.ok()) return s;
    if (fused_in_out()) {
      return Status::error(Code::invalid_argument, "key",
                           "with weightLayout 'inOut' and kdim == vdim == dim the projections are one fused matrix "
                           "(GPT-2's c_attn), which serves self-attention only");
    }
    total = in.kv_len;
  } else if (kdim_ != dim_ || vdim_ != dim_) {
    return Status::error(Code::invalid_argument, "key",
                         "this module has kdim/vdim different from dim, so key and value inputs are required");
  }
  if (in.use_cache) {
    if (cache_length_ > 0 && cache_batch_ != in.batch) {
      return Status::error(Code::shape_mismatch, "batch",
                           "the KV cache holds batch " + std::to_string(cache_batch_) + ", got batch " +
                               show_number(in.batch) + " (call resetCache() to start over)");
    }
    if (cache_length_ + in.q_len > cache_limit_) {
      return Status::error(Code::out_of_range, "useCache",
                           "the KV cache holds at most " + std::to_string(cache_limit_) + " positions; it has " +
                               std::to_string(cache_length_) + " and this call adds " + show_number(in.q_len) +
                               " (call resetCache() to start over)");
    }
    total += cache_length_;
  }
  AttentionShape shape;
  s = check_attention_shape(in.batch, heads_, kv_heads_, in.q_len, total, head_dim_, head_dim_, shape);
  MaskView mask;
  if (s.ok()) s = check_attention_mask(in.mask_kind, in.mask_dims, in.mask_length, shape, mask);
  if (s.ok() && in.want_weights) s = check_output_size("weights", in.batch * heads_ * in.q_len * total);
  if (s.ok()) s = check_output_size("output", in.batch * in.q_len * dim_);
  if (!s.ok()) return s;
  if (config_.positional == PositionalBias::rotary) {
    const double past = in.use_cache ? cache_length_ : 0;
    if (in.positions) {
      if (in.positions_length != in.q_len && in.positions_length != in.batch * in.q_len) {
        return Status::error(Code::shape_mismatch, "positionIds",
                             "positionIds has " + show_number(in.positions_length) + " elements, expected length = " +
                                 show_number(in.q_len) + " or batch * length = " + show_number(in.batch * in.q_len));
      }
      s = check_rotary_positions(in.positions, static_cast<std::size_t>(in.positions_length), "positionIds");
      if (!s.ok()) return s;
    } else if (past + in.q_len > (1 << 24)) {
      return Status::error(Code::out_of_range, "queryLength", "positions past 2^24 are not supported");
    }
  }
  out_elements = static_cast<std::size_t>(in.batch * in.q_len * dim_);
  weight_elements = in.want_weights ? static_cast<std::size_t>(in.batch * heads_ * in.q_len * total) : 0;
  return s;
}

Status MultiHeadAttention::ensure_cache(int batch, int needed) {
  const std::size_t per_row = static_cast<std::size_t>(head_dim_);
  if (cache_length_ == 0) {
    // Empty: the storage may be laid out again for this batch ([batch, kv_heads, capacity, head_dim]).
    cache_batch_ = batch;
    const std::size_t per_position = static_cast<std::size_t>(batch) * kv_heads_ * per_row;
    cache_capacity_ = k_cache_.data() ? static_cast<int>(std::min<std::size_t>(k_cache_.size() / per_position, cache_limit_)) : 0;
  }
  if (needed <= cache_capacity_) return Status::success();
  const int capacity = std::max(needed, std::min(std::max(2 * cache_capacity_, 64), cache_limit_));
  const std::size_t n = static_cast<std::size_t>(batch) * kv_heads_ * capacity * per_row;
  FloatBuffer k, v;
  if (!k.reserve(n) || !v.reserve(n)) return oom("the KV cache", 2.0 * n);
  for (int b = 0; b < batch && cache_length_ > 0; ++b)
    for (int g = 0; g < kv_heads_; ++g) {
      const std::size_t from = (static_cast<std::size_t>(b) * kv_heads_ + g) * cache_capacity_ * per_row;
      const std::size_t to = (static_cast<std::size_t>(b) * kv_heads_ + g) * capacity * per_row;
      std::memcpy(k.data() + to, k_cache_.data() + from, cache_length_ * per_row * sizeof(float));
      std::memcpy(v.data() + to, v_cache_.data() + from, cache_length_ * per_row * sizeof(float));
    }
  k_cache_ = std::move(k);
  v_cache_ = std::move(v);
  cache_capacity_ = capacity;
  return Status::success();
}

void MultiHeadAttention::drop_cache_front(int n) {
  if (n <= 0) return;
  if (n >= cache_length_) {
    cache_length_ = 0;
    return;
  }
  const std::size_t hd = head_dim_, keep = static_cast<std::size_t>(cache_length_ - n) * hd;
  for (int bg = 0; bg < cache_batch_ * kv_heads_; ++bg) {
    const std::size_t at = static_cast<std::size_t>(bg) * cache_capacity_ * hd;
    std::memmove(k_cache_.data() + at, k_cache_.data() + at + n * hd, keep * sizeof(float));
    std::memmove(v_cache_.data() + at, v_cache_.data() + at + n * hd, keep * sizeof(float));
  }
  cache_length_ -= n;
}

void MultiHeadAttention::read_cache(bool values, float* out) const {
  const FloatBuffer& from = values ? v_cache_ : k_cache_;
  const std::size_t row = static_cast<std::size_t>(cache_length_) * head_dim_;
  for (int bg = 0; bg < cache_batch() * kv_heads_; ++bg)
    std::memcpy(out + bg * row, from.data() + static_cast<std::size_t>(bg) * cache_capacity_ * head_dim_, row * sizeof(float));
}

Status MultiHeadAttention::write_cache(const float* k, const float* v, int batch, int length) {
  if (batch < 1 || length < 0 || length > cache_limit_) {
    return Status::error(Code::invalid_argument, "pastKeyValues",
                         "a cache of " + std::to_string(length) + " positions for a batch of " + std::to_string(batch) +
                             " (the limit is " + std::to_string(cache_limit_) + " positions)");
  }
  reset_cache();
  if (length == 0) return Status::success();
  Status s = ensure_cache(batch, length);
  if (!s.ok()) {
    reset_cache();
    return s;
  }
  const std::size_t row = static_cast<std::size_t>(length) * head_dim_;
  for (int bg = 0; bg < batch * kv_heads_; ++bg) {
    const std::size_t to = static_cast<std::size_t>(bg) * cache_capacity_ * head_dim_;
    std::memcpy(k_cache_.data() + to, k + bg * row, row * sizeof(float));
    std::memcpy(v_cache_.data() + to, v + bg * row, row * sizeof(float));
  }
  cache_length_ = length;
  return Status::success();
}

Status MultiHeadAttention::run(float* out, float* weights, const Inputs& in) {
  const int B = static_cast<int>(in.batch), Lq = static_cast<int>(in.q_len);
  const bool cross = in.key != nullptr;
  const int Lk_new = cross ? static_cast<int>(in.kv_len) : Lq;
  const std::size_t hd = head_dim_, H = heads_, G = kv_heads_;
  const std::size_t rows = static_cast<std::size_t>(B) * Lq, kv_rows = static_cast<std::size_t>(B) * Lk_new;
  const std::size_t n_qkv = (H + 2 * G) * hd;

  // Scratch: projections (self: one [rows, n_qkv] product; cross: q, k, v apart) and the context.
  const std::size_t need = cross ? rows * H * hd + 2 * kv_rows * G * hd + rows * H * hd : rows * n_qkv + rows * H * hd;
  if (!scratch_.reserve(need)) return oom("attention scratch", static_cast<double>(need));
  const int past = in.use_cache ? cache_length_ : 0;
  if (in.use_cache) {
    Status s = ensure_cache(B, past + Lq);
    if (!s.ok()) return s;
  }

  float* sc = scratch_.data();
  Heads<float> q, k, v;
  float* ctx;
  if (!cross) {
    linear(sc, in.query, rows, dim_, static_cast<int>(n_qkv), w_in_.data(), config_.layout,
           config_.bias ? b_in_.data() : nullptr);
    q = {sc, Lq * n_qkv, hd, n_qkv};
    k = {sc + H * hd, Lq * n_qkv, hd, n_qkv};
    v = {sc + (H + G) * hd, Lq * n_qkv, hd, n_qkv};
    ctx = sc + rows * n_qkv;
  } else {
    float* qd = sc;
    float* kd = qd + rows * H * hd;
    float* vd = kd + kv_rows * G * hd;
    const float* wk = w_in_.data() + H * hd * dim_;
    const float* wv = wk + G * hd * kdim_;
    const bool b = config_.bias;
    linear(qd, in.query, rows, dim_, static_cast<int>(H * hd), w_in_.data(), config_.layout, b ? b_in_.data() : nullptr);
    linear(kd, in.key, kv_rows, kdim_, static_cast<int>(G * hd), wk, config_.layout, b ? b_in_.data() + H * hd : nullptr);
    linear(vd, in.value, kv_rows, vdim_, static_cast<int>(G * hd), wv, config_.layout,
           b ? b_in_.data() + (H + G) * hd : nullptr);
    q = {qd, Lq * H * hd, hd, H * hd};
    k = {kd, Lk_new * G * hd, hd, G * hd};
    v = {vd, Lk_new * G * hd, hd, G * hd};
    ctx = vd + kv_rows * G * hd;
  }

  if (config_.qk_norm) {
    // Each head's query and key rows, normalised in place over head_dim (rows are strided).
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < Lq; ++i) {
        for (std::size_t h = 0; h < H; ++h) {
          float* r = q.row(b, static_cast<int>(h), i);
          rms_norm(r, r, 1, static_cast<int>(hd), qk_norm_.data(), config_.qk_norm_eps);
        }
        for (std::size_t g = 0; g < G; ++g) {
          float* r = k.row(b, static_cast<int>(g), i);
          rms_norm(r, r, 1, static_cast<int>(hd), qk_norm_.data() + hd, config_.qk_norm_eps);
        }
      }
  }
  if (config_.positional == PositionalBias::rotary) {
    std::vector<int32_t> arange;
    const int32_t* pos = in.positions;
    if (!pos) {
      arange.resize(Lq);
      for (int i = 0; i < Lq; ++i) arange[i] = past + i;
      pos = arange.data();
    }
    const bool per_batch = in.positions && in.positions_length == in.batch * in.q_len && B > 1;
    // One set of tables for q and k.
    Status s = rotary_tables_.build(config_.rotary, pos, per_batch ? static_cast<std::size_t>(B) * Lq : Lq,
                                    rope_factors_.size() ? rope_factors_.data() : nullptr);
    if (!s.ok()) return s;
    rotary_tables_.apply(q, as_const(q), B, heads_, Lq, per_batch);
    rotary_tables_.apply(k, as_const(k), B, kv_heads_, Lq, per_batch);
  }

  AttentionArgs a;
  int Lk = Lk_new;
  if (in.use_cache) {
    // Append this call's keys and values, then attend over the whole cache.
    const std::size_t cap = cache_capacity_;
    for (int b = 0; b < B; ++b)
      for (std::size_t g = 0; g < G; ++g)
        for (int i = 0; i < Lq; ++i) {
          const std::size_t at = ((b * G + g) * cap + past + i) * hd;
          std::memcpy(k_cache_.data() + at, k.row(b, static_cast<int>(g), i), hd * sizeof(float));
          std::memcpy(v_cache_.data() + at, v.row(b, static_cast<int>(g), i), hd * sizeof(float));
        }
    cache_length_ = past + Lq;
    Lk = cache_length_;
    a.k = {k_cache_.data(), G * cap * hd, cap * hd, hd};
    a.v = {v_cache_.data(), G * cap * hd, cap * hd, hd};
  } else {
    a.k = as_const(k);
    a.v = as_const(v);
  }
  a.shape = {B, heads_, kv_heads_, Lq, Lk, head_dim_, head_dim_};
  a.q = as_const(q);
  a.out = {ctx, Lq * H * hd, hd, H * hd};
  a.weights = weights;
  if (in.mask_kind != MaskKind::none) {
    a.mask.kind = in.mask_kind;
    a.mask.data = in.mask;
    for (int d = 0; d < 4; ++d) a.mask.dims[d] = static_cast<int>(in.mask_dims[d]);
  }
  a.scale = scale_;
  a.softcap = static_cast<float>(config_.softcap);
  a.causal = in.causal;
  a.alibi = config_.positional == PositionalBias::alibi ? slopes_.data() : nullptr;
  Status s = attention(a);
  if (!s.ok()) {
    if (in.use_cache) cache_length_ = past;
    return s;
  }
  linear(out, ctx, rows, static_cast<int>(H * hd), dim_, w_out_.data(), config_.layout,
         config_.out_bias ? b_out_.data() : nullptr);
  return s;
}

}  // namespace attnkit

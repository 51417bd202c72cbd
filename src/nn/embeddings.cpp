#include "attnkit/nn/embeddings.hpp"

#include <cmath>
#include <string>

#include "attnkit/ops/embedding.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/ops/norm.hpp"
#include "attnkit/core/parallel.hpp"

namespace attnkit {

namespace ref {
void embeddings_rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions,
                     const int32_t* types, std::size_t n) {
  const std::size_t dim = static_cast<std::size_t>(w.dim);
  for (std::size_t t = 0; t < n; ++t) {
    float* y = out + t * dim;
    const float* word = w.word + ids[t] * dim;
    for (std::size_t i = 0; i < dim; ++i) y[i] = word[i] * w.scale;
    if (w.token_type) {  // the order of BertEmbeddings: (word + token type) + position
      const float* type = w.token_type + (types ? types[t] : 0) * dim;
      for (std::size_t i = 0; i < dim; ++i) y[i] += type[i];
    }
    if (w.position) {
      const float* pos = w.position + positions[t] * dim;
      for (std::size_t i = 0; i < dim; ++i) y[i] += pos[i];
    }
  }
  if (w.norm == NormKind::layer_norm) ref::layer_norm(out, out, n, w.dim, w.gamma, w.beta, w.eps);
  if (w.norm == NormKind::rms_norm) ref::rms_norm(out, out, n, w.dim, w.gamma, w.eps);
}
}  // namespace ref

Status check_embeddings_config(const EmbeddingsConfig& c) {
  Status s = check_integer("vocabSize", c.vocab_size, 1, 1 << 28);
  if (s.ok()) s = check_integer("dim", c.dim, 1, 1 << 16);
  if (s.ok()) s = check_output_size("vocabSize * dim", c.vocab_size * c.dim);
  if (s.ok()) s = check_integer("typeVocabSize", c.type_vocab_size, 0, 1 << 16);
  if (s.ok()) s = check_output_size("typeVocabSize * dim", c.type_vocab_size * c.dim);
  if (s.ok() && c.positional != PositionKind::none) s = check_integer("maxPositions", c.max_positions, 1, 1 << 20);
  if (s.ok() && c.positional != PositionKind::none) s = check_output_size("maxPositions * dim", c.max_positions * c.dim);
  if (s.ok() && c.positional == PositionKind::sinusoidal) {
    SinusoidalParams p{c.max_positions, c.dim, c.sinusoidal_base, 0, c.sinusoidal_layout};
    s = check_sinusoidal(p);
  }
  if (s.ok() && !std::isfinite(c.scale)) {
    s = Status::error(Code::invalid_argument, "scale", "scale must be finite, got " + show_number(c.scale));
  }
  if (s.ok() && c.padding_idx != -1) s = check_integer("paddingIdx", c.padding_idx, 0, c.vocab_size - 1);
  if (s.ok() && c.norm != NormKind::none) s = check_norm(0, c.dim, c.eps);
  return s;
}

Status Embeddings::create(const EmbeddingsConfig& config, std::unique_ptr<Embeddings>& out) {
  Status s = check_embeddings_config(config);
  if (!s.ok()) return s;
  std::unique_ptr<Embeddings> e(new Embeddings());
  const std::size_t dim = static_cast<std::size_t>(config.dim);
  const bool positions = config.positional != PositionKind::none;
  const double floats = (config.vocab_size + (positions ? config.max_positions : 0) + config.type_vocab_size + 2) * config.dim;
  if (!e) return Status::error(Code::out_of_memory, "Embeddings", "could not allocate the Embeddings module");
  e->config_ = config;
  e->dim_ = static_cast<int>(config.dim);
  const bool ok = e->word_.assign(static_cast<std::size_t>(config.vocab_size) * dim, 0.0f) &&
                  (!positions || e->position_.assign(static_cast<std::size_t>(config.max_positions) * dim, 0.0f)) &&
                  e->token_type_.assign(static_cast<std::size_t>(config.type_vocab_size) * dim, 0.0f) &&
                  (config.norm == NormKind::none || e->gamma_.assign(dim, 1.0f)) &&
                  (config.norm != NormKind::layer_norm || e->beta_.assign(dim, 0.0f));
  if (!ok) {
    return Status::error(Code::out_of_memory, "vocabSize",
                         "could not allocate the embedding tables (" + show_number(4 * floats) + " bytes of float32)");
  }
  if (config.positional == PositionKind::sinusoidal) {
    SinusoidalParams p{config.max_positions, config.dim, config.sinusoidal_base, 0, config.sinusoidal_layout};
    s = sinusoidal_positional_encoding(e->position_.data(), p);
    if (!s.ok()) return s;
    e->position_set_ = true;
  }
  out = std::move(e);
  return s;
}

namespace {
const char* weight_name(EmbeddingsWeight w) {
  switch (w) {
    case EmbeddingsWeight::word: return "word";
    case EmbeddingsWeight::position: return "position";
    case EmbeddingsWeight::token_type: return "tokenType";
    case EmbeddingsWeight::gamma: return "normWeight";
    case EmbeddingsWeight::beta: return "normBias";
  }
  return "?";
}
}  // namespace

Status Embeddings::weight(EmbeddingsWeight which, double length, float*& data, bool check_only) {
  FloatBuffer* storage = nullptr;
  bool* set = nullptr;
  const char* name = weight_name(which);
  const char* shape = "";
  switch (which) {
    case EmbeddingsWeight::word: storage = &word_; set = &word_set_; shape = "vocabSize * dim"; break;
    case EmbeddingsWeight::position:
      if (config_.positional == PositionKind::sinusoidal) {
        return Status::error(Code::invalid_argument, name,
                             "position weights are computed for positional: 'sinusoidal'; use 'learned' to set them");
      }
      storage = &position_; set = &position_set_; shape = "maxPositions * dim"; break;
    case EmbeddingsWeight::token_type: storage = &token_type_; set = &token_type_set_; shape = "typeVocabSize * dim"; break;
    case EmbeddingsWeight::gamma: storage = &gamma_; shape = "dim"; break;
    case EmbeddingsWeight::beta: storage = &beta_; shape = "dim"; break;
  }
  if (storage->empty()) {
    return Status::error(Code::invalid_argument, name,
                         std::string("this module has no ") + name + " weight (see its positional, typeVocabSize and norm options)");
  }
  Status s = check_length(name, length, static_cast<double>(storage->size()), shape);
  if (!s.ok() || check_only) return s;
  if (set) *set = true;
  data = storage->data();
  return s;
}

std::size_t Embeddings::output_size(const Inputs& in) const {
  return static_cast<std::size_t>(in.batch * in.length) * static_cast<std::size_t>(dim_);
}

Status Embeddings::check_forward(const Inputs& in) const {
  if (!word_set_) return Status::error(Code::invalid_argument, "word", "word embeddings are not set: call setWeights({ word }) first");
  if (!position_.empty() && !position_set_) {
    return Status::error(Code::invalid_argument, "position", "position embeddings are not set: call setWeights({ position }) first");
  }
  if (!token_type_.empty() && !token_type_set_) {
    return Status::error(Code::invalid_argument, "tokenType", "token-type embeddings are not set: call setWeights({ tokenType }) first");
  }
  Status s = check_position_ids(in.batch, in.length, in.past);
  if (s.ok()) s = check_output_size("batch * length * dim", in.batch * in.length * dim_);
  if (!s.ok()) return s;
  const std::size_t n = static_cast<std::size_t>(in.batch * in.length);
  s = check_ids("inputIds", in.ids, n, static_cast<int64_t>(config_.vocab_size));
  if (!s.ok()) return s;
  if (in.types) {
    s = check_length("tokenTypeIds", in.types_length, static_cast<double>(n), "batch * length");
    if (!s.ok()) return s;
    if (token_type_.empty()) {
      return Status::error(Code::invalid_argument, "tokenTypeIds", "tokenTypeIds given but the module has typeVocabSize 0");
    }
    s = check_ids("tokenTypeIds", in.types, n, static_cast<int64_t>(config_.type_vocab_size));
    if (!s.ok()) return s;
  }
  if (in.mask) {
    s = check_length("attentionMask", in.mask_length, in.batch * (in.past + in.length), "batch * (pastLength + length)");
    if (!s.ok()) return s;
  }
  if (position_.empty()) return s;
  const int64_t limit = static_cast<int64_t>(config_.max_positions);
  if (in.positions) {
    if (in.positions_length != static_cast<double>(n) && in.positions_length != in.length) {
      return Status::error(Code::shape_mismatch, "positionIds",
                           "positionIds has " + show_number(in.positions_length) +
                               " elements, expected batch * length = " + std::to_string(n) +
                               " or length = " + show_number(in.length));
    }
    return check_ids("positionIds", in.positions, static_cast<std::size_t>(in.positions_length), limit);
  }
  // Derived positions: the largest one must fit the table. From a mask it is at most past + length - 1.
  if (in.past + in.length > limit) {
    return Status::error(Code::out_of_range, "length",
                         "pastLength + length = " + show_number(in.past + in.length) +
                             " positions do not fit maxPositions = " + std::to_string(limit));
  }
  return s;
}

Status Embeddings::prepare(const Inputs& in) {
  Status s = check_forward(in);
  if (!s.ok() || position_.empty()) return s;
  const int b = static_cast<int>(in.batch), l = static_cast<int>(in.length), p = static_cast<int>(in.past);
  if (!positions_.resize(static_cast<std::size_t>(b) * l)) {
    return Status::error(Code::out_of_memory, "inputIds", "could not allocate the position ids");
  }
  if (in.positions) {
    const bool shared = in.positions_length != static_cast<double>(positions_.size());
    for (std::size_t r = 0; r < positions_.size(); ++r) positions_.data()[r] = in.positions[shared ? r % l : r];
    return s;
  }
  s = in.mask ? position_ids_from_mask(positions_.data(), in.mask, b, l, p)
             : position_ids_arange(positions_.data(), b, l, p);
  // Padding gets position 1, which a one-row table lacks.
  if (s.ok()) s = check_ids("positionIds", positions_.data(), positions_.size(), static_cast<int64_t>(config_.max_positions));
  return s;
}

EmbeddingsView Embeddings::view() const {
  return {word_.data(),
          position_.empty() ? nullptr : position_.data(),
          token_type_.empty() ? nullptr : token_type_.data(),
          gamma_.empty() ? nullptr : gamma_.data(),
          beta_.empty() ? nullptr : beta_.data(),
          dim_,
          static_cast<float>(config_.scale),
          config_.norm,
          static_cast<float>(config_.eps)};
}

void Embeddings::run(float* out, const Inputs& in, bool reference) const {
  const std::size_t n = static_cast<std::size_t>(in.batch * in.length);
#if ATTNKIT_HAVE_SIMD
  if (!reference) {
    // Rows are independent: ranges of rows on the pool for large batches (a gather, sums and the
    // norm: a few passes over each element).
    constexpr double kGrain = 1 << 16;
    const EmbeddingsView w = view();
    const int32_t* positions = positions_.data();
    parallel_ranges(n, 1, task_count(static_cast<double>(n) * dim_, kGrain),
                    [&](std::size_t r0, std::size_t r1) {
                      simd::embeddings_rows(out + r0 * dim_, w, in.ids + r0, positions + r0, in.types ? in.types + r0 : nullptr,
                                            r1 - r0);
                    });
    return;
  }
#else
  (void)reference;  // the scalar build has only the reference kernel
#endif
  ref::embeddings_rows(out, view(), in.ids, positions_.data(), in.types, n);
}

Status Embeddings::forward(float* out, const Inputs& in) {
  Status s = prepare(in);
  if (s.ok()) run(out, in);
  return s;
}

Status Embeddings::forward_reference(float* out, const Inputs& in) {
  Status s = prepare(in);
  if (s.ok()) run(out, in, true);
  return s;
}

Status Embeddings::check_logits(double rows, double x_length) const {
  Status s = check_linear(rows, dim_, config_.vocab_size);
  if (s.ok() && x_length != rows * dim_) {
    s = Status::error(Code::shape_mismatch, "x",
                      "x has " + std::to_string(static_cast<long long>(x_length)) +
                          " elements, expected rows * dim = " + std::to_string(static_cast<long long>(rows * dim_)));
  }
  return s;
}

void Embeddings::logits(float* y, const float* x, std::size_t rows) const {
  linear(y, x, rows, dim_, static_cast<int>(config_.vocab_size), word_.data(), WeightLayout::out_in, nullptr);
}

}  // namespace attnkit

#include "attnkit/models/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "attnkit/ops/embedding.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/ops/mask.hpp"
#include "attnkit/ops/norm.hpp"

namespace attnkit {

namespace {

std::size_t sz(double v) { return static_cast<std::size_t>(v); }

}  // namespace

Status check_model_config(const ModelConfig& c) {
  Status s = check_embeddings_config(c.embeddings);
  if (s.ok()) s = check_encoder_layer_config(c.layer);
  if (s.ok()) s = check_integer("numLayers", c.num_layers, 1, kMaxModelLayers);
  if (s.ok()) s = check_integer("contextSize", c.context_size, 1, 1 << 24);
  if (s.ok()) s = check_integer("window", c.window, 0, 1 << 24);
  if (s.ok()) s = check_integer("windowEvery", c.window_every, 0, kMaxModelLayers);
  if (s.ok() && c.window_every > 0) s = check_integer("windowGlobal", c.window_global, 0, c.window_every - 1);
  if (s.ok() && !(c.local_rope_base == 0 || (std::isfinite(c.local_rope_base) && c.local_rope_base > 1))) {
    s = Status::error(Code::invalid_argument, "localRopeBase", "localRopeBase must be 0 (none) or a finite number above 1");
  }
  if (s.ok() && !(std::isfinite(c.final_logit_softcap) && c.final_logit_softcap >= 0)) {
    s = Status::error(Code::invalid_argument, "finalLogitSoftcap", "finalLogitSoftcap must be a finite number >= 0");
  }
  if (!s.ok()) return s;
  if (c.embeddings.dim != c.layer.attention.dim) {
    return Status::error(Code::invalid_argument, "dim", "the embeddings' dim (" + show_number(c.embeddings.dim) +
                                                             ") must equal the layers' (" + show_number(c.layer.attention.dim) + ")");
  }
  const int pos = static_cast<int>(c.position_ids), scale = static_cast<int>(c.layer_scale);
  const int fin = static_cast<int>(c.final_norm), head = static_cast<int>(c.lm_head);
  if (pos < 0 || pos > 1) return Status::error(Code::invalid_argument, "positionIds", "positionIds must be 'arange' or 'padding'");
  if (scale < 0 || scale > 1) return Status::error(Code::invalid_argument, "layerScale", "unknown layerScale");
  if (fin < 0 || fin > 2) return Status::error(Code::invalid_argument, "finalNorm", "unknown finalNorm");
  if (head < 0 || head > 2) return Status::error(Code::invalid_argument, "lmHead", "unknown lmHead");
  if (c.position_ids == PositionIdsRule::padding &&
      (c.embeddings.padding_idx < 0 || c.embeddings.padding_idx != std::floor(c.embeddings.padding_idx))) {
    return Status::error(Code::invalid_argument, "paddingIdx", "positionIds 'padding' needs an integer paddingIdx >= 0");
  }
  const int task = static_cast<int>(c.task_head), pool = static_cast<int>(c.head_pool);
  const int dense = static_cast<int>(c.head_dense), act = static_cast<int>(c.head_activation);
  if (task < 0 || task > 3) return Status::error(Code::invalid_argument, "taskHead", "unknown taskHead");
  if (pool < 0 || pool > 2 || dense < 0 || dense > 2 || act < 0 || act > 3) {
    return Status::error(Code::invalid_argument, "taskHead", "unknown head pooling, dense or activation");
  }
  if (c.task_head != TaskHead::none) {
    s = check_integer("numLabels", c.num_labels, 1, 1 << 20);
    if (s.ok() && c.task_head == TaskHead::span && c.num_labels != 2) {
      s = Status::error(Code::invalid_argument, "numLabels", "a question-answering head has 2 labels (start, end), got " +
                                                                 show_number(c.num_labels));
    }
    if (s.ok()) s = check_integer("padTokenId", c.pad_token_id, -1, 2147483647.0);
    if (!s.ok()) return s;
  }
  if (c.final_norm != NormKind::none) return check_norm(0, c.embeddings.dim, c.final_eps);
  return s;
}

Status Model::create(const ModelConfig& config, std::unique_ptr<Model>& out) {
  Status s = check_model_config(config);
  if (!s.ok()) return s;
  std::unique_ptr<Model> m(new Model());
  if (!m) return Status::error(Code::out_of_memory, "Model", "could not allocate the model");
  m->config_ = config;
  m->dim_ = static_cast<int>(config.embeddings.dim);
  m->vocab_ = static_cast<int>(config.embeddings.vocab_size);
  m->heads_ = static_cast<int>(config.layer.attention.heads);
  s = Embeddings::create(config.embeddings, m->embeddings_);
  const int n = static_cast<int>(config.num_layers);
  if (s.ok() && !m->layers_.empty()) m->layers_.clear();
  for (int i = 0; s.ok() && i < n; ++i) {
    EncoderLayerConfig lc = config.layer;
    if (config.layer_scale == LayerScaleRule::inverse_layer_idx) {
      const double hd = lc.attention.head_dim > 0 ? lc.attention.head_dim : lc.attention.dim / lc.attention.heads;
      lc.attention.scale = (std::isnan(lc.attention.scale) ? 1 / std::sqrt(hd) : lc.attention.scale) / (i + 1);
    }
    if (m->windowed(static_cast<std::size_t>(i)) && config.local_rope_base > 0) lc.attention.rotary.base = config.local_rope_base;
    if (i == 0 && !config.first_attn_norm) lc.layer.attn_norm = false;
    std::unique_ptr<EncoderLayer> layer;
    s = EncoderLayer::create(lc, layer);
    if (s.ok()) {
      layer->attention().set_cache_limit(static_cast<int>(config.context_size));
      m->layers_.push_back(std::move(layer));
    }
  }
  if (s.ok() && config.lm_head == LmHead::separate) {
    EmbeddingsConfig hc;
    hc.vocab_size = config.embeddings.vocab_size, hc.dim = config.embeddings.dim;
    hc.positional = PositionKind::none, hc.norm = NormKind::none;
    s = Embeddings::create(hc, m->head_);
  }
  if (!s.ok()) return s;
  const std::size_t D = sz(config.embeddings.dim);
  if (!m->final_.assign(2 * D, 0.f)) return Status::error(Code::out_of_memory, "Model", "could not allocate the final norm");
  std::fill_n(m->final_.data(), D, 1.f);
  out = std::move(m);
  return s;
}

Status Model::weight(ModelPart part, int layer, int which, double length, float*& data, bool check_only) {
  const std::size_t D = static_cast<std::size_t>(dim_), V = static_cast<std::size_t>(vocab_);
  // A weight stored here (not in a module): check its length, hand out its storage.
  auto own = [&](FloatBuffer& buf, std::size_t total, std::size_t offset, std::size_t n, const char* name, bool* set,
                 const char* formula) {
    Status s = check_length(name, length, static_cast<double>(n), formula);
    if (!s.ok()) return s;
    if (!buf.data() && !buf.assign(total, 0.f)) return Status::error(Code::out_of_memory, name, "could not allocate the head");
    data = buf.data() + offset;
    if (set && !check_only) *set = true;
    return s;
  };
  switch (part) {
    case ModelPart::embeddings:
      if (which < 0 || which > 4) break;
      return embeddings_->weight(static_cast<EmbeddingsWeight>(which), length, data, check_only);
    case ModelPart::layer:
      if (layer < 0 || layer >= num_layers()) {
        return Status::error(Code::invalid_argument, "layer", "layer " + std::to_string(layer) + " is past the model's " +
                                                                  std::to_string(num_layers()));
      }
      return layers_[static_cast<std::size_t>(layer)]->weight(which, length, data, check_only);
    case ModelPart::final_norm:
      if (config_.final_norm == NormKind::none || which < 0 || which > 1 ||
          (which == 1 && config_.final_norm != NormKind::layer_norm)) break;
      return own(final_, 2 * D, which * D, D, which ? "bias" : "weight", nullptr, "dim");
    case ModelPart::lm_head:
      if (config_.lm_head != LmHead::separate || which != 0) break;
      if (!check_only) head_set_ = true;
      return head_->weight(EmbeddingsWeight::word, length, data, check_only);
    case ModelPart::mlm: {
      if (!config_.mlm_head || which < 0 || which > 4) break;
      static const char* names[5] = {"denseWeight", "denseBias", "normWeight", "normBias", "bias"};
      const std::size_t offsets[5] = {0, D * D, D * D + D, D * D + 2 * D, D * D + 3 * D};
      return own(mlm_, D * D + 3 * D + V, offsets[which], which == 0 ? D * D : which == 4 ? V : D, names[which],
                 &mlm_set_[which], which == 0 ? "dim * dim" : which == 4 ? "vocabSize" : "dim");
    }
    case ModelPart::pooler:
      if (which < 0 || which > 1) break;
      return own(pooler_, D * D + D, which * D * D, which ? D : D * D, which ? "bias" : "weight", &pooler_set_[which],
                 which ? "dim" : "dim * dim");
    case ModelPart::task: {
      if (config_.task_head == TaskHead::none || which < 0 || which > 5) break;
      if (which < 2 && config_.head_dense != HeadDense::own) break;
      if (which == 3 && !config_.head_bias) break;
      if (which > 3 && !config_.head_norm) break;
      const std::size_t N = static_cast<std::size_t>(config_.num_labels);
      static const char* names[6] = {"denseWeight", "denseBias", "weight", "bias", "normWeight", "normBias"};
      static const char* formulas[6] = {"dim * dim", "dim", "numLabels * dim", "numLabels", "dim", "dim"};
      const std::size_t after = D * D + D + N * D + N;
      const std::size_t offsets[6] = {0, D * D, D * D + D, D * D + D + N * D, after, after + D};
      const std::size_t counts[6] = {D * D, D, N * D, N, D, D};
      return own(task_, after + 2 * D, offsets[which], counts[which], names[which], &task_set_[which], formulas[which]);
    }
  }
  return Status::error(Code::invalid_argument, "weights", "this model has no such weight");
}

bool Model::has_head(ModelPart part) const {
  switch (part) {
    case ModelPart::lm_head:
      return config_.lm_head == LmHead::tied || (config_.lm_head == LmHead::separate && head_set_);
    case ModelPart::mlm:
      return config_.mlm_head && std::all_of(mlm_set_, mlm_set_ + 5, [](bool b) { return b; });
    case ModelPart::pooler:
      return pooler_set_[0] && pooler_set_[1];
    case ModelPart::task:
      return config_.task_head != TaskHead::none && task_set_[2] && (task_set_[3] || !config_.head_bias) &&
             (config_.head_dense != HeadDense::own || (task_set_[0] && task_set_[1])) &&
             (!config_.head_norm || (task_set_[4] && task_set_[5])) &&
             (config_.head_dense != HeadDense::pooler || (pooler_set_[0] && pooler_set_[1]));
    default:
      return false;
  }
}

void Model::reset_cache() {
  for (auto& l : layers_) l->attention().reset_cache();
  cache_length_ = cache_batch_ = cache_start_ = 0;
  cache_mask_.resize(0);
  start_tokens_.resize(0);
}

double Model::cache_bytes() const {
  double bytes = 0;
  for (const auto& l : layers_) bytes += l->attention().cache_bytes();
  return bytes;
}

Status Model::write_cache(int batch, int length, const int32_t* mask, const float* const* keys, const float* const* values,
                          int start, const int32_t* start_tokens) {
  Status s;
  if (length == 0) {
    reset_cache();
    return s;
  }
  if ((mask && !cache_mask_.resize(static_cast<std::size_t>(batch) * length)) ||
      (start_tokens && !start_tokens_.resize(static_cast<std::size_t>(batch)))) {
    reset_cache();
    return Status::error(Code::out_of_memory, "cache", "could not allocate the cache's mask");
  }
  if (start_tokens) std::copy(start_tokens, start_tokens + batch, start_tokens_.data());
  else start_tokens_.resize(0);
  for (int i = 0; i < num_layers(); ++i) {
    s = layers_[static_cast<std::size_t>(i)]->attention().write_cache(keys[i], values[i], batch, length);
    if (!s.ok()) {
      reset_cache();
      return s;
    }
  }
  cache_batch_ = batch, cache_length_ = length, cache_start_ = start;
  if (mask) std::copy(mask, mask + cache_mask_.size(), cache_mask_.data());
  else cache_mask_.resize(0);
  return s;
}

// Drops the first n cached positions from every layer, the mask's columns with them, counting
// each row's tokens among them.
Status Model::drop_cache_front(int n) {
  const int B = cache_batch_, keep = cache_length_ - n;
  if (n <= 0 || keep < 0) return Status::success();
  if (cache_mask_.size()) {
    if (!start_tokens_.size()) {
      if (!start_tokens_.resize(static_cast<std::size_t>(B))) return Status::error(Code::out_of_memory, "useCache", "could not allocate");
      std::fill_n(start_tokens_.data(), B, cache_start_);
    }
    int32_t* m = cache_mask_.data();
    for (int b = 0; b < B; ++b) {
      const int32_t* row = m + static_cast<std::size_t>(b) * cache_length_;
      for (int j = 0; j < n; ++j) start_tokens_.data()[b] += row[j] != 0;
      // Rows move left in place: row b's kept part lands at b * keep, before any later row's start.
      std::memmove(m + static_cast<std::size_t>(b) * keep, row + n, static_cast<std::size_t>(keep) * sizeof(int32_t));
    }
    cache_mask_.resize(static_cast<std::size_t>(B) * keep);
  } else if (start_tokens_.size()) {
    for (int b = 0; b < B; ++b) start_tokens_.data()[b] += n;
  }
  for (auto& l : layers_) l->attention().drop_cache_front(n);
  cache_length_ = keep, cache_start_ += n;
  return Status::success();
}

// The step's mask and positions. With the cache: the whole mask [B, total] (the cached one
// continued) and each new token's position cumsum(mask) - 1 (1 at padding), as Hugging Face's
// generate computes them for a left-padded batch; a mask of ones is dropped. Without: the given
// mask as it is, and RoBERTa's positions from the ids.
Status Model::prepare_cache_step(const Inputs& in) {
  const int B = static_cast<int>(in.batch), L = static_cast<int>(in.length);
  const int past = in.use_cache ? cache_length_ : 0, total = past + L;
  step_past_ = past, step_total_ = total;
  step_mask_.resize(0), step_positions_.resize(0), step_pad_.resize(0), step_window_.resize(0);
  const std::size_t n = static_cast<std::size_t>(B) * total;
  auto no_memory = [] { return Status::error(Code::out_of_memory, "attentionMask", "could not allocate the step's mask"); };
  if (!in.use_cache) {
    if (in.mask && !step_mask_.resize(n)) return no_memory();
    if (in.mask) std::copy(in.mask, in.mask + n, step_mask_.data());
    if (!in.positions && config_.position_ids == PositionIdsRule::padding) {
      if (!step_positions_.resize(static_cast<std::size_t>(B) * L)) return no_memory();
      Status s = position_ids_from_ids(step_positions_.data(), in.ids, B, L, static_cast<int>(config_.embeddings.padding_idx), 0);
      if (!s.ok()) return s;
    }
  } else {
    const bool whole = in.mask && in.mask_length == static_cast<double>(n);
    if (in.mask || cache_mask_.size()) {
      if (!step_mask_.resize(n)) return no_memory();
      int32_t* m = step_mask_.data();
      for (int b = 0; b < B; ++b) {
        int32_t* row = m + static_cast<std::size_t>(b) * total;
        if (whole) {
          std::copy(in.mask + static_cast<std::size_t>(b) * total, in.mask + static_cast<std::size_t>(b + 1) * total, row);
          continue;
        }
        if (cache_mask_.size()) std::copy(cache_mask_.data() + static_cast<std::size_t>(b) * past,
                                          cache_mask_.data() + static_cast<std::size_t>(b + 1) * past, row);
        else std::fill_n(row, past, 1);
        if (in.mask) std::copy(in.mask + static_cast<std::size_t>(b) * L, in.mask + static_cast<std::size_t>(b + 1) * L, row + past);
        else std::fill_n(row + past, L, 1);
      }
      if (std::all_of(m, m + n, [](int32_t v) { return v == 1; })) step_mask_.resize(0);
    }
    if ((step_mask_.size() || cache_start_ > 0) && !in.positions) {
      // Positions count each row's tokens, those dropped from the cache's front included.
      if (!step_positions_.resize(static_cast<std::size_t>(B) * L)) return no_memory();
      for (int b = 0; b < B; ++b) {
        int count = start_tokens_.size() ? start_tokens_.data()[b] : cache_start_;
        const int32_t* row = step_mask_.size() ? step_mask_.data() + static_cast<std::size_t>(b) * total : nullptr;
        for (int j = 0; j < total; ++j) {
          const bool token = !row || row[j];
          if (token) ++count;
          if (j >= past) step_positions_.data()[static_cast<std::size_t>(b) * L + j - past] = token ? count - 1 : 1;
        }
      }
    }
  }
  // A window that hides keys: query i (at past + i) sees key j when past + i - j < window (causal:
  // the window counts the query itself) or |i - j| <= window / 2 (bidirectional), as a
  // [B, 1, L, total] mask with the padding folded in; the causal limit stays with the kernel.
  const int w = static_cast<int>(config_.window);
  const bool hides = w > 0 && (config_.causal ? total > w : L > w / 2 + 1);
  step_window_.resize(0);
  if (hides) {
    const std::size_t cells = static_cast<std::size_t>(B) * L * total;
    if (!step_window_.resize(cells)) return no_memory();
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < L; ++i) {
        uint8_t* row = step_window_.data() + (static_cast<std::size_t>(b) * L + i) * total;
        const int32_t* m = step_mask_.size() ? step_mask_.data() + static_cast<std::size_t>(b) * total : nullptr;
        for (int j = 0; j < total; ++j) {
          const int d = past + i - j;
          const bool near = config_.causal ? d < w : (d < 0 ? -d : d) <= w / 2;
          row[j] = near && (!m || m[j] != 0) ? 1 : 0;
        }
      }
  }
  if (step_mask_.size()) {
    if (!step_pad_.resize(n)) return no_memory();
    return padding_mask_from_attention_mask(step_pad_.data(), step_mask_.data(), n);
  }
  return Status::success();
}

// The embeddings' inputs for this step: learned positions from positionIds or the step's own
// (cache, RoBERTa), else past + arange.
Embeddings::Inputs Model::embeddings_inputs(const Inputs& in) const {
  Embeddings::Inputs e;
  e.ids = in.ids, e.batch = in.batch, e.length = in.length, e.types = in.types, e.types_length = in.types_length;
  const int32_t* pos = in.positions ? in.positions : step_positions_.size() ? step_positions_.data() : nullptr;
  if (config_.embeddings.positional != PositionKind::learned) return e;
  if (pos) e.positions = pos, e.positions_length = in.positions ? in.positions_length : static_cast<double>(step_positions_.size());
  else e.past = step_past_;
  return e;
}

// The attention inputs of every layer for this step: x [B, L, D], the padding mask [B, 1, 1, total]
// and the rotary positions.
MultiHeadAttention::Inputs Model::layer_inputs(const Inputs& in, const float* x, bool rope, bool windowed) const {
  MultiHeadAttention::Inputs a;
  a.query = x, a.batch = in.batch, a.q_len = in.length, a.query_length = in.batch * in.length * dim_;
  const Buffer<uint8_t>& mask = windowed && step_window_.size() ? step_window_ : step_pad_;
  if (mask.size()) {
    a.mask_kind = MaskKind::boolean, a.mask = mask.data(), a.mask_length = static_cast<double>(mask.size());
    a.mask_dims[0] = in.batch, a.mask_dims[1] = 1, a.mask_dims[2] = &mask == &step_window_ ? in.length : 1;
    a.mask_dims[3] = step_total_;
  }
  if (rope) {
    if (in.positions) a.positions = in.positions, a.positions_length = in.positions_length;
    else if (step_positions_.size()) a.positions = step_positions_.data(), a.positions_length = static_cast<double>(step_positions_.size());
  }
  a.causal = config_.causal, a.use_cache = in.use_cache;
  return a;
}

Status Model::prepare(const Inputs& in, Sizes& sizes) {
  sizes = Sizes();
  Status s = check_integer("batch", in.batch, 1, 1 << 20);
  if (s.ok()) s = check_integer("length", in.length, 1, 1 << 22);
  if (s.ok()) s = check_output_size("batch * length * dim", in.batch * in.length * dim_);
  if (!s.ok()) return s;
  const double B = in.batch, L = in.length;
  const bool task = config_.task_head != TaskHead::none;
  if (in.logits != LogitsMode::none && task) {
    if (!has_head(ModelPart::task)) {
      return Status::error(Code::invalid_argument, "outputLogits", "the weights lack the task head's classifier, so there are no logits");
    }
    if (config_.task_head == TaskHead::sequence && in.logits == LogitsMode::last) {
      return Status::error(Code::invalid_argument, "lastTokenOnly", "a sequence-classification head gives one row per sequence already");
    }
    if (config_.head_pool == HeadPool::last_token && config_.pad_token_id < 0 && in.batch > 1) {
      return Status::error(Code::invalid_argument, "padTokenId",
                           "a batch of more than one sequence needs config.json's pad_token_id to find each row's last token");
    }
  } else if (in.logits != LogitsMode::none) {
    if (config_.mlm_head) {
      if (!has_head(ModelPart::mlm)) {
        return Status::error(Code::invalid_argument, "outputLogits",
                             "the weights have no masked-LM head (BertForMaskedLM's cls.predictions.* or "
                             "RobertaForMaskedLM's lm_head.*), so there are no logits");
      }
    } else if (config_.lm_head == LmHead::none) {
      return Status::error(Code::invalid_argument, "outputLogits", "this model has no language-model head");
    } else if (!has_head(ModelPart::lm_head)) {
      return Status::error(Code::invalid_argument, "lm_head.weight",
                           "the weights had no lm_head.weight (config.json's tie_word_embeddings is false), so there are no logits");
    }
  }
  if (in.pooling == Pooling::pooler && !has_head(ModelPart::pooler)) {
    return Status::error(Code::invalid_argument, "pooling", "pooling 'pooler' needs BERT's pooler.dense weights, which the weights lack");
  }
  if (in.pooling != Pooling::none && in.use_cache) {
    return Status::error(Code::invalid_argument, "pooling", "pooling reads the whole sequence; it does not combine with useCache");
  }
  if (in.normalize && in.pooling == Pooling::none) {
    return Status::error(Code::invalid_argument, "normalize", "normalize applies to a pooled embedding; pass pooling");
  }
  double past = 0;
  if (in.use_cache) {
    if (!config_.causal) {
      return Status::error(Code::invalid_argument, "useCache",
                           "this model attends both ways, so there is nothing to cache (the KV cache serves causal models)");
    }
    past = cache_length_;
    if (cache_length_ > 0 && cache_batch_ != B) {
      return Status::error(Code::shape_mismatch, "inputIds", "the KV cache holds a batch of " + std::to_string(cache_batch_) +
                                                                 ", got inputIds with batch " + show_number(B) +
                                                                 " (call resetCache() to start over)");
    }
    if (cache_start_ + past + L > config_.context_size) {
      return Status::error(Code::out_of_range, "inputIds", "the KV cache holds " + std::to_string(cache_start_ + cache_length_) +
                                                               " positions and inputIds adds " + show_number(L) +
                                                               "; the model has " + show_number(config_.context_size) +
                                                               " (config.json) (call resetCache() to start over)");
    }
    if (in.mask && in.mask_length != B * L && in.mask_length != B * (past + L)) {
      return Status::error(Code::shape_mismatch, "attentionMask",
                           "with useCache, attentionMask must have [batch, cacheLength + length] = " + show_number(B * (past + L)) +
                               " or [batch, length] = " + show_number(B * L) + " elements, got " + show_number(in.mask_length));
    }
  } else if (in.mask) {
    s = check_length("attentionMask", in.mask_length, B * L, "batch * length");
  }
  if (s.ok() && in.positions && in.positions_length != B * L && in.positions_length != L) {
    s = Status::error(Code::shape_mismatch, "positionIds", "positionIds must have [batch, length] or [length] elements, got " +
                                                               show_number(in.positions_length));
  }
  if (s.ok()) s = prepare_cache_step(in);
  if (!s.ok()) return s;
  // The embeddings' and every layer's own checks, on this step's inputs.
  s = embeddings_->prepare(embeddings_inputs(in));
  const bool rope = config_.layer.attention.positional == PositionalBias::rotary;
  std::size_t n_out = 0, n_w = 0;
  for (std::size_t i = 0; s.ok() && i < layers_.size(); ++i) {
    MultiHeadAttention::Inputs a = layer_inputs(in, nullptr, rope, windowed(i));
    a.want_weights = in.want_attentions;
    s = layers_[i]->prepare(a, n_out, n_w);
  }
  if (!s.ok()) return s;
  step_weights_ = n_w;
  const double rows = in.logits == LogitsMode::last || config_.task_head == TaskHead::sequence ? B : B * L;
  const double columns = task ? config_.num_labels : vocab_;
  if (in.logits != LogitsMode::none) s = check_output_size("logits", rows * columns);
  if (s.ok() && in.want_hidden) s = check_output_size("hiddenStates", (layers_.size() + 1.0) * B * L * dim_);
  if (s.ok() && in.want_attentions) s = check_output_size("attentions", static_cast<double>(layers_.size()) * n_w);
  if (!s.ok()) return s;
  sizes.last_hidden = sz(B * L * dim_);
  if (in.want_hidden) sizes.hidden = (layers_.size() + 1) * sizes.last_hidden;
  if (in.want_attentions) sizes.attentions = layers_.size() * n_w;
  if (in.logits != LogitsMode::none) sizes.logits = sz(rows * columns);
  if (in.pooling != Pooling::none) sizes.pooled = sz(B * dim_);
  return s;
}

Status Model::run(const Inputs& in, const Outputs& out) {
  const std::size_t B = sz(in.batch), L = sz(in.length), D = static_cast<std::size_t>(dim_), BLD = B * L * D;
  const int past = step_past_;
  const bool rope = config_.layer.attention.positional == PositionalBias::rotary;
  // Hidden states go straight into the output when asked; else two buffers take turns.
  if (!in.want_hidden && !work_.reserve(2 * BLD)) return Status::error(Code::out_of_memory, "inputIds", "could not allocate the hidden states");
  auto state = [&](std::size_t i) { return in.want_hidden ? out.hidden + i * BLD : work_.data() + (i % 2) * BLD; };
  embeddings_->run(state(0), embeddings_inputs(in));
  const std::size_t n_w = step_weights_;
  Status s;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    MultiHeadAttention::Inputs a = layer_inputs(in, state(i), rope, windowed(i));
    a.want_weights = in.want_attentions;
    s = layers_[i]->run(state(i + 1), in.want_attentions ? out.attentions + i * n_w : nullptr, a);
    if (!s.ok()) {
      // A failed step leaves every layer's cache as it was before the call.
      if (in.use_cache) for (auto& l : layers_) l->attention().truncate_cache(past);
      return s;
    }
  }
  float* x = state(layers_.size());
  const bool task = config_.task_head != TaskHead::none;
  if (in.use_cache) {
    cache_batch_ = static_cast<int>(B), cache_length_ = step_total_;
    if (!cache_mask_.resize(step_mask_.size())) {
      reset_cache();
      return Status::error(Code::out_of_memory, "useCache", "could not allocate the cache's mask");
    }
    std::copy(step_mask_.data(), step_mask_.data() + step_mask_.size(), cache_mask_.data());
    // A sliding window on every layer: keys more than `window` back are never seen again. Once the
    // cache holds 2 x window positions the oldest go (the cache stays within 2 x window + a step).
    const int w = static_cast<int>(config_.window);
    if (w > 0 && config_.window_every == 0 && cache_length_ >= 2 * w) {
      s = drop_cache_front(cache_length_ - w);
      if (!s.ok()) {
        reset_cache();
        return s;
      }
    }
  }
  // The final norm: in place, or (ModernBERT's hidden states) into lastHiddenState only.
  float* normed = in.want_hidden && config_.hidden_before_final_norm ? out.last_hidden : x;
  if (config_.final_norm == NormKind::rms_norm) s = rms_norm(normed, x, B * L, dim_, final_.data(), config_.final_eps);
  else if (config_.final_norm == NormKind::layer_norm)
    s = layer_norm(normed, x, B * L, dim_, final_.data(), final_.data() + D, config_.final_eps);
  if (!s.ok()) return s;
  if (normed == x) std::copy(x, x + BLD, out.last_hidden);
  x = out.last_hidden;
  if (in.logits != LogitsMode::none) s = task ? task_logits(in, x, out.logits) : logits(in, x, out.logits);
  if (s.ok() && in.pooling != Pooling::none) s = pool(out.pooled, x, static_cast<int>(B), static_cast<int>(L), in.pooling, in.normalize, in.mask);
  return s;
}

// The head over the final states x [B, L, D]: logits [B, L, V], or [B, V] from each row's last
// position (the whole [B, L, V] is never made then).
Status Model::logits(const Inputs& in, const float* x, float* y) {
  const std::size_t B = sz(in.batch), L = sz(in.length), D = static_cast<std::size_t>(dim_), V = static_cast<std::size_t>(vocab_);
  const bool last = in.logits == LogitsMode::last;
  const std::size_t n = last ? B : B * L;
  const bool mlm = config_.mlm_head;
  if (!head_work_.reserve((last ? n * D : 0) + (mlm ? n * D : 0)) && (last || mlm)) {
    return Status::error(Code::out_of_memory, "outputLogits", "could not allocate the head's scratch");
  }
  const float* rows = x;
  float* scratch = head_work_.data();
  if (last) {
    for (std::size_t b = 0; b < B; ++b) std::copy(x + (b * L + L - 1) * D, x + (b * L + L) * D, scratch + b * D);
    rows = scratch;
    scratch += n * D;
  }
  if (!mlm) {
    (config_.lm_head == LmHead::separate ? *head_ : *embeddings_).logits(y, rows, n);
    if (config_.final_logit_softcap > 0) {
      const float c = static_cast<float>(config_.final_logit_softcap);
      for (std::size_t i = 0; i < n * static_cast<std::size_t>(vocab_); ++i) y[i] = c * std::tanh(y[i] / c);
    }
    return Status::success();
  }
  // The masked-LM head: LayerNorm(act(dense(x))) @ word.T + bias.
  const float* m = mlm_.data();
  float* t = scratch;
  linear(t, rows, n, dim_, dim_, m, WeightLayout::out_in, m + D * D);
  activation(t, n * D, config_.mlm_activation);
  Status s = layer_norm(t, t, n, dim_, m + D * D + D, m + D * D + 2 * D, config_.layer.layer.eps);
  if (!s.ok()) return s;
  embeddings_->logits(y, t, n);
  const float* bias = m + D * D + 3 * D;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t v = 0; v < V; ++v) y[r * V + v] += bias[v];
  return s;
}

// The task head over the final states x [B, L, D]: the rows it reads (each sequence's first or last
// real token, or every row), its dense layer and activation, then the classifier.
Status Model::task_logits(const Inputs& in, const float* x, float* y) {
  const std::size_t B = sz(in.batch), L = sz(in.length), D = static_cast<std::size_t>(dim_);
  const std::size_t N = static_cast<std::size_t>(config_.num_labels);
  const bool sequence = config_.task_head == TaskHead::sequence, last = in.logits == LogitsMode::last;
  const std::size_t n = sequence || last ? B : B * L;
  const bool dense = config_.head_dense != HeadDense::none;
  if (!head_work_.reserve((sequence || last ? n * D : 0) + (dense ? n * D : 0)) && (sequence || last || dense)) {
    return Status::error(Code::out_of_memory, "outputLogits", "could not allocate the head's scratch");
  }
  const float* rows = x;
  float* scratch = head_work_.data();
  if (sequence || last) {
    for (std::size_t b = 0; b < B; ++b) {
      if (sequence && config_.head_pool == HeadPool::mean) {
        // The mean over the attention mask: sum(h * m) / sum(m) (every row without a mask).
        float* row = scratch + b * D;
        std::fill_n(row, D, 0.f);
        float count = 0;
        for (std::size_t i = 0; i < L; ++i) {
          if (in.mask && !in.mask[b * L + i]) continue;
          count += 1;
          for (std::size_t d = 0; d < D; ++d) row[d] += x[(b * L + i) * D + d];
        }
        for (std::size_t d = 0; d < D; ++d) row[d] /= count;
        continue;
      }
      std::size_t t = last ? L - 1 : 0;
      if (sequence && config_.head_pool == HeadPool::last_token) {
        // Hugging Face: the last index whose id is not pad_token_id (0 when every id is), from the
        // ids, not the mask; without a pad id the last position.
        t = L - 1;
        if (config_.pad_token_id >= 0) {
          t = 0;
          for (std::size_t i = 0; i < L; ++i)
            if (in.ids[b * L + i] != static_cast<int32_t>(config_.pad_token_id)) t = i;
        }
      }
      std::copy(x + (b * L + t) * D, x + (b * L + t + 1) * D, scratch + b * D);
    }
    rows = scratch;
    scratch += n * D;
  }
  const float* t = task_.data();
  if (dense) {
    const float* w = config_.head_dense == HeadDense::pooler ? pooler_.data() : t;
    linear(scratch, rows, n, dim_, dim_, w, WeightLayout::out_in, w + D * D);
    if (config_.head_activation == HeadActivation::tanh) {
      for (std::size_t i = 0; i < n * D; ++i) scratch[i] = std::tanh(scratch[i]);
    } else if (config_.head_activation != HeadActivation::none) {
      activation(scratch, n * D, config_.head_activation == HeadActivation::relu ? Activation::relu : Activation::gelu);
    }
    if (config_.head_norm) {
      const float* nw = t + D * D + D + N * D + N;
      Status s = layer_norm(scratch, scratch, n, dim_, nw, nw + D, config_.layer.layer.eps);
      if (!s.ok()) return s;
    }
    rows = scratch;
  }
  linear(y, rows, n, dim_, static_cast<int>(N), t + D * D + D, WeightLayout::out_in,
         config_.head_bias ? t + D * D + D + N * D : nullptr);
  return Status::success();
}

// Sentence embeddings [B, D] from the final states, as sentence-transformers pools: the mean over
// the attention mask (sum(h * m) / max(sum(m), 1e-9), summed in double), the first token, each row's
// last real token, or BERT's pooler tanh(dense(h[:, 0])); normalize divides by max(L2 norm, 1e-12).
Status Model::pool(float* out, const float* h, int B, int L, Pooling pooling, bool normalize, const int32_t* mask) {
  const std::size_t D = static_cast<std::size_t>(dim_);
  auto on = [&](int b, int i) { return !mask || mask[static_cast<std::size_t>(b) * L + i] != 0; };
  auto at = [&](int b, int i) { return h + (static_cast<std::size_t>(b) * L + i) * D; };
  Buffer<double> sum;
  if (pooling == Pooling::mean && !sum.resize(D)) return Status::error(Code::out_of_memory, "pooling", "could not allocate the sums");
  for (int b = 0; b < B; ++b) {
    float* row = out + static_cast<std::size_t>(b) * D;
    if (pooling == Pooling::mean) {
      std::fill_n(sum.data(), D, 0.0);
      int n = 0;
      for (int i = 0; i < L; ++i) {
        if (!on(b, i)) continue;
        ++n;
        const float* v = at(b, i);
        for (std::size_t d = 0; d < D; ++d) sum.data()[d] += v[d];
      }
      for (std::size_t d = 0; d < D; ++d) row[d] = static_cast<float>(sum.data()[d] / std::max(static_cast<double>(n), 1e-9));
    } else if (pooling == Pooling::last) {
      int i = L - 1;
      while (i > 0 && !on(b, i)) --i;
      std::copy(at(b, i), at(b, i) + D, row);
    } else {
      std::copy(at(b, 0), at(b, 0) + D, row);
    }
  }
  if (pooling == Pooling::pooler) {
    const std::size_t n = static_cast<std::size_t>(B) * D;
    if (!head_work_.reserve(n)) return Status::error(Code::out_of_memory, "pooling", "could not allocate the pooler's scratch");
    std::copy(out, out + n, head_work_.data());
    linear(out, head_work_.data(), static_cast<std::size_t>(B), dim_, dim_, pooler_.data(), WeightLayout::out_in, pooler_.data() + D * D);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(std::tanh(static_cast<double>(out[i])));
  }
  if (normalize) {
    for (int b = 0; b < B; ++b) {
      float* row = out + static_cast<std::size_t>(b) * D;
      double ss = 0;
      for (std::size_t d = 0; d < D; ++d) ss += static_cast<double>(row[d]) * row[d];
      const double norm = std::max(std::sqrt(ss), 1e-12);
      for (std::size_t d = 0; d < D; ++d) row[d] = static_cast<float>(row[d] / norm);
    }
  }
  return Status::success();
}

}  // namespace attnkit

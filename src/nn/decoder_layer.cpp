#include "attnkit/nn/decoder_layer.hpp"

#include <algorithm>
#include <new>

namespace attnkit {

Status check_decoder_layer_config(const DecoderLayerConfig& c) {
  Status s = check_multi_head_attention_config(c.self_attention);
  if (s.ok() && c.cross_attention.dim != c.self_attention.dim) {
    return Status::error(Code::invalid_argument, "crossAttention.dim",
                         "the cross-attention's dim (" + show_number(c.cross_attention.dim) +
                             ") must equal the layer's dim (" + show_number(c.self_attention.dim) + ")");
  }
  if (s.ok() && c.cross_attention.positional != PositionalBias::none) {
    return Status::error(Code::invalid_argument, "crossAttention.positional",
                         "RoPE and ALiBi apply to the self-attention; the cross-attention takes positional 'none'");
  }
  if (s.ok()) s = check_multi_head_attention_config(c.cross_attention);
  if (s.ok() && c.layer.parallel) {
    return Status::error(Code::invalid_argument, "parallel", "a decoder layer with cross-attention has no parallel residual");
  }
  return s.ok() ? check_layer_settings(c.layer, c.self_attention.dim) : s;
}

Status DecoderLayer::create(const DecoderLayerConfig& config, std::unique_ptr<DecoderLayer>& out) {
  Status s = check_decoder_layer_config(config);
  if (!s.ok()) return s;
  std::unique_ptr<DecoderLayer> l(new DecoderLayer());
  if (!l) return Status::error(Code::out_of_memory, "DecoderLayer", "could not allocate the layer");
  s = MultiHeadAttention::create(config.self_attention, l->self_);
  if (s.ok()) s = MultiHeadAttention::create(config.cross_attention, l->cross_);
  if (s.ok()) s = init_sublayers(config.layer, config.self_attention, 3, l->ffn_, l->norms_);
  if (!s.ok()) return s;
  l->config_ = config;
  out = std::move(l);
  return s;
}

Status DecoderLayer::weight(int which, double length, float*& data, bool check_only) {
  if (which >= 0 && which < kDecoderCross) return self_->weight(static_cast<MhaWeight>(which), length, data, check_only);
  if (which >= kDecoderCross && which < kDecoderNorms) {
    return cross_->weight(static_cast<MhaWeight>(which - kDecoderCross), length, data, check_only);
  }
  if (which >= kDecoderNorms && which < kDecoderFfn) return norms_.weight(which - kDecoderNorms, length, data);
  if (which >= kDecoderFfn && which < kDecoderWeights) return ffn_.weight(which - kDecoderFfn, length, data, check_only);
  return Status::error(Code::invalid_argument, "weights", "unknown weight");
}

MultiHeadAttention::Inputs DecoderLayer::cross_inputs(const Inputs& in) const {
  MultiHeadAttention::Inputs c = in.cross;
  c.query = in.self.query, c.query_length = in.self.query_length, c.batch = in.self.batch, c.q_len = in.self.q_len;
  c.positions = nullptr, c.positions_length = 0;
  c.causal = false, c.use_cache = false, c.want_weights = in.self.want_weights;
  return c;
}

Status DecoderLayer::prepare(const Inputs& in, std::size_t& out_elements, std::size_t& weight_elements) const {
  Status s = ffn_.check_ready();
  if (!s.ok()) return s;
  if (in.self.key || in.self.value) {
    return Status::error(Code::invalid_argument, "key", "the decoder's self-attention takes no key/value; pass memory");
  }
  if (!in.cross.key || !in.cross.value) return Status::error(Code::invalid_argument, "memory", "a decoder layer needs memory");
  std::size_t n_self = 0, n_cross = 0, n_out = 0;
  s = self_->prepare(in.self, out_elements, n_self);
  if (s.ok()) s = cross_->prepare(cross_inputs(in), n_out, n_cross);
  if (s.ok()) s = check_output_size("weights", static_cast<double>(n_self) + static_cast<double>(n_cross));
  if (!s.ok()) return s;
  weight_elements = n_self + n_cross;
  return s;
}

Status DecoderLayer::run(float* out, float* weights, const Inputs& in) {
  const int D = static_cast<int>(config_.self_attention.dim);
  const std::size_t rows = static_cast<std::size_t>(in.self.batch * in.self.q_len);
  if (!scratch_.reserve(2 * rows * D)) return Status::error(Code::out_of_memory, "x", "could not allocate the layer's scratch");
  float* h = scratch_.data();
  float* a = h + rows * D;
  std::copy(in.self.query, in.self.query + rows * D, out);
  const NormPlacement p = config_.layer.placement;
  const int cached_before = self_->cache_length();
  // The self-attention's weights [B, H, Lq, cached + Lq] come first, the cross-attention's next.
  const std::size_t n_self = static_cast<std::size_t>(in.self.batch * config_.self_attention.heads * in.self.q_len *
                                                      ((in.self.use_cache ? cached_before : 0) + in.self.q_len));
  Status s = residual(out, rows, D, p, norms_, 0, 3, h, a, [&](float* o, const float* x) {
    MultiHeadAttention::Inputs si = in.self;
    si.query = x;
    return self_->run(o, weights, si);
  });
  if (s.ok()) {
    s = residual(out, rows, D, p, norms_, 1, 4, h, a, [&](float* o, const float* x) {
      MultiHeadAttention::Inputs ci = cross_inputs(in);
      ci.query = x;
      return cross_->run(o, weights ? weights + n_self : nullptr, ci);
    });
  }
  if (s.ok()) s = residual(out, rows, D, p, norms_, 2, 5, h, a, [&](float* o, const float* x) { return ffn_.run(o, x, rows); });
  if (!s.ok()) self_->truncate_cache(cached_before);  // out_of_memory only: the cache stays as it was
  return s;
}

}  // namespace attnkit

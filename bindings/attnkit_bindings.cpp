// The raw embind layer of the main module: `_name` functions on heap offsets that return a status
// code (0 = ok). Conventions in raw.hpp.
#include <emscripten/bind.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/ops/activation.hpp"
#include "attnkit/ops/alibi.hpp"
#include "attnkit/nn/decoder_layer.hpp"
#include "attnkit/nn/encoder_layer.hpp"
#include "attnkit/ops/attention.hpp"
#include "attnkit/ops/embedding.hpp"
#include "attnkit/nn/embeddings.hpp"
#include "attnkit/ops/norm.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/core/parallel.hpp"
#include "attnkit/ops/mask.hpp"
#include "attnkit/nn/multi_head_attention.hpp"
#include "attnkit/ops/positional.hpp"
#include "attnkit/ops/rotary.hpp"
#include "attnkit/core/status.hpp"
#include "boundary.generated.hpp"
#include "raw.hpp"

using namespace attnkit;
using namespace attnkit_raw;

namespace {

int sinusoidal(uintptr_t slot, double length, double dim, double base, double offset, int layout) {
  const SinusoidalParams p{length, dim, base, offset, static_cast<SinusoidalLayout>(layout)};
  Status s = check_sinusoidal(p);
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, sinusoidal_size(p), [&](float* out) { return sinusoidal_positional_encoding(out, p); });
}

int one_hot_raw(uintptr_t slot, uintptr_t ids, double n, double depth) {
  Status s = check_one_hot(in<int32_t>(ids), static_cast<std::size_t>(n), depth);
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(n * depth), [&](float* out) {
    return one_hot(out, in<int32_t>(ids), static_cast<std::size_t>(n), static_cast<int>(depth));
  });
}

// table is read-write: max-norm renormalises rows of it in place, as PyTorch does.
int embedding_raw(uintptr_t slot, uintptr_t ids, double n, uintptr_t table, double table_length, double vocab,
                  double dim, double scale, double max_norm, double norm_type) {
  Status s = check_embedding(in<int32_t>(ids), static_cast<std::size_t>(n), vocab, dim, scale);
  if (s.ok()) s = check_length("table", table_length, vocab * dim, "vocabSize * dim");
  if (s.ok() && !std::isnan(max_norm)) {
    s = embedding_renorm(reinterpret_cast<float*>(table), static_cast<int>(vocab), static_cast<int>(dim),
                         in<int32_t>(ids), static_cast<std::size_t>(n), max_norm, norm_type);
  }
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(n * dim), [&](float* out) {
    return embedding(out, in<int32_t>(ids), static_cast<std::size_t>(n), in<float>(table),
                     static_cast<int>(vocab), static_cast<int>(dim), static_cast<float>(scale));
  });
}

// kind 0 = LayerNorm (gamma, beta), 1 = RMSNorm (gamma = weight). Pointers 0 = not given.
int norm_raw(uintptr_t slot, int kind, uintptr_t x, double n, double dim, uintptr_t gamma, double gamma_length,
             uintptr_t beta, double beta_length, double eps) {
  Status s = check_integer("dim", dim, 1, 1 << 20);
  if (s.ok() && std::fmod(n, dim) != 0) {
    s = Status::error(Code::shape_mismatch, "x", "x has " + show_number(n) +
                      " elements, not a multiple of dim = " + show_number(dim));
  }
  if (s.ok()) s = check_norm(n / dim, dim, eps);
  if (s.ok() && gamma) s = check_length(kind ? "weight" : "gamma", gamma_length, dim, "dim");
  if (s.ok() && beta) s = check_length("beta", beta_length, dim, "dim");
  if (!s.ok()) return fail(std::move(s));
  const std::size_t rows = static_cast<std::size_t>(n / dim);
  return with_result(slot, static_cast<std::size_t>(n), [&](float* out) {
    return kind ? rms_norm(out, in<float>(x), rows, static_cast<int>(dim), in<float>(gamma), eps)
                : layer_norm(out, in<float>(x), rows, static_cast<int>(dim), in<float>(gamma), in<float>(beta), eps);
  });
}

// kind 0 = arange, 1 = from attention mask [batch, past + length], 2 = RoBERTa from ids [batch, length].
int position_ids_raw(uintptr_t slot, int kind, double batch, double length, double past, uintptr_t src,
                     double src_length, double padding_idx) {
  Status s = check_position_ids(batch, length, past);
  if (s.ok() && kind == 1) s = check_length("attentionMask", src_length, batch * (past + length), "batch * (pastLength + length)");
  if (s.ok() && kind == 2) s = check_length("inputIds", src_length, batch * length, "batch * length");
  // RoBERTa's positions run from paddingIdx + 1 + past up to paddingIdx + past + length: int32 too.
  if (s.ok() && kind == 2) s = check_integer("paddingIdx", padding_idx, 0, 2147483647.0 - past - length);
  if (!s.ok()) return fail(std::move(s));
  const int b = static_cast<int>(batch), l = static_cast<int>(length), p = static_cast<int>(past);
  return with_result<int32_t>(slot, static_cast<std::size_t>(batch * length), [&](int32_t* out) {
    if (kind == 1) return position_ids_from_mask(out, in<int32_t>(src), b, l, p);
    if (kind == 2) return position_ids_from_ids(out, in<int32_t>(src), b, l, static_cast<int>(padding_idx), p);
    return position_ids_arange(out, b, l, p);
  });
}

// ------------------------------------------------------------------------------ masks, attention
// kind 0: from ids != padId; 1: from an attention mask of 0/1.
int padding_mask_raw(uintptr_t slot, int kind, uintptr_t src, double n, double pad_id) {
  return with_result<uint8_t>(slot, static_cast<std::size_t>(n), [&](uint8_t* out) {
    return kind ? padding_mask_from_attention_mask(out, in<int32_t>(src), static_cast<std::size_t>(n))
                : padding_mask(out, in<int32_t>(src), static_cast<std::size_t>(n), pad_id);
  });
}

int causal_mask_raw(uintptr_t slot, double q_len, double kv_len) {
  Status s = check_causal_mask(q_len, kv_len);
  if (!s.ok()) return fail(std::move(s));
  return with_result<uint8_t>(slot, static_cast<std::size_t>(q_len * kv_len), [&](uint8_t* out) {
    causal_mask(out, static_cast<int>(q_len), static_cast<int>(kv_len));
    return Status::success();
  });
}

// Kinds: 1 boolean (uint8), 2 additive (float32). The result is uint8 when both are boolean.
int combine_masks_raw(uintptr_t slot, int a_kind, uintptr_t a, double a_length, double a0, double a1, double a2,
                      double a3, int b_kind, uintptr_t b, double b_length, double b0, double b1, double b2, double b3) {
  const double ad[4] = {a0, a1, a2, a3}, bd[4] = {b0, b1, b2, b3};
  int od[4];
  Status s = check_combine_masks(ad, a_length, bd, b_length, od);
  for (int kind : {a_kind, b_kind})
    if (s.ok() && kind != 1 && kind != 2) s = Status::error(Code::invalid_argument, "mask", "mask kind must be boolean or additive");
  if (!s.ok()) return fail(std::move(s));
  MaskOperand x{static_cast<MaskKind>(a_kind), in<void>(a), {int(a0), int(a1), int(a2), int(a3)}};
  MaskOperand y{static_cast<MaskKind>(b_kind), in<void>(b), {int(b0), int(b1), int(b2), int(b3)}};
  const std::size_t n = static_cast<std::size_t>(od[0]) * od[1] * od[2] * od[3];
  const auto run = [&](void* out) {
    combine_masks(out, x, y, od);
    return Status::success();
  };
  if (a_kind == 1 && b_kind == 1) return with_result<uint8_t>(slot, n, run);
  return with_result<float>(slot, n, run);
}

int alibi_slopes_raw(uintptr_t slot, double heads) {
  Status s = check_integer("numHeads", heads, 1, 4096);
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(heads), [&](float* out) { return alibi_slopes(out, heads); });
}


// dims: a pointer to 7 doubles [B, H, Hkv, Lq, Lk, d, dv]; lengths: 3 doubles (q, k, v element
// counts); mask_dims: 4 doubles. scale NaN = 1/sqrt(d). alibi_kind: 0 none, 1 the paper's
// slopes, 2 the `alibi` array of H slopes. The output goes to slot[0..1], weights to slot[2..3].
// check_only: validate the sizes and stop (JS calls this before copying large inputs in).
int attention_raw(uintptr_t slot, uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t dims_ptr, uintptr_t lengths_ptr,
                  int mask_kind, uintptr_t mask, double mask_length, uintptr_t mask_dims_ptr, double scale,
                  bool causal, int alibi_kind, uintptr_t alibi, double alibi_length, bool want_weights,
                  bool check_only) {
  const double* dims = in<double>(dims_ptr);
  const double* lengths = in<double>(lengths_ptr);
  AttentionShape shape;
  Status s = check_attention_shape(dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], shape);
  if (s.ok()) s = check_length("q", lengths[0], dims[0] * dims[1] * dims[3] * dims[5], "batch * heads * queryLength * headDim");
  if (s.ok()) s = check_length("k", lengths[1], dims[0] * dims[2] * dims[4] * dims[5], "batch * kvHeads * keyLength * headDim");
  if (s.ok()) s = check_length("v", lengths[2], dims[0] * dims[2] * dims[4] * dims[6], "batch * kvHeads * keyLength * valueDim");
  AttentionArgs a;
  if (s.ok()) s = check_attention_mask(static_cast<MaskKind>(mask_kind), in<double>(mask_dims_ptr), mask_length, shape, a.mask);
  if (s.ok() && alibi_kind == 2) s = check_length("alibi", alibi_length, dims[1], "heads");
  if (s.ok() && want_weights) s = check_output_size("weights", dims[0] * dims[1] * dims[3] * dims[4]);
  // NaN means "not given": 1/sqrt(headDim).
  const double scale_used = std::isnan(scale) ? 1.0 / std::sqrt(dims[5]) : scale;
  if (s.ok()) s = check_attention_scale(scale_used);
  if (!s.ok()) return fail(std::move(s));
  if (check_only) return 0;
  a.mask.data = in<void>(mask);
  a.shape = shape;
  a.q = contiguous(in<float>(q), shape.heads, shape.q_len, shape.head_dim);
  a.k = contiguous(in<float>(k), shape.kv_heads, shape.kv_len, shape.head_dim);
  a.v = contiguous(in<float>(v), shape.kv_heads, shape.kv_len, shape.v_dim);
  a.scale = static_cast<float>(scale_used);
  a.causal = causal;
  std::vector<float> slopes;
  if (alibi_kind == 1) {
    slopes.resize(shape.heads);
    alibi_slopes(slopes.data(), shape.heads);
    a.alibi = slopes.data();
  } else if (alibi_kind == 2) {
    a.alibi = in<float>(alibi);
  }
  const std::size_t n_out = static_cast<std::size_t>(dims[0] * dims[1] * dims[3] * dims[6]);
  const std::size_t n_weights = static_cast<std::size_t>(dims[0] * dims[1] * dims[3] * dims[4]);
  return with_output_and_weights(slot, n_out, want_weights, n_weights, [&](float* out, float* weights) {
    a.out = contiguous(out, shape.heads, shape.q_len, shape.v_dim);
    a.weights = weights;
    return attention(a);
  });
}


// x: [B, H, L, d] (x_length elements). positions: pos_kind 0 = offset + arange(L), 1 = [L],
// 2 = [B, L].
int rotary_raw(uintptr_t slot, uintptr_t x, double x_length, double batch, double heads, double length,
               uintptr_t positions, double positions_length, int pos_kind, double offset, uintptr_t config) {
  const RotaryConfig c = boundary::read_RotaryConfig(in<double>(config));
  Status s = check_rotary(c);
  if (s.ok()) s = check_integer("batch", batch, 0, 1 << 24);
  if (s.ok()) s = check_integer("heads", heads, 0, 1 << 24);
  if (s.ok()) s = check_integer("length", length, 0, 1 << 24);
  if (s.ok()) s = check_length("x", x_length, batch * heads * length * c.head_dim, "batch * heads * length * headDim");
  if (s.ok() && pos_kind == 0) s = check_integer("offset", offset, 0, (1 << 24) - length);
  if (s.ok() && pos_kind == 1) s = check_length("positions", positions_length, length, "length");
  if (s.ok() && pos_kind == 2) s = check_length("positions", positions_length, batch * length, "batch * length");
  if (!s.ok()) return fail(std::move(s));
  const int b = static_cast<int>(batch), h = static_cast<int>(heads), l = static_cast<int>(length),
            d = static_cast<int>(c.head_dim);
  std::vector<int32_t> arange;
  const int32_t* pos = in<int32_t>(positions);
  if (pos_kind == 0) {
    arange.resize(l);
    for (int i = 0; i < l; ++i) arange[i] = static_cast<int32_t>(offset) + i;
    pos = arange.data();
  }
  return with_result(slot, static_cast<std::size_t>(x_length), [&](float* out) {
    return rotary(contiguous(out, h, l, d), contiguous(in<float>(x), h, l, d), b, h, l, pos, pos_kind == 2, c);
  });
}

// Inverse frequencies [rotaryDim / 2] followed by the attention factor.
int rotary_frequencies_raw(uintptr_t slot, uintptr_t config, double seq_len) {
  const RotaryConfig c = boundary::read_RotaryConfig(in<double>(config));
  Status s = check_rotary(c);
  if (s.ok()) s = check_integer("seqLength", seq_len, 0, 1 << 24);
  if (!s.ok()) return fail(std::move(s));
  const int half = static_cast<int>((c.rotary_dim == 0 ? c.head_dim : c.rotary_dim) / 2);
  return with_result(slot, static_cast<std::size_t>(half + 1), [&](float* out) {
    rotary_frequencies(c, seq_len, out, out[half]);
    return Status::success();
  });
}

Registry<Embeddings> g_embeddings{"Embeddings", {}};
Registry<MultiHeadAttention> g_mha{"MultiHeadAttention", {}};
Registry<EncoderLayer> g_layers{"EncoderLayer", {}};
Registry<DecoderLayer> g_decoders{"DecoderLayer", {}};

// Checks `length` against weight `which` (of `count`) of a module and reports its storage in the
// result slot, for JavaScript to write directly (no staging copy of a large table). The module
// owns the storage. check_only: validate without marking the weight as set (JS checks all weights
// before writing any).
template <class Which, class T>
int module_weight(Registry<T>& registry, int count, uintptr_t slot, double handle, int which, double length,
                  bool check_only) {
  T* m = nullptr;
  Status s = registry.find(handle, m);
  if (s.ok() && (which < 0 || which >= count)) s = Status::error(Code::invalid_argument, "weights", "unknown weight");
  float* data = nullptr;
  if (s.ok()) s = m->weight(static_cast<Which>(which), length, data, check_only);
  if (!s.ok()) return fail(std::move(s));
  *reinterpret_cast<ResultSlot*>(slot) = {static_cast<uint32_t>(reinterpret_cast<uintptr_t>(data)),
                                          static_cast<uint32_t>(length)};
  return 0;
}

// A forward call of a module with attention (MultiHeadAttention, EncoderLayer): prepare (every
// check), then the output and, when asked, the attention weights.
bool wants_weights(const MultiHeadAttention::Inputs& x) { return x.want_weights; }
bool wants_weights(const DecoderLayer::Inputs& x) { return x.self.want_weights; }

template <class T, class Inputs>
int module_forward(Registry<T>& registry, uintptr_t slot, double handle, const Inputs& x) {
  T* m = nullptr;
  Status s = registry.find(handle, m);
  std::size_t n_out = 0, n_w = 0;
  if (s.ok()) s = m->prepare(x, n_out, n_w);
  if (!s.ok()) return fail(std::move(s));
  return with_output_and_weights(slot, n_out, wants_weights(x), n_w, [&](float* out, float* weights) {
    return m->run(out, weights, x);
  });
}

// The inputs both attention modules take: query sizes [elements, batch, length], the mask (kind,
// data, length, 4 dims) and RoPE positions.
MultiHeadAttention::Inputs attention_inputs(uintptr_t query, const double* sizes, int mask_kind, uintptr_t mask,
                                            double mask_length, uintptr_t mask_dims, uintptr_t positions,
                                            double positions_length, bool causal, bool want_weights) {
  MultiHeadAttention::Inputs x;
  x.query = in<float>(query), x.query_length = sizes[0], x.batch = sizes[1], x.q_len = sizes[2];
  x.mask_kind = static_cast<MaskKind>(mask_kind), x.mask = in<void>(mask), x.mask_length = mask_length;
  for (int d = 0; d < 4; ++d) x.mask_dims[d] = in<double>(mask_dims)[d];
  x.positions = in<int32_t>(positions), x.positions_length = positions_length;
  x.causal = causal, x.want_weights = want_weights;
  return x;
}

// Creates a module from an EmbeddingsConfig as bindings/boundary.json declares it; its handle goes
// to result slot [0].
int embeddings_create(uintptr_t slot, uintptr_t config) {
  return g_embeddings.create(slot, boundary::read_EmbeddingsConfig(in<double>(config)));
}

int embeddings_weight(uintptr_t slot, double handle, int which, double length, bool check_only) {
  return module_weight<EmbeddingsWeight>(g_embeddings, 5, slot, handle, which, length, check_only);
}

int embeddings_forward(uintptr_t slot, double handle, uintptr_t ids, double batch, double length, uintptr_t types,
                       double types_length, uintptr_t positions, double positions_length, uintptr_t mask,
                       double mask_length, double past) {
  Embeddings* e = nullptr;
  Status s = g_embeddings.find(handle, e);
  Embeddings::Inputs x;
  x.ids = in<int32_t>(ids);
  x.batch = batch;
  x.length = length;
  x.types = in<int32_t>(types);
  x.types_length = types_length;
  x.positions = in<int32_t>(positions);
  x.positions_length = positions_length;
  x.mask = in<int32_t>(mask);
  x.mask_length = mask_length;
  x.past = past;
  if (s.ok()) s = e->prepare(x);
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, e->output_size(x), [&](float* out) {
    e->run(out, x);
    return Status::success();
  });
}

// The word table as an output embedding: x [rows, dim] -> logits [rows, vocab].
int embeddings_logits(uintptr_t slot, double handle, uintptr_t x, double x_length, double rows) {
  Embeddings* e = nullptr;
  Status s = g_embeddings.find(handle, e);
  if (s.ok()) s = e->check_logits(rows, x_length);
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(rows) * static_cast<std::size_t>(e->config().vocab_size), [&](float* y) {
    e->logits(y, in<float>(x), static_cast<std::size_t>(rows));
    return Status::success();
  });
}

void embeddings_free(double handle) { g_embeddings.free(handle); }

// ------------------------------------------------------------------------- linear, attention module
// layout 0 = [out, in] (nn.Linear), 1 = [in, out] (Conv1D). bias 0 = none.
int linear_raw(uintptr_t slot, uintptr_t x, double x_length, double rows, double in_features, double out_features,
               uintptr_t w, double w_length, int layout, uintptr_t bias, double bias_length) {
  Status s = check_linear(rows, in_features, out_features);
  if (s.ok()) s = check_length("x", x_length, rows * in_features, "rows * inFeatures");
  if (s.ok()) s = check_length("weight", w_length, in_features * out_features, "outFeatures * inFeatures");
  if (s.ok() && bias) s = check_length("bias", bias_length, out_features, "outFeatures");
  if (s.ok() && layout != 0 && layout != 1) s = Status::error(Code::invalid_argument, "layout", "unknown layout");
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(rows * out_features), [&](float* y) {
    linear(y, in<float>(x), static_cast<std::size_t>(rows), static_cast<int>(in_features),
           static_cast<int>(out_features), in<float>(w), static_cast<WeightLayout>(layout), in<float>(bias));
    return Status::success();
  });
}

// config: a MultiHeadAttentionConfig as bindings/boundary.json declares it.

int mha_create(uintptr_t slot, uintptr_t config) {
  return g_mha.create(slot, boundary::read_MultiHeadAttentionConfig(in<double>(config)));
}

int mha_weight(uintptr_t slot, double handle, int which, double length, bool check_only) {
  return module_weight<MhaWeight>(g_mha, kMhaWeights, slot, handle, which, length, check_only);
}

// sizes: 6 doubles [queryLength (elements), batch, length, keyLength (elements), valueLength
// (elements), kvLength]; mask_dims: 4 doubles. Output in slot[0..1], weights in slot[2..3].
int mha_forward(uintptr_t slot, double handle, uintptr_t query, uintptr_t key, uintptr_t value, uintptr_t sizes,
                int mask_kind, uintptr_t mask, double mask_length, uintptr_t mask_dims, uintptr_t positions,
                double positions_length, bool causal, bool use_cache, bool want_weights) {
  const double* z = in<double>(sizes);
  MultiHeadAttention::Inputs x = attention_inputs(query, z, mask_kind, mask, mask_length, mask_dims, positions,
                                                  positions_length, causal, want_weights);
  x.key = in<float>(key), x.value = in<float>(value), x.key_length = z[3], x.value_length = z[4], x.kv_len = z[5];
  x.use_cache = use_cache;
  return module_forward(g_mha, slot, handle, x);
}

// -1 for a stale handle.
double mha_cache_length(double handle) {
  MultiHeadAttention* m = nullptr;
  return g_mha.find(handle, m).ok() ? m->cache_length() : -1;
}
void mha_reset_cache(double handle) {
  MultiHeadAttention* m = nullptr;
  if (g_mha.find(handle, m).ok()) m->reset_cache();
}
void mha_free(double handle) { g_mha.free(handle); }

// kind: 0 relu, 1 gelu (erf), 2 gelu_tanh, 3 silu.
int activation_raw(uintptr_t slot, uintptr_t x, double n, int kind) {
  Status s = check_integer("x.length", n, 0, kMaxOutputElements);
  if (s.ok() && (kind < 0 || kind > 3)) s = Status::error(Code::invalid_argument, "kind", "unknown activation");
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(n), [&](float* out) {
    std::copy(in<float>(x), in<float>(x) + static_cast<std::size_t>(n), out);
    activation(out, static_cast<std::size_t>(n), static_cast<Activation>(kind));
    return Status::success();
  });
}


// config: an EncoderLayerConfig as bindings/boundary.json declares it.
int layer_create(uintptr_t slot, uintptr_t config) {
  return g_layers.create(slot, boundary::read_EncoderLayerConfig(in<double>(config)));
}

int layer_weight(uintptr_t slot, double handle, int which, double length, bool check_only) {
  return module_weight<int>(g_layers, kEncoderWeights, slot, handle, which, length, check_only);
}

// sizes: [x elements, batch, length]. Output in slot[0..1], attention weights in slot[2..3].
int layer_forward(uintptr_t slot, double handle, uintptr_t x, uintptr_t sizes, int mask_kind, uintptr_t mask,
                  double mask_length, uintptr_t mask_dims, uintptr_t positions, double positions_length, bool causal,
                  bool use_cache, bool want_weights) {
  MultiHeadAttention::Inputs a = attention_inputs(x, in<double>(sizes), mask_kind, mask, mask_length, mask_dims,
                                                  positions, positions_length, causal, want_weights);
  a.use_cache = use_cache;
  return module_forward(g_layers, slot, handle, a);
}

// The layer's KV cache: op 0 = its length, 1 = reset, 2 = truncate to `value` positions, 3 = set
// its limit to `value` positions, 4 = bytes held, 5 = its batch (0 while empty). -1 for a stale
// handle.
double layer_cache(double handle, int op, double value) {
  EncoderLayer* l = nullptr;
  if (!g_layers.find(handle, l).ok()) return -1;
  MultiHeadAttention& m = l->attention();
  const int n = value >= 0 && value < (1 << 24) ? static_cast<int>(value) : 1 << 24;
  switch (op) {
    case 1: m.reset_cache(); break;
    case 2: m.truncate_cache(n); break;
    case 3: m.set_cache_limit(n); break;
    case 4: return m.cache_bytes();
    case 5: return m.cache_batch();
    default: break;
  }
  return m.cache_length();
}

// The layer's cached keys (which = 0) or values (1), [batch, kv_heads, length, head_dim].
int layer_cache_read(uintptr_t slot, double handle, int which) {
  EncoderLayer* l = nullptr;
  Status s = g_layers.find(handle, l);
  if (!s.ok()) return fail(std::move(s));
  const MultiHeadAttention& m = l->attention();
  return with_result(slot, m.cache_values(), [&](float* out) {
    if (out) m.read_cache(which != 0, out);
    return Status::success();
  });
}

// Replaces the layer's cache with k and v, each [batch, kv_heads, length, head_dim]: sizes =
// [batch, length, k elements, v elements], checked against the layer's shape.
int layer_cache_write(uintptr_t slot, double handle, uintptr_t k, uintptr_t v, uintptr_t sizes) {
  (void)slot;
  EncoderLayer* l = nullptr;
  Status s = g_layers.find(handle, l);
  if (!s.ok()) return fail(std::move(s));
  MultiHeadAttention& m = l->attention();
  const double* z = in<double>(sizes);
  s = check_integer("pastKeyValues.batch", z[0], 1, 1 << 20);
  if (s.ok()) s = check_integer("pastKeyValues.length", z[1], 0, 1 << 24);
  if (!s.ok()) return fail(std::move(s));
  const double want = z[0] * z[1] * static_cast<double>(m.cache_position_values());
  if (z[2] != want || z[3] != want) {
    return fail(Status::error(Code::shape_mismatch, "pastKeyValues",
                              "keys and values must have batch * kvHeads * length * headDim = " +
                                  std::to_string(static_cast<long long>(want)) + " elements each, got " +
                                  std::to_string(static_cast<long long>(z[2])) + " and " +
                                  std::to_string(static_cast<long long>(z[3]))));
  }
  s = m.write_cache(in<float>(k), in<float>(v), static_cast<int>(z[0]), static_cast<int>(z[1]));
  return s.ok() ? 0 : fail(std::move(s));
}

void layer_free(double handle) { g_layers.free(handle); }

// config: a DecoderLayerConfig as bindings/boundary.json declares it.
int decoder_create(uintptr_t slot, uintptr_t config) {
  return g_decoders.create(slot, boundary::read_DecoderLayerConfig(in<double>(config)));
}

int decoder_weight(uintptr_t slot, double handle, int which, double length, bool check_only) {
  return module_weight<int>(g_decoders, kDecoderWeights, slot, handle, which, length, check_only);
}

// sizes: [x elements, batch, length, memory elements, memoryLength]; the self-attention's mask
// and positions, then the memory mask (kind, data, length, 4 dims). Output in slot[0..1]; weights
// (self then cross, see DecoderLayer::prepare) in slot[2..3].
int decoder_forward(uintptr_t slot, double handle, uintptr_t x, uintptr_t sizes, int mask_kind, uintptr_t mask,
                    double mask_length, uintptr_t mask_dims, uintptr_t positions, double positions_length,
                    uintptr_t memory, int memory_mask_kind, uintptr_t memory_mask, double memory_mask_length,
                    uintptr_t memory_mask_dims, bool causal, bool use_cache, bool want_weights) {
  const double* z = in<double>(sizes);
  DecoderLayer::Inputs d;
  d.self = attention_inputs(x, z, mask_kind, mask, mask_length, mask_dims, positions, positions_length, causal,
                            want_weights);
  d.self.use_cache = use_cache;
  d.cross = attention_inputs(x, z, memory_mask_kind, memory_mask, memory_mask_length, memory_mask_dims, 0, 0, false,
                             want_weights);
  d.cross.key = d.cross.value = in<float>(memory);
  d.cross.key_length = d.cross.value_length = z[3], d.cross.kv_len = z[4];
  return module_forward(g_decoders, slot, handle, d);
}

double decoder_cache_length(double handle) {
  DecoderLayer* m = nullptr;
  return g_decoders.find(handle, m).ok() ? m->self_attention().cache_length() : -1;
}
void decoder_reset_cache(double handle) {
  DecoderLayer* m = nullptr;
  if (g_decoders.find(handle, m).ok()) m->self_attention().reset_cache();
}
void decoder_free(double handle) { g_decoders.free(handle); }

// The kernels' thread count (attnkit/core/parallel.hpp): starts the pool's threads once, at load. In a
// build without threads only 1 is accepted.
int set_threads_raw(uintptr_t, double n) {
  Status s = set_thread_count(n);
  return s.ok() ? 0 : fail(std::move(s));
}
int threads() { return thread_count(); }
int threads_running_raw() { return threads_running(); }

bool has_simd() {
#if ATTNKIT_HAVE_SIMD
  return true;
#else
  return false;
#endif
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnkit) {
  emscripten::function("_sinusoidal", &sinusoidal);
  emscripten::function("_oneHot", &one_hot_raw);
  emscripten::function("_embedding", &embedding_raw);
  emscripten::function("_norm", &norm_raw);
  emscripten::function("_positionIds", &position_ids_raw);
  emscripten::function("_paddingMask", &padding_mask_raw);
  emscripten::function("_causalMask", &causal_mask_raw);
  emscripten::function("_combineMasks", &combine_masks_raw);
  emscripten::function("_alibiSlopes", &alibi_slopes_raw);
  emscripten::function("_attention", &attention_raw);
  emscripten::function("_rotary", &rotary_raw);
  emscripten::function("_rotaryFrequencies", &rotary_frequencies_raw);
  emscripten::function("_embeddingsCreate", &embeddings_create);
  emscripten::function("_embeddingsWeight", &embeddings_weight);
  emscripten::function("_embeddingsForward", &embeddings_forward);
  emscripten::function("_embeddingsLogits", &embeddings_logits);
  emscripten::function("_embeddingsFree", &embeddings_free);
  emscripten::function("_linear", &linear_raw);
  emscripten::function("_mhaCreate", &mha_create);
  emscripten::function("_mhaWeight", &mha_weight);
  emscripten::function("_mhaForward", &mha_forward);
  emscripten::function("_mhaCacheLength", &mha_cache_length);
  emscripten::function("_mhaResetCache", &mha_reset_cache);
  emscripten::function("_mhaFree", &mha_free);
  emscripten::function("_activation", &activation_raw);
  emscripten::function("_layerCreate", &layer_create);
  emscripten::function("_layerWeight", &layer_weight);
  emscripten::function("_layerForward", &layer_forward);
  emscripten::function("_layerCache", &layer_cache);
  emscripten::function("_layerCacheRead", &layer_cache_read);
  emscripten::function("_layerCacheWrite", &layer_cache_write);
  emscripten::function("_layerFree", &layer_free);
  emscripten::function("_decoderCreate", &decoder_create);
  emscripten::function("_decoderWeight", &decoder_weight);
  emscripten::function("_decoderForward", &decoder_forward);
  emscripten::function("_decoderCacheLength", &decoder_cache_length);
  emscripten::function("_decoderResetCache", &decoder_reset_cache);
  emscripten::function("_decoderFree", &decoder_free);
  attnkit_raw::bind_common();
  emscripten::function("_hasSimd", &has_simd);
  emscripten::function("_setThreads", &set_threads_raw);
  emscripten::function("_threads", &threads);
  emscripten::function("_threadsRunning", &threads_running_raw);
}

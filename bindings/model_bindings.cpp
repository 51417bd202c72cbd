// The raw embind layer of Model (src/attnkit/models/model.hpp), under web/src/models/model.js: one
// call per forward pass, its outputs in result slots that JavaScript copies out once.
#include <emscripten/bind.h>

#include <cstdint>
#include <cstdlib>

#include "attnkit/models/model.hpp"
#include "boundary.generated.hpp"
#include "raw.hpp"

namespace attnkit_raw {
namespace {

Registry<Model> g_models{"Model", {}};

// config: a ModelConfig as bindings/boundary.json declares it; the handle goes to slot [0].
int model_create(uintptr_t slot, uintptr_t config) {
  return g_models.create(slot, boundary::read_ModelConfig(in<double>(config)));
}

// Storage of weight `which` of `part` (ModelPart; `layer` for a layer's), in slot [0].
int model_weight(uintptr_t slot, double handle, int part, int layer, int which, double length, bool check_only) {
  Model* m = nullptr;
  Status s = g_models.find(handle, m);
  if (s.ok() && (part < 0 || part > 6)) s = Status::error(Code::invalid_argument, "weights", "unknown part");
  float* data = nullptr;
  if (s.ok()) s = m->weight(static_cast<ModelPart>(part), layer, which, length, data, check_only);
  if (!s.ok()) return fail(std::move(s));
  *reinterpret_cast<ResultSlot*>(slot) = {static_cast<uint32_t>(reinterpret_cast<uintptr_t>(data)),
                                          static_cast<uint32_t>(length)};
  return 0;
}

// 1 when every weight of head `part` is set.
int model_has_head(double handle, int part) {
  Model* m = nullptr;
  return g_models.find(handle, m).ok() && m->has_head(static_cast<ModelPart>(part)) ? 1 : 0;
}

// One forward pass. options: a ForwardOptions (boundary.json). Results: five [data, count] slots,
// in the order lastHiddenState, hiddenStates, attentions, logits, pooled (count 0 = not asked);
// on failure none is allocated.
int model_forward(uintptr_t slot, double handle, uintptr_t ids, uintptr_t types, uintptr_t positions, uintptr_t mask,
                  uintptr_t options) {
  Model* m = nullptr;
  Status s = g_models.find(handle, m);
  if (!s.ok()) return fail(std::move(s));
  Model::Inputs x;
  static_cast<ForwardOptions&>(x) = boundary::read_ForwardOptions(in<double>(options));
  x.ids = in<int32_t>(ids), x.types = in<int32_t>(types), x.positions = in<int32_t>(positions), x.mask = in<int32_t>(mask);
  if (!x.types) x.types_length = 0;
  if (!x.positions) x.positions_length = 0;
  if (!x.mask) x.mask_length = 0;
  Model::Sizes n;
  s = m->prepare(x, n);
  if (!s.ok()) return fail(std::move(s));
  auto* r = reinterpret_cast<ResultSlot*>(slot);
  const std::size_t counts[5] = {n.last_hidden, n.hidden, n.attentions, n.logits, n.pooled};
  float* bufs[5] = {};
  for (int i = 0; i < 5; ++i) {
    bufs[i] = counts[i] ? alloc_result(reinterpret_cast<uintptr_t>(r + i), counts[i], s) : nullptr;
    if (!counts[i]) r[i] = {0, 0};
    if (!s.ok()) {
      for (int j = 0; j <= i; ++j) std::free(bufs[j]), r[j] = {0, 0};
      return fail(std::move(s));
    }
  }
  s = m->run(x, {bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]});
  if (!s.ok()) {
    for (int i = 0; i < 5; ++i) std::free(bufs[i]), r[i] = {0, 0};
    return fail(std::move(s));
  }
  return 0;
}

// The KV cache: op 0 = its length, 1 = reset, 2 = bytes held, 3 = its batch (0 while empty), 4 =
// the positions dropped from its front (a sliding window). -1 for a stale handle.
double model_cache(double handle, int op) {
  Model* m = nullptr;
  if (!g_models.find(handle, m).ok()) return -1;
  switch (op) {
    case 1: m->reset_cache(); break;
    case 2: return m->cache_bytes();
    case 3: return m->cache_batch();
    case 4: return m->cache_start();
    default: break;
  }
  return m->cache_length();
}

// Layer `layer`'s cached keys (which = 0) or values (1), [batch, kv_heads, length, head_dim];
// which = 2: the cached mask [batch, length] (int32, count 0 while every position is a token);
// which = 3: per row the tokens among the dropped positions (count 0: all of them).
int model_cache_read(uintptr_t slot, double handle, int layer, int which) {
  Model* m = nullptr;
  Status s = g_models.find(handle, m);
  if (s.ok() && (layer < 0 || layer >= m->num_layers() || which < 0 || which > 3)) {
    s = Status::error(Code::invalid_argument, "layer", "no such layer or part of the cache");
  }
  if (!s.ok()) return fail(std::move(s));
  if (which >= 2) {
    const Buffer<int32_t>& mask = which == 2 ? m->cache_mask() : m->cache_start_tokens();
    return with_result<int32_t>(slot, mask.size(), [&](int32_t* out) {
      if (out) std::copy(mask.data(), mask.data() + mask.size(), out);
      return Status::success();
    });
  }
  const MultiHeadAttention& a = m->layer(layer).attention();
  return with_result(slot, a.cache_values(), [&](float* out) {
    if (out) a.read_cache(which != 0, out);
    return Status::success();
  });
}

// Replaces the whole cache: sizes = [batch, length, mask elements (0 = none), start (positions
// before the cache), start tokens' elements (0 = none, else batch)]; keys and values: per layer
// [data offset, element count] (uint32 pairs), each checked against the model's shape.
int model_cache_write(uintptr_t slot, double handle, uintptr_t sizes, uintptr_t mask, uintptr_t keys, uintptr_t values,
                      uintptr_t start_tokens) {
  (void)slot;
  Model* m = nullptr;
  Status s = g_models.find(handle, m);
  if (!s.ok()) return fail(std::move(s));
  const double* z = in<double>(sizes);
  s = check_integer("pastKeyValues.batch", z[0], 1, 1 << 20);
  if (s.ok()) s = check_integer("pastKeyValues.length", z[1], 0, 1 << 24);
  if (s.ok() && z[2] != 0) s = check_length("pastKeyValues.mask", z[2], z[0] * z[1], "batch * length");
  if (s.ok()) s = check_integer("pastKeyValues.start", z[3], 0, 1 << 24);
  if (s.ok() && z[4] != 0) s = check_length("pastKeyValues.startTokens", z[4], z[0], "batch");
  if (!s.ok()) return fail(std::move(s));
  const double want = z[0] * z[1] * static_cast<double>(m->layer(0).attention().cache_position_values());
  const int L = m->num_layers();
  const float* ks[kMaxModelLayers];
  const float* vs[kMaxModelLayers];
  for (int i = 0; i < L; ++i) {
    const uint32_t* k = in<uint32_t>(keys) + 2 * i;
    const uint32_t* v = in<uint32_t>(values) + 2 * i;
    if (k[1] != want || v[1] != want) {
      return fail(Status::error(Code::shape_mismatch, "pastKeyValues.layers[" + std::to_string(i) + "]",
                                "keys and values must have batch * kvHeads * length * headDim = " + show_number(want) +
                                    " elements each, got " + std::to_string(k[1]) + " and " + std::to_string(v[1])));
    }
    ks[i] = in<float>(k[0]), vs[i] = in<float>(v[0]);
  }
  if (z[1] + z[3] > m->config().context_size) {
    return fail(Status::error(Code::out_of_range, "pastKeyValues", "the cache's start + length (" + show_number(z[1] + z[3]) +
                                                                      ") passes the model's " + show_number(m->config().context_size) + " positions"));
  }
  if (z[4] != 0) {
    for (int b = 0; b < static_cast<int>(z[0]); ++b) {
      const int32_t t = in<int32_t>(start_tokens)[b];
      if (t < 0 || t > z[3]) {
        return fail(Status::error(Code::out_of_range, "pastKeyValues.startTokens",
                                  "startTokens[" + std::to_string(b) + "] must be in [0, start], got " + std::to_string(t)));
      }
    }
  }
  s = m->write_cache(static_cast<int>(z[0]), static_cast<int>(z[1]), z[2] != 0 ? in<int32_t>(mask) : nullptr, ks, vs,
                     static_cast<int>(z[3]), z[4] != 0 ? in<int32_t>(start_tokens) : nullptr);
  return s.ok() ? 0 : fail(std::move(s));
}

void model_free(double handle) { g_models.free(handle); }

}  // namespace
}  // namespace attnkit_raw

EMSCRIPTEN_BINDINGS(attnkit_model) {
  using namespace attnkit_raw;
  emscripten::function("_modelCreate", &model_create);
  emscripten::function("_modelWeight", &model_weight);
  emscripten::function("_modelHasHead", &model_has_head);
  emscripten::function("_modelForward", &model_forward);
  emscripten::function("_modelCache", &model_cache);
  emscripten::function("_modelCacheRead", &model_cache_read);
  emscripten::function("_modelCacheWrite", &model_cache_write);
  emscripten::function("_modelFree", &model_free);
}

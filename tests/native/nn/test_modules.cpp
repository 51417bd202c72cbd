// Linear (both weight layouts) and the MultiHeadAttention module: scalar reference vs xsimd on
// awkward sizes, both against PyTorch (torch.nn.Linear, GPT-2's Conv1D as addmm,
// torch.nn.MultiheadAttention, LLaMA attention written out), the KV cache against a full pass.
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attnkit/ops/linear.hpp"
#include "attnkit/nn/multi_head_attention.hpp"
#include "attnkit/ops/activation.hpp"
#include "attnkit/nn/decoder_layer.hpp"
#include "attnkit/nn/encoder_layer.hpp"
#include "fixtures.hpp"

using namespace attnkit;
using attnkit_test::awkward_sizes;
using attnkit_test::floats;
using attnkit_test::load_fixture;
using attnkit_test::max_abs_diff;

namespace {


// Copies a fixture's state dict into a module through weight(name, length, data).
template <class Weight>
void load_weights(const nlohmann::json& weights, Weight weight) {
  for (const auto& [name, value] : weights.items()) {
    const auto w = floats(value);
    float* data = nullptr;
    const Status s = weight(name, static_cast<double>(w.size()), data);
    EXPECT_TRUE(s.ok()) << name << ": " << s.message;
    if (s.ok()) std::copy(w.begin(), w.end(), data);
  }
}

const nlohmann::json& fixture() {
  static const nlohmann::json j = load_fixture("modules.json");
  return j;
}

}  // namespace

TEST(Linear, MatchesPyTorchInBothLayouts) {
  for (const auto& c : fixture()["linear"]) {
    const int rows = c["rows"], n_in = c["in"], n_out = c["out"];
    const auto x = floats(c["x"]);
    const bool bias = c["bias"];
    for (int layout = 0; layout < 2; ++layout) {
      const auto w = floats(c[layout ? "conv1dWeight" : "weight"]);
      const std::vector<float> b = bias ? floats(c[layout ? "conv1dBias" : "b"]) : std::vector<float>{};
      const auto expected = floats(c[layout ? "conv1dY" : "y"]);
      for (int simd = 0; simd < 2; ++simd) {
        std::vector<float> y(static_cast<std::size_t>(rows) * n_out, -7.f);
        const auto lay = static_cast<WeightLayout>(layout);
        if (simd) simd::linear(y.data(), x.data(), rows, n_in, n_out, w.data(), lay, bias ? b.data() : nullptr, 0, n_out);
        else ref::linear(y.data(), x.data(), rows, n_in, n_out, w.data(), lay, bias ? b.data() : nullptr);
        EXPECT_LT(max_abs_diff(y, expected), 2e-5 * std::sqrt(n_in))
            << rows << "x" << n_in << "->" << n_out << " layout " << layout << " simd " << simd;
      }
    }
  }
}

TEST(Linear, SimdMatchesReferenceOnAwkwardSizes) {
  unsigned seed = 1;
  for (int rows : {1, 3, 4, 5, 7, 17})
    for (int n_in : awkward_sizes())
      for (int n_out : awkward_sizes()) {
        if (static_cast<long>(n_in) * n_out > 200000 && rows > 5) continue;  // keep the sweep quick
        const auto x = attnkit_test::random_normal(static_cast<std::size_t>(rows) * n_in, seed++);
        const auto w = attnkit_test::random_normal(static_cast<std::size_t>(n_in) * n_out, seed++);
        const auto b = attnkit_test::random_normal(n_out, seed++);
        for (int layout = 0; layout < 2; ++layout)
          for (bool bias : {false, true}) {
            std::vector<float> r(static_cast<std::size_t>(rows) * n_out), s(r.size(), -7.f);
            const auto lay = static_cast<WeightLayout>(layout);
            ref::linear(r.data(), x.data(), rows, n_in, n_out, w.data(), lay, bias ? b.data() : nullptr);
            simd::linear(s.data(), x.data(), rows, n_in, n_out, w.data(), lay, bias ? b.data() : nullptr, 0, n_out);
            EXPECT_LT(max_abs_diff(r, s), 1e-5 * n_in)
                << rows << "x" << n_in << "->" << n_out << " layout " << layout << " bias " << bias;
          }
      }
}

TEST(Linear, RejectsBadSizes) {
  EXPECT_EQ(check_linear(2, 3, 4).code, Code::ok);
  EXPECT_EQ(check_linear(2.5, 3, 4).argument, "rows");
  EXPECT_EQ(check_linear(2, 0, 4).argument, "inFeatures");
  EXPECT_EQ(check_linear(2, 3, -1).argument, "outFeatures");
  EXPECT_EQ(check_linear(1 << 20, 1024, 1024).code, Code::out_of_range);
}

namespace {

// The fixture's PyTorch / Hugging Face weight names, mapped to the module's.
const std::map<std::string, MhaWeight>& weight_names() {
  static const std::map<std::string, MhaWeight> m{
      {"in_proj_weight", MhaWeight::in_proj}, {"in_proj_bias", MhaWeight::in_proj_bias},
      {"q_proj_weight", MhaWeight::q},        {"k_proj_weight", MhaWeight::k},
      {"v_proj_weight", MhaWeight::v},        {"out_proj.weight", MhaWeight::out},
      {"out_proj.bias", MhaWeight::out_bias}, {"q_proj.weight", MhaWeight::q},
      {"k_proj.weight", MhaWeight::k},        {"v_proj.weight", MhaWeight::v},
      {"o_proj.weight", MhaWeight::out}};
  return m;
}

MultiHeadAttentionConfig mha_config(const nlohmann::json& cfg) {
  MultiHeadAttentionConfig config;
  config.dim = cfg["dim"];
  config.heads = cfg["numHeads"];
  config.kv_heads = cfg.value("numKvHeads", 0);
  config.kdim = cfg.value("kdim", 0);
  config.vdim = cfg.value("vdim", 0);
  config.bias = config.out_bias = cfg.value("bias", true);
  const std::string pos = cfg.value("positional", "none");
  config.positional = pos == "rotary" ? PositionalBias::rotary : pos == "alibi" ? PositionalBias::alibi : PositionalBias::none;
  if (cfg.contains("rotary")) config.rotary.base = cfg["rotary"]["base"];
  if (cfg.value("weightLayout", "outIn") == "inOut") config.layout = WeightLayout::in_out;
  return config;
}

std::unique_ptr<MultiHeadAttention> make_module(const nlohmann::json& c) {
  std::unique_ptr<MultiHeadAttention> m;
  Status s = MultiHeadAttention::create(mha_config(c["config"]), m);
  EXPECT_TRUE(s.ok()) << s.message;
  load_weights(c["weights"], [&](const std::string& name, double length, float*& data) {
    return m->weight(weight_names().at(name), length, data);
  });
  return m;
}

}  // namespace

TEST(MultiHeadAttention, MatchesPyTorch) {
  for (const auto& c : fixture()["mha"]) {
    auto m = make_module(c);
    const auto query = floats(c["query"]);
    const std::vector<int> dims = c["dims"];
    std::vector<float> key, value, additive;
    std::vector<uint8_t> keep;
    MultiHeadAttention::Inputs in;
    in.query = query.data();
    in.query_length = static_cast<double>(query.size());
    in.batch = dims[0];
    in.q_len = dims[1];
    in.causal = c.value("causal", false);
    in.want_weights = true;
    if (c.contains("key")) {
      key = floats(c["key"]);
      value = floats(c["value"]);
      in.key = key.data(), in.value = value.data();
      in.key_length = static_cast<double>(key.size()), in.value_length = static_cast<double>(value.size());
      in.kv_len = c["kvLength"];
    }
    const double lk = c.contains("kvLength") ? static_cast<double>(c["kvLength"]) : dims[1];
    if (c.contains("keyPaddingMask")) {
      keep = c["keyPaddingMask"].get<std::vector<uint8_t>>();
      in.mask_kind = MaskKind::boolean, in.mask = keep.data(), in.mask_length = static_cast<double>(keep.size());
      in.mask_dims[0] = dims[0], in.mask_dims[3] = lk;
    } else if (c.contains("additiveMask")) {
      additive = floats(c["additiveMask"]);
      in.mask_kind = MaskKind::additive, in.mask = additive.data(), in.mask_length = static_cast<double>(additive.size());
      in.mask_dims[2] = dims[1], in.mask_dims[3] = lk;
    }
    std::size_t n_out = 0, n_w = 0;
    Status s = m->prepare(in, n_out, n_w);
    ASSERT_TRUE(s.ok()) << c["name"] << ": " << s.message;
    std::vector<float> out(n_out), w(n_w);
    ASSERT_TRUE(m->run(out.data(), w.data(), in).ok());
    EXPECT_LT(max_abs_diff(out, floats(c["out"])), 2e-5) << c["name"];
    EXPECT_LT(max_abs_diff(w, floats(c["attnWeights"])), 2e-6) << c["name"];
  }
}

namespace {

// One cached call on positions [from, from + step) of the first `batch` rows of query [B, L, D];
// the output rows go to their places in `got` (when given).
Status cached_step(MultiHeadAttention& m, const std::vector<float>& query, int L, int D, int batch, int from, int step,
                   std::vector<float>* got) {
  std::vector<float> chunk;
  for (int b = 0; b < batch; ++b)
    chunk.insert(chunk.end(), query.begin() + (static_cast<std::size_t>(b) * L + from) * D,
                 query.begin() + (static_cast<std::size_t>(b) * L + from + step) * D);
  MultiHeadAttention::Inputs in;
  in.query = chunk.data();
  in.query_length = static_cast<double>(chunk.size());
  in.batch = batch, in.q_len = step, in.causal = true, in.use_cache = true;
  std::size_t n_out = 0, n_w = 0;
  Status s = m.prepare(in, n_out, n_w);
  if (!s.ok()) return s;
  std::vector<float> out(n_out);
  s = m.run(out.data(), nullptr, in);
  if (s.ok() && got)
    for (int b = 0; b < batch; ++b)
      std::copy(out.begin() + static_cast<std::size_t>(b) * step * D, out.begin() + static_cast<std::size_t>(b + 1) * step * D,
                got->begin() + (static_cast<std::size_t>(b) * L + from) * D);
  return s;
}

// The causal "mha" fixture cases, taken apart: the case (config, name), its query [B, L, D] and
// PyTorch's output.
struct CausalCase {
  const nlohmann::json& c;
  std::vector<float> query, expected;
  int B, L, D;
};
std::vector<CausalCase> causal_cases() {
  std::vector<CausalCase> out;
  for (const auto& c : fixture()["mha"]) {
    if (!c.value("causal", false)) continue;
    const std::vector<int> dims = c["dims"];
    out.push_back({c, floats(c["query"]), floats(c["out"]), dims[0], dims[1], dims[2]});
  }
  return out;
}

}  // namespace

// Decoding with the cache, a prefix and then one token at a time, gives the rows of one full
// causal pass (LLaMA case: RoPE positions continue from the cache length).
TEST(MultiHeadAttention, KvCacheMatchesFullPass) {
  for (const auto& [c, query, expected, B, L, D] : causal_cases()) {
    auto m = make_module(c);
    std::vector<float> got(expected.size());
    int done = 0;
    for (int step : {L - 3, 1, 1, 1}) {
      ASSERT_TRUE(cached_step(*m, query, L, D, B, done, step, &got).ok());
      done += step;
      EXPECT_EQ(m->cache_length(), done);
    }
    EXPECT_LT(max_abs_diff(got, expected), 2e-5) << c["name"];
    // A different batch size is refused while the cache holds rows; reset starts over.
    MultiHeadAttention::Inputs in;
    std::vector<float> one(static_cast<std::size_t>(D) * (B + 1));
    in.query = one.data(), in.query_length = static_cast<double>(one.size()), in.batch = B + 1, in.q_len = 1;
    in.use_cache = true;
    std::size_t n_out = 0, n_w = 0;
    EXPECT_EQ(m->prepare(in, n_out, n_w).argument, "batch");
    m->reset_cache();
    EXPECT_TRUE(m->prepare(in, n_out, n_w).ok());
  }
}

// A cache read out of one module and written into a fresh one of the same shape continues the
// decoding exactly as the first would (an exchangeable pastKeyValues); bad sizes are refused.
TEST(MultiHeadAttention, KvCacheReadAndWrittenIntoAnotherModuleContinuesTheSame) {
  for (const auto& [c, query, expected, B, L, D] : causal_cases()) {
    auto m = make_module(c), other = make_module(c);
    ASSERT_TRUE(cached_step(*m, query, L, D, B, 0, L - 2, nullptr).ok());
    std::vector<float> k(m->cache_values()), v(m->cache_values());
    ASSERT_EQ(k.size(), static_cast<std::size_t>(B) * (L - 2) * m->cache_position_values());
    m->read_cache(false, k.data());
    m->read_cache(true, v.data());
    ASSERT_TRUE(other->write_cache(k.data(), v.data(), B, L - 2).ok());
    EXPECT_EQ(other->cache_length(), L - 2);
    EXPECT_EQ(other->cache_batch(), B);
    std::vector<float> a(query.size()), b(query.size());
    for (int done = L - 2; done < L; ++done) {
      ASSERT_TRUE(cached_step(*m, query, L, D, B, done, 1, &a).ok());
      ASSERT_TRUE(cached_step(*other, query, L, D, B, done, 1, &b).ok());
    }
    EXPECT_EQ(a, b) << c["name"];
    // Past the limit: refused by name, the cache untouched.
    other->set_cache_limit(L);
    EXPECT_EQ(other->write_cache(k.data(), v.data(), 1, L + 1).argument, "pastKeyValues");
    EXPECT_EQ(other->cache_length(), L);
    EXPECT_TRUE(other->write_cache(k.data(), v.data(), B, 0).ok());
    EXPECT_EQ(other->cache_length(), 0);
    EXPECT_EQ(other->cache_values(), 0u);
  }
}

// The cache's storage is laid out again when a reset cache takes a larger batch (it once kept the
// old layout, writing past the storage), and it never grows past the limit a model sets.
TEST(MultiHeadAttention, KvCacheTakesANewBatchAfterResetAndKeepsToItsLimit) {
  for (const auto& [c, query, expected, B, L, D] : causal_cases()) {
    auto m = make_module(c);
    // Batch 1 first (storage for one row), then the whole batch after a reset.
    m->set_cache_limit(L);
    ASSERT_TRUE(cached_step(*m, query, L, D, 1, 0, 2, nullptr).ok());
    m->reset_cache();
    std::vector<float> got(expected.size());
    for (int done = 0; done < L; ++done) ASSERT_TRUE(cached_step(*m, query, L, D, B, done, 1, &got).ok());
    EXPECT_LT(max_abs_diff(got, expected), 2e-5) << c["name"];
    const double kv_heads = c["config"].value("numKvHeads", 0) ? static_cast<double>(c["config"]["numKvHeads"])
                                                                 : static_cast<double>(c["config"]["numHeads"]);
    const double head_dim = static_cast<double>(c["config"]["dim"]) / static_cast<double>(c["config"]["numHeads"]);
    EXPECT_EQ(m->cache_bytes(), 2.0 * 4 * B * kv_heads * L * head_dim) << c["name"];
    // Full: one more position is refused by name, the cache unchanged.
    Status s = cached_step(*m, query, L, D, B, 0, 1, nullptr);
    EXPECT_EQ(s.argument, "useCache") << s.message;
    EXPECT_EQ(m->cache_length(), L);
  }
}

TEST(MultiHeadAttention, RejectsBadConfigsAndInputs) {
  std::unique_ptr<MultiHeadAttention> m;
  MultiHeadAttentionConfig c;
  c.dim = 10, c.heads = 3;
  EXPECT_EQ(MultiHeadAttention::create(c, m).argument, "dim");
  c.heads = 4, c.kv_heads = 3, c.head_dim = 4;
  EXPECT_EQ(MultiHeadAttention::create(c, m).argument, "numKvHeads");
  c.kv_heads = 2, c.kdim = 5;
  ASSERT_TRUE(MultiHeadAttention::create(c, m).ok());
  float* data = nullptr;
  EXPECT_EQ(m->weight(MhaWeight::in_proj, 32 * 10, data).argument, "inProjWeight");
  EXPECT_EQ(m->weight(MhaWeight::q, 15, data).code, Code::shape_mismatch);
  std::vector<float> x(2 * 10);
  MultiHeadAttention::Inputs in;
  in.query = x.data(), in.query_length = 20, in.batch = 1, in.q_len = 2;
  std::size_t n_out = 0, n_w = 0;
  EXPECT_EQ(m->prepare(in, n_out, n_w).argument, "qWeight");  // weights never set
  for (auto w : {MhaWeight::q, MhaWeight::k, MhaWeight::v, MhaWeight::out}) {
    const double sizes[] = {16 * 10, 8 * 5, 8 * 10, 0, 10 * 16};
    ASSERT_TRUE(m->weight(w, sizes[static_cast<int>(w)], data).ok());
  }
  EXPECT_EQ(m->prepare(in, n_out, n_w).argument, "key");  // kdim != dim needs key/value
  std::vector<float> k(3 * 5), v(3 * 10);
  in.key = k.data(), in.value = v.data(), in.key_length = 15, in.value_length = 30, in.kv_len = 3;
  EXPECT_TRUE(m->prepare(in, n_out, n_w).ok());
  in.use_cache = true;
  EXPECT_EQ(m->prepare(in, n_out, n_w).argument, "useCache");
  in.use_cache = false, in.value_length = 29;
  EXPECT_EQ(m->prepare(in, n_out, n_w).argument, "value");
}

TEST(Activation, MatchesPyTorchAndSimdMatchesReference) {
  const auto& a = fixture()["activations"];
  const auto x = floats(a["x"]);
  const char* names[] = {"relu", "gelu", "gelu_tanh", "silu"};
  for (int k = 0; k < 4; ++k) {
    const auto expected = floats(a[names[k]]);
    for (int simd = 0; simd < 2; ++simd) {
      auto y = x;
      (simd ? simd::activation : ref::activation)(y.data(), y.size(), static_cast<Activation>(k));
      EXPECT_LT(max_abs_diff(y, expected), 2e-6) << names[k] << " simd " << simd;
    }
    for (int n : awkward_sizes()) {  // the tail goes through the vector code on a padded copy
      auto r = attnkit_test::random_normal(n, 40 + n);
      for (auto& v : r) v *= 4;
      auto s = r;
      ref::activation(r.data(), n, static_cast<Activation>(k));
      simd::activation(s.data(), n, static_cast<Activation>(k));
      EXPECT_LT(max_abs_diff(r, s), 2e-6) << names[k] << " n " << n;
    }
  }
}

namespace {
LayerSettings layer_settings(const nlohmann::json& cfg) {
  LayerSettings l;
  l.ffn_dim = cfg["ffnDim"];
  const std::string act = cfg["activation"], place = cfg["normPlacement"];
  l.activation = act == "relu"   ? Activation::relu
                 : act == "gelu" ? Activation::gelu
                 : act == "silu" ? Activation::silu
                                 : Activation::gelu_tanh;
  l.placement = place == "post" ? NormPlacement::post : place == "pre" ? NormPlacement::pre : NormPlacement::sandwich;
  l.norm = cfg.value("norm", "layernorm") == "rmsnorm" ? NormKind::rms_norm : NormKind::layer_norm;
  l.eps = cfg.value("eps", 1e-5);
  l.ffn_bias = cfg.value("ffnBias", true);
  l.ffn_gated = cfg.value("ffnGated", false);
  return l;
}

// A state-dict name of an encoder layer (norms from 10, feed-forward from 18) or a decoder layer
// (cross-attention from 10, norms from 20, feed-forward from 32) to its weight number.
int layer_weight_number(const std::string& name, int cross, int norms, int ffn) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("self_attn.")) return static_cast<int>(weight_names().at(name.substr(10)));
  if (starts("multihead_attn.")) return cross + static_cast<int>(weight_names().at(name.substr(15)));
  if (starts("norm")) return norms + 2 * (name[4] - '1') + (name.find(".bias") != std::string::npos ? 1 : 0);
  static const std::map<std::string, int> ffn_names{{"linear1.weight", 0}, {"linear1.bias", 1}, {"linear2.weight", 2},
                                                    {"linear2.bias", 3},   {"gate.weight", 4},   {"gate.bias", 5}};
  return ffn + ffn_names.at(name);
}

std::unique_ptr<EncoderLayer> make_layer(const nlohmann::json& c) {
  std::unique_ptr<EncoderLayer> layer;
  Status s = EncoderLayer::create(EncoderLayerConfig{mha_config(c["config"]), layer_settings(c["config"])}, layer);
  EXPECT_TRUE(s.ok()) << s.message;
  load_weights(c["weights"], [&](const std::string& name, double length, float*& data) {
    return layer->weight(layer_weight_number(name, -1, kEncoderNorms, kEncoderFfn), length, data);
  });
  return layer;
}
}  // namespace

TEST(EncoderLayer, MatchesPyTorchInEveryNormPlacement) {
  for (const auto& c : fixture()["encoderLayers"]) {
    auto layer = make_layer(c);
    const auto x = floats(c["x"]);
    const std::vector<int> dims = c["dims"];
    std::vector<uint8_t> keep;
    MultiHeadAttention::Inputs in;
    in.query = x.data(), in.query_length = static_cast<double>(x.size()), in.batch = dims[0], in.q_len = dims[1];
    in.causal = c["causal"];
    if (c.contains("attentionMask")) {
      keep = c["attentionMask"].get<std::vector<uint8_t>>();
      in.mask_kind = MaskKind::boolean, in.mask = keep.data(), in.mask_length = static_cast<double>(keep.size());
      in.mask_dims[0] = dims[0], in.mask_dims[3] = dims[1];
    }
    std::size_t n_out = 0, n_w = 0;
    ASSERT_TRUE(layer->prepare(in, n_out, n_w).ok()) << c["name"];
    std::vector<float> out(n_out);
    ASSERT_TRUE(layer->run(out.data(), nullptr, in).ok());
    EXPECT_LT(max_abs_diff(out, floats(c["out"])), 5e-5) << c["name"];
  }
}

TEST(EncoderLayer, RejectsBadConfigsAndWeights) {
  EncoderLayerConfig c;
  c.attention.dim = 8, c.attention.heads = 2, c.layer.ffn_dim = 0;
  std::unique_ptr<EncoderLayer> l;
  EXPECT_EQ(EncoderLayer::create(c, l).argument, "ffnDim");
  c.layer.ffn_dim = 16, c.layer.eps = -1;
  EXPECT_EQ(EncoderLayer::create(c, l).argument, "eps");
  c.layer.eps = 1e-5, c.layer.norm = NormKind::rms_norm;
  ASSERT_TRUE(EncoderLayer::create(c, l).ok());
  float* data = nullptr;
  EXPECT_EQ(l->weight(kEncoderNorms + 1, 8, data).argument, "norm1.bias");    // RMSNorm has no bias
  EXPECT_EQ(l->weight(kEncoderNorms + 4, 8, data).argument, "norm3.weight");  // only with sandwich
  EXPECT_EQ(l->weight(kEncoderFfn, 127, data).code, Code::shape_mismatch);
  std::vector<float> x(16);
  MultiHeadAttention::Inputs in;
  in.query = x.data(), in.query_length = 16, in.batch = 1, in.q_len = 2;
  std::size_t n_out = 0, n_w = 0;
  EXPECT_EQ(l->prepare(in, n_out, n_w).argument, "linear1.weight");
}

TEST(EncoderLayer, InOutLayoutTakesOnlyTheFusedProjection) {
  EncoderLayerConfig c;
  c.attention.dim = 6, c.attention.heads = 2, c.attention.layout = WeightLayout::in_out, c.layer.ffn_dim = 8;
  std::unique_ptr<EncoderLayer> l;
  ASSERT_TRUE(EncoderLayer::create(c, l).ok());
  float* data = nullptr;
  EXPECT_EQ(l->weight(0, 36, data).argument, "qWeight");  // q/k/v columns interleave in c_attn
  EXPECT_TRUE(l->weight(3, 108, data).ok());
  EXPECT_EQ(l->weight(kEncoderFfn + 4, 48, data).argument, "gate.weight");  // not gated
}

namespace {
std::unique_ptr<DecoderLayer> make_decoder(const nlohmann::json& c) {
  DecoderLayerConfig config{mha_config(c["config"]), mha_config(c["config"]), layer_settings(c["config"])};
  std::unique_ptr<DecoderLayer> layer;
  Status s = DecoderLayer::create(config, layer);
  EXPECT_TRUE(s.ok()) << s.message;
  load_weights(c["weights"], [&](const std::string& name, double length, float*& data) {
    return layer->weight(layer_weight_number(name, kDecoderCross, kDecoderNorms, kDecoderFfn), length, data);
  });
  return layer;
}
}  // namespace

TEST(DecoderLayer, MatchesTorchTransformerDecoderLayer) {
  for (const auto& c : fixture()["decoderLayers"]) {
    auto layer = make_decoder(c);
    const auto x = floats(c["x"]), memory = floats(c["memory"]);
    const std::vector<int> dims = c["dims"], mdims = c["memoryDims"];
    const auto keep = c["memoryMask"].get<std::vector<uint8_t>>();
    DecoderLayer::Inputs in;
    in.self.query = x.data(), in.self.query_length = static_cast<double>(x.size());
    in.self.batch = dims[0], in.self.q_len = dims[1], in.self.causal = true, in.self.want_weights = true;
    in.cross.key = in.cross.value = memory.data();
    in.cross.key_length = in.cross.value_length = static_cast<double>(memory.size()), in.cross.kv_len = mdims[1];
    in.cross.mask_kind = MaskKind::boolean, in.cross.mask = keep.data(), in.cross.mask_length = static_cast<double>(keep.size());
    in.cross.mask_dims[0] = mdims[0], in.cross.mask_dims[3] = mdims[1];
    std::size_t n_out = 0, n_w = 0;
    ASSERT_TRUE(layer->prepare(in, n_out, n_w).ok()) << c["name"];
    EXPECT_EQ(n_w, static_cast<std::size_t>(dims[0] * 2 * dims[1] * (dims[1] + mdims[1])));
    std::vector<float> out(n_out), w(n_w);
    ASSERT_TRUE(layer->run(out.data(), w.data(), in).ok());
    EXPECT_LT(max_abs_diff(out, floats(c["out"])), 5e-5) << c["name"];
    // Cross weights of batch 1 put nothing on its two padded memory positions.
    const std::size_t cross = static_cast<std::size_t>(dims[0] * 2 * dims[1] * dims[1]);
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < dims[1]; ++i)
        for (int j = 4; j < 6; ++j) EXPECT_EQ(w[cross + ((1 * 2 + h) * dims[1] + i) * 6 + j], 0.f);
  }
}

TEST(DecoderLayer, CachedDecodingMatchesTheFullPass) {
  const auto& c = fixture()["decoderLayers"][1];
  auto full = make_decoder(c), step = make_decoder(c);
  const auto x = floats(c["x"]), memory = floats(c["memory"]);
  const int B = 2, L = 4, D = c["dims"][2], Lm = 6;
  DecoderLayer::Inputs in;
  in.self.batch = B, in.self.causal = true;
  in.cross.key = in.cross.value = memory.data(), in.cross.key_length = in.cross.value_length = memory.size();
  in.cross.kv_len = Lm;
  in.self.query = x.data(), in.self.query_length = x.size(), in.self.q_len = L;
  std::size_t n_out = 0, n_w = 0;
  ASSERT_TRUE(full->prepare(in, n_out, n_w).ok());
  std::vector<float> want(n_out);
  ASSERT_TRUE(full->run(want.data(), nullptr, in).ok());
  in.self.use_cache = true, in.self.q_len = 1, in.self.query_length = B * D;
  for (int t = 0; t < L; ++t) {
    std::vector<float> xt(B * D), got(B * D);
    for (int b = 0; b < B; ++b) std::copy_n(x.begin() + (b * L + t) * D, D, xt.begin() + b * D);
    in.self.query = xt.data();
    ASSERT_TRUE(step->prepare(in, n_out, n_w).ok());
    ASSERT_TRUE(step->run(got.data(), nullptr, in).ok());
    for (int b = 0; b < B; ++b)
      for (int d = 0; d < D; ++d) EXPECT_NEAR(got[b * D + d], want[(b * L + t) * D + d], 5e-5) << "step " << t;
  }
  EXPECT_EQ(step->self_attention().cache_length(), L);
}

TEST(DecoderLayer, RejectsMissingMemoryAndBadConfigs) {
  DecoderLayerConfig c;
  c.self_attention.dim = 8, c.self_attention.heads = 2, c.layer.ffn_dim = 16;
  c.cross_attention = c.self_attention;
  c.cross_attention.dim = 6;
  std::unique_ptr<DecoderLayer> l;
  EXPECT_EQ(DecoderLayer::create(c, l).argument, "crossAttention.dim");
  c.cross_attention.dim = 8, c.cross_attention.positional = PositionalBias::alibi;
  EXPECT_EQ(DecoderLayer::create(c, l).argument, "crossAttention.positional");
  c.cross_attention.positional = PositionalBias::none;
  ASSERT_TRUE(DecoderLayer::create(c, l).ok());
  float* data = nullptr;
  EXPECT_EQ(l->weight(kDecoderNorms + 6, 8, data).argument, "norm4.weight");  // only with sandwich
  EXPECT_EQ(l->weight(kDecoderCross + 3, 100, data).argument, "inProjWeight");
  std::vector<float> x(16);
  DecoderLayer::Inputs in;
  in.self.query = x.data(), in.self.query_length = 16, in.self.batch = 1, in.self.q_len = 2;
  std::size_t n_out = 0, n_w = 0;
  EXPECT_EQ(l->prepare(in, n_out, n_w).argument, "linear1.weight");
  std::vector<float> w1(16 * 8), w2(8 * 16);
  ASSERT_TRUE(l->weight(kDecoderFfn, 128, data).ok());
  ASSERT_TRUE(l->weight(kDecoderFfn + 2, 128, data).ok());
  ASSERT_TRUE(l->weight(3, 3 * 64, data).ok() && l->weight(4, 64, data).ok());
  ASSERT_TRUE(l->weight(kDecoderCross + 3, 3 * 64, data).ok() && l->weight(kDecoderCross + 4, 64, data).ok());
  EXPECT_EQ(l->prepare(in, n_out, n_w).argument, "memory");
}

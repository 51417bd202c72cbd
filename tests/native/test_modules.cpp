// Linear (both weight layouts) and the MultiHeadAttention module: scalar reference vs xsimd on
// awkward sizes, both against PyTorch (torch.nn.Linear, GPT-2's Conv1D as addmm,
// torch.nn.MultiheadAttention, LLaMA attention written out), the KV cache against a full pass.
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attnkit/linear.hpp"
#include "attnkit/multi_head_attention.hpp"
#include "attnkit/activation.hpp"
#include "attnkit/encoder_layer.hpp"
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
        auto fn = simd ? simd::linear : ref::linear;
        fn(y.data(), x.data(), rows, n_in, n_out, w.data(), static_cast<WeightLayout>(layout), bias ? b.data() : nullptr);
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
            simd::linear(s.data(), x.data(), rows, n_in, n_out, w.data(), lay, bias ? b.data() : nullptr);
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

std::unique_ptr<MultiHeadAttention> make_module(const nlohmann::json& c) {
  const auto& cfg = c["config"];
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
  std::unique_ptr<MultiHeadAttention> m;
  Status s = MultiHeadAttention::create(config, m);
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

// Decoding with the cache, a prefix and then one token at a time, gives the rows of one full
// causal pass (LLaMA case: RoPE positions continue from the cache length).
TEST(MultiHeadAttention, KvCacheMatchesFullPass) {
  for (const auto& c : fixture()["mha"]) {
    if (!c.value("causal", false)) continue;
    auto m = make_module(c);
    const auto query = floats(c["query"]);
    const std::vector<int> dims = c["dims"];
    const int B = dims[0], L = dims[1], D = dims[2];
    const auto expected = floats(c["out"]);
    std::vector<float> got(expected.size());
    int done = 0;
    for (int step : {L - 3, 1, 1, 1}) {
      std::vector<float> chunk;
      for (int b = 0; b < B; ++b)
        chunk.insert(chunk.end(), query.begin() + (static_cast<std::size_t>(b) * L + done) * D,
                     query.begin() + (static_cast<std::size_t>(b) * L + done + step) * D);
      MultiHeadAttention::Inputs in;
      in.query = chunk.data();
      in.query_length = static_cast<double>(chunk.size());
      in.batch = B, in.q_len = step, in.causal = true, in.use_cache = true;
      std::size_t n_out = 0, n_w = 0;
      ASSERT_TRUE(m->prepare(in, n_out, n_w).ok());
      std::vector<float> out(n_out);
      ASSERT_TRUE(m->run(out.data(), nullptr, in).ok());
      for (int b = 0; b < B; ++b)
        std::copy(out.begin() + static_cast<std::size_t>(b) * step * D, out.begin() + static_cast<std::size_t>(b + 1) * step * D,
                  got.begin() + (static_cast<std::size_t>(b) * L + done) * D);
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
  const char* names[] = {"relu", "gelu", "gelu_tanh"};
  for (int k = 0; k < 3; ++k) {
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
std::unique_ptr<EncoderLayer> make_layer(const nlohmann::json& c) {
  const auto& cfg = c["config"];
  EncoderLayerConfig config;
  config.attention.dim = cfg["dim"];
  config.attention.heads = cfg["numHeads"];
  config.attention.bias = config.attention.out_bias = cfg.value("bias", true);
  config.ffn_dim = cfg["ffnDim"];
  const std::string act = cfg["activation"], place = cfg["normPlacement"];
  config.activation = act == "relu" ? Activation::relu : act == "gelu" ? Activation::gelu : Activation::gelu_tanh;
  config.placement = place == "post" ? NormPlacement::post : place == "pre" ? NormPlacement::pre : NormPlacement::sandwich;
  config.norm = cfg.value("norm", "layernorm") == "rmsnorm" ? NormKind::rms_norm : NormKind::layer_norm;
  config.eps = cfg.value("eps", 1e-5);
  config.ffn_bias = cfg.value("ffnBias", true);
  std::unique_ptr<EncoderLayer> layer;
  Status s = EncoderLayer::create(config, layer);
  EXPECT_TRUE(s.ok()) << s.message;
  static const std::map<std::string, int> names{
      {"self_attn.in_proj_weight", 3}, {"self_attn.in_proj_bias", 8}, {"self_attn.out_proj.weight", 4},
      {"self_attn.out_proj.bias", 9},  {"norm1.weight", 10},          {"norm1.bias", 11},
      {"norm2.weight", 12},            {"norm2.bias", 13},            {"norm3.weight", 14},
      {"norm3.bias", 15},              {"norm4.weight", 16},          {"norm4.bias", 17},
      {"linear1.weight", 18},          {"linear1.bias", 19},          {"linear2.weight", 20},
      {"linear2.bias", 21}};
  load_weights(c["weights"], [&](const std::string& name, double length, float*& data) {
    return layer->weight(names.at(name), length, data);
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
  c.attention.dim = 8, c.attention.heads = 2, c.ffn_dim = 0;
  std::unique_ptr<EncoderLayer> l;
  EXPECT_EQ(EncoderLayer::create(c, l).argument, "ffnDim");
  c.ffn_dim = 16, c.eps = -1;
  EXPECT_EQ(EncoderLayer::create(c, l).argument, "eps");
  c.eps = 1e-5, c.norm = NormKind::rms_norm;
  ASSERT_TRUE(EncoderLayer::create(c, l).ok());
  float* data = nullptr;
  EXPECT_EQ(l->weight(11, 8, data).argument, "norm1.bias");    // RMSNorm has no bias
  EXPECT_EQ(l->weight(14, 8, data).argument, "norm3.weight");  // only with sandwich
  EXPECT_EQ(l->weight(18, 127, data).code, Code::shape_mismatch);
  std::vector<float> x(16);
  MultiHeadAttention::Inputs in;
  in.query = x.data(), in.query_length = 16, in.batch = 1, in.q_len = 2;
  std::size_t n_out = 0, n_w = 0;
  EXPECT_EQ(l->prepare(in, n_out, n_w).argument, "linear1.weight");
}

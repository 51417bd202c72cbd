// Attention, masks, ALiBi and RoPE: against PyTorch (explicit softmax(QK^T * scale + mask) V,
// BLOOM's ALiBi, Hugging Face's RoPE formulas), the tiled xsimd kernel against the scalar
// reference on awkward sizes, and the argument checks.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "attnkit/ops/alibi.hpp"
#include "attnkit/ops/attention.hpp"
#include "attnkit/core/parallel.hpp"
#include "attnkit/ops/mask.hpp"
#include "attnkit/ops/rotary.hpp"
#include "fixtures.hpp"

using namespace attnkit;
using attnkit_test::floats;

namespace {


// |got - want| <= atol + rtol |want| elementwise (NaN fails); returns the first bad index or -1.
long first_mismatch(const std::vector<float>& got, const std::vector<float>& want, double atol = 2e-5,
                    double rtol = 1e-4) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i]))) return static_cast<long>(i);
  return -1;
}

Heads<const float> contiguous_in(const std::vector<float>& v, int heads, int len, int dim) {
  return {v.data(), static_cast<std::size_t>(heads) * len * dim, static_cast<std::size_t>(len) * dim,
          static_cast<std::size_t>(dim)};
}
Heads<float> contiguous_out(std::vector<float>& v, int heads, int len, int dim) {
  return {v.data(), static_cast<std::size_t>(heads) * len * dim, static_cast<std::size_t>(len) * dim,
          static_cast<std::size_t>(dim)};
}

// One attention problem with its buffers; run() by the reference, the SIMD kernel or the entry.
struct Problem {
  AttentionShape s;
  std::vector<float> q, k, v, out, weights, slopes;
  std::vector<uint8_t> bool_mask;
  std::vector<float> add_mask;
  AttentionArgs args;

  void finish(bool want_weights) {
    out.assign(static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.v_dim, 7.f);  // garbage to overwrite
    if (want_weights) weights.assign(static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.kv_len, 7.f);
    args.shape = s;
    args.q = contiguous_in(q, s.heads, s.q_len, s.head_dim);
    args.k = contiguous_in(k, s.kv_heads, s.kv_len, s.head_dim);
    args.v = contiguous_in(v, s.kv_heads, s.kv_len, s.v_dim);
    args.out = contiguous_out(out, s.heads, s.q_len, s.v_dim);
    args.weights = want_weights ? weights.data() : nullptr;
    args.alibi = slopes.empty() ? nullptr : slopes.data();
    if (args.mask.kind == MaskKind::boolean) args.mask.data = bool_mask.data();
    if (args.mask.kind == MaskKind::additive) args.mask.data = add_mask.data();
  }
  void run_ref() {
    std::fill(out.begin(), out.end(), 7.f);
    ref::attention(args);
  }
  void run_simd() {
    std::fill(out.begin(), out.end(), 7.f);
    std::vector<float> scratch(attention_scratch_floats(s, args.weights != nullptr, thread_count()));
    simd::attention(args, scratch.data());
  }
};

Problem from_fixture(const nlohmann::json& c, bool want_weights) {
  Problem p;
  const auto d = c["dims"].get<std::vector<int>>();
  p.s = {d[0], d[1], d[2], d[3], d[4], d[5], d[6]};
  p.q = floats(c["q"]);
  p.k = floats(c["k"]);
  p.v = floats(c["v"]);
  p.args.scale = c.contains("scale") ? c["scale"].get<float>() : 1.f / std::sqrt(static_cast<float>(d[5]));
  p.args.causal = c["causal"];
  if (c["alibi"].get<bool>()) {
    p.slopes.resize(d[1]);
    EXPECT_TRUE(alibi_slopes(p.slopes.data(), d[1]).ok());
  }
  if (c.contains("mask")) {
    const auto& m = c["mask"];
    auto md = m["dims"].get<std::vector<double>>();
    while (md.size() < 4) md.insert(md.begin(), 1.0);
    const bool boolean = m["type"] == "bool";
    if (boolean) {
      for (int x : m["data"].get<std::vector<int>>()) p.bool_mask.push_back(static_cast<uint8_t>(x));
    } else {
      for (const auto& x : m["data"])  // null stands for -inf (JSON has no infinities)
        p.add_mask.push_back(x.is_null() ? -std::numeric_limits<float>::infinity() : x.get<float>());
    }
    const double n = static_cast<double>(boolean ? p.bool_mask.size() : p.add_mask.size());
    const Status s = check_attention_mask(boolean ? MaskKind::boolean : MaskKind::additive, md.data(), n, p.s, p.args.mask);
    EXPECT_TRUE(s.ok()) << s.message;
  }
  p.finish(want_weights);
  return p;
}

}  // namespace

TEST(Attention, MatchesPyTorchReferenceAndSimd) {
  const auto fx = attnkit_test::load_fixture("attention.json");
  for (const auto& c : fx["cases"]) {
    const bool has_weights = c.contains("weights");
    for (int path = 0; path < 2; ++path) {
      for (bool want_weights : {false, true}) {
        if (want_weights && !has_weights) continue;
        Problem p = from_fixture(c, want_weights);
        path == 0 ? p.run_ref() : p.run_simd();
        const char* which = path == 0 ? "ref" : "simd";
        EXPECT_EQ(first_mismatch(p.out, floats(c["out"])), -1) << c["name"] << " " << which << " weights=" << want_weights;
        if (want_weights) EXPECT_EQ(first_mismatch(p.weights, floats(c["weights"])), -1) << c["name"] << " " << which;
      }
    }
  }
}

TEST(Attention, FullyMaskedRowsAreZeroNotNaN) {
  // Every key of query 2 masked; and with causal and Lq > Lk, the first queries see no key.
  const auto fx = attnkit_test::load_fixture("attention.json");
  for (const auto& c : fx["cases"]) {
    if (c["name"] != "fully-masked-row" && c["name"] != "query-longer-than-keys-causal") continue;
    for (int path = 0; path < 2; ++path) {
      Problem p = from_fixture(c, true);
      path == 0 ? p.run_ref() : p.run_simd();
      for (float x : p.out) ASSERT_FALSE(std::isnan(x));
      for (float x : p.weights) ASSERT_FALSE(std::isnan(x));
      if (c["name"] == "fully-masked-row") {
        for (int h = 0; h < 2; ++h)
          for (int e = 0; e < 3; ++e) EXPECT_EQ(p.out[(h * 4 + 2) * 3 + e], 0.f);
      }
    }
  }
}

// The tiled kernel against the reference across tile, vector and block boundaries.
// Gemma 2's attn_logit_softcapping: scores become c tanh(s / c) before the masks. The reference
// against the formula written out, and the SIMD kernel (which caps in log2 units) against the
// reference on awkward sizes, causal and bidirectional, with and without the weights.
TEST(Attention, SoftcapIsCTanhOfTheScaledScoresAndTheKernelsAgree) {
  unsigned seed = 500;
  {
    Problem p;
    p.s = {1, 1, 1, 3, 3, 2, 2};
    p.q = {3, -1, 0.5f, 2, -2, 4};
    p.k = {1, 2, -3, 1, 2, -1};
    p.v = {1, 0, 0, 1, 1, 1};
    p.args.scale = 0.7f, p.args.softcap = 1.5f;
    p.finish(true);
    p.run_ref();
    for (int i = 0; i < 3; ++i) {
      float e[3], sum = 0;
      for (int j = 0; j < 3; ++j) {
        const float dot = p.q[2 * i] * p.args.scale * p.k[2 * j] + p.q[2 * i + 1] * p.args.scale * p.k[2 * j + 1];
        sum += e[j] = std::exp(1.5f * std::tanh(dot / 1.5f));
      }
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(p.weights[3 * i + j], e[j] / sum, 1e-6) << i << "," << j;
    }
  }
  for (int lk : {1, 3, 17, 65, 513}) {  // 513: past one 512-key tile
    for (int d : {1, 7, 65}) {
      for (bool causal : {true, false}) {
        Problem p;
        p.s = {2, 4, 2, lk, lk, d, d};
        p.q = attnkit_test::random_normal(static_cast<std::size_t>(2) * 4 * lk * d, seed++);
        p.k = attnkit_test::random_normal(static_cast<std::size_t>(2) * 2 * lk * d, seed++);
        p.v = attnkit_test::random_normal(static_cast<std::size_t>(2) * 2 * lk * d, seed++);
        p.args.scale = 2.f / std::sqrt(static_cast<float>(d));  // scores beyond the cap
        p.args.causal = causal, p.args.softcap = 2.f;
        for (bool w : {false, true}) {
          p.finish(w);
          p.run_ref();
          const std::vector<float> want = p.out, want_w = p.weights;
          p.run_simd();
          ASSERT_EQ(first_mismatch(p.out, want, 2e-5, 2e-4), -1) << "Lk=" << lk << " d=" << d << " causal=" << causal;
          if (w) ASSERT_EQ(first_mismatch(p.weights, want_w, 1e-6, 2e-4), -1) << "Lk=" << lk << " d=" << d;
        }
      }
    }
  }
}

TEST(Attention, SimdMatchesReferenceOnAwkwardSizes) {
  unsigned seed = 1;
  const std::vector<int> lengths{1, 3, 4, 5, 7, 17, 63, 65, 129, 257, 513, 771};  // tiles: 512 keys
  const std::vector<int> dims{1, 3, 4, 5, 7, 17, 63, 65};
  for (int lk : lengths) {
    for (int d : dims) {
      for (int variant = 0; variant < 4; ++variant) {
        Problem p;
        const int lq = variant == 3 ? std::max(1, lk / 2) : lk;  // a cache: fewer queries than keys
        const int heads = variant == 1 ? 3 : 4, kv_heads = variant == 1 ? 1 : (variant == 2 ? 2 : 4);
        p.s = {variant == 0 ? 2 : 1, heads, kv_heads, lq, lk, d, variant == 2 ? d + 2 : d};
        p.q = attnkit_test::random_normal(static_cast<std::size_t>(p.s.batch) * heads * lq * d, seed++);
        p.k = attnkit_test::random_normal(static_cast<std::size_t>(p.s.batch) * kv_heads * lk * d, seed++);
        p.v = attnkit_test::random_normal(static_cast<std::size_t>(p.s.batch) * kv_heads * lk * p.s.v_dim, seed++);
        p.args.scale = 1.f / std::sqrt(static_cast<float>(d));
        p.args.causal = variant != 2;
        if (variant == 1) {
          p.slopes.resize(heads);
          ASSERT_TRUE(alibi_slopes(p.slopes.data(), heads).ok());
        }
        if (variant == 2) {  // boolean [B, 1, Lq, Lk] with a dead row
          const double md[4] = {1, 1, static_cast<double>(lq), static_cast<double>(lk)};
          std::mt19937 rng(seed++);
          for (int i = 0; i < lq * lk; ++i) p.bool_mask.push_back((rng() % 4) != 0);
          for (int j = 0; j < lk; ++j) p.bool_mask[j] = 0;
          ASSERT_TRUE(check_attention_mask(MaskKind::boolean, md, lq * lk, p.s, p.args.mask).ok());
        }
        if (variant == 3) {  // additive [Lk] with a -inf
          const double md[4] = {1, 1, 1, static_cast<double>(lk)};
          p.add_mask = attnkit_test::random_normal(lk, seed++);
          p.add_mask[lk / 2] = -std::numeric_limits<float>::infinity();
          ASSERT_TRUE(check_attention_mask(MaskKind::additive, md, lk, p.s, p.args.mask).ok());
        }
        for (bool w : {false, true}) {
          p.finish(w);
          p.run_ref();
          const std::vector<float> want = p.out, want_w = p.weights;
          p.run_simd();
          ASSERT_EQ(first_mismatch(p.out, want, 2e-5, 2e-4), -1)
              << "Lk=" << lk << " d=" << d << " variant=" << variant << " weights=" << w;
          if (w) ASSERT_EQ(first_mismatch(p.weights, want_w, 1e-6, 2e-4), -1) << "Lk=" << lk << " d=" << d;
        }
      }
    }
  }
}

// Long rows (K and V of a head past 768 KB) take the path where 4 query blocks share each tile.
TEST(Attention, SimdMatchesReferenceOnLongRowsWithSharedTiles) {
  for (int variant = 0; variant < 2; ++variant) {
    Problem p;
    const int lk = 1601, lq = variant == 0 ? 203 : 77;
    p.s = {1, 2, 1, lq, lk, 65, 63};
    p.q = attnkit_test::random_normal(static_cast<std::size_t>(2) * lq * 65, 41 + variant);
    p.k = attnkit_test::random_normal(static_cast<std::size_t>(lk) * 65, 43 + variant);
    p.v = attnkit_test::random_normal(static_cast<std::size_t>(lk) * 63, 45 + variant);
    p.args.scale = 0.125f;
    p.args.causal = variant == 0;
    if (variant == 1) {
      const double md[4] = {1, 1, 1, static_cast<double>(lk)};
      p.add_mask = attnkit_test::random_normal(lk, 47);
      p.add_mask[1000] = -std::numeric_limits<float>::infinity();
      ASSERT_TRUE(check_attention_mask(MaskKind::additive, md, lk, p.s, p.args.mask).ok());
      p.slopes = {0.5f, 0.25f};
    }
    p.finish(false);
    p.run_ref();
    const std::vector<float> want = p.out;
    p.run_simd();
    EXPECT_EQ(first_mismatch(p.out, want, 2e-5, 2e-4), -1) << "variant " << variant;
  }
}

// Projections store [B, L, H*d]: attention reads heads in place through strides.
TEST(Attention, StridedHeadsMatchContiguous) {
  const int B = 2, H = 3, L = 9, d = 5;
  Problem p;
  p.s = {B, H, H, L, L, d, d};
  p.q = attnkit_test::random_normal(B * H * L * d, 11);
  p.k = attnkit_test::random_normal(B * H * L * d, 12);
  p.v = attnkit_test::random_normal(B * H * L * d, 13);
  p.args.scale = 0.4f;
  p.args.causal = true;
  p.finish(false);
  p.run_simd();
  // Same numbers laid out [B, L, H, d].
  auto relayout = [&](const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h)
        for (int l = 0; l < L; ++l)
          for (int e = 0; e < d; ++e) y[((b * L + l) * H + h) * d + e] = x[((b * H + h) * L + l) * d + e];
    return y;
  };
  const auto q2 = relayout(p.q), k2 = relayout(p.k), v2 = relayout(p.v);
  std::vector<float> out2(p.out.size());
  AttentionArgs a = p.args;
  const std::size_t bs = static_cast<std::size_t>(L) * H * d;
  a.q = {q2.data(), bs, static_cast<std::size_t>(d), static_cast<std::size_t>(H * d)};
  a.k = {k2.data(), bs, static_cast<std::size_t>(d), static_cast<std::size_t>(H * d)};
  a.v = {v2.data(), bs, static_cast<std::size_t>(d), static_cast<std::size_t>(H * d)};
  a.out = {out2.data(), bs, static_cast<std::size_t>(d), static_cast<std::size_t>(H * d)};
  ASSERT_TRUE(attention(a).ok());
  EXPECT_EQ(first_mismatch(out2, relayout(p.out), 1e-6, 1e-5), -1);
}

TEST(Attention, RejectsBadShapes) {
  AttentionShape s;
  Status st = check_attention_shape(1, 6, 4, 3, 3, 8, 8, s);
  EXPECT_EQ(st.code, Code::shape_mismatch);
  EXPECT_NE(st.message.find("multiple"), std::string::npos) << st.message;
  EXPECT_EQ(check_attention_shape(1, 2.5, 1, 3, 3, 8, 8, s).code, Code::invalid_argument);
  EXPECT_EQ(check_attention_shape(1, 2, 1, 3, 3, 0, 8, s).argument, "headDim");
  EXPECT_EQ(check_attention_shape(1, 64, 64, 65536, 65536, 4096, 4096, s).code, Code::out_of_range);
  ASSERT_TRUE(check_attention_shape(2, 4, 2, 3, 5, 8, 8, s).ok());
  MaskView m;
  const double bad[4] = {2, 1, 2, 5};
  st = check_attention_mask(MaskKind::boolean, bad, 20, s, m);
  EXPECT_EQ(st.code, Code::shape_mismatch);
  EXPECT_EQ(st.argument, "mask.dims");
  const double good[4] = {2, 1, 1, 5};
  EXPECT_EQ(check_attention_mask(MaskKind::boolean, good, 9, s, m).argument, "mask");
  EXPECT_TRUE(check_attention_mask(MaskKind::boolean, good, 10, s, m).ok());
}

TEST(Masks, PaddingCausalCombine) {
  const auto fx = attnkit_test::load_fixture("attention.json");
  const auto& pm = fx["masks"]["padding"];
  std::vector<int32_t> ids;
  for (const auto& row : pm["ids"]) for (int x : row) ids.push_back(x);
  std::vector<uint8_t> out(ids.size());
  ASSERT_TRUE(padding_mask(out.data(), ids.data(), ids.size(), pm["padId"]).ok());
  EXPECT_EQ(std::vector<int>(out.begin(), out.end()), pm["out"].get<std::vector<int>>());
  for (const auto& c : fx["masks"]["causal"]) {
    std::vector<uint8_t> m(c["q"].get<int>() * c["k"].get<int>());
    ASSERT_TRUE(check_causal_mask(c["q"], c["k"]).ok());
    causal_mask(m.data(), c["q"], c["k"]);
    EXPECT_EQ(std::vector<int>(m.begin(), m.end()), c["out"].get<std::vector<int>>());
  }
  // pad [2,1,1,4] AND causal [4,4] -> [2,1,4,4]
  std::vector<uint8_t> causal(16);
  causal_mask(causal.data(), 4, 4);
  const double ad[4] = {2, 1, 1, 4}, bd[4] = {1, 1, 4, 4};
  int od[4];
  ASSERT_TRUE(check_combine_masks(ad, 8, bd, 16, od).ok());
  EXPECT_EQ(std::vector<int>(od, od + 4), (std::vector<int>{2, 1, 4, 4}));
  std::vector<uint8_t> both(32);
  MaskOperand a{MaskKind::boolean, out.data(), {2, 1, 1, 4}}, b{MaskKind::boolean, causal.data(), {1, 1, 4, 4}};
  combine_masks(both.data(), a, b, od);
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(both[(bb * 4 + i) * 4 + j], out[bb * 4 + j] && j <= i);
  // With an additive operand the result is additive.
  std::vector<float> add{0.5f, -1.f, 0.f, 2.f}, sum(32);
  MaskOperand fa{MaskKind::additive, add.data(), {1, 1, 1, 4}};
  const double fd[4] = {1, 1, 1, 4};
  ASSERT_TRUE(check_combine_masks(fd, 4, ad, 8, od).ok());
  combine_masks(sum.data(), fa, a, od);
  EXPECT_EQ(sum[0], 0.5f);
  EXPECT_EQ(sum[2], -std::numeric_limits<float>::infinity());  // ids[0][2] is padding
  const double wrong[4] = {1, 1, 3, 4};
  EXPECT_EQ(check_combine_masks(wrong, 12, bd, 16, od).code, Code::shape_mismatch);
  std::vector<int32_t> am{1, 1, 2};
  EXPECT_EQ(padding_mask_from_attention_mask(out.data(), am.data(), 3).argument, "attentionMask[2]");
}

TEST(Alibi, SlopesMatchBloom) {
  const auto fx = attnkit_test::load_fixture("attention.json");
  for (const auto& [n, want] : fx["alibiSlopes"].items()) {
    std::vector<float> got(std::stoi(n));
    ASSERT_TRUE(alibi_slopes(got.data(), std::stoi(n)).ok());
    EXPECT_EQ(first_mismatch(got, floats(want), 0, 1e-6), -1) << n << " heads";
  }
  float x;
  EXPECT_EQ(alibi_slopes(&x, 0).argument, "numHeads");
}

namespace {
RotaryConfig rotary_config_of(const nlohmann::json& c, int d) {
  RotaryConfig r;
  r.head_dim = d;
  r.rotary_dim = c["rotaryDim"];
  r.base = c["base"];
  r.layout = c["layout"] == "half" ? RotaryLayout::half : RotaryLayout::interleaved;
  const auto& s = c["scaling"];
  const std::string t = s.value("type", "none");
  r.scaling = t == "linear" ? RotaryScaling::linear : t == "dynamic" ? RotaryScaling::dynamic
              : t == "yarn" ? RotaryScaling::yarn : t == "llama3" ? RotaryScaling::llama3 : RotaryScaling::none;
  r.factor = s.value("factor", 1.0);
  r.original_max_positions = s.value("originalMaxPositions", 0.0);
  r.low_freq_factor = s.value("lowFreqFactor", 1.0);
  r.high_freq_factor = s.value("highFreqFactor", 4.0);
  r.beta_fast = s.value("betaFast", 32.0);
  r.beta_slow = s.value("betaSlow", 1.0);
  r.mscale = s.value("mscale", 0.0);
  r.mscale_all_dim = s.value("mscaleAllDim", 0.0);
  return r;
}
}  // namespace

TEST(Rotary, MatchesHuggingFaceFormulas) {
  const auto fx = attnkit_test::load_fixture("rotary.json");
  for (const auto& c : fx["cases"]) {
    const auto d = c["dims"].get<std::vector<int>>();
    const RotaryConfig cfg = rotary_config_of(c, d[3]);
    ASSERT_TRUE(check_rotary(cfg).ok()) << c["name"];
    const auto positions = c["positions"].get<std::vector<int32_t>>();
    const bool per_batch = c["perBatch"];
    int maxp = 0;
    for (int p : positions) maxp = std::max(maxp, p);
    std::vector<float> inv(cfg.rotary_dim / 2);
    float att = 0;
    rotary_frequencies(cfg, maxp + 1.0, inv.data(), att);
    EXPECT_EQ(first_mismatch(inv, floats(c["invFreq"]), 0, 2e-6), -1) << c["name"];
    const auto x = floats(c["x"]);
    for (int path = 0; path < 3; ++path) {
      std::vector<float> out(x.size(), 7.f);
      const auto xin = contiguous_in(x, d[1], d[2], d[3]);
      const auto o = contiguous_out(out, d[1], d[2], d[3]);
      if (path == 2) {
        ASSERT_TRUE(rotary(o, xin, d[0], d[1], d[2], positions.data(), per_batch, cfg).ok());
      } else {
        const int rd = static_cast<int>(cfg.rotary_dim);
        const std::size_t count = positions.size();
        std::vector<float> C(count * rd), S(count * rd);
        rotary_tables(cfg, inv.data(), att, positions.data(), count, C.data(), S.data());
        (path == 0 ? ref::rotary_rows : simd::rotary_rows)(o, xin, d[0], d[1], d[2], per_batch, C.data(), S.data(),
                                                            rd, d[3], cfg.layout);
      }
      EXPECT_EQ(first_mismatch(out, floats(c["out"]), 2e-5, 1e-4), -1) << c["name"] << " path " << path;
    }
  }
}

TEST(Rotary, SimdMatchesReferenceOnAwkwardSizesAndInPlace) {
  for (int rd_half : {1, 3, 4, 5, 7, 17, 63, 65, 771}) {
    for (auto layout : {RotaryLayout::half, RotaryLayout::interleaved}) {
      RotaryConfig c;
      c.rotary_dim = 2 * rd_half;
      c.head_dim = 2 * rd_half + 3;
      c.layout = layout;
      const int d = static_cast<int>(c.head_dim), L = 5;
      const auto x = attnkit_test::random_normal(2 * L * d, rd_half);
      std::vector<int32_t> pos{0, 4, 9, 100, 7};
      std::vector<float> a(x.size()), b(x.size()), inplace = x;
      ASSERT_TRUE(rotary(contiguous_out(a, 2, L, d), contiguous_in(x, 2, L, d), 1, 2, L, pos.data(), false, c).ok());
      std::vector<float> inv(rd_half), C(L * 2 * rd_half), S(L * 2 * rd_half);
      float att;
      rotary_frequencies(c, 101, inv.data(), att);
      rotary_tables(c, inv.data(), att, pos.data(), L, C.data(), S.data());
      ref::rotary_rows(contiguous_out(b, 2, L, d), contiguous_in(x, 2, L, d), 1, 2, L, false, C.data(), S.data(),
                       2 * rd_half, d, layout);
      EXPECT_EQ(first_mismatch(a, b, 1e-6, 1e-6), -1) << "rd=" << 2 * rd_half;
      const Heads<float> ip = contiguous_out(inplace, 2, L, d);
      ASSERT_TRUE(rotary(ip, {ip.data, ip.batch_stride, ip.head_stride, ip.row_stride}, 1, 2, L, pos.data(), false, c).ok());
      EXPECT_EQ(first_mismatch(inplace, b, 1e-6, 1e-6), -1) << "in place, rd=" << 2 * rd_half;
    }
  }
}

TEST(Rotary, RejectsBadConfigsAndPositions) {
  RotaryConfig c;
  c.head_dim = 8;
  c.rotary_dim = 5;
  EXPECT_EQ(check_rotary(c).argument, "rotaryDim");
  c.rotary_dim = 10;
  EXPECT_EQ(check_rotary(c).code, Code::out_of_range);
  c.rotary_dim = 0;
  c.scaling = RotaryScaling::yarn;
  c.factor = 4;
  EXPECT_EQ(check_rotary(c).argument, "scaling.originalMaxPositions");
  c.scaling = RotaryScaling::llama3;
  c.original_max_positions = 64;
  c.low_freq_factor = 4;
  c.high_freq_factor = 1;
  EXPECT_EQ(check_rotary(c).argument, "scaling.highFreqFactor");
  c.scaling = RotaryScaling::none;
  std::vector<float> x(8), y(8);
  int32_t bad = -1;
  const Status s = rotary(contiguous_out(y, 1, 1, 8), contiguous_in(x, 1, 1, 8), 1, 1, 1, &bad, false, c);
  EXPECT_EQ(s.argument, "positions[0]");
}

// The attention input check's scan: xsimd against the reference on awkward row lengths, with a
// NaN or an infinity anywhere (the check must see it, not fold it into the maximum).
TEST(Attention, InputScanMatchesReference) {
  for (int n : {1, 3, 4, 5, 7, 17, 63, 65, 771}) {
    std::vector<float> x(static_cast<std::size_t>(3) * n);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * (1 + i % 5);
    const Heads<const float> v = contiguous<const float>(x.data(), 3, 1, n);
    EXPECT_EQ(simd::max_abs(v, 1, 3, 1, n), ref::max_abs(v, 1, 3, 1, n)) << n;
    for (float special : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
      for (std::size_t at : {std::size_t{0}, x.size() / 2, x.size() - 1}) {
        std::vector<float> y = x;
        y[at] = special;
        const Heads<const float> w = contiguous<const float>(y.data(), 3, 1, n);
        EXPECT_EQ(simd::max_abs(w, 1, 3, 1, n), std::numeric_limits<float>::infinity()) << n << " at " << at;
        EXPECT_EQ(ref::max_abs(w, 1, 3, 1, n), std::numeric_limits<float>::infinity()) << n << " at " << at;
      }
    }
  }
}

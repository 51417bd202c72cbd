#include <cmath>
#include <random>

#include "attnkit/ops/embedding.hpp"
#include "attnkit/ops/norm.hpp"
#include "fixtures.hpp"

using namespace attnkit;
using attnkit_test::floats;
using attnkit_test::max_abs_diff;

namespace {
const nlohmann::json& fx() {
  static const nlohmann::json j = attnkit_test::load_fixture("embedding.json");
  return j;
}
std::vector<int32_t> ints(const nlohmann::json& j) { return j.get<std::vector<int32_t>>(); }
double scale_of(const nlohmann::json& c) {
  if (c["scale"].is_null()) return 1.0;
  if (c["scale"].is_string()) return std::sqrt(c["dim"].get<double>());
  return c["scale"].get<double>();
}
}  // namespace

TEST(Embedding, LookupMatchesPyTorchExactly) {
  for (const auto& c : fx()["lookups"]) {
    const auto table = floats(c["table"]);
    const auto ids = ints(c["ids"]);
    const int dim = c["dim"];
    const auto want = floats(c["out"]);
    const float scale = static_cast<float>(scale_of(c));
    std::vector<float> r(want.size()), s(want.size()), api(want.size());
    ref::embedding(r.data(), ids.data(), ids.size(), table.data(), dim, scale);
    simd::embedding(s.data(), ids.data(), ids.size(), table.data(), dim, scale);
    ASSERT_TRUE(embedding(api.data(), ids.data(), ids.size(), table.data(), c["vocab"], dim, scale).ok());
    EXPECT_EQ(max_abs_diff(r, want), 0.0) << "dim=" << dim;  // a gather and one float multiply
    EXPECT_EQ(max_abs_diff(s, want), 0.0) << "dim=" << dim;
    EXPECT_EQ(max_abs_diff(api, want), 0.0) << "dim=" << dim;
  }
}

TEST(Embedding, SimdMatchesReferenceOnAwkwardSizes) {
  for (int dim : attnkit_test::awkward_sizes()) {
    const int vocab = 13;
    const auto table = attnkit_test::random_normal(static_cast<std::size_t>(vocab) * dim, dim);
    for (int n : {1, 3, 4, 5, 7, 17}) {
      std::vector<int32_t> ids(n);
      for (int t = 0; t < n; ++t) ids[t] = (t * 7 + dim) % vocab;
      for (float scale : {1.0f, std::sqrt(static_cast<float>(dim)), -0.5f}) {
        std::vector<float> r(static_cast<std::size_t>(n) * dim), s(r.size());
        ref::embedding(r.data(), ids.data(), n, table.data(), dim, scale);
        simd::embedding(s.data(), ids.data(), n, table.data(), dim, scale);
        EXPECT_EQ(max_abs_diff(r, s), 0.0) << "dim=" << dim << " n=" << n;
      }
      const int depth = dim > vocab ? dim : vocab;
      std::vector<float> r(static_cast<std::size_t>(n) * depth), s(r.size());
      ref::one_hot(r.data(), ids.data(), n, depth);
      simd::one_hot(s.data(), ids.data(), n, depth);
      EXPECT_EQ(r, s);
    }
  }
}

TEST(Embedding, OneHotMatchesPyTorch) {
  for (const auto& c : fx()["oneHot"]) {
    const auto ids = ints(c["ids"]);
    const auto want = floats(c["out"]);
    std::vector<float> out(want.size(), -1);
    ASSERT_TRUE(one_hot(out.data(), ids.data(), ids.size(), c["depth"]).ok());
    EXPECT_EQ(out, want);
  }
}

TEST(Embedding, MaxNormRenormalisesReferencedRowsLikePyTorch) {
  for (const auto& c : fx()["renorms"]) {
    auto table = floats(c["table"]);
    const auto ids = ints(c["ids"]);
    const int dim = c["dim"], vocab = c["vocab"];
    const double norm_type = c["normType"].is_string() ? INFINITY : c["normType"].get<double>();
    ASSERT_TRUE(embedding_renorm(table.data(), vocab, dim, ids.data(), ids.size(), c["maxNorm"], norm_type).ok());
    EXPECT_LT(max_abs_diff(table, floats(c["tableAfter"])), 1e-6) << "normType=" << c["normType"];
    std::vector<float> out(ids.size() * dim);
    ASSERT_TRUE(embedding(out.data(), ids.data(), ids.size(), table.data(), vocab, dim, 1.0f).ok());
    EXPECT_LT(max_abs_diff(out, floats(c["out"])), 1e-6);
  }
}

// LayerNorm / RMSNorm tolerance: 2e-5 absolute on outputs of order 1 (PyTorch accumulates in
// float32 in a different order), and 2e-5 * |mean| / std for rows offset by a large mean, where the
// float32 inputs themselves carry that much rounding relative to their spread.
TEST(Norm, LayerNormAndRmsNormMatchPyTorch) {
  for (const auto& c : fx()["norms"]) {
    const int rows = c["rows"], dim = c["dim"];
    const double eps = c["eps"];
    const auto x = floats(c["x"]);
    const auto gamma = floats(c["gamma"]), beta = floats(c["beta"]), w = floats(c["rmsWeight"]);
    double offset = 0;
    for (float v : x) offset += v;
    offset = std::fabs(offset / x.size());
    const double tol = 2e-5 * (1 + offset);
    std::vector<float> r(x.size()), s(x.size()), api(x.size());
    ref::layer_norm(r.data(), x.data(), rows, dim, gamma.data(), beta.data(), static_cast<float>(eps));
    simd::layer_norm(s.data(), x.data(), rows, dim, gamma.data(), beta.data(), static_cast<float>(eps));
    ASSERT_TRUE(layer_norm(api.data(), x.data(), rows, dim, gamma.data(), beta.data(), eps).ok());
    const auto want = floats(c["layerNorm"]);
    EXPECT_LT(max_abs_diff(r, want), tol) << "ref rows=" << rows << " dim=" << dim;
    EXPECT_LT(max_abs_diff(s, want), tol) << "simd rows=" << rows << " dim=" << dim;
    EXPECT_LT(max_abs_diff(api, want), tol);
    simd::layer_norm(s.data(), x.data(), rows, dim, nullptr, nullptr, static_cast<float>(eps));
    EXPECT_LT(max_abs_diff(s, floats(c["layerNormPlain"])), tol) << "no affine, dim=" << dim;
    ref::rms_norm(r.data(), x.data(), rows, dim, w.data(), static_cast<float>(eps));
    simd::rms_norm(s.data(), x.data(), rows, dim, w.data(), static_cast<float>(eps));
    const auto want_rms = floats(c["rmsNorm"]);
    EXPECT_LT(max_abs_diff(r, want_rms), 2e-5) << "ref rms dim=" << dim;
    EXPECT_LT(max_abs_diff(s, want_rms), 2e-5) << "simd rms dim=" << dim;
  }
}

TEST(Norm, SimdMatchesReferenceOnAwkwardSizesAndLargeOffsets) {
  for (int dim : attnkit_test::awkward_sizes()) {
    for (float offset : {0.0f, 100.0f, -5000.0f}) {
      const int rows = 3;
      const auto x = attnkit_test::random_normal(static_cast<std::size_t>(rows) * dim, dim + 7, 1.f, offset);
      const auto g = attnkit_test::random_normal(dim, 3), b = attnkit_test::random_normal(dim, 4);
      std::vector<float> r(x.size()), s(x.size());
      ref::layer_norm(r.data(), x.data(), rows, dim, g.data(), b.data(), 1e-5f);
      simd::layer_norm(s.data(), x.data(), rows, dim, g.data(), b.data(), 1e-5f);
      // |gamma| up to ~3, and offsets add input rounding: tolerance as in the golden test
      EXPECT_LT(max_abs_diff(r, s), 1e-5 * (1 + std::fabs(offset))) << "dim=" << dim << " offset=" << offset;
      ref::rms_norm(r.data(), x.data(), rows, dim, g.data(), 1e-6f);
      simd::rms_norm(s.data(), x.data(), rows, dim, g.data(), 1e-6f);
      EXPECT_LT(max_abs_diff(r, s), 2e-5) << "rms dim=" << dim;
    }
  }
  // An outlier in the first element must not cancel the variance of the rest.
  std::vector<float> x(65, 1.0f), r(65), s(65);
  x[0] = 1e6f;
  for (int i = 1; i < 65; ++i) x[i] = 1.0f + 0.001f * i;
  ref::layer_norm(r.data(), x.data(), 1, 65, nullptr, nullptr, 1e-12f);
  simd::layer_norm(s.data(), x.data(), 1, 65, nullptr, nullptr, 1e-12f);
  EXPECT_LT(max_abs_diff(r, s), 1e-4);
}

TEST(PositionIds, MatchHuggingFaceFormulas) {
  for (const auto& c : fx()["positionIds"]) {
    const int batch = c["batch"], length = c["length"], past = c["past"];
    std::vector<int32_t> out(static_cast<std::size_t>(batch) * length, -99);
    Status s;
    if (c["kind"] == "arange") {
      s = position_ids_arange(out.data(), batch, length, past);
    } else if (c["kind"] == "mask") {
      const auto mask = ints(c["mask"]);
      s = position_ids_from_mask(out.data(), mask.data(), batch, length, past);
    } else {
      const auto ids = ints(c["ids"]);
      s = position_ids_from_ids(out.data(), ids.data(), batch, length, c["paddingIdx"], past);
    }
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(out, ints(c["out"])) << c["kind"] << " past=" << past;
  }
}

TEST(Embedding, RejectsBadInputNamingTheFirstBadIndex) {
  const std::vector<float> table(4 * 3, 1.0f);
  std::vector<float> out(5 * 3, 42.0f);
  const std::vector<int32_t> ids{0, 3, 4, -1, 9};
  Status s = embedding(out.data(), ids.data(), ids.size(), table.data(), 4, 3, 1.0f);
  EXPECT_EQ(s.code, Code::out_of_range);
  EXPECT_EQ(s.argument, "ids[2]");
  EXPECT_EQ(s.message, "ids[2] must be in [0, 4), got 4");
  for (float v : out) EXPECT_EQ(v, 42.0f);
  const std::vector<int32_t> neg{1, -7};
  s = one_hot(out.data(), neg.data(), 2, 3);
  EXPECT_EQ(s.argument, "ids[1]");
  EXPECT_NE(s.message.find("got -7"), std::string::npos);
  std::vector<float> t2 = table;
  s = embedding_renorm(t2.data(), 4, 3, ids.data(), 2, -1, 2);
  EXPECT_EQ(s.argument, "maxNorm");
  const std::vector<int32_t> mask{1, 2};
  std::vector<int32_t> pos(2);
  s = position_ids_from_mask(pos.data(), mask.data(), 1, 2, 0);
  EXPECT_EQ(s.argument, "attentionMask[1]");
  std::vector<float> y(3);
  s = layer_norm(y.data(), table.data(), 1, 3, nullptr, nullptr, -1);
  EXPECT_EQ(s.argument, "eps");
}

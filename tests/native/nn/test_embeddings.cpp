// The Embeddings module: against PyTorch (a BertEmbeddings written out, the Annotated
// Transformer's Embeddings + PositionalEncoding, GPT-2's wte + wpe with left padding), the fused
// xsimd rows against the scalar reference, and its argument checks.
#include <cmath>
#include <cstring>
#include <random>

#include "attnkit/nn/embeddings.hpp"
#include "attnkit/ops/linear.hpp"
#include "fixtures.hpp"

using namespace attnkit;
using attnkit_test::floats;

namespace {

std::vector<int32_t> ints(const nlohmann::json& j) { return j.get<std::vector<int32_t>>(); }

EmbeddingsConfig config_of(const nlohmann::json& c) {
  EmbeddingsConfig cfg;
  cfg.vocab_size = c["vocabSize"];
  cfg.dim = c["dim"];
  cfg.max_positions = c["maxPositions"];
  cfg.type_vocab_size = c["typeVocabSize"];
  const std::string pos = c["positional"];
  cfg.positional = pos == "learned" ? PositionKind::learned : pos == "sinusoidal" ? PositionKind::sinusoidal : PositionKind::none;
  cfg.sinusoidal_layout = c.value("layout", "interleaved") == "split" ? SinusoidalLayout::split : SinusoidalLayout::interleaved;
  cfg.scale = c["scale"].is_string() ? std::sqrt(cfg.dim) : c["scale"].get<double>();
  const std::string norm = c["norm"];
  cfg.norm = norm == "layernorm" ? NormKind::layer_norm : norm == "rmsnorm" ? NormKind::rms_norm : NormKind::none;
  cfg.eps = c["eps"];
  cfg.padding_idx = c["paddingIdx"].is_null() ? -1 : c["paddingIdx"].get<double>();
  return cfg;
}

void set(Embeddings& e, EmbeddingsWeight which, const std::vector<float>& v) {
  float* data = nullptr;
  const Status s = e.weight(which, static_cast<double>(v.size()), data);
  ASSERT_TRUE(s.ok()) << s.message;
  std::memcpy(data, v.data(), v.size() * sizeof(float));
}


// |got - want| <= 2e-5 + 2e-6 |want|, elementwise; returns the first violation's index or -1.
long first_mismatch(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= 2e-5 + 2e-6 * std::abs(want[i]))) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace

TEST(Embeddings, MatchesPyTorchModules) {
  const auto fx = attnkit_test::load_fixture("embeddings.json");
  ASSERT_GE(fx["cases"].size(), 8u);
  for (const auto& c : fx["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::unique_ptr<Embeddings> e;
    const Status cs = Embeddings::create(config_of(c["config"]), e);
    ASSERT_TRUE(cs.ok()) << cs.message;
    const auto& w = c["weights"];
    set(*e, EmbeddingsWeight::word, floats(w["word"]));
    if (w.contains("position")) set(*e, EmbeddingsWeight::position, floats(w["position"]));
    if (w.contains("tokenType")) set(*e, EmbeddingsWeight::token_type, floats(w["tokenType"]));
    if (w.contains("normWeight")) set(*e, EmbeddingsWeight::gamma, floats(w["normWeight"]));
    if (w.contains("normBias")) set(*e, EmbeddingsWeight::beta, floats(w["normBias"]));

    const auto ids = ints(c["inputIds"]);
    std::vector<int32_t> types, positions, mask;
    Embeddings::Inputs in;
    in.ids = ids.data();
    in.batch = c["batch"];
    in.length = c["length"];
    in.past = c["past"];
    if (c.contains("tokenTypeIds")) {
      types = ints(c["tokenTypeIds"]);
      in.types = types.data();
      in.types_length = static_cast<double>(types.size());
    }
    if (c.contains("positionIds")) {
      positions = ints(c["positionIds"]);
      in.positions = positions.data();
      in.positions_length = static_cast<double>(positions.size());
    }
    if (c.contains("attentionMask")) {
      mask = ints(c["attentionMask"]);
      in.mask = mask.data();
      in.mask_length = static_cast<double>(mask.size());
    }
    const auto want = floats(c["out"]);
    ASSERT_EQ(e->output_size(in), want.size());
    std::vector<float> fast(want.size()), slow(want.size());
    ASSERT_TRUE(e->forward(fast.data(), in).ok());
    ASSERT_TRUE(e->forward_reference(slow.data(), in).ok());
    long bad = first_mismatch(fast, want);
    EXPECT_EQ(bad, -1) << "simd out[" << bad << "] = " << (bad >= 0 ? fast[bad] : 0) << " want " << (bad >= 0 ? want[bad] : 0);
    bad = first_mismatch(slow, want);
    EXPECT_EQ(bad, -1) << "ref out[" << bad << "] = " << (bad >= 0 ? slow[bad] : 0) << " want " << (bad >= 0 ? want[bad] : 0);
  }
}

TEST(Embeddings, FusedSimdRowsMatchReferenceOnAwkwardSizes) {
  const int vocab = 11, max_pos = 9, types = 3;
  for (int dim : attnkit_test::awkward_sizes()) {
    const auto word = attnkit_test::random_normal(static_cast<std::size_t>(vocab) * dim, dim);
    const auto pos = attnkit_test::random_normal(static_cast<std::size_t>(max_pos) * dim, dim + 1);
    const auto type = attnkit_test::random_normal(static_cast<std::size_t>(types) * dim, dim + 2);
    auto gamma = attnkit_test::random_normal(dim, dim + 3), beta = attnkit_test::random_normal(dim, dim + 4);
    for (int n : {1, 3, 4, 5, 7, 17}) {
      std::vector<int32_t> ids(n), positions(n), tys(n);
      for (int t = 0; t < n; ++t) {
        ids[t] = (t * 5 + dim) % vocab;
        positions[t] = t % max_pos;
        tys[t] = t % types;
      }
      for (NormKind norm : {NormKind::none, NormKind::layer_norm, NormKind::rms_norm}) {
        for (bool with_pos : {false, true}) {
          for (bool with_types : {false, true}) {
            const EmbeddingsView v{word.data(), with_pos ? pos.data() : nullptr, with_types ? type.data() : nullptr,
                                   norm == NormKind::none ? nullptr : gamma.data(),
                                   norm == NormKind::layer_norm ? beta.data() : nullptr,
                                   dim, 1.7f, norm, 1e-5f};
            std::vector<float> r(static_cast<std::size_t>(n) * dim), s(r.size());
            ref::embeddings_rows(r.data(), v, ids.data(), positions.data(), with_types ? tys.data() : nullptr, n);
            simd::embeddings_rows(s.data(), v, ids.data(), positions.data(), with_types ? tys.data() : nullptr, n);
            const long bad = first_mismatch(s, r);
            EXPECT_EQ(bad, -1) << "dim=" << dim << " n=" << n << " norm=" << static_cast<int>(norm)
                               << " pos=" << with_pos << " types=" << with_types;
          }
        }
      }
    }
  }
}

// The word table as an output embedding: logits = x @ word.T, the scalar reference's result (within
// the linear kernel's float32 rounding) on awkward dims, vocabularies and row counts.
TEST(Embeddings, LogitsAreTheWordTableAsALinearLayer) {
  for (int dim : attnkit_test::awkward_sizes()) {
    for (int vocab : {1, 5, 17, 65}) {
      EmbeddingsConfig c;
      c.vocab_size = vocab;
      c.dim = dim;
      c.positional = PositionKind::none;
      c.norm = NormKind::none;
      c.scale = 3;  // scales the lookup only, never the head
      std::unique_ptr<Embeddings> e;
      ASSERT_TRUE(Embeddings::create(c, e).ok());
      float* word = nullptr;
      ASSERT_TRUE(e->weight(EmbeddingsWeight::word, static_cast<double>(vocab) * dim, word).ok());
      const auto table = attnkit_test::random_normal(static_cast<std::size_t>(vocab) * dim, dim + vocab);
      std::memcpy(word, table.data(), table.size() * sizeof(float));
      for (int rows : {1, 3, 4, 5, 7}) {
        const auto x = attnkit_test::random_normal(static_cast<std::size_t>(rows) * dim, rows);
        ASSERT_TRUE(e->check_logits(rows, static_cast<double>(rows) * dim).ok());
        std::vector<float> got(static_cast<std::size_t>(rows) * vocab), want(got.size());
        e->logits(got.data(), x.data(), rows);
        ref::linear(want.data(), x.data(), rows, dim, vocab, table.data(), WeightLayout::out_in, nullptr);
        for (std::size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i])) * std::sqrt(static_cast<float>(dim)))
              << "dim=" << dim << " vocab=" << vocab << " rows=" << rows << " i=" << i;
        }
      }
      const Status bad = e->check_logits(2, 2.0 * dim + 1);
      EXPECT_EQ(bad.code, Code::shape_mismatch);
      EXPECT_EQ(bad.argument, "x");
      EXPECT_EQ(e->check_logits(0.5, 0).code, Code::invalid_argument);
    }
  }
}

TEST(Embeddings, FusedLayerNormSurvivesLargeCommonOffsets) {
  // Rows sitting at +-1e4 with unit spread: E[x^2] - E[x]^2 would lose everything in float; the
  // kernel must notice and take the second sweep about the mean.
  for (int dim : {5, 17, 771}) {
    for (float offset : {1e4f, -3e3f}) {
      auto word = attnkit_test::random_normal(static_cast<std::size_t>(3) * dim, dim);
      for (auto& v : word) v += offset;
      const std::vector<int32_t> ids{0, 1, 2, 1};
      const std::vector<float> gamma(dim, 1.0f), beta(dim, 0.0f);
      const EmbeddingsView v{word.data(), nullptr, nullptr, gamma.data(), beta.data(), dim, 1.0f, NormKind::layer_norm,
                             1e-12f};
      std::vector<float> r(4 * static_cast<std::size_t>(dim)), s(r.size());
      ref::embeddings_rows(r.data(), v, ids.data(), nullptr, nullptr, 4);
      simd::embeddings_rows(s.data(), v, ids.data(), nullptr, nullptr, 4);
      EXPECT_LT(attnkit_test::max_abs_diff(r, s), 1e-3) << "dim=" << dim << " offset=" << offset;
    }
  }
}

namespace {
std::unique_ptr<Embeddings> small_bert() {
  EmbeddingsConfig cfg;
  cfg.vocab_size = 10;
  cfg.dim = 6;
  cfg.max_positions = 4;
  cfg.type_vocab_size = 2;
  std::unique_ptr<Embeddings> e;
  EXPECT_TRUE(Embeddings::create(cfg, e).ok());
  return e;
}
void fill_all(Embeddings& e) {
  set(e, EmbeddingsWeight::word, attnkit_test::random_normal(60, 1));
  set(e, EmbeddingsWeight::position, attnkit_test::random_normal(24, 2));
  set(e, EmbeddingsWeight::token_type, attnkit_test::random_normal(12, 3));
}
}  // namespace

TEST(Embeddings, RejectsBadInputWithoutTouchingTheOutput) {
  auto e = small_bert();
  std::vector<int32_t> ids{1, 2, 3};
  Embeddings::Inputs in;
  in.ids = ids.data();
  in.length = 3;
  std::vector<float> out(18, -7.0f);

  Status s = e->forward(out.data(), in);
  EXPECT_EQ(s.code, Code::invalid_argument);
  EXPECT_EQ(s.argument, "word");  // weights not set yet

  float* data = nullptr;
  s = e->weight(EmbeddingsWeight::word, 59, data);
  EXPECT_EQ(s.code, Code::shape_mismatch);
  EXPECT_NE(s.message.find("59"), std::string::npos);
  EXPECT_NE(s.message.find("60"), std::string::npos);
  fill_all(*e);
  ASSERT_TRUE(e->forward(out.data(), in).ok());
  std::fill(out.begin(), out.end(), -7.0f);

  ids[2] = 10;
  s = e->forward(out.data(), in);
  EXPECT_EQ(s.code, Code::out_of_range);
  EXPECT_EQ(s.argument, "inputIds[2]");
  EXPECT_NE(s.message.find("got 10"), std::string::npos) << s.message;
  ids[2] = -1;
  EXPECT_EQ(e->forward(out.data(), in).argument, "inputIds[2]");
  ids[2] = 3;

  std::vector<int32_t> types{0, 2, 0};
  in.types = types.data();
  in.types_length = 3;
  s = e->forward(out.data(), in);
  EXPECT_EQ(s.argument, "tokenTypeIds[1]");
  in.types_length = 2;
  EXPECT_EQ(e->forward(out.data(), in).code, Code::shape_mismatch);
  in.types = nullptr;

  in.past = 2;  // positions 2, 3, 4 but the table has 4 rows
  s = e->forward(out.data(), in);
  EXPECT_EQ(s.code, Code::out_of_range);
  EXPECT_NE(s.message.find("maxPositions = 4"), std::string::npos) << s.message;
  in.past = 0;

  std::vector<int32_t> positions{0, 4, 1};
  in.positions = positions.data();
  in.positions_length = 3;
  EXPECT_EQ(e->forward(out.data(), in).argument, "positionIds[1]");
  in.positions = nullptr;

  std::vector<int32_t> mask{1, 2, 1};
  in.mask = mask.data();
  in.mask_length = 3;
  EXPECT_EQ(e->forward(out.data(), in).argument, "attentionMask[1]");
  in.mask_length = 4;
  EXPECT_EQ(e->forward(out.data(), in).code, Code::shape_mismatch);
  in.mask = nullptr;

  for (float v : out) EXPECT_EQ(v, -7.0f);  // nothing written by a failed call
  ASSERT_TRUE(e->forward(out.data(), in).ok());
}

TEST(Embeddings, RejectsBadConfigs) {
  EmbeddingsConfig cfg;
  cfg.vocab_size = 10;
  cfg.dim = 7;
  cfg.positional = PositionKind::sinusoidal;
  std::unique_ptr<Embeddings> e;
  EXPECT_EQ(Embeddings::create(cfg, e).argument, "dim");  // odd dim for a sinusoidal table
  cfg.dim = 8;
  cfg.vocab_size = 0.5;
  EXPECT_EQ(Embeddings::create(cfg, e).argument, "vocabSize");
  cfg.vocab_size = 10;
  cfg.padding_idx = 10;
  EXPECT_EQ(Embeddings::create(cfg, e).argument, "paddingIdx");
  cfg.padding_idx = -1;
  cfg.eps = -1;
  EXPECT_EQ(Embeddings::create(cfg, e).argument, "eps");
  cfg.eps = 1e-12;
  ASSERT_TRUE(Embeddings::create(cfg, e).ok());
  float* data = nullptr;
  EXPECT_EQ(e->weight(EmbeddingsWeight::position, 4096, data).code, Code::invalid_argument);  // computed
  EXPECT_EQ(e->weight(EmbeddingsWeight::token_type, 0, data).code, Code::invalid_argument);   // none
}

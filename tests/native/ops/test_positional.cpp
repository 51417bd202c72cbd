#include <cmath>
#include <limits>

#include "attnkit/ops/positional.hpp"
#include "fixtures.hpp"
#include "ops/simd/sincos.hpp"
#include "attnkit/core/simd_arch.hpp"

using namespace attnkit;
using attnkit_test::max_abs_diff;

namespace {

std::vector<float> run_ref(int length, int dim, double base, int offset, SinusoidalLayout layout) {
  std::vector<float> out(static_cast<std::size_t>(length) * dim);
  const auto freq = sinusoidal_frequencies(dim, static_cast<float>(base));
  ref::sinusoidal(out.data(), freq.data(), length, dim, offset, layout);
  return out;
}

std::vector<float> run_simd(int length, int dim, double base, int offset, SinusoidalLayout layout) {
  std::vector<float> out(static_cast<std::size_t>(length) * dim);
  const auto freq = sinusoidal_frequencies(dim, static_cast<float>(base));
  simd::sinusoidal(out.data(), freq.data(), length, dim, offset, layout);
  return out;
}

SinusoidalLayout layout_of(const std::string& s) {
  return s == "split" ? SinusoidalLayout::split : SinusoidalLayout::interleaved;
}

int significant_bits(float v) {
  int e;
  double m = std::frexp(static_cast<double>(v), &e);  // m in [0.5, 1)
  int bits = 0;
  while (m != 0) { m = m * 2 - std::floor(m * 2); ++bits; }
  return bits;
}

}  // namespace

TEST(SinCos, CodyWaiteSplitIsExactForSixteenBitQuadrants) {
  // k * Ci must be exact for k < 2^16: at most 24 - 16 = 8 significant bits in C1..C3.
  EXPECT_LE(significant_bits(simd::kPio2C1), 8);
  EXPECT_LE(significant_bits(simd::kPio2C2), 8);
  EXPECT_LE(significant_bits(simd::kPio2C3), 8);
  const long double sum = static_cast<long double>(simd::kPio2C1) + simd::kPio2C2 +
                          simd::kPio2C3 + simd::kPio2C4;
  EXPECT_NEAR(static_cast<double>(sum - 1.57079632679489661923132169163975144L), 0.0, 1e-16);
}

TEST(SinCos, MatchesDoublePrecisionOverTheWholeRange) {
  // Every float angle a kernel can see (positions < 2^16 times frequencies <= 1), sampled densely
  // near zero and across the range, against sin/cos computed in double from the same float.
  std::vector<float> xs;
  for (float x = 0; x < 8.0f; x += 0.0009765625f) xs.push_back(x);
  for (int i = 0; i < 200000; ++i) xs.push_back(65535.0f * static_cast<float>(i) / 199999.0f);
  for (float x : {1.5707964f, 3.1415927f, 4.712389f, 6.2831855f, 65535.f, 65536.f, 102900.f})
    xs.push_back(x);
  while (xs.size() % kLanes) xs.push_back(0.5f);
  double worst = 0;
  float worst_x = 0;
  for (std::size_t i = 0; i < xs.size(); i += kLanes) {
    vfloat s, c;
    simd::sincos(vfloat::load_unaligned(&xs[i]), s, c);
    alignas(64) float sv[kLanes], cv[kLanes];
    s.store_aligned(sv);
    c.store_aligned(cv);
    for (std::size_t j = 0; j < kLanes; ++j) {
      const double x = xs[i + j];
      const double e = std::max(std::abs(sv[j] - std::sin(x)), std::abs(cv[j] - std::cos(x)));
      if (e > worst) { worst = e; worst_x = xs[i + j]; }
    }
  }
  // 2 ulp of 1.0 in float32: rounding of the reduction and the polynomial, nothing more.
  EXPECT_LT(worst, 2.4e-7) << "worst at x = " << worst_x;
}

TEST(Sinusoidal, FrequenciesMatchPyTorchBitForBit) {
  const auto fx = attnkit_test::load_fixture("positional.json");
  for (const auto& c : fx["cases"]) {
    const auto got = sinusoidal_frequencies(c["dim"], static_cast<float>(c["base"].get<double>()));
    const auto want = attnkit_test::floats(c["frequencies"]);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      // torch.exp may differ from std::exp by one ulp; the angle then differs by p * ulp(w).
      EXPECT_NEAR(got[k], want[k], std::abs(want[k]) * 1.2e-7) << "k=" << k << " dim=" << c["dim"];
    }
  }
}

// Reference and kernel agree on every awkward size, both layouts, with and without an offset.
TEST(Sinusoidal, SimdMatchesReferenceOnAwkwardSizes) {
  for (int half : attnkit_test::awkward_sizes()) {
    for (int length : {1, 3, 5, 17, 65}) {
      for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::split}) {
        for (int offset : {0, 4093}) {
          const int dim = 2 * half;
          const auto r = run_ref(length, dim, 10000.0, offset, layout);
          const auto s = run_simd(length, dim, 10000.0, offset, layout);
          EXPECT_LT(max_abs_diff(r, s), 3e-7)
              << "dim=" << dim << " length=" << length << " offset=" << offset;
        }
      }
    }
  }
  // lengths on the awkward grid too, with a small odd-half dim
  for (int length : attnkit_test::awkward_sizes()) {
    const auto r = run_ref(length, 14, 10000.0, 0, SinusoidalLayout::interleaved);
    const auto s = run_simd(length, 14, 10000.0, 0, SinusoidalLayout::interleaved);
    EXPECT_LT(max_abs_diff(r, s), 3e-7) << "length=" << length;
  }
}

// Both implementations against PyTorch's table, within 2e-6 + p * 1.2e-7 for position p.
// Why the position term: PyTorch's float32 exp (SLEEF) is not correctly rounded; about 12% of its
// frequencies are one ulp from std::exp's. One ulp of w (relative 1.2e-7) moves the float32 angle
// p * w by up to p * 1.2e-7, and sin/cos with it: that is float32 tolerance for this table.
TEST(Sinusoidal, MatchesPyTorchGolden) {
  const auto fx = attnkit_test::load_fixture("positional.json");
  for (const auto& c : fx["cases"]) {
    const int length = c["length"], dim = c["dim"], offset = c["offset"];
    const double base = c["base"];
    const auto layout = layout_of(c["layout"]);
    const auto want = attnkit_test::floats(c["data"]);
    const double tol = 2e-6 + (offset + length) * 1.2e-7;
    EXPECT_LT(max_abs_diff(run_ref(length, dim, base, offset, layout), want), tol)
        << "ref " << c["layout"] << " length=" << length << " dim=" << dim;
    EXPECT_LT(max_abs_diff(run_simd(length, dim, base, offset, layout), want), tol)
        << "simd " << c["layout"] << " length=" << length << " dim=" << dim;
    // The validated entry point (what the bindings call) gives the same table.
    std::vector<float> out(want.size());
    SinusoidalParams p{static_cast<double>(length), static_cast<double>(dim), base,
                       static_cast<double>(offset), layout};
    ASSERT_TRUE(sinusoidal_positional_encoding(out.data(), p).ok());
    EXPECT_LT(max_abs_diff(out, want), tol);
  }
}

TEST(Sinusoidal, RejectsBadArgumentsNamingThemAndWritesNothing) {
  struct Bad { SinusoidalParams p; Code code; const char* arg; const char* text; };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Bad cases[] = {
      {{4, 7, 10000, 0}, Code::invalid_argument, "dim", "dim must be even"},
      {{4, 0, 10000, 0}, Code::out_of_range, "dim", "got 0"},
      {{-1, 8, 10000, 0}, Code::out_of_range, "length", "got -1"},
      {{2.5, 8, 10000, 0}, Code::invalid_argument, "length", "must be an integer, got 2.5"},
      {{nan, 8, 10000, 0}, Code::invalid_argument, "length", "integer"},
      {{4, 8, 0.5, 0}, Code::out_of_range, "base", ">= 1"},
      {{4, 8, nan, 0}, Code::out_of_range, "base", ">= 1"},
      {{4, 8, 10000, -3}, Code::out_of_range, "offset", "got -3"},
      {{10, 8, 10000, 65530}, Code::out_of_range, "offset", "65530 + 10"},
      {{65536, 65536, 10000, 0}, Code::out_of_range, "length * dim", "at most"},
      {{1e12, 8, 10000, 0}, Code::out_of_range, "length", "got 1000000000000"},
  };
  for (const auto& b : cases) {
    std::vector<float> out(16, 42.0f);
    const Status s = sinusoidal_positional_encoding(out.data(), b.p);
    EXPECT_EQ(s.code, b.code) << s.message;
    EXPECT_EQ(s.argument, b.arg) << s.message;
    EXPECT_NE(s.message.find(b.text), std::string::npos) << s.message;
    for (float v : out) EXPECT_EQ(v, 42.0f);
  }
}

// Reads the golden fixtures written by tests/golden/gen_fixtures.py (real PyTorch runs).
#pragma once

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace attnkit_test {

inline nlohmann::json load_fixture(const std::string& name) {
  std::ifstream in(std::string(ATTNKIT_FIXTURE_DIR) + "/" + name);
  if (!in) ADD_FAILURE() << "missing fixture " << name;
  return nlohmann::json::parse(in);
}

inline std::vector<float> floats(const nlohmann::json& j) { return j.get<std::vector<float>>(); }

// Largest |a[i] - b[i]|; fails the test when the lengths differ.
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= m)) m = d;  // also catches NaN
  }
  return m;
}

// n samples of N(offset, sd^2) from a fixed seed: inputs for reference-vs-SIMD sweeps.
inline std::vector<float> random_normal(std::size_t n, unsigned seed, float sd = 1.f, float offset = 0.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng) + offset;
  return v;
}

// The awkward sizes every kernel is swept over: below, at and around vector widths.
inline const std::vector<int>& awkward_sizes() {
  static const std::vector<int> s{1, 3, 4, 5, 7, 17, 63, 65, 771};
  return s;
}

}  // namespace attnkit_test

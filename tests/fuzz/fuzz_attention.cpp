// Differential libFuzzer harness: the SIMD kernels against their scalar references on shapes and
// values drawn from the input, special values included (NaN, +-inf, +-3e38, subnormals,
// finfo.min). Attention through the dispatcher (attnkit::attention) must give the reference's
// result: NaN where it has NaN, the same infinities, finite values within float32 tolerance.
// The first byte picks the kernel: attention, activation, linear, LayerNorm / RMSNorm.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "attnkit/ops/activation.hpp"
#include "attnkit/ops/attention.hpp"
#include "attnkit/ops/linear.hpp"
#include "attnkit/ops/norm.hpp"

namespace {

struct Input {
  const uint8_t* p;
  std::size_t n;
  uint8_t byte() { return n ? (--n, *p++) : 0; }
  int pick(int lo, int hi) { return lo + byte() % (hi - lo + 1); }
  float value() {
    const uint8_t b = byte();
    static const float special[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                    -std::numeric_limits<float>::infinity(), 3e38f, -3e38f, 1e-40f,
                                    std::numeric_limits<float>::lowest(), 0.f, -0.f, 1e20f};
    if (b >= 246) return special[b - 246];
    return (static_cast<float>(b) - 123.f) / 31.f;
  }
  std::vector<float> values(std::size_t count) {
    std::vector<float> v(count);
    for (auto& x : v) x = value();
    return v;
  }
};

[[noreturn]] void mismatch(std::size_t i, float got, float want) {
  std::fprintf(stderr, "mismatch at %zu: SIMD %.9g, reference %.9g\n", i, got, want);
  std::abort();
}

// Same NaN-ness, same infinities, finite values close.
void expect_same(const float* got, const float* want, std::size_t n, float tol) {
  for (std::size_t i = 0; i < n; ++i) {
    const float a = got[i], b = want[i];
    if (std::isnan(b) || std::isnan(a)) {
      if (std::isnan(a) != std::isnan(b)) mismatch(i, a, b);
    } else if (std::isinf(b) || std::isinf(a)) {
      if (a != b) mismatch(i, a, b);
    } else if (std::fabs(a - b) > tol * (1 + std::fabs(b))) {
      mismatch(i, a, b);
    }
  }
}

void attention_case(Input& in) {
  using namespace attnkit;
  AttentionShape s;
  s.batch = in.pick(1, 2);
  s.kv_heads = in.pick(1, 2);
  s.heads = s.kv_heads * in.pick(1, 3);
  s.q_len = in.pick(0, 9);
  s.kv_len = in.pick(0, 21);
  s.head_dim = in.pick(1, 9);
  s.v_dim = in.pick(1, 9);
  const int flags = in.byte();
  auto q = in.values(static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.head_dim);
  auto k = in.values(static_cast<std::size_t>(s.batch) * s.kv_heads * s.kv_len * s.head_dim);
  auto v = in.values(static_cast<std::size_t>(s.batch) * s.kv_heads * s.kv_len * s.v_dim);
  const std::size_t mask_n = static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.kv_len;
  std::vector<float> additive;
  std::vector<uint8_t> boolean;
  AttentionArgs a;
  a.shape = s;
  a.q = contiguous<const float>(q.data(), s.heads, s.q_len, s.head_dim);
  a.k = contiguous<const float>(k.data(), s.kv_heads, s.kv_len, s.head_dim);
  a.v = contiguous<const float>(v.data(), s.kv_heads, s.kv_len, s.v_dim);
  a.scale = (flags & 8) ? in.value() : 1.f / std::sqrt(static_cast<float>(s.head_dim));
  if (!std::isfinite(a.scale)) a.scale = 0.5f;  // the entry point refuses non-finite scales
  a.causal = flags & 1;
  if (flags & 2) {
    a.mask.kind = MaskKind::additive;
    additive = in.values(mask_n);
    a.mask.data = additive.data();
  } else if (flags & 4) {
    a.mask.kind = MaskKind::boolean;
    for (std::size_t i = 0; i < mask_n; ++i) boolean.push_back(in.byte() & 1);
    a.mask.data = boolean.data();
  }
  a.mask.dims[0] = s.batch, a.mask.dims[1] = s.heads, a.mask.dims[2] = s.q_len, a.mask.dims[3] = s.kv_len;
  std::vector<float> slopes;
  if (flags & 16) {
    slopes = in.values(s.heads);
    a.alibi = slopes.data();
  }
  const std::size_t n_out = static_cast<std::size_t>(s.batch) * s.heads * s.q_len * s.v_dim;
  const std::size_t n_w = mask_n;
  std::vector<float> out(n_out), want(n_out), w(n_w), want_w(n_w);
  const bool weights = flags & 32;
  a.weights = weights ? w.data() : nullptr;
  a.out = contiguous(out.data(), s.heads, s.q_len, s.v_dim);
  if (!attention(a).ok()) std::abort();
  a.out = contiguous(want.data(), s.heads, s.q_len, s.v_dim);
  a.weights = weights ? want_w.data() : nullptr;
  ref::attention(a);
  // Huge finite values (1e20, 3e38) in q, k, v or the slopes cancel in sums whose rounding
  // depends on the order and on where the scale is applied (so a different key can win the
  // softmax, in PyTorch's BLAS as much as here): with any, only the kinds (NaN, infinities) are
  // compared. Huge mask values (finfo.min) are added after the dots and stay fully compared.
  bool huge = std::fabs(a.scale) >= 1e15f;
  for (const auto* x : {&q, &k, &v, &slopes})
    for (float t : *x) huge |= std::isfinite(t) && std::fabs(t) >= 1e15f;
  const float tol = huge ? INFINITY : 2e-4f;
  expect_same(out.data(), want.data(), n_out, tol);
  if (weights) expect_same(w.data(), want_w.data(), n_w, tol);
}

void activation_case(Input& in) {
  using namespace attnkit;
  const auto kind = static_cast<Activation>(in.pick(0, 3));
  auto x = in.values(in.pick(0, 40));
  auto y = x;
  ref::activation(x.data(), x.size(), kind);
  simd::activation(y.data(), y.size(), kind);
  expect_same(y.data(), x.data(), x.size(), 1e-5f);
}

void linear_case(Input& in) {
  using namespace attnkit;
  const int rows = in.pick(0, 6), n_in = in.pick(1, 19), n_out = in.pick(1, 19);
  const auto layout = in.byte() & 1 ? WeightLayout::in_out : WeightLayout::out_in;
  auto x = in.values(static_cast<std::size_t>(rows) * n_in);
  auto w = in.values(static_cast<std::size_t>(n_in) * n_out);
  auto b = in.values(n_out);
  std::vector<float> y(static_cast<std::size_t>(rows) * n_out), want(y.size());
  ref::linear(want.data(), x.data(), rows, n_in, n_out, w.data(), layout, b.data());
  simd::linear(y.data(), x.data(), rows, n_in, n_out, w.data(), layout, b.data(), 0, n_out);
  // The kernels sum in different orders, and where finite terms can overflow that order decides
  // whether a sum becomes inf (and inf - inf NaN), in PyTorch's BLAS as much as here. Without
  // huge finite values every term is small, +-inf or NaN, and the result's kind is order-free.
  auto huge = [](const std::vector<float>& v) {
    for (float t : v)
      if (std::isfinite(t) && std::fabs(t) >= 1e15f) return true;
    return false;
  };
  if (huge(x) || huge(w) || huge(b)) return;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i]) != std::isnan(want[i])) mismatch(i, y[i], want[i]);
    if ((std::isinf(y[i]) || std::isinf(want[i])) && y[i] != want[i]) mismatch(i, y[i], want[i]);
  }
}

void norm_case(Input& in) {
  using namespace attnkit;
  const int rows = in.pick(0, 4), dim = in.pick(1, 21);
  const bool rms = in.byte() & 1;
  const float eps = in.byte() & 1 ? 0.f : 1e-5f;
  auto x = in.values(static_cast<std::size_t>(rows) * dim);
  auto g = in.values(dim), b = in.values(dim);
  std::vector<float> y(x.size()), want(x.size());
  if (rms) {
    ref::rms_norm(want.data(), x.data(), rows, dim, g.data(), eps);
    simd::rms_norm(y.data(), x.data(), rows, dim, g.data(), eps);
  } else {
    ref::layer_norm(want.data(), x.data(), rows, dim, g.data(), b.data(), eps);
    simd::layer_norm(y.data(), x.data(), rows, dim, g.data(), b.data(), eps);
  }
  // Statistics in float (SIMD) and double (reference) round apart; the kinds must agree, and the
  // values where no row holds a huge finite number (whose float sums round far apart).
  bool huge = false;
  for (float t : x) huge |= std::isfinite(t) && std::fabs(t) >= 1e15f;
  // An infinite weight or bias turns a rounding-level difference of (x - mean) into inf versus
  // NaN (its sign, or 0 * inf), so such rows are not compared.
  for (const auto* v : {&g, &b})
    for (float t : *v) {
      if (!std::isfinite(t)) return;
      huge |= std::fabs(t) >= 1e15f;
    }
  if (!huge) expect_same(y.data(), want.data(), y.size(), 2e-3f);
  else
    for (std::size_t i = 0; i < y.size(); ++i)
      if (std::isnan(y[i]) != std::isnan(want[i])) mismatch(i, y[i], want[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Input in{data, size};
  switch (in.byte() % 4) {
    case 0: attention_case(in); break;
    case 1: activation_case(in); break;
    case 2: linear_case(in); break;
    default: norm_case(in); break;
  }
  return 0;
}

// The fused embedding row in xsimd (contract in attnkit/embeddings.hpp): one sweep gathers the
// word row, scales it, adds the token-type and position rows, stores the sum and accumulates its
// sum and sum of squares; a second sweep normalises the row while it is still in L1.
#include "attnkit/embeddings.hpp"
#include "attnkit/simd_arch.hpp"
#include "simd/row_norm.hpp"

namespace attnkit::simd {

template <class Arch>
struct row_gather_add {
  // y[i] = (w[i] * s + t[i]) + p[i] (t, p may be null; BertEmbeddings' order of the adds);
  // returns sum(y) and sum(y^2).
  void operator()(Arch, float* y, const float* w, float s, const float* p, const float* t, int dim, float& sum,
                  float& sumsq) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const bf vs(s);
    bf s0(0.f), s1(0.f), s2(0.f), s3(0.f), q0(0.f), q1(0.f), q2(0.f), q3(0.f);
    auto at = [&](int i) {
      bf v = bf::load_unaligned(w + i) * vs;
      if (t) v += bf::load_unaligned(t + i);
      if (p) v += bf::load_unaligned(p + i);
      v.store_unaligned(y + i);
      return v;
    };
    int i = 0;
    for (; i + 4 * N <= dim; i += 4 * N) {
      const bf a = at(i), b = at(i + N), c = at(i + 2 * N), d = at(i + 3 * N);
      s0 += a; s1 += b; s2 += c; s3 += d;
      q0 = xsimd::fma(a, a, q0); q1 = xsimd::fma(b, b, q1);
      q2 = xsimd::fma(c, c, q2); q3 = xsimd::fma(d, d, q3);
    }
    for (; i + N <= dim; i += N) {
      const bf a = at(i);
      s0 += a;
      q0 = xsimd::fma(a, a, q0);
    }
    sum = xsimd::hadd((s0 + s1) + (s2 + s3));
    sumsq = xsimd::hadd((q0 + q1) + (q2 + q3));
    for (; i < dim; ++i) {
      float v = w[i] * s;
      if (t) v += t[i];
      if (p) v += p[i];
      y[i] = v;
      sum += v;
      sumsq += v * v;
    }
  }
};

// WebAssembly has no prefetch instruction: reading one float per 64-byte line of a row that will
// be needed soon starts its cache misses while the current row is computed. The sum goes to a
// volatile so the loads are kept.
volatile float g_touch_sink;
constexpr std::size_t kAhead = 2;
inline void touch_lines(const float* row, int dim) {
  float s = 0.0f;
  for (int i = 0; i < dim; i += 16) s += row[i];
  g_touch_sink = s;
}

void embeddings_rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions,
                     const int32_t* types, std::size_t n) {
  using A = simd_arch;
  const std::size_t dim = static_cast<std::size_t>(w.dim);
  for (std::size_t r = 0; r < n; ++r) {
    float* y = out + r * dim;
    const float* p = w.position ? w.position + positions[r] * dim : nullptr;
    const float* t = w.token_type ? w.token_type + (types ? types[r] : 0) * dim : nullptr;
    if (r + kAhead < n) touch_lines(w.word + ids[r + kAhead] * dim, w.dim);
    float sum, sumsq;
    row_gather_add<A>{}(A{}, y, w.word + ids[r] * dim, w.scale, p, t, w.dim, sum, sumsq);
    if (w.norm == NormKind::layer_norm) {
      float mean, rstd;
      layer_norm_stats<A>(y, w.dim, sum, sumsq, w.eps, mean, rstd);
      row_affine<A>::template apply<true, true>(y, y, w.dim, mean, rstd, w.gamma, w.beta);
    } else if (w.norm == NormKind::rms_norm) {
      row_affine<A>::template apply<true, false>(y, y, w.dim, 0.0f, 1.0f / std::sqrt(sumsq / w.dim + w.eps), w.gamma,
                                                 nullptr);
    }
  }
}

}  // namespace attnkit::simd

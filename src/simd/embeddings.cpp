// The fused embedding row in xsimd (contract in attnkit/embeddings.hpp): one sweep gathers the
// word row, scales it, adds the position and token-type rows, stores the sum and accumulates its
// sum and sum of squares; the norm then reads the row back while it is still in L1.
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
    bf s0(0.f), s1(0.f), q0(0.f), q1(0.f);
    auto at = [&](int i) {
      bf v = bf::load_unaligned(w + i) * vs;
      if (t) v += bf::load_unaligned(t + i);
      if (p) v += bf::load_unaligned(p + i);
      v.store_unaligned(y + i);
      return v;
    };
    int i = 0;
    for (; i + 2 * N <= dim; i += 2 * N) {
      const bf a = at(i), b = at(i + N);
      s0 += a; s1 += b;
      q0 = xsimd::fma(a, a, q0); q1 = xsimd::fma(b, b, q1);
    }
    for (; i + N <= dim; i += N) {
      const bf a = at(i);
      s0 += a;
      q0 = xsimd::fma(a, a, q0);
    }
    sum = xsimd::hadd(s0 + s1);
    sumsq = xsimd::hadd(q0 + q1);
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

void embeddings_rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions,
                     const int32_t* types, std::size_t n) {
  using A = simd_arch;
  const std::size_t dim = static_cast<std::size_t>(w.dim);
  for (std::size_t r = 0; r < n; ++r) {
    float* y = out + r * dim;
    const float* p = w.position ? w.position + positions[r] * dim : nullptr;
    const float* t = w.token_type ? w.token_type + (types ? types[r] : 0) * dim : nullptr;
    float sum, sumsq;
    row_gather_add<A>{}(A{}, y, w.word + ids[r] * dim, w.scale, p, t, w.dim, sum, sumsq);
    if (w.norm == NormKind::layer_norm) {
      // Second sweep for the variance about the mean (see layer_norm_row for why not E[x^2] - E[x]^2).
      const float mean = sum / w.dim;
      row_sum<A>{}(A{}, y, w.dim, mean, sum, sumsq);
      const float d = sum / w.dim;
      const float var = std::max(sumsq / w.dim - d * d, 0.0f);
      row_affine<A>{}(A{}, y, y, w.dim, mean + d, 1.0f / std::sqrt(var + w.eps), w.gamma, w.beta);
    } else if (w.norm == NormKind::rms_norm) {
      row_affine<A>{}(A{}, y, y, w.dim, 0.0f, 1.0f / std::sqrt(sumsq / w.dim + w.eps), w.gamma, nullptr);
    }
  }
}

}  // namespace attnkit::simd

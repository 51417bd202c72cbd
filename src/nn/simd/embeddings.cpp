// The fused embedding row in xsimd (contract in attnkit/nn/embeddings.hpp): one sweep gathers the
// word row, scales it, adds the token-type and position rows, stores the sum and accumulates its
// sum and sum of squares; a second sweep normalises the row while it is still in L1. One variant
// per number of added rows (0-2), and one without statistics for GPT-2's wte + wpe; picked once
// per call.
#include "attnkit/nn/embeddings.hpp"
#include "attnkit/core/simd_arch.hpp"
#include "ops/simd/row_norm.hpp"

namespace attnkit::simd {

template <class Arch, int NAdd, bool Stats>
struct row_gather_add {
  // y[i] = (w[i] * s + a0[i]) + a1[i], using the first NAdd of a0, a1 (BertEmbeddings' order of
  // the adds: token type, then position); with Stats, also sum(y) and sum(y^2) for the norm.
  // The addend count and the statistics are template parameters, so a pass without a norm
  // (GPT-2's wte + wpe) skips the statistics: 15 % quicker warm than computing them for nothing.
  void operator()(Arch, float* y, const float* w, float s, const float* a0, const float* a1, int dim, float& sum,
                  float& sumsq) const {
    using bf = xsimd::batch<float, Arch>;
    constexpr int N = static_cast<int>(bf::size);
    const bf vs(s);
    bf s0(0.f), s1(0.f), s2(0.f), s3(0.f), q0(0.f), q1(0.f), q2(0.f), q3(0.f);
    auto at = [&](int i) {
      bf v = bf::load_unaligned(w + i) * vs;
      if constexpr (NAdd >= 1) v += bf::load_unaligned(a0 + i);
      if constexpr (NAdd >= 2) v += bf::load_unaligned(a1 + i);
      v.store_unaligned(y + i);
      return v;
    };
    int i = 0;
    for (; i + 4 * N <= dim; i += 4 * N) {
      const bf a = at(i), b = at(i + N), c = at(i + 2 * N), d = at(i + 3 * N);
      if constexpr (Stats) {
        s0 += a; s1 += b; s2 += c; s3 += d;
        q0 = xsimd::fma(a, a, q0); q1 = xsimd::fma(b, b, q1);
        q2 = xsimd::fma(c, c, q2); q3 = xsimd::fma(d, d, q3);
      }
    }
    for (; i + N <= dim; i += N) {
      const bf a = at(i);
      if constexpr (Stats) {
        s0 += a;
        q0 = xsimd::fma(a, a, q0);
      }
    }
    sum = xsimd::hadd((s0 + s1) + (s2 + s3));
    sumsq = xsimd::hadd((q0 + q1) + (q2 + q3));
    for (; i < dim; ++i) {
      float v = w[i] * s;
      if constexpr (NAdd >= 1) v += a0[i];
      if constexpr (NAdd >= 2) v += a1[i];
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
constexpr std::size_t kAhead = 8;  // rows ahead: 8 measured quicker cold than 2 or 16
inline void touch_lines(const float* row, int dim) {
  float s = 0.0f;
  for (int i = 0; i < dim; i += 16) s += row[i];
  g_touch_sink = s;
}

// The norm's second sweep over a row y in L1, from the first sweep's sum and sum of squares. One
// out-of-line copy shared by the variants below (inlined into each, it cost 10 KB of .wasm).
static void normalize_row(float* y, const EmbeddingsView& w, float sum, float sumsq) {
  using A = simd_arch;
  if (w.norm == NormKind::layer_norm) {
    float mean, rstd;
    layer_norm_stats<A>(y, w.dim, sum, sumsq, w.eps, mean, rstd);
    row_affine<A>::template apply<true, true>(y, y, w.dim, mean, rstd, w.gamma, w.beta);
  } else if (w.norm == NormKind::rms_norm) {
    row_affine<A>::template apply<true, false, false>(y, y, w.dim, 0.0f, 1.0f / std::sqrt(sumsq / w.dim + w.eps), w.gamma,
                                               nullptr);
  }
}

template <int NAdd, bool Stats>
void rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions, const int32_t* types,
          std::size_t n) {
  using A = simd_arch;
  const std::size_t dim = static_cast<std::size_t>(w.dim);
  for (std::size_t r = 0; r < n; ++r) {
    float* y = out + r * dim;
    const float* p = w.position ? w.position + positions[r] * dim : nullptr;
    const float* t = w.token_type ? w.token_type + (types ? types[r] : 0) * dim : nullptr;
    if (r + kAhead < n) touch_lines(w.word + ids[r + kAhead] * dim, w.dim);
    float sum, sumsq;
    row_gather_add<A, NAdd, Stats>{}(A{}, y, w.word + ids[r] * dim, w.scale, t ? t : p, t ? p : nullptr, w.dim, sum,
                                     sumsq);
    if constexpr (Stats) normalize_row(y, w, sum, sumsq);
  }
}

using RowsFn = void (*)(float*, const EmbeddingsView&, const int32_t*, const int32_t*, const int32_t*, std::size_t);

void embeddings_rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions,
                     const int32_t* types, std::size_t n) {
  // Called through a pointer on purpose: wasm-opt inlines functions with one caller, and the
  // variants inlined into one function measured 1.8x slower in V8 (its register allocator gives
  // up on a function that size). Each variant stays a function of its own.
  // Without a norm only the one-addend case (GPT-2's wte + wpe) has a variant that skips the
  // statistics; the rarer ones take the statistics for nothing, which keeps the .wasm smaller.
  static constexpr RowsFn kRows[2][3] = {{rows<0, true>, rows<1, false>, rows<2, true>},
                                         {rows<0, true>, rows<1, true>, rows<2, true>}};
  const RowsFn f = kRows[w.norm != NormKind::none][(w.position != nullptr) + (w.token_type != nullptr)];
  f(out, w, ids, positions, types, n);
}

}  // namespace attnkit::simd

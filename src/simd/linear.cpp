// xsimd Linear kernels (contract in attnkit/linear.hpp).
//
// Leftover rows (rows % 4) go one at a time: the tail is small and fewer instantiations keep the
// .wasm small (its compile time is part of start-up).
//
// Both layouts work on register blocks of kMR input rows, with the weights traversed in cache-
// sized slices so that every row block reuses a slice from L1/L2 instead of streaming all of W
// from memory once per block:
// - out_in (nn.Linear): y[r][o] = dot(x[r], W[o]). A block holds kMR x 2 dot products, each
//   accumulated lane-wise over `in` and reduced once at the end; a slice is the weight rows that
//   fit in ~96 KB.
// - in_out (Conv1D): y[r][o..o+2N) += x[r][i] * W[i][o..o+2N) over i. A block holds kMR rows x
//   two vectors of outputs; a slice is a 2N-wide column strip of W (in * 32 bytes).
#include <algorithm>

#include "attnkit/linear.hpp"
#include "attnkit/simd_arch.hpp"

namespace attnkit::simd {

namespace {

constexpr int kMR = 4;

// out_in: MR rows of x against NR weight rows (dot products).
template <class Arch, int MR, int NR>
struct dot_block {
  using b = xsimd::batch<float, Arch>;
  static constexpr int N = static_cast<int>(b::size);

  void operator()(float* y, int ldy, const float* x, int in, const float* w, const float* bias) const {
    b acc[MR][NR];
    for (auto& row : acc)
      for (auto& a : row) a = b(0.f);
    int i = 0;
    for (; i + N <= in; i += N) {
      b wv[NR];
      for (int c = 0; c < NR; ++c) wv[c] = b::load_unaligned(w + static_cast<std::size_t>(c) * in + i);
      for (int r = 0; r < MR; ++r) {
        const b xv = b::load_unaligned(x + static_cast<std::size_t>(r) * in + i);
        for (int c = 0; c < NR; ++c) acc[r][c] = xsimd::fma(xv, wv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) {
        float s = xsimd::hadd(acc[r][c]);
        for (int k = i; k < in; ++k) s += x[static_cast<std::size_t>(r) * in + k] * w[static_cast<std::size_t>(c) * in + k];
        y[static_cast<std::size_t>(r) * ldy + c] = s + (bias ? bias[c] : 0.f);
      }
  }
};

template <class Arch, int MR>
void dot_rows(float* y, int ldy, const float* x, int in, const float* w, int o_begin, int o_end, const float* bias) {
  int o = o_begin;
  for (; o + 2 <= o_end; o += 2)
    dot_block<Arch, MR, 2>{}(y + o, ldy, x, in, w + static_cast<std::size_t>(o) * in, bias ? bias + o : nullptr);
  if (o < o_end) dot_block<Arch, MR, 1>{}(y + o, ldy, x, in, w + static_cast<std::size_t>(o) * in, bias ? bias + o : nullptr);
}

template <class Arch>
struct linear_out_in {
  void operator()(float* y, const float* x, std::size_t rows, int in, int out, const float* w, const float* bias) const {
    // Weight rows per slice: ~96 KB of W, at least 2.
    const int slice = std::max(2, (96 * 1024 / 4 / in) & ~1);
    for (int o0 = 0; o0 < out; o0 += slice) {
      const int o1 = std::min(out, o0 + slice);
      std::size_t r = 0;
      for (; r + kMR <= rows; r += kMR) dot_rows<Arch, kMR>(y + r * out, out, x + r * in, in, w, o0, o1, bias);
      for (; r < rows; ++r) dot_rows<Arch, 1>(y + r * out, out, x + r * in, in, w, o0, o1, bias);
    }
  }
};

// in_out: MR rows x NV vectors of outputs starting at column o.
template <class Arch, int MR, int NV>
struct axpy_block {
  using b = xsimd::batch<float, Arch>;
  static constexpr int N = static_cast<int>(b::size);

  void operator()(float* y, const float* x, int in, int out, const float* w, const float* bias) const {
    b acc[MR][NV];
    for (int c = 0; c < NV; ++c) {
      const b init = bias ? b::load_unaligned(bias + c * N) : b(0.f);
      for (int r = 0; r < MR; ++r) acc[r][c] = init;
    }
    for (int i = 0; i < in; ++i) {
      b wv[NV];
      for (int c = 0; c < NV; ++c) wv[c] = b::load_unaligned(w + static_cast<std::size_t>(i) * out + c * N);
      for (int r = 0; r < MR; ++r) {
        const b xb(x[static_cast<std::size_t>(r) * in + i]);
        for (int c = 0; c < NV; ++c) acc[r][c] = xsimd::fma(xb, wv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NV; ++c) acc[r][c].store_unaligned(y + static_cast<std::size_t>(r) * out + c * N);
  }
};

// The last out % N columns, one at a time.
inline void axpy_scalar_columns(float* y, const float* x, std::size_t rows, int in, int out, const float* w,
                                int o_begin, const float* bias) {
  for (std::size_t r = 0; r < rows; ++r)
    for (int o = o_begin; o < out; ++o) {
      float s = bias ? bias[o] : 0.f;
      for (int i = 0; i < in; ++i) s += x[r * in + i] * w[static_cast<std::size_t>(i) * out + o];
      y[r * out + o] = s;
    }
}

template <class Arch, int NV>
void axpy_strip(float* y, const float* x, std::size_t rows, int in, int out, const float* w, const float* bias) {
  std::size_t r = 0;
  for (; r + kMR <= rows; r += kMR) axpy_block<Arch, kMR, NV>{}(y + r * out, x + r * in, in, out, w, bias);
  for (; r < rows; ++r) axpy_block<Arch, 1, NV>{}(y + r * out, x + r * in, in, out, w, bias);
}

template <class Arch>
struct linear_in_out {
  void operator()(float* y, const float* x, std::size_t rows, int in, int out, const float* w, const float* bias) const {
    constexpr int N = static_cast<int>(xsimd::batch<float, Arch>::size);
    int o = 0;
    for (; o + 2 * N <= out; o += 2 * N) axpy_strip<Arch, 2>(y + o, x, rows, in, out, w + o, bias ? bias + o : nullptr);
    if (o + N <= out) {
      axpy_strip<Arch, 1>(y + o, x, rows, in, out, w + o, bias ? bias + o : nullptr);
      o += N;
    }
    if (o < out) axpy_scalar_columns(y, x, rows, in, out, w, o, bias);
  }
};

}  // namespace

void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias) {
  if (rows == 0) return;  // y may be null then (an empty result)
  if (layout == WeightLayout::out_in) linear_out_in<simd_arch>{}(y, x, rows, in, out, w, bias);
  else linear_in_out<simd_arch>{}(y, x, rows, in, out, w, bias);
}

}  // namespace attnkit::simd

// xsimd Linear kernels (contract in attnkit/ops/linear.hpp).
//
// Leftover rows (rows % 4) go one at a time.
//
// Both layouts work on register blocks of kMR input rows, with the weights traversed in cache-
// sized slices so that every row block reuses a slice from L1/L2 instead of streaming all of W
// from memory once per block:
// - out_in (nn.Linear): y[r][o] = dot(x[r], W[o]). A block holds kMR x 2 dot products, each
//   accumulated lane-wise over `in` and reduced once at the end; a slice is the weight rows that
//   fit in ~96 KB.
// - in_out (Conv1D): y[r][o..o+2N) += x[r][i] * W[i][o..o+2N) over i. A block holds kMR rows x
//   two vectors of outputs; a slice is a 2N-wide column strip of W (in * 32 bytes).
// Single rows (decoding) have kernels of their own: out_in with four accumulators along `in`, in_out
// streaming W row by row into y.
#include <algorithm>

#include "attnkit/ops/linear.hpp"
#include "attnkit/core/simd_arch.hpp"

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
        for (int c = 0; c < NR; ++c) acc[r][c] = madd(xv, wv[c], acc[r][c]);
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

// out_in, one row of x: each weight row's dot product with four accumulators along `in`. This is
// the matrix-vector product of decoding (the LM head over the whole vocabulary, every layer's
// projections), bound by streaming W: a block of weight rows, or a single accumulator, would wait
// on the add latency at every step (measured: 3x slower on the 50257 x 256 tied head).
template <class Arch>
struct dot_row {
  using b = xsimd::batch<float, Arch>;
  static constexpr int N = static_cast<int>(b::size);

  void operator()(float* y, const float* x, int in, const float* w, int o_begin, int o_end, const float* bias) const {
    for (int o = o_begin; o < o_end; ++o) {
      const float* r = w + static_cast<std::size_t>(o) * in;
      b a0(0.f), a1(0.f), a2(0.f), a3(0.f);
      int i = 0;
      for (; i + 4 * N <= in; i += 4 * N) {
        a0 = madd(b::load_unaligned(r + i), b::load_unaligned(x + i), a0);
        a1 = madd(b::load_unaligned(r + i + N), b::load_unaligned(x + i + N), a1);
        a2 = madd(b::load_unaligned(r + i + 2 * N), b::load_unaligned(x + i + 2 * N), a2);
        a3 = madd(b::load_unaligned(r + i + 3 * N), b::load_unaligned(x + i + 3 * N), a3);
      }
      for (; i + N <= in; i += N) a0 = madd(b::load_unaligned(r + i), b::load_unaligned(x + i), a0);
      float s = xsimd::hadd((a0 + a1) + (a2 + a3));
      for (; i < in; ++i) s += r[i] * x[i];
      y[o] = s + (bias ? bias[o] : 0.f);
    }
  }
};

template <class Arch>
struct linear_out_in {
  void operator()(float* y, const float* x, std::size_t rows, int in, int out, const float* w, const float* bias,
                  int o_begin, int o_end) const {
    // Weight rows per slice: ~96 KB of W, at least 2.
    const int slice = std::max(2, (96 * 1024 / 4 / in) & ~1);
    for (int o0 = o_begin; o0 < o_end; o0 += slice) {
      const int o1 = std::min(o_end, o0 + slice);
      std::size_t r = 0;
      for (; r + kMR <= rows; r += kMR) dot_rows<Arch, kMR>(y + r * out, out, x + r * in, in, w, o0, o1, bias);
      for (; r < rows; ++r) dot_row<Arch>{}(y + r * out, x + r * in, in, w, o0, o1, bias);
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
        for (int c = 0; c < NV; ++c) acc[r][c] = madd(xb, wv[c], acc[r][c]);
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NV; ++c) acc[r][c].store_unaligned(y + static_cast<std::size_t>(r) * out + c * N);
  }
};

// Columns o_begin .. o_end (the last out % N), one at a time.
inline void axpy_scalar_columns(float* y, const float* x, std::size_t rows, int in, int out, const float* w,
                                int o_begin, int o_end, const float* bias) {
  for (std::size_t r = 0; r < rows; ++r)
    for (int o = o_begin; o < o_end; ++o) {
      float s = bias ? bias[o] : 0.f;
      for (int i = 0; i < in; ++i) s += x[r * in + i] * w[static_cast<std::size_t>(i) * out + o];
      y[r * out + o] = s;
    }
}

template <class Arch, int NV>
void axpy_strip(float* y, const float* x, std::size_t rows, int in, int out, const float* w, const float* bias) {
  for (std::size_t r = 0; r + kMR <= rows; r += kMR) axpy_block<Arch, kMR, NV>{}(y + r * out, x + r * in, in, out, w, bias);
}

// in_out, one row of x (the rows % 4 left over; all of decoding): W streamed row by row,
// y[o_begin..o_end) accumulated in place (it stays in L1), four rows of W per pass over y. A
// column-strip walk reads 64 bytes from each row, a row apart, which the prefetchers follow
// poorly (decoding's layers ran at a third of streaming speed). Each column still adds bias, then
// x[0] W[0][o], x[1] W[1][o], ... in order, as axpy_block does: the same bits for any column range.
template <class Arch>
void axpy_row(float* y, const float* x, int in, int out, const float* w, const float* bias, int o_begin, int o_end) {
  using b = xsimd::batch<float, Arch>;
  constexpr int N = static_cast<int>(b::size);
  const int vend = o_begin + (o_end - o_begin) / N * N;
  for (int o = o_begin; o < o_end; ++o) y[o] = bias ? bias[o] : 0.f;
  int i = 0;
  for (; i + 4 <= in; i += 4) {
    const float* w0 = w + static_cast<std::size_t>(i) * out;
    const float* w1 = w0 + out;
    const float* w2 = w1 + out;
    const float* w3 = w2 + out;
    const b x0(x[i]), x1(x[i + 1]), x2(x[i + 2]), x3(x[i + 3]);
    int o = o_begin;
    for (; o < vend; o += N) {
      b acc = b::load_unaligned(y + o);
      acc = madd(x0, b::load_unaligned(w0 + o), acc);
      acc = madd(x1, b::load_unaligned(w1 + o), acc);
      acc = madd(x2, b::load_unaligned(w2 + o), acc);
      acc = madd(x3, b::load_unaligned(w3 + o), acc);
      acc.store_unaligned(y + o);
    }
    for (; o < o_end; ++o) {
      float s = y[o];
      s += x[i] * w0[o];
      s += x[i + 1] * w1[o];
      s += x[i + 2] * w2[o];
      s += x[i + 3] * w3[o];
      y[o] = s;
    }
  }
  for (; i < in; ++i) {
    const float* wi = w + static_cast<std::size_t>(i) * out;
    const b xi(x[i]);
    int o = o_begin;
    for (; o < vend; o += N) madd(xi, b::load_unaligned(wi + o), b::load_unaligned(y + o)).store_unaligned(y + o);
    for (; o < o_end; ++o) y[o] += x[i] * wi[o];
  }
}

template <class Arch>
struct linear_in_out {
  void operator()(float* y, const float* x, std::size_t rows, int in, int out, const float* w, const float* bias,
                  int o_begin, int o_end) const {
    constexpr int N = static_cast<int>(xsimd::batch<float, Arch>::size);
    const std::size_t blocked = rows - rows % kMR;
    if (blocked > 0) {
      int o = o_begin;
      for (; o + 2 * N <= o_end; o += 2 * N) axpy_strip<Arch, 2>(y + o, x, blocked, in, out, w + o, bias ? bias + o : nullptr);
      if (o + N <= o_end) {
        axpy_strip<Arch, 1>(y + o, x, blocked, in, out, w + o, bias ? bias + o : nullptr);
        o += N;
      }
      if (o < o_end) axpy_scalar_columns(y, x, blocked, in, out, w, o, o_end, bias);
    }
    for (std::size_t r = blocked; r < rows; ++r) axpy_row<Arch>(y + r * out, x + r * in, in, out, w, bias, o_begin, o_end);
  }
};

}  // namespace

void linear(float* y, const float* x, std::size_t rows, int in, int out, const float* w, WeightLayout layout,
            const float* bias, int o_begin, int o_end) {
  if (rows == 0) return;  // y may be null then (an empty result)
  if (layout == WeightLayout::out_in) linear_out_in<simd_arch>{}(y, x, rows, in, out, w, bias, o_begin, o_end);
  else linear_in_out<simd_arch>{}(y, x, rows, in, out, w, bias, o_begin, o_end);
}

}  // namespace attnkit::simd

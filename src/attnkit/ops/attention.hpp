// Scaled dot-product attention (Vaswani et al. 2017, eq. 1) with grouped-query heads, masks,
// ALiBi biases and causal masking, in the semantics of torch.nn.functional.scaled_dot_product_attention.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnkit/core/status.hpp"

namespace attnkit {

// A [batch, heads, length, dim] tensor seen through strides counted in floats; the last dim is
// contiguous. Contiguous [B, H, L, d] has strides {H*L*d, L*d, d}; the [B, L, H*d] layout of a
// projection output has {L*H*d, d, H*d}, so heads are read in place without a transposed copy.
template <class T>
struct Heads {
  T* data = nullptr;
  std::size_t batch_stride = 0, head_stride = 0, row_stride = 0;

  T* row(int b, int h, int i) const { return data + b * batch_stride + h * head_stride + i * row_stride; }
};

// A contiguous [B, heads, length, dim] view.
template <class T>
Heads<T> contiguous(T* data, int heads, int length, int dim) {
  return {data, static_cast<std::size_t>(heads) * length * dim, static_cast<std::size_t>(length) * dim,
          static_cast<std::size_t>(dim)};
}

// The same view, read-only (for a kernel's input).
inline Heads<const float> as_const(const Heads<float>& h) {
  return {h.data, h.batch_stride, h.head_stride, h.row_stride};
}

enum class MaskKind : int {
  none = 0,
  boolean = 1,   // uint8: 1 = may attend, 0 = may not (PyTorch's scaled_dot_product_attention)
  additive = 2,  // float32 added to the scaled scores; -inf = may not attend
};

// A mask broadcast like PyTorch to [batch, heads, q_len, kv_len]: dims[0..2] are each 1 or the
// full size, dims[3] == kv_len. Row-major, contiguous.
struct MaskView {
  MaskKind kind = MaskKind::none;
  const void* data = nullptr;
  int dims[4] = {1, 1, 1, 1};

  // Offset of the mask row that applies to (b, h, i).
  std::size_t row_offset(int b, int h, int i) const {
    const std::size_t n3 = dims[3], n2 = dims[2], n1 = dims[1];
    return ((static_cast<std::size_t>(dims[0] > 1 ? b : 0) * n1 + (dims[1] > 1 ? h : 0)) * n2 +
            (dims[2] > 1 ? i : 0)) * n3;
  }
};

struct AttentionShape {
  int batch = 0, heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head_dim = 0, v_dim = 0;
};

// Attention for every (batch b, head h, query i):
//   s[j]   = cap(scale * dot(q[b,h,i], k[b,g,j])) + alibi[h] * (j - p_i) + mask[b,h,i,j]
//   cap(x) = softcap * tanh(x / softcap) with a soft-cap (Gemma 2's attn_logit_softcapping), else x
//   w      = softmax_j(s)          out[b,h,i] = sum_j w[j] * v[b,g,j]
// with g = h / (heads / kv_heads) (grouped-query attention; kv_heads == heads is multi-head,
// kv_heads == 1 multi-query). p_i = (kv_len - q_len) + i is the query's position when the keys
// include kv_len - q_len cached ones. Key j is masked when the boolean mask is 0, the additive
// mask is -inf, or (causal) j > p_i: the causal mask is aligned to the bottom right, as
// Hugging Face decoders with a KV cache use it (PyTorch's is_causal aligns top left; the two agree
// when q_len == kv_len). A query whose scores are all -inf (every key masked) gets a zero output
// row and zero weights, never NaN (PyTorch returns NaN there): the one documented difference.
//
// Special values follow PyTorch's math path (softmax(q k^T * scale + bias) @ v with masks as an
// additive 0 / -inf bias): a NaN score, or a +inf one, makes its whole row NaN; NaN or inf in v
// reaches every output row of its head, masked keys included (0 * NaN = NaN, as in a matmul);
// finite very negative scores (Hugging Face's finfo(float32).min masks) are a softmax, not a
// masked row. Both builds give these results: the SIMD kernel runs only on inputs that are
// finite and far from overflow (attention_needs_reference, one pass over the inputs), the
// scalar reference on everything else.
//
// The ALiBi term is the paper's -m * (p_i - j); softmax ignores a per-row constant, so this gives
// the same weights as BLOOM's m * j.
//
// Shapes: q [B, H, Lq, d], k [B, Hkv, Lk, d], v [B, Hkv, Lk, dv], out [B, H, Lq, dv] (strided
// views), weights nullptr or contiguous [B, H, Lq, Lk], alibi nullptr or [H] slopes.
struct AttentionArgs {
  AttentionShape shape;
  Heads<const float> q, k, v;
  Heads<float> out;
  float* weights = nullptr;
  MaskView mask;
  float scale = 0;
  bool causal = false;
  const float* alibi = nullptr;
  float softcap = 0;  // 0 = none
};

// Checks the seven sizes (doubles from JavaScript) and fills `shape`: all integers, heads a
// multiple of kv_heads, sizes and element counts within limits.
Status check_attention_shape(double batch, double heads, double kv_heads, double q_len, double kv_len,
                             double head_dim, double v_dim, AttentionShape& shape);

// Checks mask dims (each 1 or the full size, the last == kv_len) against `length` elements.
Status check_attention_mask(MaskKind kind, const double dims[4], double length, const AttentionShape& shape,
                            MaskView& mask);

// scale must be finite (the bindings check it before copying inputs; attention() checks it too).
Status check_attention_scale(double scale);

// Validated entry: checks scale, allocates the kernel's scratch (out_of_memory if it cannot) and
// runs the xsimd kernel in SIMD builds, the scalar reference otherwise. Shape and mask must have
// passed the checks above; the pointers must cover the shapes.
Status attention(const AttentionArgs& args);

// Floats of scratch the SIMD kernel needs for `shape` (with or without weights) when it runs on
// `threads` threads (each has its own part).
std::size_t attention_scratch_floats(const AttentionShape& shape, bool weights, int threads = 1);

// True when the inputs hold a NaN or an infinity (in q, k, v, the additive mask as NaN / +inf,
// the slopes) or values large enough for a score or a tile's sum to overflow: attention() then
// runs the reference, whose arithmetic is PyTorch's, instead of the tiled kernel.
bool attention_needs_reference(const AttentionArgs& args);

// The largest |x| over a [batch, heads, length, n] view; +inf when any value is NaN or infinite
// (the input check of attention_needs_reference).
namespace ref {
float max_abs(const Heads<const float>& x, int batch, int heads, int length, int n);
}
namespace simd {
float max_abs(const Heads<const float>& x, int batch, int heads, int length, int n);
}

namespace ref {
// One query row at a time: scores, softmax, weighted sum. `scores`: kv_len + head_dim floats of
// scratch (the row's scores, then its scaled query).
// O(Lk) memory, readable, slow. exact = false (inputs without special values) skips masked keys
// and zero weights, which cannot change a finite result.
void attention(const AttentionArgs& args, float* scores, bool exact);
void attention(const AttentionArgs& args);  // exact, with its own scratch (tests)
}  // namespace ref

namespace simd {
// Tiled online softmax (Milakov & Gimelshein 2018; FlashAttention): blocks of 4 queries stream
// over key tiles, keep a running max and sum per row and rescale the partial output, so the
// [Lq, Lk] score matrix never exists. Key tiles past a block's causal limit are skipped. With
// weights requested, the tile is the whole key row (the weights are the output anyway).
// Runs on thread_count() threads (attnkit/core/parallel.hpp), with the same bits at any count.
// `scratch`: attention_scratch_floats(shape, weights != nullptr, thread_count()) floats.
void attention(const AttentionArgs& args, float* scratch);
}  // namespace simd

}  // namespace attnkit

// Token ids to vectors: one-hot, embedding lookup, and the position ids that index position tables.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnkit/core/status.hpp"

namespace attnkit {

// Checks every id is in [0, limit); names the first bad one as `what[index]`.
Status check_ids(const char* what, const int32_t* ids, std::size_t n, int64_t limit);

// Validation alone for one_hot / embedding (the bindings call these before allocating a result).
Status check_one_hot(const int32_t* ids, std::size_t n, double depth);
Status check_embedding(const int32_t* ids, std::size_t n, double vocab, double dim, double scale);

// One-hot (torch.nn.functional.one_hot, as float32).
//   ids: int32 [n], each in [0, depth); out: float32 [n, depth], out[t][ids[t]] = 1, else 0.
Status one_hot(float* out, const int32_t* ids, std::size_t n, int depth);

// Embedding lookup (torch.nn.Embedding forward, times an optional scale).
//   table: float32 [vocab, dim]; ids: int32 [n] in [0, vocab); out: float32 [n, dim],
//   out[t] = table[ids[t]] * scale. scale = 1 is a plain gather; sqrt(dim) is the Annotated
//   Transformer's Embeddings. padding_idx has no effect on the forward pass (PyTorch only zeroes
//   that row at initialisation and stops its gradient), so it is not a parameter here.
Status embedding(float* out, const int32_t* ids, std::size_t n, const float* table, int vocab, int dim,
                 float scale);

// PyTorch's max_norm renormalisation (torch.embedding_renorm_), applied to `table` in place:
// every distinct row referenced by ids whose norm_type-norm exceeds max_norm is multiplied by
// max_norm / (norm + 1e-7). Rows not referenced are left alone.
Status embedding_renorm(float* table, int vocab, int dim, const int32_t* ids, std::size_t n,
                        double max_norm, double norm_type);

// Position ids, int32 [batch, length]:
//   arange:      past + t                                       (a KV cache of `past` tokens)
//   from mask:   cumsum(mask) - 1 over the mask's `past + length` columns, then 1 where mask is 0,
//                keeping the last `length` columns (Hugging Face generation with left padding)
//   from ids:    RoBERTa: (cumsum(ids != pad) + past) * (ids != pad) + pad
// Shared argument checks of the three (batch, length, past: integers, output within limits).
Status check_position_ids(double batch, double length, double past);
Status position_ids_arange(int32_t* out, int batch, int length, int past);
Status position_ids_from_mask(int32_t* out, const int32_t* mask, int batch, int length, int past);
Status position_ids_from_ids(int32_t* out, const int32_t* ids, int batch, int length, int padding_idx,
                             int past);

namespace ref {
void one_hot(float* out, const int32_t* ids, std::size_t n, int depth);
void embedding(float* out, const int32_t* ids, std::size_t n, const float* table, int dim, float scale);
}  // namespace ref

namespace simd {
void one_hot(float* out, const int32_t* ids, std::size_t n, int depth);
void embedding(float* out, const int32_t* ids, std::size_t n, const float* table, int dim, float scale);
}  // namespace simd

}  // namespace attnkit

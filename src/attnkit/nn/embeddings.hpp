// The input embedding stage as one module (Hugging Face BertEmbeddings, GPT-2's wte + wpe, the
// Annotated Transformer's Embeddings + PositionalEncoding): word lookup times a scale, plus a
// position row, plus a token-type row, then an optional LayerNorm or RMSNorm, with the weights
// owned by the module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attnkit/ops/positional.hpp"
#include "attnkit/core/float_buffer.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

enum class PositionKind : int { none = 0, sinusoidal = 1, learned = 2 };
enum class NormKind : int { none = 0, layer_norm = 1, rms_norm = 2 };

// Sizes and options travel as doubles so that check_embeddings_config can name bad values.
struct EmbeddingsConfig {
  double vocab_size = 0;
  double dim = 0;
  double max_positions = 512;     // rows of the position table (learned or sinusoidal)
  double type_vocab_size = 0;     // 0: no token-type table
  PositionKind positional = PositionKind::learned;
  double scale = 1;               // multiplies the word rows only (sqrt(dim) in the Annotated Transformer)
  double padding_idx = -1;        // documentation only, as in torch.nn.Embedding's forward
  NormKind norm = NormKind::layer_norm;
  double eps = 1e-12;             // BERT's layer_norm_eps
  double sinusoidal_base = 10000;
  SinusoidalLayout sinusoidal_layout = SinusoidalLayout::interleaved;
};

Status check_embeddings_config(const EmbeddingsConfig& c);

// The weights of one row computation, as the kernels read them. Null tables are absent terms.
// gamma is required when norm is set, beta for LayerNorm (the module always holds both).
struct EmbeddingsView {
  const float* word;        // [vocab, dim]
  const float* position;    // [max_positions, dim] or null
  const float* token_type;  // [type_vocab, dim] or null
  const float* gamma;       // [dim], LayerNorm and RMSNorm
  const float* beta;        // [dim], LayerNorm
  int dim;
  float scale;
  NormKind norm;
  float eps;
};

// The fused row kernel.
//   ids, positions, types: int32 [n], already validated (types may be null: type 0 when the
//   table exists); out: float32 [n, dim].
//   out[t] = norm((word[ids[t]] * scale + token_type[types[t]]) + position[positions[t]])
namespace ref {
void embeddings_rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions,
                     const int32_t* types, std::size_t n);
}
namespace simd {
void embeddings_rows(float* out, const EmbeddingsView& w, const int32_t* ids, const int32_t* positions,
                     const int32_t* types, std::size_t n);
}

// Which weight of the module: the names setWeights takes in JavaScript.
enum class EmbeddingsWeight : int { word = 0, position = 1, token_type = 2, gamma = 3, beta = 4 };

class Embeddings : public HeapObject {
 public:
  // Validates the config and allocates the tables (word, learned positions and token types start
  // at zero and must be set; gamma starts at 1 and beta at 0, as in PyTorch; a sinusoidal table is
  // computed here).
  static Status create(const EmbeddingsConfig& config, std::unique_ptr<Embeddings>& out);

  const EmbeddingsConfig& config() const { return config_; }
  int dim() const { return dim_; }

  // Storage of one weight, to be filled by the caller after checking `length` against its size
  // (an error names the weight, its expected size and `length`). Marks the weight as set unless
  // `check_only` (used to check several weights before writing any).
  Status weight(EmbeddingsWeight which, double length, float*& data, bool check_only = false);

  // Forward over a batch of sequences.
  //   ids: int32 [batch, length]; types: [batch, length] or null (type 0);
  //   positions: [batch, length], or [length] shared by the batch, or null: then from `mask`
  //   ([batch, past + length], 1 = token; Hugging Face's cumsum(mask) - 1 with 1 at padding) if
  //   given, else past + arange(length).
  //   out: float32 [batch, length, dim]. Every id, type and position is checked first; on error
  //   `out` is untouched. forward = prepare (all checks, then the position ids) + run; callers
  //   that allocate `out` only after the checks (the bindings) call the two themselves.
  struct Inputs {
    const int32_t* ids = nullptr;
    double batch = 1, length = 0;
    const int32_t* types = nullptr;
    double types_length = 0;
    const int32_t* positions = nullptr;
    double positions_length = 0;
    const int32_t* mask = nullptr;
    double mask_length = 0;
    double past = 0;
  };
  Status forward(float* out, const Inputs& in);
  // forward with the scalar reference kernel (for tests).
  Status forward_reference(float* out, const Inputs& in);

  Status prepare(const Inputs& in);
  // The kernel over the inputs of the last successful prepare(in).
  void run(float* out, const Inputs& in, bool reference = false) const;
  // Elements of the output; valid after a successful prepare(in).
  std::size_t output_size(const Inputs& in) const;

  // The word table as an output embedding (a language model's head, tied or not):
  //   x: float32 [rows, dim] (final hidden states); y: float32 [rows, vocab];
  //   y[r][v] = sum_i x[r][i] * word[v][i]  (torch: x @ word.T; the word scale is not applied).
  // check_logits: rows an integer >= 1, x_length = rows * dim, rows * vocab within the output
  // limit (errors name "rows" / "x").
  Status check_logits(double rows, double x_length) const;
  void logits(float* y, const float* x, std::size_t rows) const;

 private:
  Embeddings() = default;
  EmbeddingsView view() const;
  Status check_forward(const Inputs& in) const;

  EmbeddingsConfig config_;
  int dim_ = 0;
  FloatBuffer word_, position_, token_type_, gamma_, beta_;
  bool word_set_ = false, position_set_ = false, token_type_set_ = false;
  Buffer<int32_t> positions_;  // scratch: the position id of each row of the last forward
};

}  // namespace attnkit

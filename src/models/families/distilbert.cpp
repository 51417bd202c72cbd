// DistilBERT: BERT's layers under other names, no token types.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

// DistilBERT: BERT's post-norm layers under other names (dim, hidden_dim, n_heads, n_layers), no
// token types, LayerNorm eps fixed at 1e-12 in the modeling code. With sinusoidal_pos_embds the
// table is computed at init and saved in the checkpoint like a learned one.
Status read_distilbert(Reader& r, const json&, const std::string&, json& spec) {
  double vocab, dim, layers, heads, ffn, positions, pad;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"dim"}, dim);
  if (s.ok()) s = r.size({"n_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"n_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.size({"hidden_dim"}, ffn);
  if (s.ok()) s = r.optional_integer("max_position_embeddings", positions, 512, 1);
  if (s.ok()) s = r.optional_integer("pad_token_id", pad, 0, 0);
  bool sinusoidal = false;
  std::string act;
  if (s.ok()) s = r.boolean("sinusoidal_pos_embds", sinusoidal, false);
  if (s.ok()) s = r.string("activation", act, "gelu");
  if (s.ok()) s = activation_name("activation", act, act);
  if (!s.ok()) return s;
  if (std::fmod(dim, heads) != 0) {
    return bad("n_heads", "dim (" + show_number(dim) + ") must be divisible by n_heads (" + show_number(heads) + ")");
  }
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "learned"}, {"norm", "layernorm"}, {"eps", 1e-12}, {"paddingIdx", pad}};
  spec["positionIds"] = "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", heads}, {"headDim", dim / heads},
                   {"ffnDim", ffn}, {"activation", act}, {"normPlacement", "post"}, {"norm", "layernorm"},
                   {"eps", 1e-12}, {"bias", true}, {"outBias", true}, {"ffnBias", true}, {"ffnGated", false},
                   {"weightLayout", "outIn"}, {"positional", "none"}, {"causal", false}};
  spec["finalNorm"] = nullptr;
  return s;
}

}  // namespace

json distilbert_tensors() {
  return json::parse(R"json({
    "prefixes": ["distilbert."],
    "embeddings": {
      "embeddings.word_embeddings.weight": "word",
      "embeddings.position_embeddings.weight": "position",
      "embeddings.LayerNorm.weight": "normWeight",
      "embeddings.LayerNorm.bias": "normBias"
    },
    "layer": "^transformer\\.layer\\.(\\d+)\\.(.+)$",
    "layerPrefix": "transformer.layer.",
    "layerWeights": {
      "attention.q_lin.weight": "qWeight",
      "attention.q_lin.bias": "qBias",
      "attention.k_lin.weight": "kWeight",
      "attention.k_lin.bias": "kBias",
      "attention.v_lin.weight": "vWeight",
      "attention.v_lin.bias": "vBias",
      "attention.out_lin.weight": "outWeight",
      "attention.out_lin.bias": "outBias",
      "sa_layer_norm.weight": "norm1.weight",
      "sa_layer_norm.bias": "norm1.bias",
      "ffn.lin1.weight": "linear1.weight",
      "ffn.lin1.bias": "linear1.bias",
      "ffn.lin2.weight": "linear2.weight",
      "ffn.lin2.bias": "linear2.bias",
      "output_layer_norm.weight": "norm2.weight",
      "output_layer_norm.bias": "norm2.bias"
    },
    "final": {},
    "mlm": {
      "vocab_transform.weight": "denseWeight",
      "vocab_transform.bias": "denseBias",
      "vocab_layer_norm.weight": "normWeight",
      "vocab_layer_norm.bias": "normBias",
      "vocab_projector.bias": "bias"
    },
    "tiedDecoder": "^vocab_projector\\.weight$",
    "heads": {
      "sequence": {
        "pre_classifier.weight": "denseWeight",
        "pre_classifier.bias": "denseBias",
        "classifier.weight": "weight",
        "classifier.bias": "bias"
      },
      "token": {"classifier.weight": "weight", "classifier.bias": "bias"},
      "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
    },
    "ignore": "^embeddings\\.position_ids$",
    "configKeys": {
      "dim": "dim",
      "numHeads": "n_heads",
      "numKvHeads": "n_heads",
      "headDim": "head size",
      "ffnDim": "hidden_dim",
      "vocabSize": "vocab_size",
      "maxPositions": "max_position_embeddings",
      "numLabels": "num_labels (the entries of id2label)"
    }
  })json");
}

// distilbert
extern const Family kDistilbertFamily{
    "distilbert", read_distilbert, /*encoder=*/true, /*tie_default=*/false,
    R"json({"sequence": {"pool": "first", "dense": "own", "activation": "relu"}, "token": {}, "span": {}})json",
    distilbert_tensors};


}  // namespace attnkit

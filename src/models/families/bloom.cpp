// BLOOM: ALiBi.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

// BLOOM: ALiBi instead of positions, a LayerNorm on the embeddings, pre-LayerNorm layers with a
// fused per-head query_key_value, an MLP of 4 x hidden with BLOOM's tanh gelu, the head tied.
Status read_bloom(Reader& r, const json&, const std::string&, json& spec) {
  double vocab, dim, layers, heads, eps;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"hidden_size", "n_embed"}, dim);
  if (s.ok()) s = r.size({"n_layer", "num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"n_head", "num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.number("layer_norm_epsilon", eps, 1e-5, 0, 1);
  if (s.ok()) s = r.require("apply_residual_connection_post_layernorm", false, "the residual is taken before the LayerNorm");
  double tp = 1;
  if (s.ok()) s = r.optional_integer("pretraining_tp", tp, 1, 1);  // slices the dense layers: the same math
  if (!s.ok()) return s;
  if (std::fmod(dim, heads) != 0) {
    return bad("n_head", "hidden_size (" + show_number(dim) + ") must be divisible by n_head (" + show_number(heads) + ")");
  }
  // ALiBi has no table of positions; the KV cache and generation are bounded by this context.
  const double positions = 2048;
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "none"}, {"norm", "layernorm"}, {"eps", eps}};
  spec["positionIds"] = "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", heads}, {"headDim", dim / heads}, {"ffnDim", 4 * dim},
                   {"activation", "gelu_tanh"}, {"normPlacement", "pre"}, {"norm", "layernorm"}, {"eps", eps},
                   {"bias", true}, {"outBias", true}, {"ffnBias", true}, {"ffnGated", false}, {"weightLayout", "outIn"},
                   {"positional", "alibi"}, {"causal", true}};
  spec["finalNorm"] = {{"norm", "layernorm"}, {"eps", eps}};
  return s;
}

}  // namespace

json bloom_tensors() {
  return json::parse(R"json({
    "prefixes": ["transformer."],
    "embeddings": {
      "word_embeddings.weight": "word",
      "word_embeddings_layernorm.weight": "normWeight",
      "word_embeddings_layernorm.bias": "normBias"
    },
    "layer": "^h\\.(\\d+)\\.(.+)$",
    "layerPrefix": "h.",
    "layerWeights": {
      "input_layernorm.weight": "norm1.weight",
      "input_layernorm.bias": "norm1.bias",
      "post_attention_layernorm.weight": "norm2.weight",
      "post_attention_layernorm.bias": "norm2.bias",
      "self_attention.query_key_value.weight": {"split": "perHead", "into": ["qWeight", "kWeight", "vWeight"]},
      "self_attention.query_key_value.bias": {"split": "perHead", "into": ["qBias", "kBias", "vBias"]},
      "self_attention.dense.weight": "outWeight",
      "self_attention.dense.bias": "outBias",
      "mlp.dense_h_to_4h.weight": "linear1.weight",
      "mlp.dense_h_to_4h.bias": "linear1.bias",
      "mlp.dense_4h_to_h.weight": "linear2.weight",
      "mlp.dense_4h_to_h.bias": "linear2.bias"
    },
    "final": {"ln_f.weight": "weight", "ln_f.bias": "bias"},
    "heads": {
      "sequence": {"score.weight": "weight"},
      "token": {"classifier.weight": "weight", "classifier.bias": "bias"},
      "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
    },
    "ignore": "^$",
    "configKeys": {
      "dim": "hidden_size",
      "numHeads": "n_head",
      "numKvHeads": "n_head",
      "headDim": "head size",
      "ffnDim": "4 * hidden_size",
      "vocabSize": "vocab_size",
      "maxPositions": "the context (2048)"
    }
  })json");
}

// bloom
extern const Family kBloomFamily{
    "bloom", read_bloom, /*encoder=*/false, /*tie_default=*/true,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    bloom_tensors};


}  // namespace attnkit

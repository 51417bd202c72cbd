// GPT-2: pre-LayerNorm decoder with learned positions and Conv1D weights.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

Status read_gpt2(Reader& r, const json&, const std::string&, json& spec) {
  double vocab, dim, layers, heads, positions, inner, eps;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"n_embd", "hidden_size"}, dim);
  if (s.ok()) s = r.size({"n_layer", "num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"n_head", "num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.size({"n_positions", "max_position_embeddings"}, positions);
  if (s.ok()) s = r.optional_integer("n_inner", inner, 0);
  if (s.ok()) s = r.number("layer_norm_epsilon", eps, 1e-5, 0, 1);
  std::string act;
  bool scaled = true, by_layer = false;
  if (s.ok()) s = r.string("activation_function", act, "gelu_new");
  if (s.ok()) s = activation_name("activation_function", act, act);
  if (s.ok()) s = r.boolean("scale_attn_weights", scaled, true);
  if (s.ok()) s = r.boolean("scale_attn_by_inverse_layer_idx", by_layer, false);
  if (s.ok()) s = r.require("add_cross_attention", false, "cross-attention layers are not mapped from config.json");
  if (!s.ok()) return s;
  if (std::fmod(dim, heads) != 0) {
    return bad("n_head", "n_embd (" + show_number(dim) + ") must be divisible by n_head (" + show_number(heads) + ")");
  }
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "learned"}, {"norm", "none"}};
  spec["positionIds"] = "arange";
  json layer = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", heads}, {"headDim", dim / heads},
                {"ffnDim", inner > 0 ? inner : 4 * dim}, {"activation", act}, {"normPlacement", "pre"},
                {"norm", "layernorm"}, {"eps", eps}, {"bias", true}, {"outBias", true}, {"ffnBias", true},
                {"ffnGated", false}, {"weightLayout", "inOut"}, {"positional", "none"}, {"causal", true}};
  if (!scaled) layer["scale"] = 1.0;
  spec["layer"] = layer;
  if (by_layer) spec["layerScale"] = "inverseLayerIdx";
  spec["finalNorm"] = {{"norm", "layernorm"}, {"eps", eps}};
  return s;
}

}  // namespace

json gpt2_tensors() {
  return json::parse(R"json({
    "prefixes": ["transformer."],
    "embeddings": {"wte.weight": "word", "wpe.weight": "position"},
    "layer": "^h\\.(\\d+)\\.(.+)$",
    "layerPrefix": "h.",
    "layerWeights": {
      "ln_1.weight": "norm1.weight",
      "ln_1.bias": "norm1.bias",
      "attn.c_attn.weight": "inProjWeight",
      "attn.c_attn.bias": "inProjBias",
      "attn.c_proj.weight": "outWeight",
      "attn.c_proj.bias": "outBias",
      "ln_2.weight": "norm2.weight",
      "ln_2.bias": "norm2.bias",
      "mlp.c_fc.weight": "linear1.weight",
      "mlp.c_fc.bias": "linear1.bias",
      "mlp.c_proj.weight": "linear2.weight",
      "mlp.c_proj.bias": "linear2.bias"
    },
    "final": {"ln_f.weight": "weight", "ln_f.bias": "bias"},
    "heads": {
      "sequence": {"score.weight": "weight"},
      "token": {"classifier.weight": "weight", "classifier.bias": "bias"},
      "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
    },
    "ignore": "^h\\.\\d+\\.attn\\.(bias|masked_bias)$",
    "configKeys": {
      "dim": "n_embd",
      "numHeads": "n_head",
      "numKvHeads": "n_head",
      "headDim": "head size",
      "ffnDim": "n_inner",
      "vocabSize": "vocab_size",
      "maxPositions": "n_positions"
    }
  })json");
}

// gpt2
extern const Family kGpt2Family{
    "gpt2", read_gpt2, /*encoder=*/false, /*tie_default=*/true,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    gpt2_tensors};


}  // namespace attnkit

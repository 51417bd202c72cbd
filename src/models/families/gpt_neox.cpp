// GPT-NeoX (Pythia): parallel residual, partial rotary.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

// GPT-NeoX (Pythia): pre-LayerNorm layers with a parallel residual (use_parallel_residual), rotary
// on the first rotary_pct of each head's dims, a fused per-head query_key_value, biases on every
// projection, and an untied embed_out head.
Status read_gpt_neox(Reader& r, const json& j, const std::string&, json& spec) {
  double vocab, dim, layers, heads, ffn, positions, eps, base, pct;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"hidden_size"}, dim);
  if (s.ok()) s = r.size({"num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.size({"intermediate_size"}, ffn);
  if (s.ok()) s = r.optional_integer("max_position_embeddings", positions, 2048, 1);
  if (s.ok()) s = r.number("layer_norm_eps", eps, 1e-5, 0, 1);
  if (s.ok()) s = r.number("rotary_emb_base", base, 10000, 1.0000001, 1e30);
  if (s.ok() && r.has("rope_theta")) s = r.number("rope_theta", base, 10000, 1.0000001, 1e30);
  if (s.ok()) s = r.number("rotary_pct", pct, 0.25, 0, 1);
  if (s.ok() && r.has("partial_rotary_factor")) s = r.number("partial_rotary_factor", pct, 0.25, 0, 1);
  bool parallel = true, bias = true;
  std::string act;
  if (s.ok()) s = r.boolean("use_parallel_residual", parallel, true);
  if (s.ok()) s = r.boolean("attention_bias", bias, true);
  if (s.ok()) s = r.string("hidden_act", act, "gelu");
  if (s.ok()) s = activation_name("hidden_act", act, act);
  if (!s.ok()) return s;
  if (std::fmod(dim, heads) != 0) {
    return bad("num_attention_heads", "hidden_size (" + show_number(dim) + ") must be divisible by num_attention_heads (" +
                                          show_number(heads) + ")");
  }
  const double head_dim = dim / heads, rotary_dim = std::floor(head_dim * pct);
  if (rotary_dim < 2 || std::fmod(rotary_dim, 2) != 0) {
    return bad("rotary_pct", "the rotary dims (head size " + show_number(head_dim) + " * rotary_pct = " +
                                 show_number(rotary_dim) + ") must be even and at least 2");
  }
  json rotary = {{"base", base}, {"layout", "half"}, {"rotaryDim", rotary_dim}}, scaling, unknown = json::array();
  r.has("rope_scaling");
  if (j.contains("rope_scaling")) {
    s = rope_scaling(j["rope_scaling"], positions, scaling, unknown);
    if (!s.ok()) return s;
    if (!scaling.is_null()) rotary["scaling"] = scaling;
  }
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "none"}, {"norm", "none"}};
  spec["positionIds"] = "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", heads}, {"headDim", head_dim}, {"ffnDim", ffn},
                   {"activation", act}, {"normPlacement", "pre"}, {"norm", "layernorm"}, {"eps", eps}, {"bias", bias},
                   {"outBias", bias}, {"ffnBias", true}, {"ffnGated", false}, {"weightLayout", "outIn"},
                   {"positional", "rotary"}, {"rotary", rotary}, {"causal", true}, {"parallel", parallel}};
  spec["finalNorm"] = {{"norm", "layernorm"}, {"eps", eps}};
  spec["ropeScalingUnknown"] = unknown;
  return s;
}

}  // namespace

json gpt_neox_tensors() {
  return json::parse(R"json({
    "prefixes": ["gpt_neox."],
    "embeddings": {"embed_in.weight": "word"},
    "layer": "^layers\\.(\\d+)\\.(.+)$",
    "layerPrefix": "layers.",
    "layerWeights": {
      "input_layernorm.weight": "norm1.weight",
      "input_layernorm.bias": "norm1.bias",
      "post_attention_layernorm.weight": "norm2.weight",
      "post_attention_layernorm.bias": "norm2.bias",
      "attention.query_key_value.weight": {"split": "perHead", "into": ["qWeight", "kWeight", "vWeight"]},
      "attention.query_key_value.bias": {"split": "perHead", "into": ["qBias", "kBias", "vBias"]},
      "attention.dense.weight": "outWeight",
      "attention.dense.bias": "outBias",
      "mlp.dense_h_to_4h.weight": "linear1.weight",
      "mlp.dense_h_to_4h.bias": "linear1.bias",
      "mlp.dense_4h_to_h.weight": "linear2.weight",
      "mlp.dense_4h_to_h.bias": "linear2.bias"
    },
    "final": {"final_layer_norm.weight": "weight", "final_layer_norm.bias": "bias"},
    "lmHead": "embed_out.weight",
    "heads": {
      "sequence": {"score.weight": "weight"},
      "token": {"classifier.weight": "weight", "classifier.bias": "bias"},
      "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
    },
    "ignore": "^layers\\.\\d+\\.attention\\.(bias|masked_bias|rotary_emb\\.inv_freq)$",
    "configKeys": {
      "dim": "hidden_size",
      "numHeads": "num_attention_heads",
      "numKvHeads": "num_attention_heads",
      "headDim": "head size",
      "ffnDim": "intermediate_size",
      "vocabSize": "vocab_size",
      "maxPositions": "max_position_embeddings"
    }
  })json");
}

// gpt_neox
extern const Family kGptNeoxFamily{
    "gpt_neox", read_gpt_neox, /*encoder=*/false, /*tie_default=*/false,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    gpt_neox_tensors};


}  // namespace attnkit

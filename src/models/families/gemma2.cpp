// Gemma 2: soft-capped attention and logits, alternating windows, sandwich norms.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

// Gemma 2: RMSNorm with (1 + weight) (the weights move by 1 at load), embeddings times
// sqrt(hidden_size), GeGLU (tanh gelu), a norm before and after each sub-layer (sandwich), sliding
// windows on every other layer (the even ones, or as layer_types says), scores soft-capped by
// attn_logit_softcapping and scaled by query_pre_attn_scalar^-0.5, logits soft-capped.
Status read_gemma2(Reader& r, const json& j, const std::string&, json& spec) {
  double vocab, dim, layers, heads, kv, head_dim, ffn, positions, eps, theta, scalar, window, attn_cap = 0, final_cap = 0;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"hidden_size"}, dim);
  if (s.ok()) s = r.size({"num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.optional_integer("num_key_value_heads", kv, heads, 1, 4096);
  if (s.ok()) s = r.optional_integer("head_dim", head_dim, 256, 2, 4096);
  if (s.ok()) s = r.size({"intermediate_size"}, ffn);
  if (s.ok()) s = r.optional_integer("max_position_embeddings", positions, 8192, 1);
  if (s.ok()) s = r.number("rms_norm_eps", eps, 1e-6, 0, 1);
  if (s.ok()) s = r.number("rope_theta", theta, 10000, 1.0000001, 1e30);
  if (s.ok()) s = r.number("query_pre_attn_scalar", scalar, 256, 1e-9, 1e30);
  if (s.ok()) s = r.optional_integer("sliding_window", window, 4096, 0, 1 << 24);
  if (s.ok() && r.has("attn_logit_softcapping")) s = r.number("attn_logit_softcapping", attn_cap, 0, 1e-9, 1e30);
  else if (s.ok() && !j.contains("attn_logit_softcapping")) attn_cap = 50;  // the class default
  if (s.ok() && r.has("final_logit_softcapping")) s = r.number("final_logit_softcapping", final_cap, 0, 1e-9, 1e30);
  else if (s.ok() && !j.contains("final_logit_softcapping")) final_cap = 30;
  bool attention_bias = false;
  std::string act;
  if (s.ok()) s = r.boolean("attention_bias", attention_bias, false);
  if (s.ok()) s = r.string("hidden_activation", act, "gelu_pytorch_tanh");
  if (s.ok()) s = activation_name("hidden_activation", act, act);
  if (!s.ok()) return s;
  if (std::fmod(heads, kv) != 0) {
    return bad("num_key_value_heads", "num_attention_heads (" + show_number(heads) +
                                          ") must be a multiple of num_key_value_heads (" + show_number(kv) + ")");
  }
  if (std::fmod(head_dim, 2) != 0) return bad("head_dim", "head_dim must be even for rotary embeddings");
  // Which layers slide: layer_types, or the even layers (transformers' default for Gemma 2).
  json pattern = {{"every", 2}, {"global", 1}};
  if (r.has("layer_types")) {
    const json& t = j["layer_types"];
    if (!t.is_array() || t.size() != layers) return bad("layer_types", "'layer_types' must list one type per layer");
    bool all = true, alternate = true;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] != "sliding_attention" && t[i] != "full_attention") {
        return bad("layer_types", "'layer_types' entries must be \"sliding_attention\" or \"full_attention\", got " + t[i].dump());
      }
      const bool slide = t[i] == "sliding_attention";
      all &= slide;
      alternate &= slide == (i % 2 == 0);
    }
    if (all) pattern = {{"every", 0}, {"global", 0}};
    else if (!alternate) return bad("layer_types", "this 'layer_types' pattern is not supported (every layer, or the even ones)");
  }
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "none"}, {"norm", "none"}, {"scale", std::sqrt(dim)}};
  spec["positionIds"] = "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", kv}, {"headDim", head_dim}, {"ffnDim", ffn},
                   {"activation", act}, {"normPlacement", "sandwich"}, {"norm", "rmsnorm"}, {"eps", eps},
                   {"bias", attention_bias}, {"outBias", attention_bias}, {"ffnBias", false}, {"ffnGated", true},
                   {"weightLayout", "outIn"}, {"positional", "rotary"}, {"rotary", {{"base", theta}, {"layout", "half"}}},
                   {"causal", true}, {"scale", 1 / std::sqrt(scalar)}, {"softcap", attn_cap}};
  spec["finalNorm"] = {{"norm", "rmsnorm"}, {"eps", eps}};
  if (window > 0) spec["slidingWindow"] = window, spec["windowPattern"] = pattern;
  if (final_cap > 0) spec["finalLogitSoftcap"] = final_cap;
  spec["normPlusOne"] = true;  // Gemma's RMSNorm multiplies by (1 + weight)
  return s;
}

}  // namespace

// LLaMA's names, with a norm before and after each sub-layer (our sandwich: norm1 / norm2 before
// the attention / feed-forward, norm3 / norm4 after).
json gemma2_tensors() {
  json t = llama_tensors();
  json& w = t["layerWeights"];
  w["input_layernorm.weight"] = "norm1.weight";
  w["pre_feedforward_layernorm.weight"] = "norm2.weight";
  w["post_attention_layernorm.weight"] = "norm3.weight";
  w["post_feedforward_layernorm.weight"] = "norm4.weight";
  return t;
}

// gemma2
extern const Family kGemma2Family{
    "gemma2", read_gemma2, /*encoder=*/false, /*tie_default=*/true,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    gemma2_tensors};


}  // namespace attnkit

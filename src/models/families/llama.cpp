// LLaMA and the decoders built like it: Qwen2, Qwen3, Mistral, Phi-3.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

// LLaMA and the families built like it: Qwen2 (q/k/v biases), Mistral (a sliding window on every
// layer), Qwen3 (RMSNorm of each head's queries and keys before RoPE, head_dim 128 by default).
Status read_llama(Reader& r, const json& j, const std::string& family, json& spec) {
  double vocab, dim, layers, heads, kv, head_dim, ffn, positions, eps, theta, tp;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"hidden_size"}, dim);
  if (s.ok()) s = r.size({"num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.optional_integer("num_key_value_heads", kv, heads, 1, 4096);
  if (s.ok()) s = r.optional_integer("head_dim", head_dim, family == "qwen3" ? 128 : 0, 0, 4096);
  double partial = 1, original = 0;
  if (s.ok()) s = r.number("partial_rotary_factor", partial, 1, 1e-9, 1);
  if (s.ok()) s = r.optional_integer("original_max_position_embeddings", original, 0, 0, 1 << 24);
  if (s.ok()) s = r.size({"intermediate_size"}, ffn);
  if (s.ok()) s = r.optional_integer("max_position_embeddings", positions, 2048, 1);
  if (s.ok()) s = r.number("rms_norm_eps", eps, 1e-6, 0, 1);
  if (s.ok()) s = r.number("rope_theta", theta, 10000, 1.0000001, 1e30);  // the rotary options' least base
  if (s.ok()) s = r.optional_integer("pretraining_tp", tp, 1, 1);  // a training-time split: no effect on the math
  bool attention_bias = false, mlp_bias = false;
  std::string act;
  if (s.ok()) s = r.boolean("attention_bias", attention_bias, false);
  // The sliding window: Mistral's applies to every layer when set; Qwen2's and Qwen3's only with
  // use_sliding_window (their configs carry sliding_window either way).
  double window = 0;
  bool use_window = family == "mistral" || family == "phi3";
  if (s.ok() && (family == "qwen2" || family == "qwen3")) s = r.boolean("use_sliding_window", use_window, false);
  if (s.ok() && use_window) s = r.optional_integer("sliding_window", window, 0, 0, 1 << 24);
  else if (family == "qwen2" || family == "qwen3") r.has("sliding_window");  // written either way, used only with use_sliding_window
  if (s.ok() && use_window && family != "mistral" && family != "phi3" && window > 0) {
    s = bad("use_sliding_window", "'use_sliding_window' true is not supported for " + family +
                                      " yet (its windows depend on max_window_layers / layer_types)");
  }
  if (s.ok()) s = r.boolean("mlp_bias", mlp_bias, false);
  if (s.ok()) s = r.string("hidden_act", act, "silu");
  if (s.ok()) s = activation_name("hidden_act", act, act);
  if (!s.ok()) return s;
  const bool head_dim_given = head_dim != 0;
  if (head_dim == 0) {
    if (std::fmod(dim, heads) != 0) {
      return bad("num_attention_heads", "hidden_size (" + show_number(dim) +
                                            ") must be divisible by num_attention_heads (" + show_number(heads) + ")");
    }
    head_dim = dim / heads;
  }
  if (head_dim < 2 || std::fmod(head_dim, 2) != 0) {  // RoPE turns pairs of dims
    return bad(head_dim_given ? "head_dim" : "num_attention_heads",
               "the head dim (" + show_number(head_dim) + ") must be even for rotary embeddings");
  }
  if (std::fmod(heads, kv) != 0) {
    return bad("num_key_value_heads", "num_attention_heads (" + show_number(heads) +
                                          ") must be a multiple of num_key_value_heads (" + show_number(kv) + ")");
  }
  json rotary = {{"base", theta}, {"layout", "half"}}, scaling, unknown = json::array();
  const double rotary_dim = std::floor(head_dim * partial);
  if (partial < 1) {
    if (rotary_dim < 2 || std::fmod(rotary_dim, 2) != 0) {
      return bad("partial_rotary_factor", "the rotary dims (head dim " + show_number(head_dim) + " * partial_rotary_factor = " +
                                              show_number(rotary_dim) + ") must be even and at least 2");
    }
    rotary["rotaryDim"] = rotary_dim;
  }
  r.has("rope_scaling");
  if (j.contains("rope_scaling")) {
    s = rope_scaling(j["rope_scaling"], positions, scaling, unknown);
    if (!s.ok()) return s;
    if (!scaling.is_null() && scaling["type"] == "longrope") {
      // The factors travel as the layers' ropeFactors (short then long); the rest as options.
      for (const char* k : {"shortFactor", "longFactor"}) {
        if (scaling[k].size() != rotary_dim / 2) {
          return bad(std::string("rope_scaling.") + (k[0] == 's' ? "short_factor" : "long_factor"),
                     "rope_scaling's " + std::string(k[0] == 's' ? "short_factor" : "long_factor") + " must have " +
                         show_number(rotary_dim / 2) + " factors (rotary dims / 2), got " + std::to_string(scaling[k].size()));
        }
      }
      json factors = scaling["shortFactor"];
      for (const json& v : scaling["longFactor"]) factors.push_back(v);
      spec["ropeFactors"] = factors;
      scaling.erase("shortFactor"), scaling.erase("longFactor");
      if (!scaling.contains("originalMaxPositions")) scaling["originalMaxPositions"] = original > 0 ? original : positions;
      const double orig = scaling["originalMaxPositions"].get<double>();
      scaling["factor"] = positions / orig > 1 ? positions / orig : 1.0;
      spec["ropeRecomputeAt"] = orig;  // generation re-runs the prefix when it passes the original context
    }
    if (!scaling.is_null()) rotary["scaling"] = scaling;
  }
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "none"}, {"norm", "none"}};
  spec["positionIds"] = "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", kv}, {"headDim", head_dim}, {"ffnDim", ffn},
                   {"activation", act}, {"normPlacement", "pre"}, {"norm", "rmsnorm"}, {"eps", eps},
                   {"bias", attention_bias || family == "qwen2"}, {"outBias", attention_bias}, {"ffnBias", mlp_bias},
                   {"ffnGated", true}, {"weightLayout", "outIn"}, {"positional", "rotary"}, {"rotary", rotary},
                   {"causal", true}};
  if (window > 0) spec["slidingWindow"] = window;
  if (family == "qwen3") spec["layer"]["qkNorm"] = true, spec["layer"]["qkNormEps"] = eps;
  spec["finalNorm"] = {{"norm", "rmsnorm"}, {"eps", eps}};
  spec["ropeScalingUnknown"] = unknown;
  return s;
}

}  // namespace

json llama_tensors() {
  return json::parse(R"json({
    "prefixes": ["model.", "transformer."],
    "embeddings": {"embed_tokens.weight": "word"},
    "layer": "^layers\\.(\\d+)\\.(.+)$",
    "layerPrefix": "layers.",
    "layerWeights": {
      "input_layernorm.weight": "norm1.weight",
      "post_attention_layernorm.weight": "norm2.weight",
      "self_attn.q_proj.weight": "qWeight",
      "self_attn.k_proj.weight": "kWeight",
      "self_attn.v_proj.weight": "vWeight",
      "self_attn.o_proj.weight": "outWeight",
      "self_attn.q_proj.bias": "qBias",
      "self_attn.k_proj.bias": "kBias",
      "self_attn.v_proj.bias": "vBias",
      "self_attn.o_proj.bias": "outBias",
      "mlp.gate_proj.weight": "gate.weight",
      "mlp.up_proj.weight": "linear1.weight",
      "mlp.down_proj.weight": "linear2.weight",
      "mlp.gate_proj.bias": "gate.bias",
      "mlp.up_proj.bias": "linear1.bias",
      "mlp.down_proj.bias": "linear2.bias",
      "self_attn.q_norm.weight": "qNorm",
      "self_attn.k_norm.weight": "kNorm"
    },
    "final": {"norm.weight": "weight"},
    "heads": {
      "sequence": {"score.weight": "weight"},
      "token": {"score.weight": "weight", "score.bias": "bias"},
      "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
    },
    "ignore": "^layers\\.\\d+\\.self_attn\\.rotary_emb\\.inv_freq$",
    "configKeys": {
      "dim": "hidden_size",
      "numHeads": "num_attention_heads",
      "numKvHeads": "num_key_value_heads",
      "headDim": "head_dim",
      "ffnDim": "intermediate_size",
      "vocabSize": "vocab_size",
      "maxPositions": "max_position_embeddings"
    }
  })json");
}

// Phi-3: q, k, v in one qkv_proj (q rows, then k, then v: our inProjWeight); gate and up in one
// gate_up_proj (gate rows first).
json phi3_tensors() {
  json t = llama_tensors();
  t["layerWeights"] = json::parse(R"json({
    "input_layernorm.weight": "norm1.weight",
    "post_attention_layernorm.weight": "norm2.weight",
    "self_attn.qkv_proj.weight": "inProjWeight",
    "self_attn.o_proj.weight": "outWeight",
    "mlp.gate_up_proj.weight": {"split": "halves", "into": ["gate.weight", "linear1.weight"]},
    "mlp.down_proj.weight": "linear2.weight"
  })json");
  return t;
}

// llama
extern const Family kLlamaFamily{
    "llama", read_llama, /*encoder=*/false, /*tie_default=*/false,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    llama_tensors};

// qwen2
extern const Family kQwen2Family{
    "qwen2", read_llama, /*encoder=*/false, /*tie_default=*/false,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    llama_tensors};

// qwen3
extern const Family kQwen3Family{
    "qwen3", read_llama, /*encoder=*/false, /*tie_default=*/false,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    llama_tensors};

// mistral
extern const Family kMistralFamily{
    "mistral", read_llama, /*encoder=*/false, /*tie_default=*/false,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    llama_tensors};

// phi3
extern const Family kPhi3Family{
    "phi3", read_llama, /*encoder=*/false, /*tie_default=*/false,
    R"json({"sequence": {"pool": "lastToken", "bias": false}, "token": {}, "span": {}})json",
    phi3_tensors};


}  // namespace attnkit

#include "attnkit/models/model_config.hpp"

#include <cmath>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "attnkit/formats/safetensors.hpp"  // check_json_text

namespace attnkit {

namespace {

using json = nlohmann::json;

Status bad(const std::string& key, const std::string& message) {
  return Status::error(Code::invalid_argument, key, "config.json: " + message);
}

// Settings that exist in PretrainedConfig or these families and change nothing in a forward pass
// of the base model (training, generation, heads, bookkeeping).
const std::set<std::string>& ignorable() {
  static const std::set<std::string> keys{
      "_name_or_path", "architectures", "transformers_version", "torch_dtype", "initializer_range", "use_cache",
      "bos_token_id", "eos_token_id", "sep_token_id", "decoder_start_token_id", "tie_word_embeddings",
      "id2label", "label2id", "num_labels", "problem_type", "task_specific_params", "gradient_checkpointing",
      "classifier_dropout", "output_past", "return_dict", "output_attentions", "output_hidden_states",
      "torchscript", "tokenizer_class", "prefix", "finetuning_task", "chunk_size_feed_forward",
      "hidden_dropout_prob", "attention_probs_dropout_prob", "resid_pdrop", "embd_pdrop", "attn_pdrop",
      "attention_dropout", "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
      "summary_first_dropout", "reorder_and_upcast_attn", "pretraining_tp", "gradient_checkpointing",
      "directionality", "pooler_fc_size", "pooler_num_attention_heads", "pooler_num_fc_layers", "pooler_size_per_head",
      "pooler_type", "n_ctx", "model_type", "dropout", "qa_dropout", "seq_classif_dropout", "tie_weights_",
      "max_window_layers", "hidden_dropout", "attention_softmax_in_fp32", "bias_dropout_fusion",
      "masked_softmax_fusion", "offset_alibi", "skip_bias_add", "skip_bias_add_qkv", "slow_but_exact", "unk_token_id",
      "n_inner", "auto_map", "cache_implementation", "hidden_act", "embedding_dropout", "mlp_dropout",
      "initializer_cutoff_factor", "deterministic_flash_attn", "sparse_prediction", "sparse_pred_ignore_index",
      "reference_compile", "repad_logits_with_grad", "cls_token_id", "layer_norm_eps", "classifier_pooling"};
  return keys;
}

class Reader {
 public:
  explicit Reader(const json& j) : j_(j) {}

  bool has(const std::string& key) {
    used_.insert(key);
    const auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
  }
  // A required positive integer (the first of `keys` present: GPT-2 and BERT spell them apart).
  Status size(std::initializer_list<const char*> keys, double& out, double lo = 1, double hi = 1 << 24) {
    for (const char* k : keys) used_.insert(k);
    for (const char* k : keys)
      if (has(k)) return integer(k, out, lo, hi);
    return bad(*keys.begin(), std::string("the setting '") + *keys.begin() + "' is missing");
  }
  Status integer(const std::string& key, double& out, double lo, double hi) {
    const json& v = j_.at(key);
    if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>() || v.get<double>() < lo ||
        v.get<double>() > hi) {
      return bad(key, "'" + key + "' must be an integer in [" + show_number(lo) + ", " + show_number(hi) + "], got " +
                          v.dump());
    }
    out = v.get<double>();
    return Status::success();
  }
  Status optional_integer(const std::string& key, double& out, double dflt, double lo = 0, double hi = 1 << 24) {
    if (!has(key)) return out = dflt, Status::success();
    return integer(key, out, lo, hi);
  }
  Status number(const std::string& key, double& out, double dflt, double lo, double hi) {
    if (!has(key)) return out = dflt, Status::success();
    const json& v = j_.at(key);
    if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi)) {
      return bad(key, "'" + key + "' must be a number in [" + show_number(lo) + ", " + show_number(hi) + "], got " +
                          v.dump());
    }
    out = v.get<double>();
    return Status::success();
  }
  Status boolean(const std::string& key, bool& out, bool dflt) {
    if (!has(key)) return out = dflt, Status::success();
    if (!j_.at(key).is_boolean()) return bad(key, "'" + key + "' must be true or false, got " + j_.at(key).dump());
    out = j_.at(key).get<bool>();
    return Status::success();
  }
  Status string(const std::string& key, std::string& out, const std::string& dflt) {
    if (!has(key)) return out = dflt, Status::success();
    if (!j_.at(key).is_string()) return bad(key, "'" + key + "' must be a string, got " + j_.at(key).dump());
    out = j_.at(key).get<std::string>();
    return Status::success();
  }
  // A token id setting (eos_token_id): an integer, a list of them, or null -> a list (maybe empty).
  // Not checked against the vocabulary: configs name ids of a larger tokenizer (an id past the
  // vocabulary simply never comes up).
  Status token_ids(const std::string& key, json& out) {
    out = json::array();
    if (!has(key) || j_.at(key).is_null()) return Status::success();
    const json& v = j_.at(key);
    const json list = v.is_array() ? v : json::array({v});
    if (list.size() > 64) return bad(key, "'" + key + "' lists " + std::to_string(list.size()) + " ids; at most 64");
    for (const json& id : list) {
      if (!id.is_number_integer() || id.get<double>() < 0 || id.get<double>() > (1 << 24)) {
        return bad(key, "'" + key + "' must be a token id (an integer in [0, 16777216]), a list of them, or null; got " +
                            v.dump());
      }
      out.push_back(id.get<int64_t>());
    }
    return Status::success();
  }
  // A setting whose only supported value is `expected` (absent is fine).
  Status require(const std::string& key, const json& expected, const std::string& why) {
    if (has(key) && j_.at(key) != expected) {
      return bad(key, "'" + key + "' = " + j_.at(key).dump() + " is not supported: " + why);
    }
    return Status::success();
  }
  // Every key read is "used"; the rest are ignorable (no effect) or unknown.
  void report(json& spec) const {
    json ignored = json::array(), unknown = json::array();
    for (const auto& [k, v] : j_.items()) {
      if (used_.count(k)) continue;
      (ignorable().count(k) ? ignored : unknown).push_back(k);
    }
    spec["ignored"] = ignored;
    spec["unknown"] = unknown;
  }

 private:
  const json& j_;
  std::set<std::string> used_;
};

Status activation_name(const std::string& key, const std::string& act, std::string& out) {
  if (act == "gelu") out = "gelu";
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh") out = "gelu_tanh";
  else if (act == "relu") out = "relu";
  else if (act == "silu" || act == "swish") out = "silu";
  else return bad(key, "'" + key + "' = \"" + act + "\" is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, relu, silu)");
  return Status::success();
}

// rope_scaling in the old ({"type": ..}) and new ({"rope_type": ..}) spellings -> the rotary
// options' scaling object.
Status rope_scaling(const json& r, double max_positions, json& out, json& unknown) {
  if (r.is_null()) return Status::success();
  if (!r.is_object()) return bad("rope_scaling", "'rope_scaling' must be an object or null, got " + r.dump());
  const json* type = r.contains("rope_type") ? &r["rope_type"] : r.contains("type") ? &r["type"] : nullptr;
  if (!type || !type->is_string()) return bad("rope_scaling.rope_type", "'rope_scaling' needs a 'rope_type' (or 'type') string");
  std::string t = type->get<std::string>();
  if (t == "default") return Status::success();
  if (t == "su") t = "longrope";  // Phi-3's first configs
  if (t == "longrope") {
    // Phi-3's LongRoPE: per-frequency factors, short up to the original context and long past it
    // (checked against the rotary dims by the caller); factor = max_position_embeddings /
    // original_max_position_embeddings as transformers takes it.
    out = {{"type", "longrope"}};
    for (const char* k : {"short_factor", "long_factor"}) {
      const std::string key = std::string("rope_scaling.") + k;
      if (!r.contains(k) || !r[k].is_array() || r[k].empty() || r[k].size() > 4096) {
        return bad(key, "'" + key + "' must be a list of factors");
      }
      for (const json& v : r[k]) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || !(v.get<double>() > 0)) {
          return bad(key, "'" + key + "' must hold finite numbers above 0, got " + v.dump());
        }
      }
    }
    out["shortFactor"] = r["short_factor"], out["longFactor"] = r["long_factor"];
    for (const auto& [k, v] : r.items()) {
      if (k == "attention_factor" && v.is_number() && v.get<double>() > 0) out["attentionFactor"] = v;
      else if (k == "original_max_position_embeddings" && v.is_number_integer() && v.get<double>() >= 1) out["originalMaxPositions"] = v;
      else if (k != "type" && k != "rope_type" && k != "short_factor" && k != "long_factor" && k != "factor") {
        unknown.push_back("rope_scaling." + k);
      }
    }
    (void)max_positions;
    return Status::success();
  }
  if (t != "linear" && t != "dynamic" && t != "yarn" && t != "llama3") {
    return bad("rope_scaling.rope_type", "rope_scaling type \"" + t + "\" is not supported (supported: default, linear, dynamic, yarn, llama3, longrope)");
  }
  // Each setting with the least value the rotary options take (check_rotary in rotary.cpp), checked
  // here so that a bad one is named by its config.json key, not by the options' name.
  static const struct {
    const char *hf, *ours;
    double least;
  } names[] = {
      {"factor", "factor", 1},
      {"original_max_position_embeddings", "originalMaxPositions", 1},
      {"low_freq_factor", "lowFreqFactor", 0},
      {"high_freq_factor", "highFreqFactor", 0},
      {"beta_fast", "betaFast", 1e-9},
      {"beta_slow", "betaSlow", 1e-9},
      {"attention_factor", "attentionFactor", 0},
      {"mscale", "mscale", 0},
      {"mscale_all_dim", "mscaleAllDim", 0},
  };
  out = json::object();
  out["type"] = t;
  for (const auto& [k, v] : r.items()) {
    if (k == "rope_type" || k == "type") continue;
    bool known = false;
    for (const auto& [hf, ours, least] : names)
      if (k == hf) {
        const std::string key = "rope_scaling." + k;
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < least) {
          return bad(key, "'" + key + "' must be a finite number >= " + show_number(least) + ", got " + v.dump());
        }
        if (k == "original_max_position_embeddings" && (std::floor(v.get<double>()) != v.get<double>() || v.get<double>() > (1 << 24))) {
          return bad(key, "'" + key + "' must be an integer in [1, 16777216], got " + v.dump());
        }
        out[ours] = v, known = true;
      }
    if (k == "truncate") {
      if (!v.is_boolean()) return bad("rope_scaling.truncate", "'rope_scaling.truncate' must be true or false");
      out["truncate"] = v, known = true;
    }
    if (!known) unknown.push_back("rope_scaling." + k);
  }
  if (!out.contains("factor")) return bad("rope_scaling.factor", "rope_scaling type \"" + t + "\" needs a factor");
  if (t == "llama3") {  // the rotary options' defaults when absent
    const double low = out.value("lowFreqFactor", 1.0), high = out.value("highFreqFactor", 4.0);
    if (!(low > 0)) return bad("rope_scaling.low_freq_factor", "'rope_scaling.low_freq_factor' must be above 0, got " + show_number(low));
    if (!(high > low)) {
      return bad("rope_scaling.high_freq_factor", "'rope_scaling.high_freq_factor' (" + show_number(high) +
                                                      ") must be above low_freq_factor (" + show_number(low) + ")");
    }
  }
  // Hugging Face falls back on max_position_embeddings for the pre-scaling context length.
  if (!out.contains("originalMaxPositions") && t != "linear") out["originalMaxPositions"] = max_positions;
  return Status::success();
}

Status bert_like(Reader& r, const json& j, bool roberta, json& spec) {
  double vocab, dim, layers, heads, ffn, positions, types, pad, eps;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"hidden_size"}, dim);
  if (s.ok()) s = r.size({"num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.size({"intermediate_size"}, ffn);
  if (s.ok()) s = r.optional_integer("max_position_embeddings", positions, 512, 1);
  if (s.ok()) s = r.optional_integer("type_vocab_size", types, 2, 0);
  if (s.ok()) s = r.optional_integer("pad_token_id", pad, roberta ? 1 : 0, 0);
  if (s.ok()) s = r.number("layer_norm_eps", eps, 1e-12, 0, 1);
  std::string act, pos;
  if (s.ok()) s = r.string("hidden_act", act, "gelu");
  if (s.ok()) s = activation_name("hidden_act", act, act);
  if (s.ok()) s = r.string("position_embedding_type", pos, "absolute");
  if (s.ok() && pos != "absolute") {
    s = bad("position_embedding_type", "position_embedding_type \"" + pos + "\" is not supported (only \"absolute\")");
  }
  if (s.ok()) s = r.require("is_decoder", false, "BERT as a causal decoder is not mapped");
  if (s.ok()) s = r.require("add_cross_attention", false, "cross-attention layers are not mapped from config.json");
  if (!s.ok()) return s;
  if (std::fmod(dim, heads) != 0) {
    return bad("num_attention_heads", "hidden_size (" + show_number(dim) + ") must be divisible by num_attention_heads (" +
                                          show_number(heads) + ")");
  }
  (void)j;
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", types},
                        {"positional", "learned"}, {"norm", "layernorm"}, {"eps", eps}, {"paddingIdx", pad}};
  spec["positionIds"] = roberta ? "padding" : "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", heads}, {"headDim", dim / heads},
                   {"ffnDim", ffn}, {"activation", act}, {"normPlacement", "post"}, {"norm", "layernorm"},
                   {"eps", eps}, {"bias", true}, {"outBias", true}, {"ffnBias", true}, {"ffnGated", false},
                   {"weightLayout", "outIn"}, {"positional", "none"}, {"causal", false}};
  spec["finalNorm"] = nullptr;
  return s;
}

// DistilBERT: BERT's post-norm layers under other names (dim, hidden_dim, n_heads, n_layers), no
// token types, LayerNorm eps fixed at 1e-12 in the modeling code. With sinusoidal_pos_embds the
// table is computed at init and saved in the checkpoint like a learned one.
Status distilbert(Reader& r, json& spec) {
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

Status gpt2(Reader& r, json& spec) {
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

// GPT-NeoX (Pythia): pre-LayerNorm layers with a parallel residual (use_parallel_residual), rotary
// on the first rotary_pct of each head's dims, a fused per-head query_key_value, biases on every
// projection, and an untied embed_out head.
Status gpt_neox(Reader& r, const json& j, json& spec) {
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

// BLOOM: ALiBi instead of positions, a LayerNorm on the embeddings, pre-LayerNorm layers with a
// fused per-head query_key_value, an MLP of 4 x hidden with BLOOM's tanh gelu, the head tied.
Status bloom(Reader& r, json& spec) {
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

// Gemma 2: RMSNorm with (1 + weight) (the weights move by 1 at load), embeddings times
// sqrt(hidden_size), GeGLU (tanh gelu), a norm before and after each sub-layer (sandwich), sliding
// windows on every other layer (the even ones, or as layer_types says), scores soft-capped by
// attn_logit_softcapping and scaled by query_pre_attn_scalar^-0.5, logits soft-capped.
Status gemma2(Reader& r, const json& j, json& spec) {
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

// ModernBERT: a rotary encoder whose layers attend locally (|i - j| <= local_attention / 2, with
// local_rope_theta) except every global_attn_every_n_layers-th (global_rope_theta); pre-LayerNorm
// without biases (norm_bias), no norm before layer 0's attention, fused Wqkv, GeGLU (Wi: input
// then gate); its hidden_states' last entry comes before final_norm. The masked-LM head is
// head.dense, classifier_activation, head.norm and the tied decoder with decoder.bias.
Status modernbert(Reader& r, json& spec) {
  double vocab, dim, layers, heads, ffn, positions, eps, every, local, global_theta, local_theta = 0, pad;
  Status s = r.size({"vocab_size"}, vocab);
  if (s.ok()) s = r.size({"hidden_size"}, dim);
  if (s.ok()) s = r.size({"num_hidden_layers"}, layers, 1, 1024);
  if (s.ok()) s = r.size({"num_attention_heads"}, heads, 1, 4096);
  if (s.ok()) s = r.size({"intermediate_size"}, ffn);
  if (s.ok()) s = r.optional_integer("max_position_embeddings", positions, 8192, 1);
  if (s.ok()) s = r.number("norm_eps", eps, 1e-5, 0, 1);
  if (s.ok()) s = r.optional_integer("global_attn_every_n_layers", every, 3, 1, 4096);
  if (s.ok()) s = r.optional_integer("local_attention", local, 128, 0, 1 << 24);
  if (s.ok()) s = r.number("global_rope_theta", global_theta, 160000, 1.0000001, 1e30);
  if (s.ok() && r.has("local_rope_theta")) s = r.number("local_rope_theta", local_theta, 10000, 1.0000001, 1e30);
  if (s.ok()) s = r.optional_integer("pad_token_id", pad, 50283, 0);
  bool norm_bias = false, attention_bias = false, mlp_bias = false, decoder_bias = true, classifier_bias = false;
  std::string act, head_act;
  if (s.ok()) s = r.boolean("norm_bias", norm_bias, false);
  if (s.ok()) s = r.boolean("attention_bias", attention_bias, false);
  if (s.ok()) s = r.boolean("mlp_bias", mlp_bias, false);
  if (s.ok()) s = r.boolean("decoder_bias", decoder_bias, true);
  if (s.ok()) s = r.boolean("classifier_bias", classifier_bias, false);
  if (s.ok()) s = r.string("hidden_activation", act, "gelu");
  if (s.ok()) s = activation_name("hidden_activation", act, act);
  if (s.ok()) s = r.string("classifier_activation", head_act, "gelu");
  if (s.ok()) s = activation_name("classifier_activation", head_act, head_act);
  r.has("position_embedding_type");  // "absolute" in the Hub files; ModernBERT has rotary only
  if (!s.ok()) return s;
  if (std::fmod(dim, heads) != 0) {
    return bad("num_attention_heads", "hidden_size (" + show_number(dim) + ") must be divisible by num_attention_heads (" +
                                          show_number(heads) + ")");
  }
  spec["numLayers"] = layers;
  spec["embeddings"] = {{"vocabSize", vocab}, {"dim", dim}, {"maxPositions", positions}, {"typeVocabSize", 0},
                        {"positional", "none"}, {"norm", "layernorm"}, {"eps", eps}, {"paddingIdx", pad}};
  spec["positionIds"] = "arange";
  spec["layer"] = {{"dim", dim}, {"numHeads", heads}, {"numKvHeads", heads}, {"headDim", dim / heads}, {"ffnDim", ffn},
                   {"activation", act}, {"normPlacement", "pre"}, {"norm", "layernorm"}, {"eps", eps},
                   {"bias", attention_bias}, {"outBias", attention_bias}, {"ffnBias", mlp_bias}, {"ffnGated", true},
                   {"weightLayout", "outIn"}, {"positional", "rotary"},
                   {"rotary", {{"base", global_theta}, {"layout", "half"}}}, {"causal", false}};
  spec["finalNorm"] = {{"norm", "layernorm"}, {"eps", eps}};
  if (local > 0) {
    spec["slidingWindow"] = local;
    spec["windowPattern"] = {{"every", every}, {"global", 0}};
    if (local_theta > 0) spec["localRopeBase"] = local_theta;
  }
  spec["firstAttnNorm"] = false;
  spec["hiddenBeforeFinalNorm"] = true;
  spec["normBias"] = norm_bias;  // absent biases are zeros
  spec["mlmActivation"] = head_act;
  spec["headDenseBias"] = classifier_bias;
  spec["decoderBias"] = decoder_bias;
  return s;
}

// LLaMA and the families built like it: Qwen2 (q/k/v biases), Mistral (a sliding window on every
// layer), Qwen3 (RMSNorm of each head's queries and keys before RoPE, head_dim 128 by default).
Status llama(Reader& r, const json& j, const std::string& family, json& spec) {
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
  else r.has("sliding_window");
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

// The task head config.json's architectures name (its first entry), with each family's layout:
// the rows it reads, its dense layer and activation, the classifier's bias. num_labels is the size
// of id2label (a num_labels key must agree); id2label and label2id are passed on as the file has
// them, after checking their form.
Status task_head(Reader& r, const json& j, const std::string& family, json& spec) {
  r.has("architectures");
  std::string arch;
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string()) {
    arch = j["architectures"][0].get<std::string>();
  }
  auto ends = [&](const char* suffix) {
    const std::string x = suffix;
    return arch.size() >= x.size() && arch.compare(arch.size() - x.size(), x.size(), x) == 0;
  };
  const char* task = ends("ForSequenceClassification") ? "sequence" : ends("ForTokenClassification") ? "token"
                     : ends("ForQuestionAnswering") ? "span" : nullptr;
  // id2label: {"0": "name", ...} with the ids 0..n-1; label2id: {"name": id}.
  double labels = 0;
  if (r.has("id2label")) {
    const json& m = j["id2label"];
    if (!m.is_object() || m.size() > (1u << 20)) return bad("id2label", "'id2label' must be an object of id -> label name");
    for (const auto& [k, v] : m.items()) {
      char* end = nullptr;
      const long id = std::strtol(k.c_str(), &end, 10);
      if (k.empty() || *end || id < 0 || id >= static_cast<long>(m.size()) || !v.is_string()) {
        return bad("id2label", "'id2label' must map the ids 0.." + std::to_string(m.size() - 1) +
                                   " to label names, got the entry " + json({{k, v}}).dump());
      }
    }
    labels = static_cast<double>(m.size());
    spec["id2label"] = m;
  }
  if (r.has("label2id")) {
    const json& m = j["label2id"];
    if (!m.is_object()) return bad("label2id", "'label2id' must be an object of label name -> id");
    for (const auto& [k, v] : m.items()) {
      if (!v.is_number_integer()) return bad("label2id", "'label2id' must map label names to integer ids, got " + json({{k, v}}).dump());
    }
    spec["label2id"] = m;
  }
  double n = 0;
  Status s = r.optional_integer("num_labels", n, 0, 0, 1 << 20);
  if (!s.ok()) return s;
  if (n > 0 && labels > 0 && n != labels) {
    return bad("num_labels", "'num_labels' (" + show_number(n) + ") disagrees with id2label (" + show_number(labels) + " entries)");
  }
  if (!task) return s;
  const bool bert = family == "bert", roberta = family == "roberta" || family == "xlm-roberta";
  const bool decoder = !bert && !roberta && family != "distilbert" && family != "modernbert";
  const std::string t = task;
  if (decoder && t != "sequence") {
    return bad("architectures", arch + " is not supported yet (decoders have *ForSequenceClassification and *ForCausalLM)");
  }
  json head = {{"task", t}, {"numLabels", t == "span" ? 2.0 : n > 0 ? n : labels > 0 ? labels : 2.0},
               {"pool", decoder ? "lastToken" : "first"}, {"dense", "none"}, {"activation", "none"},
               {"bias", !decoder}};
  if (t == "sequence" && bert) head["dense"] = "pooler", head["activation"] = "tanh";
  if (t == "sequence" && roberta) head["dense"] = "own", head["activation"] = "tanh";
  if (t == "sequence" && family == "distilbert") head["dense"] = "own", head["activation"] = "relu";
  if (t == "sequence" && family == "modernbert") {
    // ModernBertPredictionHead (dense, activation, norm) over the pooled row, then the classifier.
    std::string pooling, act;
    s = r.string("classifier_pooling", pooling, "cls");
    if (s.ok() && pooling != "cls" && pooling != "mean") s = bad("classifier_pooling", "'classifier_pooling' must be \"cls\" or \"mean\"");
    if (s.ok()) s = r.string("classifier_activation", act, "gelu");
    if (s.ok()) s = activation_name("classifier_activation", act, act);
    if (s.ok() && act != "gelu" && act != "relu") s = bad("classifier_activation", "classifier_activation must be gelu or relu here");
    if (!s.ok()) return s;
    head["pool"] = pooling == "mean" ? "mean" : "first", head["dense"] = "own", head["activation"] = act, head["norm"] = true;
  }
  spec["head"] = head;
  spec["architecture"] = arch;
  return s;
}

constexpr const char* kSupported =
    "bert, roberta, xlm-roberta, distilbert, modernbert, gpt2, gpt_neox, bloom, llama, qwen2, qwen3, mistral, phi3, gemma2";

Status model_spec_from_config(const char* text, std::size_t length, std::string& out) {
  if (length > kMaxConfigBytes) {
    return bad("config", "config.json is " + std::to_string(length) + " bytes; the limit is " +
                             std::to_string(kMaxConfigBytes));
  }
  Status s = check_json_text("config", "config.json", text, length);
  if (!s.ok()) return s;
  const json j = json::parse(text, text + length, nullptr, false);
  if (j.is_discarded()) return bad("config", "config.json is not valid JSON");
  if (!j.is_object()) return bad("config", "config.json must be a JSON object");
  const auto mt = j.find("model_type");
  if (mt == j.end() || !mt->is_string()) {
    return bad("model_type", std::string("config.json has no 'model_type' string (supported: ") + kSupported + ")");
  }
  const std::string family = mt->get<std::string>();
  Reader r(j);
  json spec = {{"family", family}};
  const bool encoder = family == "bert" || family == "roberta" || family == "xlm-roberta" || family == "distilbert" ||
                       family == "modernbert";
  if (family == "bert" || family == "roberta" || family == "xlm-roberta") s = bert_like(r, j, family != "bert", spec);
  else if (family == "distilbert") s = distilbert(r, spec);
  else if (family == "gpt2") s = gpt2(r, spec);
  else if (family == "gpt_neox") s = gpt_neox(r, j, spec);
  else if (family == "bloom") s = bloom(r, spec);
  else if (family == "gemma2") s = gemma2(r, j, spec);
  else if (family == "modernbert") s = modernbert(r, spec);
  else if (family == "llama" || family == "qwen2" || family == "qwen3" || family == "mistral" || family == "phi3") {
    s = llama(r, j, family, spec);
  }
  else return bad("model_type", "model_type \"" + family + "\" is not supported (supported: " + kSupported + ")");
  if (s.ok()) s = task_head(r, j, family, spec);
  // The causal-LM head: the word table itself (tie_word_embeddings: GPT-2's default) or its own
  // [vocab, dim] lm_head.weight (LLaMA's default). BERT and RoBERTa have none here yet.
  if (s.ok() && !encoder) {
    bool tie = false;
    s = r.boolean("tie_word_embeddings", tie, family == "gpt2" || family == "bloom" || family == "gemma2");
    spec["lmHead"] = tie ? "tied" : "separate";
  } else {
    spec["lmHead"] = nullptr;
  }
  // Generation's token ids (bert/roberta read pad_token_id for their positions already).
  json eos, bos, pad;
  if (s.ok()) s = r.token_ids("eos_token_id", eos);
  if (s.ok()) s = r.token_ids("bos_token_id", bos);
  if (s.ok() && !encoder) s = r.token_ids("pad_token_id", pad);
  if (!s.ok()) return s;
  spec["eosTokenIds"] = eos;
  spec["bosTokenId"] = bos.empty() ? json(nullptr) : bos[0];
  if (!encoder) spec["padTokenId"] = pad.empty() ? json(nullptr) : pad[0];
  else spec["padTokenId"] = spec["embeddings"]["paddingIdx"];
  r.report(spec);
  if (spec.contains("ropeScalingUnknown")) {
    for (const auto& k : spec["ropeScalingUnknown"]) spec["unknown"].push_back(k);
    spec.erase("ropeScalingUnknown");
  }
  out = spec.dump();
  return s;
}

}  // namespace attnkit

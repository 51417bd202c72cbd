#include "config_reader.hpp"

#include <cmath>

namespace attnkit::config {

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

}  // namespace attnkit::config

#include "attnkit/models/model_config.hpp"

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "attnkit/formats/safetensors.hpp"  // check_json_text
#include "config_reader.hpp"
#include "families/family.hpp"

namespace attnkit {

namespace {

using namespace config;

// The task head config.json's architectures name (its first entry), with each family's layout:
// the rows it reads, its dense layer and activation, the classifier's bias. num_labels is the size
// of id2label (a num_labels key must agree); id2label and label2id are passed on as the file has
// them, after checking their form.
Status task_head(Reader& r, const json& j, const Family& family, json& spec) {
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
  const std::string t = task;
  const json heads = json::parse(family.task_heads);
  if (!heads.contains(t)) {
    return bad("architectures", arch + " is not supported yet (" + spec["family"].get<std::string>() + " heads: " +
                                    [&] {
                                      std::string list;
                                      for (const auto& [k, v] : heads.items()) list += (list.empty() ? "" : ", ") + k;
                                      return list;
                                    }() + ")");
  }
  json head = {{"task", t}, {"numLabels", t == "span" ? 2.0 : n > 0 ? n : labels > 0 ? labels : 2.0},
               {"pool", "first"}, {"dense", "none"}, {"activation", "none"}, {"bias", true}};
  // The family's layout for this task, with what its config.json chooses.
  for (const auto& [k, v] : heads[t].items()) head[k] = v;
  if (t == "sequence" && spec.contains("sequenceHead")) {
    for (const auto& [k, v] : spec["sequenceHead"].items()) head[k] = v;
  }
  if (head["dense"] == "own" && spec.contains("headActivation")) head["activation"] = spec["headActivation"];
  spec["head"] = head;
  spec["architecture"] = arch;
  return s;
}

}  // namespace

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
    return bad("model_type", "config.json has no 'model_type' string (supported: " + supported_families() + ")");
  }
  const std::string model_type = mt->get<std::string>();
  const Family* family = find_family(model_type);
  if (!family) {
    return bad("model_type", "model_type \"" + model_type + "\" is not supported (supported: " + supported_families() + ")");
  }
  Reader r(j);
  json spec = {{"family", model_type}};
  s = family->read(r, j, model_type, spec);
  if (s.ok()) s = task_head(r, j, *family, spec);
  spec.erase("sequenceHead"), spec.erase("headActivation");
  // The causal-LM head: the word table itself (tied) or its own [vocab, dim] table. Encoders have
  // a masked-LM head instead (when the checkpoint holds it).
  if (s.ok() && !family->encoder) {
    bool tie = false;
    s = r.boolean("tie_word_embeddings", tie, family->tie_default);
    spec["lmHead"] = tie ? "tied" : "separate";
  } else {
    spec["lmHead"] = nullptr;
  }
  // Generation's token ids (encoders read pad_token_id for their positions already).
  json eos, bos, pad;
  if (s.ok()) s = r.token_ids("eos_token_id", eos);
  if (s.ok()) s = r.token_ids("bos_token_id", bos);
  if (s.ok() && !family->encoder) s = r.token_ids("pad_token_id", pad);
  if (!s.ok()) return s;
  spec["eosTokenIds"] = eos;
  spec["bosTokenId"] = bos.empty() ? json(nullptr) : bos[0];
  if (!family->encoder) spec["padTokenId"] = pad.empty() ? json(nullptr) : pad[0];
  else spec["padTokenId"] = spec["embeddings"]["paddingIdx"];
  // How the checkpoint names its tensors, for the loader (web/src/models/model.js).
  spec["tensors"] = family->tensors();
  r.report(spec);
  if (spec.contains("ropeScalingUnknown")) {
    for (const auto& k : spec["ropeScalingUnknown"]) spec["unknown"].push_back(k);
    spec.erase("ropeScalingUnknown");
  }
  out = spec.dump();
  return s;
}

}  // namespace attnkit

// A model family as attnkit reads it from a Hugging Face folder: one entry per config.json
// model_type, declared in the family's file in this folder (docs/families.md: adding a family).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "../config_reader.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

// config.json -> the model spec's family part: numLayers, embeddings, layer (the blocks: norm kind
// and placement, MLP kind, attention variant, positional scheme), finalNorm and the family's
// extras (windows, soft-caps, rope factors...). Errors name the config.json key.
using FamilyReader = Status (*)(config::Reader& r, const nlohmann::json& config, const std::string& model_type,
                                nlohmann::json& spec);

struct Family {
  const char* model_type;
  FamilyReader read;
  bool encoder;      // bidirectional: masked-LM head, no KV cache; else causal with an LM head
  bool tie_default;  // tie_word_embeddings when config.json does not say
  // JSON: the task heads it has on the Hub, by task ("sequence", "token", "span": Hugging Face's
  // *ForSequenceClassification, *ForTokenClassification, *ForQuestionAnswering), each with its
  // layout {pool, dense, activation, bias, norm} over the defaults {first, none, none, true, false}.
  const char* task_heads;
  // The checkpoint's tensor names -> the model's parts (web/src/models/model.js reads them):
  // prefixes, embeddings, layer (regex with the layer number and the name in it), layerPrefix,
  // layerWeights (a name, or a fused tensor {split: perHead | halves, into: [names]}), final,
  // lmHead, mlm, tiedDecoder, pooler, heads (per task), ignore (regex), configKeys.
  nlohmann::json (*tensors)();
};

// Tables other families start from (bert.cpp, llama.cpp).
nlohmann::json bert_tensors();
nlohmann::json llama_tensors();

// The family of a model_type, or null.
const Family* find_family(const std::string& model_type);
// "bert, roberta, ..." for messages.
std::string supported_families();

}  // namespace attnkit

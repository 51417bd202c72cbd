// BERT, RoBERTa and XLM-RoBERTa: post-LayerNorm encoders with learned positions (RoBERTa's counted past
// the padding id) and token types.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

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

Status read_bert(Reader& r, const json& j, const std::string& model_type, json& spec) {
  return bert_like(r, j, model_type != "bert", spec);
}

}  // namespace

json bert_tensors() {
  return json::parse(R"json({
    "prefixes": ["bert.", "roberta."],
    "embeddings": {
      "embeddings.word_embeddings.weight": "word",
      "embeddings.position_embeddings.weight": "position",
      "embeddings.token_type_embeddings.weight": "tokenType",
      "embeddings.LayerNorm.weight": "normWeight",
      "embeddings.LayerNorm.bias": "normBias"
    },
    "layer": "^encoder\\.layer\\.(\\d+)\\.(.+)$",
    "layerPrefix": "encoder.layer.",
    "layerWeights": {
      "attention.self.query.weight": "qWeight",
      "attention.self.query.bias": "qBias",
      "attention.self.key.weight": "kWeight",
      "attention.self.key.bias": "kBias",
      "attention.self.value.weight": "vWeight",
      "attention.self.value.bias": "vBias",
      "attention.output.dense.weight": "outWeight",
      "attention.output.dense.bias": "outBias",
      "attention.output.LayerNorm.weight": "norm1.weight",
      "attention.output.LayerNorm.bias": "norm1.bias",
      "intermediate.dense.weight": "linear1.weight",
      "intermediate.dense.bias": "linear1.bias",
      "output.dense.weight": "linear2.weight",
      "output.dense.bias": "linear2.bias",
      "output.LayerNorm.weight": "norm2.weight",
      "output.LayerNorm.bias": "norm2.bias"
    },
    "final": {},
    "mlm": {
      "cls.predictions.transform.dense.weight": "denseWeight",
      "cls.predictions.transform.dense.bias": "denseBias",
      "cls.predictions.transform.LayerNorm.weight": "normWeight",
      "cls.predictions.transform.LayerNorm.bias": "normBias",
      "cls.predictions.bias": "bias",
      "lm_head.dense.weight": "denseWeight",
      "lm_head.dense.bias": "denseBias",
      "lm_head.layer_norm.weight": "normWeight",
      "lm_head.layer_norm.bias": "normBias",
      "lm_head.bias": "bias"
    },
    "tiedDecoder": "^(cls\\.predictions|lm_head)\\.decoder\\.(weight|bias)$",
    "pooler": {"pooler.dense.weight": "weight", "pooler.dense.bias": "bias"},
    "heads": {
      "sequence": {"classifier.weight": "weight", "classifier.bias": "bias"},
      "token": {"classifier.weight": "weight", "classifier.bias": "bias"},
      "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
    },
    "ignore": "^embeddings\\.position_ids$|^embeddings\\.token_type_ids$",
    "configKeys": {
      "dim": "hidden_size",
      "numHeads": "num_attention_heads",
      "numKvHeads": "num_attention_heads",
      "headDim": "head size",
      "ffnDim": "intermediate_size",
      "vocabSize": "vocab_size",
      "maxPositions": "max_position_embeddings",
      "typeVocabSize": "type_vocab_size",
      "numLabels": "num_labels (the entries of id2label)"
    }
  })json");
}

// RoBERTa's sequence head: RobertaClassificationHead, out_proj(tanh(dense(h[:, 0]))).
json roberta_tensors() {
  json t = bert_tensors();
  t["heads"] = json::parse(R"json({
    "sequence": {
      "classifier.dense.weight": "denseWeight",
      "classifier.dense.bias": "denseBias",
      "classifier.out_proj.weight": "weight",
      "classifier.out_proj.bias": "bias"
    },
    "token": {"classifier.weight": "weight", "classifier.bias": "bias"},
    "span": {"qa_outputs.weight": "weight", "qa_outputs.bias": "bias"}
  })json");
  return t;
}

// bert
extern const Family kBertFamily{
    "bert", read_bert, /*encoder=*/true, /*tie_default=*/false,
    R"json({"sequence": {"pool": "first", "dense": "pooler", "activation": "tanh"}, "token": {}, "span": {}})json",
    bert_tensors};

// roberta
extern const Family kRobertaFamily{
    "roberta", read_bert, /*encoder=*/true, /*tie_default=*/false,
    R"json({"sequence": {"pool": "first", "dense": "own", "activation": "tanh"}, "token": {}, "span": {}})json",
    roberta_tensors};

// xlm-roberta
extern const Family kXlmRobertaFamily{
    "xlm-roberta", read_bert, /*encoder=*/true, /*tie_default=*/false,
    R"json({"sequence": {"pool": "first", "dense": "own", "activation": "tanh"}, "token": {}, "span": {}})json",
    roberta_tensors};


}  // namespace attnkit

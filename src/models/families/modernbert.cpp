// ModernBERT: a rotary encoder with local and global layers.
#include <cmath>
#include <string>

#include "../config_reader.hpp"
#include "family.hpp"

namespace attnkit {

namespace {

using namespace config;

// ModernBERT: a rotary encoder whose layers attend locally (|i - j| <= local_attention / 2, with
// local_rope_theta) except every global_attn_every_n_layers-th (global_rope_theta); pre-LayerNorm
// without biases (norm_bias), no norm before layer 0's attention, fused Wqkv, GeGLU (Wi: input
// then gate); its hidden_states' last entry comes before final_norm. The masked-LM head is
// head.dense, classifier_activation, head.norm and the tied decoder with decoder.bias.
Status read_modernbert(Reader& r, const json&, const std::string&, json& spec) {
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
  // The sequence head: ModernBertPredictionHead (dense, classifier_activation, norm) over the
  // first token or the mean over the mask (classifier_pooling), then the classifier.
  std::string pooling;
  s = r.string("classifier_pooling", pooling, "cls");
  if (s.ok() && pooling != "cls" && pooling != "mean") s = bad("classifier_pooling", "'classifier_pooling' must be \"cls\" or \"mean\"");
  if (s.ok() && head_act != "gelu" && head_act != "relu") {
    s = bad("classifier_activation", "classifier_activation must be gelu or relu for the classification head");
  }
  if (!s.ok()) return s;
  spec["sequenceHead"] = {{"pool", pooling == "mean" ? "mean" : "first"}};
  spec["headActivation"] = head_act;  // every task head's (ModernBertPredictionHead)
  spec["firstAttnNorm"] = false;
  spec["hiddenBeforeFinalNorm"] = true;
  spec["normBias"] = norm_bias;  // absent biases are zeros
  spec["mlmActivation"] = head_act;
  spec["headDenseBias"] = classifier_bias;
  spec["decoderBias"] = decoder_bias;
  return s;
}

}  // namespace

json modernbert_tensors() {
  return json::parse(R"json({
    "prefixes": ["model."],
    "embeddings": {
      "embeddings.tok_embeddings.weight": "word",
      "embeddings.norm.weight": "normWeight",
      "embeddings.norm.bias": "normBias"
    },
    "layer": "^layers\\.(\\d+)\\.(.+)$",
    "layerPrefix": "layers.",
    "layerWeights": {
      "attn_norm.weight": "norm1.weight",
      "attn_norm.bias": "norm1.bias",
      "attn.Wqkv.weight": "inProjWeight",
      "attn.Wqkv.bias": "inProjBias",
      "attn.Wo.weight": "outWeight",
      "attn.Wo.bias": "outBias",
      "mlp_norm.weight": "norm2.weight",
      "mlp_norm.bias": "norm2.bias",
      "mlp.Wi.weight": {"split": "halves", "into": ["gate.weight", "linear1.weight"]},
      "mlp.Wi.bias": {"split": "halves", "into": ["gate.bias", "linear1.bias"]},
      "mlp.Wo.weight": "linear2.weight",
      "mlp.Wo.bias": "linear2.bias"
    },
    "final": {"final_norm.weight": "weight", "final_norm.bias": "bias"},
    "mlm": {
      "head.dense.weight": "denseWeight",
      "head.dense.bias": "denseBias",
      "head.norm.weight": "normWeight",
      "head.norm.bias": "normBias",
      "decoder.bias": "bias"
    },
    "tiedDecoder": "^decoder\\.weight$",
    "heads": {
      "sequence": {
        "head.dense.weight": "denseWeight",
        "head.dense.bias": "denseBias",
        "head.norm.weight": "normWeight",
        "head.norm.bias": "normBias",
        "classifier.weight": "weight",
        "classifier.bias": "bias"
      },
      "token": {
        "head.dense.weight": "denseWeight",
        "head.dense.bias": "denseBias",
        "head.norm.weight": "normWeight",
        "head.norm.bias": "normBias",
        "classifier.weight": "weight",
        "classifier.bias": "bias"
      },
      "span": {
        "head.dense.weight": "denseWeight",
        "head.dense.bias": "denseBias",
        "head.norm.weight": "normWeight",
        "head.norm.bias": "normBias",
        "classifier.weight": "weight",
        "classifier.bias": "bias"
      }
    },
    "ignore": "^$",
    "configKeys": {
      "dim": "hidden_size",
      "numHeads": "num_attention_heads",
      "numKvHeads": "num_attention_heads",
      "headDim": "head size",
      "ffnDim": "intermediate_size",
      "vocabSize": "vocab_size",
      "maxPositions": "max_position_embeddings",
      "numLabels": "num_labels (the entries of id2label)"
    }
  })json");
}

// modernbert
extern const Family kModernbertFamily{
    "modernbert", read_modernbert, /*encoder=*/true, /*tie_default=*/true,
    R"json({
      "sequence": {"pool": "first", "dense": "own", "activation": "gelu", "norm": true},
      "token": {"dense": "own", "activation": "gelu", "norm": true},
      "span": {"dense": "own", "activation": "gelu", "norm": true}
    })json",
    modernbert_tensors};


}  // namespace attnkit

// Hugging Face config.json of the BERT, RoBERTa, GPT-2 and LLaMA families, mapped onto attnkit's
// modules (Embeddings, EncoderLayer, the final norm).
#pragma once

#include <cstddef>
#include <string>

#include "attnkit/core/status.hpp"

namespace attnkit {

// The largest config.json accepted (real ones are a few KB; id2label tables can reach ~1 MB).
constexpr std::size_t kMaxConfigBytes = 16u << 20;

// Reads config.json text and writes the model's spec as JSON, in the JavaScript modules' option
// names (web/src/models/model.js builds the model from it):
//   {"family": "bert" | "roberta" | "gpt2" | "llama", "numLayers": n,
//    "embeddings": {vocabSize, dim, maxPositions, typeVocabSize, positional, norm, eps, paddingIdx},
//    "positionIds": "arange" | "padding" (RoBERTa: from the ids, past paddingIdx),
//    "layer": {dim, numHeads, numKvHeads, headDim, ffnDim, activation, normPlacement, norm, eps,
//              bias, outBias, ffnBias, ffnGated, weightLayout, positional, rotary, causal},
//    "layerScale": "inverseLayerIdx" (GPT-2's scale_attn_by_inverse_layer_idx) or absent,
//    "finalNorm": null | {"norm": "layernorm" | "rmsnorm", "eps"},
//    "lmHead": "tied" (the word table) | "separate" (lm_head.weight) | null (BERT, RoBERTa),
//    "ignored": [settings without effect on a forward pass: dropouts, token ids, dtype, ...],
//    "unknown": [settings attnkit does not know, reported by name and not applied]}
// Errors name the setting: a missing or non-integer size, an unsupported value (e.g.
// position_embedding_type "relative_key", rope_scaling type "longrope", is_decoder true), an
// unsupported model_type, malformed or too deeply nested JSON.
Status model_spec_from_config(const char* text, std::size_t length, std::string& spec);

}  // namespace attnkit

// Internal to the text layer: NOT a public header (it is in src/text/, not src/attnkit/, and is
// not installed). What the SentencePiece sources share: sentencepiece.cpp (the trie, the library's
// normalisation, Unigram and BPE, decode), sentencepiece_model.cpp (the .model protobuf reader) and
// sentencepiece_hf.cpp (the models as Hugging Face's tokenizer.json describes them).
#pragma once

#include <string>

#include "attnkit/core/status.hpp"

namespace attnkit::sentencepiece_detail {

constexpr char kSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

// An invalid_argument error, its message prefixed "tokenizer.model: " (sentencepiece.cpp).
Status bad(const std::string& where, const std::string& message);

}  // namespace attnkit::sentencepiece_detail

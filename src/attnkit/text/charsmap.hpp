// SentencePiece's precompiled normalisation charsmap (NormalizerSpec.precompiled_charsmap, and
// Hugging Face's `Precompiled` normalizer, base64 in tokenizer.json): the rules of nmt_nfkc,
// nfkc_cf, ... compiled into a map from UTF-8 strings to replacement strings.
//
// Layout (little-endian): uint32 trie_bytes | a darts-clone double-array trie of trie_bytes / 4
// uint32 units | the replacement strings, each ending in '\0'. A trie value is the offset of its
// replacement in that string blob. Unit bits: 0-7 label (bit 31 too: a leaf unit), 8 has-leaf,
// 9 offset scaling, 10-31 offset; a leaf unit's bits 0-30 are the value.
//
// The blob is untrusted: every unit index and value is range-checked on each lookup, a
// replacement runs at most to the end of the blob, and a rule key longer than kMaxKeyBytes is not
// followed (real rules are a few characters; a cyclic trie cannot make a lookup walk the whole text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "attnkit/core/float_buffer.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

class Charsmap {
 public:
  static constexpr std::size_t kMaxKeyBytes = 256;

  // Checks the blob's framing (size word, trie within the blob, at least one unit). An empty blob
  // is allowed and maps nothing (the "identity" rule). `where` names the field in errors.
  Status parse(std::string_view blob, const char* where);

  bool empty() const { return units_ == 0; }

  // The longest rule whose key is a prefix of s[0, n): its key length in bytes and replacement.
  // Returns false when no rule matches.
  bool longest_match(const char* s, std::size_t n, std::size_t& key_bytes, std::string_view& replacement) const;

 private:
  uint32_t unit(std::size_t i) const;  // unit i, read little-endian

  const unsigned char* trie_ = nullptr;  // units_ * 4 bytes
  std::size_t units_ = 0;
  std::string_view strings_;  // the replacement strings
};

}  // namespace attnkit

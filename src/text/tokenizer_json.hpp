// Internal to the text layer: NOT a public header (it is in src/text/, not src/attnkit/, and is
// not installed). What the tokenizer.json readers share: JsonPairs, the typed field readers (the
// files are untrusted) and the readers one file defines and others call. The files:
// tokenizer.cpp (the Tokenizer's construction and dispatch: the JSON parse, the field readers, the
// vocabulary, added tokens and padding), normalizers.cpp, pre_tokenizers.cpp, decoders.cpp and
// post_processors.cpp (one per kind of step), wordpiece.cpp and bpe.cpp (the models),
// sentencepiece_json.cpp (Unigram and byte-fallback BPE) and classic_files.cpp (vocab.txt;
// encoder.json + vocab.bpe).
// The shared readers are defined in one .cpp each, not inline here: inline (linkonce_odr)
// definitions cost the loaders .wasm about 1 KB (their callers lose what the compiler infers of an
// exact definition, e.g. that a const std::string& argument is left as it was).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnkit/core/status.hpp"
#include "attnkit/text/regex.hpp"
#include "attnkit/text/tokenizer.hpp"
#include "attnkit/text/utf8.hpp"

// The file-reading steps run once per load: compiled for size (the tokenizers' hot paths, in the
// same files, keep -O3). The loaders .wasm has a size budget (tests/node/runtime/wasm_binary.test.mjs).
#if defined(__clang__)
#define ATTNKIT_FOR_SIZE __attribute__((minsize))
#else
#define ATTNKIT_FOR_SIZE
#endif

namespace attnkit {

// One JSON object of a file read as (key, value) pairs in file order instead of into the DOM:
// a vocabulary's 30 000-50 000 keys in nlohmann's std::map cost most of a tokenizer's load. In the
// DOM the object is left empty.
struct JsonPairs {
  std::vector<std::string> path;  // the keys leading to it ({} = the root)
  bool found = false;
  std::vector<std::pair<std::string, nlohmann::json>> items;  // nested objects and arrays read as "(nested)"
};

namespace detail {

using json = nlohmann::json;

// The typed readers of tokenizer.json's fields (tokenizer.cpp; the files are untrusted: every
// field is type-checked before it is read).
Status bad(const std::string& where, const std::string& message);
Status parse_json(const char* text, std::size_t length, const char* what, json& out, JsonPairs* pairs = nullptr);
const json* field(const json& obj, const char* key);
Status flag(const json& j, const char* key, bool dflt, const std::string& where, bool& out);
Status text_field(const json& j, const char* key, const std::string& dflt, const std::string& where, std::string& out);
Status int_field(const json& j, const char* key, int64_t dflt, int64_t lo, int64_t hi, const std::string& where,
                 int64_t& out);
std::string type_of(const json& j);
// A step's keys must be "type" and `keys` (a file's step with a key attnkit does not read is refused).
Status known_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where);
Status token_id(const json& v, int64_t vocab_size, const std::string& where, int32_t& out);
int64_t id_limit(std::size_t count);

constexpr int64_t kMaxTypeId = 1 << 16;
constexpr int64_t kMaxId = 1 << 24;

// A "Sequence" normalizer or pre-tokenizer: `one` on each item of j[key], in order.
template <class One>
Status sequence(const json& j, const char* key, const std::string& where, json& steps, One one) {
  const json* list = field(j, key);
  if (!list || !list->is_array()) return bad(where + "." + key, where + "." + key + " must be an array");
  for (std::size_t i = 0; i < list->size(); ++i) {
    Status s = one((*list)[i], where + "." + key + "[" + std::to_string(i) + "]", steps);
    if (!s.ok()) return s;
  }
  return Status::success();
}

Status read_vocab_object(const json& v, const JsonPairs* pairs, const std::string& where,
                         std::unordered_map<std::string, int32_t>& out);
json added_tokens_of(const json& list, int64_t vocab_limit, Status& s);
Status padding_settings(const json& j, int32_t size, json& settings);

// pre_tokenizers.cpp
std::size_t utf8_length(const std::string& s);

// The steps of each kind -> the settings' lists for web/src/text/tokenizer.js and the text steps
// (text_steps.cpp): normalizers.cpp, pre_tokenizers.cpp, decoders.cpp, post_processors.cpp.
Status normalizer_steps(const json& n, const std::string& where, json& steps);
Status pre_tokenizer_steps(const json& p, const std::string& where, json& steps, std::vector<Regex>& patterns);
Status decoder_steps(const json& d, const std::string& where, json& steps);
Status post_template(const json& p, const std::unordered_map<std::string, int32_t>& vocab, int64_t vocab_size,
                     const std::string& where, json& out);

// bpe.cpp
bool merge_sides(const json& mg, std::string& left, std::string& right);
Status unsupported_bpe_options(const json& m);

}  // namespace detail
}  // namespace attnkit

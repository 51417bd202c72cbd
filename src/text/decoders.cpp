// tokenizer.json's decoder -> the steps web/src/text/tokenizer.js runs.
#include "tokenizer_json.hpp"

namespace attnkit::detail {

// Decoder -> list of steps for web/src/text/tokenizer.js (tokens -> text, as Hugging Face's decode_chain).
ATTNKIT_FOR_SIZE Status decoder_steps(const json& d, const std::string& where, json& steps) {
  if (d.is_null()) return Status::success();
  if (!d.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(d);
  if (t == "Sequence") return sequence(d, "decoders", where, steps, decoder_steps);
  if (t == "ByteLevel") return steps.push_back({{"type", "byteLevel"}}), Status::success();
  if (t == "ByteFallback") return steps.push_back({{"type", "byteFallback"}}), Status::success();
  if (t == "Fuse") return steps.push_back({{"type", "fuse"}}), Status::success();
  if (t == "WordPiece") {
    std::string prefix;
    bool cleanup = true;
    Status s = text_field(d, "prefix", "##", where, prefix);
    if (s.ok()) s = flag(d, "cleanup", true, where, cleanup);
    if (!s.ok()) return s;
    steps.push_back({{"type", "wordPiece"}, {"prefix", prefix}, {"cleanup", cleanup}});
    return Status::success();
  }
  if (t == "BPEDecoder") {
    std::string suffix;
    Status s = text_field(d, "suffix", "</w>", where, suffix);
    if (!s.ok()) return s;
    steps.push_back({{"type", "bpe"}, {"suffix", suffix}});
    return Status::success();
  }
  if (t == "Metaspace") {
    std::string replacement, scheme;
    bool legacy = true;
    Status s = text_field(d, "replacement", "\xe2\x96\x81", where, replacement);
    if (s.ok()) s = text_field(d, "prepend_scheme", "", where, scheme);
    if (s.ok()) s = flag(d, "add_prefix_space", true, where, legacy);  // older files
    if (!s.ok()) return s;
    if (scheme.empty()) scheme = legacy ? "always" : "never";
    if (scheme != "always" && scheme != "first" && scheme != "never") {
      return bad(where + ".prepend_scheme", where + ".prepend_scheme must be \"always\", \"first\" or \"never\"");
    }
    if (utf8_length(replacement) != 1) return bad(where + ".replacement", where + ".replacement must be one character");
    steps.push_back({{"type", "metaspace"}, {"replacement", replacement}, {"prependScheme", scheme}});
    return Status::success();
  }
  if (t == "Strip") {
    std::string content;
    int64_t start = 0, stop = 0;
    Status s = text_field(d, "content", " ", where, content);
    if (s.ok()) s = int_field(d, "start", 0, 0, 1 << 20, where, start);
    if (s.ok()) s = int_field(d, "stop", 0, 0, 1 << 20, where, stop);
    if (!s.ok()) return s;
    if (utf8_length(content) != 1) return bad(where + ".content", where + ".content must be one character");
    steps.push_back({{"type", "strip"}, {"content", content}, {"start", start}, {"stop", stop}});
    return Status::success();
  }
  if (t == "Replace") {
    const json* pat = field(d, "pattern");
    const json* str = pat ? field(*pat, "String") : nullptr;
    std::string content;
    Status s = text_field(d, "content", "", where, content);
    if (!s.ok()) return s;
    if (!str || !str->is_string() || str->get_ref<const std::string&>().empty()) {
      return bad(where + ".pattern", where + ".pattern must be a non-empty {\"String\": ...} (a file's regex is never compiled)");
    }
    steps.push_back({{"type", "replace"}, {"pattern", *str}, {"content", content}});
    return Status::success();
  }
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: ByteLevel, WordPiece, Metaspace, ByteFallback, Fuse, Strip, "
                                  "Replace, BPEDecoder, Sequence)");
}

}  // namespace attnkit::detail

// tokenizer.json's normalizer -> the steps web/src/text/tokenizer.js and the text steps (text_steps.cpp) run.
#include "tokenizer_json.hpp"

namespace attnkit::detail {

// Normalizer -> list of steps for web/src/text/tokenizer.js.
ATTNKIT_FOR_SIZE Status normalizer_steps(const json& n, const std::string& where, json& steps) {
  if (n.is_null()) return Status::success();
  if (!n.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(n);
  if (t == "Sequence") return sequence(n, "normalizers", where, steps, normalizer_steps);
  if (t == "BertNormalizer") {
    bool clean, chinese, lower;
    Status s = flag(n, "clean_text", true, where, clean);
    if (s.ok()) s = flag(n, "handle_chinese_chars", true, where, chinese);
    if (s.ok()) s = flag(n, "lowercase", true, where, lower);
    if (!s.ok()) return s;
    json strip = nullptr;  // null: follow lowercase, as BERT does
    if (const json* v = field(n, "strip_accents")) {
      if (!v->is_boolean()) return bad(where + ".strip_accents", where + ".strip_accents must be a boolean or null");
      strip = *v;
    }
    steps.push_back({{"type", "bert"}, {"cleanText", clean}, {"handleChineseChars", chinese}, {"stripAccents", strip},
                     {"lowercase", lower}});
    return Status::success();
  }
  static const std::pair<const char*, const char*> simple[] = {
      {"Lowercase", "lowercase"}, {"NFD", "nfd"}, {"NFC", "nfc"}, {"NFKD", "nfkd"}, {"NFKC", "nfkc"}, {"StripAccents", "stripAccents"},
      {"Nmt", "nmt"}};
  for (const auto& [hf, ours] : simple)
    if (t == hf) return steps.push_back({{"type", ours}}), Status::success();
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: BertNormalizer, Lowercase, NFD, NFC, NFKD, NFKC, "
                                  "StripAccents, Nmt, Sequence)");
}

}  // namespace attnkit::detail

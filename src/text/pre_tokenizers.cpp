// tokenizer.json's pre_tokenizer -> the steps web/src/text/tokenizer.js and the text steps (text_steps.cpp)
// run; Split's regular expressions compiled for attnkit's engine (regex.hpp).
#include "tokenizer_json.hpp"

namespace attnkit::detail {

namespace {

// A Split or Punctuation behavior, as the steps name it: removed, isolated, mergedWithPrevious,
// mergedWithNext, contiguous. `fallback` when the field is absent ("" = required).
ATTNKIT_FOR_SIZE Status split_behavior(const json& p, const std::string& where, const char* fallback, std::string& out) {
  std::string b;
  Status s = text_field(p, "behavior", fallback, where, b);
  if (!s.ok()) return s;
  static const std::pair<const char*, const char*> names[] = {
      {"Removed", "removed"}, {"Isolated", "isolated"}, {"MergedWithPrevious", "mergedWithPrevious"},
      {"MergedWithNext", "mergedWithNext"}, {"Contiguous", "contiguous"}};
  for (const auto& [hf, ours] : names)
    if (b == hf || b == ours) return out = ours, Status::success();
  return bad(where + ".behavior", where + ".behavior \"" + b +
                                      "\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

}  // namespace

// Code points in a UTF-8 string (malformed bytes count one each), for one-character fields.
std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size(); ++n) i += std::max<std::size_t>(1, utf8::decode(p + i, s.size() - i));
  return n;
}

// `patterns`: where Split's regular expressions are compiled to (the step's "program" indexes it).
ATTNKIT_FOR_SIZE Status pre_tokenizer_steps(const json& p, const std::string& where, json& steps, std::vector<Regex>& patterns) {
  if (p.is_null()) return Status::success();
  if (!p.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(p);
  if (t == "Sequence") {
    return sequence(p, "pretokenizers", where, steps,
                    [&](const json& one, const std::string& w, json& out) { return pre_tokenizer_steps(one, w, out, patterns); });
  }
  if (t == "BertPreTokenizer") return steps.push_back({{"type", "bert"}}), Status::success();
  if (t == "WhitespaceSplit") return steps.push_back({{"type", "whitespaceSplit"}}), Status::success();
  // Whitespace: words (\w+) and runs of other non-space characters ([^\w\s]+); spaces dropped.
  if (t == "Whitespace") return steps.push_back({{"type", "whitespace"}}), Status::success();
  if (t == "Digits") {
    bool individual = false;
    Status s = flag(p, "individual_digits", false, where, individual);
    if (!s.ok()) return s;
    steps.push_back({{"type", "digits"}, {"individualDigits", individual}});
    return Status::success();
  }
  if (t == "Punctuation") {
    std::string behavior;
    Status s = split_behavior(p, where, "isolated", behavior);
    if (!s.ok()) return s;
    steps.push_back({{"type", "punctuation"}, {"behavior", behavior}});
    return Status::success();
  }
  // CharDelimiterSplit: pieces between the delimiter characters, the delimiters removed.
  if (t == "CharDelimiterSplit") {
    const json* d = field(p, "delimiter");
    if (!d || !d->is_string() || utf8_length(d->get_ref<const std::string&>()) != 1) {
      return bad(where + ".delimiter", where + ".delimiter must be one character");
    }
    steps.push_back({{"type", "split"}, {"behavior", "removed"}, {"invert", false}, {"literal", *d}});
    return Status::success();
  }
  if (t == "Split") {
    // Every pattern is compiled here for attnkit's own engine (regex.hpp: linear time, no
    // backtracking), for the C++ text steps. Where a text goes through
    // web/src/text/tokenizer.js's steps instead, the patterns of known models ("regex": name) run as vetted
    // equivalents in V8 (SPLIT_PATTERNS). A String pattern is a literal.
    static const std::pair<const char*, const char*> known[] = {
        {"cl100k", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
        {"qwen2", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
        {"gpt2", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
    };
    const json* pat = field(p, "pattern");
    const json* re = pat ? field(*pat, "Regex") : nullptr;
    const json* str = pat ? field(*pat, "String") : nullptr;
    std::string behavior;
    bool invert = false;
    Status s = split_behavior(p, where, "", behavior);
    if (s.ok()) s = flag(p, "invert", false, where, invert);
    if (!s.ok()) return s;
    json step = {{"type", "split"}, {"behavior", behavior}, {"invert", invert}};
    if (str && str->is_string() && !str->get<std::string>().empty()) {
      step["literal"] = *str;
    } else if (re && re->is_string()) {
      const std::string& r = re->get_ref<const std::string&>();
      for (const auto& [name, text] : known)
        if (r == text) step["regex"] = name;
      patterns.emplace_back();
      Status c = Regex::compile(r, patterns.back());
      if (!c.ok()) return bad(where + ".pattern", where + ".pattern: " + c.message);
      step["program"] = patterns.size() - 1;
    } else {
      return bad(where + ".pattern", where + ".pattern must be {\"Regex\": ...} or a non-empty {\"String\": ...}");
    }
    steps.push_back(step);
    return Status::success();
  }
  if (t == "ByteLevel") {
    bool prefix, regex;
    Status s = flag(p, "add_prefix_space", false, where, prefix);
    if (s.ok()) s = flag(p, "use_regex", true, where, regex);
    if (!s.ok()) return s;
    steps.push_back({{"type", "byteLevel"}, {"addPrefixSpace", prefix}, {"useRegex", regex}});
    return Status::success();
  }
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: BertPreTokenizer, ByteLevel, Whitespace, WhitespaceSplit, "
                                  "Digits, Punctuation, Split, CharDelimiterSplit, Sequence)");
}

}  // namespace attnkit::detail

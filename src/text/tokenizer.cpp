#include "attnkit/text/tokenizer.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <queue>

#include <nlohmann/json.hpp>

#include "attnkit/formats/safetensors.hpp"  // check_json_text
#include "attnkit/text/utf8.hpp"

namespace attnkit {

// One JSON object of a file read as (key, value) pairs in file order instead of into the DOM:
// a vocabulary's 30 000-50 000 keys in nlohmann's std::map cost most of a tokenizer's load. In the
// DOM the object is left empty.
struct JsonPairs {
  std::vector<std::string> path;  // the keys leading to it ({} = the root)
  bool found = false;
  std::vector<std::pair<std::string, nlohmann::json>> items;  // nested objects and arrays read as "(nested)"
};

namespace {

// The file-reading steps run once per load: compiled for size (the tokenizers' hot paths, in the
// same file, keep -O3). The loaders .wasm has a size budget (tests/node/runtime/wasm_binary.test.mjs).
#if defined(__clang__)
#define ATTNKIT_FOR_SIZE __attribute__((minsize))
#else
#define ATTNKIT_FOR_SIZE
#endif

using json = nlohmann::json;

// The files are untrusted: every field is type-checked here before it is read (nlohmann's get<>
// and value() throw on a wrong type, and a throw reaches JavaScript as a bare number).

Status bad(const std::string& where, const std::string& message) {
  return Status::error(Code::invalid_argument, where, message);
}

// nlohmann SAX handler: builds the DOM as json::parse would (a repeated key keeps its last
// value), except for the object at pairs->path.
class DomExceptPairs {
 public:
  DomExceptPairs(json& root, JsonPairs* pairs) : root_(root), pairs_(pairs) {}
  bool null() { return value(json(nullptr)); }
  bool boolean(bool b) { return value(json(b)); }
  bool number_integer(json::number_integer_t v) { return value(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return value(json(v)); }
  bool string(json::string_t& v) { return value(json(std::move(v))); }
  bool binary(json::binary_t&) { return false; }  // not in JSON text
  bool start_object(std::size_t) {
    if (capturing_) return nest();
    const bool capture = pairs_ && !pairs_->found && stack_.size() == pairs_->path.size() &&
                         std::equal(keys_.begin(), keys_.end(), pairs_->path.begin());
    open(add(json::object()));
    if (capture) capturing_ = pairs_->found = true;
    return true;
  }
  bool key(json::string_t& k) {
    if (capturing_ && skip_ == 0) key_ = std::move(k);
    else if (!capturing_) keys_.back() = std::move(k);
    return true;
  }
  bool end_object() {
    if (capturing_ && skip_ > 0) return --skip_, true;
    capturing_ = false;
    return close();
  }
  bool start_array(std::size_t) {
    if (capturing_) return nest();
    open(add(json::array()));
    return true;
  }
  bool end_array() {
    if (capturing_) return --skip_, true;
    return close();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  bool value(json&& v) {
    if (capturing_) {
      if (skip_ == 0) pairs_->items.emplace_back(std::move(key_), std::move(v));
    } else {
      add(std::move(v));
    }
    return true;
  }
  bool nest() {  // an object or array inside the captured object: one "(nested)" item
    if (skip_++ == 0) pairs_->items.emplace_back(std::move(key_), json("(nested)"));
    return true;
  }
  json* add(json&& v) {
    if (stack_.empty()) return &(root_ = std::move(v));
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    return &(parent[keys_.back()] = std::move(v));
  }
  void open(json* container) {
    stack_.push_back(container);
    keys_.emplace_back();
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  json& root_;
  JsonPairs* pairs_;
  std::vector<json*> stack_;       // the open containers
  std::vector<std::string> keys_;  // the key being filled in each open object
  bool capturing_ = false;
  int skip_ = 0;
  std::string key_;
};

// A tokenizer.json's vocabulary read straight from the text: a Unigram [[piece, score], ...] or a
// {token: id} object. Through nlohmann it is most of a load (a DOM node per piece and score, and
// in wasm musl's strtod in soft-float long double). Any text this reader is unsure of (escapes it
// does not decode, a repeated key, other value types, malformed UTF-8) makes it give up, and the
// whole file goes through nlohmann as before, with its errors.
class VocabScan {
 public:
  VocabScan(const char* text, std::size_t n) : t_(reinterpret_cast<const unsigned char*>(text)), n_(n) {}

  enum Kind { none, unigram, object };
  // Finds the root object's "model" object's "vocab" and reads it, into pieces and scores (an
  // array) or pairs (an object); its span in the text goes to [begin, end).
  Kind run(std::size_t& begin, std::size_t& end, std::vector<std::string>& pieces, std::vector<float>& scores,
           std::vector<std::pair<std::string, nlohmann::json>>& pairs) {
    std::size_t model = 0, vocab = 0;
    if (!members(model, "model", 1)) return none;
    at_ = model;
    // The model's members, the vocabulary read where it stands (not skipped, then read again).
    pieces_ = &pieces, scores_ = &scores, pairs_ = &pairs;
    if (!members(vocab, "vocab", 2, true) || kind_ == none) return none;
    begin = begin_, end = end_;
    return kind_;
  }

 private:
  void ws() {
    while (at_ < n_ && (t_[at_] == ' ' || t_[at_] == '\n' || t_[at_] == '\r' || t_[at_] == '\t')) ++at_;
  }
  bool eat(unsigned char c) {
    ws();
    if (at_ < n_ && t_[at_] == c) return ++at_, true;
    return false;
  }
  // The members of the object at at_: the value of `key` (once only) at `found`, or 0. With
  // `read`, key's value is read by vocab() instead of skipped.
  bool members(std::size_t& found, const char* key, int depth, bool read = false) {
    if (!eat('{')) return false;
    found = 0;
    if (eat('}')) return true;
    const std::size_t klen = std::strlen(key);
    do {
      ws();
      std::string name;
      if (!string(name)) return false;
      if (!eat(':')) return false;
      ws();
      if (name.size() == klen && name == key) {
        if (found) return false;  // a repeated key: nlohmann decides
        found = at_;
        if (read) {
          if (!vocab()) return false;
          continue;
        }
      }
      if (!skip(depth)) return false;
    } while (eat(','));
    return eat('}') && found;
  }
  // Skips one JSON value (its structure only: strings and brackets).
  bool skip(int depth) {
    ws();
    int level = 0;
    do {
      if (at_ >= n_) return false;
      const unsigned char c = t_[at_];
      if (c == '"') {
        ++at_;
        while (at_ < n_ && t_[at_] != '"') at_ += t_[at_] == '\\' ? 2 : 1;
        if (at_ >= n_) return false;
        ++at_;
      } else if (c == '{' || c == '[') {
        if (++level + depth > 512) return false;
        ++at_;
      } else if (c == '}' || c == ']') {
        if (--level < 0) return false;
        ++at_;
      } else {
        if (level == 0) {  // a scalar: up to the next delimiter
          while (at_ < n_ && t_[at_] != ',' && t_[at_] != '}' && t_[at_] != ']') ++at_;
          return true;
        }
        ++at_;
      }
    } while (level > 0);
    return true;
  }
  // A string without escapes other than \" \\ \/ \n \t \r \b \f and \u of a BMP character
  // (surrogates give up), well-formed UTF-8, no control characters.
  bool string(std::string& out) {
    if (at_ >= n_ || t_[at_] != '"') return false;
    ++at_;
    for (;;) {
      if (at_ >= n_) return false;
      const unsigned char c = t_[at_];
      if (c == '"') return ++at_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (at_ + 1 >= n_) return false;
        const unsigned char e = t_[at_ + 1];
        at_ += 2;
        switch (e) {
          case '"': case '\\': case '/': out += static_cast<char>(e); break;
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            if (at_ + 4 > n_) return false;
            uint32_t v = 0;
            for (int k = 0; k < 4; ++k) {
              const unsigned char h = t_[at_ + k];
              const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
              if (d < 0) return false;
              v = v * 16 + static_cast<uint32_t>(d);
            }
            if (v >= 0xD800 && v <= 0xDFFF) return false;
            at_ += 4;
            utf8::append(v, out);
            break;
          }
          default: return false;
        }
        continue;
      }
      const std::size_t len = c < 0x80 ? 1 : utf8::decode(t_ + at_, n_ - at_);
      if (len == 0) return false;
      out.append(reinterpret_cast<const char*>(t_ + at_), len);
      at_ += len;
    }
  }
  // A JSON number, for a float32: exact by one multiplication or division when the digits fit in
  // 2^53 and the power of ten in 10^22 (Clinger's fast path: one rounding, as strtod's). Up to 19
  // digits the same product is within two units of the double's last place, which cannot move it
  // across a float32's rounding boundary unless it lies within a few units of one (checked: then
  // strtod). Else strtod. (Scores are float32 values printed as doubles: 16-17 digits.)
  bool number(double& out) {
    ws();
    const std::size_t start = at_;
    bool negative = false;
    if (at_ < n_ && t_[at_] == '-') negative = true, ++at_;
    if (at_ >= n_ || t_[at_] < '0' || t_[at_] > '9') return false;
    if (t_[at_] == '0' && at_ + 1 < n_ && t_[at_ + 1] >= '0' && t_[at_ + 1] <= '9') return false;
    uint64_t m = 0;
    int digits = 0, exp10 = 0;
    auto take = [&](bool fraction) {
      while (at_ < n_ && t_[at_] >= '0' && t_[at_] <= '9') {
        if (m == 0 && t_[at_] == '0') {
          if (fraction) --exp10;
        } else if (digits < 19) {
          m = m * 10 + (t_[at_] - '0');
          ++digits;
          if (fraction) --exp10;
        } else {
          digits = 99;  // too many digits for the fast path
          if (!fraction) ++exp10;
        }
        ++at_;
      }
    };
    take(false);
    const bool integer = at_ >= n_ || (t_[at_] != '.' && t_[at_] != 'e' && t_[at_] != 'E');
    if (integer && m == 0 && digits == 0) {  // nlohmann reads "-0" as the integer 0
      out = 0;
      return true;
    }
    if (at_ < n_ && t_[at_] == '.') {
      ++at_;
      if (at_ >= n_ || t_[at_] < '0' || t_[at_] > '9') return false;
      take(true);
    }
    if (at_ < n_ && (t_[at_] == 'e' || t_[at_] == 'E')) {
      ++at_;
      int sign = 1, e = 0;
      if (at_ < n_ && (t_[at_] == '+' || t_[at_] == '-')) sign = t_[at_++] == '-' ? -1 : 1;
      if (at_ >= n_ || t_[at_] < '0' || t_[at_] > '9') return false;
      while (at_ < n_ && t_[at_] >= '0' && t_[at_] <= '9') e = std::min(e * 10 + (t_[at_++] - '0'), 100000);
      exp10 += sign * e;
    }
    static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (digits <= 19 && exp10 >= -22 && exp10 <= 22) {
      const double v = static_cast<double>(m);
      out = exp10 < 0 ? v / kPow10[-exp10] : v * kPow10[exp10];
      if (negative) out = -out;
      if (m <= (uint64_t{1} << 53)) return true;
      uint64_t bits = 0;
      std::memcpy(&bits, &out, sizeof bits);
      const uint64_t low = bits & ((uint64_t{1} << 29) - 1);  // the 29 bits a float32 drops
      const uint64_t half = uint64_t{1} << 28;
      if ((low > half ? low - half : half - low) > 8) return true;
    }
    const std::string lexeme(reinterpret_cast<const char*>(t_ + start), at_ - start);
    out = std::strtod(lexeme.c_str(), nullptr);
    return true;
  }
  bool array(std::vector<std::string>& pieces, std::vector<float>& scores) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      if (!eat('[')) return false;
      ws();
      pieces.emplace_back();
      double score = 0;
      if (!string(pieces.back()) || !eat(',') || !number(score) || !eat(']')) return false;
      // The same check from_sentencepiece_json makes of the DOM's numbers.
      if (!(score == score) || score > 3.4e38 || score < -3.4e38) return false;
      scores.push_back(static_cast<float>(score));
    } while (eat(','));
    return eat(']');
  }

  // The vocabulary at at_: [[piece, score], ...] or {token: id, ...}.
  bool vocab() {
    begin_ = at_;
    kind_ = at_ < n_ && t_[at_] == '[' ? unigram : object;
    if (kind_ == unigram ? !array(*pieces_, *scores_) : !ids(*pairs_)) return false;
    end_ = at_;
    return true;
  }
  // {token: id, ...} with ids non-negative integers of at most 18 digits.
  bool ids(std::vector<std::pair<std::string, nlohmann::json>>& pairs) {
    if (!eat('{')) return false;
    if (eat('}')) return true;
    do {
      ws();
      std::string token;
      if (!string(token) || !eat(':')) return false;
      ws();
      const std::size_t start = at_;
      int64_t id = 0;
      while (at_ < n_ && t_[at_] >= '0' && t_[at_] <= '9' && at_ - start < 18) id = id * 10 + (t_[at_++] - '0');
      if (at_ == start || (t_[start] == '0' && at_ - start > 1)) return false;
      if (at_ < n_ && t_[at_] != ',' && t_[at_] != '}' && t_[at_] != ' ' && t_[at_] != '\n' && t_[at_] != '\r' && t_[at_] != '\t') {
        return false;  // a fraction, an exponent, more digits: nlohmann decides
      }
      pairs.emplace_back(std::move(token), nlohmann::json(id));
    } while (eat(','));
    return eat('}');
  }

  const unsigned char* t_;
  std::size_t n_, at_ = 0;
  Kind kind_ = none;
  std::size_t begin_ = 0, end_ = 0;
  std::vector<std::string>* pieces_ = nullptr;
  std::vector<float>* scores_ = nullptr;
  std::vector<std::pair<std::string, nlohmann::json>>* pairs_ = nullptr;
};

Status parse_json(const char* text, std::size_t length, const char* what, json& out, JsonPairs* pairs = nullptr) {
  Status s = check_json_text(what, what, text, length);
  if (!s.ok()) return s;
  if (!pairs) {
    out = json::parse(text, text + length, nullptr, false);
    if (out.is_discarded()) return bad(what, std::string(what) + " is not valid JSON");
    return Status::success();
  }
  DomExceptPairs sax(out, pairs);
  if (!json::sax_parse(text, text + length, &sax)) {
    out = json();
    return bad(what, std::string(what) + " is not valid JSON");
  }
  return Status::success();
}

// obj[key] when obj is an object that has it and it is not null; else nullptr.
const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// A boolean field (absent = dflt; null = dflt too, as tokenizers writes optional settings).
Status flag(const json& j, const char* key, bool dflt, const std::string& where, bool& out) {
  const json* v = field(j, key);
  if (!v) return out = dflt, Status::success();
  if (!v->is_boolean()) return bad(where + "." + key, where + "." + key + " must be true or false, got " + v->dump());
  out = v->get<bool>();
  return Status::success();
}

// A string field (absent or null = dflt).
Status text_field(const json& j, const char* key, const std::string& dflt, const std::string& where, std::string& out) {
  const json* v = field(j, key);
  if (!v) return out = dflt, Status::success();
  if (!v->is_string()) return bad(where + "." + key, where + "." + key + " must be a string, got " + v->dump());
  out = v->get<std::string>();
  return Status::success();
}

// An integer field in [lo, hi] (absent or null = dflt).
Status int_field(const json& j, const char* key, int64_t dflt, int64_t lo, int64_t hi, const std::string& where,
                 int64_t& out) {
  const json* v = field(j, key);
  if (!v) return out = dflt, Status::success();
  const bool is_int = v->is_number_integer();
  const bool in_range = is_int && (v->is_number_unsigned() ? v->get<uint64_t>() <= static_cast<uint64_t>(hi)
                                                           : v->get<int64_t>() >= lo && v->get<int64_t>() <= hi);
  if (!in_range) {
    return bad(where + "." + key, where + "." + key + " must be an integer in [" + std::to_string(lo) + ", " +
                                      std::to_string(hi) + "], got " + v->dump());
  }
  out = v->is_number_unsigned() ? static_cast<int64_t>(v->get<uint64_t>()) : v->get<int64_t>();
  return Status::success();
}

std::string type_of(const json& j) {
  const json* t = field(j, "type");
  return t && t->is_string() ? t->get<std::string>() : std::string();
}

// A merge line "left right", split at the first space; false without one.
bool split_merge(const std::string& line, std::string& left, std::string& right) {
  const std::size_t sp = line.find(' ');
  if (sp == std::string::npos) return false;
  left = line.substr(0, sp);
  right = line.substr(sp + 1);
  return true;
}

// One of tokenizer.json's merges: "left right" (tokenizers <= 0.19) or [left, right].
bool merge_sides(const json& mg, std::string& left, std::string& right) {
  if (mg.is_string()) return split_merge(mg.get_ref<const std::string&>(), left, right);
  if (!mg.is_array() || mg.size() != 2 || !mg[0].is_string() || !mg[1].is_string()) return false;
  left = mg[0].get<std::string>();
  right = mg[1].get<std::string>();
  return true;
}

// The BPE options attnkit does not run (training-time dropout, subword affixes), refused by name.
ATTNKIT_FOR_SIZE Status unsupported_bpe_options(const json& m) {
  if (field(m, "dropout")) return bad("model.dropout", "model.dropout is not supported (inference only)");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    std::string value;
    Status s = text_field(m, affix, "", "model", value);
    if (!s.ok()) return s;
    if (!value.empty()) return bad(std::string("model.") + affix, std::string("model.") + affix + " is not supported");
  }
  return Status::success();
}

// The steps one normalizer, pre-tokenizer, decoder or post-processor may chain: Sequence items,
// those of nested Sequences included. Each is a pass over every text (10 000 Digits took 10 s on
// 10 KB); real files chain a handful (Llama 3's and Qwen 2's pre-tokenizers 2, Llama 2's decoder
// 4, ALBERT's normalizer up to 7).
constexpr std::size_t kMaxSteps = 64;

// Counts the items of the Sequence `n` (in n[list_key]) and of the Sequences nested in it into
// `count`; past kMaxSteps, the error names the first item over. Types are checked later.
ATTNKIT_FOR_SIZE Status count_steps(const json& n, const char* list_key, const std::string& where, std::size_t& count) {
  const json* list = n.is_object() && type_of(n) == "Sequence" ? field(n, list_key) : nullptr;
  for (std::size_t i = 0; list && list->is_array() && i < list->size(); ++i) {
    const std::string at = where + "." + list_key + "[" + std::to_string(i) + "]";
    if (++count > kMaxSteps) return bad(at, at + ": more than " + std::to_string(kMaxSteps) + " steps (nested Sequences count)");
    Status s = count_steps((*list)[i], list_key, at, count);
    if (!s.ok()) return s;
  }
  return Status::success();
}

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

// Normalizer -> list of steps for web/tokenizer.js.
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
    // web/tokenizer.js's steps instead, the patterns of known models ("regex": name) run as vetted
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

// Decoder -> list of steps for web/tokenizer.js (tokens -> text, as Hugging Face's decode_chain).
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

constexpr int64_t kMaxTypeId = 1 << 16;

// An id the tokenizer may emit: an integer in [0, vocab_size).
ATTNKIT_FOR_SIZE Status token_id(const json& v, int64_t vocab_size, const std::string& where, int32_t& out) {
  // (an unsigned value above 2^63 reads as a negative int64)
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size) {
    return bad(where, where + " must be a token id in [0, " + std::to_string(vocab_size) + "), got " + v.dump());
  }
  out = static_cast<int32_t>(v.get<int64_t>());
  return Status::success();
}

// Post-processor -> {"single": [...], "pair": [...]} of {"id", "typeId"} (a special token) or
// {"sequence": 0 | 1, "typeId"} items; null when nothing is added. Ids are checked against the
// vocabulary's size (a template must not emit an id the model has no row for).
ATTNKIT_FOR_SIZE Status post_template(const json& p, const std::unordered_map<std::string, int32_t>& vocab, int64_t vocab_size,
                     const std::string& where, json& out) {
  out = nullptr;
  if (p.is_null()) return Status::success();
  if (!p.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(p);
  if (t == "ByteLevel") return Status::success();  // offsets only: adds no tokens
  if (t == "Sequence") {  // ByteLevel steps and at most one step that adds tokens (Llama 3)
    const json* list = field(p, "processors");
    if (!list || !list->is_array()) return bad(where + ".processors", where + ".processors must be an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      json one;
      Status s = post_template((*list)[i], vocab, vocab_size, where + ".processors[" + std::to_string(i) + "]", one);
      if (!s.ok()) return s;
      if (!one.is_null() && !out.is_null()) {
        return bad(where + ".processors", where + ": only one processor may add special tokens");
      }
      if (!one.is_null()) out = one;
    }
    return Status::success();
  }
  auto special = [&](const char* key, json& item) {
    const json* pair = field(p, key);
    if (!pair || !pair->is_array() || pair->size() != 2 || !(*pair)[0].is_string()) {
      return bad(where + "." + key, where + "." + key + " must be [token, id]");
    }
    int32_t id;
    Status s = token_id((*pair)[1], vocab_size, where + "." + key + "[1]", id);
    if (!s.ok()) return s;
    item = {{"id", id}, {"typeId", 0}};
    return Status::success();
  };
  if (t == "BertProcessing" || t == "RobertaProcessing") {
    json cls, sep;
    Status s = special("cls", cls);
    if (s.ok()) s = special("sep", sep);
    if (!s.ok()) return s;
    const json a = {{"sequence", 0}, {"typeId", 0}};
    if (t == "BertProcessing") {
      json sep1 = sep;
      sep1["typeId"] = 1;
      out = {{"single", {cls, a, sep}}, {"pair", {cls, a, sep, {{"sequence", 1}, {"typeId", 1}}, sep1}}};
    } else {  // RoBERTa: <s> A </s></s> B </s>, all type 0
      out = {{"single", {cls, a, sep}}, {"pair", {cls, a, sep, sep, {{"sequence", 1}, {"typeId", 0}}, sep}}};
    }
    return Status::success();
  }
  if (t == "TemplateProcessing") {
    const json* specials = field(p, "special_tokens");
    if (specials && !specials->is_object()) return bad(where + ".special_tokens", where + ".special_tokens must be an object");
    json result = json::object();
    for (const char* which : {"single", "pair"}) {
      const json* list = field(p, which);
      const std::string at = where + "." + which;
      if (!list || !list->is_array()) return bad(at, at + " must be an array");
      json items = json::array();
      for (std::size_t i = 0; i < list->size(); ++i) {
        const json& piece = (*list)[i];
        const std::string pat = at + "[" + std::to_string(i) + "]";
        const json* st = field(piece, "SpecialToken");
        const json* sq = field(piece, "Sequence");
        if (!st == !sq || !(st ? st : sq)->is_object()) {
          return bad(pat, pat + " must be {\"SpecialToken\": {...}} or {\"Sequence\": {...}}");
        }
        int64_t type_id;
        Status s = int_field(st ? *st : *sq, "type_id", 0, 0, kMaxTypeId, pat, type_id);
        if (!s.ok()) return s;
        if (st) {
          std::string name;
          s = text_field(*st, "id", "", pat + ".SpecialToken", name);
          if (!s.ok()) return s;
          const json* entry = specials ? field(*specials, name.c_str()) : nullptr;
          const json* ids = entry ? field(*entry, "ids") : nullptr;
          int32_t id = -1;
          if (ids) {
            if (!ids->is_array() || ids->size() != 1) {
              return bad(where + ".special_tokens", where + ": the special token '" + name + "' must have exactly one id");
            }
            s = token_id((*ids)[0], vocab_size, where + ".special_tokens." + name + ".ids[0]", id);
            if (!s.ok()) return s;
          } else if (vocab.count(name)) {
            id = vocab.at(name);
          } else {
            return bad(where + ".special_tokens", where + ": the special token '" + name + "' has no id");
          }
          items.push_back({{"id", id}, {"typeId", type_id}});
        } else {
          std::string seq;
          s = text_field(*sq, "id", "A", pat + ".Sequence", seq);
          if (s.ok() && seq != "A" && seq != "B") s = bad(pat + ".Sequence.id", pat + ".Sequence.id must be \"A\" or \"B\"");
          // One text has no second sequence (Hugging Face's apply_template would index past its one
          // encoding): the single template holds A only.
          if (s.ok() && seq == "B" && std::string(which) == "single") {
            s = bad(pat + ".Sequence.id", pat + ": the single template has only sequence \"A\"");
          }
          if (!s.ok()) return s;
          items.push_back({{"sequence", seq == "B" ? 1 : 0}, {"typeId", type_id}});
        }
      }
      result[which] = items;
    }
    out = result;
    return Status::success();
  }
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: TemplateProcessing, BertProcessing, "
                                  "RobertaProcessing, ByteLevel, Sequence)");
}

constexpr int64_t kMaxId = 1 << 24;

// A {token: id} object: from `pairs` when the parse read it that way, else from the DOM.
Status read_vocab_object(const json& v, const JsonPairs* pairs, const std::string& where,
                         std::unordered_map<std::string, int32_t>& out) {
  if (!v.is_object()) return bad(where, where + " must be an object {token: id}");
  const auto one = [&](const std::string& token, const json& id) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxId) {
      return bad(where, where + ": token '" + token + "' has id " + id.dump() + "; ids are integers in [0, 2^24)");
    }
    out[token] = static_cast<int32_t>(id.get<int64_t>());
    return Status::success();
  };
  if (pairs && pairs->found) {
    out.reserve(pairs->items.size());
    for (const auto& [token, id] : pairs->items) {
      Status s = one(token, id);
      if (!s.ok()) return s;
    }
    return Status::success();
  }
  out.reserve(v.size());
  for (const auto& [token, id] : v.items()) {
    Status s = one(token, id);
    if (!s.ok()) return s;
  }
  return Status::success();
}

ATTNKIT_FOR_SIZE json added_tokens_of(const json& list, int64_t vocab_limit, Status& s) {
  json out = json::array();
  if (list.is_null()) return out;
  if (!list.is_array()) {
    s = bad("added_tokens", "added_tokens must be an array");
    return out;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& a = list[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    const json* id = field(a, "id");
    const json* content = field(a, "content");
    if (!id || !content || !content->is_string()) {
      s = bad(where, where + " needs an integer id and a content string");
      return out;
    }
    int32_t value;
    s = token_id(*id, vocab_limit, where + ".id", value);
    bool special = false, lstrip = false, rstrip = false, single = false, normalized = false;
    if (s.ok()) s = flag(a, "special", false, where, special);
    if (s.ok()) s = flag(a, "lstrip", false, where, lstrip);
    if (s.ok()) s = flag(a, "rstrip", false, where, rstrip);
    if (s.ok()) s = flag(a, "single_word", false, where, single);
    if (s.ok()) s = flag(a, "normalized", !special, where, normalized);
    if (!s.ok()) return out;
    if (content->get_ref<const std::string&>().empty()) continue;  // as tokenizers: an empty token matches nothing
    out.push_back({{"id", value}, {"content", *content}, {"special", special}, {"lstrip", lstrip}, {"rstrip", rstrip},
                   {"singleWord", single}, {"normalized", normalized}});
  }
  return out;
}

ATTNKIT_FOR_SIZE json bert_template(const std::unordered_map<std::string, int32_t>& vocab) {
  if (!vocab.count("[CLS]") || !vocab.count("[SEP]")) return nullptr;
  const json cls = {{"id", vocab.at("[CLS]")}, {"typeId", 0}}, sep = {{"id", vocab.at("[SEP]")}, {"typeId", 0}};
  const json sep1 = {{"id", vocab.at("[SEP]")}, {"typeId", 1}};
  return {{"single", {cls, {{"sequence", 0}, {"typeId", 0}}, sep}},
          {"pair", {cls, {{"sequence", 0}, {"typeId", 0}}, sep, {{"sequence", 1}, {"typeId", 1}}, sep1}}};
}

ATTNKIT_FOR_SIZE json special_token(int32_t id, const std::string& content) {
  return {{"id", id}, {"content", content}, {"special", true}, {"lstrip", false}, {"rstrip", false},
          {"singleWord", false}, {"normalized", false}};
}

// The largest id a vocabulary of `count` entries may use (see Tokenizer::kIdSlack).
int64_t id_limit(std::size_t count) { return std::min<int64_t>(kMaxId, 2 * static_cast<int64_t>(count) + Tokenizer::kIdSlack); }

// Base64 (RFC 4648, with or without padding) -> bytes; false on any other character. (A T5 or
// XLM-R charsmap is 320 KB of base64: a table and one write per byte, not push_back.)
bool base64_decode(const std::string& in, std::string& out) {
  static const auto table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return t;
  }();
  std::size_t end = in.size();
  while (end > 0 && in[end - 1] == '=') --end;
  out.resize(end / 4 * 3 + 3);
  std::size_t o = 0, i = 0;
  // Four characters to three bytes at a time, one test for all four.
  const auto* u = reinterpret_cast<const unsigned char*>(in.data());
  char* w = &out[0];
  for (; i + 4 <= end; i += 4, o += 3) {
    const int a = table[u[i]], b = table[u[i + 1]], c = table[u[i + 2]], d = table[u[i + 3]];
    if ((a | b | c | d) < 0) return false;
    const auto v = static_cast<uint32_t>(a << 18 | b << 12 | c << 6 | d);
    w[o] = static_cast<char>(v >> 16);
    w[o + 1] = static_cast<char>(v >> 8 & 0xFF);
    w[o + 2] = static_cast<char>(v & 0xFF);
  }
  uint32_t acc = 0;
  int bits = 0;
  for (; i < end; ++i) {
    const int v = table[static_cast<unsigned char>(in[i])];
    if (v < 0) return false;
    acc = acc << 6 | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  out.resize(o);
  return true;
}

// j[key] as a list of (step, JSON path): the items of a "Sequence" (in j[key][list_key]), or the
// step itself; nothing when absent.
ATTNKIT_FOR_SIZE Status flat_steps(const json& j, const char* key, const char* list_key, std::vector<std::pair<const json*, std::string>>& out) {
  const json* n = field(j, key);
  if (!n) return Status::success();
  if (type_of(*n) != "Sequence") return out.push_back({n, key}), Status::success();
  const std::string where = std::string(key) + "." + list_key;
  const json* list = field(*n, list_key);
  if (!list || !list->is_array()) return bad(where, where + " must be an array");
  for (std::size_t i = 0; i < list->size(); ++i) out.push_back({&(*list)[i], where + "[" + std::to_string(i) + "]"});
  return Status::success();
}

// The normalizer and pre-tokenizer of a SentencePiece-style tokenizer.json -> Pipeline. Steps must
// come in the order the pipeline runs them (the order converters write them).
// `before`: the steps web/tokenizer.js runs first; `general`: pre-tokenizer steps the Tokenizer's
// text steps run (their Split patterns compiled into `patterns`).
ATTNKIT_FOR_SIZE Status sentencepiece_steps(const json& j, std::string_view given, SentencePiece::Pipeline& p, std::string& charsmap,
                          json& before, json& general, std::vector<Regex>& patterns) {
  const char* const kSpace = "\xE2\x96\x81";
  int stage = 0;  // 1 Precompiled, 2 Replace " {2,}", 3 Strip, 4 Prepend, 5 Replace " "
  std::vector<std::pair<const json*, std::string>> steps;
  Status s = flat_steps(j, "normalizer", "normalizers", steps);
  if (!s.ok()) return s;
  const char* supported = "(supported for SentencePiece models: NFD, NFKD, NFC, NFKC, Nmt, StripAccents, Lowercase and "
                          "Replace of a string, then Precompiled, Replace(\" {2,}\" -> \" \"), Strip, "
                          "Prepend(\"\xE2\x96\x81\" or \" \"), Replace(\" \" -> \"\xE2\x96\x81\"), in that order)";
  for (const auto& [step, where] : steps) {
    if (!step->is_object()) return bad(where, where + " must be an object");
    const std::string t = type_of(*step);
    int at = 0;
    // Before the library's own steps (ALBERT's Replace("``"), NFKD, StripAccents, Lowercase):
    // web/tokenizer.js runs them, keeping each character's source span, and hands C++ the result.
    const json* pattern = t == "Replace" ? field(*step, "pattern") : nullptr;
    const json* literal = pattern ? field(*pattern, "String") : nullptr;
    std::string replace_content;
    if (literal && literal->is_string()) {
      Status s = text_field(*step, "content", "", where, replace_content);
      if (!s.ok()) return s;
    }
    const bool space_to_meta = literal && literal->is_string() && literal->get<std::string>() == " " && replace_content == kSpace;
    if (stage == 0 && (t == "NFD" || t == "NFKD" || t == "NFC" || t == "NFKC" || t == "Nmt" || t == "StripAccents" || t == "Lowercase" ||
                       (literal && literal->is_string() && !literal->get<std::string>().empty() && !space_to_meta))) {
      if (t == "Replace") {
        before.push_back({{"type", "replace"}, {"pattern", *literal}, {"content", replace_content}});
      } else {
        json one = json::array();
        Status s = normalizer_steps(*step, where, one);
        if (!s.ok()) return s;
        for (auto& x : one) before.push_back(std::move(x));
      }
      continue;
    }
    if (t == "Precompiled") {
      std::string b64;
      Status s = text_field(*step, "precompiled_charsmap", "", where, b64);
      if (!s.ok()) return s;
      if (b64.empty() && !given.empty()) b64 = std::string(given);  // cut out of the text by web/tokenizer.js
      if (!base64_decode(b64, charsmap)) return bad(where + ".precompiled_charsmap", where + ".precompiled_charsmap is not base64");
      at = 1;
    } else if (t == "Replace") {
      const json* pat = field(*step, "pattern");
      std::string content;
      Status s = text_field(*step, "content", "", where, content);
      if (!s.ok()) return s;
      const json* str = pat ? field(*pat, "String") : nullptr;
      const json* re = pat ? field(*pat, "Regex") : nullptr;
      if (re && re->is_string() && re->get<std::string>() == " {2,}" && content == " ") {
        p.collapse_spaces = true, at = 2;
      } else if (str && str->is_string() && str->get<std::string>() == " " && content == kSpace) {
        p.replace_spaces = true, at = 5;
      } else {
        return bad(where, where + ": this Replace is not supported " + std::string(supported));
      }
    } else if (t == "Strip") {
      Status s = flag(*step, "left", true, where, p.strip_left);
      if (s.ok()) s = flag(*step, "right", true, where, p.strip_right);
      if (!s.ok()) return s;
      at = 3;
    } else if (t == "Prepend") {
      std::string prepend;
      Status s = text_field(*step, "prepend", "", where, prepend);
      if (!s.ok()) return s;
      // " " only with the Replace(" " -> "\u2581") after it (Helium's form).
      if (prepend != kSpace && prepend != " ") return bad(where + ".prepend", where + ".prepend must be \"\xE2\x96\x81\" or \" \"");
      p.prepend = prepend, at = 4;
    } else {
      return bad(where + ".type", where + " type \"" + t + "\" is not supported " + supported);
    }
    if (at <= stage) return bad(where, where + " comes out of order " + std::string(supported));
    stage = at;
  }
  if (p.prepend == " " && !p.replace_spaces) return bad("normalizer", "normalizer: Prepend(\" \") needs the Replace(\" \" -> \"\xE2\x96\x81\") after it");
  // Pre-tokenizer: the steps before Metaspace are the Tokenizer's text steps (`general`), except a
  // lone WhitespaceSplit (T5's and XLM-R's form), which the model's own pass runs; Metaspace last.
  steps.clear();
  s = flat_steps(j, "pre_tokenizer", "pretokenizers", steps);
  if (!s.ok()) return s;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& [step, where] = steps[i];
    if (!step->is_object()) return bad(where, where + " must be an object");
    const std::string t = type_of(*step);
    if (t != "Metaspace") {
      const std::size_t first = general.size();
      s = pre_tokenizer_steps(*step, where, general, patterns);
      if (!s.ok()) return s;
      // ByteLevel (here or in a nested Sequence) maps bytes to characters for byte-level BPE.
      for (std::size_t k = first; k < general.size(); ++k) {
        if (general[k]["type"] == "byteLevel") {
          return bad(where + ".type", where + ": ByteLevel is not supported for SentencePiece models (it maps bytes to "
                                              "characters for byte-level BPE)");
        }
      }
      continue;
    }
    if (i + 1 != steps.size()) return bad(where, where + ": Metaspace must be the last pre-tokenizer step");
    std::string replacement, scheme;
    bool prefix = true;
    s = text_field(*step, "replacement", kSpace, where, replacement);
    if (s.ok()) s = flag(*step, "add_prefix_space", true, where, prefix);
    if (s.ok()) s = text_field(*step, "prepend_scheme", prefix ? "always" : "never", where, scheme);
    if (s.ok()) s = flag(*step, "split", true, where, p.metaspace_split);
    if (!s.ok()) return s;
    if (replacement != kSpace) return bad(where + ".replacement", where + ".replacement must be \"\xE2\x96\x81\"");
    if (scheme != "always" && scheme != "first" && scheme != "never") {
      return bad(where + ".prepend_scheme", where + ".prepend_scheme must be \"always\", \"first\" or \"never\"");
    }
    p.metaspace = scheme == "never" ? 0 : scheme == "first" ? 1 : 2;
  }
  if (general.size() == 1 && general[0]["type"] == "whitespaceSplit") {
    p.whitespace_split = true;
    general.clear();
  }
  return Status::success();
}

// padding -> settings["paddingSide"] and settings["pad"].
ATTNKIT_FOR_SIZE Status padding_settings(const json& j, int32_t size, json& settings) {
  Status s;
  if (const json* pad = field(j, "padding")) {
    if (!pad->is_object()) return bad("padding", "padding must be an object or null");
    std::string direction;
    s = text_field(*pad, "direction", "Right", "padding", direction);
    if (s.ok() && direction != "Left" && direction != "Right") s = bad("padding.direction", "padding.direction must be \"Left\" or \"Right\"");
    if (!s.ok()) return s;
    settings["paddingSide"] = direction == "Left" ? "left" : "right";
    if (const json* pid = field(*pad, "pad_id")) {
      int32_t id;
      int64_t type_id;
      s = token_id(*pid, size, "padding.pad_id", id);
      if (s.ok()) s = int_field(*pad, "pad_type_id", 0, 0, kMaxTypeId, "padding", type_id);
      if (!s.ok()) return s;
      settings["pad"] = {{"id", id}, {"typeId", type_id}};
    }
  }
  return Status::success();
}

// FNV-1a over bytes, continuing from state h: WordPiece hashes all the pieces from a position in
// one pass.
constexpr uint64_t kFnvBasis = 14695981039346656037ull;
ATTNKIT_FOR_SIZE uint64_t fnv1a(uint64_t h, const char* bytes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * 1099511628211ull;
  return h;
}

// A set of hashes by open addressing (0 marks an empty slot, so hashes are stored with bit 0 set),
// sized for `count` of them; `has` may say yes to a string that only shares a hash.
ATTNKIT_FOR_SIZE void hash_set_init(std::vector<uint64_t>& set, std::size_t count) {
  std::size_t size = 2;
  while (size < 2 * count) size *= 2;
  set = std::vector<uint64_t>(size);
}
ATTNKIT_FOR_SIZE void hash_set_insert(std::vector<uint64_t>& set, uint64_t h) {
  h |= 1;
  std::size_t slot = h & (set.size() - 1);
  while (set[slot] != 0 && set[slot] != h) slot = (slot + 1) & (set.size() - 1);
  set[slot] = h;
}
bool hash_set_has(const std::vector<uint64_t>& set, uint64_t h) {
  h |= 1;
  for (std::size_t slot = h & (set.size() - 1); set[slot] != 0; slot = (slot + 1) & (set.size() - 1))
    if (set[slot] == h) return true;
  return false;
}

}  // namespace

Status Tokenizer::finish(TokenizerModel model, nlohmann::json& settings) {
  model_ = model;
  int32_t max_id = -1;
  for (const auto& [t, id] : vocab_) max_id = std::max(max_id, id);
  const int64_t limit = id_limit(vocab_.size());
  if (max_id >= limit) {
    return bad("vocab", "the vocabulary has " + std::to_string(vocab_.size()) + " tokens but uses id " +
                            std::to_string(max_id) + "; ids must be below 2 x tokens + " + std::to_string(kIdSlack) +
                            " = " + std::to_string(limit));
  }
  tokens_.assign(static_cast<std::size_t>(max_id + 1), std::string());
  for (const auto& [t, id] : vocab_) tokens_[id] = t;
  if (model == TokenizerModel::wordpiece) hash_tokens();
  settings["unkId"] = unk_;
  settings["continuingSubwordPrefix"] = model == TokenizerModel::wordpiece ? prefix_ : std::string();
  settings["vocab"] = tokens_;
  settings_ = settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  plan_text_steps(settings);
  return Status::success();
}

Status Tokenizer::split_matches(int32_t program, const uint16_t* text, std::size_t n, std::vector<int32_t>& out) const {
  if (program < 0 || static_cast<std::size_t>(program) >= patterns_.size()) {
    return bad("program", "program " + std::to_string(program) + " is not one of this tokenizer's " +
                              std::to_string(patterns_.size()) + " Split patterns");
  }
  // UTF-16 units -> code points, and where each starts.
  std::vector<uint32_t> cps;
  std::vector<int32_t> unit;
  cps.reserve(n);
  unit.reserve(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    uint32_t c = text[i];
    unit.push_back(static_cast<int32_t>(i));
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && text[i + 1] >= 0xDC00 && text[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (text[i + 1] - 0xDC00);
      ++i;
    }
    cps.push_back(c);
  }
  unit.push_back(static_cast<int32_t>(n));
  const std::size_t before = out.size();
  Status s = patterns_[program].find_all(cps.data(), cps.size(), out);
  if (!s.ok()) return s;
  for (std::size_t k = before; k < out.size(); ++k) out[k] = unit[out[k]];
  return Status::success();
}

Status Tokenizer::from_tokenizer_json(const char* text, std::size_t length, std::unique_ptr<Tokenizer>& out,
                                     std::string_view charsmap) {
  json j;
  JsonPairs vocab_pairs;
  vocab_pairs.path = {"model", "vocab"};
  // The vocabulary is read straight from the text when it can be (VocabScan); nlohmann then
  // parses the rest with [] or {} in its place.
  SentencePiece::Parts preread;
  std::string rest;
  std::size_t vb = 0, ve = 0;
  const VocabScan::Kind kind = VocabScan(text, length).run(vb, ve, preread.pieces, preread.scores, vocab_pairs.items);
  const bool scanned = kind != VocabScan::none;
  if (scanned) {
    rest.reserve(length - (ve - vb) + 2);
    rest.append(text, vb).append(kind == VocabScan::unigram ? "[]" : "{}").append(text + ve, length - ve);
    vocab_pairs.found = kind == VocabScan::object;  // the DOM keeps {} for it
  } else {
    vocab_pairs.items.clear();
  }
  Status s = scanned ? parse_json(rest.data(), rest.size(), "tokenizer.json", j, &vocab_pairs)
                     : parse_json(text, length, "tokenizer.json", j, &vocab_pairs);
  if (!s.ok()) return s;
  const bool unigram = [&] {
    const json* m = field(j, "model");
    return m && m->is_object() && type_of(*m) == "Unigram";
  }();
  if (kind == VocabScan::unigram && !unigram) {  // the array was some other model's: read the file as it is
    j = json();
    vocab_pairs = JsonPairs();
    vocab_pairs.path = {"model", "vocab"};
    s = parse_json(text, length, "tokenizer.json", j, &vocab_pairs);
    if (!s.ok()) return s;
  }
  const json* m = field(j, "model");
  if (!m || !m->is_object()) return bad("model", "tokenizer.json must be an object with a \"model\"");
  for (const auto& [key, list_key] : {std::pair{"normalizer", "normalizers"}, std::pair{"pre_tokenizer", "pretokenizers"},
                                      std::pair{"decoder", "decoders"}, std::pair{"post_processor", "processors"}}) {
    std::size_t count = 0;
    if (const json* step = field(j, key)) s = count_steps(*step, list_key, key, count);
    if (!s.ok()) return s;
  }
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  std::string type = type_of(*m);
  if (type.empty() && field(*m, "merges")) type = "BPE";  // older files omit the type
  if (type.empty() && field(*m, "continuing_subword_prefix")) type = "WordPiece";
  bool byte_fallback_model = false;
  if (type == "BPE") {
    s = flag(*m, "byte_fallback", false, "model", byte_fallback_model);
    if (!s.ok()) return s;
  }
  if (type == "Unigram" || byte_fallback_model) {
    return from_sentencepiece_json(j, *m, type, charsmap, &vocab_pairs, kind == VocabScan::unigram && unigram ? &preread : nullptr,
                                   out);
  }
  if (type != "WordPiece" && type != "BPE") {
    return bad("model.type", "model type \"" + type + "\" is not supported (supported: WordPiece, BPE, Unigram)");
  }
  const json* vocab = field(*m, "vocab");
  s = read_vocab_object(vocab ? *vocab : json(), &vocab_pairs, "model.vocab", t->vocab_);
  if (!s.ok()) return s;
  json settings = json::object();
  auto unk_of = [&](const std::string& dflt) -> Status {
    const json* u = field(*m, "unk_token");
    if (!u && dflt.empty()) return Status::success();
    if (u && !u->is_string()) return bad("model.unk_token", "model.unk_token must be a string or null");
    const std::string name = u ? u->get<std::string>() : dflt;
    const auto it = t->vocab_.find(name);
    if (it == t->vocab_.end()) return bad("model.unk_token", "model.unk_token '" + name + "' is not in the vocabulary");
    t->unk_ = it->second;
    return Status::success();
  };
  if (type == "WordPiece") {
    s = unk_of("[UNK]");
    int64_t max_chars = 100;
    if (s.ok()) s = text_field(*m, "continuing_subword_prefix", "##", "model", t->prefix_);
    if (s.ok()) s = int_field(*m, "max_input_chars_per_word", 100, 0, 4294967295LL, "model", max_chars);
    if (!s.ok()) return s;
    t->max_chars_ = static_cast<std::size_t>(max_chars);
    settings["model"] = "wordpiece";
  } else {
    s = unsupported_bpe_options(*m);
    if (s.ok()) s = flag(*m, "fuse_unk", false, "model", t->fuse_unk_);
    if (s.ok()) s = flag(*m, "ignore_merges", false, "model", t->ignore_merges_);
    if (s.ok()) s = unk_of("");
    if (!s.ok()) return s;
    const json* merges = field(*m, "merges");
    if (merges && !merges->is_array()) return bad("model.merges", "model.merges must be an array");
    if (merges) {
      t->merges_.reserve(merges->size());
      std::string left, right;
      for (std::size_t i = 0; i < merges->size() && s.ok(); ++i) {
        s = merge_sides((*merges)[i], left, right)
                ? t->add_merge(left, right, i, "model.merges")
                : bad("model.merges", "merge " + std::to_string(i) + " must be \"left right\" or [left, right]");
      }
      if (!s.ok()) return s;
    }
    settings["model"] = "bpe";
  }
  const int64_t limit = id_limit(t->vocab_.size() + (j.contains("added_tokens") && j["added_tokens"].is_array() ? j["added_tokens"].size() : 0));
  settings["addedTokens"] = added_tokens_of(j.value("added_tokens", json()), limit, s);
  if (!s.ok()) return s;
  for (const auto& a : settings["addedTokens"]) t->vocab_[a["content"].get<std::string>()] = a["id"].get<int32_t>();
  // Ids the templates and padding emit must have a row: the vocabulary's size is settled now.
  int32_t size = 0;
  for (const auto& [tok, id] : t->vocab_) size = std::max(size, id + 1);
  json steps = json::array();
  s = normalizer_steps(j.value("normalizer", json()), "normalizer", steps);
  if (!s.ok()) return s;
  settings["normalizer"] = steps;
  steps = json::array();
  s = pre_tokenizer_steps(j.value("pre_tokenizer", json()), "pre_tokenizer", steps, t->patterns_);
  if (!s.ok()) return s;
  settings["preTokenizer"] = steps;
  // The decoder: null when the file has none (decode then joins the tokens with spaces, as
  // Hugging Face does).
  steps = json::array();
  s = decoder_steps(j.value("decoder", json()), "decoder", steps);
  if (!s.ok()) return s;
  settings["decoder"] = steps;
  json tmpl;
  s = post_template(j.value("post_processor", json()), t->vocab_, size, "post_processor", tmpl);
  if (!s.ok()) return s;
  settings["template"] = tmpl;
  s = padding_settings(j, size, settings);
  if (!s.ok()) return s;
  s = t->finish(type == "BPE" ? TokenizerModel::bpe : TokenizerModel::wordpiece, settings);
  if (!s.ok()) return s;
  out = std::move(t);
  return s;
}

Status Tokenizer::from_sentencepiece_json(const json& j, const json& m, const std::string& type, std::string_view charsmap,
                                          const JsonPairs* pairs, SentencePiece::Parts* preread,
                                          std::unique_ptr<Tokenizer>& out) {
  SentencePiece::Parts parts;
  Status s;
  const json* v = field(m, "vocab");
  if (type == "Unigram") {
    parts.algorithm = SentencePiece::Algorithm::unigram;
    if (!v || !v->is_array()) return bad("model.vocab", "model.vocab must be an array of [token, score]");
    const std::size_t count = preread ? preread->pieces.size() : v->size();
    if (count >= static_cast<std::size_t>(kMaxId)) return bad("model.vocab", "model.vocab has more than 2^24 tokens");
    if (preread) {  // read from the text already (VocabScan), with the checks below
      parts.pieces = std::move(preread->pieces);
      parts.scores = std::move(preread->scores);
    }
    parts.pieces.reserve(count);
    parts.scores.reserve(count);
    for (std::size_t i = 0; !preread && i < v->size(); ++i) {
      const json& e = (*v)[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
        return bad("model.vocab[" + std::to_string(i) + "]", "model.vocab[" + std::to_string(i) + "] must be [token, score]");
      }
      parts.pieces.push_back(e[0].get<std::string>());
      const double score = e[1].get<double>();
      if (!(score == score) || score > 3.4e38 || score < -3.4e38) return bad("model.vocab[" + std::to_string(i) + "]", "a score must be a finite float32");
      parts.scores.push_back(static_cast<float>(score));
    }
    parts.types.assign(parts.pieces.size(), PieceType::normal);
    int64_t unk = -1;
    s = int_field(m, "unk_id", -1, 0, static_cast<int64_t>(parts.pieces.size()) - 1, "model", unk);
    if (!s.ok()) return s;
    if (unk >= 0) parts.types[static_cast<std::size_t>(unk)] = PieceType::unknown;
  } else {
    parts.algorithm = SentencePiece::Algorithm::bpe;
    bool ignore_merges = false;
    s = unsupported_bpe_options(m);
    if (s.ok()) s = flag(m, "ignore_merges", false, "model", ignore_merges);
    if (!s.ok()) return s;
    if (ignore_merges) return bad("model.ignore_merges", "model.ignore_merges is not supported with byte_fallback");
    std::unordered_map<std::string, int32_t> map;
    s = read_vocab_object(v ? *v : json(), pairs, "model.vocab", map);
    if (!s.ok()) return s;
    parts.pieces.assign(map.size(), std::string());
    for (auto& [piece, id] : map) {
      if (static_cast<std::size_t>(id) >= map.size() || !parts.pieces[id].empty()) {
        return bad("model.vocab", "model.vocab's ids must be 0 .. " + std::to_string(map.size() - 1) + " each once (token '" + piece + "' has " + std::to_string(id) + ")");
      }
      parts.pieces[id] = piece;
    }
    parts.types.assign(parts.pieces.size(), PieceType::normal);
    if (const json* u = field(m, "unk_token")) {
      if (!u->is_string() || !map.count(u->get<std::string>())) return bad("model.unk_token", "model.unk_token must name a token");
      parts.types[map.at(u->get<std::string>())] = PieceType::unknown;
    }
    const json* merges = field(m, "merges");
    if (merges && !merges->is_array()) return bad("model.merges", "model.merges must be an array");
    std::string left, right;
    for (std::size_t i = 0; merges && i < merges->size(); ++i) {
      const bool shaped = merge_sides((*merges)[i], left, right);
      const auto a = map.find(left), b = map.find(right);
      if (!shaped || a == map.end() || b == map.end()) {
        return bad("model.merges", "model.merges[" + std::to_string(i) + "] must be \"left right\" or [left, right] of two tokens");
      }
      parts.merges.push_back({a->second, b->second});
    }
  }
  parts.scores.resize(parts.pieces.size(), 0.f);
  s = flag(m, "byte_fallback", false, "model", parts.byte_fallback);
  if (!s.ok()) return s;
  if (parts.byte_fallback) {
    for (std::size_t i = 0; i < parts.pieces.size(); ++i) {
      if (SentencePiece::byte_of_piece(parts.pieces[i]) >= 0 && parts.types[i] == PieceType::normal) parts.types[i] = PieceType::byte;
    }
  }
  // Added tokens are matched in the text before the model (web/tokenizer.js): in the model they are
  // control pieces, never produced; those past the vocabulary extend it.
  const std::size_t base = parts.pieces.size();
  json settings = json::object();
  const json* added = field(j, "added_tokens");
  settings["addedTokens"] = added_tokens_of(added ? *added : json(), id_limit(base + (added && added->is_array() ? added->size() : 0)), s);
  if (!s.ok()) return s;
  for (const auto& a : settings["addedTokens"]) {
    const auto id = a["id"].get<std::size_t>();
    const std::string& content = a["content"].get_ref<const std::string&>();
    if (id >= parts.pieces.size()) {
      parts.pieces.resize(id + 1);
      parts.types.resize(id + 1, PieceType::control);
      parts.scores.resize(id + 1, 0.f);
    }
    if (parts.pieces[id].empty()) parts.pieces[id] = content;
    if (parts.pieces[id] != content) {
      return bad("added_tokens", "added token '" + content + "' has id " + std::to_string(id) + ", which the model calls '" + parts.pieces[id] + "'");
    }
    if (parts.types[id] != PieceType::unknown) parts.types[id] = PieceType::control;
  }
  for (std::size_t i = base; i < parts.pieces.size(); ++i) {
    if (parts.pieces[i].empty()) return bad("added_tokens", "the ids between the vocabulary and the added tokens must all be used (id " + std::to_string(i) + " is not)");
  }
  json before = json::array(), general = json::array();
  std::vector<Regex> patterns;
  s = sentencepiece_steps(j, charsmap, parts.pipeline, parts.charsmap, before, general, patterns);
  if (!s.ok()) return s;
  std::unordered_map<std::string, int32_t> names;  // for the template's special tokens
  for (const auto& a : settings["addedTokens"]) names[a["content"].get<std::string>()] = a["id"].get<int32_t>();
  const auto size = static_cast<int32_t>(parts.pieces.size());
  json tmpl;
  s = post_template(j.value("post_processor", json()), names, size, "post_processor", tmpl);
  if (s.ok()) s = padding_settings(j, size, settings);
  if (!s.ok()) return s;
  json vocab = json::array();
  for (const auto& p : parts.pieces) vocab.push_back(p);
  int32_t unk = -1;
  for (std::size_t i = 0; i < parts.types.size(); ++i)
    if (parts.types[i] == PieceType::unknown) unk = static_cast<int32_t>(i);
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  t->patterns_ = std::move(patterns);
  if (!general.empty()) {
    // The model calls back into its owner's text steps (the Tokenizer outlives its model).
    if (!t->plan_pre_tokenizer(general)) return bad("pre_tokenizer", "pre_tokenizer: a step attnkit cannot run here");
    const Tokenizer* self = t.get();
    parts.pipeline.split = [self](std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& words) {
      return self->split_words(text, words);
    };
  }
  s = SentencePiece::from_parts(std::move(parts), t->sp_);
  if (!s.ok()) return s;
  t->model_ = TokenizerModel::sentencepiece;
  t->unk_ = unk;
  settings["model"] = "sentencepiece";
  settings["algorithm"] = type == "Unigram" ? "unigram" : "bpe";
  settings["template"] = tmpl;
  settings["normalizer"] = json::array();
  settings["preNormalizer"] = std::move(before);  // run by web/tokenizer.js before the text reaches C++
  settings["preTokenizer"] = json::array();
  settings["unkId"] = unk;
  settings["continuingSubwordPrefix"] = "";
  settings["vocab"] = std::move(vocab);
  t->settings_ = settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out = std::move(t);
  return Status::success();
}

Status Tokenizer::add_merge(const std::string& left, const std::string& right, std::size_t rank, const char* where) {
  // As tokenizers' BPE builder: both sides and their concatenation must be tokens.
  const auto a = vocab_.find(left), b = vocab_.find(right), ab = vocab_.find(left + right);
  const char* missing = a == vocab_.end() ? "left" : b == vocab_.end() ? "right" : ab == vocab_.end() ? "merged" : nullptr;
  if (missing) {
    return bad(where, std::string(where) + ": merge " + std::to_string(rank) + " (\"" + left + " " + right + "\"): its " +
                          missing + " token is not in the vocabulary");
  }
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(a->second)) << 32 | static_cast<uint32_t>(b->second);
  merges_.emplace(key, std::make_pair(static_cast<int32_t>(std::min<std::size_t>(rank, INT32_MAX)), ab->second));
  return Status::success();
}

Status Tokenizer::add_merge_line(const std::string& line, std::size_t rank, const char* where) {
  std::string left, right;
  if (!split_merge(line, left, right)) {
    return bad(where, std::string(where) + ": merge " + std::to_string(rank) + " (\"" + line + "\") is not \"left right\"");
  }
  return add_merge(left, right, rank, where);
}

Status Tokenizer::from_vocab_txt(const char* text, std::size_t length, bool lowercase, std::unique_ptr<Tokenizer>& out) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  std::size_t line = 0, start = 0;
  for (std::size_t i = 0; i <= length; ++i) {
    if (i == length || text[i] == '\n') {
      std::size_t end = i;
      if (end > start && text[end - 1] == '\r') --end;
      // A repeated line takes the later id, as transformers' load_vocab does.
      if (i < length || end > start) t->vocab_[std::string(text + start, end - start)] = static_cast<int32_t>(line++);
      start = i + 1;
    }
  }
  if (line >= static_cast<std::size_t>(kMaxId)) return bad("vocab", "vocab.txt has more than 2^24 lines");
  const auto unk = t->vocab_.find("[UNK]");
  if (unk == t->vocab_.end()) return bad("vocab", "vocab.txt has no [UNK] token");
  t->unk_ = unk->second;
  json added = json::array();
  for (const char* sp : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    const auto it = t->vocab_.find(sp);
    if (it != t->vocab_.end()) added.push_back(special_token(it->second, sp));
  }
  json settings = {{"model", "wordpiece"},
                   {"normalizer", {{{"type", "bert"}, {"cleanText", true}, {"handleChineseChars", true},
                                    {"stripAccents", nullptr}, {"lowercase", lowercase}}}},
                   {"preTokenizer", {{{"type", "bert"}}}},
                   {"template", bert_template(t->vocab_)},
                   {"addedTokens", added}};
  if (t->vocab_.count("[PAD]")) settings["pad"] = {{"id", t->vocab_.at("[PAD]")}, {"typeId", 0}};
  Status s = t->finish(TokenizerModel::wordpiece, settings);
  if (!s.ok()) return s;
  out = std::move(t);
  return s;
}

Status Tokenizer::from_gpt2_files(const char* encoder_json, std::size_t encoder_length, const char* vocab_bpe,
                                  std::size_t vocab_length, std::unique_ptr<Tokenizer>& out) {
  json enc;
  JsonPairs root;  // the whole file is the {token: id} object
  Status s = parse_json(encoder_json, encoder_length, "encoder.json", enc, &root);
  if (!s.ok()) return s;
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  s = read_vocab_object(enc, &root, "encoder.json", t->vocab_);
  if (!s.ok()) return s;
  enc = json();  // the parsed tree is no longer needed
  std::size_t start = 0, rank = 0;
  for (std::size_t i = 0; i <= vocab_length && s.ok(); ++i) {
    if (i == vocab_length || vocab_bpe[i] == '\n') {
      std::string line(vocab_bpe + start, i - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      start = i + 1;
      if (line.empty() || line.rfind("#version", 0) == 0) continue;
      s = t->add_merge_line(line, rank++, "vocab.bpe");
    }
  }
  if (!s.ok()) return s;  // named "vocab.bpe" by add_merge_line
  json added = json::array();
  const auto eot = t->vocab_.find("<|endoftext|>");
  if (eot != t->vocab_.end()) added.push_back(special_token(eot->second, "<|endoftext|>"));
  json settings = {{"model", "bpe"},
                   {"normalizer", json::array()},
                   {"preTokenizer", {{{"type", "byteLevel"}, {"addPrefixSpace", false}, {"useRegex", true}}}},
                   {"template", nullptr},
                   {"addedTokens", added}};
  s = t->finish(TokenizerModel::bpe, settings);
  if (!s.ok()) return s;
  out = std::move(t);
  return s;
}

Status Tokenizer::remember(const std::string& word, int32_t index, std::vector<std::pair<int32_t, int32_t>>&& pieces,
                           std::vector<int32_t>& out) {
  for (const auto& [id, end] : pieces) out.insert(out.end(), {id, index, end});
  if (word.size() > kCacheWordBytes) return Status::success();
  if (cache_bytes_ > kCacheBytes) cache_.clear(), cache_bytes_ = 0;  // bounds memory on streams of distinct words
  cache_bytes_ += word.size() + pieces.size() * sizeof(pieces[0]) + 64;
  cache_.emplace(word, std::move(pieces));
  return Status::success();
}

ATTNKIT_FOR_SIZE void Tokenizer::hash_tokens() {
  std::size_t long_bytes = 0;
  for (const auto& [t, id] : vocab_) {
    longest_token_ = std::max(longest_token_, t.size());
    if (t.size() > kShortPiece) long_bytes += t.size() - kShortPiece;
  }
  hash_set_init(token_hashes_, vocab_.size());
  hash_set_init(long_prefix_hashes_, long_bytes);
  for (const auto& [t, id] : vocab_) {
    uint64_t h = kFnvBasis;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i >= kShortPiece) hash_set_insert(long_prefix_hashes_, h);  // t's first i bytes
      h = fnv1a(h, t.data() + i, 1);
    }
    hash_set_insert(token_hashes_, h);
  }
  prefix_hash_ = fnv1a(kFnvBasis, prefix_.data(), prefix_.size());
}

Status Tokenizer::wordpiece(const std::string& word, int32_t index, std::vector<int32_t>& out) {
  // Words repeat (Zipf): the pieces of short words are cached as BPE's are.
  auto cached = cache_.find(word);
  if (cached == cache_.end()) {
    // Hugging Face's greedy longest match first, the continuing prefix before every piece but the
    // first; a word with a start where no token is, or of more than max_chars_ characters, is one
    // unknown token. From each start, one pass hashes the candidates (pieces ending on a
    // character; see kShortPiece), then the longest whose hash is a token's is looked up.
    std::size_t chars = 0;
    for (std::size_t i = 0; i < word.size(); i += utf8::lead_length(static_cast<unsigned char>(word[i]))) ++chars;
    std::vector<std::pair<int32_t, int32_t>> pieces;
    std::vector<std::pair<std::size_t, uint64_t>> candidates;  // (end, hash of the piece up to it)
    std::string piece;
    bool known = chars <= max_chars_;
    for (std::size_t start = 0; known && start < word.size();) {
      const std::string_view before = start > 0 ? std::string_view(prefix_) : std::string_view();
      uint64_t h = start > 0 ? prefix_hash_ : kFnvBasis;
      candidates.clear();
      for (std::size_t i = start; i < word.size();) {
        const std::size_t n = std::min(utf8::lead_length(static_cast<unsigned char>(word[i])), word.size() - i);
        h = fnv1a(h, word.data() + i, n);
        i += n;
        candidates.emplace_back(i, h);
        const std::size_t length = before.size() + (i - start);
        if (length >= longest_token_ || (length >= kShortPiece && !hash_set_has(long_prefix_hashes_, h))) break;
      }
      known = false;
      for (auto c = candidates.rbegin(); c != candidates.rend() && !known; ++c) {
        if (!hash_set_has(token_hashes_, c->second)) continue;
        piece.assign(before).append(word, start, c->first - start);
        const auto it = vocab_.find(piece);
        if (it == vocab_.end()) continue;  // another string with the same hash
        pieces.emplace_back(it->second, static_cast<int32_t>(c->first));
        start = c->first;
        known = true;
      }
    }
    if (!known) pieces.assign(1, {unk_, static_cast<int32_t>(word.size())});
    return remember(word, index, std::move(pieces), out);
  }
  for (const auto& [id, end] : cached->second) out.insert(out.end(), {id, index, end});
  return Status::success();
}

Status Tokenizer::bpe(const std::string& word, int32_t index, std::vector<int32_t>& out) {
  if (ignore_merges_) {  // as tokenizers: a whole word in the vocabulary skips the merges
    const auto it = vocab_.find(word);
    if (it != vocab_.end()) {
      out.insert(out.end(), {it->second, index, static_cast<int32_t>(word.size())});
      return Status::success();
    }
  }
  auto cached = cache_.find(word);
  if (cached == cache_.end()) {
    // Symbols as a linked list of (id, byte end); candidate merges in a min-heap by (rank, left
    // symbol), so a word of n characters costs O(n log n), as in tokenizers' Word::merge_all.
    struct Symbol {
      int32_t id, end, prev, next;  // prev/next: -1 at the ends; id -1: merged away
    };
    std::vector<Symbol> sym;
    sym.reserve(word.size());
    for (std::size_t i = 0; i < word.size();) {
      const std::size_t n = std::min(utf8::lead_length(static_cast<unsigned char>(word[i])), word.size() - i);
      const auto it = vocab_.find(word.substr(i, n));
      int32_t id = it == vocab_.end() ? unk_ : it->second;
      i += n;
      // Unknown and no unk_token: dropped before the merges, as Hugging Face's merge_word does (its
      // neighbours may then merge; transformers.js drops it after the merges instead).
      if (id < 0) continue;
      if (fuse_unk_ && it == vocab_.end() && !sym.empty() && sym.back().id == unk_) {
        sym.back().end = static_cast<int32_t>(i);
        continue;
      }
      const int32_t k = static_cast<int32_t>(sym.size());
      sym.push_back({id, static_cast<int32_t>(i), k - 1, -1});
      if (k > 0) sym[k - 1].next = k;
    }
    using Candidate = std::pair<int64_t, int32_t>;  // (rank, left symbol)
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
    auto rank_of = [&](int32_t l) -> int64_t {
      const int32_t r = sym[l].next;
      if (r < 0) return -1;
      const auto it = merges_.find(static_cast<uint64_t>(static_cast<uint32_t>(sym[l].id)) << 32 | static_cast<uint32_t>(sym[r].id));
      return it == merges_.end() ? -1 : it->second.first;
    };
    for (int32_t k = 0; k + 1 < static_cast<int32_t>(sym.size()); ++k)
      if (const int64_t r = rank_of(k); r >= 0) heap.push({r, k});
    while (!heap.empty()) {
      const auto [rank, l] = heap.top();
      heap.pop();
      if (sym[l].id < 0 || rank_of(l) != rank) continue;  // stale: a side was merged since
      const int32_t r = sym[l].next;
      const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(sym[l].id)) << 32 | static_cast<uint32_t>(sym[r].id);
      sym[l].id = merges_.at(key).second;
      sym[l].end = sym[r].end;
      sym[l].next = sym[r].next;
      if (sym[r].next >= 0) sym[sym[r].next].prev = l;
      sym[r].id = -1;
      if (sym[l].prev >= 0)
        if (const int64_t pr = rank_of(sym[l].prev); pr >= 0) heap.push({pr, sym[l].prev});
      if (const int64_t nr = rank_of(l); nr >= 0) heap.push({nr, l});
    }
    std::vector<std::pair<int32_t, int32_t>> pieces;
    for (int32_t k = sym.empty() ? -1 : 0; k >= 0; k = sym[k].next) pieces.emplace_back(sym[k].id, sym[k].end);
    return remember(word, index, std::move(pieces), out);
  }
  for (const auto& [id, end] : cached->second) out.insert(out.end(), {id, index, end});
  return Status::success();
}

Status Tokenizer::encode(const char* words, std::size_t length, const int32_t* ends, std::size_t count,
                         std::vector<int32_t>& out) {
  if (sp_) return bad("words", "a SentencePiece tokenizer encodes whole texts (sentencepiece()->encode), not words");
  int32_t start = 0;
  std::string word;
  for (std::size_t i = 0; i < count; ++i) {
    if (ends[i] < start || static_cast<std::size_t>(ends[i]) > length) {
      return bad("words", "word ends must not decrease and stay within the " + std::to_string(length) + " bytes");
    }
    word.assign(words + start, static_cast<std::size_t>(ends[i] - start));
    start = ends[i];
    if (word.empty()) continue;
    Status s = model_ == TokenizerModel::bpe ? bpe(word, static_cast<int32_t>(i), out)
                                             : wordpiece(word, static_cast<int32_t>(i), out);
    if (!s.ok()) return s;
  }
  return Status::success();
}

}  // namespace attnkit

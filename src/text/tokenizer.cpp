// The Tokenizer's construction and dispatch: tokenizer.json read (the vocabulary straight from the
// text, the rest through nlohmann), the typed field readers, the vocabulary, added tokens and
// padding, and words to the model's encode. The readers of each kind of step, the models and the
// other file forms are in their own files (tokenizer_json.hpp lists them).
#include "attnkit/text/tokenizer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include <nlohmann/json.hpp>

#include "attnkit/formats/safetensors.hpp"  // check_json_text
#include "attnkit/text/utf8.hpp"

#include "tokenizer_json.hpp"

namespace attnkit {

using namespace detail;

namespace detail {

// The files are untrusted: every field is type-checked here before it is read (nlohmann's get<>
// and value() throw on a wrong type, and a throw reaches JavaScript as a bare number).

Status bad(const std::string& where, const std::string& message) {
  return Status::error(Code::invalid_argument, where, message);
}

}  // namespace detail

namespace {

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

}  // namespace

namespace detail {

Status parse_json(const char* text, std::size_t length, const char* what, json& out, JsonPairs* pairs) {
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

ATTNKIT_FOR_SIZE Status known_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (const auto& item : j.items()) {
    bool known = item.key() == "type";
    for (const char* k : keys) known = known || item.key() == k;
    if (!known) return bad(where + "." + item.key(), where + ": unknown key \"" + item.key() + "\"");
  }
  return Status::success();
}

}  // namespace detail

namespace {

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

}  // namespace

namespace detail {

// An id the tokenizer may emit: an integer in [0, vocab_size).
ATTNKIT_FOR_SIZE Status token_id(const json& v, int64_t vocab_size, const std::string& where, int32_t& out) {
  // (an unsigned value above 2^63 reads as a negative int64)
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size) {
    return bad(where, where + " must be a token id in [0, " + std::to_string(vocab_size) + "), got " + v.dump());
  }
  out = static_cast<int32_t>(v.get<int64_t>());
  return Status::success();
}

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

// The largest id a vocabulary of `count` entries may use (see Tokenizer::kIdSlack).
int64_t id_limit(std::size_t count) { return std::min<int64_t>(kMaxId, 2 * static_cast<int64_t>(count) + Tokenizer::kIdSlack); }

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

}  // namespace detail

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

Status Tokenizer::remember(const std::string& word, int32_t index, std::vector<std::pair<int32_t, int32_t>>&& pieces,
                           std::vector<int32_t>& out) {
  for (const auto& [id, end] : pieces) out.insert(out.end(), {id, index, end});
  if (word.size() > kCacheWordBytes) return Status::success();
  if (cache_bytes_ > kCacheBytes) cache_.clear(), cache_bytes_ = 0;  // bounds memory on streams of distinct words
  cache_bytes_ += word.size() + pieces.size() * sizeof(pieces[0]) + 64;
  cache_.emplace(word, std::move(pieces));
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

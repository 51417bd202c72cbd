#include "attnkit/tokenizer.hpp"

#include <algorithm>
#include <limits>
#include <new>

#include <nlohmann/json.hpp>

#include "attnkit/safetensors.hpp"  // json_depth, kMaxJsonDepth

namespace attnkit {

namespace {

using json = nlohmann::json;

Status bad(const std::string& where, const std::string& message) {
  return Status::error(Code::invalid_argument, where, message);
}

// Byte length of the UTF-8 sequence starting with byte c (1 for stray continuation bytes, so
// that malformed input still advances).
std::size_t utf8_length(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

Status parse_json(const char* text, std::size_t length, const char* what, json& out) {
  if (json_depth(text, length, kMaxJsonDepth) > kMaxJsonDepth) {
    return bad(what, std::string(what) + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  out = json::parse(text, text + length, nullptr, false);
  if (out.is_discarded()) return bad(what, std::string(what) + " is not valid JSON");
  return Status::success();
}

// A boolean field (absent = dflt; null = dflt too, as tokenizers writes optional settings).
Status flag(const json& j, const char* key, bool dflt, const std::string& where, bool& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out = dflt, Status::success();
  if (!it->is_boolean()) return bad(where + "." + key, where + "." + key + " must be true or false");
  out = it->get<bool>();
  return Status::success();
}

std::string type_of(const json& j) {
  const auto t = j.find("type");
  return t != j.end() && t->is_string() ? t->get<std::string>() : std::string();
}

// A "Sequence" normalizer or pre-tokenizer: `one` on each item of j[key], in order.
template <class One>
Status sequence(const json& j, const char* key, const std::string& where, json& steps, One one) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return bad(where + "." + key, where + "." + key + " must be an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    Status s = one((*it)[i], where + "." + key + "[" + std::to_string(i) + "]", steps);
    if (!s.ok()) return s;
  }
  return Status::success();
}

// Normalizer -> list of steps for web/tokenizer.js.
Status normalizer_steps(const json& n, const std::string& where, json& steps) {
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
    if (n.contains("strip_accents") && !n["strip_accents"].is_null()) {
      if (!n["strip_accents"].is_boolean()) return bad(where + ".strip_accents", where + ".strip_accents must be a boolean or null");
      strip = n["strip_accents"];
    }
    steps.push_back({{"type", "bert"}, {"cleanText", clean}, {"handleChineseChars", chinese}, {"stripAccents", strip},
                     {"lowercase", lower}});
    return Status::success();
  }
  static const std::pair<const char*, const char*> simple[] = {
      {"Lowercase", "lowercase"}, {"NFD", "nfd"}, {"NFC", "nfc"}, {"NFKD", "nfkd"}, {"NFKC", "nfkc"}, {"StripAccents", "stripAccents"}};
  for (const auto& [hf, ours] : simple)
    if (t == hf) return steps.push_back({{"type", ours}}), Status::success();
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: BertNormalizer, Lowercase, NFD, NFC, NFKD, NFKC, "
                                  "StripAccents, Sequence)");
}

Status pre_tokenizer_steps(const json& p, const std::string& where, json& steps) {
  if (p.is_null()) return Status::success();
  if (!p.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(p);
  if (t == "Sequence") return sequence(p, "pretokenizers", where, steps, pre_tokenizer_steps);
  if (t == "BertPreTokenizer") return steps.push_back({{"type", "bert"}}), Status::success();
  if (t == "WhitespaceSplit") return steps.push_back({{"type", "whitespaceSplit"}}), Status::success();
  if (t == "ByteLevel") {
    bool prefix, regex;
    Status s = flag(p, "add_prefix_space", false, where, prefix);
    if (s.ok()) s = flag(p, "use_regex", true, where, regex);
    if (!s.ok()) return s;
    steps.push_back({{"type", "byteLevel"}, {"addPrefixSpace", prefix}, {"useRegex", regex}});
    return Status::success();
  }
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: BertPreTokenizer, ByteLevel, WhitespaceSplit, Sequence)");
}

// Post-processor -> {"single": [...], "pair": [...]} of {"id", "typeId"} (a special token) or
// {"sequence": 0 | 1, "typeId"} items; null when nothing is added.
Status post_template(const json& p, const std::unordered_map<std::string, int32_t>& vocab, const std::string& where,
                     json& out) {
  out = nullptr;
  if (p.is_null()) return Status::success();
  if (!p.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(p);
  if (t == "ByteLevel") return Status::success();  // offsets only: adds no tokens
  auto special = [&](const json& pair, const char* key, json& item) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_number_integer()) {
      return bad(where + "." + key, where + "." + key + " must be [token, id]");
    }
    item = {{"id", pair[1]}, {"typeId", 0}};
    return Status::success();
  };
  if (t == "BertProcessing" || t == "RobertaProcessing") {
    json cls, sep;
    Status s = special(p.value("cls", json()), "cls", cls);
    if (s.ok()) s = special(p.value("sep", json()), "sep", sep);
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
    const json specials = p.value("special_tokens", json::object());
    json result = json::object();
    for (const char* which : {"single", "pair"}) {
      const auto it = p.find(which);
      if (it == p.end() || !it->is_array()) return bad(where + "." + which, where + "." + which + " must be an array");
      json items = json::array();
      for (const auto& piece : *it) {
        if (piece.contains("SpecialToken")) {
          const json& st = piece["SpecialToken"];
          const std::string name = st.value("id", "");
          int32_t id = -1;
          if (specials.contains(name) && specials[name].contains("ids") && specials[name]["ids"].size() == 1) {
            id = specials[name]["ids"][0].get<int32_t>();
          } else if (vocab.count(name)) {
            id = vocab.at(name);
          }
          if (id < 0) return bad(where + ".special_tokens", where + ": the special token '" + name + "' has no single id");
          items.push_back({{"id", id}, {"typeId", st.value("type_id", 0)}});
        } else if (piece.contains("Sequence")) {
          const json& sq = piece["Sequence"];
          items.push_back({{"sequence", sq.value("id", "A") == "B" ? 1 : 0}, {"typeId", sq.value("type_id", 0)}});
        } else {
          return bad(where + "." + which, where + "." + which + " items must be SpecialToken or Sequence");
        }
      }
      result[which] = items;
    }
    out = result;
    return Status::success();
  }
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: TemplateProcessing, BertProcessing, "
                                  "RobertaProcessing, ByteLevel)");
}

Status read_vocab_object(const json& v, const std::string& where, std::unordered_map<std::string, int32_t>& out) {
  if (!v.is_object()) return bad(where, where + " must be an object {token: id}");
  out.reserve(v.size());
  for (const auto& [token, id] : v.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (1 << 24)) {
      return bad(where, where + ": token '" + token + "' has id " + id.dump() + "; ids are integers in [0, 2^24]");
    }
    out.emplace(token, id.get<int32_t>());
  }
  return Status::success();
}

// Merges: "a b" strings (tokenizers <= 0.19, vocab.bpe) or ["a", "b"] pairs (newer files).
Status add_merge(const json& m, std::size_t rank, std::unordered_map<std::string, int32_t>& ranks) {
  std::string key;
  if (m.is_string()) {
    key = m.get<std::string>();
    if (key.find(' ') == std::string::npos) return bad("model.merges", "merge " + std::to_string(rank) + " (\"" + key + "\") is not \"left right\"");
  } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    key = m[0].get<std::string>() + " " + m[1].get<std::string>();
  } else {
    return bad("model.merges", "merge " + std::to_string(rank) + " must be \"left right\" or [left, right]");
  }
  ranks.emplace(std::move(key), static_cast<int32_t>(rank));
  return Status::success();
}

json added_tokens_of(const json& list, Status& s) {
  json out = json::array();
  if (list.is_null()) return out;
  if (!list.is_array()) {
    s = bad("added_tokens", "added_tokens must be an array");
    return out;
  }
  for (const auto& a : list) {
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
        !a["content"].is_string()) {
      s = bad("added_tokens", "each added token needs an integer id and a content string");
      return out;
    }
    out.push_back({{"id", a["id"]}, {"content", a["content"]}, {"special", a.value("special", false)},
                   {"lstrip", a.value("lstrip", false)}, {"rstrip", a.value("rstrip", false)},
                   {"singleWord", a.value("single_word", false)}, {"normalized", a.value("normalized", !a.value("special", false))}});
  }
  return out;
}

json bert_template(const std::unordered_map<std::string, int32_t>& vocab) {
  if (!vocab.count("[CLS]") || !vocab.count("[SEP]")) return nullptr;
  const json cls = {{"id", vocab.at("[CLS]")}, {"typeId", 0}}, sep = {{"id", vocab.at("[SEP]")}, {"typeId", 0}};
  const json sep1 = {{"id", vocab.at("[SEP]")}, {"typeId", 1}};
  return {{"single", {cls, {{"sequence", 0}, {"typeId", 0}}, sep}},
          {"pair", {cls, {{"sequence", 0}, {"typeId", 0}}, sep, {{"sequence", 1}, {"typeId", 1}}, sep1}}};
}

}  // namespace

void Tokenizer::finish(TokenizerModel model, nlohmann::json& settings) {
  model_ = model;
  int32_t max_id = -1;
  for (const auto& [t, id] : vocab_) max_id = std::max(max_id, id);
  tokens_.assign(static_cast<std::size_t>(max_id + 1), std::string());
  for (const auto& [t, id] : vocab_) tokens_[id] = t;
  settings["unkId"] = unk_;
  settings["continuingSubwordPrefix"] = model == TokenizerModel::wordpiece ? prefix_ : std::string();
  settings["vocab"] = tokens_;
  settings_ = settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status Tokenizer::from_tokenizer_json(const char* text, std::size_t length, std::unique_ptr<Tokenizer>& out) {
  json j;
  Status s = parse_json(text, length, "tokenizer.json", j);
  if (!s.ok()) return s;
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) {
    return bad("model", "tokenizer.json must be an object with a \"model\"");
  }
  std::unique_ptr<Tokenizer> t(new (std::nothrow) Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  const json& m = j["model"];
  std::string type = type_of(m);
  if (type.empty() && m.contains("merges")) type = "BPE";  // older files omit the type
  if (type.empty() && m.contains("continuing_subword_prefix")) type = "WordPiece";
  if (type != "WordPiece" && type != "BPE") {
    return bad("model.type", "model type \"" + type + "\" is not supported (supported: WordPiece, BPE)");
  }
  s = read_vocab_object(m.value("vocab", json()), "model.vocab", t->vocab_);
  if (!s.ok()) return s;
  json settings = json::object();
  auto unk_of = [&](const json& u) -> Status {
    if (u.is_null()) return Status::success();
    if (!u.is_string()) return bad("model.unk_token", "model.unk_token must be a string or null");
    const auto it = t->vocab_.find(u.get<std::string>());
    if (it == t->vocab_.end()) return bad("model.unk_token", "model.unk_token '" + u.get<std::string>() + "' is not in the vocabulary");
    t->unk_ = it->second;
    return Status::success();
  };
  if (type == "WordPiece") {
    s = unk_of(m.value("unk_token", json("[UNK]")));
    if (!s.ok()) return s;
    if (t->unk_ < 0) return bad("model.unk_token", "a WordPiece model needs an unk_token");
    t->prefix_ = m.value("continuing_subword_prefix", "##");
    t->max_chars_ = m.value("max_input_chars_per_word", 100);
    settings["model"] = "wordpiece";
  } else {
    if (m.contains("dropout") && !m["dropout"].is_null()) return bad("model.dropout", "model.dropout is not supported (inference only)");
    if (m.value("byte_fallback", false)) return bad("model.byte_fallback", "model.byte_fallback is not supported");
    for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
      if (m.contains(affix) && !m[affix].is_null() && m[affix] != "") {
        return bad(std::string("model.") + affix, std::string("model.") + affix + " is not supported");
      }
    }
    s = unk_of(m.value("unk_token", json()));
    if (!s.ok()) return s;
    const json merges = m.value("merges", json::array());
    if (!merges.is_array()) return bad("model.merges", "model.merges must be an array");
    t->ranks_.reserve(merges.size());
    for (std::size_t i = 0; i < merges.size() && s.ok(); ++i) s = add_merge(merges[i], i, t->ranks_);
    if (!s.ok()) return s;
    settings["model"] = "bpe";
  }
  json steps = json::array();
  s = normalizer_steps(j.value("normalizer", json()), "normalizer", steps);
  if (!s.ok()) return s;
  settings["normalizer"] = steps;
  steps = json::array();
  s = pre_tokenizer_steps(j.value("pre_tokenizer", json()), "pre_tokenizer", steps);
  if (!s.ok()) return s;
  settings["preTokenizer"] = steps;
  json tmpl;
  s = post_template(j.value("post_processor", json()), t->vocab_, "post_processor", tmpl);
  if (!s.ok()) return s;
  settings["template"] = tmpl;
  settings["addedTokens"] = added_tokens_of(j.value("added_tokens", json()), s);
  if (!s.ok()) return s;
  for (const auto& a : settings["addedTokens"]) t->vocab_.emplace(a["content"].get<std::string>(), a["id"].get<int32_t>());
  const json pad = j.value("padding", json());
  if (pad.is_object() && pad.contains("pad_id")) settings["pad"] = {{"id", pad["pad_id"]}, {"typeId", pad.value("pad_type_id", 0)}};
  t->finish(type == "BPE" ? TokenizerModel::bpe : TokenizerModel::wordpiece, settings);
  out = std::move(t);
  return s;
}

Status Tokenizer::from_vocab_txt(const char* text, std::size_t length, bool lowercase, std::unique_ptr<Tokenizer>& out) {
  std::unique_ptr<Tokenizer> t(new (std::nothrow) Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  std::size_t line = 0, start = 0;
  for (std::size_t i = 0; i <= length; ++i) {
    if (i == length || text[i] == '\n') {
      std::size_t end = i;
      if (end > start && text[end - 1] == '\r') --end;
      if (i < length || end > start) t->vocab_.emplace(std::string(text + start, end - start), static_cast<int32_t>(line++));
      start = i + 1;
    }
  }
  const auto unk = t->vocab_.find("[UNK]");
  if (unk == t->vocab_.end()) return bad("vocab", "vocab.txt has no [UNK] token");
  t->unk_ = unk->second;
  json added = json::array();
  for (const char* sp : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    const auto it = t->vocab_.find(sp);
    if (it != t->vocab_.end()) {
      added.push_back({{"id", it->second}, {"content", sp}, {"special", true}, {"lstrip", false}, {"rstrip", false},
                       {"singleWord", false}, {"normalized", false}});
    }
  }
  json settings = {{"model", "wordpiece"},
                   {"normalizer", {{{"type", "bert"}, {"cleanText", true}, {"handleChineseChars", true},
                                    {"stripAccents", nullptr}, {"lowercase", lowercase}}}},
                   {"preTokenizer", {{{"type", "bert"}}}},
                   {"template", bert_template(t->vocab_)},
                   {"addedTokens", added}};
  if (t->vocab_.count("[PAD]")) settings["pad"] = {{"id", t->vocab_.at("[PAD]")}, {"typeId", 0}};
  t->finish(TokenizerModel::wordpiece, settings);
  out = std::move(t);
  return Status::success();
}

Status Tokenizer::from_gpt2_files(const char* encoder_json, std::size_t encoder_length, const char* vocab_bpe,
                                  std::size_t vocab_length, std::unique_ptr<Tokenizer>& out) {
  json enc;
  Status s = parse_json(encoder_json, encoder_length, "encoder.json", enc);
  if (!s.ok()) return s;
  std::unique_ptr<Tokenizer> t(new (std::nothrow) Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  s = read_vocab_object(enc, "encoder.json", t->vocab_);
  if (!s.ok()) return s;
  std::size_t start = 0, rank = 0;
  for (std::size_t i = 0; i <= vocab_length && s.ok(); ++i) {
    if (i == vocab_length || vocab_bpe[i] == '\n') {
      std::string line(vocab_bpe + start, i - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      start = i + 1;
      if (line.empty() || line.rfind("#version", 0) == 0) continue;
      s = add_merge(line, rank++, t->ranks_);
    }
  }
  if (!s.ok()) return bad("vocab.bpe", "vocab.bpe: " + s.message);
  json added = json::array();
  const auto eot = t->vocab_.find("<|endoftext|>");
  if (eot != t->vocab_.end()) {
    added.push_back({{"id", eot->second}, {"content", "<|endoftext|>"}, {"special", true}, {"lstrip", false},
                     {"rstrip", false}, {"singleWord", false}, {"normalized", false}});
  }
  json settings = {{"model", "bpe"},
                   {"normalizer", json::array()},
                   {"preTokenizer", {{{"type", "byteLevel"}, {"addPrefixSpace", false}, {"useRegex", true}}}},
                   {"template", nullptr},
                   {"addedTokens", added}};
  t->finish(TokenizerModel::bpe, settings);
  out = std::move(t);
  return s;
}

Status Tokenizer::wordpiece(const std::string& word, int32_t index, std::vector<int32_t>& out) const {
  std::vector<std::size_t> bounds;  // char starts, then the end
  for (std::size_t i = 0; i < word.size(); i += utf8_length(static_cast<unsigned char>(word[i]))) bounds.push_back(i);
  bounds.push_back(word.size());
  const std::size_t chars = bounds.size() - 1;
  const std::size_t mark = out.size();
  if (chars <= max_chars_) {
    std::size_t start = 0;
    std::string piece;
    while (start < chars) {
      std::size_t end = chars;
      int32_t found = -1;
      for (; end > start; --end) {
        piece.assign(start > 0 ? prefix_ : std::string());
        piece.append(word, bounds[start], bounds[end] - bounds[start]);
        const auto it = vocab_.find(piece);
        if (it != vocab_.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) break;
      out.insert(out.end(), {found, index, static_cast<int32_t>(bounds[end])});
      start = end;
    }
    if (start == chars) return Status::success();
  }
  out.resize(mark);  // the whole word is unknown
  out.insert(out.end(), {unk_, index, static_cast<int32_t>(word.size())});
  return Status::success();
}

Status Tokenizer::bpe(const std::string& word, int32_t index, std::vector<int32_t>& out) {
  auto cached = cache_.find(word);
  if (cached == cache_.end()) {
    std::vector<std::string> symbols;
    for (std::size_t i = 0; i < word.size();) {
      const std::size_t n = std::min(utf8_length(static_cast<unsigned char>(word[i])), word.size() - i);
      symbols.emplace_back(word, i, n);
      i += n;
    }
    // Merge the lowest-ranked adjacent pair, every occurrence left to right, until none is ranked.
    std::string key;
    while (symbols.size() > 1) {
      int32_t best = std::numeric_limits<int32_t>::max();
      for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
        key.assign(symbols[i]).append(" ").append(symbols[i + 1]);
        const auto r = ranks_.find(key);
        if (r != ranks_.end() && r->second < best) best = r->second;
      }
      if (best == std::numeric_limits<int32_t>::max()) break;
      std::vector<std::string> merged;
      merged.reserve(symbols.size());
      for (std::size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size()) {
          key.assign(symbols[i]).append(" ").append(symbols[i + 1]);
          const auto r = ranks_.find(key);
          if (r != ranks_.end() && r->second == best) {
            merged.push_back(symbols[i] + symbols[i + 1]);
            ++i;
            continue;
          }
        }
        merged.push_back(std::move(symbols[i]));
      }
      symbols = std::move(merged);
    }
    std::vector<std::pair<int32_t, int32_t>> pieces;
    int32_t end = 0;
    for (const auto& sym : symbols) {
      end += static_cast<int32_t>(sym.size());
      const auto it = vocab_.find(sym);
      if (it == vocab_.end() && unk_ < 0) {
        return bad("text", "the symbol '" + sym + "' is not in the BPE vocabulary and the model has no unk_token");
      }
      pieces.emplace_back(it == vocab_.end() ? unk_ : it->second, end);
    }
    if (cache_.size() > 100000) cache_.clear();  // bounds memory on long streams of distinct words
    cached = cache_.emplace(word, std::move(pieces)).first;
  }
  for (const auto& [id, end] : cached->second) out.insert(out.end(), {id, index, end});
  return Status::success();
}

Status Tokenizer::encode(const char* words, const int32_t* ends, std::size_t count, std::vector<int32_t>& out) {
  int32_t start = 0;
  std::string word;
  for (std::size_t i = 0; i < count; ++i) {
    if (ends[i] < start) return bad("words", "word ends must not decrease");
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

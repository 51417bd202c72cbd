// tokenizer.json's SentencePiece-style models (a Unigram model, or BPE with byte_fallback: Llama,
// T5, XLM-R, ...): the vocabulary, merges and added tokens -> SentencePiece::Parts, and the
// normalizer and pre-tokenizer -> SentencePiece::Pipeline (which runs in C++ with the model).
#include <array>

#include "tokenizer_json.hpp"

namespace attnkit {

using namespace detail;

namespace {

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

// The normalizer and pre-tokenizer of a SentencePiece-style tokenizer.json -> Pipeline. The
// normalizer's Unicode and literal steps come first (JavaScript runs them); the steps C++ runs
// (Pipeline::Step) follow in any order, as Hugging Face's Sequence runs them.
// `before`: the steps web/src/text/tokenizer.js runs first; `general`: pre-tokenizer steps the Tokenizer's
// text steps run (their Split patterns compiled into `patterns`).
ATTNKIT_FOR_SIZE Status sentencepiece_steps(const json& j, std::string_view given, SentencePiece::Pipeline& p, std::string& charsmap,
                          json& before, json& general, std::vector<Regex>& patterns) {
  const char* const kSpace = "\xE2\x96\x81";
  using Step = SentencePiece::Pipeline::Step;
  std::vector<std::pair<const json*, std::string>> steps;
  Status s = flat_steps(j, "normalizer", "normalizers", steps);
  if (!s.ok()) return s;
  const char* supported = "(supported for SentencePiece models: NFD, NFKD, NFC, NFKC, Nmt, StripAccents, Lowercase and "
                          "Replace of a string first, then Precompiled, Strip, Prepend(\"\xE2\x96\x81\" or \" \"), "
                          "Replace(\" \" -> \"\xE2\x96\x81\") and Replace(Regex \" {2,}\" -> \" \" or \"\xE2\x96\x81\"))";
  bool precompiled = false;
  for (const auto& [step, where] : steps) {
    if (!step->is_object()) return bad(where, where + " must be an object");
    const std::string t = type_of(*step);
    const json* pattern = t == "Replace" ? field(*step, "pattern") : nullptr;
    const json* literal = pattern ? field(*pattern, "String") : nullptr;
    const json* regex = pattern ? field(*pattern, "Regex") : nullptr;
    std::string content;
    if (t == "Replace") {
      s = known_keys(*step, {"pattern", "content"}, where);
      if (s.ok()) s = text_field(*step, "content", "", where, content);
      if (!s.ok()) return s;
    }
    const bool is_literal = literal && literal->is_string() && !literal->get_ref<const std::string&>().empty();
    const bool space_to_meta = is_literal && literal->get_ref<const std::string&>() == " " && content == kSpace;
    // Before the library's own steps (ALBERT's Replace("``"), NFKD, StripAccents, Lowercase):
    // web/src/text/tokenizer.js runs them, keeping each character's source span, and hands C++ the result.
    if (p.steps.empty() && (t == "NFD" || t == "NFKD" || t == "NFC" || t == "NFKC" || t == "Nmt" || t == "StripAccents" ||
                            t == "Lowercase" || (is_literal && !space_to_meta))) {
      if (t == "Replace") {
        before.push_back({{"type", "replace"}, {"pattern", *literal}, {"content", content}});
      } else {
        json one = json::array();
        s = normalizer_steps(*step, where, one);
        if (!s.ok()) return s;
        for (auto& x : one) before.push_back(std::move(x));
      }
      continue;
    }
    if (t == "Precompiled") {
      if (precompiled) return bad(where, where + ": a second Precompiled");
      std::string b64;
      s = text_field(*step, "precompiled_charsmap", "", where, b64);
      if (!s.ok()) return s;
      if (b64.empty() && !given.empty()) b64 = std::string(given);  // cut out of the text by web/src/text/tokenizer.js
      if (!base64_decode(b64, charsmap)) return bad(where + ".precompiled_charsmap", where + ".precompiled_charsmap is not base64");
      precompiled = true;
      p.steps.push_back(Step::charsmap);
    } else if (t == "Replace") {
      if (regex && regex->is_string() && regex->get_ref<const std::string&>() == " {2,}" && (content == " " || content == kSpace)) {
        p.steps.push_back(content == " " ? Step::collapse : Step::collapse_meta);
      } else if (space_to_meta) {
        p.steps.push_back(Step::replace_spaces);
      } else {
        return bad(where, where + ": this Replace is not supported " + std::string(supported));
      }
    } else if (t == "Strip") {
      // Hugging Face's Strip { strip_left, strip_right }: both required.
      bool side[2] = {false, false};
      s = known_keys(*step, {"strip_left", "strip_right"}, where);
      for (int k = 0; k < 2 && s.ok(); ++k) {
        const char* key = k ? "strip_right" : "strip_left";
        const json* v = field(*step, key);
        if (!v || !v->is_boolean()) s = bad(where + "." + key, where + "." + key + " must be a boolean");
        else side[k] = v->get<bool>();
      }
      if (!s.ok()) return s;
      if (side[0]) p.steps.push_back(Step::strip_left);
      if (side[1]) p.steps.push_back(Step::strip_right);
    } else if (t == "Prepend") {
      s = known_keys(*step, {"prepend"}, where);
      if (s.ok()) s = text_field(*step, "prepend", "", where, content);
      if (!s.ok()) return s;
      // " " only with a Replace(" " -> "\u2581") after it (Helium's form).
      if (content != kSpace && content != " ") return bad(where + ".prepend", where + ".prepend must be \"\xE2\x96\x81\" or \" \"");
      if (!p.prepend.empty()) return bad(where, where + ": a second Prepend");
      p.prepend = content;
      p.steps.push_back(Step::prepend);
    } else {
      return bad(where + ".type", where + " type \"" + t + "\" is not supported here " + supported);
    }
  }
  if (p.prepend == " " && std::find(std::find(p.steps.begin(), p.steps.end(), Step::prepend), p.steps.end(), Step::replace_spaces) == p.steps.end()) {
    return bad("normalizer", "normalizer: Prepend(\" \") needs the Replace(\" \" -> \"\xE2\x96\x81\") after it");
  }
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
    // As Hugging Face's reader: add_prefix_space false only with prepend_scheme "never".
    if (!prefix && scheme != "never") return bad(where + ".add_prefix_space", where + ".add_prefix_space false contradicts prepend_scheme");
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

}  // namespace

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
  // Added tokens are matched in the text before the model (web/src/text/tokenizer.js): in the model they are
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
  settings["preNormalizer"] = std::move(before);  // run by web/src/text/tokenizer.js before the text reaches C++
  settings["preTokenizer"] = json::array();
  settings["unkId"] = unk;
  settings["continuingSubwordPrefix"] = "";
  settings["vocab"] = std::move(vocab);
  t->settings_ = settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out = std::move(t);
  return Status::success();
}

}  // namespace attnkit

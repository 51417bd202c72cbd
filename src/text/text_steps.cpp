// The text steps of WordPiece and byte-level BPE tokenizers in C++ (Split's regular expressions on
// attnkit's engine, regex.hpp): the same normalisation,
// pre-tokenisation and offset mapping as web/src/text/tokenizer.js's normalize / preTokenize / _pieces, so
// that a whole text is one call. tests/node/text/text_steps.test.mjs compares the two on mixed text.
#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "attnkit/text/tokenizer.hpp"
#include "attnkit/text/unicode.hpp"
#include "attnkit/text/utf8.hpp"

namespace attnkit {

namespace {

using unicode::flags;

// BERT's character classes, as web/src/text/tokenizer.js defines them.
bool is_space(uint32_t c) { return flags(c) & unicode::kSpace; }
// Hugging Face's BertNormalizer is_control: Cc, Cf and the private-use planes (Co) are dropped by
// clean_text, as its tokenizers and transformers.js do; tab, newline and CR are whitespace.
bool is_private_use(uint32_t c) {
  return (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xF0000 && c <= 0xFFFFD) || (c >= 0x100000 && c <= 0x10FFFD);
}
bool is_control(uint32_t c) {
  return c != '\t' && c != '\n' && c != '\r' && ((flags(c) & unicode::kControl) || is_private_use(c));
}
bool is_punct(uint32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126) ||
         (flags(c) & unicode::kPunct);
}
bool is_chinese(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}
bool is_letter(uint32_t c) { return flags(c) & unicode::kLetter; }
bool is_number(uint32_t c) { return flags(c) & unicode::kNumber; }

// GPT-2's printable stand-in for each byte (bytes_to_unicode).
const std::array<uint32_t, 256>& byte_chars() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t n = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      t[b] = printable ? b : 256 + n++;
    }
    return t;
  }();
  return table;
}

// GPT-2's pattern  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// at c[i] (c[0, n)): the length of the match (always >= 1 when i < n).
std::size_t gpt2_match(const uint32_t* c, std::size_t i, std::size_t n) {
  if (c[i] == '\'' && i + 1 < n) {
    const uint32_t a = c[i + 1], b = i + 2 < n ? c[i + 2] : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  const std::size_t j = c[i] == ' ' && i + 1 < n ? i + 1 : i;  // the optional space
  const auto run = [&](auto pred) {
    std::size_t k = j;
    while (k < n && pred(c[k])) ++k;
    return k;
  };
  if (is_letter(c[j])) return run(is_letter) - i;
  if (is_number(c[j])) return run(is_number) - i;
  const auto other = [](uint32_t x) { return !is_space(x) && !is_letter(x) && !is_number(x); };
  if (other(c[j])) return run(other) - i;
  // Whitespace: the run, less its last character when a non-space follows (\s+(?!\S)), unless
  // that leaves nothing (then \s+ takes the one character).
  std::size_t k = i;
  while (k < n && is_space(c[k])) ++k;
  if (k == n) return k - i;
  return k - i >= 2 ? k - i - 1 : k - i;
}

}  // namespace

// Hugging Face's NormalizedString::split on a word of n characters starting at `base`, from its
// pattern's [start, end) matches (web/src/text/tokenizer.js's matchPieces and splitPieces): the pieces
// between and of the matches (their roles swapped by invert), then Removed drops the matches,
// Isolated keeps every piece, MergedWithPrevious / MergedWithNext glue a match to the piece before
// / after it (unless that is a match too), Contiguous joins adjacent matches. Empty pieces go.
void Tokenizer::split_pieces(const std::vector<int32_t>& matches, std::size_t n, TextStep::Behavior behavior, bool invert,
                             std::size_t base, std::vector<std::pair<std::size_t, std::size_t>>& out) {
  using B = TextStep;
  // The pieces, in order: the k-th of the 2m+1 slots around m matches is a gap (even k) or a match
  // (odd k), [begin, end) relative to the word; empty gaps are skipped.
  const std::size_t m = matches.size() / 2;
  const auto piece = [&](std::size_t k, std::size_t& a, std::size_t& b) {
    const std::size_t i = k / 2;
    if (k % 2) {
      a = static_cast<std::size_t>(matches[2 * i]), b = static_cast<std::size_t>(matches[2 * i + 1]);
    } else {
      a = i == 0 ? 0 : static_cast<std::size_t>(matches[2 * i - 1]);
      b = i == m ? n : static_cast<std::size_t>(matches[2 * i]);
    }
    return a < b || k % 2;  // a gap only when not empty (an empty match is still a piece)
  };
  const std::size_t first = out.size();
  bool previous = false;
  for (std::size_t k = 0; k <= 2 * m; ++k) {
    std::size_t a, b;
    if (!piece(k, a, b)) continue;
    const bool match = (k % 2 == 1) != invert;
    bool merge = false;
    if (behavior == B::removed && match) continue;
    if (behavior == B::contiguous) merge = match == previous;
    if (behavior == B::merged_with_previous) merge = match && !previous;
    if (behavior == B::merged_with_next) merge = previous && !match;  // the match before joins this piece
    if (merge && out.size() > first) out.back().second = base + b;
    else out.push_back({base + a, base + b});
    previous = match;
  }
  // Empty pieces go (empty matches kept their place above, for the merges).
  out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                           [](const std::pair<std::size_t, std::size_t>& p) { return p.second <= p.first; }),
            out.end());
}

void Tokenizer::plan_text_steps(const nlohmann::json& settings) {
  text_ok_ = false;
  normalizer_.clear();
  pre_tokenizer_.clear();
  normalize_in_js_ = false;
  if (model_ == TokenizerModel::sentencepiece) return;
  for (const auto& n : settings.value("normalizer", nlohmann::json::array())) {
    const std::string type = n.value("type", "");
    TextStep s;
    s.kind = TextStep::bert;
    if (type == "bert") {
      s.clean = n.value("cleanText", true);
      s.chinese = n.value("handleChineseChars", true);
      s.lower = n.value("lowercase", true);
      s.strip = n.contains("stripAccents") && n["stripAccents"].is_boolean() ? n["stripAccents"].get<bool>() : s.lower;
    } else if (type == "lowercase") {
      s.kind = TextStep::lowercase;
    } else if (type == "stripAccents") {
      s.kind = TextStep::strip_accents;
    } else if (type == "nfc" || type == "nfkc" || type == "nfd" || type == "nfkd") {
      normalize_in_js_ = true;  // composition (String.normalize) stays in JavaScript
      continue;
    } else {
      return;
    }
    normalizer_.push_back(s);
  }
  // Then web/src/text/tokenizer.js runs the whole normaliser and sends C++ its result (with a map back to
  // the source for the offsets), and C++ runs none of it.
  if (normalize_in_js_) normalizer_.clear();
  text_ok_ = plan_pre_tokenizer(settings.value("preTokenizer", nlohmann::json::array()));
}

bool Tokenizer::plan_pre_tokenizer(const nlohmann::json& steps) {
  pre_tokenizer_.clear();
  // Split's behaviours as web/src/text/tokenizer.js's steps name them.
  const auto behavior_of = [](const std::string& name) {
    static const std::pair<const char*, TextStep::Behavior> behaviors[] = {
        {"removed", TextStep::removed}, {"isolated", TextStep::isolated}, {"mergedWithPrevious", TextStep::merged_with_previous},
        {"mergedWithNext", TextStep::merged_with_next}, {"contiguous", TextStep::contiguous}};
    for (const auto& [n, b] : behaviors)
      if (name == n) return b;
    return TextStep::isolated;
  };
  for (const auto& p : steps) {
    const std::string type = p.value("type", "");
    TextStep s;
    s.kind = TextStep::bert_split;
    if (type == "whitespaceSplit") {
      s.kind = TextStep::whitespace_split;
    } else if (type == "byteLevel") {
      s.kind = TextStep::byte_level;
      s.prefix_space = p.value("addPrefixSpace", false);
      s.use_regex = p.value("useRegex", true);
    } else if (type == "split") {
      s.kind = TextStep::split;
      s.behavior = behavior_of(p.value("behavior", ""));
      s.invert = p.value("invert", false);
      if (p.contains("program")) {
        s.program = p["program"].get<int32_t>();
      } else {
        const std::string literal = p.value("literal", "");
        const auto* t = reinterpret_cast<const unsigned char*>(literal.data());
        for (std::size_t i = 0; i < literal.size();) {
          uint32_t c = 0xFFFD;
          const std::size_t len = utf8::decode(t + i, literal.size() - i, &c);
          s.literal.push_back(c);
          i += len ? len : 1;
        }
        if (s.literal.empty()) return false;
      }
    } else if (type == "whitespace" || type == "digits" || type == "punctuation") {
      // As splits on patterns of this engine (web/src/text/tokenizer.js's WORD_OR_OTHER, NUMERIC and
      // PUNCTUATION, with Rust's \w for Whitespace's words).
      static const char* const kWord = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}";
      std::string pattern;
      s.kind = TextStep::split;
      if (type == "whitespace") {
        pattern = std::string("[") + kWord + "]+|[^" + kWord + "\\p{White_Space}]+";
        s.invert = true;
        s.behavior = TextStep::removed;
      } else if (type == "digits") {
        pattern = "\\p{N}";
        s.behavior = p.value("individualDigits", false) ? TextStep::isolated : TextStep::contiguous;
      } else {
        pattern = "[\\p{P}!-/:-@\\[-`{-~]";
        s.behavior = behavior_of(p.value("behavior", "isolated"));
      }
      patterns_.emplace_back();
      if (!Regex::compile(pattern, patterns_.back()).ok()) return false;
      s.program = static_cast<int32_t>(patterns_.size() - 1);
    } else if (type != "bert") {
      return false;  // steps only JavaScript runs
    }
    pre_tokenizer_.push_back(s);
  }
  return true;
}

Status Tokenizer::encode_text(const char* text, std::size_t length, std::vector<int32_t>& out) {
  if (!text_ok_) {
    return Status::error(Code::invalid_argument, "tokenizer", "this tokenizer's text steps run in JavaScript (encode words)");
  }
  // 1. Code points with their byte position (malformed UTF-8, which TextEncoder never writes,
  //    reads as U+FFFD per byte).
  std::vector<uint32_t> cps;
  std::vector<int32_t> pos;  // byte start of each code point, then the end
  cps.reserve(length);
  pos.reserve(length + 1);
  const auto* t = reinterpret_cast<const unsigned char*>(text);
  for (std::size_t i = 0; i < length;) {
    uint32_t c = 0xFFFD;
    const std::size_t len = std::max<std::size_t>(1, utf8::decode(t + i, length - i, &c));
    cps.push_back(c);
    pos.push_back(static_cast<int32_t>(i));
    i += len;
  }
  pos.push_back(static_cast<int32_t>(length));
  // 2. Normalisation, cluster by cluster (a base and its marks, or a run of leading marks): each
  //    output code point keeps the cluster's source range.
  std::vector<uint32_t> norm;
  std::vector<std::pair<int32_t, int32_t>> src;
  norm.reserve(cps.size() + 8);
  src.reserve(cps.size() + 8);
  std::vector<uint32_t> a, b;
  for (std::size_t i = 0; i < cps.size();) {
    std::size_t j = i + 1;  // \P{M}\p{M}* or \p{M}+: marks join what precedes them
    while (j < cps.size() && (flags(cps[j]) & unicode::kMark)) ++j;
    if (j == i + 1 && cps[i] < 0x80) {
      // An ASCII character alone (most of most texts): the same steps without the vectors. ASCII
      // has no accents or Chinese; cleaning drops controls and makes whitespace a space.
      uint32_t c = cps[i];
      bool keep = true;
      for (const TextStep& s : normalizer_) {
        if (s.kind == TextStep::bert && s.clean) {
          if (c == 0 || is_control(c)) keep = false;
          else if (is_space(c)) c = ' ';
        }
        if ((s.kind == TextStep::bert && s.lower) || s.kind == TextStep::lowercase) c = c >= 'A' && c <= 'Z' ? c + 32 : c;
      }
      if (keep) {
        norm.push_back(c);
        src.push_back({pos[i], pos[j]});
      }
      i = j;
      continue;
    }
    a.assign(cps.begin() + static_cast<std::ptrdiff_t>(i), cps.begin() + static_cast<std::ptrdiff_t>(j));
    for (const TextStep& s : normalizer_) {
      b.clear();
      uint32_t buf[4];
      if (s.kind == TextStep::bert) {
        for (const uint32_t c : a) {
          if (s.clean && (c == 0 || c == 0xFFFD || is_control(c))) continue;
          if (s.clean && is_space(c)) b.push_back(' ');
          else if (s.chinese && is_chinese(c)) b.insert(b.end(), {' ', c, ' '});
          else b.push_back(c);
        }
        if (s.strip) {
          a.clear();
          for (const uint32_t c : b) {
            const int n = unicode::nfd(c, buf);
            for (int k = 0; k < n; ++k)
              if (!(flags(buf[k]) & unicode::kMn)) a.push_back(buf[k]);
          }
          b.swap(a);
        }
        if (s.lower) {
          a.clear();
          for (const uint32_t c : b) a.insert(a.end(), buf, buf + unicode::lower(c, buf));
          b.swap(a);
        }
      } else if (s.kind == TextStep::lowercase) {
        for (const uint32_t c : a) b.insert(b.end(), buf, buf + unicode::lower(c, buf));
      } else {  // strip_accents: the Mn marks go (no decomposition, as the JavaScript step)
        for (const uint32_t c : a)
          if (!(flags(c) & unicode::kMn)) b.push_back(c);
      }
      a.swap(b);
    }
    // A cluster the steps left as it was keeps each character's own span (as Hugging Face's alignments).
    const bool same = a.size() == j - i && std::equal(a.begin(), a.end(), cps.begin() + static_cast<std::ptrdiff_t>(i));
    for (std::size_t k = 0; k < a.size(); ++k) {
      norm.push_back(a[k]);
      src.push_back(same ? std::pair<int32_t, int32_t>{pos[i + k], pos[i + k + 1]} : std::pair<int32_t, int32_t>{pos[i], pos[j]});
    }
    i = j;
  }
  // 3. ByteLevel's prefix space.
  bool byte_level = false, prefix = false;
  for (const TextStep& s : pre_tokenizer_) {
    byte_level = byte_level || s.kind == TextStep::byte_level;
    prefix = prefix || s.prefix_space;
  }
  if (prefix && !norm.empty() && norm[0] != ' ') {
    norm.insert(norm.begin(), ' ');
    src.insert(src.begin(), {0, 0});
  }
  // 4. Pre-tokenisation: words as [begin, end) ranges of norm.
  std::vector<std::pair<std::size_t, std::size_t>> words;
  Status status = pre_tokenize(norm, words);
  if (!status.ok()) return status;
  // 5. The model, word by word: (id, word, byte end) -> source offsets. For each byte the model
  //    sees, the code point of the word it stands for.
  const auto& chars = byte_chars();
  std::string model, utf8;
  std::vector<uint32_t> owner;  // model byte -> code point index in the word
  std::vector<int32_t> ids;
  for (const auto& [wb, we] : words) {
    if (wb == we) continue;
    model.clear();
    owner.clear();
    for (std::size_t i = wb; i < we; ++i) {
      if (byte_level) {
        utf8.clear();
        utf8::append(norm[i], utf8);
        for (const char byte : utf8) {
          const std::size_t before = model.size();
          utf8::append(chars[static_cast<unsigned char>(byte)], model);
          owner.insert(owner.end(), model.size() - before, static_cast<uint32_t>(i - wb));
        }
      } else if (norm[i] < 0x80) {  // one byte (most words): no encoder, no counted insert
        model.push_back(static_cast<char>(norm[i]));
        owner.push_back(static_cast<uint32_t>(i - wb));
      } else {
        const std::size_t before = model.size();
        utf8::append(norm[i], model);
        owner.insert(owner.end(), model.size() - before, static_cast<uint32_t>(i - wb));
      }
    }
    ids.clear();
    Status s = model_ == TokenizerModel::bpe ? bpe(model, 0, ids) : wordpiece(model, 0, ids);
    if (!s.ok()) return s;
    int32_t prev = 0;
    for (std::size_t k = 0; k < ids.size(); k += 3) {
      const int32_t end_byte = ids[k + 2];
      std::size_t st = wb + owner[static_cast<std::size_t>(prev)];
      const std::size_t e = wb + owner[static_cast<std::size_t>(end_byte - 1)] + 1;
      if (byte_level) {
        while (st + 1 < e && norm[st] == ' ') ++st;  // trim_offsets: not the leading space
      }
      out.insert(out.end(), {ids[k], src[st].first, src[e - 1].second});
      prev = end_byte;
    }
  }
  return Status::success();
}

Status Tokenizer::pre_tokenize(const std::vector<uint32_t>& norm, std::vector<std::pair<std::size_t, std::size_t>>& words) const {
  words.assign(1, {0, norm.size()});
  std::vector<std::pair<std::size_t, std::size_t>> next;
  std::vector<int32_t> matches;
  for (const TextStep& s : pre_tokenizer_) {
    next.clear();
    for (const auto& [wb, we] : words) {
      if (s.kind == TextStep::split) {
        matches.clear();
        if (s.program >= 0) {
          Status st = patterns_[static_cast<std::size_t>(s.program)].find_all(norm.data() + wb, we - wb, matches);
          if (!st.ok()) return st;
        } else {
          const std::size_t m = s.literal.size();
          for (std::size_t i = wb; i + m <= we;) {
            if (std::equal(s.literal.begin(), s.literal.end(), norm.begin() + static_cast<std::ptrdiff_t>(i))) {
              matches.insert(matches.end(), {static_cast<int32_t>(i - wb), static_cast<int32_t>(i - wb + m)});
              i += m;
            } else {
              ++i;
            }
          }
        }
        split_pieces(matches, we - wb, s.behavior, s.invert, wb, next);
        continue;
      }
      if (s.kind == TextStep::byte_level) {
        if (!s.use_regex) {
          next.push_back({wb, we});
          continue;
        }
        for (std::size_t i = wb; i < we;) {
          const std::size_t m = gpt2_match(norm.data() + wb, i - wb, we - wb);
          next.push_back({i, i + m});
          i += m;
        }
        continue;
      }
      std::size_t start = wb;
      bool in_word = false;
      for (std::size_t i = wb; i < we; ++i) {
        const uint32_t c = norm[i];
        if (is_space(c) || (s.kind == TextStep::bert_split && is_punct(c))) {
          if (in_word) next.push_back({start, i});
          in_word = false;
          if (!is_space(c)) next.push_back({i, i + 1});
        } else if (!in_word) {
          start = i;
          in_word = true;
        }
      }
      if (in_word) next.push_back({start, we});
    }
    words.swap(next);
  }
  return Status::success();
}

Status Tokenizer::split_words(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& words) const {
  std::vector<uint32_t> cps;
  std::vector<std::size_t> pos;  // byte start of each code point, then the end
  cps.reserve(text.size());
  pos.reserve(text.size() + 1);
  const auto* t = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    uint32_t c = 0xFFFD;
    const std::size_t len = std::max<std::size_t>(1, utf8::decode(t + i, text.size() - i, &c));
    cps.push_back(c);
    pos.push_back(i);
    i += len;
  }
  pos.push_back(text.size());
  Status s = pre_tokenize(cps, words);
  if (!s.ok()) return s;
  for (auto& [b, e] : words) b = pos[b], e = pos[e];
  return Status::success();
}

}  // namespace attnkit

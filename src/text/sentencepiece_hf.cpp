// SentencePiece models as Hugging Face's tokenizer.json describes them (read by sentencepiece_json.cpp
// into SentencePiece::Parts): the model from its parts, and Hugging Face's steps around it
// (SentencePiece::Pipeline) on each text.
#include <algorithm>
#include <cfloat>

#include "attnkit/text/sentencepiece.hpp"
#include "attnkit/core/scratch.hpp"
#include "attnkit/text/utf8.hpp"

#include "sentencepiece_internal.hpp"

namespace attnkit {

using sentencepiece_detail::bad;
using sentencepiece_detail::kSpace;

namespace {

// Unicode White_Space (Rust's char::is_whitespace, which Hugging Face's WhitespaceSplit and Strip
// use): the code point starting at s, its byte length in `len`, or false.
bool whitespace_at(const unsigned char* s, std::size_t n, std::size_t& len) {
  len = utf8::decode(s, n);
  if (len == 1) return (s[0] >= 0x09 && s[0] <= 0x0D) || s[0] == 0x20;
  if (len == 2) return (s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0));
  if (len == 3) {
    const uint32_t cp = (s[0] & 0x0Fu) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu);
    return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
  }
  if (len == 0) len = 1;
  return false;
}

// A normalised text with, for each byte, the input range [begin, end) of the character it came from.
struct Aligned {
  std::string s;
  std::vector<uint32_t> b, e;
  void put(std::string_view bytes, uint32_t begin, uint32_t end) {
    for (const char c : bytes) {
      s.push_back(c);
      b.push_back(begin);
      e.push_back(end);
    }
  }
  void reserve(std::size_t n) {
    s.reserve(n);
    b.reserve(n);
    e.reserve(n);
  }
  void put_from(const Aligned& a, std::size_t from, std::size_t to) {
    s.append(a.s, from, to - from);
    b.insert(b.end(), a.b.begin() + static_cast<std::ptrdiff_t>(from), a.b.begin() + static_cast<std::ptrdiff_t>(to));
    e.insert(e.end(), a.e.begin() + static_cast<std::ptrdiff_t>(from), a.e.begin() + static_cast<std::ptrdiff_t>(to));
  }
};

}  // namespace

Status SentencePiece::from_parts(Parts&& parts, std::unique_ptr<SentencePiece>& out) {
  const std::size_t n = parts.pieces.size();
  if (n == 0) return bad("model.vocab", "the vocabulary is empty");
  if (parts.types.size() != n || (parts.algorithm == Algorithm::unigram && parts.scores.size() != n)) {
    return bad("model.vocab", "pieces, types and scores differ in length");
  }
  std::size_t bytes = 0;
  for (const auto& p : parts.pieces) bytes += p.size();
  Status s = check_heap("tokenizer.json", 48.0 * static_cast<double>(bytes + 8 * n) + 24.0 * parts.merges.size() + 65536);
  if (!s.ok()) return s;
  std::unique_ptr<SentencePiece> sp(new SentencePiece());
  if (!sp) return Status::error(Code::out_of_memory, "tokenizer.json", "no memory for the tokenizer");
  sp->hf_ = true;
  sp->algorithm_ = parts.algorithm;
  sp->pipeline_ = parts.pipeline;
  sp->byte_fallback_ = parts.byte_fallback;
  sp->types_ = std::move(parts.types);
  sp->scores_ = parts.algorithm == Algorithm::unigram ? std::move(parts.scores) : std::vector<float>(n, 0.f);
  sp->blob_.reserve(bytes);
  sp->starts_.reserve(n + 1);
  sp->starts_.push_back(0);
  for (const auto& p : parts.pieces) {
    if (p.empty()) return bad("model.vocab", "the vocabulary has an empty token");
    sp->blob_ += p;
    sp->starts_.push_back(static_cast<uint32_t>(sp->blob_.size()));
  }
  sp->byte_ids_.fill(-1);
  if (parts.algorithm == Algorithm::bpe) {
    static constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581
    sp->cut_before_spaces_ = true;
    for (const auto& p : parts.pieces) {
      const std::size_t at = p.find(kSpace, 1);
      if (at == std::string::npos) continue;
      bool only_spaces = p.size() % 3 == 0;
      for (std::size_t k = 0; only_spaces && k < p.size(); k += 3) only_spaces = p.compare(k, 3, kSpace) == 0;
      if (!only_spaces) sp->cut_before_spaces_ = false;
    }
  }
  // Hugging Face's Unigram: the unknown score is min over the whole vocabulary - 10.
  sp->min_score_ = FLT_MAX;
  for (std::size_t i = 0; i < n; ++i) {
    if (sp->types_[i] == PieceType::unknown) {
      if (sp->unk_ >= 0) return bad("model.unk_id", "two unknown tokens");
      sp->unk_ = static_cast<int32_t>(i);
    }
    if (sp->types_[i] == PieceType::byte) sp->byte_ids_[byte_of_piece(sp->piece(i))] = static_cast<int32_t>(i);
    sp->min_score_ = std::min(sp->min_score_, sp->scores_[i]);
  }
  const bool all_bytes = std::find(sp->byte_ids_.begin(), sp->byte_ids_.end(), -1) == sp->byte_ids_.end();
  if (sp->unk_ < 0 && !(sp->byte_fallback_ && all_bytes)) {
    return bad(parts.algorithm == Algorithm::unigram ? "model.unk_id" : "model.unk_token",
               "the model has no unknown token (and no byte fallback for every byte)");
  }
  // The decoders: Metaspace / Strip drop the first token's leading space when a prefix was added.
  sp->add_dummy_prefix_ = !parts.pipeline.prepend.empty() || parts.pipeline.metaspace >= 1;
  sp->remove_extra_whitespaces_ = false;
  sp->charsmap_blob_ = std::move(parts.charsmap);
  s = sp->charsmap_.parse(sp->charsmap_blob_, "normalizer.precompiled_charsmap");
  if (s.ok()) s = sp->build_trie();
  if (!s.ok()) return s;
  std::size_t capacity = 16;
  while (capacity < 2 * parts.merges.size()) capacity *= 2;
  if (!parts.merges.empty()) sp->merges_.assign(capacity, Merge{});
  sp->merge_mask_ = capacity - 1;
  while ((std::size_t(1) << (64 - sp->merge_shift_)) < capacity) --sp->merge_shift_;
  for (std::size_t r = 0; r < parts.merges.size(); ++r) {
    const auto [a, b] = parts.merges[r];
    if (a < 0 || b < 0 || static_cast<std::size_t>(a) >= n || static_cast<std::size_t>(b) >= n) {
      return bad("model.merges", "merge " + std::to_string(r) + " names an id outside the vocabulary");
    }
    const int32_t merged = sp->find(std::string(sp->piece(a)) + std::string(sp->piece(b)));
    if (merged < 0) return bad("model.merges", "merge " + std::to_string(r) + ": the merged token is not in the vocabulary");
    const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b);
    uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> sp->merge_shift_;
    while (sp->merges_[i].key != ~uint64_t(0) && sp->merges_[i].key != key) i = (i + 1) & sp->merge_mask_;
    if (sp->merges_[i].key == key) continue;  // a repeated merge keeps its first (best) rank
    sp->merges_[i] = {key, static_cast<int32_t>(std::min<std::size_t>(r, INT32_MAX)), merged};
  }
  out = std::move(sp);
  return Status::success();
}

Status SentencePiece::normalize_hf(std::string_view text, bool first, std::string& normalized, std::vector<uint32_t>& nb,
                                   std::vector<uint32_t>& ne, std::vector<std::pair<uint32_t, uint32_t>>& words) const {
  const Pipeline& p = pipeline_;
  const std::size_t n = text.size();
  Status s = check_heap("text", 9.0 * 3 * static_cast<double>(n) * 4 + 64);
  if (!s.ok()) return s;
  const auto* t = reinterpret_cast<const unsigned char*>(text.data());
  const std::string_view space(kSpace, 3);
  // Bytes [from, to) of `in` appended to `to_out`, with Replace(" ", "\u2581") when `replace`.
  const auto escape = [&](const Aligned& in, std::size_t from, std::size_t to, Aligned& to_out, bool replace) {
    for (std::size_t i = from; i < to; ++i) {
      if (in.s[i] == ' ' && replace) to_out.put(space, in.b[i], in.e[i]);
      else to_out.put_from(in, i, i + 1);
    }
  };
  using Step = Pipeline::Step;
  const std::vector<Step>& steps = p.steps;
  // Llama's form (Prepend, Replace(" "), either or both, in that order): one pass; the prepended
  // text takes an empty span where the text starts.
  const bool replace_only = steps.size() == 1 && steps[0] == Step::replace_spaces;
  const bool simple = steps.empty() || replace_only || (steps[0] == Step::prepend && (steps.size() == 1 ||
                                                        (steps.size() == 2 && steps[1] == Step::replace_spaces)));
  const bool replace = replace_only || (simple && steps.size() == 2);
  Aligned a;
  a.reserve(n + 8);
  if (simple && !p.prepend.empty() && !replace_only && n > 0) {
    Aligned pre;
    pre.put(p.prepend, 0, 0);
    escape(pre, 0, pre.s.size(), a, replace);
  }
  for (std::size_t at = 0; at < n;) {
    const std::size_t len = std::max<std::size_t>(1, utf8::decode(t + at, n - at));
    if (replace && t[at] == ' ') a.put(space, static_cast<uint32_t>(at), static_cast<uint32_t>(at + 1));
    else a.put(text.substr(at, len), static_cast<uint32_t>(at), static_cast<uint32_t>(at + len));
    at += len;
  }
  // Otherwise each step in turn, from `a` into `c`; each character keeps the input span it came from.
  Aligned c;
  for (std::size_t k = 0; !simple && k < steps.size(); ++k) {
    const Step step = steps[k];
    const std::size_t m = a.s.size();
    const auto* u = reinterpret_cast<const unsigned char*>(a.s.data());
    c = Aligned();
    c.reserve(3 * m + 3 * p.prepend.size() + 8);
    if (step == Step::charsmap) {
      // Precompiled: the longest rule at each character (spanning what it replaces), else the character.
      for (std::size_t at = 0; at < m;) {
        std::size_t key = 0;
        std::string_view rep;
        if (charsmap_.longest_match(a.s.data() + at, m - at, key, rep)) {
          if (c.s.size() + rep.size() > kMaxExpansion * m + 8) {
            return Status::error(Code::invalid_argument, "tokenizer.json",
                                 "tokenizer.json: the charsmap grows the text more than " + std::to_string(kMaxExpansion) + " times");
          }
          c.put(rep, a.b[at], a.e[at + key - 1]);
          at += key;
        } else {
          const std::size_t len = std::min(m - at, std::max<std::size_t>(1, utf8::decode(u + at, m - at)));
          c.put_from(a, at, at + len);
          at += len;
        }
      }
    } else if (step == Step::collapse || step == Step::collapse_meta) {
      // Replace(" {2,}", " " or "\u2581"): a run of spaces is one character spanning the run.
      for (std::size_t i = 0; i < m;) {
        std::size_t j = i;
        while (j < m && a.s[j] == ' ') ++j;
        if (j - i >= 2) {
          c.put(step == Step::collapse ? std::string_view(" ") : space, a.b[i], a.e[j - 1]);
          i = j;
        } else {
          c.put_from(a, i, i + 1);
          ++i;
        }
      }
    } else if (step == Step::strip_left || step == Step::strip_right) {
      // Strip: leading or trailing Unicode whitespace.
      std::size_t from = 0, to = m, len = 0;
      if (step == Step::strip_left) {
        while (from < to && whitespace_at(u + from, to - from, len)) from += len;
      } else {
        to = 0;  // the end of the last character that is not whitespace
        for (std::size_t i = 0; i < m;) {
          const bool ws = whitespace_at(u + i, m - i, len);
          i += len;
          if (!ws) to = i;
        }
      }
      c.put_from(a, from, to);
    } else if (step == Step::prepend) {
      if (m > 0) c.put(p.prepend, a.b[0], a.b[0]);
      c.put_from(a, 0, m);
    } else {
      escape(a, 0, m, c, true);
    }
    std::swap(a, c);
  }
  // Pre-tokenizers: the owner's steps (split) or WhitespaceSplit, then Metaspace on each word.
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  if (p.split) {
    s = p.split(a.s, pieces);
    if (!s.ok()) return s;
  } else if (p.whitespace_split) {
    const auto* u = reinterpret_cast<const unsigned char*>(a.s.data());
    std::size_t start = 0, len = 0;
    bool in_word = false;
    for (std::size_t i = 0; i < a.s.size(); i += len) {
      const bool ws = whitespace_at(u + i, a.s.size() - i, len);
      if (ws && in_word) pieces.push_back({start, i});
      if (!ws && !in_word) start = i;
      in_word = !ws;
    }
    if (in_word) pieces.push_back({start, a.s.size()});
  } else if (!a.s.empty()) {
    pieces.push_back({0, a.s.size()});
  }
  Aligned out;
  out.reserve(a.s.size() * 3 + 3 * pieces.size() + 3);
  words.clear();
  const bool sliced = p.split || p.whitespace_split;  // pieces are words of the text, not all of it
  for (std::size_t w = 0; w < pieces.size(); ++w) {
    const auto [from, to] = pieces[w];
    if (from == to) continue;
    const std::size_t word_start = out.s.size();
    if (p.metaspace < 0) {
      out.put_from(a, from, to);
      words.push_back({static_cast<uint32_t>(word_start), static_cast<uint32_t>(out.s.size())});
      continue;
    }
    const bool starts_with_space = a.s.compare(from, 3, space) == 0 || a.s[from] == ' ';
    // prepend_scheme "first": on the word that starts where the input does (Hugging Face's
    // offsets_original().0 == 0): the first segment's text when nothing split it, else the word
    // whose first character is the input's first.
    const bool at_start = first && (sliced ? a.b[from] == 0 : w == 0);
    if ((p.metaspace == 2 || (p.metaspace == 1 && at_start)) && !starts_with_space) out.put(space, a.b[from], a.b[from]);
    escape(a, from, to, out, true);  // Metaspace's own Replace(" ", "\u2581")
    if (!p.metaspace_split) {
      words.push_back({static_cast<uint32_t>(word_start), static_cast<uint32_t>(out.s.size())});
      continue;
    }
    // split: a new word at each "\u2581" (merged with what follows it)
    std::size_t ws = word_start;
    for (std::size_t i = word_start + 1; i + 3 <= out.s.size(); ++i) {
      if (out.s.compare(i, 3, space) == 0) {
        words.push_back({static_cast<uint32_t>(ws), static_cast<uint32_t>(i)});
        ws = i;
        i += 2;
      }
    }
    if (ws < out.s.size()) words.push_back({static_cast<uint32_t>(ws), static_cast<uint32_t>(out.s.size())});
  }
  normalized = std::move(out.s);
  nb = std::move(out.b);
  ne = std::move(out.e);
  return Status::success();
}

Status SentencePiece::encode_hf(const char* text, std::size_t length, bool first, std::vector<int32_t>& out) const {
  std::string normalized;
  std::vector<uint32_t> nb, ne;
  std::vector<std::pair<uint32_t, uint32_t>> words;
  Status s = normalize_hf(std::string_view(text, length), first, normalized, nb, ne, words);
  if (!s.ok() || normalized.empty()) return s;
  s = check_heap("text", 96.0 * static_cast<double>(normalized.size()) + 65536);
  if (!s.ok()) return s;
  if (algorithm_ == Algorithm::bpe && cut_before_spaces_) {
    // Stretches of each word, cut before every "▁" that follows another character.
    std::vector<std::pair<uint32_t, uint32_t>> stretches;
    stretches.reserve(words.size());
    const auto* t = reinterpret_cast<const unsigned char*>(normalized.data());
    const auto space_at = [t](uint32_t i) { return t[i] == 0xE2 && t[i + 1] == 0x96 && t[i + 2] == 0x81; };
    for (const auto& [wb, we] : words) {
      uint32_t from = wb;
      for (uint32_t i = wb + 1; i + 3 <= we; ++i) {
        if (space_at(i) && !(i >= wb + 3 && space_at(i - 3))) {
          stretches.push_back({from, i});
          from = i;
          i += 2;
        }
      }
      stretches.push_back({from, we});
    }
    words.swap(stretches);
  }
  std::vector<Span> spans;
  for (const auto& [wb, we] : words) {
    spans.clear();
    const std::string_view word(normalized.data() + wb, we - wb);
    if (algorithm_ == Algorithm::unigram) unigram(word, spans);
    else bpe(word, spans);
    bool prev_unk = false;
    for (const Span& p : spans) {
      const uint32_t from = wb + p.begin, to = wb + p.end;
      const auto begin = static_cast<int32_t>(nb[from]), end = static_cast<int32_t>(ne[to - 1]);
      // Byte fallback, character by character: its bytes when all are tokens, else unknown.
      const bool is_unk = p.id == unk_ || p.id < 0;
      if (is_unk && byte_fallback_) {
        for (uint32_t k = from; k < to;) {
          const std::size_t len = std::min<std::size_t>(utf8::lead_length(static_cast<unsigned char>(normalized[k])), to - k);
          bool all = true;
          for (std::size_t j = 0; j < len; ++j) all = all && byte_ids_[static_cast<unsigned char>(normalized[k + j])] >= 0;
          const auto cb = static_cast<int32_t>(nb[k]), ce = static_cast<int32_t>(ne[k + len - 1]);
          if (all) {
            for (std::size_t j = 0; j < len; ++j) out.insert(out.end(), {byte_ids_[static_cast<unsigned char>(normalized[k + j])], cb, ce});
            prev_unk = false;
          } else if (prev_unk) {
            out.back() = ce;
          } else {
            out.insert(out.end(), {unk_, cb, ce});
            prev_unk = true;
          }
          k += static_cast<uint32_t>(len);
        }
        continue;
      }
      if (is_unk && prev_unk) {
        out.back() = end;  // fuse_unk
      } else {
        out.insert(out.end(), {is_unk ? unk_ : p.id, begin, end});
      }
      prev_unk = is_unk;
    }
  }
  return Status::success();
}

}  // namespace attnkit

// SentencePiece models (attnkit/text/sentencepiece.hpp): the trie over the pieces, the library's
// normalisation, Unigram (Viterbi) and BPE segmentation, encode and decode. The .model reader is
// sentencepiece_model.cpp; Hugging Face's form of the models, sentencepiece_hf.cpp.
#include "attnkit/text/sentencepiece.hpp"

#include <algorithm>
#include <numeric>
#include <functional>
#include <queue>
#include <unordered_map>
#include <utility>

#include "attnkit/core/scratch.hpp"
#include "attnkit/text/utf8.hpp"

#include "sentencepiece_internal.hpp"

namespace attnkit {

using sentencepiece_detail::bad;
using sentencepiece_detail::kSpace;

namespace {

constexpr float kUnkPenalty = 10.0f;

}  // namespace

namespace sentencepiece_detail {

Status bad(const std::string& where, const std::string& message) {
  return Status::error(Code::invalid_argument, where, "tokenizer.model: " + message);
}

}  // namespace sentencepiece_detail

int SentencePiece::byte_of_piece(std::string_view p) {
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = p[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

Status SentencePiece::build_trie() {
  const std::size_t n = types_.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return piece(a) < piece(b); });
  for (std::size_t k = 1; k < n; ++k) {
    if (piece(order[k]) == piece(order[k - 1])) {
      const auto i = std::max(order[k], order[k - 1]);
      return bad("pieces[" + std::to_string(i) + "]", "piece " + std::string(piece(i)) + " is already defined (id " +
                                                       std::to_string(std::min(order[k], order[k - 1])) + ")");
    }
  }
  ids_.reserve(blob_.size() + 1);
  first_.reserve(blob_.size() + 2);
  labels_.reserve(blob_.size());
  children_.reserve(blob_.size());
  // Breadth first: node `q` covers the sorted pieces [lo, hi) that share its `depth`-byte prefix,
  // so each node's children are created together and stay contiguous.
  struct Item {
    uint32_t lo, hi, depth;
  };
  std::vector<Item> queue;
  queue.reserve(blob_.size() + 1);
  queue.push_back({0, static_cast<uint32_t>(n), 0});
  ids_.push_back(-1);
  for (std::size_t q = 0; q < queue.size(); ++q) {
    auto [lo, hi, depth] = queue[q];
    first_.push_back(static_cast<uint32_t>(labels_.size()));
    if (lo < hi && piece(order[lo]).size() == depth) ids_[q] = static_cast<int32_t>(order[lo++]);
    while (lo < hi) {
      const auto c = static_cast<unsigned char>(piece(order[lo])[depth]);
      uint32_t end = lo + 1;
      while (end < hi && static_cast<unsigned char>(piece(order[end])[depth]) == c) ++end;
      labels_.push_back(c);
      children_.push_back(static_cast<uint32_t>(queue.size()));
      if (q == 0) root_[c] = static_cast<uint32_t>(queue.size());
      queue.push_back({lo, end, depth + 1});
      ids_.push_back(-1);
      lo = end;
    }
  }
  first_.push_back(static_cast<uint32_t>(labels_.size()));
  return Status::success();
}

uint32_t SentencePiece::child(uint32_t node, unsigned char c) const {
  if (node == 0) return root_[c];
  const uint32_t lo = first_[node], hi = first_[node + 1];
  if (hi - lo <= 8) {
    for (uint32_t k = lo; k < hi; ++k) {
      if (labels_[k] == c) return children_[k];
    }
    return 0;
  }
  const auto* b = labels_.data();
  const auto* it = std::lower_bound(b + lo, b + hi, c);
  return it != b + hi && *it == c ? children_[it - b] : 0;
}

int32_t SentencePiece::find(std::string_view s) const {
  uint32_t node = 0;
  for (const char c : s) {
    node = child(node, static_cast<unsigned char>(c));
    if (node == 0) return -1;
  }
  return ids_[node];
}

std::size_t SentencePiece::user_symbol(const char* s, std::size_t n) const {
  std::size_t best = 0;
  uint32_t node = 0;
  for (std::size_t i = 0; i < n; ++i) {
    node = child(node, static_cast<unsigned char>(s[i]));
    if (node == 0) break;
    if (ids_[node] >= 0 && types_[ids_[node]] == PieceType::user_defined) best = i + 1;
  }
  return best;
}

Status SentencePiece::normalize(std::string_view input, std::string& normalized, std::vector<uint32_t>& norm_to_orig) const {
  normalized.clear();
  norm_to_orig.clear();
  if (input.empty()) return Status::success();
  const std::size_t cap = kMaxExpansion * input.size() + 8;
  // The library's NormalizePrefix: (replacement, bytes consumed) at the start of `rest`.
  const auto prefix = [&](std::string_view rest) -> std::pair<std::string_view, std::size_t> {
    if (has_user_symbols_) {
      const std::size_t m = user_symbol(rest.data(), rest.size());
      if (m) return {rest.substr(0, m), m};
    }
    std::size_t key = 0;
    std::string_view rep;
    if (charsmap_.longest_match(rest.data(), rest.size(), key, rep)) return {rep, key};
    const std::size_t len = utf8::decode(reinterpret_cast<const unsigned char*>(rest.data()), rest.size());
    if (len == 0) return {std::string_view("\xEF\xBF\xBD", 3), 1};
    return {rest.substr(0, len), len};
  };
  uint32_t consumed = 0;
  if (remove_extra_whitespaces_) {
    while (!input.empty()) {
      const auto p = prefix(input);
      if (p.first != " ") break;
      input.remove_prefix(p.second);
      consumed += static_cast<uint32_t>(p.second);
    }
  }
  if (input.empty()) return Status::success();
  Status s = check_heap("text", 5.0 * 3 * static_cast<double>(input.size()) + 64);
  if (!s.ok()) return s;
  normalized.reserve(input.size() * 3);
  norm_to_orig.reserve(input.size() * 3);
  const auto put = [&](std::string_view bytes) -> Status {
    if (normalized.size() + bytes.size() > cap) {
      return Status::error(Code::invalid_argument, "tokenizer.model",
                           "tokenizer.model: the charsmap grows the text more than " + std::to_string(kMaxExpansion) + " times");
    }
    if (normalized.size() + bytes.size() > normalized.capacity()) {
      Status h = check_heap("text", 5.0 * 2 * static_cast<double>(normalized.capacity() + bytes.size()));
      if (!h.ok()) return h;
    }
    normalized.append(bytes);
    norm_to_orig.insert(norm_to_orig.end(), bytes.size(), consumed);
    return Status::success();
  };
  const std::string_view space = escape_whitespaces_ ? std::string_view(kSpace, 3) : std::string_view(" ", 1);
  if (!suffix_ && add_dummy_prefix_ && !(s = put(space)).ok()) return s;
  bool prev_space = remove_extra_whitespaces_;
  while (!input.empty()) {
    auto [sp, len] = prefix(input);
    while (prev_space && !sp.empty() && sp[0] == ' ') sp.remove_prefix(1);
    if (!sp.empty()) {
      std::size_t k = 0;
      while (k < sp.size()) {  // runs without spaces at once, each space as `space`
        std::size_t e = escape_whitespaces_ ? sp.find(' ', k) : std::string_view::npos;
        if (e == std::string_view::npos) e = sp.size();
        if (e > k && !(s = put(sp.substr(k, e - k))).ok()) return s;
        if (e < sp.size() && !(s = put(space)).ok()) return s;
        k = e + 1;
      }
      prev_space = sp.back() == ' ';
    }
    consumed += static_cast<uint32_t>(len);
    input.remove_prefix(len);
    if (!remove_extra_whitespaces_) prev_space = false;
  }
  if (remove_extra_whitespaces_) {
    while (normalized.size() >= space.size() &&
           normalized.compare(normalized.size() - space.size(), space.size(), space) == 0) {
      const std::size_t length = normalized.size() - space.size();
      consumed = norm_to_orig[length];
      normalized.resize(length);
      norm_to_orig.resize(length);
    }
  }
  if (suffix_ && add_dummy_prefix_ && !(s = put(space)).ok()) return s;
  norm_to_orig.push_back(consumed);
  return Status::success();
}

void SentencePiece::unigram(std::string_view text, std::vector<Span>& out) const {
  // The library's EncodeOptimized: best[e] = the best path over text[0, e), kept as its last
  // piece (id, start) and total score; pieces found by walking the trie from each character.
  // The library keeps totals in float; Hugging Face's Unigram in double (hf_).
  struct Best {
    int32_t id = -1;
    double score = 0;
    int32_t start = -1;
  };
  const std::size_t n = text.size();
  std::vector<Best> best(n + 1);
  const auto round = [this](double v) { return hf_ ? v : static_cast<double>(static_cast<float>(v)); };
  const double unk_score = hf_ ? static_cast<double>(min_score_) - kUnkPenalty : static_cast<double>(min_score_ - kUnkPenalty);
  const auto* t = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t at = 0;
  while (at < n) {
    const double here = best[at].score;
    const std::size_t mblen = std::min(utf8::lead_length(t[at]), n - at);
    bool single = false;
    uint32_t node = 0;
    for (std::size_t k = at; k < n; ++k) {
      node = child(node, t[k]);
      if (node == 0) break;
      const int32_t id = ids_[node];
      if (id < 0) continue;
      const PieceType type = types_[id];
      if (type != PieceType::normal && type != PieceType::user_defined) continue;  // unused, control, byte, unk
      const std::size_t length = k + 1 - at;
      // As the library: a user-defined symbol always wins (computed in double, stored as float).
      const double score = type == PieceType::user_defined ? static_cast<double>(length * max_score_) - 0.1
                                                           : static_cast<double>(scores_[id]);
      const double candidate = score + here;
      Best& b = best[k + 1];
      if (b.start < 0 || candidate > b.score) b = {id, round(candidate), static_cast<int32_t>(at)};
      if (length == mblen) single = true;
    }
    if (!single) {
      Best& b = best[at + mblen];
      const double candidate = round(unk_score + here);
      if (b.start < 0 || candidate > b.score) b = {unk_, candidate, static_cast<int32_t>(at)};
    }
    at += mblen;
  }
  const std::size_t first = out.size();
  for (std::size_t e = n; e > 0;) {
    const Best& b = best[e];
    out.push_back({static_cast<uint32_t>(b.start), static_cast<uint32_t>(e), b.id});
    e = static_cast<std::size_t>(b.start);
  }
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
}

// Hugging Face's BPE (listed merges of two known tokens, lowest rank first, leftmost on ties) on
// the symbols bpe() split the text into. The agenda holds one 64-bit key per candidate,
// rank << 32 | left: a pair is still valid when its left symbol is alive and the merge of it and
// its current right neighbour has that rank (ranks are unique, so the same two tokens).
void SentencePiece::bpe_ranked(std::vector<BpeSymbol>& symbols, std::vector<Span>& out) const {
  // A min-heap of rank << 32 | left in a vector reused between calls.
  static thread_local std::vector<uint64_t> heap;
  heap.clear();
  const TrimAfterCall<std::vector<uint64_t>> trim{heap};
  struct Agenda {
    std::vector<uint64_t>& h;
    bool empty() const { return h.empty(); }
    uint64_t top() const { return h.front(); }
    void push(uint64_t x) {
      h.push_back(x);
      std::push_heap(h.begin(), h.end(), std::greater<uint64_t>());
    }
    void pop() {
      std::pop_heap(h.begin(), h.end(), std::greater<uint64_t>());
      h.pop_back();
    }
  } agenda{heap};
  const auto consider = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0 || symbols[l].freeze || symbols[r].freeze) return;
    const int32_t a = symbols[l].id, b = symbols[r].id;
    if (a < 0 || b < 0) return;
    if (const Merge* m = find_merge(a, b)) agenda.push(static_cast<uint64_t>(m->rank) << 32 | static_cast<uint32_t>(l));
  };
  for (std::size_t i = 1; i < symbols.size(); ++i) consider(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!agenda.empty()) {
    const uint64_t top = agenda.top();
    agenda.pop();
    const auto left = static_cast<int32_t>(top & 0xFFFFFFFFu);
    BpeSymbol& l = symbols[left];
    if (l.size == 0 || l.next < 0) continue;
    BpeSymbol& r = symbols[l.next];
    if (l.freeze || r.freeze || l.id < 0 || r.id < 0) continue;
    const Merge* m = find_merge(l.id, r.id);
    if (!m || static_cast<uint64_t>(m->rank) != top >> 32) continue;  // stale
    l.size += r.size;
    l.id = m->merged;
    const int32_t gone = l.next;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = left;
    symbols[gone].size = 0;
    consider(l.prev, left);
    consider(left, l.next);
  }
  for (int32_t i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
    const BpeSymbol& y = symbols[i];
    out.push_back({y.begin, y.begin + y.size, y.id < 0 ? unk_ : y.id});
  }
}

void SentencePiece::bpe(std::string_view text, std::vector<Span>& out) const {
  using Symbol = BpeSymbol;
  struct Pair {
    double score;  // the merged piece's score
    int32_t left, right;
    uint32_t size;
    bool operator<(const Pair& o) const { return score < o.score || (score == o.score && left > o.left); }
  };
  // Reused between calls (Hugging Face's form calls this once per stretch of a word or two).
  static thread_local std::vector<Symbol> symbols;
  symbols.clear();
  const TrimAfterCall<std::vector<Symbol>> trim{symbols};
  symbols.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    std::size_t len = has_user_symbols_ ? user_symbol(text.data() + at, text.size() - at) : 0;
    const bool freeze = len > 0;
    if (!freeze) len = std::min(utf8::lead_length(static_cast<unsigned char>(text[at])), text.size() - at);
    const auto i = static_cast<int32_t>(symbols.size());
    const int32_t id = hf_ ? find(text.substr(at, len)) : -1;
    symbols.push_back({i - 1, at + len < text.size() ? i + 1 : -1, static_cast<uint32_t>(at), static_cast<uint32_t>(len), freeze, id});
    at += len;
  }
  if (hf_) {  // Hugging Face: only listed merges of two known tokens, by rank
    bpe_ranked(symbols, out);
    return;
  }
  std::priority_queue<Pair> agenda;
  // Merged pieces of type UNUSED, with the two pieces they came from (to split them back).
  std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>> unmerge;
  const auto view = [&](const Symbol& s) { return text.substr(s.begin, s.size); };
  const auto consider = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0 || symbols[l].freeze || symbols[r].freeze) return;
    const std::string_view joined = text.substr(symbols[l].begin, symbols[l].size + symbols[r].size);
    const int32_t id = find(joined);
    if (id < 0) return;
    const PieceType type = types_[id];
    if (type != PieceType::normal && type != PieceType::user_defined && type != PieceType::unused) return;
    agenda.push({static_cast<double>(scores_[id]), l, r, static_cast<uint32_t>(joined.size())});
    if (type == PieceType::unused) unmerge[joined] = {view(symbols[l]), view(symbols[r])};
  };
  for (std::size_t i = 1; i < symbols.size(); ++i) consider(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!agenda.empty()) {
    const Pair top = agenda.top();
    agenda.pop();
    Symbol& l = symbols[top.left];
    Symbol& r = symbols[top.right];
    // Stale: a side was merged away or grew since the pair was queued (the library's test).
    if (l.size == 0 || r.size == 0 || l.size + r.size != top.size) continue;
    l.size += r.size;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = top.left;
    r.size = 0;
    consider(l.prev, top.left);
    consider(top.left, l.next);
  }
  // Resegment: an UNUSED piece is replaced by the pieces it was merged from, recursively.
  std::vector<std::string_view> stack;
  for (int32_t i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
    stack.push_back(view(symbols[i]));
    while (!stack.empty()) {
      const std::string_view w = stack.back();
      stack.pop_back();
      int32_t id = find(w);
      if (id >= 0 && types_[id] == PieceType::unused) {
        const auto it = unmerge.find(w);
        if (it != unmerge.end()) {
          stack.push_back(it->second.second);
          stack.push_back(it->second.first);
          continue;
        }
      }
      if (id < 0) id = unk_;
      const auto begin = static_cast<uint32_t>(w.data() - text.data());
      out.push_back({begin, begin + static_cast<uint32_t>(w.size()), id});
    }
  }
}

Status SentencePiece::encode(const char* text, std::size_t length, std::vector<int32_t>& out, bool first) const {
  if (length > kMaxTextBytes) {
    return Status::error(Code::out_of_range, "text", "a text is at most 2^28 bytes, got " + std::to_string(length));
  }
  if (hf_) return encode_hf(text, length, first, out);
  std::string normalized;
  std::vector<uint32_t> norm_to_orig;
  Status s = normalize(std::string_view(text, length), normalized, norm_to_orig);
  if (!s.ok() || normalized.empty()) return s;
  // Viterbi table (12 bytes per byte) or BPE symbols and agenda (about 60), spans, and the
  // output's triples (up to 4 pieces per byte with byte fallback).
  s = check_heap("text", 96.0 * static_cast<double>(normalized.size()) + 65536);
  if (!s.ok()) return s;
  std::vector<Span> spans;
  if (algorithm_ == Algorithm::unigram) unigram(normalized, spans);
  else bpe(normalized, spans);
  bool prev_unk = false;
  for (const Span& p : spans) {
    const bool is_unk = p.id == unk_;
    const auto begin = static_cast<int32_t>(norm_to_orig[p.begin]);
    const auto end = static_cast<int32_t>(norm_to_orig[p.end]);
    if (is_unk && byte_fallback_) {
      for (uint32_t k = p.begin; k < p.end; ++k) {  // all but the last byte piece are empty
        out.insert(out.end(), {byte_ids_[static_cast<unsigned char>(normalized[k])], begin, k + 1 == p.end ? end : begin});
      }
    } else if (is_unk && prev_unk) {
      out.back() = end;  // a run of unknown pieces is one unknown token
    } else {
      out.insert(out.end(), {p.id, begin, end});
    }
    prev_unk = is_unk;
  }
  return Status::success();
}

Status SentencePiece::decode(const int32_t* ids, std::size_t count, std::string& out, bool strip_first) const {
  out.clear();
  const std::size_t n = size();
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= n) {
      return Status::error(Code::out_of_range, "ids", "id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
                                                          " is outside [0, " + std::to_string(n) + ")");
    }
    bytes += std::max(piece(ids[i]).size(), unk_surface_.size()) + 3;
  }
  Status s = check_heap("ids", 2.0 * static_cast<double>(bytes) + 64);
  if (!s.ok()) return s;
  out.reserve(bytes);
  const bool strip_bos_space = strip_first && (add_dummy_prefix_ || remove_extra_whitespaces_);
  bool expect_bos_space = true, bos_space_seen = false;
  std::string run;  // consecutive byte pieces
  const auto flush = [&] {
    const auto* b = reinterpret_cast<const unsigned char*>(run.data());
    for (std::size_t k = 0; k < run.size();) {
      const std::size_t len = utf8::decode(b + k, run.size() - k);
      if (len == 0) {
        out += "\xEF\xBF\xBD";
        ++k;
      } else {
        out.append(run, k, len);
        k += len;
      }
    }
    run.clear();
  };
  for (std::size_t i = 0; i < count; ++i) {
    const auto id = static_cast<std::size_t>(ids[i]);
    const PieceType type = types_[id];
    if (type == PieceType::byte) {
      run.push_back(static_cast<char>(byte_of_piece(piece(id))));
      continue;
    }
    flush();
    if (bos_space_seen || !out.empty()) expect_bos_space = false;
    bos_space_seen = false;
    if (type == PieceType::control) continue;
    if (type == PieceType::unknown && !hf_) {
      out += unk_surface_;
      continue;
    }
    std::string_view p = piece(id);
    if (expect_bos_space && strip_bos_space && p.compare(0, 3, kSpace) == 0) {
      p.remove_prefix(3);
      bos_space_seen = !remove_extra_whitespaces_;
    }
    for (std::size_t k = 0; k < p.size();) {
      const std::size_t e = std::min(p.find(kSpace, k), p.size());
      out.append(p.substr(k, e - k));
      if (e < p.size()) out += ' ';
      k = e + 3;
    }
  }
  flush();
  return Status::success();
}

}  // namespace attnkit

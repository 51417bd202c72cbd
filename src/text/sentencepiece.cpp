#include "attnkit/text/sentencepiece.hpp"

#include <algorithm>
#include <cfloat>
#include <numeric>
#include <functional>
#include <queue>
#include <unordered_map>
#include <utility>

#include "attnkit/formats/protobuf.hpp"
#include "attnkit/core/scratch.hpp"
#include "attnkit/text/utf8.hpp"

namespace attnkit {

namespace {

constexpr char kSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
constexpr float kUnkPenalty = 10.0f;

Status bad(const std::string& where, const std::string& message) {
  return Status::error(Code::invalid_argument, where, "tokenizer.model: " + message);
}

}  // namespace

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

Status SentencePiece::from_model_proto(const char* data, std::size_t size, std::unique_ptr<SentencePiece>& out) {
  if (size > (std::size_t(1) << 31)) return bad("tokenizer.model", "the file is larger than 2 GiB");
  // Everything below is a small multiple of the file: pieces, scores and types (< 3 bytes each
  // per file byte), the charsmap copy, and the trie (about 13 bytes per piece byte, with its
  // build queue and sort order).
  Status s = check_heap("tokenizer.model", 48.0 * static_cast<double>(size) + 65536);
  if (!s.ok()) return s;
  std::unique_ptr<SentencePiece> sp(new SentencePiece());
  if (!sp) return Status::error(Code::out_of_memory, "tokenizer.model", "no memory for the tokenizer");
  sp->starts_.push_back(0);
  bool have_unk_spec = false;
  int64_t unk_spec = 0, bos_spec = 1, eos_spec = 2, pad_spec = -1;
  int64_t model_type = 1;
  std::string_view charsmap;
  const auto malformed = [&](const ProtoReader& r, const char* what) {
    return bad("tokenizer.model", std::string("malformed protobuf in ") + what + ": " + (r.error() ? r.error() : "?"));
  };
  ProtoReader top(data, size);
  while (top.next()) {
    if (top.field() == 1 && top.wire() == ProtoReader::bytes) {  // SentencePiece
      std::string_view piece;
      float score = 0;
      int64_t type = 1;
      ProtoReader r(top.data());
      while (r.next()) {
        if (r.field() == 1 && r.wire() == ProtoReader::bytes) piece = r.data();
        else if (r.field() == 2 && r.wire() == ProtoReader::fixed32) score = r.f32();
        else if (r.field() == 3 && r.wire() == ProtoReader::varint) type = static_cast<int64_t>(r.u64());
      }
      if (r.error()) return malformed(r, "pieces");
      const std::string where = "pieces[" + std::to_string(sp->types_.size()) + "]";
      if (piece.empty()) return bad(where, where + " is empty");
      if (type < 1 || type > 6) return bad(where, where + " has an unknown type " + std::to_string(type));
      if (sp->blob_.size() + piece.size() > UINT32_MAX) return bad(where, "the pieces exceed 4 GiB");
      sp->blob_.append(piece);
      sp->starts_.push_back(static_cast<uint32_t>(sp->blob_.size()));
      sp->scores_.push_back(score);
      sp->types_.push_back(static_cast<PieceType>(type));
    } else if (top.field() == 2 && top.wire() == ProtoReader::bytes) {  // TrainerSpec
      ProtoReader r(top.data());
      while (r.next()) {
        if (r.wire() == ProtoReader::varint) {
          const auto v = static_cast<int64_t>(static_cast<int32_t>(r.u64()));  // int32 fields, sign-extended
          switch (r.field()) {
            case 3: model_type = v; break;
            case 24: sp->suffix_ = r.u64() != 0; break;
            case 35: sp->byte_fallback_ = r.u64() != 0; break;
            case 40: unk_spec = v, have_unk_spec = true; break;
            case 41: bos_spec = v; break;
            case 42: eos_spec = v; break;
            case 43: pad_spec = v; break;
            default: break;
          }
        } else if (r.field() == 44 && r.wire() == ProtoReader::bytes) {
          sp->unk_surface_ = std::string(r.data());
        }
      }
      if (r.error()) return malformed(r, "trainer_spec");
    } else if (top.field() == 3 && top.wire() == ProtoReader::bytes) {  // NormalizerSpec
      ProtoReader r(top.data());
      while (r.next()) {
        if (r.field() == 2 && r.wire() == ProtoReader::bytes) charsmap = r.data();
        else if (r.field() == 3 && r.wire() == ProtoReader::varint) sp->add_dummy_prefix_ = r.u64() != 0;
        else if (r.field() == 4 && r.wire() == ProtoReader::varint) sp->remove_extra_whitespaces_ = r.u64() != 0;
        else if (r.field() == 5 && r.wire() == ProtoReader::varint) sp->escape_whitespaces_ = r.u64() != 0;
      }
      if (r.error()) return malformed(r, "normalizer_spec");
    }
  }
  if (top.error()) return malformed(top, "the model");
  (void)have_unk_spec;
  if (model_type != 1 && model_type != 2) {
    return bad("trainer_spec.model_type", "model_type " + std::to_string(model_type) +
                                              (model_type == 3 || model_type == 4 ? " (WORD or CHAR)" : "") +
                                              " is not supported: only UNIGRAM (1) and BPE (2)");
  }
  sp->algorithm_ = static_cast<Algorithm>(model_type);
  const std::size_t n = sp->types_.size();
  if (n == 0) return bad("pieces", "the model has no pieces");
  if (n > INT32_MAX / 2) return bad("pieces", "the model has too many pieces");

  // The library's checks (ModelInterface::InitializePieces), and the score range of NORMAL pieces.
  sp->min_score_ = FLT_MAX;
  sp->max_score_ = FLT_MIN;
  std::array<bool, 256> byte_found{};
  for (std::size_t i = 0; i < n; ++i) {
    const PieceType t = sp->types_[i];
    const std::string where = "pieces[" + std::to_string(i) + "]";
    if (t == PieceType::unknown) {
      if (sp->unk_ >= 0) return bad(where, "there are two unknown pieces (" + std::to_string(sp->unk_) + " and " + std::to_string(i) + ")");
      sp->unk_ = static_cast<int32_t>(i);
    } else if (t == PieceType::byte) {
      if (!sp->byte_fallback_) return bad(where, "byte piece " + std::string(sp->piece(i)) + " although byte_fallback is false");
      const int b = byte_of_piece(sp->piece(i));
      if (b < 0) return bad(where, "byte piece " + std::string(sp->piece(i)) + " is not of the form <0xAB>");
      byte_found[b] = true;
      sp->byte_ids_[b] = static_cast<int32_t>(i);
    } else if (t == PieceType::normal) {
      sp->min_score_ = std::min(sp->min_score_, sp->scores_[i]);
      sp->max_score_ = std::max(sp->max_score_, sp->scores_[i]);
    } else if (t == PieceType::user_defined) {
      sp->has_user_symbols_ = true;
    }
  }
  if (sp->unk_ < 0) return bad("pieces", "the model has no unknown piece (type UNKNOWN)");
  if (sp->byte_fallback_ && std::find(byte_found.begin(), byte_found.end(), false) != byte_found.end()) {
    return bad("pieces", "byte_fallback is true but the 256 byte pieces <0x00>..<0xFF> are not all there");
  }
  const auto id_or_none = [n](int64_t v) { return v >= 0 && static_cast<std::size_t>(v) < n ? static_cast<int32_t>(v) : -1; };
  sp->bos_ = id_or_none(bos_spec);
  sp->eos_ = id_or_none(eos_spec);
  sp->pad_ = id_or_none(pad_spec);
  (void)unk_spec;
  sp->charsmap_blob_ = std::string(charsmap);
  s = sp->charsmap_.parse(sp->charsmap_blob_, "normalizer_spec.precompiled_charsmap");
  if (!s.ok()) return s;
  s = sp->build_trie();
  if (!s.ok()) return s;
  out = std::move(sp);
  return Status::success();
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

// ------------------------------------------------------------------------------ from tokenizer.json

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
  // Prepend(s), then the Replace that follows it: s takes an empty span where the text starts.
  const auto prepend = [&](uint32_t at, Aligned& to_out) {
    Aligned pre;
    pre.put(p.prepend, at, at);
    escape(pre, 0, pre.s.size(), to_out, p.replace_spaces);
  };
  // Llama's form (no charsmap, no collapsing or stripping): Prepend and Replace(" ") in one pass.
  Aligned a;
  a.reserve(n + 8);
  const bool simple = charsmap_.empty() && !p.collapse_spaces && !p.strip_left && !p.strip_right;
  if (simple && !p.prepend.empty() && n > 0) prepend(0, a);
  for (std::size_t at = 0; simple && at < n;) {
    const std::size_t len = std::max<std::size_t>(1, utf8::decode(t + at, n - at));
    if (p.replace_spaces && t[at] == ' ') a.put(space, static_cast<uint32_t>(at), static_cast<uint32_t>(at + 1));
    else a.put(text.substr(at, len), static_cast<uint32_t>(at), static_cast<uint32_t>(at + len));
    at += len;
  }
  // Precompiled: the longest rule at each character, else the character itself.
  for (std::size_t at = 0; !simple && at < n;) {
    std::size_t key = 0;
    std::string_view rep;
    if (charsmap_.longest_match(text.data() + at, n - at, key, rep)) {
      if (a.s.size() + rep.size() > kMaxExpansion * n + 8) {
        return Status::error(Code::invalid_argument, "tokenizer.json",
                             "tokenizer.json: the charsmap grows the text more than " + std::to_string(kMaxExpansion) + " times");
      }
      a.put(rep, static_cast<uint32_t>(at), static_cast<uint32_t>(at + key));
      at += key;
    } else {
      const std::size_t len = std::max<std::size_t>(1, utf8::decode(t + at, n - at));
      a.put(text.substr(at, len), static_cast<uint32_t>(at), static_cast<uint32_t>(at + len));
      at += len;
    }
  }
  // Replace(" {2,}", " "): a run of spaces is one space spanning the run.
  if (p.collapse_spaces) {
    Aligned c;
    c.reserve(a.s.size() * 3 + 3);
    for (std::size_t i = 0; i < a.s.size(); ++i) {
      if (a.s[i] == ' ' && i > 0 && a.s[i - 1] == ' ') {
        c.e.back() = a.e[i];
        continue;
      }
      c.put_from(a, i, i + 1);
    }
    a = std::move(c);
  }
  // Strip: leading / trailing Unicode whitespace.
  if (p.strip_left || p.strip_right) {
    std::size_t from = 0, to = a.s.size(), len = 0;
    const auto* u = reinterpret_cast<const unsigned char*>(a.s.data());
    if (p.strip_left) {
      while (from < to && whitespace_at(u + from, to - from, len)) from += len;
    }
    if (p.strip_right) {
      std::size_t last = from;  // the end of the last character that is not whitespace
      for (std::size_t i = from; i < to;) {
        const bool ws = whitespace_at(u + i, to - i, len);
        i += len;
        if (!ws) last = i;
      }
      to = last;
    }
    Aligned c;
    c.reserve(a.s.size() * 3 + 3);
    c.put_from(a, from, to);
    a = std::move(c);
  }
  // Prepend(s) on a non-empty text, then Replace(" ", "\u2581").
  if ((!p.prepend.empty() || p.replace_spaces) && !a.s.empty() && !simple) {
    Aligned c;
    c.reserve(a.s.size() * 3 + 3 * p.prepend.size() + 3);
    if (!p.prepend.empty()) prepend(a.b[0], c);
    escape(a, 0, a.s.size(), c, p.replace_spaces);
    a = std::move(c);
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

// The BPE model: its merges (read from tokenizer.json or vocab.bpe) and the merge of a word, by rank.
#include <queue>

#include "tokenizer_json.hpp"

namespace attnkit {

using namespace detail;

namespace {

// A merge line "left right", split at the first space; false without one.
bool split_merge(const std::string& line, std::string& left, std::string& right) {
  const std::size_t sp = line.find(' ');
  if (sp == std::string::npos) return false;
  left = line.substr(0, sp);
  right = line.substr(sp + 1);
  return true;
}

}  // namespace

namespace detail {

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

}  // namespace detail

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

}  // namespace attnkit

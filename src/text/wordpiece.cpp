// The WordPiece model: greedy longest-match-first over the vocabulary, candidates found by hash.
#include <algorithm>

#include "attnkit/text/tokenizer.hpp"
#include "attnkit/text/utf8.hpp"

#include "tokenizer_json.hpp"  // ATTNKIT_FOR_SIZE

namespace attnkit {

namespace {

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

}  // namespace attnkit

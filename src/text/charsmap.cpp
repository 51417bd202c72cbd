#include "attnkit/text/charsmap.hpp"

#include <string>

namespace attnkit {

Status Charsmap::parse(std::string_view blob, const char* where) {
  trie_ = nullptr;
  units_ = 0;
  strings_ = {};
  if (blob.empty()) return Status::success();
  const auto bad = [&](const std::string& why) {
    return Status::error(Code::invalid_argument, where, std::string(where) + ": " + why);
  };
  if (blob.size() <= 4) return bad("the charsmap is " + std::to_string(blob.size()) + " bytes, too short for its header");
  const auto* b = reinterpret_cast<const unsigned char*>(blob.data());
  const uint32_t trie_bytes = b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24;
  if (trie_bytes >= blob.size() - 4) {
    return bad("the trie size " + std::to_string(trie_bytes) + " exceeds the " + std::to_string(blob.size() - 4) +
               " bytes after the header");
  }
  if (trie_bytes < 4) return bad("the trie has no unit");
  trie_ = b + 4;
  units_ = trie_bytes / 4;
  strings_ = blob.substr(4 + trie_bytes);
  return Status::success();
}

uint32_t Charsmap::unit(std::size_t i) const {
  const unsigned char* u = trie_ + 4 * i;
  return u[0] | u[1] << 8 | u[2] << 16 | static_cast<uint32_t>(u[3]) << 24;
}

bool Charsmap::longest_match(const char* s, std::size_t n, std::size_t& key_bytes, std::string_view& replacement) const {
  if (units_ == 0) return false;
  const auto offset = [](uint32_t u) -> std::size_t { return (u >> 10) << ((u & (1u << 9)) >> 6); };
  std::size_t best = 0;
  uint32_t value = 0;
  std::size_t pos = offset(unit(0));
  const std::size_t limit = n < kMaxKeyBytes ? n : kMaxKeyBytes;
  for (std::size_t i = 0; i < limit; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    pos ^= c;
    if (pos >= units_) break;
    const uint32_t u = unit(pos);
    if ((u & ((1u << 31) | 0xFF)) != c) break;  // label: the byte, and not a leaf unit
    pos ^= offset(u);
    if ((u >> 8) & 1) {  // has a leaf: the value sits in the unit at pos
      if (pos >= units_) break;
      best = i + 1;
      value = unit(pos) & 0x7FFFFFFFu;
    }
  }
  if (best == 0 || value >= strings_.size()) return false;
  const std::string_view rest = strings_.substr(value);
  const std::size_t nul = rest.find('\0');
  key_bytes = best;
  replacement = nul == std::string_view::npos ? rest : rest.substr(0, nul);
  return true;
}

}  // namespace attnkit

#include "attnkit/text/unicode.hpp"

#include <algorithm>
#include <vector>

namespace attnkit::unicode {

namespace {
// The last range starting at or before cp.
uint8_t search_flags(uint32_t cp) {
  const uint64_t key = static_cast<uint64_t>(cp) << 32 | 0xFFFFFFFFu;
  const uint64_t* end = kRanges + kRangeCount;
  const uint64_t* it = std::upper_bound(kRanges, end, key);
  if (it == kRanges) return 0;
  const uint64_t r = *(it - 1);
  const auto last = static_cast<uint32_t>((r >> 8) & 0xFFFFFF);
  return cp <= last ? static_cast<uint8_t>(r & 0xFF) : 0;
}
}  // namespace

uint8_t flags(uint32_t cp) {
  // The Basic Multilingual Plane from a 64 KB table filled once from the ranges (at first use:
  // the .wasm stays as small): a binary search over 2 000 ranges per character was 17 % of a BERT
  // encode of English, and 12 % of mixed text after Latin-1 had a table.
  static const std::vector<uint8_t> bmp = [] {
    std::vector<uint8_t> t(0x10000, 0);
    for (std::size_t i = 0; i < kRangeCount; ++i) {
      const uint64_t r = kRanges[i];
      const auto first = static_cast<uint32_t>(r >> 32), last = static_cast<uint32_t>((r >> 8) & 0xFFFFFF);
      for (uint32_t c = first; c <= last && c < 0x10000; ++c) t[c] = static_cast<uint8_t>(r & 0xFF);
    }
    return t;
  }();
  return cp < 0x10000 ? bmp[cp] : search_flags(cp);
}

Category category(uint32_t cp) {
  if (cp > 0x10FFFF) return Cn;
  const auto run = [](uint32_t c) {
    const uint32_t* it = std::upper_bound(kCategoryRuns, kCategoryRuns + kCategoryRunCount, c << 5 | 31u);
    return static_cast<Category>(*(it - 1) & 31u);  // the first run starts at U+0000
  };
  // The Basic Multilingual Plane from a table, as flags() (the Split regexes test every character).
  static const std::vector<uint8_t> bmp = [] {
    std::vector<uint8_t> t(0x10000);
    for (std::size_t i = 0; i < kCategoryRunCount && (kCategoryRuns[i] >> 5) < 0x10000; ++i) {
      const uint32_t end = i + 1 < kCategoryRunCount ? std::min(kCategoryRuns[i + 1] >> 5, 0x10000u) : 0x10000u;
      for (uint32_t c = kCategoryRuns[i] >> 5; c < end; ++c) t[c] = static_cast<uint8_t>(kCategoryRuns[i] & 31u);
    }
    return t;
  }();
  return cp < 0x10000 ? static_cast<Category>(bmp[cp]) : run(cp);
}

uint8_t script(uint32_t cp) {
  if (cp > 0x10FFFF) return 0;
  const uint32_t* it = std::upper_bound(kScriptRuns, kScriptRuns + kScriptRunCount, cp << 8 | 0xFFu);
  return static_cast<uint8_t>(*(it - 1) & 0xFFu);  // the first run starts at U+0000
}

namespace {
// Looks cp up in a generated mapping; writes its code points to out.
int mapped(const uint64_t* table, std::size_t count, const uint32_t* data, uint32_t cp, uint32_t* out) {
  const uint64_t key = static_cast<uint64_t>(cp) << 32;
  const uint64_t* it = std::lower_bound(table, table + count, key);
  if (it == table + count || (*it >> 32) != cp) {
    out[0] = cp;
    return 1;
  }
  const auto at = static_cast<std::size_t>((*it >> 8) & 0xFFFFFF);
  const int n = static_cast<int>(*it & 0xFF);
  std::copy(data + at, data + at + n, out);
  return n;
}
}  // namespace

int lower(uint32_t cp, uint32_t* out) {
  if (cp < 0x80) {
    out[0] = cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    return 1;
  }
  return mapped(kLower, kLowerCount, kLowerData, cp, out);
}

int nfd(uint32_t cp, uint32_t* out) {
  if (cp < 0xC0) {  // nothing below U+00C0 decomposes (canonically): no search
    out[0] = cp;
    return 1;
  }
  if (cp >= 0xAC00 && cp <= 0xD7A3) {  // Hangul syllable: L V (T)
    const uint32_t s = cp - 0xAC00;
    out[0] = 0x1100 + s / 588;
    out[1] = 0x1161 + (s % 588) / 28;
    if (s % 28 == 0) return 2;
    out[2] = 0x11A7 + s % 28;
    return 3;
  }
  return mapped(kNfd, kNfdCount, kNfdData, cp, out);
}

}  // namespace attnkit::unicode

// UTF-8 for the tokenizers: one definition of a character's length, of well-formedness and of
// encoding, shared by SentencePiece, the word-level models, the C++ text steps and the bindings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnkit::utf8 {

// Bytes of the character a lead byte starts, by that byte alone: 1 for ASCII and for stray
// continuation bytes (so that malformed text still advances), as SentencePiece's OneCharLen.
inline std::size_t lead_length(unsigned char c) { return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4]; }

// The length of the well-formed character at s[0, n), or 0 (a bad lead or trail byte, an overlong
// form, a surrogate or a code point above U+10FFFF: SentencePiece's IsValidDecodeUTF8 and the
// WHATWG decoder agree on these). Its code point goes to *cp when given.
inline std::size_t decode(const unsigned char* s, std::size_t n, uint32_t* cp = nullptr) {
  if (n == 0) return 0;
  const std::size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || len > n) return 0;
  uint32_t v = len == 1 ? s[0] : s[0] & (0x7Fu >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    v = v << 6 | (s[k] & 0x3Fu);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) return 0;
  if (cp) *cp = v;
  return len;
}

// Appends code point c (at most U+10FFFF) to out.
inline void append(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | c >> 6);
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | c >> 12);
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | c >> 18);
    out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

}  // namespace attnkit::utf8

// Unicode properties for the tokenizers' text steps (BERT's normaliser and pre-tokeniser, GPT-2's
// pattern), generated from the JavaScript engine by scripts/gen_unicode.mjs so that the C++ steps
// agree with the JavaScript ones exactly (src/text/unicode_tables.cpp, Unicode 17).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnkit::unicode {

enum Flag : uint8_t {
  kLetter = 1,    // \p{L}
  kNumber = 2,    // \p{N}
  kPunct = 4,     // \p{P}
  kMn = 8,        // \p{Mn}
  kMark = 16,     // \p{M}
  kControl = 32,  // \p{Cc} or \p{Cf}
  kSpace = 64,    // JavaScript's \s
  kAlphabetic = 128,  // \p{Alphabetic} (regular expressions' \w)
};

// The Unicode general categories (in the generator's order).
enum Category : uint8_t {
  Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps, Pe, Pi, Pf, Po,
  Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co, Cn, kCategoryCount
};

// The general category of code point cp (Cn, unassigned, above U+10FFFF).
Category category(uint32_t cp);

// The script of code point cp (Unicode's Script property): an index into kScriptNames, 0 for
// Unknown (and above U+10FFFF).
uint8_t script(uint32_t cp);

// The flags of code point cp (0 for unassigned, symbols, separators other than \s, ...).
uint8_t flags(uint32_t cp);

// String.toLowerCase() of the single code point cp: writes 1-3 code points to out, returns how many.
int lower(uint32_t cp, uint32_t* out);

// String.normalize('NFD') of the single code point cp (Hangul syllables by arithmetic): writes up
// to 4 code points to out (the table's longest is measured by the generator), returns how many.
int nfd(uint32_t cp, uint32_t* out);

// The generated tables (unicode_tables.cpp).
extern const uint64_t kRanges[];
extern const std::size_t kRangeCount;
extern const uint64_t kLower[];
extern const uint32_t kLowerData[];
extern const std::size_t kLowerCount;
extern const uint64_t kNfd[];
extern const uint32_t kNfdData[];
extern const std::size_t kNfdCount;
extern const uint32_t kCategoryRuns[];
extern const std::size_t kCategoryRunCount;
extern const uint32_t kScriptRuns[];
extern const std::size_t kScriptRunCount;
extern const char* const kScriptNames[];
extern const std::size_t kScriptCount;

}  // namespace attnkit::unicode

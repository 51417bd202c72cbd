// Regular expressions as tokenizer.json files write them (the Split pre-tokenizer's
// {"Regex": ...}, which Hugging Face compiles with Oniguruma), run without backtracking: the
// pattern compiles to a program of at most kMaxProgram instructions, and a Pike VM advances all its
// threads together over the text, so a search costs O(text × program) whatever the file says, and
// its match is the leftmost-first one a backtracking engine returns.
//
// Syntax (Oniguruma's, Ruby flavour, as far as tokenizers use it):
//   literals, escapes \t \n \r \f \v \a \e \0 \xHH \x{H...} \uHHHH, escaped punctuation;
//   .  any character but \n ((?m) makes it match \n too, as in Ruby);
//   [...] [^...] with ranges, escapes, classes and nested [...] (their union);
//   \s \S  White_Space (Oniguruma's: JavaScript's \s also has U+FEFF, not U+0085); \d \D \p{Nd};
//   \w \W  Alphabetic, marks, \p{Nd}, \p{Pc} and the joiners (Unicode's \w); \h \H hex digits;
//   \p{X} \P{X} \p{^X}  X a general category, short or long (L, Lu, Letter, Uppercase_Letter, LC,
//          ...), Any or Assigned, a script by its long name (Han, Latin, Script=Hiragana), or
//          White_Space or Alphabetic;
//   groups (...) (?:...) (?<name>...) (?i:...) (?-i:...) (?m:...), and (?i) (?m) (?-i) for the rest of
//          the group; alternation |;
//   quantifiers * + ? {n} {n,} {n,m} {,m} (bounds at most 1000), greedy or lazy (a trailing ?);
//   anchors ^ $ (of lines, as Ruby), \A \z \Z, \b \B;
//   look-ahead and look-behind of one character: (?=x) (?!x) (?<=x) (?<!x) with x a character,
//          a class or . (GPT-2's \s+(?!\S) is one).
// Refused, with the position: back-references, possessive quantifiers, longer look-arounds, atomic
// groups, conditionals, other binary properties, POSIX brackets, extended mode.
// Case-insensitive matching compares lowercase forms (JavaScript's toLowerCase of one character).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "attnkit/core/status.hpp"

namespace attnkit {

class Regex {
 public:
  static constexpr std::size_t kMaxProgram = 1 << 14;  // instructions, after {n,m} are unrolled
  // find_all's step budget per character of text (tokenizers' patterns take 25-40 on English).
  static constexpr std::size_t kStepsPerChar = 256;
  static constexpr int kMaxDepth = 200;                // nesting of groups and quantifiers
  static constexpr int kMaxRepeat = 1000;              // bounds of {n,m}

  // Compiles pattern (UTF-8). Errors: invalid_argument, saying what is wrong at which character.
  static Status compile(std::string_view pattern, Regex& out);

  // The matches in text (code points), leftmost-first, each search starting where the last match
  // ended (one character later after an empty match, as JavaScript's matchAll): [start, end)
  // pairs of indices appended to out. One search is linear in the text, but a pattern whose
  // preferred branch runs far past its matches can make the searches of one text quadratic, so
  // find_all takes at most steps_allowed(n) VM steps and otherwise fails (out_of_range) instead of
  // running on (a 1 MB text then fails within about a second).
  Status find_all(const uint32_t* text, std::size_t n, std::vector<int32_t>& out) const;

  // find_all's budget for n characters: 2^20 + kStepsPerChar × (n + 1).
  std::size_t steps_allowed(std::size_t n) const;
  std::size_t program_size() const { return program_.size(); }

  // One item of a character class: a range, categories, \s, \w, or a nested class.
  struct ClassItem {
    enum Kind : uint8_t { range, categories, white_space, word, alphabetic, script, nested } kind = range;
    bool negate = false;   // all but range: the complement
    uint32_t lo = 0, hi = 0;  // range
    uint32_t mask = 0;     // categories: bit k for unicode::Category k; script: its index
    int32_t inner = -1;    // nested: index of the class
  };
  struct CharClass {
    std::vector<ClassItem> items;
    bool negate = false, fold = false;
    uint64_t ascii[2] = {0, 0};  // the answer for U+0000..U+007F, filled after parsing
  };
  struct Inst {
    enum Op : uint8_t { character, char_class, any, split, jump, assertion, match } op = match;
    uint8_t flag = 0;     // character: fold; any: matches \n too; assertion: its kind
    int32_t x = 0, y = 0;  // character: code point (lowercase if folded); char_class: class;
                           // split: preferred then other target; jump: target; assertion: class
  };

 private:
  // Whether class k holds c: from its ASCII table when `tables` (filled after parsing), else from
  // its items.
  bool in_class(int32_t k, uint32_t c, bool tables = true) const;
  // Whether a character, class or any instruction takes character c.
  bool takes(const Inst& i, uint32_t c) const;
  bool holds(const Inst& a, const uint32_t* text, std::size_t n, std::size_t pos) const;
  std::vector<Inst> program_;
  std::vector<CharClass> classes_;
  std::vector<int32_t> start_;  // the start's threads, when no assertion makes them depend on the place
  bool start_known_ = false, start_filtered_ = false;
  std::vector<int32_t> start_ascii_[128];  // of those, the ones that take ASCII character c
  friend class RegexCompiler;
};

}  // namespace attnkit

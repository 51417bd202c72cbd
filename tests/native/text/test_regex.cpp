// The Split pre-tokenizer's regular expressions (attnkit/text/regex.hpp) on hand-checked cases: the
// leftmost-first choices a backtracking engine makes, the syntax tokenizers use, the refusals, and
// the step budget. tests/node/text/regex.test.mjs compares the engine with JavaScript's RegExp on real
// tokenizers' patterns and mixed text.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnkit/text/regex.hpp"
#include "attnkit/text/utf8.hpp"

using namespace attnkit;

namespace {
std::vector<uint32_t> cps(const std::string& s) {
  std::vector<uint32_t> out;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    uint32_t c = 0;
    const std::size_t n = utf8::decode(p + i, s.size() - i, &c);
    EXPECT_GT(n, 0u);
    out.push_back(c);
    i += n;
  }
  return out;
}

// The matched pieces of text, as UTF-8.
std::vector<std::string> matches(const std::string& pattern, const std::string& text) {
  Regex re;
  Status s = Regex::compile(pattern, re);
  EXPECT_TRUE(s.ok()) << pattern << ": " << s.message;
  const auto t = cps(text);
  std::vector<int32_t> m;
  s = re.find_all(t.data(), t.size(), m);
  EXPECT_TRUE(s.ok()) << s.message;
  std::vector<std::string> out;
  for (std::size_t k = 0; k + 1 < m.size(); k += 2) {
    std::string piece;
    for (int32_t i = m[k]; i < m[k + 1]; ++i) utf8::append(t[i], piece);
    out.push_back(piece);
  }
  return out;
}

std::string error(const std::string& pattern) {
  Regex re;
  Status s = Regex::compile(pattern, re);
  EXPECT_FALSE(s.ok()) << pattern;
  EXPECT_EQ(s.code, Code::invalid_argument);
  return s.message;
}

using V = std::vector<std::string>;
const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
}  // namespace

TEST(Regex, Gpt2PatternKeepsTheSpaceBeforeAWordAndBacksOffBeforeIt) {
  // "  123": \s+ takes both spaces, (?!\S) fails before '1', so one space is its own piece.
  EXPECT_EQ(matches(kGpt2, "Hello world's  123 !!"), (V{"Hello", " world", "'s", " ", " 123", " !!"}));
  EXPECT_EQ(matches(kGpt2, "x   \n"), (V{"x", "   \n"}));
  EXPECT_EQ(matches(kGpt2, "héllo 世界 ٣٤"), (V{"héllo", " 世界", " ٣٤"}));
}

TEST(Regex, LeftmostFirstAlternativesAndGreedyOrLazyRepeats) {
  EXPECT_EQ(matches("a|ab", "abab"), (V{"a", "a"}));
  EXPECT_EQ(matches("ab|a", "abab"), (V{"ab", "ab"}));
  EXPECT_EQ(matches("a+?", "aaa"), (V{"a", "a", "a"}));
  EXPECT_EQ(matches("a{2,3}", "aaaaaaa"), (V{"aaa", "aaa"}));
  EXPECT_EQ(matches("a{2}", "aaaaa"), (V{"aa", "aa"}));
  EXPECT_EQ(matches("a{2,}?", "aaaaa"), (V{"aa", "aa"}));
  EXPECT_EQ(matches("x{,2}y", "xxxy"), (V{"xxy"}));
  EXPECT_EQ(matches("\\p{N}{1,3}", "12345"), (V{"123", "45"}));
  EXPECT_EQ(matches("(?:ab)+c", "ababcabc"), (V{"ababc", "abc"}));
  EXPECT_EQ(matches("a{", "a{"), (V{"a{"}));  // not a quantifier: a literal brace
}

TEST(Regex, EmptyMatchesMoveOnOneCharacter) {
  EXPECT_EQ(matches("x*", "ab"), (V{"", "", ""}));
  EXPECT_EQ(matches("a*", "baa"), (V{"", "aa", ""}));
}

TEST(Regex, CaseInsensitiveGroupsAndFlags) {
  EXPECT_EQ(matches("(?i:'s|'ll)", "'S 'Ll 's"), (V{"'S", "'Ll", "'s"}));
  EXPECT_EQ(matches("(?i)[a-c]+", "AbCd"), (V{"AbC"}));
  EXPECT_EQ(matches("(?i:[^a])", "aAb"), (V{"b"}));
  EXPECT_EQ(matches("a(?i)b|c", "aBC"), (V{"aB", "C"}));  // (?i) runs to the group's end
  EXPECT_EQ(matches("(?i:é)", "É"), (V{"É"}));
}

TEST(Regex, ClassesEscapesAndCategories) {
  // BLOOM's pattern: a nested class inside a negated one (Oniguruma reads [..[..]..] as a union).
  EXPECT_EQ(matches(" ?[^(\\s|[.,!?…。，、।۔،])]+", "Hi, there… 你好。"), (V{"Hi", " there", " 你好"}));
  EXPECT_EQ(matches("[\\p{Lu}\\p{Lt}]+", "ABcDǅ"), (V{"AB", "Dǅ"}));
  EXPECT_EQ(matches("\\P{L}+", "ab12!c"), (V{"12!"}));
  EXPECT_EQ(matches("\\p{^L}+", "ab12!c"), (V{"12!"}));
  EXPECT_EQ(matches("\\p{Uppercase_Letter}", "aBc"), (V{"B"}));
  EXPECT_EQ(matches("\\d+", "a٣4b"), (V{"٣4"}));
  EXPECT_EQ(matches("\\w+", "foo_bar-ça"), (V{"foo_bar", "ça"}));
  EXPECT_EQ(matches("\\h+", "xDEADbeefz"), (V{"DEADbeef"}));
  EXPECT_EQ(matches("[\\x41-\\x{43}]+|\\u00e9", "ABCDé"), (V{"ABC", "é"}));
  EXPECT_EQ(matches("[a\\-z]+", "a-zb"), (V{"a-z"}));
  EXPECT_EQ(matches("[]a]+", "]a]b"), (V{"]a]"}));
  EXPECT_EQ(matches(".+", "ab\ncd"), (V{"ab", "cd"}));
  EXPECT_EQ(matches("(?m:.+)", "ab\ncd"), (V{"ab\ncd"}));
  EXPECT_EQ(matches("[\\s\\S]", "a"), (V{"a"}));
  EXPECT_EQ(matches("\\.", "a.b"), (V{"."}));
  // Scripts (Script, not Script_Extensions) and two binary properties.
  EXPECT_EQ(matches("[\\p{Han}\\p{Hiragana}\\p{Katakana}\\u30FC]+|\\p{Latin}+", "東京タワーとTokyo ひらがな"),
            (V{"東京タワーと", "Tokyo", "ひらがな"}));
  EXPECT_EQ(matches("\\p{Script=Greek}+|\\p{sc=Cyrillic}+", "αβγ абв abc"), (V{"αβγ", "абв"}));
  EXPECT_EQ(matches("\\P{Latin}+", "ab12cd"), (V{"12"}));
  EXPECT_EQ(matches("\\p{White_Space}+", "a \u0085\t b"), (V{" \u0085\t "}));
  EXPECT_EQ(matches("\\p{Alphabetic}+", "aⅫ1"), (V{"aⅫ"}));
}

TEST(Regex, AnchorsAndOneCharacterLookArounds) {
  EXPECT_EQ(matches("^a", "a\na ba"), (V{"a", "a"}));
  EXPECT_EQ(matches("a$", "a\nba"), (V{"a", "a"}));
  EXPECT_EQ(matches("\\Aa", "aa"), (V{"a"}));
  EXPECT_EQ(matches("a\\z", "aa"), (V{"a"}));
  EXPECT_EQ(matches("a\\Z", "aa\n"), (V{"a"}));
  EXPECT_EQ(matches("\\bab", "ab cab ab"), (V{"ab", "ab"}));
  EXPECT_EQ(matches("\\Bab", "ab cab ab"), (V{"ab"}));
  EXPECT_EQ(matches("a(?=b)", "ab ac"), (V{"a"}));
  EXPECT_EQ(matches("a(?!b)", "ab ac a"), (V{"a", "a"}));
  EXPECT_EQ(matches("(?<=x)a", "xa ya"), (V{"a"}));
  EXPECT_EQ(matches("(?<!x)a", "xa ya a"), (V{"a", "a"}));
  EXPECT_EQ(matches("(?<name>a)(?P<other>b)", "ab"), (V{"ab"}));
}

TEST(Regex, RefusesWhatItDoesNotRunAndSaysWhere) {
  EXPECT_NE(error("(a)\\1").find("character 5 (1): an escape attnkit does not run"), std::string::npos);
  EXPECT_NE(error("a*+").find("possessive"), std::string::npos);
  EXPECT_NE(error("a(?=bc)").find("look-around of more than one character"), std::string::npos);
  EXPECT_NE(error("(?>a)").find("kind of group"), std::string::npos);
  EXPECT_NE(error("(a").find("at its end: a group left open"), std::string::npos);
  EXPECT_NE(error("a)").find("closes no group"), std::string::npos);
  EXPECT_NE(error("[a").find("left open"), std::string::npos);
  EXPECT_NE(error("*a").find("nothing to repeat"), std::string::npos);
  EXPECT_NE(error("\\p{Hani}").find("not a general category, a script"), std::string::npos);  // short script codes
  EXPECT_NE(error("\\p{Emoji}").find("not a general category, a script"), std::string::npos);
  EXPECT_NE(error("[[:alpha:]]").find("POSIX"), std::string::npos);
  EXPECT_NE(error("[a&&b]").find("intersection"), std::string::npos);
  EXPECT_NE(error("[z-a]").find("below its start"), std::string::npos);
  EXPECT_NE(error("a{3,2}").find("m < n"), std::string::npos);
  EXPECT_NE(error("a{1001}").find("above 1000"), std::string::npos);
  EXPECT_NE(error("\\x{110000}").find("malformed"), std::string::npos);
  EXPECT_NE(error("a\\").find("lone backslash"), std::string::npos);
  EXPECT_NE(error(std::string(300, '(') + std::string(300, ')')).find("nested more than"), std::string::npos);
  EXPECT_NE(error("(?:(?:a{1000}){1000})").find("instructions"), std::string::npos);
  EXPECT_NE(error(std::string("\xff")).find("UTF-8"), std::string::npos);
}

TEST(Regex, StopsAtItsStepBudgetInsteadOfRunningQuadratic) {
  // The preferred branch scans to the end of the text at every start: quadratic in the text.
  Regex re;
  ASSERT_TRUE(Regex::compile("[ab]*c|a", re).ok());
  std::vector<uint32_t> text(200000, 'a');
  std::vector<int32_t> m;
  Status s = re.find_all(text.data(), text.size(), m);
  EXPECT_EQ(s.code, Code::out_of_range);
  EXPECT_NE(s.message.find("steps"), std::string::npos);
  // A short text of the same kind is fine, and the engine is reusable after a failure.
  m.clear();
  ASSERT_TRUE(re.find_all(text.data(), 100, m).ok());
  EXPECT_EQ(m.size(), 200u);
  // A tokenizer's pattern on a long text stays far within the budget.
  ASSERT_TRUE(Regex::compile(kGpt2, re).ok());
  const auto words = cps(std::string("The quick brown fox's 12 jumps!  \n"));
  std::vector<uint32_t> big;
  while (big.size() < 1000000) big.insert(big.end(), words.begin(), words.end());
  m.clear();
  EXPECT_TRUE(re.find_all(big.data(), big.size(), m).ok());
}

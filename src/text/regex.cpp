// The parser and compiler of attnkit's regular expressions (attnkit/text/regex.hpp); the Pike VM
// that runs the program is regex_vm.cpp.
#include "attnkit/text/regex.hpp"

#include <algorithm>
#include <string>

#include "attnkit/text/unicode.hpp"
#include "attnkit/text/utf8.hpp"

#include "regex_internal.hpp"

namespace attnkit {

using namespace regex_detail;

namespace {

constexpr uint32_t bit(unicode::Category k) { return 1u << k; }
constexpr uint32_t kLetters = bit(unicode::Lu) | bit(unicode::Ll) | bit(unicode::Lt) | bit(unicode::Lm) | bit(unicode::Lo);
constexpr uint32_t kMarks = bit(unicode::Mn) | bit(unicode::Mc) | bit(unicode::Me);
constexpr uint32_t kAll = (1u << unicode::kCategoryCount) - 1;

// A property name as Oniguruma compares them: case, spaces, hyphens and underscores ignored.
std::string loose(std::string_view name) {
  std::string key;
  for (char c : name)
    if (c != ' ' && c != '_' && c != '-') key += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return key;
}

// \p{...} names: general categories, short and long, and Any / Assigned.
bool category_mask(const std::string& name, uint32_t& mask) {
  std::string key = loose(name);
  for (const char* prefix : {"generalcategory=", "gc="})
    if (key.rfind(prefix, 0) == 0) key = key.substr(std::string(prefix).size());
  using namespace unicode;
  static const struct { const char* a; const char* b; uint32_t mask; } names[] = {
      {"l", "letter", kLetters}, {"lc", "casedletter", bit(Lu) | bit(Ll) | bit(Lt)}, {"l&", "", bit(Lu) | bit(Ll) | bit(Lt)},
      {"lu", "uppercaseletter", bit(Lu)}, {"ll", "lowercaseletter", bit(Ll)}, {"lt", "titlecaseletter", bit(Lt)},
      {"lm", "modifierletter", bit(Lm)}, {"lo", "otherletter", bit(Lo)},
      {"m", "mark", kMarks}, {"mn", "nonspacingmark", bit(Mn)}, {"mc", "spacingmark", bit(Mc)}, {"me", "enclosingmark", bit(Me)},
      {"n", "number", bit(Nd) | bit(Nl) | bit(No)}, {"nd", "decimalnumber", bit(Nd)}, {"nl", "letternumber", bit(Nl)},
      {"no", "othernumber", bit(No)},
      {"p", "punctuation", bit(Pc) | bit(Pd) | bit(Ps) | bit(Pe) | bit(Pi) | bit(Pf) | bit(Po)},
      {"pc", "connectorpunctuation", bit(Pc)}, {"pd", "dashpunctuation", bit(Pd)}, {"ps", "openpunctuation", bit(Ps)},
      {"pe", "closepunctuation", bit(Pe)}, {"pi", "initialpunctuation", bit(Pi)}, {"pf", "finalpunctuation", bit(Pf)},
      {"po", "otherpunctuation", bit(Po)},
      {"s", "symbol", bit(Sm) | bit(Sc) | bit(Sk) | bit(So)}, {"sm", "mathsymbol", bit(Sm)}, {"sc", "currencysymbol", bit(Sc)},
      {"sk", "modifiersymbol", bit(Sk)}, {"so", "othersymbol", bit(So)},
      {"z", "separator", bit(Zs) | bit(Zl) | bit(Zp)}, {"zs", "spaceseparator", bit(Zs)}, {"zl", "lineseparator", bit(Zl)},
      {"zp", "paragraphseparator", bit(Zp)},
      {"c", "other", bit(Cc) | bit(Cf) | bit(Cs) | bit(Co) | bit(Cn)}, {"cc", "control", bit(Cc)}, {"cf", "format", bit(Cf)},
      {"cs", "surrogate", bit(Cs)}, {"co", "privateuse", bit(Co)}, {"cn", "unassigned", bit(Cn)},
      {"any", "", kAll}, {"assigned", "", kAll & ~bit(Cn)},
  };
  for (const auto& n : names) {
    if (key == n.a || (*n.b && key == n.b)) {
      mask = n.mask;
      return true;
    }
  }
  return false;
}

// \p{...} names of a script (Han, Latin, Script=Hiragana, sc=Katakana) or of the binary properties
// White_Space and Alphabetic, matched loosely as category_mask does.
bool property(const std::string& name, Regex::ClassItem& item) {
  std::string key = loose(name);
  if (key == "whitespace" || key == "space") return item.kind = Regex::ClassItem::white_space, true;
  if (key == "alphabetic" || key == "alpha") return item.kind = Regex::ClassItem::alphabetic, true;
  for (const char* prefix : {"script=", "sc="})
    if (key.rfind(prefix, 0) == 0) key = key.substr(std::string(prefix).size());
  for (std::size_t k = 0; k < unicode::kScriptCount; ++k) {
    if (loose(unicode::kScriptNames[k]) == key) {
      item.kind = Regex::ClassItem::script;
      item.mask = static_cast<uint32_t>(k);
      return true;
    }
  }
  return false;
}

// The syntax tree the parser builds and the compiler walks.
struct Node {
  enum Kind : uint8_t { empty, literal, char_class, any, concat, alternation, repeat, assertion } kind = empty;
  bool flag = false;       // literal: case-insensitive; any: matches \n; repeat: greedy
  uint8_t assert_kind = 0;  // assertion
  uint32_t cp = 0;         // literal
  int32_t cls = -1;        // char_class, assertion (look-around)
  int32_t min = 0, max = 0;  // repeat (max -1: unbounded)
  std::vector<int32_t> kids;
};

Node node(Node::Kind kind) {
  Node n;
  n.kind = kind;
  return n;
}

Regex::ClassItem range_item(uint32_t lo, uint32_t hi) {
  Regex::ClassItem it;
  it.lo = lo;
  it.hi = hi;
  return it;
}

}  // namespace

// Compiling runs once per load: for size (the loaders .wasm has a budget,
// tests/node/runtime/wasm_binary.test.mjs); find_all (regex_vm.cpp), the hot path, keeps -O3.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((minsize)), apply_to = function)
#endif

// Recursive descent over the pattern's code points; then code generation.
class RegexCompiler {
 public:
  explicit RegexCompiler(Regex& re) : re_(re) {}

  Status run(std::string_view pattern) {
    const auto* p = reinterpret_cast<const unsigned char*>(pattern.data());
    for (std::size_t i = 0; i < pattern.size();) {
      uint32_t c = 0;
      const std::size_t len = utf8::decode(p + i, pattern.size() - i, &c);
      if (len == 0) return fail("not valid UTF-8");
      pat_.push_back(c);
      i += len;
    }
    int32_t root = -1;
    Status s = alternation(0, root);
    if (!s.ok()) return s;
    if (at_ < pat_.size()) return fail(pat_[at_] == ')' ? "a ')' that closes no group" : "unexpected");
    for (std::size_t k = 0; k < re_.classes_.size(); ++k) {
      for (uint32_t x = 0; x < 128; ++x)
        if (re_.in_class(static_cast<int32_t>(k), x, false)) re_.classes_[k].ascii[x >> 6] |= uint64_t{1} << (x & 63);
    }
    s = emit(root, 0);
    if (!s.ok()) return s;
    re_.program_.push_back({Regex::Inst::match, 0, 0, 0});
    start_closure();
    return Status::success();
  }

  // The threads a search starts with (program counter 0 through jumps and splits), in priority
  // order, when no assertion is on the way (they would depend on the position).
  void start_closure() {
    std::vector<char> seen(re_.program_.size(), 0);
    std::vector<int32_t> stack{0};
    while (!stack.empty()) {
      const int32_t p = stack.back();
      stack.pop_back();
      if (seen[p]) continue;
      seen[p] = 1;
      const Regex::Inst& i = re_.program_[p];
      if (i.op == Regex::Inst::jump) {
        stack.push_back(i.x);
      } else if (i.op == Regex::Inst::split) {
        stack.push_back(i.y);
        stack.push_back(i.x);
      } else if (i.op == Regex::Inst::assertion) {
        re_.start_.clear();
        re_.start_known_ = false;
        return;
      } else {
        re_.start_.push_back(p);
      }
    }
    re_.start_known_ = true;
    // For each ASCII character, the start's threads that can take it (and any match): the others
    // would die at once. (Not for starts of hundreds of threads: 128 lists of them would be
    // megabytes for a pattern of kilobytes.)
    re_.start_filtered_ = re_.start_.size() <= 256;
    for (uint32_t c = 0; c < 128 && re_.start_filtered_; ++c) {
      auto& list = re_.start_ascii_[c];
      for (const int32_t p : re_.start_) {
        const Regex::Inst& i = re_.program_[p];
        if (i.op == Regex::Inst::match || re_.takes(i, c)) list.push_back(p);
      }
    }
  }

 private:
  // "regular expression, at character 7 (+): a possessive quantifier, ...", or "..., at its end: ...".
  Status fail(const std::string& what) const {
    std::string where = "its end";
    if (at_ < pat_.size()) {
      where = "character " + std::to_string(at_ + 1) + " (";
      utf8::append(pat_[at_], where);
      where += ")";
    }
    return Status::error(Code::invalid_argument, "pattern", "regular expression, at " + where + ": " + what);
  }
  bool eat(uint32_t c) {
    if (at_ < pat_.size() && pat_[at_] == c) return ++at_, true;
    return false;
  }
  bool peek(uint32_t c, std::size_t ahead = 0) const { return at_ + ahead < pat_.size() && pat_[at_ + ahead] == c; }
  int32_t add(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<int32_t>(nodes_.size() - 1);
  }
  int32_t add_class(Regex::CharClass c) {
    re_.classes_.push_back(std::move(c));
    return static_cast<int32_t>(re_.classes_.size() - 1);
  }
  Status deeper(int depth) const {
    return depth > Regex::kMaxDepth ? fail("groups and quantifiers nested more than " + std::to_string(Regex::kMaxDepth) + " deep")
                                    : Status::success();
  }

  Status alternation(int depth, int32_t& out) {
    Status s = deeper(depth);
    if (!s.ok()) return s;
    const bool fold = fold_, dotall = dotall_;  // (?i) inside a group ends with it
    Node alt = node(Node::alternation);
    for (;;) {
      int32_t c = -1;
      s = concatenation(depth + 1, c);
      if (!s.ok()) return s;
      alt.kids.push_back(c);
      if (!eat('|')) break;
    }
    fold_ = fold;
    dotall_ = dotall;
    out = alt.kids.size() == 1 ? alt.kids[0] : add(std::move(alt));
    return Status::success();
  }

  Status concatenation(int depth, int32_t& out) {
    Node cat = node(Node::concat);
    while (at_ < pat_.size() && !peek('|') && !peek(')')) {
      int32_t a = -1;
      Status s = atom(depth, a);
      if (!s.ok()) return s;
      if (a < 0) continue;  // a flag group such as (?i)
      s = quantifiers(depth, a);
      if (!s.ok()) return s;
      cat.kids.push_back(a);
    }
    out = cat.kids.size() == 1 ? cat.kids[0] : add(std::move(cat));
    return Status::success();
  }

  // {n}, {n,}, {n,m}, {,m} at at_ (after the brace); false (and at_ unchanged) when it is not one:
  // then the brace is a literal, as in Oniguruma.
  bool braces(int32_t& min, int32_t& max) {
    const std::size_t start = at_;
    auto number = [&](int32_t& v) {
      const std::size_t from = at_;
      int64_t x = 0;
      while (at_ < pat_.size() && pat_[at_] >= '0' && pat_[at_] <= '9') {
        x = std::min<int64_t>(x * 10 + (pat_[at_] - '0'), 1 << 30);
        ++at_;
      }
      v = static_cast<int32_t>(x);
      return at_ > from;
    };
    const bool has_min = number(min);
    if (!has_min) min = 0;
    max = min;
    if (eat(',')) {
      if (!number(max)) max = -1;
      if (!has_min && max < 0) return at_ = start, false;  // {,}
    } else if (!has_min) {
      return at_ = start, false;
    }
    if (!eat('}')) return at_ = start, false;
    return true;
  }

  Status quantifiers(int depth, int32_t& a) {
    for (;;) {
      if (at_ >= pat_.size()) return Status::success();
      int32_t min = 0, max = 0;
      const uint32_t q = pat_[at_];
      if (q == '*') {
        max = -1;
      } else if (q == '+') {
        min = 1, max = -1;
      } else if (q == '?') {
        max = 1;
      } else if (q == '{') {
        ++at_;
        if (!braces(min, max)) return --at_, Status::success();
        --at_;  // at_ is past '}': step back so that ++at_ below lands after it
        if (min > Regex::kMaxRepeat || max > Regex::kMaxRepeat) {
          return fail("a repeat bound above " + std::to_string(Regex::kMaxRepeat));
        }
        if (max >= 0 && max < min) return fail("a repeat {n,m} with m < n");
      } else {
        return Status::success();
      }
      ++at_;
      Node r = node(Node::repeat);
      r.flag = true;
      if (eat('?')) {
        r.flag = false;
      } else if (peek('+')) {
        // In Ruby syntax {n,m}+ is a repeat of a repeat; *+ ++ ?+ are possessive.
        if (q != '{') return fail("a possessive quantifier, which attnkit does not run");
      }
      Status s = deeper(++depth);
      if (!s.ok()) return s;
      r.min = min;
      r.max = max;
      r.kids.push_back(a);
      a = add(std::move(r));
    }
  }

  // A group after its '('.
  Status group(int depth, int32_t& out) {
    if (!eat('?')) return close(depth, out);
    if (eat(':')) return close(depth, out);
    if (peek('<') && !peek('=', 1) && !peek('!', 1)) {  // (?<name>...)
      while (at_ < pat_.size() && pat_[at_] != '>') ++at_;
      if (!eat('>')) return fail("a group name that is not closed");
      return close(depth, out);
    }
    if (peek('P') && peek('<', 1)) {  // (?P<name>...)
      while (at_ < pat_.size() && pat_[at_] != '>') ++at_;
      if (!eat('>')) return fail("a group name that is not closed");
      return close(depth, out);
    }
    for (auto [text, kind] : {std::pair<const char*, Assertion>{"=", ahead}, {"!", not_ahead}, {"<=", behind}, {"<!", not_behind}}) {
      const std::size_t n = std::char_traits<char>::length(text);
      bool match = true;
      for (std::size_t k = 0; k < n; ++k) match = match && peek(static_cast<unsigned char>(text[k]), k);
      if (match) {
        at_ += n;
        return look_around(depth, kind, out);
      }
    }
    // Flags: (?i) (?m) (?-i) ... alone, or (?i:...).
    bool on = true, fold = fold_, dotall = dotall_, any = false;
    while (at_ < pat_.size()) {
      const uint32_t c = pat_[at_];
      if (c == '-' && on) {
        on = false;
      } else if (c == 'i') {
        fold = on;
      } else if (c == 'm') {
        dotall = on;
      } else {
        break;
      }
      any = true;
      ++at_;
    }
    if (any && eat(')')) {  // for the rest of the enclosing group
      fold_ = fold;
      dotall_ = dotall;
      out = -1;
      return Status::success();
    }
    if (any && eat(':')) {
      const bool f = fold_, d = dotall_;
      fold_ = fold;
      dotall_ = dotall;
      Status s = close(depth, out);
      fold_ = f;
      dotall_ = d;
      return s;
    }
    return fail("a kind of group attnkit does not run (it runs (?:...), (?<name>...), (?i:...), (?m:...) and "
                "one-character look-arounds)");
  }

  Status close(int depth, int32_t& out) {
    Status s = alternation(depth + 1, out);
    if (!s.ok()) return s;
    if (!eat(')')) return fail("a group left open");
    return Status::success();
  }

  // (?=x) (?!x) (?<=x) (?<!x): x must be one character, class or '.'.
  Status look_around(int depth, Assertion kind, int32_t& out) {
    int32_t inner = -1;
    Status s = close(depth, inner);
    if (!s.ok()) return s;
    const Node& n = nodes_[inner];
    Regex::CharClass c;
    if (n.kind == Node::literal) {
      c.fold = n.flag;
      c.items.push_back(range_item(n.cp, n.cp));
      if (n.flag) add_lowercase(c);
    } else if (n.kind == Node::any) {
      c.negate = !n.flag;
      if (!n.flag) c.items.push_back(range_item('\n', '\n'));
    } else if (n.kind != Node::char_class) {
      return fail("a look-around of more than one character, which attnkit does not run");
    }
    Node a = node(Node::assertion);
    a.assert_kind = kind;
    a.cls = n.kind == Node::char_class ? n.cls : add_class(std::move(c));
    out = add(std::move(a));
    return Status::success();
  }

  // Case-insensitive ranges also hold their characters' lowercase forms (so that [A-Z] holds 'a';
  // the match tests a character and its lowercase form).
  void add_lowercase(Regex::CharClass& c) {
    const std::size_t n = c.items.size();
    for (std::size_t i = 0; i < n; ++i) {
      const auto it = c.items[i];
      if (it.kind != Regex::ClassItem::range || it.hi - it.lo > 0x3000) continue;
      for (uint32_t x = it.lo; x <= it.hi; ++x) {
        const uint32_t l = lower1(x);
        if (l != x && !(l >= it.lo && l <= it.hi)) c.items.push_back(range_item(l, l));
      }
    }
  }

  Status atom(int depth, int32_t& out) {
    const uint32_t c = pat_[at_++];
    switch (c) {
      case '(':
        return group(depth + 1, out);
      case '[': {
        Regex::CharClass k;
        Status s = char_class(depth + 1, k);
        if (!s.ok()) return s;
        Node n = node(Node::char_class);
        n.cls = add_class(std::move(k));
        out = add(std::move(n));
        return Status::success();
      }
      case '.': {
        Node n = node(Node::any);
        n.flag = dotall_;
        out = add(std::move(n));
        return Status::success();
      }
      case '^':
      case '$': {
        Node n = node(Node::assertion);
        n.assert_kind = c == '^' ? line_start : line_end;
        out = add(std::move(n));
        return Status::success();
      }
      case '*':
      case '+':
      case '?':
        --at_;
        return fail("a quantifier with nothing to repeat");
      case '\\':
        return escape(out);
      default:
        out = literal(c);
        return Status::success();
    }
  }

  int32_t literal(uint32_t c) {
    Node n = node(Node::literal);
    n.flag = fold_;
    n.cp = fold_ ? lower1(c) : c;
    return add(std::move(n));
  }

  // An escape after '\' outside a class.
  Status escape(int32_t& out) {
    if (at_ >= pat_.size()) return fail("a lone backslash");
    const uint32_t c = pat_[at_];
    static const std::pair<uint32_t, Assertion> anchors[] = {
        {'A', text_start}, {'z', text_end}, {'Z', text_end_newline}, {'b', word_boundary}, {'B', not_word_boundary}};
    for (auto [letter, kind] : anchors) {
      if (c == letter) {
        ++at_;
        Node n = node(Node::assertion);
        n.assert_kind = kind;
        out = add(std::move(n));
        return Status::success();
      }
    }
    Regex::ClassItem item;
    uint32_t cp = 0;
    bool is_item = false;
    Status s = class_escape(item, cp, is_item);
    if (!s.ok()) return s;
    if (!is_item) {
      out = literal(cp);
      return Status::success();
    }
    Regex::CharClass k;
    k.fold = fold_;
    k.items.push_back(item);
    Node n = node(Node::char_class);
    n.cls = add_class(std::move(k));
    out = add(std::move(n));
    return Status::success();
  }

  // An escape (after '\') that stands for a character (cp) or a set (item, is_item), in a class or
  // out of one.
  Status class_escape(Regex::ClassItem& item, uint32_t& cp, bool& is_item) {
    if (at_ >= pat_.size()) return fail("a lone backslash");
    const uint32_t c = pat_[at_++];
    is_item = true;
    item = {};
    switch (c) {
      case 's': case 'S':
        item.kind = Regex::ClassItem::white_space;
        item.negate = c == 'S';
        return Status::success();
      case 'd': case 'D':
        item.kind = Regex::ClassItem::categories;
        item.mask = bit(unicode::Nd);
        item.negate = c == 'D';
        return Status::success();
      case 'w': case 'W':
        item.kind = Regex::ClassItem::word;
        item.negate = c == 'W';
        return Status::success();
      case 'h': case 'H': {
        Regex::CharClass h;
        for (auto [lo, hi] : {std::pair<uint32_t, uint32_t>{'0', '9'}, {'a', 'f'}, {'A', 'F'}}) h.items.push_back(range_item(lo, hi));
        item.kind = Regex::ClassItem::nested;
        item.inner = add_class(std::move(h));
        item.negate = c == 'H';
        return Status::success();
      }
      case 'p': case 'P': {
        if (!eat('{')) return fail("a \\p without {...} (write \\p{L})");
        bool negate = c == 'P';
        if (eat('^')) negate = !negate;
        std::string name;
        while (at_ < pat_.size() && pat_[at_] != '}') utf8::append(pat_[at_++], name);
        if (!eat('}')) return fail("a \\p{ that is not closed");
        item.kind = Regex::ClassItem::categories;
        item.negate = negate;
        if (category_mask(name, item.mask)) return Status::success();
        if (property(name, item)) return Status::success();
        return fail("\\p{" + name + "}, which is not a general category, a script or a property attnkit knows "
                    "(White_Space, Alphabetic)");
      }
      default:
        break;
    }
    is_item = false;
    switch (c) {
      case 't': cp = '\t'; return Status::success();
      case 'n': cp = '\n'; return Status::success();
      case 'r': cp = '\r'; return Status::success();
      case 'f': cp = '\f'; return Status::success();
      case 'v': cp = '\v'; return Status::success();
      case 'a': cp = 7; return Status::success();
      case 'e': cp = 27; return Status::success();
      case '0': cp = 0; return Status::success();
      case 'x':
      case 'u': {
        const bool brace = c == 'x' && eat('{');
        const std::size_t digits = brace ? 8 : c == 'x' ? 2 : 4;
        uint32_t v = 0;
        std::size_t n = 0;
        for (; n < digits && at_ < pat_.size(); ++n, ++at_) {
          const uint32_t d = pat_[at_];
          const int h = d >= '0' && d <= '9' ? int(d - '0') : d >= 'a' && d <= 'f' ? int(d - 'a' + 10) : d >= 'A' && d <= 'F' ? int(d - 'A' + 10) : -1;
          if (h < 0) break;
          v = v * 16 + static_cast<uint32_t>(h);
        }
        if (n == 0 || (c == 'u' && n != 4) || (brace && !eat('}')) || v > 0x10FFFF) return fail("a malformed \\" + std::string(1, char(c)) + " escape");
        cp = v;
        return Status::success();
      }
      default:
        break;
    }
    if (c < 0x80 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '1' && c <= '9'))) {
      --at_;
      return fail("an escape attnkit does not run (back-references, \\k, \\g, \\X, \\R, \\K, ... are refused)");
    }
    cp = c;  // escaped punctuation, space or any other character: itself
    return Status::success();
  }

  // A class after its '['.
  Status char_class(int depth, Regex::CharClass& k) {
    Status s = deeper(depth);
    if (!s.ok()) return s;
    k.fold = fold_;
    k.negate = eat('^');
    bool first = true;
    for (;;) {
      if (at_ >= pat_.size()) return fail("a class [...] left open");
      uint32_t c = pat_[at_];
      if (c == ']' && !first) {
        ++at_;
        break;
      }
      first = false;
      if (c == '[') {
        if (peek(':', 1)) return fail("a POSIX bracket [:...:], which attnkit does not run");
        ++at_;
        Regex::CharClass inner;
        s = char_class(depth + 1, inner);
        if (!s.ok()) return s;
        Regex::ClassItem it;
        it.kind = Regex::ClassItem::nested;
        it.inner = add_class(std::move(inner));
        k.items.push_back(it);
        continue;
      }
      if (c == '&' && peek('&', 1)) return fail("a class intersection &&, which attnkit does not run");
      ++at_;
      uint32_t lo = c;
      if (c == '\\') {
        Regex::ClassItem it;
        bool is_item = false;
        s = class_escape(it, lo, is_item);
        if (!s.ok()) return s;
        if (is_item) {
          k.items.push_back(it);
          continue;
        }
      }
      uint32_t hi = lo;
      if (peek('-') && at_ + 1 < pat_.size() && pat_[at_ + 1] != ']') {
        ++at_;
        hi = pat_[at_++];
        if (hi == '[') return fail("a range that ends in a class");
        if (hi == '\\') {
          Regex::ClassItem it;
          bool is_item = false;
          s = class_escape(it, hi, is_item);
          if (!s.ok()) return s;
          if (is_item) return fail("a range that ends in a class escape");
        }
        if (hi < lo) return fail("a range that ends below its start");
      }
      k.items.push_back(range_item(lo, hi));
    }
    if (k.fold) add_lowercase(k);
    return Status::success();
  }

  // ------------------------------------------------------------------ code generation

  Status push(Regex::Inst i) {
    if (re_.program_.size() >= Regex::kMaxProgram) {
      return Status::error(Code::invalid_argument, "pattern",
                           "regular expression: the program is longer than " + std::to_string(Regex::kMaxProgram) +
                               " instructions (its repeats {n,m} unrolled)");
    }
    re_.program_.push_back(i);
    return Status::success();
  }
  int32_t here() const { return static_cast<int32_t>(re_.program_.size()); }

  Status emit(int32_t id, int depth) {
    if (depth > 4 * Regex::kMaxDepth) return fail("nested too deeply");
    const Node& n = nodes_[id];
    using I = Regex::Inst;
    switch (n.kind) {
      case Node::empty:
        return Status::success();
      case Node::literal:
        return push({I::character, n.flag, static_cast<int32_t>(n.cp), 0});
      case Node::char_class:
        return push({I::char_class, 0, n.cls, 0});
      case Node::any:
        return push({I::any, n.flag, 0, 0});
      case Node::assertion:
        return push({I::assertion, n.assert_kind, n.cls, 0});
      case Node::concat:
        for (int32_t k : n.kids) {
          Status s = emit(k, depth + 1);
          if (!s.ok()) return s;
        }
        return Status::success();
      case Node::alternation: {
        // split L1, next; L1: a; jump end; next: split L2, next2; ... last: z; end:
        std::vector<int32_t> jumps;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          int32_t split = -1;
          if (k + 1 < n.kids.size()) {
            split = here();
            Status s = push({I::split, 0, split + 1, 0});
            if (!s.ok()) return s;
          }
          Status s = emit(n.kids[k], depth + 1);
          if (!s.ok()) return s;
          if (k + 1 < n.kids.size()) {
            jumps.push_back(here());
            s = push({I::jump, 0, 0, 0});
            if (!s.ok()) return s;
            re_.program_[split].y = here();
          }
        }
        for (int32_t j : jumps) re_.program_[j].x = here();
        return Status::success();
      }
      case Node::repeat: {
        for (int32_t k = 0; k < n.min; ++k) {
          Status s = emit(n.kids[0], depth + 1);
          if (!s.ok()) return s;
        }
        if (n.max < 0) {  // loop: split body, out; body; jump loop
          const int32_t loop = here();
          Status s = push({I::split, 0, 0, 0});
          if (!s.ok()) return s;
          s = emit(n.kids[0], depth + 1);
          if (!s.ok()) return s;
          s = push({I::jump, 0, loop, 0});
          if (!s.ok()) return s;
          set_split(loop, loop + 1, here(), n.flag);
          return Status::success();
        }
        // max - min optional copies, nested (a(a(a)?)?)?: each split skips to the common end.
        std::vector<int32_t> splits;
        for (int32_t k = n.min; k < n.max; ++k) {
          splits.push_back(here());
          Status s = push({I::split, 0, 0, 0});
          if (!s.ok()) return s;
          s = emit(n.kids[0], depth + 1);
          if (!s.ok()) return s;
        }
        for (int32_t sp : splits) set_split(sp, sp + 1, here(), n.flag);
        return Status::success();
      }
    }
    return Status::success();
  }

  // A greedy split prefers entering the body; a lazy one prefers leaving.
  void set_split(int32_t at, int32_t body, int32_t out, bool greedy) {
    re_.program_[at].x = greedy ? body : out;
    re_.program_[at].y = greedy ? out : body;
  }

  Regex& re_;
  std::vector<uint32_t> pat_;
  std::size_t at_ = 0;
  std::vector<Node> nodes_;
  bool fold_ = false, dotall_ = false;
};

Status Regex::compile(std::string_view pattern, Regex& out) {
  out = Regex();
  RegexCompiler c(out);
  Status s = c.run(pattern);
  if (!s.ok()) out = Regex();
  return s;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif

}  // namespace attnkit

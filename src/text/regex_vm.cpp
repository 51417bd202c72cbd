// The Pike VM: find_all runs a program regex.cpp compiled over a text, all its threads in step.
#include "attnkit/text/regex.hpp"

#include <algorithm>
#include <string>

#include "attnkit/text/unicode.hpp"

#include "regex_internal.hpp"

namespace attnkit {

using namespace regex_detail;

namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no character": before the text or after it

// Oniguruma's \s: the White_Space property (JavaScript's \s differs: it has U+FEFF, not U+0085).
bool is_white_space(uint32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// Oniguruma's \w (Unicode's, UTS #18): Alphabetic, marks, decimal digits, connector punctuation and
// the two joiners.
bool is_word(uint32_t c) {
  if (c == kNone) return false;
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  if (c == 0x200C || c == 0x200D || (unicode::flags(c) & (unicode::kAlphabetic | unicode::kMark))) return true;
  const auto k = unicode::category(c);
  return k == unicode::Nd || k == unicode::Pc;
}

}  // namespace

namespace regex_detail {

// toLowerCase of one character when it is one character, else the character itself.
uint32_t lower1(uint32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  uint32_t out[3];
  return unicode::lower(c, out) == 1 ? out[0] : c;
}

}  // namespace regex_detail

bool Regex::in_class(int32_t k, uint32_t c, bool tables) const {
  const CharClass& cls = classes_[k];
  if (tables && c < 128) return (cls.ascii[c >> 6] >> (c & 63)) & 1u;
  auto items = [&](uint32_t x) {
    for (const auto& it : cls.items) {
      bool h = false;
      switch (it.kind) {
        case ClassItem::range: h = x >= it.lo && x <= it.hi; break;
        case ClassItem::categories: h = (it.mask >> unicode::category(x)) & 1u; break;
        case ClassItem::white_space: h = is_white_space(x); break;
        case ClassItem::word: h = is_word(x); break;
        case ClassItem::alphabetic: h = (unicode::flags(x) & unicode::kAlphabetic) != 0; break;
        case ClassItem::script: h = unicode::script(x) == it.mask; break;
        case ClassItem::nested: h = in_class(it.inner, x, tables); break;
      }
      if (h != it.negate) return true;
    }
    return false;
  };
  bool hit = items(c);
  if (!hit && cls.fold) {
    const uint32_t l = lower1(c);
    hit = l != c && items(l);
  }
  return hit != cls.negate;
}

bool Regex::takes(const Inst& i, uint32_t c) const {
  switch (i.op) {
    case Inst::character: return (i.flag ? lower1(c) : c) == static_cast<uint32_t>(i.x);
    case Inst::char_class: return in_class(i.x, c);
    case Inst::any: return i.flag || c != '\n';
    default: return false;
  }
}

bool Regex::holds(const Inst& a, const uint32_t* text, std::size_t n, std::size_t pos) const {
  const uint32_t prev = pos > 0 ? text[pos - 1] : kNone, next = pos < n ? text[pos] : kNone;
  switch (static_cast<Assertion>(a.flag)) {
    case line_start: return pos == 0 || prev == '\n';
    case line_end: return pos == n || next == '\n';
    case text_start: return pos == 0;
    case text_end: return pos == n;
    case text_end_newline: return pos == n || (pos + 1 == n && next == '\n');
    case word_boundary: return is_word(prev) != is_word(next);
    case not_word_boundary: return is_word(prev) == is_word(next);
    case ahead: return next != kNone && in_class(a.x, next);
    case not_ahead: return next == kNone || !in_class(a.x, next);
    case behind: return prev != kNone && in_class(a.x, prev);
    case not_behind: return prev == kNone || !in_class(a.x, prev);
  }
  return false;
}

std::size_t Regex::steps_allowed(std::size_t n) const {
  return (std::size_t{1} << 20) + kStepsPerChar * (n + 1);
}

Status Regex::find_all(const uint32_t* text, std::size_t n, std::vector<int32_t>& out) const {
  if (program_.empty()) return Status::error(Code::invalid_argument, "pattern", "the regular expression is not compiled");
  struct Thread {
    int32_t pc, start;
  };
  // The VM's lists, reused between calls on this thread (text steps call this once per word):
  // `seen` holds generation stamps, so that a pc enters each list once, and a new list is a new
  // generation, not a cleared vector.
  static thread_local struct {
    std::vector<Thread> now, next;
    std::vector<uint32_t> seen;
    std::vector<int32_t> stack;
    uint32_t gen = 0;
  } vm;
  const std::size_t size = program_.size();
  if (vm.seen.size() < size) vm.seen.resize(size, 0);
  auto& now = vm.now;
  auto& next = vm.next;
  auto& seen = vm.seen;
  auto& stack = vm.stack;
  auto& gen = vm.gen;
  const auto fresh = [&] {  // a new generation (stamps start over when the counter wraps)
    if (++gen == 0) {
      std::fill(seen.begin(), seen.end(), 0u);
      gen = 1;
    }
  };
  stack.clear();
  const std::size_t budget = steps_allowed(n);
  std::size_t steps = 0;

  // Follows jumps, splits (preferred side first) and assertions from pc at pos; adds the threads
  // that wait for a character (or the match) to list, in priority order.
  auto add = [&](std::vector<Thread>& list, int32_t pc, int32_t start, std::size_t pos) {
    stack.push_back(pc);
    while (!stack.empty()) {
      const int32_t p = stack.back();
      stack.pop_back();
      if (seen[p] == gen) continue;
      seen[p] = gen;
      ++steps;
      const Inst& i = program_[p];
      switch (i.op) {
        case Inst::jump: stack.push_back(i.x); break;
        case Inst::split: stack.push_back(i.y); stack.push_back(i.x); break;
        case Inst::assertion:
          if (holds(i, text, n, pos)) stack.push_back(p + 1);
          break;
        default: list.push_back({p, start});
      }
    }
  };

  std::size_t from = 0;
  while (from <= n) {
    bool matched = false;
    int32_t match_start = 0, match_end = 0;
    now.clear();
    fresh();
    for (std::size_t pos = from;; ++pos) {
      if (!matched) {  // a new start, last in priority
        if (start_known_) {
          const auto& list = start_filtered_ && pos < n && text[pos] < 128 ? start_ascii_[text[pos]] : start_;
          for (const int32_t p : list) {
            if (seen[p] == gen) continue;
            seen[p] = gen;
            now.push_back({p, static_cast<int32_t>(pos)});
          }
          steps += list.size();
        } else {
          add(now, 0, static_cast<int32_t>(pos), pos);
        }
      }
      if (now.empty() && (matched || pos >= n)) break;
      if (steps > budget) {
        return Status::error(Code::out_of_range, "text",
                             "the Split pattern needs more than " + std::to_string(budget) + " steps for a text of " +
                                 std::to_string(n) + " characters (its preferred branches run far past its matches)");
      }
      fresh();
      next.clear();
      const uint32_t c = pos < n ? text[pos] : kNone;
      for (const Thread& t : now) {
        ++steps;
        const Inst& i = program_[t.pc];
        if (i.op == Inst::match) {  // the threads after this one have lower priority: cut
          matched = true;
          match_start = t.start;
          match_end = static_cast<int32_t>(pos);
          break;
        }
        if (c != kNone && takes(i, c)) add(next, t.pc + 1, t.start, pos + 1);
      }
      now.swap(next);
      if (pos >= n) break;
    }
    if (!matched) break;
    out.push_back(match_start);
    out.push_back(match_end);
    from = static_cast<std::size_t>(match_end) + (match_end == match_start ? 1 : 0);
  }
  return Status::success();
}

}  // namespace attnkit

// Internal to the text layer: NOT a public header (it is in src/text/, not src/attnkit/, and is
// not installed). What regex.cpp (the parser and compiler) and regex_vm.cpp (the Pike VM) share.
#pragma once

#include <cstdint>

namespace attnkit::regex_detail {

// toLowerCase of one character when it is one character, else the character itself (regex_vm.cpp).
uint32_t lower1(uint32_t c);

enum Assertion : uint8_t {
  line_start, line_end, text_start, text_end, text_end_newline, word_boundary, not_word_boundary,
  ahead, not_ahead, behind, not_behind
};

}  // namespace attnkit::regex_detail

// libFuzzer harness: a Split pattern and a text (the input's bytes before and after its first
// zero byte; without one, the pattern runs on a fixed mixed text). The pattern compiles or is
// refused with a coded error; the text's matches must be ordered, disjoint, inside the text, and
// come within the step budget or as its out_of_range error. Anything else (an escaped exception,
// a sanitizer report, a timeout) is a bug.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "attnkit/text/regex.hpp"
#include "attnkit/text/utf8.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto* zero = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const std::size_t plen = zero ? static_cast<std::size_t>(zero - data) : size;
  static const char kMixed[] = "Hello world's  123 !!\n\tÉcole 東京 ٣٤ 😀 ﬁ x\r\n  ";
  std::string_view text = zero ? std::string_view(reinterpret_cast<const char*>(zero + 1), size - plen - 1)
                               : std::string_view(kMixed);
  attnkit::Regex re;
  attnkit::Status s = attnkit::Regex::compile(std::string_view(reinterpret_cast<const char*>(data), plen), re);
  if (!s.ok()) {
    if (s.code != attnkit::Code::invalid_argument) __builtin_trap();
    return 0;
  }
  if (re.program_size() > attnkit::Regex::kMaxProgram + 1) __builtin_trap();
  std::vector<uint32_t> cps;
  const auto* t = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    uint32_t c = 0xFFFD;
    const std::size_t n = attnkit::utf8::decode(t + i, text.size() - i, &c);
    cps.push_back(c);
    i += n ? n : 1;
  }
  std::vector<int32_t> m;
  s = re.find_all(cps.data(), cps.size(), m);
  if (!s.ok()) {
    if (s.code != attnkit::Code::out_of_range) __builtin_trap();
    return 0;
  }
  // Each match starts at or after the last one's end, and strictly after an empty one.
  int32_t from = 0;
  for (std::size_t k = 0; k + 1 < m.size(); k += 2) {
    if (m[k] < from || m[k + 1] < m[k] || m[k + 1] > static_cast<int32_t>(cps.size())) __builtin_trap();
    from = m[k + 1] + (m[k + 1] == m[k] ? 1 : 0);
  }
  return 0;
}

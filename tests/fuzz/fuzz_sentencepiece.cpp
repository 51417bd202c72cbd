// libFuzzer harness for SentencePiece's tokenizer.model (protobuf, precompiled charsmap, pieces)
// and encode/decode. The input is a model; one that loads encodes a fixed mixed list of texts and
// the input's last 64 bytes as text, then decodes what it got. Every id must name a piece and
// every offset lie within its text, in order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/text/sentencepiece.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace attnkit;
  std::unique_ptr<SentencePiece> sp;
  const char* bytes = reinterpret_cast<const char*>(data);
  if (!SentencePiece::from_model_proto(bytes, size, sp).ok()) return 0;
  std::vector<std::string> texts = {"Hello world", "  runs   of\tspaces  ", "Caf\xC3\xA9 \xEF\xAC\x81", "\xE6\x9D\xB1\xE4\xBA\xAC",
                                    "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9", "\xFF\xC0\x80\xED\xA0\x80", "", " "};
  texts.emplace_back(bytes + (size > 64 ? size - 64 : 0), size > 64 ? 64 : size);
  for (const std::string& t : texts) {
    std::vector<int32_t> out;
    if (!sp->encode(t.data(), t.size(), out).ok()) continue;
    std::vector<int32_t> ids;
    int32_t last_begin = 0;
    for (std::size_t i = 0; i < out.size(); i += 3) {
      const int32_t id = out[i], begin = out[i + 1], end = out[i + 2];
      if (id < 0 || static_cast<std::size_t>(id) >= sp->size()) __builtin_trap();
      if (begin < last_begin || begin > end || static_cast<std::size_t>(end) > t.size()) __builtin_trap();
      last_begin = begin;
      ids.push_back(id);
    }
    std::string text;
    if (!sp->decode(ids.data(), ids.size(), text).ok()) __builtin_trap();
  }
  return 0;
}

// libFuzzer harness for the tokenizer files and encode (SentencePiece-style tokenizer.json models
// encode whole texts and decode them). The first byte picks the file kind:
// 0 tokenizer.json, 1 vocab.txt, 2 encoder.json + vocab.bpe (split at the first NUL byte). A
// tokenizer that loads then encodes a fixed list of words and the input's last 64 bytes, split
// at spaces, as words.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/text/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace attnkit;
  if (size < 1) return 0;
  const int kind = data[0] % 4;
  const char* text = reinterpret_cast<const char*>(data + 1);
  const std::size_t n = size - 1;
  std::unique_ptr<Tokenizer> t;
  Status s;
  if (kind == 0) {
    s = Tokenizer::from_tokenizer_json(text, n, t);
  } else if (kind == 3) {  // tokenizer.json, NUL, a Precompiled charsmap's base64
    std::size_t cut = 0;
    while (cut < n && text[cut] != '\0') ++cut;
    s = Tokenizer::from_tokenizer_json(text, cut, t, std::string_view(text + std::min(cut + 1, n), n - std::min(cut + 1, n)));
  } else if (kind == 1) {
    s = Tokenizer::from_vocab_txt(text, n, true, t);
  } else {
    std::size_t cut = 0;
    while (cut < n && text[cut] != '\0') ++cut;
    s = Tokenizer::from_gpt2_files(text, cut, text + std::min(cut + 1, n), n - std::min(cut + 1, n), t);
  }
  if (!s.ok()) return 0;
  if (t->settings().empty()) __builtin_trap();
  if (const SentencePiece* sp = t->sentencepiece()) {  // Unigram / byte-fallback BPE: whole texts
    const std::size_t tail = n > 64 ? n - 64 : 0;
    for (const std::string& x : {std::string("Hello  world\t\xe2\x96\x81x "), std::string(text + tail, n - tail)}) {
      for (bool first : {true, false}) {
        std::vector<int32_t> out, ids;
        if (!sp->encode(x.data(), x.size(), out, first).ok()) continue;
        for (std::size_t i = 0; i < out.size(); i += 3) {
          if (out[i] < 0 || static_cast<std::size_t>(out[i]) >= sp->size()) __builtin_trap();
          if (out[i + 1] > out[i + 2] || static_cast<std::size_t>(out[i + 2]) > x.size()) __builtin_trap();
          ids.push_back(out[i]);
        }
        std::string back;
        if (!sp->decode(ids.data(), ids.size(), back, first).ok()) __builtin_trap();
      }
    }
    return 0;
  }
  if (t->encodes_texts()) {  // the C++ text steps on a mixed text and on the input's tail
    const std::size_t tail = n > 64 ? n - 64 : 0;
    for (const std::string& x : {std::string("Hello, WORLD! Caf\xC3\xA9 \xE6\x9D\xB1 \xF0\x9F\x98\x80 's 12"),
                                 std::string(text + tail, n - tail)}) {
      std::vector<int32_t> out;
      if (!t->encode_text(x.data(), x.size(), out).ok()) continue;
      for (std::size_t i = 0; i < out.size(); i += 3) {
        if (out[i] < 0 || static_cast<std::size_t>(out[i]) >= t->vocab_size()) __builtin_trap();
        if (out[i + 1] > out[i + 2] || static_cast<std::size_t>(out[i + 2]) > x.size()) __builtin_trap();
      }
    }
  }
  std::string words;
  std::vector<int32_t> ends;
  for (const char* w : {"hello", "unaffable", "a", "Ġthe", "##", "\xe2\x96\x81", "\xff\xfe"}) {
    words += w;
    ends.push_back(static_cast<int32_t>(words.size()));
  }
  const std::size_t tail = n > 64 ? n - 64 : 0;
  for (std::size_t i = tail; i < n; ++i) {
    if (text[i] == ' ') ends.push_back(static_cast<int32_t>(words.size()));
    else words += text[i];
  }
  ends.push_back(static_cast<int32_t>(words.size()));
  std::vector<int32_t> out;
  if (t->encode(words.data(), words.size(), ends.data(), ends.size(), out).ok()) {
    const int32_t vocab = static_cast<int32_t>(t->vocab_size());
    for (std::size_t i = 0; i < out.size(); i += 3)
      if (out[i] < 0 || out[i] >= vocab) __builtin_trap();  // every id has a row
  }
  return 0;
}

// libFuzzer harness: a GGUF file's bytes -> header validation (whole, and again from a prefix as
// the JavaScript loader reads it), the promises of an accepted index, every metadata accessor, its
// JSON, and the dequantisation of every tensor it admits.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnkit/formats/gguf.hpp"
#include "attnkit/ops/dequantize.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace attnkit;
  // The input in a buffer of its exact size, so that ASan sees a read one byte past it.
  std::vector<uint8_t> bytes(data, data + size);
  const uint8_t* file = bytes.data();
  GgufFile index;
  uint64_t needed = 7;
  const Status whole = parse_gguf(file, size, size, index, &needed);
  if (needed != 0) __builtin_trap();  // the whole file given: never "call again"
  // A prefix, as web/src/formats/gguf.js gives one: either the same verdict or "more bytes".
  if (size > 1) {
    const std::size_t part = size / 2;
    std::vector<uint8_t> prefix(data, data + part);
    GgufFile partial;
    const Status s = parse_gguf(prefix.data(), part, size, partial, &needed);
    if (needed) {
      if (s.ok() || needed <= part || needed > size || s.argument != "bytes") __builtin_trap();
    } else if (s.ok() != whole.ok() || s.argument != whole.argument) {
      __builtin_trap();
    }
  }
  if (!whole.ok()) {
    if (whole.message.empty() || whole.argument.empty()) __builtin_trap();  // every error names its argument
    return 0;
  }
  // What the index promises: tensors in data order, aligned, inside the file, each a whole
  // number of blocks; nothing but padding after the last.
  uint64_t end = index.data_offset;
  if (index.data_offset < index.header_bytes || index.data_offset % index.alignment) __builtin_trap();
  for (const auto& t : index.tensors) {
    if (t.offset < end || (t.offset - index.data_offset) % index.alignment || t.offset > size || t.size > size - t.offset) {
      __builtin_trap();
    }
    const int block = ggml_block_elements(t.type);
    if (block == 0 || t.ne[0] % static_cast<uint64_t>(block) ||
        t.size != t.elements / static_cast<uint64_t>(block) * static_cast<uint64_t>(ggml_block_bytes(t.type))) {
      __builtin_trap();
    }
    end = t.offset + t.size;
    std::vector<float> out(static_cast<std::size_t>(t.elements));
    if (!dequantize(out.data(), file + t.offset, out.size(), t.type).ok()) __builtin_trap();
  }
  if (!index.tensors.empty() && size - end >= index.alignment) __builtin_trap();
  for (const auto& kv : index.metadata) {
    const GgufValue& v = kv.value;
    if (v.offset > size || v.size > size - v.offset) __builtin_trap();
    (void)v.number();
    (void)v.integer();
    if (v.type == GgufType::string) (void)gguf_string(v, file).size();
    if (v.type == GgufType::array) {
      if (v.element == GgufType::string) {
        std::vector<std::string_view> strings;
        if (!gguf_array_strings(v, file, strings).ok() || strings.size() != v.count) __builtin_trap();
        for (const auto& s : strings) {
          if (s.data() < reinterpret_cast<const char*>(file) || s.data() + s.size() > reinterpret_cast<const char*>(file) + size) {
            __builtin_trap();
          }
        }
      } else {
        for (uint64_t i = 0; i < v.count; ++i) {
          (void)gguf_array_number(v, file, i);
          (void)gguf_array_integer(v, file, i);
        }
      }
    }
  }
  (void)index.find("general.architecture");
  // The JSON the JavaScript loader reads: valid, within its announced size, every entry there.
  const std::string json = gguf_index_json(index);
  if (json.size() > gguf_index_json_bytes(index)) __builtin_trap();
  const auto parsed = nlohmann::json::parse(json);  // (throws, and so crashes, on invalid JSON)
  if (parsed["metadata"].size() != index.metadata.size() || parsed["tensors"].size() != index.tensors.size()) __builtin_trap();
  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    if (parsed["metadata"][i][0].get<std::string>() != index.metadata[i].key) __builtin_trap();
  }
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    if (parsed["tensors"][i][0].get<std::string>() != index.tensors[i].name ||
        parsed["tensors"][i][3].get<uint64_t>() != index.tensors[i].offset) {
      __builtin_trap();
    }
  }
  return 0;
}

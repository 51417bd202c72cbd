// libFuzzer harness: a .safetensors file's bytes -> prefix check, header validation, and the
// conversion of every tensor the header admits (which must lie inside the bytes given).
#include <cstdint>
#include <cstring>
#include <vector>

#include "attnkit/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace attnkit;
  if (size < 8) return 0;
  uint64_t header_length = 0;
  std::memcpy(&header_length, data, 8);  // little-endian hosts only, like the loader
  if (!check_safetensors_prefix(header_length, size).ok()) return 0;
  SafetensorsIndex index;
  if (!parse_safetensors_header(reinterpret_cast<const char*>(data) + 8, header_length, size, index).ok()) return 0;
  std::vector<float> out;
  for (const auto& t : index.tensors) {
    if (t.end > size || t.begin > t.end) __builtin_trap();  // the header check promised this
    if (t.dtype != TensorDType::f16 && t.dtype != TensorDType::bf16 && t.dtype != TensorDType::f32 &&
        t.dtype != TensorDType::f64) {
      continue;  // integer dtypes are copied as they are by the JavaScript loader
    }
    out.resize(t.elements);
    convert_to_float32(out.data(), data + t.begin, t.elements, t.dtype);
  }
  (void)safetensors_index_json(index);
  return 0;
}

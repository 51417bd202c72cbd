// libFuzzer harness: a .safetensors file's bytes -> prefix check, header validation, and the
// conversion of every tensor the header admits (which must tile the data exactly).
#include <cstdint>
#include <cstring>
#include <vector>

#include "attnkit/formats/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace attnkit;
  if (size < 8) return 0;
  uint64_t header_length = 0;
  std::memcpy(&header_length, data, 8);  // little-endian hosts only, like the loader
  if (!check_safetensors_prefix(header_length, size).ok()) return 0;
  SafetensorsIndex index;
  if (!parse_safetensors_header(reinterpret_cast<const char*>(data) + 8, header_length, size, index).ok()) return 0;
  std::vector<float> out;
  uint64_t covered = 8 + header_length;
  for (const auto& t : index.tensors) {
    // The header check promised these: inside the bytes, in file order, no gap or overlap.
    if (t.end > size || t.begin > t.end || t.begin != covered) __builtin_trap();
    covered = t.end;
    if (t.dtype != TensorDType::f16 && t.dtype != TensorDType::bf16 && t.dtype != TensorDType::f32 &&
        t.dtype != TensorDType::f64) {
      continue;  // integer dtypes are copied as they are by the JavaScript loader
    }
    out.resize(t.elements);
    convert_to_float32(out.data(), data + t.begin, t.elements, t.dtype);
  }
  if (covered != size) __builtin_trap();  // and nothing after the last tensor
  (void)safetensors_index_json(index);
  return 0;
}

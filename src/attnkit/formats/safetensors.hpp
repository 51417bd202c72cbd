// The .safetensors format (Hugging Face): 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ..., "__metadata__":
// {"key": "value"}}, then the data; offsets are relative to the end of the header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnkit/core/status.hpp"

namespace attnkit {

// Every dtype of the format; the numbers are what the JavaScript loader reads.
enum class TensorDType : int {
  f32 = 0, f16 = 1, bf16 = 2, f64 = 3, i64 = 4, i32 = 5, i16 = 6, i8 = 7, u8 = 8, boolean = 9,
  u16 = 10, u32 = 11, u64 = 12,
};

// Bytes per element of a dtype.
int dtype_size(TensorDType dtype);

struct SafetensorsEntry {
  std::string name;
  TensorDType dtype = TensorDType::f32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // absolute byte offsets in the file
  uint64_t elements = 0;
};

struct SafetensorsIndex {
  std::vector<SafetensorsEntry> tensors;  // in file order (by begin offset)
  std::map<std::string, std::string> metadata;
};

// The largest header accepted (Hugging Face's safetensors uses the same 100 MB limit) and the
// deepest JSON nesting (a valid header needs 3; the limit keeps a hostile file from exhausting
// the parser's stack).
constexpr uint64_t kMaxSafetensorsHeader = 100000000;
constexpr int kMaxJsonDepth = 64;

// Validates and indexes a header. `header` holds the N JSON bytes; `header_length` is N as read
// from the file's first 8 bytes; `file_size` is the whole file's size. Checks: N within the limit
// and the file; valid JSON no deeper than kMaxJsonDepth; every entry with a known dtype (F64, F32,
// F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL), a shape of non-negative integers and data_offsets [begin, end] inside the data with
// end - begin = elements x dtype size; the tensors contiguous from the data's first byte to the
// file's last (no gaps, no overlaps, no trailing bytes: Hugging Face's rule); no JSON key twice in
// one object; __metadata__ string to string. Errors name the tensor and the field.
Status parse_safetensors_header(const char* header, uint64_t header_length, uint64_t file_size, SafetensorsIndex& out);

// Checks the 8-byte length prefix against the file size before the header is read.
Status check_safetensors_prefix(uint64_t header_length, uint64_t file_size);

// Converts `count` little-endian values of a floating-point `dtype` (F32, F16, BF16, F64) to
// float32 (F16 with subnormals, infinities and NaN; BF16 by widening the bits; F64 rounded to
// nearest, overflowing to infinity as a cast does).
void convert_to_float32(float* out, const void* src, std::size_t count, TensorDType dtype);

// The index as JSON: {"tensors": [{"name", "dtype" (a TensorDType number), "shape", "begin",
// "end"}], "metadata": {...}} (what the JavaScript loader reads).
std::string safetensors_index_json(const SafetensorsIndex& index);

// JSON nesting depth of `text` (brackets outside strings), stopping early past `limit`.
int json_depth(const char* text, std::size_t length, int limit);

// The checks every JSON parse of an untrusted file makes first (safetensors headers, config.json,
// tokenizer files): no raw NUL byte (nlohmann would stop there and accept what came before),
// nesting no deeper than kMaxJsonDepth (invalid_argument), and room in the heap
// for nlohmann's tree (out_of_memory from check_heap), so that the parser can neither exhaust its
// stack nor run the heap dry (a failed allocation inside it aborts the wasm instance). Errors
// carry `argument` and name the text as `file` ("config.json", "the safetensors header").
Status check_json_text(const char* argument, const std::string& file, const char* text, std::size_t length);

}  // namespace attnkit

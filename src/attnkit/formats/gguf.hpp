// The GGUF format (llama.cpp / ggml), versions 2 and 3, little-endian:
//   "GGUF", uint32 version, uint64 tensor count, uint64 metadata count,
//   metadata: (string key, uint32 value type, value) x count,
//   tensor infos: (string name, uint32 n_dims, uint64 ne[n_dims], uint32 ggml type, uint64 offset) x count,
//   padding to the alignment, then the tensor data (each tensor at data start + its offset).
// A string is a uint64 byte length and that many UTF-8 bytes; an array value is a uint32 element
// type, a uint64 count and the elements. Dims are ggml's: ne[0] is the innermost (a row of
// ne[0] elements), so a PyTorch [out, in] weight has ne = {in, out}.
//
// The reference reader is ggml's gguf_init_from_file (ggml/src/gguf.cpp); this one refuses what it
// refuses and more, with coded errors that name the key or the tensor, and reads nothing outside
// the bytes it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnkit/core/status.hpp"

namespace attnkit {

// Metadata value types (ggml's gguf_type).
enum class GgufType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12,
};

// Bytes of a scalar of `type` (u8 .. f64, bool 1); 0 for string and array.
int gguf_type_size(GgufType type);

// One metadata value, as a view into the file: nothing is copied, so the tokenizer's arrays
// (tokenizer.ggml.tokens, .scores, .token_type, .merges: 10^5 entries and more) cost a few words.
struct GgufValue {
  GgufType type = GgufType::u8;
  GgufType element = GgufType::u8;  // arrays: the elements' type (never array: nesting is refused)
  uint64_t count = 1;               // arrays: the number of elements; 1 otherwise
  uint64_t offset = 0;              // absolute file offset of the payload: a scalar's bytes, a string's
                                    // UTF-8 bytes (after its length), an array's first element
  uint64_t size = 0;                // payload bytes: the scalar's width, the string's length, all elements
  uint64_t bits = 0;                // a scalar number's or bool's little-endian bytes, zero-extended

  // A numeric or bool scalar as a double (64-bit integers rounded), the bits of an f32 / f64
  // converted; 0 for strings and arrays.
  double number() const;
  // An integer or bool scalar, sign-extended for i8 .. i64 (a u64 above 2^63 - 1 reads negative:
  // compare with uinteger()); 0 for other types.
  int64_t integer() const;
  uint64_t uinteger() const { return bits; }
  bool is_integer() const;  // u8 .. i64 (not bool)
};

struct GgufKV {
  std::string key;
  GgufValue value;
};

// A string value's bytes (not validated as UTF-8: GGUF writers may store raw bytes in token lists).
// `file` is the file's first byte (offsets are absolute).
std::string_view gguf_string(const GgufValue& value, const uint8_t* file);
// Element i (< count) of a numeric or bool array, as GgufValue::number() / integer() read a scalar.
double gguf_array_number(const GgufValue& array, const uint8_t* file, uint64_t i);
int64_t gguf_array_integer(const GgufValue& array, const uint8_t* file, uint64_t i);
// Every string of a string array, as views into `file` (16 bytes each). invalid_argument unless
// `array` is an array of strings.
Status gguf_array_strings(const GgufValue& array, const uint8_t* file, std::vector<std::string_view>& out);

struct GgufTensorInfo {
  std::string name;
  int type = 0;          // ggml_type number: 0 F32, 1 F16, 2 Q4_0, 8 Q8_0, 12 Q4_K, 30 BF16
  uint32_t n_dims = 0;   // 0 .. 4
  uint64_t ne[4] = {1, 1, 1, 1};  // ggml's dims, ne[0] innermost; 1 past n_dims
  uint64_t elements = 0;
  uint64_t offset = 0;   // absolute file offset of the data
  uint64_t size = 0;     // bytes of data: elements / block elements x block bytes
};

struct GgufFile {
  uint32_t version = 0;
  uint64_t alignment = 32;     // general.alignment, else 32
  uint64_t header_bytes = 0;   // where the tensor infos end
  uint64_t data_offset = 0;    // the data section: header_bytes rounded up to the alignment
  std::vector<GgufKV> metadata;          // in file order
  std::vector<GgufTensorInfo> tensors;   // in file order (and so in data order)

  const GgufValue* find(std::string_view key) const;  // nullptr when absent
};

// Limits: a key's length (the GGUF spec's 65535), a tensor name's (ggml's GGML_MAX_NAME 64, so
// at most 63 bytes) and dims (GGML_MAX_DIMS). Element counts above 2^60 are refused (no file
// holds one; it keeps every byte count below 2^63).
constexpr uint64_t kGgufMaxKey = 65535;
constexpr uint64_t kGgufMaxName = 63;
constexpr uint32_t kGgufMaxDims = 4;

// Parses and validates a GGUF file's header. `bytes` holds the file's first `available` bytes
// (the whole file, or a prefix that holds the header); `file_size` is the whole file's size.
// Checks, each a coded error whose argument names what is wrong ("magic", "version",
// "tensorCount", "metadataCount", a key, a tensor name, "bytes") and whose message says what
// was expected:
//   - the magic "GGUF" (invalid_argument); version 2 or 3 (v1 and big-endian files are named);
//   - the counts against the bytes left (each key-value pair takes at least 14 bytes, each tensor
//     info 25): a count of 2^64 is out_of_range before anything is allocated, and the memory the
//     index needs is asked of the heap first (out_of_memory);
//   - every string, array and value inside the file (out_of_range naming the key or tensor);
//   - keys: 1 .. 65535 bytes of valid UTF-8, no key twice; value types 0 .. 12; arrays of arrays
//     refused; bools 0 or 1; general.alignment, when present, a uint32 power of two;
//   - tensor names: 1 .. 63 bytes of valid UTF-8, no name twice; n_dims <= 4; dims below 2^63
//     whose product is at most 2^60; a type attnkit reads (F32, F16, BF16, Q8_0, Q4_0, Q4_K:
//     others are refused naming the tensor and the type's number and name); ne[0] a multiple of
//     the type's block (32 for Q8_0 / Q4_0, 256 for Q4_K);
//   - tensor data: each offset a multiple of the alignment, the tensors packed in file order as
//     ggml requires (each at the previous one's end rounded up to the alignment: an overlap and a
//     gap are named), every byte inside the file, and nothing after the last tensor but its
//     padding.
// Work is linear in the header's bytes (duplicates are found by sorting); memory is the index,
// a few words per key and tensor.
// When `available` < `file_size` and the header runs past `available`, the result is
// out_of_range naming "bytes" and, if `needed` is given, *needed is set to the bytes to call
// again with (more than `available`, at most `file_size`); it is 0 for every other outcome.
Status parse_gguf(const uint8_t* bytes, std::size_t available, uint64_t file_size, GgufFile& out,
                  uint64_t* needed = nullptr);

// The ggml type's name ("Q4_K", "Q6_K", "IQ2_XS", ...), "type N" for numbers ggml has no type for.
std::string ggml_type_name(int type);

// The index as JSON for the JavaScript loader: {"version", "alignment", "dataOffset",
// "headerBytes", "metadata": [[key, type, element, count, offset, size], ...],
// "tensors": [[name, ggml type, [ne...], offset, size], ...]} (offsets absolute), written
// directly into one string of at most gguf_index_json_bytes(file) bytes (ask the heap for that
// first: a failed allocation aborts a wasm instance).
std::size_t gguf_index_json_bytes(const GgufFile& file);
std::string gguf_index_json(const GgufFile& file);

}  // namespace attnkit

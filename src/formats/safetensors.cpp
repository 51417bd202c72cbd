#include "attnkit/formats/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnkit {

namespace {

Status bad(const std::string& argument, const std::string& message) {
  return Status::error(Code::invalid_argument, argument, "safetensors: " + message);
}


float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    uint32_t m = mantissa;
    do {
      ++e;
      m <<= 1;
    } while ((m & 0x400) == 0);
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((m & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct DTypeName {
  const char* name;
  TensorDType dtype;
  int size;
};
constexpr DTypeName kDTypes[] = {
    {"F32", TensorDType::f32, 4}, {"F16", TensorDType::f16, 2},   {"BF16", TensorDType::bf16, 2},
    {"F64", TensorDType::f64, 8}, {"I64", TensorDType::i64, 8},   {"I32", TensorDType::i32, 4},
    {"I16", TensorDType::i16, 2}, {"I8", TensorDType::i8, 1},     {"U8", TensorDType::u8, 1},
    {"BOOL", TensorDType::boolean, 1}, {"U16", TensorDType::u16, 2}, {"U32", TensorDType::u32, 4},
    {"U64", TensorDType::u64, 8},
};

// The first key that a JSON text nlohmann parsed repeats within one object, as a dotted path
// ("name.dtype"), or "" when none is. nlohmann keeps the last value of a repeated key, but a header
// naming a tensor or a field twice is ambiguous (readers may take either), so it is refused.
std::string repeated_key(const char* text, std::size_t length) {
  // Per open object or array: its key path and its number in the order of opening. Keys seen are
  // kept as "number:key" in the parser's own map type (no new code in the loaders module).
  std::vector<std::string> paths;
  std::vector<int32_t> numbers;
  nlohmann::json::object_t seen;
  std::string key;  // the last key read: a container opened next is its value
  int32_t opened = 0;
  const auto join = [](const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "." + b; };
  length = strnlen(text, length);  // nlohmann's parse ends at a NUL byte
  for (std::size_t i = 0; i < length; ++i) {
    if (text[i] == '{' || text[i] == '[') {
      paths.push_back(join(paths.empty() ? std::string() : paths.back(), key));
      numbers.push_back(opened++);
      key.clear();
    } else if ((text[i] == '}' || text[i] == ']') && !paths.empty()) {
      paths.pop_back();
      numbers.pop_back();
      key.clear();
    } else if (text[i] == '"') {
      const std::size_t begin = i;
      for (++i; i < length && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (i >= length) break;
      std::size_t after = i + 1;
      while (after < length && (text[after] == ' ' || text[after] == '\t' || text[after] == '\r' || text[after] == '\n')) ++after;
      if (after == length || text[after] != ':' || paths.empty()) continue;  // a value, not a key
      key.assign(text + begin + 1, i - begin - 1);
      if (key.find('\\') != std::string::npos) {  // escapes: the key as the parser reads it
        const nlohmann::json decoded = nlohmann::json::parse(text + begin, text + i + 1, nullptr, false);
        if (decoded.is_string()) key = decoded.get_ref<const std::string&>();
      }
      const std::size_t before = seen.size();
      seen[std::to_string(numbers.back()) + ":" + key];
      if (seen.size() == before) return join(paths.back(), key);
    }
  }
  return "";
}

}  // namespace

int dtype_size(TensorDType d) {
  for (const auto& t : kDTypes)
    if (t.dtype == d) return t.size;
  return 0;
}

int json_depth(const char* text, std::size_t length, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < length; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// Heap bytes nlohmann/json may take per byte of input. Measured natively (64-bit) at up to 28 for
// arrays of empty objects ([{},{},...]: a 16-byte value and a map per 3 bytes, in a vector that
// doubles); wasm32's pointers are half as wide. 32 leaves room above both.
constexpr double kJsonBytesPerByte = 32;

Status check_json_text(const char* argument, const std::string& file, const char* text, std::size_t length) {
  // JSON text holds no raw NUL (Hugging Face's serde_json refuses one); nlohmann's lexer would end
  // the input there and accept `{...}\0garbage`.
  if (const void* nul = std::memchr(text, 0, length)) {
    return Status::error(Code::invalid_argument, argument,
                         file + " holds a NUL byte at offset " + std::to_string(static_cast<const char*>(nul) - text) +
                             " (JSON text cannot)");
  }
  if (json_depth(text, length, kMaxJsonDepth) > kMaxJsonDepth) {
    return Status::error(Code::invalid_argument, argument,
                         file + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  Status s = check_heap(argument, kJsonBytesPerByte * static_cast<double>(length) + 65536);
  if (!s.ok()) s.message = "parsing " + file + ": " + s.message;
  return s;
}

Status check_safetensors_prefix(uint64_t header_length, uint64_t file_size) {
  if (file_size < 8) return bad("bytes", "the file has " + std::to_string(file_size) + " bytes, fewer than the 8-byte header length");
  if (header_length > kMaxSafetensorsHeader) {
    return bad("headerLength", "the header length is " + std::to_string(header_length) + " bytes, above the limit of " +
                                   std::to_string(kMaxSafetensorsHeader));
  }
  if (header_length > file_size - 8) {
    return bad("headerLength", "the header length " + std::to_string(header_length) + " runs past the end of the " +
                                   std::to_string(file_size) + "-byte file");
  }
  return Status::success();
}

Status parse_safetensors_header(const char* header, uint64_t header_length, uint64_t file_size, SafetensorsIndex& out) {
  Status s = check_safetensors_prefix(header_length, file_size);
  if (!s.ok()) return s;
  const std::size_t n = static_cast<std::size_t>(header_length);
  s = check_json_text("header", "safetensors: the header JSON", header, n);
  if (!s.ok()) return s;
  // Without exceptions: parse errors give a discarded value.
  const nlohmann::json j = nlohmann::json::parse(header, header + n, nullptr, false);
  if (j.is_discarded()) return bad("header", "the header is not valid JSON");
  const std::string repeated = repeated_key(header, n);
  if (!repeated.empty()) return bad(repeated, "the header has the key '" + repeated + "' twice");
  if (!j.is_object()) return bad("header", "the header must be a JSON object");
  const uint64_t data_size = file_size - 8 - header_length, data_start = 8 + header_length;
  out = SafetensorsIndex{};
  for (const auto& [name, e] : j.items()) {
    if (name == "__metadata__") {
      if (!e.is_object()) return bad("__metadata__", "__metadata__ must be an object of strings");
      for (const auto& [k, v] : e.items()) {
        if (!v.is_string()) return bad("__metadata__." + k, "__metadata__ values must be strings ('" + k + "' is not)");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "'";
    if (!e.is_object()) return bad(name, where + " must be an object with dtype, shape and data_offsets");
    SafetensorsEntry t;
    t.name = name;
    const auto dt = e.find("dtype");
    if (dt == e.end() || !dt->is_string()) return bad(name + ".dtype", where + " has no dtype string");
    const std::string d = dt->get<std::string>();
    const DTypeName* known = nullptr;
    for (const auto& k : kDTypes)
      if (d == k.name) known = &k;
    if (!known) {
      return bad(name + ".dtype", where + " has dtype '" + d +
                                      "'; supported: F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL");
    }
    t.dtype = known->dtype;
    const auto sh = e.find("shape");
    if (sh == e.end() || !sh->is_array()) return bad(name + ".shape", where + " has no shape array");
    double elements = 1;
    for (const auto& dim : *sh) {
      // (a dim above 2^63 would read back negative; above 2^32 none can be a real tensor's)
      if (!dim.is_number_unsigned() || dim.get<uint64_t>() > 4294967296ull) {
        return bad(name + ".shape", where + ": shape entries must be integers in [0, 2^32], got " + dim.dump());
      }
      elements *= dim.get<double>();
      t.shape.push_back(dim.get<int64_t>());
    }
    if (elements > 4294967296.0) return bad(name + ".shape", where + " has more than 2^32 elements");
    t.elements = static_cast<uint64_t>(elements);
    const auto off = e.find("data_offsets");
    if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned()) {
      return bad(name + ".data_offsets", where + " needs data_offsets [begin, end] of non-negative integers");
    }
    const uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      return bad(name + ".data_offsets", where + " has data_offsets [" + std::to_string(begin) + ", " +
                                             std::to_string(end) + "] outside the " + std::to_string(data_size) +
                                             " bytes of data");
    }
    const uint64_t expected = t.elements * static_cast<uint64_t>(dtype_size(t.dtype));
    if (end - begin != expected) {
      return bad(name + ".data_offsets", where + " spans " + std::to_string(end - begin) + " bytes but its shape and " +
                                             d + " need " + std::to_string(expected));
    }
    t.begin = data_start + begin;
    t.end = data_start + end;
    out.tensors.push_back(std::move(t));
  }
  std::sort(out.tensors.begin(), out.tensors.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  // As Hugging Face's safetensors (Metadata::validate): the tensors tile the data from its first
  // byte to its last, with no gaps (bytes no tensor owns could hide anything) and nothing after.
  uint64_t covered = data_start;
  for (std::size_t i = 0; i < out.tensors.size(); ++i) {
    const auto& q = out.tensors[i];
    if (q.begin < covered) {
      return bad(q.name + ".data_offsets", "tensors '" + out.tensors[i - 1].name + "' and '" + q.name + "' overlap");
    }
    if (q.begin > covered) {
      return bad(q.name + ".data_offsets", "tensor '" + q.name + "' starts at byte " + std::to_string(q.begin - data_start) +
                                               " of the data, leaving a gap after byte " +
                                               std::to_string(covered - data_start) + " (tensors must be contiguous)");
    }
    covered = q.end;
  }
  if (covered != file_size) {
    return bad("bytes", "the tensors cover " + std::to_string(covered - data_start) + " of the " +
                            std::to_string(data_size) + " bytes of data; a file must end with its last tensor");
  }
  return s;
}

std::string safetensors_index_json(const SafetensorsIndex& index) {
  nlohmann::json j = {{"tensors", nlohmann::json::array()}, {"metadata", index.metadata}};
  for (const auto& t : index.tensors) {
    j["tensors"].push_back({{"name", t.name}, {"dtype", static_cast<int>(t.dtype)}, {"shape", t.shape},
                            {"begin", t.begin}, {"end", t.end}});
  }
  return j.dump();
}

void convert_to_float32(float* out, const void* src, std::size_t count, TensorDType dtype) {
  const auto* bytes = static_cast<const uint8_t*>(src);
  for (std::size_t i = 0; i < count; ++i) {
    if (dtype == TensorDType::f64) {
      uint64_t bits = 0;
      for (int b = 7; b >= 0; --b) bits = bits << 8 | bytes[8 * i + b];
      double d;
      std::memcpy(&d, &bits, 8);
      out[i] = static_cast<float>(d);
    } else if (dtype == TensorDType::f32) {
      uint32_t bits = bytes[4 * i] | bytes[4 * i + 1] << 8 | bytes[4 * i + 2] << 16 | static_cast<uint32_t>(bytes[4 * i + 3]) << 24;
      std::memcpy(out + i, &bits, 4);
    } else {
      const uint16_t h = static_cast<uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8);
      if (dtype == TensorDType::f16) {
        out[i] = half_to_float(h);
      } else {
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(out + i, &bits, 4);
      }
    }
  }
}

}  // namespace attnkit

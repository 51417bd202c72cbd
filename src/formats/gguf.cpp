// The GGUF header reader (attnkit/formats/gguf.hpp): a cursor that never reads past the bytes it
// was given, the checks of ggml's gguf_init_from_file and the hardening rules (docs/hardening.md).
#include "attnkit/formats/gguf.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

namespace attnkit {

namespace {

// ggml's type names by number (ggml.h's enum ggml_type; 4, 5 and 31 .. 33, 36 .. 38 were removed).
constexpr const char* kGgmlNames[] = {
    "F32", "F16", "Q4_0", "Q4_1", nullptr, nullptr, "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K",
    "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8",
    "I16", "I32", "I64", "F64", "IQ1_M", "BF16", nullptr, nullptr, nullptr, "TQ1_0", "TQ2_0", nullptr, nullptr,
    nullptr, "MXFP4",
};

// The types read here: block elements and bytes (as ggml_blck_size / ggml_type_size).
struct Readable {
  int type, block, bytes;
};
constexpr Readable kReadable[] = {{0, 1, 4}, {1, 1, 2}, {30, 1, 2}, {8, 32, 34}, {2, 32, 18}, {12, 256, 144}};

constexpr uint64_t kMaxElements = uint64_t{1} << 60;
constexpr uint64_t kMinKV = 8 + 1 + 4 + 1;            // key length, a 1-byte key, type, a 1-byte value
constexpr uint64_t kMinTensor = 8 + 1 + 4 + 4 + 8;    // name length, a 1-byte name, n_dims, type, offset

constexpr const char* kValueNames[] = {"uint8", "int8",   "uint16", "int16", "uint32", "int32", "float32",
                                      "bool",  "string", "array",  "uint64", "int64", "float64"};

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool valid_utf8(const uint8_t* s, std::size_t n) {
  for (std::size_t i = 0; i < n;) {
    const uint8_t c = s[i];
    std::size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    const uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

uint64_t load_le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// Messages are built only on failure, by one out-of-line joiner: each call site stays small in the
// size-optimised loaders module.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out += p;
  return out;
}

std::string num(uint64_t v) { return std::to_string(v); }

Status bad(Code code, const std::string& argument, std::initializer_list<std::string_view> message) {
  return Status::error(code, argument, "gguf: " + cat(message));
}

// What a read is for, in messages: lead + 'name' + index + tail ("the value of key 'k' (string 3)'s length").
struct What {
  const char* lead;
  const std::string* name = nullptr;
  int64_t index = -1;      // >= 0: appended, as " (string N)" when `string` is set
  const char* tail = "";
  bool string = false;
};

std::string describe(const What& w) {
  std::string out = w.lead;
  if (w.name) out += in_quotes(*w.name);
  if (w.index >= 0) out += w.string ? " (string " + num(static_cast<uint64_t>(w.index)) + ")" : num(static_cast<uint64_t>(w.index));
  return out + w.tail;
}

// Reads the header front to back. Every read is checked against `available` (the bytes given)
// and `size` (the file's): past `size` the file is truncated (out_of_range naming the argument);
// past `available` only, the caller has given a prefix that is too short (`more` is set).
struct Cursor {
  const uint8_t* bytes;
  uint64_t available, size, pos = 0;
  uint64_t more = 0;  // > 0: a read needed this many bytes of a longer prefix

  Status need(uint64_t n, const std::string& argument, const What& what) {
    if (n <= size - pos && n <= available - pos) return Status::success();
    if (n <= size - pos) {  // inside the file, beyond the prefix
      more = pos + n;
      return bad(Code::out_of_range, "bytes", {"the header continues past the first ", num(available), " bytes given (",
                                               describe(what), " needs bytes up to ", num(pos + n), ")"});
    }
    return bad(Code::out_of_range, argument, {"the ", num(size), "-byte file ends inside ", describe(what), " (", num(n),
                                              " bytes from byte ", num(pos), " are needed)"});
  }
  Status read(uint64_t& v, int n, const std::string& argument, const What& what) {
    Status s = need(static_cast<uint64_t>(n), argument, what);
    if (s.ok()) {
      v = load_le(bytes + pos, n);
      pos += static_cast<uint64_t>(n);
    }
    return s;
  }
  // A string's length and bytes: [begin, begin + length).
  Status string(uint64_t& begin, uint64_t& length, const std::string& argument, const What& what) {
    What of_length = what;
    of_length.tail = "'s length";
    Status s = read(length, 8, argument, of_length);
    if (!s.ok()) return s;
    if (length > size - pos) {
      return bad(Code::out_of_range, argument, {describe(what), " is ", num(length), " bytes long, past the end of the ",
                                                num(size), "-byte file (it starts at byte ", num(pos), ")"});
    }
    s = need(length, argument, what);
    if (s.ok()) {
      begin = pos;
      pos += length;
    }
    return s;
  }
};

// A value's payload after its type: scalars (bits kept), strings, and arrays of either.
Status read_value(Cursor& c, GgufValue& v, const std::string& key) {
  const What where{"the value of key ", &key};
  const auto check_bool = [&](uint64_t b, int64_t index) {
    if (b <= 1) return Status::success();
    return bad(Code::invalid_argument, key, {describe(where), index >= 0 ? " (element " + num(static_cast<uint64_t>(index)) + ")" : "",
                                             " is a bool of byte ", num(b), "; GGUF bools are 0 or 1"});
  };
  if (v.type == GgufType::string) return c.string(v.offset, v.size, key, where);
  if (v.type != GgufType::array) {
    const int width = gguf_type_size(v.type);
    v.offset = c.pos;
    v.size = static_cast<uint64_t>(width);
    Status s = c.read(v.bits, width, key, where);
    return s.ok() && v.type == GgufType::boolean ? check_bool(v.bits, -1) : s;
  }
  uint64_t element = 0;
  What part = where;
  part.tail = "'s element type";
  Status s = c.read(element, 4, key, part);
  if (!s.ok()) return s;
  if (element == static_cast<uint64_t>(GgufType::array)) {
    return bad(Code::invalid_argument, key, {"key ", in_quotes(key), " holds an array of arrays, which attnkit does not read (nor does ggml)"});
  }
  if (element > static_cast<uint64_t>(GgufType::f64)) {
    return bad(Code::invalid_argument, key, {"key ", in_quotes(key), " holds an array of value type ", num(element),
                                             "; GGUF value types are 0 .. 12"});
  }
  v.element = static_cast<GgufType>(element);
  part.tail = "'s element count";
  s = c.read(v.count, 8, key, part);
  if (!s.ok()) return s;
  const int width = gguf_type_size(v.element);
  const uint64_t left = c.size - c.pos, least = width ? static_cast<uint64_t>(width) : 8;
  if (v.count > left / least) {
    return bad(Code::out_of_range, key, {"key ", in_quotes(key), " holds an array of ", num(v.count), " ", kValueNames[element],
                                         " values, more than the ", num(left), " bytes left in the file can hold"});
  }
  v.offset = c.pos;
  if (v.element == GgufType::string) {
    What item = where;
    item.string = true;
    for (uint64_t i = 0; i < v.count; ++i) {
      uint64_t begin, length;
      item.index = static_cast<int64_t>(i);
      s = c.string(begin, length, key, item);
      if (!s.ok()) return s;
    }
  } else {
    s = c.need(v.count * static_cast<uint64_t>(width), key, where);
    if (!s.ok()) return s;
    if (v.element == GgufType::boolean) {
      for (uint64_t i = 0; i < v.count; ++i) {
        s = check_bool(c.bytes[c.pos + i], static_cast<int64_t>(i));
        if (!s.ok()) return s;
      }
    }
    c.pos += v.count * static_cast<uint64_t>(width);
  }
  v.size = c.pos - v.offset;
  return s;
}

// Whether two of `names` are equal (found by sorting views of them): their positions in first, second.
bool find_repeat(const std::vector<std::string_view>& names, std::size_t& first, std::size_t& second) {
  std::vector<std::pair<std::string_view, uint32_t>> order(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) order[i] = {names[i], static_cast<uint32_t>(i)};
  std::sort(order.begin(), order.end());
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (order[i - 1].first == order[i].first) {
      first = order[i - 1].second;
      second = order[i].second;
      return true;
    }
  }
  return false;
}

uint64_t round_up(uint64_t v, uint64_t alignment) { return v + (alignment - v % alignment) % alignment; }

}  // namespace

int gguf_type_size(GgufType type) {
  switch (type) {
    case GgufType::u8: case GgufType::i8: case GgufType::boolean: return 1;
    case GgufType::u16: case GgufType::i16: return 2;
    case GgufType::u32: case GgufType::i32: case GgufType::f32: return 4;
    case GgufType::u64: case GgufType::i64: case GgufType::f64: return 8;
    default: return 0;
  }
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::u8: case GgufType::i8: case GgufType::u16: case GgufType::i16: case GgufType::u32:
    case GgufType::i32: case GgufType::u64: case GgufType::i64: return true;
    default: return false;
  }
}

namespace {

int64_t signed_of(uint64_t bits, GgufType type) {
  switch (type) {
    case GgufType::i8: return static_cast<int8_t>(bits);
    case GgufType::i16: return static_cast<int16_t>(bits);
    case GgufType::i32: return static_cast<int32_t>(bits);
    default: return static_cast<int64_t>(bits);
  }
}

double number_of(uint64_t bits, GgufType type) {
  if (type == GgufType::f32) {
    float f;
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (type == GgufType::f64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (type == GgufType::u64) return static_cast<double>(bits);
  if (type == GgufType::string || type == GgufType::array) return 0;
  return static_cast<double>(signed_of(bits, type));
}

}  // namespace

double GgufValue::number() const { return number_of(bits, type); }

int64_t GgufValue::integer() const {
  return is_integer() || type == GgufType::boolean ? signed_of(bits, type) : 0;
}

std::string_view gguf_string(const GgufValue& value, const uint8_t* file) {
  if (value.type != GgufType::string) return {};
  return {reinterpret_cast<const char*>(file + value.offset), static_cast<std::size_t>(value.size)};
}

double gguf_array_number(const GgufValue& array, const uint8_t* file, uint64_t i) {
  const int width = gguf_type_size(array.element);
  if (array.type != GgufType::array || !width || i >= array.count) return 0;
  return number_of(load_le(file + array.offset + i * static_cast<uint64_t>(width), width), array.element);
}

int64_t gguf_array_integer(const GgufValue& array, const uint8_t* file, uint64_t i) {
  const int width = gguf_type_size(array.element);
  if (array.type != GgufType::array || !width || i >= array.count || array.element == GgufType::f32 ||
      array.element == GgufType::f64) {
    return 0;
  }
  return signed_of(load_le(file + array.offset + i * static_cast<uint64_t>(width), width), array.element);
}

Status gguf_array_strings(const GgufValue& array, const uint8_t* file, std::vector<std::string_view>& out) {
  out.clear();
  if (array.type != GgufType::array || array.element != GgufType::string) {
    return Status::error(Code::invalid_argument, "array", "gguf: the value is not an array of strings");
  }
  Status s = check_heap("array", 16.0 * static_cast<double>(array.count));
  if (!s.ok()) return s;
  out.reserve(static_cast<std::size_t>(array.count));
  uint64_t pos = array.offset;  // parse_gguf checked every length
  for (uint64_t i = 0; i < array.count; ++i) {
    const uint64_t n = load_le(file + pos, 8);
    out.emplace_back(reinterpret_cast<const char*>(file + pos + 8), static_cast<std::size_t>(n));
    pos += 8 + n;
  }
  return s;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

std::string ggml_type_name(int type) {
  constexpr int n = static_cast<int>(sizeof kGgmlNames / sizeof kGgmlNames[0]);
  return type >= 0 && type < n && kGgmlNames[type] ? kGgmlNames[type] : "type " + std::to_string(type);
}

Status parse_gguf(const uint8_t* bytes, std::size_t available, uint64_t file_size, GgufFile& out, uint64_t* needed) {
  out = GgufFile{};
  if (needed) *needed = 0;
  Cursor c{bytes, std::min<uint64_t>(available, file_size), file_size};
  const auto finish = [&](Status s) {
    if (!s.ok() && s.argument == "bytes" && c.more && needed) {
      *needed = std::min<uint64_t>(file_size, std::max<uint64_t>(c.more, c.available + 1));
    }
    return s;
  };
  uint64_t magic = 0, version = 0, n_tensors = 0, n_kv = 0;
  if (file_size >= 4 && c.available < 4) return finish(c.need(4, "magic", {"the magic"}));
  if (file_size < 4 || std::memcmp(bytes, "GGUF", 4) != 0) {
    return bad(Code::invalid_argument, "magic", {"the file does not begin with the magic bytes 'GGUF': it is not a GGUF file"});
  }
  Status s = c.read(magic, 4, "magic", {"the magic"});
  if (s.ok()) s = c.read(version, 4, "version", {"the version"});
  if (!s.ok()) return finish(s);
  if (version == 1) return bad(Code::invalid_argument, "version", {"GGUF version 1 files are not read (nor by llama.cpp): convert it again"});
  if (version == 0x02000000u || version == 0x03000000u) {
    return bad(Code::invalid_argument, "version", {"this is a big-endian GGUF file; attnkit reads little-endian ones"});
  }
  if (version != 2 && version != 3) {
    return bad(Code::invalid_argument, "version", {"the file has GGUF version ", num(version), "; versions 2 and 3 are read"});
  }
  out.version = static_cast<uint32_t>(version);
  s = c.read(n_tensors, 8, "tensorCount", {"the tensor count"});
  if (s.ok()) s = c.read(n_kv, 8, "metadataCount", {"the metadata count"});
  if (!s.ok()) return finish(s);
  // Counts against the bytes left: the smallest pair and tensor info (what ggml's int64 checks
  // become when the file, not the address space, is the limit).
  const uint64_t left = file_size - c.pos;
  if (n_kv > left / kMinKV) {
    return bad(Code::out_of_range, "metadataCount", {"the file claims ", num(n_kv), " metadata pairs, more than its ", num(left),
                                                     " remaining bytes can hold (14 bytes at least each)"});
  }
  if (n_tensors > (left - n_kv * kMinKV) / kMinTensor) {
    return bad(Code::out_of_range, "tensorCount", {"the file claims ", num(n_tensors), " tensors, more than its ", num(left),
                                                   " remaining bytes can hold after the metadata (25 bytes at least each)"});
  }
  // The index (a pair or tensor info each, and the sort that finds repeated names), asked of the
  // heap first: a failed allocation aborts a wasm instance.
  s = check_heap("bytes", static_cast<double>(n_kv) * (sizeof(GgufKV) + 40) +
                              static_cast<double>(n_tensors) * (sizeof(GgufTensorInfo) + 40) +
                              static_cast<double>(c.available) + 65536);
  if (!s.ok()) return s;
  out.metadata.reserve(static_cast<std::size_t>(n_kv));
  out.tensors.reserve(static_cast<std::size_t>(n_tensors));
  std::vector<std::string_view> names;
  std::size_t a = 0, b = 0;

  for (uint64_t i = 0; i < n_kv; ++i) {
    const std::string argument = "metadata[" + num(i) + "]";
    const What which{"the key of metadata pair ", nullptr, static_cast<int64_t>(i)};
    uint64_t begin = 0, length = 0, type = 0;
    s = c.string(begin, length, argument, which);
    if (!s.ok()) return finish(s);
    if (length == 0 || length > kGgufMaxKey) {
      return bad(Code::invalid_argument, argument, {describe(which), " is ", num(length), " bytes long; keys are 1 to 65535 bytes"});
    }
    if (!valid_utf8(bytes + begin, static_cast<std::size_t>(length))) {
      return bad(Code::invalid_argument, argument, {describe(which), " is not valid UTF-8"});
    }
    GgufKV kv;
    kv.key.assign(reinterpret_cast<const char*>(bytes + begin), static_cast<std::size_t>(length));
    s = c.read(type, 4, kv.key, {"the value type of key ", &kv.key});
    if (!s.ok()) return finish(s);
    if (type > static_cast<uint64_t>(GgufType::f64)) {
      return bad(Code::invalid_argument, kv.key, {"key ", in_quotes(kv.key), " has value type ", num(type), "; GGUF value types are 0 .. 12"});
    }
    kv.value.type = static_cast<GgufType>(type);
    s = read_value(c, kv.value, kv.key);
    if (!s.ok()) return finish(s);
    out.metadata.push_back(std::move(kv));
  }
  for (const auto& kv : out.metadata) names.emplace_back(kv.key);
  if (find_repeat(names, a, b)) {
    const std::string& key = out.metadata[a].key;
    return bad(Code::invalid_argument, key, {"the key ", in_quotes(key), " appears twice (metadata pairs ", num(a), " and ", num(b), ")"});
  }
  if (const GgufValue* v = out.find("general.alignment")) {
    if (v->type != GgufType::u32) {
      return bad(Code::invalid_argument, "general.alignment",
                 {"general.alignment must be a uint32, got a ", kValueNames[static_cast<int>(v->type)]});
    }
    if (v->bits == 0 || (v->bits & (v->bits - 1)) != 0) {
      return bad(Code::invalid_argument, "general.alignment", {"general.alignment must be a power of 2, got ", num(v->bits)});
    }
    out.alignment = v->bits;
  }

  uint64_t expected = 0;  // where the next tensor's data must start, relative to the data section
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const std::string argument = "tensors[" + num(i) + "]";
    const What which{"the name of tensor ", nullptr, static_cast<int64_t>(i)};
    uint64_t begin = 0, length = 0;
    s = c.string(begin, length, argument, which);
    if (!s.ok()) return finish(s);
    if (length == 0 || length > kGgufMaxName) {
      return bad(Code::invalid_argument, argument, {describe(which), " is ", num(length), " bytes long; ggml's tensor names are 1 to 63 bytes"});
    }
    if (!valid_utf8(bytes + begin, static_cast<std::size_t>(length))) {
      return bad(Code::invalid_argument, argument, {describe(which), " is not valid UTF-8"});
    }
    GgufTensorInfo t;
    t.name.assign(reinterpret_cast<const char*>(bytes + begin), static_cast<std::size_t>(length));
    const std::string& name = t.name;
    const std::string where = "tensor " + in_quotes(name);
    uint64_t n_dims = 0, type = 0, offset = 0;
    s = c.read(n_dims, 4, name, {"the dims count of tensor ", &name});
    if (!s.ok()) return finish(s);
    if (n_dims > kGgufMaxDims) {
      return bad(Code::invalid_argument, name, {where, " has ", num(n_dims), " dims; ggml tensors have at most 4"});
    }
    t.n_dims = static_cast<uint32_t>(n_dims);
    bool zero = false;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      s = c.read(t.ne[d], 8, name, {"the dims of tensor ", &name});
      if (!s.ok()) return finish(s);
      if (t.ne[d] >= (uint64_t{1} << 63)) {
        return bad(Code::invalid_argument, name, {where, " has dim ", num(d), " = ", num(t.ne[d]), " (read as int64 it is negative)"});
      }
      zero = zero || t.ne[d] == 0;
    }
    uint64_t elements = 1;
    for (uint32_t d = 0; d < 4 && !zero; ++d) {
      if (t.ne[d] > kMaxElements / elements) {
        std::string dims;
        for (uint32_t k = 0; k < t.n_dims; ++k) dims += (k ? ", " : "") + num(t.ne[k]);
        return bad(Code::out_of_range, name, {where, " has dims (", dims, "), more than 2^60 elements"});
      }
      elements *= t.ne[d];
    }
    t.elements = zero ? 0 : elements;
    s = c.read(type, 4, name, {"the type of tensor ", &name});
    if (!s.ok()) return finish(s);
    const Readable* readable = nullptr;
    for (const auto& r : kReadable)
      if (static_cast<uint64_t>(r.type) == type) readable = &r;
    if (!readable) {
      return bad(Code::invalid_argument, name, {where, " has ggml type ", num(type), " (",
                                                type <= 1000 ? ggml_type_name(static_cast<int>(type)) : "unknown",
                                                "); attnkit reads F32, F16, BF16, Q8_0, Q4_0, Q4_K"});
    }
    t.type = readable->type;
    if (t.ne[0] % static_cast<uint64_t>(readable->block) != 0) {
      return bad(Code::invalid_argument, name, {where, " has rows of ", num(t.ne[0]), " elements, not a multiple of ",
                                                ggml_type_name(t.type), "'s block of ", num(static_cast<uint64_t>(readable->block))});
    }
    t.size = t.elements / static_cast<uint64_t>(readable->block) * static_cast<uint64_t>(readable->bytes);
    s = c.read(offset, 8, name, {"the data offset of tensor ", &name});
    if (!s.ok()) return finish(s);
    if (offset % out.alignment != 0) {
      return bad(Code::invalid_argument, name, {where, " has its data at offset ", num(offset), ", not a multiple of the alignment ",
                                                num(out.alignment)});
    }
    if (offset != expected) {
      const std::string before = i ? "tensor " + in_quotes(out.tensors.back().name) : "the data section's start";
      if (offset < expected) {
        return bad(Code::invalid_argument, name, {where, " has its data at offset ", num(offset), ", overlapping ", before,
                                                  " (which ends at ", num(expected), " with its padding)"});
      }
      return bad(Code::invalid_argument, name, {where, " has its data at offset ", num(offset), ", leaving ", num(offset - expected),
                                                " bytes unused after ", before, " (ggml packs tensors in order, each at the previous one's padded end, ",
                                                num(expected), ")"});
    }
    if (t.size > file_size || offset > file_size - t.size) {
      return bad(Code::out_of_range, name, {where, "'s ", num(t.size), " bytes of data at offset ", num(offset), " lie outside the ",
                                            num(file_size), "-byte file"});
    }
    t.offset = offset;  // relative for now
    expected = round_up(offset + t.size, out.alignment);
    out.tensors.push_back(std::move(t));
  }
  names.clear();
  for (const auto& t : out.tensors) names.emplace_back(t.name);
  if (find_repeat(names, a, b)) {
    const std::string& name = out.tensors[a].name;
    return bad(Code::invalid_argument, name, {"the tensor name ", in_quotes(name), " appears twice (tensors ", num(a), " and ", num(b), ")"});
  }
  out.header_bytes = c.pos;
  out.data_offset = round_up(c.pos, out.alignment);
  for (auto& t : out.tensors) {
    if (out.data_offset > file_size || t.offset > file_size - out.data_offset ||
        t.size > file_size - out.data_offset - t.offset) {
      return bad(Code::out_of_range, t.name, {"tensor ", in_quotes(t.name), "'s ", num(t.size), " bytes of data at offset ",
                                              num(t.offset), " of the data section (which starts at byte ", num(out.data_offset),
                                              ") run past the end of the ", num(file_size), "-byte file"});
    }
    t.offset += out.data_offset;
  }
  // Nothing after the last tensor's data but its padding (bytes no tensor owns could hide anything).
  const uint64_t end = out.data_offset + expected;
  if (file_size > end) {
    return bad(Code::invalid_argument, "bytes", {num(file_size - end), " bytes follow the ",
                                                 out.tensors.empty() ? "header and its padding" : "last tensor's data and its padding",
                                                 " (which end at byte ", num(end), " of the ", num(file_size), "-byte file)"});
  }
  return s;
}

namespace {

// A JSON string of valid UTF-8 (keys and names are checked): quotes, backslashes and control
// characters escaped, the rest as it is.
void json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
}

}  // namespace

std::size_t gguf_index_json_bytes(const GgufFile& file) {
  std::size_t n = 256;
  for (const auto& kv : file.metadata) n += 6 * kv.key.size() + 112;  // (a key of control characters: 6 bytes each)
  for (const auto& t : file.tensors) n += 6 * t.name.size() + 176;
  return n;
}

std::string gguf_index_json(const GgufFile& file) {
  std::string out;
  out.reserve(gguf_index_json_bytes(file));
  const auto number = [&](uint64_t v, const char* after) {
    out += std::to_string(v);
    out += after;
  };
  out += "{\"version\":";
  number(file.version, ",\"alignment\":");
  number(file.alignment, ",\"dataOffset\":");
  number(file.data_offset, ",\"headerBytes\":");
  number(file.header_bytes, ",\"metadata\":[");
  for (std::size_t i = 0; i < file.metadata.size(); ++i) {
    const GgufValue& v = file.metadata[i].value;
    out += i ? ",[" : "[";
    json_string(out, file.metadata[i].key);
    out += ',';
    number(static_cast<uint64_t>(v.type), ",");
    number(static_cast<uint64_t>(v.element), ",");
    number(v.count, ",");
    number(v.offset, ",");
    number(v.size, "]");
  }
  out += "],\"tensors\":[";
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const GgufTensorInfo& t = file.tensors[i];
    out += i ? ",[" : "[";
    json_string(out, t.name);
    out += ',';
    number(static_cast<uint64_t>(t.type), ",[");
    for (uint32_t d = 0; d < t.n_dims; ++d) number(t.ne[d], d + 1 < t.n_dims ? "," : "");
    out += "],";
    number(t.offset, ",");
    number(t.size, "]");
  }
  out += "]}";
  return out;
}

}  // namespace attnkit

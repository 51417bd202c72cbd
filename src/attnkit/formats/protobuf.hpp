// Protocol Buffers wire format, read-only: enough to walk a message field by field (SentencePiece's
// tokenizer.model is a serialised ModelProto). The bytes are untrusted: every length is checked
// against what is left of the buffer, varints are at most 10 bytes, and a malformed message makes
// next() return false with error() set instead of reading past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace attnkit {

class ProtoReader {
 public:
  enum Wire : int { varint = 0, fixed64 = 1, bytes = 2, fixed32 = 5 };

  ProtoReader(const char* data, std::size_t size) : p_(data), end_(data + size) {}
  explicit ProtoReader(std::string_view s) : ProtoReader(s.data(), s.size()) {}

  // Moves to the next field; false at the end of the message or on malformed input (error()).
  bool next() {
    if (p_ == end_ || error_) return false;
    uint64_t key = 0;
    if (!read_varint(key)) return false;
    field_ = static_cast<uint32_t>(key >> 3);
    wire_ = static_cast<int>(key & 7);
    if (field_ == 0 || (key >> 3) > 0x1FFFFFFF) return fail("a field number of 0 or above 2^29");
    switch (wire_) {
      case varint: return read_varint(value_);
      case fixed64: return take(8, value_);
      case fixed32: return take(4, value_);
      case bytes: {
        uint64_t n = 0;
        if (!read_varint(n)) return false;
        if (n > static_cast<uint64_t>(end_ - p_)) return fail("a length-delimited field longer than the rest of the message");
        data_ = std::string_view(p_, static_cast<std::size_t>(n));
        p_ += n;
        return true;
      }
      default: return fail("an unsupported wire type (groups or a reserved type)");
    }
  }

  uint32_t field() const { return field_; }
  int wire() const { return wire_; }
  uint64_t u64() const { return value_; }
  // A float field (wire type fixed32), little-endian IEEE 754.
  float f32() const {
    const auto bits = static_cast<uint32_t>(value_);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  std::string_view data() const { return data_; }
  // Set when next() stopped on malformed input: what was wrong, and the byte offset.
  const char* error() const { return error_; }
  std::size_t offset(const char* begin) const { return static_cast<std::size_t>(p_ - begin); }

 private:
  bool fail(const char* why) {
    error_ = why;
    return false;
  }
  bool read_varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) return fail("a varint cut off by the end of the message");
      const auto b = static_cast<unsigned char>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
      if (shift == 63) break;
    }
    return fail("a varint longer than 10 bytes");
  }
  bool take(int n, uint64_t& v) {
    if (end_ - p_ < n) return fail("a fixed-width field cut off by the end of the message");
    v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p_[i])) << (8 * i);
    p_ += n;
    return true;
  }

  const char* p_;
  const char* end_;
  uint32_t field_ = 0;
  int wire_ = 0;
  uint64_t value_ = 0;
  std::string_view data_;
  const char* error_ = nullptr;
};

}  // namespace attnkit

// The .safetensors header parser and dtype conversion: a file written by the fixture generator
// from the format's definition (values converted by torch), and hostile headers.
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attnkit/formats/safetensors.hpp"
#include "fixtures.hpp"

using namespace attnkit;

namespace {

std::vector<char> read_file(const std::string& name) {
  std::ifstream in(std::string(ATTNKIT_FIXTURE_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint64_t prefix(const std::vector<char>& f) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(f[i]);
  return n;
}

Status parse_text(const std::string& header, uint64_t data_bytes, SafetensorsIndex& index) {
  return parse_safetensors_header(header.data(), header.size(), 8 + header.size() + data_bytes, index);
}

}  // namespace

TEST(Safetensors, ReadsTheFixtureFileLikeTorch) {
  const auto fx = attnkit_test::load_fixture("safetensors.json");
  const auto file = read_file(fx["file"]);
  ASSERT_GT(file.size(), 8u);
  const uint64_t n = prefix(file);
  SafetensorsIndex index;
  Status s = parse_safetensors_header(file.data() + 8, n, file.size(), index);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(index.metadata.at("format"), "pt");
  EXPECT_EQ(index.tensors.size(), fx["tensors"].size());
  for (const auto& t : index.tensors) {
    const auto& want = fx["tensors"][t.name];
    EXPECT_EQ(t.shape, want["shape"].get<std::vector<int64_t>>()) << t.name;
    std::vector<float> got(t.elements);
    convert_to_float32(got.data(), file.data() + t.begin, t.elements, t.dtype);
    ASSERT_EQ(got.size(), want["values"].size()) << t.name;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const auto& v = want["values"][i];
      const float expected = v.is_string() ? (v == "Infinity" ? 1 : -1) * std::numeric_limits<float>::infinity()
                                           : v.get<float>();
      EXPECT_EQ(got[i], expected) << t.name << "[" << i << "]";  // conversions are exact
      EXPECT_EQ(std::signbit(got[i]), std::signbit(expected)) << t.name << "[" << i << "]";
    }
  }
}

TEST(Safetensors, HalfConversionCoversEveryBitPattern) {
  // F16 -> F32 is exact; check all 65536 patterns against the IEEE definition.
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint8_t bytes[2] = {static_cast<uint8_t>(h & 0xff), static_cast<uint8_t>(h >> 8)};
    float f = 0;
    convert_to_float32(&f, bytes, 1, TensorDType::f16);
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1 : 1;
    if (e == 31) {
      EXPECT_TRUE(m ? std::isnan(f) : std::isinf(f)) << h;
      continue;
    }
    const double expected = sign * (e ? std::ldexp(1024 + m, e - 25) : std::ldexp(m, -24));
    ASSERT_EQ(static_cast<double>(f), expected) << h;
  }
}

TEST(Safetensors, RejectsHostileHeaders) {
  SafetensorsIndex index;
  const auto arg = [&](const std::string& header, uint64_t data) { return parse_text(header, data, index).argument; };
  EXPECT_EQ(check_safetensors_prefix(0, 4).argument, "bytes");
  EXPECT_EQ(check_safetensors_prefix(100, 50).argument, "headerLength");
  EXPECT_EQ(check_safetensors_prefix(kMaxSafetensorsHeader + 1, 1ull << 40).argument, "headerLength");
  EXPECT_EQ(arg("{\"a\": ", 0), "header");
  EXPECT_EQ(arg("[1, 2]", 0), "header");
  EXPECT_EQ(arg(std::string(100, '[') + std::string(100, ']'), 0), "header");  // deep nesting
  EXPECT_EQ(arg(R"({"a": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}})", 8), "");
  EXPECT_EQ(arg(R"({"a": {"dtype": "I64", "shape": [2], "data_offsets": [0, 8]}})", 8), "a.data_offsets");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}})", 1), "a.dtype");
  EXPECT_EQ(arg(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4), "a.dtype");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4), "a.shape");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4), "a.data_offsets");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4), "a.data_offsets");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4), "a.data_offsets");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}})", 8), "b.data_offsets");
  EXPECT_EQ(arg(R"({"__metadata__": {"k": 1}})", 0), "__metadata__.k");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [65536, 65536, 2], "data_offsets": [0, 4]}})", 4), "a.shape");
  EXPECT_TRUE(parse_text(R"({"a": {"dtype": "BF16", "shape": [2, 1], "data_offsets": [0, 4]}})", 4, index).ok());
  EXPECT_TRUE(parse_text(R"({"s": "[[[[\"", "__metadata__": {}})", 0, index).argument == "s");  // brackets in strings don't count
}

// Hugging Face's safetensors (Metadata::validate) requires the tensors to tile the data: from byte
// 0, no gaps, nothing after the last. A key named twice is ambiguous (nlohmann keeps the last).
TEST(Safetensors, RefusesGapsTrailingBytesAndRepeatedKeys) {
  SafetensorsIndex index;
  const auto arg = [&](const std::string& header, uint64_t data) { return parse_text(header, data, index).argument; };
  const std::string a = R"("a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  EXPECT_EQ(arg("{" + a + R"(, "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})", 12), "b.data_offsets");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8), "a.data_offsets");  // gap at 0
  EXPECT_EQ(arg("{" + a + "}", 8), "bytes");                                                                  // 4 bytes after
  EXPECT_EQ(arg("{}", 1), "bytes");
  EXPECT_EQ(arg("{" + a + ", " + a + "}", 4), "a");
  EXPECT_EQ(arg(R"({"a": {"dtype": "F32", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 4), "a.dtype");
  EXPECT_EQ(arg(R"({"__metadata__": {"k": "1", "k": "2"}})", 0), "__metadata__.k");
  EXPECT_EQ(arg(R"({"a\u0062": {}, "ab": {}})", 0), "ab");  // as the parser reads them
  EXPECT_EQ(arg(std::string("1\0\"a\":{\"", 7), 0), "header");   // nlohmann stops at NUL (a fuzzer find)
  // A whole object then NUL and anything (nlohmann ended the input at the NUL and accepted it).
  EXPECT_EQ(arg("{" + a + std::string("}\0garbage", 9), 4), "header");
  EXPECT_EQ(arg("{" + a + std::string("}\0", 2), 4), "header");
  EXPECT_EQ(arg("{" + a + "}   ", 4), "");  // trailing spaces (the writers' padding) stay fine
  // Contiguous files pass, empty tensors included, and one key may recur in different objects.
  EXPECT_EQ(arg("{}", 0), "");
  EXPECT_EQ(arg("{" + a + R"(, "e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]},
                    "b": {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}})", 8), "");
  EXPECT_EQ(index.tensors.size(), 3u);
}

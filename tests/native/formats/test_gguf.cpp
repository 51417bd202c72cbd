// GGUF (attnkit/formats/gguf.hpp) and its dequantisation (attnkit/ops/dequantize.hpp): the files
// tests/golden/gen_gguf.py wrote (their values, hashes and dequantisations as gguf.json records
// them; their Q8_0 / Q4_0 blocks against this library's quantisers), Q4_K against a scalar
// reference written here from ggml's block layout, awkward sizes, and hostile headers.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attnkit/formats/gguf.hpp"
#include "attnkit/ops/dequantize.hpp"
#include "attnkit/ops/quant.hpp"
#include "fixtures.hpp"

using namespace attnkit;

namespace {

std::vector<uint8_t> read_file(const std::string& name) {
  std::ifstream in(std::string(ATTNKIT_FIXTURE_DIR) + "/gguf/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string fnv1a(const void* data, std::size_t n) {
  uint32_t h = 0x811C9DC5u;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(data)[i]) * 0x01000193u;
  char out[9];
  std::snprintf(out, sizeof out, "%08x", h);
  return out;
}

Status parse(const std::vector<uint8_t>& f, GgufFile& out) { return parse_gguf(f.data(), f.size(), f.size(), out); }

// A GGUF writer for hostile headers: fields appended one by one, little-endian.
struct Writer {
  std::vector<uint8_t> b;
  Writer& u32(uint32_t v) { return raw(&v, 4); }
  Writer& u64(uint64_t v) { return raw(&v, 8); }
  Writer& u8(uint8_t v) { return raw(&v, 1); }
  Writer& raw(const void* p, std::size_t n) {
    b.insert(b.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    return *this;
  }
  Writer& str(const std::string& s) { return u64(s.size()).raw(s.data(), s.size()); }
  Writer& head(uint64_t tensors, uint64_t kvs, uint32_t version = 3) { return raw("GGUF", 4).u32(version).u64(tensors).u64(kvs); }
  Writer& kv_u32(const std::string& k, uint32_t v) { return str(k).u32(4).u32(v); }
  Writer& kv_str(const std::string& k, const std::string& v) { return str(k).u32(8).str(v); }
  // A tensor info: name, dims (ne order), ggml type, offset.
  Writer& info(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) u64(n);
    return u32(type).u64(offset);
  }
  Writer& pad(std::size_t alignment = 32) {
    while (b.size() % alignment) b.push_back(0);
    return *this;
  }
  Writer& zeros(std::size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
};

// What a header reports: ok, or its code and argument, with the message for failures.
struct Verdict {
  Status s;
  GgufFile f;
};
Verdict verdict(const std::vector<uint8_t>& bytes) {
  Verdict v;
  v.s = parse(bytes, v.f);
  return v;
}

#define EXPECT_REFUSED(bytes, code_, argument_, pattern)                                               \
  do {                                                                                                 \
    const Verdict v_ = verdict(bytes);                                                                 \
    EXPECT_FALSE(v_.s.ok());                                                                           \
    EXPECT_EQ(v_.s.code, code_) << v_.s.message;                                                       \
    EXPECT_EQ(v_.s.argument, argument_) << v_.s.message;                                               \
    EXPECT_NE(v_.s.message.find(pattern), std::string::npos) << v_.s.message << "\n  lacks: " << pattern; \
  } while (0)

// One F32 tensor of n floats after an optional pair: a small valid file.
std::vector<uint8_t> one_tensor(uint32_t type = 0, uint64_t n = 8, std::size_t data_bytes = 32) {
  Writer w;
  w.head(1, 1).kv_str("general.architecture", "llama").info("a", {n}, type, 0).pad().zeros(data_bytes);
  return w.b;
}

// Q4_K from its definition, independently of ref::dequantize_row_q4_k: element i of super-block b
// is in sub-block j = i / 32; sub-blocks 2p and 2p + 1 take the low and high nibbles of
// qs[32 p .. 32 p + 31]; the 6-bit scale and minimum of j come from the 12 packed bytes.
float q4_k_element(const BlockQ4_K& b, int i) {
  const int j = i / 32, l = i % 32;
  const uint8_t byte = b.qs[32 * (j / 2) + l];
  const int q = j % 2 ? byte >> 4 : byte & 15;
  auto bits = [&](int index, int lo, int count) { return (b.scales[index] >> lo) & ((1 << count) - 1); };
  int sc, m;
  if (j < 4) {
    sc = bits(j, 0, 6);
    m = bits(j + 4, 0, 6);
  } else {
    sc = bits(j + 4, 0, 4) | bits(j - 4, 6, 2) << 4;
    m = bits(j + 4, 4, 4) | bits(j, 6, 2) << 4;
  }
  const float d = fp16_to_fp32(b.d) * static_cast<float>(sc);
  const float mn = fp16_to_fp32(b.dmin) * static_cast<float>(m);
  const float dq = d * static_cast<float>(q);
  return dq - mn;
}

std::vector<BlockQ4_K> random_q4_k(std::size_t blocks, unsigned seed, bool finite = true) {
  std::mt19937 rng(seed);
  std::vector<BlockQ4_K> x(blocks);
  for (auto& b : x) {
    auto* p = reinterpret_cast<uint8_t*>(&b);
    for (std::size_t k = 0; k < sizeof b; ++k) p[k] = static_cast<uint8_t>(rng());
    if (finite) {  // normal halves of moderate size for d and dmin
      b.d = fp32_to_fp16(std::ldexp(1.f + (rng() % 1000) / 1000.f, -static_cast<int>(rng() % 12)));
      b.dmin = fp32_to_fp16(std::ldexp(1.f + (rng() % 1000) / 1000.f, -static_cast<int>(rng() % 12)));
    }
  }
  return x;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

}  // namespace

// ---------------------------------------------------------------------------- the fixtures

TEST(GgufFixtures, EveryFileReadsAsTheWriterRecordedIt) {
  const auto fx = attnkit_test::load_fixture("gguf/gguf.json");
  ASSERT_GE(fx["files"].size(), 8u);
  for (const auto& [name, want] : fx["files"].items()) {
    SCOPED_TRACE(name);
    const auto bytes = read_file(name);
    ASSERT_EQ(bytes.size(), want["bytes"].get<std::size_t>());
    GgufFile f;
    Status s = parse(bytes, f);
    ASSERT_TRUE(s.ok()) << s.message;
    EXPECT_EQ(f.version, 3u);
    EXPECT_EQ(f.alignment, want["alignment"].get<uint64_t>());
    // Metadata: the keys in file order, each value of its type.
    ASSERT_EQ(f.metadata.size(), want["keys"].size());
    for (std::size_t i = 0; i < f.metadata.size(); ++i) {
      const auto& kv = f.metadata[i];
      ASSERT_EQ(kv.key, want["keys"][i].get<std::string>());
      const auto& w = want["metadata"][kv.key];
      const std::string type = w["type"];
      const GgufValue& v = kv.value;
      const auto check_scalar = [&](GgufType t, const nlohmann::json& value, double number, int64_t integer,
                                    std::string_view text) {
        if (t == GgufType::string) {
          EXPECT_EQ(text, value.get<std::string>()) << kv.key;
        } else if (t == GgufType::boolean) {
          EXPECT_EQ(integer != 0, value.get<bool>()) << kv.key;
        } else if (t == GgufType::u64) {
          EXPECT_EQ(std::to_string(static_cast<uint64_t>(integer)), value.get<std::string>()) << kv.key;
        } else if (t == GgufType::i64) {
          EXPECT_EQ(std::to_string(integer), value.get<std::string>()) << kv.key;
        } else {
          EXPECT_EQ(number, value.get<double>()) << kv.key;
        }
      };
      if (type == "array") {
        ASSERT_EQ(v.type, GgufType::array) << kv.key;
        const auto& items = w["value"];
        ASSERT_EQ(v.count, items.size()) << kv.key;
        std::vector<std::string_view> strings;
        if (v.element == GgufType::string) {
          ASSERT_TRUE(gguf_array_strings(v, bytes.data(), strings).ok());
        }
        for (std::size_t k = 0; k < items.size(); ++k) {
          check_scalar(v.element, items[k], gguf_array_number(v, bytes.data(), k), gguf_array_integer(v, bytes.data(), k),
                       strings.empty() ? std::string_view() : strings[k]);
        }
      } else {
        check_scalar(v.type, w["value"], v.number(), v.integer(), gguf_string(v, bytes.data()));
      }
    }
    // Tensors: type, dims, where the data is, its bytes, and its float32 values bit for bit (the
    // writer's numpy dequantisers are ggml's dequantize_row_* semantics).
    ASSERT_EQ(f.tensors.size(), want["tensors"].size());
    for (const auto& t : f.tensors) {
      SCOPED_TRACE(t.name);
      const auto& w = want["tensors"][t.name];
      ASSERT_FALSE(w.is_null());
      EXPECT_EQ(ggml_type_name(t.type), w["type"].get<std::string>());
      EXPECT_EQ(std::vector<uint64_t>(t.ne, t.ne + t.n_dims), w["ne"].get<std::vector<uint64_t>>());
      EXPECT_EQ(t.offset, w["offset"].get<uint64_t>());
      EXPECT_EQ(t.size, w["size"].get<uint64_t>());
      EXPECT_EQ(fnv1a(bytes.data() + t.offset, t.size), w["fnv"].get<std::string>());
      std::vector<float> values(t.elements);
      ASSERT_TRUE(dequantize(values.data(), bytes.data() + t.offset, values.size(), t.type).ok());
      EXPECT_EQ(fnv1a(values.data(), 4 * values.size()), w["fnvFloat32"].get<std::string>());
      for (std::size_t k = 0; k < w["head"].size(); ++k) EXPECT_EQ(values[k], w["head"][k].get<float>()) << k;
    }
  }
}

TEST(GgufFixtures, LlamaFilesHoldTheConvertersKeysAndNames) {
  const auto bytes = read_file("llama-q4_k.gguf");
  GgufFile f;
  ASSERT_TRUE(parse(bytes, f).ok());
  EXPECT_EQ(gguf_string(*f.find("general.architecture"), bytes.data()), "llama");
  EXPECT_EQ(f.find("llama.attention.head_count_kv")->integer(), 2);
  EXPECT_FLOAT_EQ(static_cast<float>(f.find("llama.attention.layer_norm_rms_epsilon")->number()), 1e-5f);
  std::vector<std::string_view> tokens;
  ASSERT_TRUE(gguf_array_strings(*f.find("tokenizer.ggml.tokens"), bytes.data(), tokens).ok());
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(tokens[258], "<0xFF>");
  EXPECT_EQ(gguf_array_integer(*f.find("tokenizer.ggml.token_type"), bytes.data(), 3), 6);  // BYTE
  std::vector<std::string> names;
  for (const auto& t : f.tensors) names.push_back(t.name + ":" + ggml_type_name(t.type));
  EXPECT_EQ(names, (std::vector<std::string>{
                       "token_embd.weight:Q4_0", "blk.0.attn_norm.weight:F32", "blk.0.attn_q.weight:Q4_0",
                       "blk.0.attn_k.weight:Q4_0", "blk.0.attn_v.weight:Q4_0", "blk.0.attn_output.weight:Q4_0",
                       "blk.0.ffn_norm.weight:F32", "blk.0.ffn_gate.weight:Q4_0", "blk.0.ffn_up.weight:Q4_0",
                       "blk.0.ffn_down.weight:Q4_K", "output_norm.weight:F32", "output.weight:Q4_0"}));
  const GgufTensorInfo& down = f.tensors[9];
  EXPECT_EQ(down.ne[0], 256u);  // a row: intermediate_size
  EXPECT_EQ(down.ne[1], 32u);   // hidden_size rows
}

// The writer's Q8_0 and Q4_0 blocks are this library's quantisers of the F32 file's values, bit
// for bit (both follow ggml's quantize_row_*_ref; gen_gguf.py --check-quantisers checks the writer
// against ggml's own code, Q4_K included).
TEST(GgufFixtures, QuantisedBlocksAreTheQuantisersOfTheF32File) {
  const auto f32_bytes = read_file("llama-f32.gguf");
  GgufFile f32;
  ASSERT_TRUE(parse(f32_bytes, f32).ok());
  int compared = 0;
  for (const char* name : {"llama-q8_0.gguf", "llama-q4_0.gguf", "llama-q4_k.gguf"}) {
    const auto bytes = read_file(name);
    GgufFile q;
    ASSERT_TRUE(parse(bytes, q).ok());
    for (std::size_t i = 0; i < q.tensors.size(); ++i) {
      const auto& t = q.tensors[i];
      const auto& src = f32.tensors[i];
      ASSERT_EQ(t.name, src.name);
      if (t.type != 8 && t.type != 2) continue;
      std::vector<float> x(src.elements);
      std::memcpy(x.data(), f32_bytes.data() + src.offset, 4 * x.size());
      std::vector<uint8_t> blocks(t.size);
      if (t.type == 8) {
        ASSERT_TRUE(quantize_q8_0(reinterpret_cast<BlockQ8_0*>(blocks.data()), x.data(), x.size()).ok());
      } else {
        ASSERT_TRUE(quantize_q4_0(reinterpret_cast<BlockQ4_0*>(blocks.data()), x.data(), x.size()).ok());
      }
      EXPECT_EQ(0, std::memcmp(blocks.data(), bytes.data() + t.offset, t.size)) << name << " " << t.name;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 9 + 9 + 8);
}

// Quantised weights stay close to the float32 ones they came from (a sanity bound, not ggml's).
TEST(GgufFixtures, DequantisedWeightsAreNearTheFloat32Ones) {
  const auto fx = attnkit_test::load_fixture("gguf/gguf.json");
  for (const auto& [file, bound] : {std::pair{"llama-q8_0.gguf", 0.01}, {"llama-q4_0.gguf", 0.1}, {"llama-q4_k.gguf", 0.1}}) {
    for (const auto& [name, t] : fx["files"][file]["tensors"].items()) {
      EXPECT_LE(t["maxError"].get<double>(), bound * t["maxAbs"].get<double>()) << file << " " << name;
    }
  }
}

// ---------------------------------------------------------------------------- dequantisation

TEST(GgufDequantize, Q4KMatchesTheScalarDefinitionOnAwkwardSizes) {
  for (std::size_t blocks : {1, 3, 17, 31, 33, 63, 65}) {
    const auto x = random_q4_k(blocks, static_cast<unsigned>(blocks));
    std::vector<float> y(blocks * kQuantSuperBlock), via_dispatch(y.size());
    ASSERT_TRUE(dequantize_q4_k(y.data(), x.data(), y.size()).ok());
    ASSERT_TRUE(dequantize(via_dispatch.data(), x.data(), y.size(), 12).ok());
    for (std::size_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < kQuantSuperBlock; ++i) {
        const float want = q4_k_element(x[b], i);
        ASSERT_TRUE(same_bits(y[b * kQuantSuperBlock + i], want)) << blocks << " blocks, [" << b << "][" << i << "]";
        ASSERT_TRUE(same_bits(via_dispatch[b * kQuantSuperBlock + i], want));
      }
    }
  }
  // Any bytes at all (NaN and infinite scales, every nibble): the same bits as the definition.
  const auto wild = random_q4_k(40, 99, false);
  std::vector<float> y(40 * kQuantSuperBlock);
  ASSERT_TRUE(dequantize_q4_k(y.data(), wild.data(), y.size()).ok());
  for (std::size_t k = 0; k < y.size(); ++k) {
    const float want = q4_k_element(wild[k / kQuantSuperBlock], static_cast<int>(k % kQuantSuperBlock));
    ASSERT_TRUE(same_bits(y[k], want) || (std::isnan(y[k]) && std::isnan(want))) << k;
  }
}

TEST(GgufDequantize, Q4KScalesAndMinimumsUnpackAsTheyWerePacked) {
  // Pack 6-bit scales and minimums as ggml's quantiser does (quantize_row_q4_K_ref), unpack.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    uint8_t ls[8], lm[8], packed[12] = {};
    for (int j = 0; j < 8; ++j) ls[j] = rng() % 64, lm[j] = rng() % 64;
    for (int j = 0; j < 8; ++j) {
      if (j < 4) {
        packed[j] = ls[j];
        packed[j + 4] = lm[j];
      } else {
        packed[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
        packed[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
        packed[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
      }
    }
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      ref::q4_k_scale_min(j, packed, sc, m);
      ASSERT_EQ(sc, ls[j]) << j;
      ASSERT_EQ(m, lm[j]) << j;
    }
  }
}

TEST(GgufDequantize, EveryTypeOnAwkwardSizesAndUnalignedBytes) {
  std::mt19937 rng(1);
  for (std::size_t blocks : {1, 3, 17, 31, 33, 63, 65, 771}) {
    // Q8_0 and Q4_0 through the dispatcher equal quant.hpp's dequantisers, from any byte offset.
    std::vector<BlockQ8_0> q8(blocks);
    std::vector<BlockQ4_0> q4(blocks);
    const auto x = attnkit_test::random_normal(blocks * kQuantBlock, static_cast<unsigned>(blocks));
    ASSERT_TRUE(quantize_q8_0(q8.data(), x.data(), x.size()).ok());
    ASSERT_TRUE(quantize_q4_0(q4.data(), x.data(), x.size()).ok());
    std::vector<float> want(x.size()), got(x.size());
    std::vector<uint8_t> shifted(1 + blocks * sizeof(BlockQ8_0));
    ASSERT_TRUE(dequantize_q8_0(want.data(), q8.data(), x.size()).ok());
    std::memcpy(shifted.data() + 1, q8.data(), blocks * sizeof(BlockQ8_0));
    ASSERT_TRUE(dequantize(got.data(), shifted.data() + 1, got.size(), 8).ok());
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), 4 * got.size())) << blocks;
    ASSERT_TRUE(dequantize_q4_0(want.data(), q4.data(), x.size()).ok());
    std::memcpy(shifted.data() + 1, q4.data(), blocks * sizeof(BlockQ4_0));
    ASSERT_TRUE(dequantize(got.data(), shifted.data() + 1, got.size(), 2).ok());
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), 4 * got.size())) << blocks;
    // F32 as stored; F16 through fp16_to_fp32; BF16 widened.
    const std::size_t n = blocks * 7;
    std::vector<uint8_t> raw(1 + 4 * n);
    for (auto& c : raw) c = static_cast<uint8_t>(rng());
    std::vector<float> out(n);
    ASSERT_TRUE(dequantize(out.data(), raw.data() + 1, n, 0).ok());
    EXPECT_EQ(0, std::memcmp(out.data(), raw.data() + 1, 4 * n));
    ASSERT_TRUE(dequantize(out.data(), raw.data() + 1, n, 1).ok());
    for (std::size_t i = 0; i < n; ++i) {
      const float h = fp16_to_fp32(static_cast<uint16_t>(raw[1 + 2 * i] | raw[2 + 2 * i] << 8));
      ASSERT_TRUE(same_bits(out[i], h)) << i;
    }
    ASSERT_TRUE(dequantize(out.data(), raw.data() + 1, n, 30).ok());
    for (std::size_t i = 0; i < n; ++i) {
      const uint32_t bits = static_cast<uint32_t>(raw[1 + 2 * i] | raw[2 + 2 * i] << 8) << 16;
      float b;
      std::memcpy(&b, &bits, 4);
      ASSERT_TRUE(same_bits(out[i], b)) << i;
    }
  }
}

TEST(GgufDequantize, RefusesUnknownTypesAndPartialBlocks) {
  float y[256];
  uint8_t x[512] = {};
  Status s = dequantize(y, x, 32, 14);  // Q6_K
  EXPECT_EQ(s.code, Code::invalid_argument);
  EXPECT_EQ(s.argument, "type");
  EXPECT_NE(s.message.find("got 14"), std::string::npos) << s.message;
  s = dequantize(y, x, 33, 8);
  EXPECT_EQ(s.argument, "elements");
  EXPECT_NE(s.message.find("multiple of 32"), std::string::npos) << s.message;
  s = dequantize(y, x, 128, 12);
  EXPECT_NE(s.message.find("multiple of 256"), std::string::npos) << s.message;
  EXPECT_EQ(dequantize_q4_k(y, reinterpret_cast<const BlockQ4_K*>(x), 100).argument, "elements");
  EXPECT_TRUE(dequantize(nullptr, nullptr, 0, 12).ok());
  for (int type : {0, 1, 2, 8, 12, 30}) EXPECT_GT(ggml_block_bytes(type), 0) << type;
  EXPECT_EQ(ggml_block_elements(3), 0);
}

// ---------------------------------------------------------------------------- hostile headers

TEST(GgufHostile, RefusesWhatIsNotAGgufFile) {
  EXPECT_REFUSED(std::vector<uint8_t>{}, Code::invalid_argument, "magic", "not a GGUF file");
  EXPECT_REFUSED(std::vector<uint8_t>({'G', 'G', 'U', 'F'}), Code::out_of_range, "version", "ends inside the version");
  Writer w;
  w.raw("GGML", 4).u32(3).u64(0).u64(0);
  EXPECT_REFUSED(w.b, Code::invalid_argument, "magic", "magic bytes 'GGUF'");
  EXPECT_REFUSED(Writer().head(0, 0, 1).b, Code::invalid_argument, "version", "version 1");
  EXPECT_REFUSED(Writer().head(0, 0, 0x03000000).b, Code::invalid_argument, "version", "big-endian");
  EXPECT_REFUSED(Writer().head(0, 0, 4).b, Code::invalid_argument, "version", "version 4");
  // Version 2 reads as 3 does; no tensors and no pairs is a valid (empty) file.
  GgufFile f;
  const auto v2 = Writer().head(0, 0, 2).b;
  ASSERT_TRUE(parse(v2, f).ok());
  EXPECT_EQ(f.version, 2u);
  EXPECT_EQ(f.data_offset, 32u);
}

TEST(GgufHostile, HugeCountsAreRefusedBeforeAnythingIsAllocated) {
  EXPECT_REFUSED(Writer().head(~uint64_t{0}, 0).b, Code::out_of_range, "tensorCount", "18446744073709551615 tensors");
  EXPECT_REFUSED(Writer().head(0, uint64_t{1} << 63).zeros(64).b, Code::out_of_range, "metadataCount", "more than its 64");
  EXPECT_REFUSED(Writer().head(3, 0).zeros(74).b, Code::out_of_range, "tensorCount", "3 tensors");
  // A string or array claiming more than the file.
  EXPECT_REFUSED(Writer().head(0, 1).str("k").u32(8).u64(~uint64_t{0}).b, Code::out_of_range, "k", "past the end");
  EXPECT_REFUSED(Writer().head(0, 1).str("k").u32(9).u32(4).u64(uint64_t{1} << 62).zeros(8).b, Code::out_of_range, "k",
                 "array of 4611686018427387904 u");
  EXPECT_REFUSED(Writer().head(0, 1).str("k").u32(9).u32(8).u64(2).str("a").u64(1000).b, Code::out_of_range, "k",
                 "(string 1) is 1000 bytes long, past the end");
  EXPECT_REFUSED(Writer().head(0, 1).u64(1000).raw("k", 1).zeros(8).b, Code::out_of_range, "metadata[0]", "past the end");
  EXPECT_REFUSED(Writer().head(1, 0).u64(~uint64_t{0} - 3).zeros(24).b, Code::out_of_range, "tensors[0]", "past the end");
}

TEST(GgufHostile, RefusesMalformedMetadataNamingTheKey) {
  const auto kv = [](const std::function<void(Writer&)>& value) {
    Writer w;
    w.head(0, 1);
    value(w);
    return w.b;
  };
  EXPECT_REFUSED(kv([](Writer& w) { w.str("").u32(4).u32(1); }), Code::invalid_argument, "metadata[0]", "1 to 65535 bytes");
  EXPECT_REFUSED(kv([](Writer& w) { w.str(std::string(65536, 'k')).u32(4).u32(1); }), Code::invalid_argument, "metadata[0]",
                 "65536 bytes long");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("bad\xff").u32(4).u32(1); }), Code::invalid_argument, "metadata[0]", "UTF-8");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("k").u32(13).u32(1); }), Code::invalid_argument, "k", "value type 13");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("k").u32(7).u8(2); }), Code::invalid_argument, "k", "bool of byte 2");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("k").u32(9).u32(7).u64(3).u8(1).u8(0).u8(5); }), Code::invalid_argument, "k",
                 "(element 2) is a bool of byte 5");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("k").u32(9).u32(9).u64(1).u32(0).u64(1).u8(0); }), Code::invalid_argument, "k",
                 "array of arrays");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("k").u32(9).u32(77).u64(0); }), Code::invalid_argument, "k", "value type 77");
  EXPECT_REFUSED(kv([](Writer& w) { w.str("long_key").u32(12); }), Code::out_of_range, "long_key",
                 "ends inside the value of key 'long_key'");
  // A key twice (ggml: "duplicate key").
  Writer dup;
  dup.head(0, 3).kv_u32("a", 1).kv_u32("b", 2).kv_u32("a", 3);
  EXPECT_REFUSED(dup.b, Code::invalid_argument, "a", "the key 'a' appears twice (metadata pairs 0 and 2)");
  // general.alignment: a uint32 power of two.
  EXPECT_REFUSED(Writer().head(0, 1).kv_u32("general.alignment", 48).b, Code::invalid_argument, "general.alignment",
                 "power of 2, got 48");
  EXPECT_REFUSED(Writer().head(0, 1).kv_u32("general.alignment", 0).b, Code::invalid_argument, "general.alignment", "got 0");
  EXPECT_REFUSED(Writer().head(0, 1).str("general.alignment").u32(10).u64(64).b, Code::invalid_argument, "general.alignment",
                 "must be a uint32, got a uint64");
}

TEST(GgufHostile, RefusesMalformedTensorInfosNamingTheTensor) {
  const auto file = [](const std::function<void(Writer&)>& infos, uint64_t tensors = 1, std::size_t data = 64) {
    Writer w;
    w.head(tensors, 0);
    infos(w);
    w.pad().zeros(data);
    return w.b;
  };
  EXPECT_REFUSED(file([](Writer& w) { w.info("", {8}, 0, 0); }), Code::invalid_argument, "tensors[0]", "1 to 63 bytes");
  EXPECT_REFUSED(file([](Writer& w) { w.info(std::string(64, 'n'), {8}, 0, 0); }), Code::invalid_argument, "tensors[0]",
                 "64 bytes long");
  EXPECT_REFUSED(file([](Writer& w) { w.info("\xc0\x80", {8}, 0, 0); }), Code::invalid_argument, "tensors[0]", "UTF-8");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {1, 1, 1, 1, 1}, 0, 0); }), Code::invalid_argument, "w", "5 dims");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {uint64_t{1} << 63}, 0, 0); }), Code::invalid_argument, "w", "negative");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {uint64_t{1} << 31, uint64_t{1} << 31, 4}, 0, 0); }), Code::out_of_range, "w",
                 "more than 2^60 elements");
  EXPECT_REFUSED(file([](Writer& w) { w.info("blk.0.ffn_down.weight", {256, 2}, 14, 0); }), Code::invalid_argument,
                 "blk.0.ffn_down.weight", "ggml type 14 (Q6_K); attnkit reads F32, F16, BF16, Q8_0, Q4_0, Q4_K");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {8}, 4, 0); }), Code::invalid_argument, "w", "ggml type 4 (type 4)");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {8}, 0x7fffffff, 0); }), Code::invalid_argument, "w", "2147483647 (unknown)");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {48}, 8, 0); }), Code::invalid_argument, "w", "rows of 48 elements");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {128}, 12, 0); }), Code::invalid_argument, "w", "Q4_K's block of 256");
  EXPECT_REFUSED(file([](Writer& w) { w.info("w", {8}, 0, 16); }), Code::invalid_argument, "w", "not a multiple of the alignment 32");
  // Tensors packed as ggml packs them: an overlap and a gap are named.
  EXPECT_REFUSED(file([](Writer& w) { w.info("a", {16}, 0, 0).info("b", {8}, 0, 32); }, 2), Code::invalid_argument, "b",
                 "overlapping tensor 'a' (which ends at 64");
  EXPECT_REFUSED(file([](Writer& w) { w.info("a", {8}, 0, 0).info("b", {8}, 0, 64); }, 2), Code::invalid_argument, "b",
                 "leaving 32 bytes unused after tensor 'a'");
  EXPECT_REFUSED(file([](Writer& w) { w.info("a", {8}, 0, 32); }), Code::invalid_argument, "a", "unused after the data section's start");
  EXPECT_REFUSED(file([](Writer& w) { w.info("a", {8}, 0, 0).info("a", {8}, 0, 32); }, 2), Code::invalid_argument, "a",
                 "the tensor name 'a' appears twice (tensors 0 and 1)");
  // Data outside the file, and bytes after the last tensor.
  EXPECT_REFUSED(file([](Writer& w) { w.info("big", {1000}, 0, 0); }), Code::out_of_range, "big", "lie outside the");
  EXPECT_REFUSED(file([](Writer& w) { w.info("a", {8}, 0, 0).info("b", {20}, 0, 32); }, 2, 100), Code::out_of_range, "b",
                 "run past the end of the");
  EXPECT_REFUSED(file([](Writer& w) { w.info("a", {8}, 0, 0); }, 1, 96), Code::invalid_argument, "bytes",
                 "64 bytes follow the last tensor's data");
  EXPECT_REFUSED(Writer().head(0, 0).zeros(40).b, Code::invalid_argument, "bytes", "follow the header and its padding");
}

TEST(GgufHostile, AcceptsTheEdgesOfTheFormat) {
  // An empty tensor, a 0-dim one (one element), a 4-dim one, the last tensor's padding absent,
  // general.alignment 64 and 1, and every value type.
  Writer w;
  w.head(3, 1).kv_u32("general.alignment", 64).info("empty", {32, 0}, 8, 0).info("scalar", {}, 0, 0).info("four", {2, 1, 1, 3}, 1, 64);
  w.pad(64).zeros(4).pad(64).zeros(12);
  GgufFile f;
  Status s = parse(w.b, f);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.tensors[0].elements, 0u);
  EXPECT_EQ(f.tensors[0].size, 0u);
  EXPECT_EQ(f.tensors[1].elements, 1u);
  EXPECT_EQ(f.tensors[1].n_dims, 0u);
  EXPECT_EQ(f.tensors[2].elements, 6u);
  EXPECT_EQ(f.tensors[2].size, 12u);
  EXPECT_EQ(f.tensors[2].offset, f.data_offset + 64);
  Writer packed;
  packed.head(2, 1).kv_u32("general.alignment", 1).info("a", {3}, 1, 0).info("b", {1}, 0, 6);
  packed.zeros(10);
  ASSERT_TRUE(parse(packed.b, f).ok());
  EXPECT_EQ(f.data_offset, f.header_bytes);
}

TEST(GgufHostile, EveryTruncationIsACodedErrorAndEveryPrefixAsksForMore) {
  const auto whole = read_file("all-types.gguf");
  GgufFile reference;
  ASSERT_TRUE(parse(whole, reference).ok());
  for (std::size_t n = 0; n < whole.size(); ++n) {
    // The file cut at n bytes: refused, naming what it is, never "call again".
    std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    GgufFile f;
    uint64_t needed = 1;
    Status s = parse_gguf(cut.data(), cut.size(), cut.size(), f, &needed);
    ASSERT_FALSE(s.ok()) << n;
    ASSERT_FALSE(s.argument.empty()) << n;
    ASSERT_EQ(needed, 0u) << n;
    // The first n bytes of the whole file: either "more" (at least one byte more, never past the
    // header) or success when they hold the header; retried as the JavaScript loader retries
    // (what is asked, or twice as much), it ends with the same index.
    std::size_t given = n;
    for (int round = 0; round < 64; ++round) {
      std::vector<uint8_t> prefix(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(given));
      s = parse_gguf(prefix.data(), prefix.size(), whole.size(), f, &needed);
      if (s.ok() || needed == 0) break;
      ASSERT_EQ(s.argument, "bytes");
      ASSERT_GT(needed, given);
      ASSERT_LE(needed, reference.header_bytes) << "asked for bytes past the header";
      given = std::min<std::size_t>(whole.size(), std::max<std::size_t>(static_cast<std::size_t>(needed), 2 * given));
    }
    ASSERT_TRUE(s.ok()) << n << ": " << s.message;
    ASSERT_EQ(f.data_offset, reference.data_offset);
    ASSERT_EQ(f.tensors.size(), reference.tensors.size());
  }
}

TEST(GgufHostile, LargeTokenArraysAreIndexedInLinearTimeWithoutCopies) {
  // 300 000 one-byte tokens and their scores: a 3.9 MB header parses in well under a second, and
  // the index keeps a view per array, not a copy.
  const std::size_t n = 300000;
  Writer w;
  w.head(0, 2).str("tokenizer.ggml.tokens").u32(9).u32(8).u64(n);
  for (std::size_t i = 0; i < n; ++i) w.str(std::string(1, static_cast<char>('a' + i % 26)));
  w.str("tokenizer.ggml.scores").u32(9).u32(6).u64(n).zeros(4 * n);
  w.pad();
  const auto start = std::chrono::steady_clock::now();
  GgufFile f;
  ASSERT_TRUE(parse(w.b, f).ok());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 1000) << ms;
  EXPECT_EQ(f.metadata[0].value.count, n);
  EXPECT_EQ(f.metadata[0].value.size, 9 * n);
  std::vector<std::string_view> tokens;
  ASSERT_TRUE(gguf_array_strings(f.metadata[0].value, w.b.data(), tokens).ok());
  EXPECT_EQ(tokens[27], "b");
  EXPECT_EQ(gguf_array_strings(f.metadata[1].value, w.b.data(), tokens).code, Code::invalid_argument);
}

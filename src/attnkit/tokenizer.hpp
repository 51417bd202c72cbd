// Tokenizer models: WordPiece (BERT) and byte-level BPE (GPT-2), read from Hugging Face's
// tokenizer.json or from the classic files (vocab.txt; encoder.json + vocab.bpe).
//
// The split of work: Unicode-aware text steps (normalisation, pre-tokenisation into words, the
// byte-to-character map of byte-level BPE, special-token matching) run in JavaScript, where
// String.normalize and \p{...} classes come with the engine; this class holds the vocabulary and
// turns each pre-tokenised word into token ids (greedy longest-match WordPiece, rank-ordered BPE
// merges). Its settings() describe the text steps for the JavaScript side (web/tokenizer.js).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attnkit/status.hpp"

namespace attnkit {

enum class TokenizerModel : int { wordpiece = 0, bpe = 1 };

class Tokenizer {
 public:
  // tokenizer.json: model WordPiece or BPE; normalizer BertNormalizer, Lowercase, NFD/NFC/NFKD/NFKC,
  // StripAccents or a Sequence of them; pre_tokenizer BertPreTokenizer, ByteLevel, WhitespaceSplit
  // or a Sequence of them; post_processor TemplateProcessing, BertProcessing, RobertaProcessing or
  // ByteLevel; added_tokens. Anything else is rejected naming the JSON path.
  static Status from_tokenizer_json(const char* text, std::size_t length, std::unique_ptr<Tokenizer>& out);
  // vocab.txt (one WordPiece token per line, id = line number) with BERT's text steps.
  static Status from_vocab_txt(const char* text, std::size_t length, bool lowercase, std::unique_ptr<Tokenizer>& out);
  // GPT-2's encoder.json ({token: id}) and vocab.bpe ("#version" line, then "a b" merges by rank).
  static Status from_gpt2_files(const char* encoder_json, std::size_t encoder_length, const char* vocab_bpe,
                                std::size_t vocab_length, std::unique_ptr<Tokenizer>& out);

  // The text steps, special tokens and post-processing template as JSON, with the vocabulary as
  // an array indexed by id ("vocab"); see web/tokenizer.js.
  const std::string& settings() const { return settings_; }
  TokenizerModel model() const { return model_; }

  // Words -> tokens. `words` holds the UTF-8 words back to back, `ends[i]` the byte where word i
  // ends. Appends (id, word index, byte end of the token within its word) triples to `out`.
  // WordPiece: a word that cannot be covered (or is longer than max_input_chars_per_word) is one
  // unknown token; BPE: a symbol missing from the vocabulary is the unknown token, or an error
  // naming it when the model has none.
  Status encode(const char* words, const int32_t* ends, std::size_t count, std::vector<int32_t>& out);

 private:
  Tokenizer() = default;
  // Builds the id -> token table and the settings JSON (vocabulary included).
  void finish(TokenizerModel model, nlohmann::json& settings);
  Status wordpiece(const std::string& word, int32_t index, std::vector<int32_t>& out) const;
  Status bpe(const std::string& word, int32_t index, std::vector<int32_t>& out);

  TokenizerModel model_ = TokenizerModel::wordpiece;
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;                 // id -> token
  std::unordered_map<std::string, int32_t> ranks_;  // BPE: "left right" -> merge rank
  std::unordered_map<std::string, std::vector<std::pair<int32_t, int32_t>>> cache_;  // BPE: word -> (id, end)
  int32_t unk_ = -1;
  std::string prefix_ = "##";  // WordPiece continuing_subword_prefix
  std::size_t max_chars_ = 100;
  std::string settings_;
};

}  // namespace attnkit

// The classic files: BERT's vocab.txt (WordPiece with BERT's text steps) and GPT-2's encoder.json +
// vocab.bpe (byte-level BPE).
#include "tokenizer_json.hpp"

namespace attnkit {

using namespace detail;

namespace {

ATTNKIT_FOR_SIZE json bert_template(const std::unordered_map<std::string, int32_t>& vocab) {
  if (!vocab.count("[CLS]") || !vocab.count("[SEP]")) return nullptr;
  const json cls = {{"id", vocab.at("[CLS]")}, {"typeId", 0}}, sep = {{"id", vocab.at("[SEP]")}, {"typeId", 0}};
  const json sep1 = {{"id", vocab.at("[SEP]")}, {"typeId", 1}};
  return {{"single", {cls, {{"sequence", 0}, {"typeId", 0}}, sep}},
          {"pair", {cls, {{"sequence", 0}, {"typeId", 0}}, sep, {{"sequence", 1}, {"typeId", 1}}, sep1}}};
}

ATTNKIT_FOR_SIZE json special_token(int32_t id, const std::string& content) {
  return {{"id", id}, {"content", content}, {"special", true}, {"lstrip", false}, {"rstrip", false},
          {"singleWord", false}, {"normalized", false}};
}

}  // namespace

Status Tokenizer::from_vocab_txt(const char* text, std::size_t length, bool lowercase, std::unique_ptr<Tokenizer>& out) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  std::size_t line = 0, start = 0;
  for (std::size_t i = 0; i <= length; ++i) {
    if (i == length || text[i] == '\n') {
      std::size_t end = i;
      if (end > start && text[end - 1] == '\r') --end;
      // A repeated line takes the later id, as transformers' load_vocab does.
      if (i < length || end > start) t->vocab_[std::string(text + start, end - start)] = static_cast<int32_t>(line++);
      start = i + 1;
    }
  }
  if (line >= static_cast<std::size_t>(kMaxId)) return bad("vocab", "vocab.txt has more than 2^24 lines");
  const auto unk = t->vocab_.find("[UNK]");
  if (unk == t->vocab_.end()) return bad("vocab", "vocab.txt has no [UNK] token");
  t->unk_ = unk->second;
  json added = json::array();
  for (const char* sp : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    const auto it = t->vocab_.find(sp);
    if (it != t->vocab_.end()) added.push_back(special_token(it->second, sp));
  }
  json settings = {{"model", "wordpiece"},
                   {"normalizer", {{{"type", "bert"}, {"cleanText", true}, {"handleChineseChars", true},
                                    {"stripAccents", nullptr}, {"lowercase", lowercase}}}},
                   {"preTokenizer", {{{"type", "bert"}}}},
                   {"template", bert_template(t->vocab_)},
                   {"addedTokens", added}};
  if (t->vocab_.count("[PAD]")) settings["pad"] = {{"id", t->vocab_.at("[PAD]")}, {"typeId", 0}};
  Status s = t->finish(TokenizerModel::wordpiece, settings);
  if (!s.ok()) return s;
  out = std::move(t);
  return s;
}

Status Tokenizer::from_gpt2_files(const char* encoder_json, std::size_t encoder_length, const char* vocab_bpe,
                                  std::size_t vocab_length, std::unique_ptr<Tokenizer>& out) {
  json enc;
  JsonPairs root;  // the whole file is the {token: id} object
  Status s = parse_json(encoder_json, encoder_length, "encoder.json", enc, &root);
  if (!s.ok()) return s;
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!t) return Status::error(Code::out_of_memory, "tokenizer", "could not allocate the tokenizer");
  s = read_vocab_object(enc, &root, "encoder.json", t->vocab_);
  if (!s.ok()) return s;
  enc = json();  // the parsed tree is no longer needed
  std::size_t start = 0, rank = 0;
  for (std::size_t i = 0; i <= vocab_length && s.ok(); ++i) {
    if (i == vocab_length || vocab_bpe[i] == '\n') {
      std::string line(vocab_bpe + start, i - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      start = i + 1;
      if (line.empty() || line.rfind("#version", 0) == 0) continue;
      s = t->add_merge_line(line, rank++, "vocab.bpe");
    }
  }
  if (!s.ok()) return s;  // named "vocab.bpe" by add_merge_line
  json added = json::array();
  const auto eot = t->vocab_.find("<|endoftext|>");
  if (eot != t->vocab_.end()) added.push_back(special_token(eot->second, "<|endoftext|>"));
  json settings = {{"model", "bpe"},
                   {"normalizer", json::array()},
                   {"preTokenizer", {{{"type", "byteLevel"}, {"addPrefixSpace", false}, {"useRegex", true}}}},
                   {"template", nullptr},
                   {"addedTokens", added}};
  s = t->finish(TokenizerModel::bpe, settings);
  if (!s.ok()) return s;
  out = std::move(t);
  return s;
}

}  // namespace attnkit

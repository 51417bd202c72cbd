// SentencePiece models (Google's library; T5, ALBERT, XLM-R, Llama 2, Mistral, TinyLlama) read from
// their own tokenizer.model file: a serialised ModelProto (protobuf) with the pieces and their
// scores, the trainer spec (algorithm, byte fallback, whitespace handling) and the normaliser spec
// (precompiled charsmap and whitespace flags).
//
// encode() does the whole of the library's Encode in one call, with its exact rules:
//  1. normalisation: user-defined symbols are kept as they are; elsewhere the longest charsmap
//     rule applies (malformed UTF-8 becomes U+FFFD, one byte at a time); leading, trailing and
//     repeated spaces go (remove_extra_whitespaces); spaces become U+2581 (escape_whitespaces); a
//     U+2581 is put before the text (add_dummy_prefix), or after it (treat_whitespace_as_suffix).
//  2. segmentation: Unigram = Viterbi over the pieces (score; user-defined symbols score
//     length * max score - 0.1; an unknown character scores min score - 10); BPE = merge the
//     adjacent pair whose concatenation is the highest-scoring piece, leftmost first, then split
//     UNUSED pieces back into the pieces they were merged from.
//  3. unknown pieces: with byte_fallback, one <0xXX> piece per UTF-8 byte; otherwise a run of
//     unknown pieces becomes one unknown token.
// Offsets are byte offsets into the input, as the library reports them.
//
// The file is untrusted: its size bounds every allocation (checked against the heap first),
// every id, length and charsmap offset is range-checked, and anything the library would refuse
// (a duplicate piece, no unknown piece, byte fallback without its 256 byte pieces) is a coded error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attnkit/text/charsmap.hpp"
#include "attnkit/core/float_buffer.hpp"
#include "attnkit/core/status.hpp"

namespace attnkit {

// ModelProto.SentencePiece.Type
enum class PieceType : uint8_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

class SentencePiece : public HeapObject {
 public:
  enum class Algorithm { unigram = 1, bpe = 2 };

  // A serialised ModelProto (the bytes of tokenizer.model / spiece.model / sentencepiece.bpe.model).
  static Status from_model_proto(const char* data, std::size_t size, std::unique_ptr<SentencePiece>& out);

  // Words of a normalised text (UTF-8) as [begin, end) byte ranges, in order and disjoint.
  using WordSplit = std::function<Status(std::string_view, std::vector<std::pair<std::size_t, std::size_t>>&)>;
  // The same models as a Hugging Face tokenizer.json describes them (sentencepiece_json.cpp reads
  // the JSON): the steps around the model are Hugging Face's, not the library's. In order:
  struct Pipeline {
    // The normalizer's steps after those JavaScript runs (web/src/text/tokenizer.js's preNormalizer),
    // in the file's order: Precompiled (the charsmap), Replace(Regex " {2,}" -> " " or "▁": a run
    // of two or more spaces becomes one), Strip (Unicode whitespace, left and right), Prepend(s) on
    // a non-empty text, Replace(" " -> "▁").
    enum class Step : uint8_t { charsmap, collapse, collapse_meta, strip_left, strip_right, prepend, replace_spaces };
    std::vector<Step> steps;
    std::string prepend;           // Prepend's text ("▁", or " " before a Replace(" " -> "▁")); one Prepend
    bool whitespace_split = false; // pre_tokenizer WhitespaceSplit: words at Unicode whitespace
    // Any other pre_tokenizer steps before Metaspace (Gemma's Split(" "), Helium's Split("\n"),
    // Digits, Punctuation, ...): run by the Tokenizer that owns this model (its text steps).
    WordSplit split;
    int metaspace = -1;            // pre_tokenizer Metaspace: -1 none; prepend_scheme 0 never, 1 first, 2 always
    bool metaspace_split = true;   //   and split: a word starts at each "▁"
  };
  struct Parts {
    Algorithm algorithm = Algorithm::unigram;
    std::vector<std::string> pieces;  // by id
    std::vector<float> scores;        // Unigram
    std::vector<PieceType> types;     // unknown, byte, control (added tokens: matched before the model) or normal
    std::vector<std::pair<int32_t, int32_t>> merges;  // BPE: (left id, right id) by rank
    bool byte_fallback = false;
    std::string charsmap;             // normalizer Precompiled (decoded from base64)
    Pipeline pipeline;
  };
  static Status from_parts(Parts&& parts, std::unique_ptr<SentencePiece>& out);
  bool hugging_face() const { return hf_; }

  // One text (UTF-8) -> tokens. Appends (id, begin, end) triples to `out`: begin and end are byte
  // offsets into `text` (begin == end for all but the last byte piece of a character).
  // `first`: the text is the first segment of its input (Metaspace's prepend_scheme "first";
  // only for models from_parts built).
  Status encode(const char* text, std::size_t length, std::vector<int32_t>& out, bool first = true) const;

  // ids -> text, as the library's Decode: control tokens are invisible, the unknown piece reads
  // unk_surface (" \u2047 " by default), byte pieces are joined and read as UTF-8 (each invalid
  // byte is U+FFFD), U+2581 is a space, and the dummy prefix's space is dropped.
  // Models from tokenizer.json read the unknown piece as its text, as Hugging Face's decoders do.
  // strip_first = false keeps the leading space (ids that follow an added token).
  Status decode(const int32_t* ids, std::size_t count, std::string& out, bool strip_first = true) const;

  std::size_t size() const { return types_.size(); }
  std::string_view piece(std::size_t id) const {
    return std::string_view(blob_).substr(starts_[id], starts_[id + 1] - starts_[id]);
  }
  PieceType type(std::size_t id) const { return types_[id]; }
  float score(std::size_t id) const { return scores_[id]; }
  Algorithm algorithm() const { return algorithm_; }
  int32_t unk_id() const { return unk_; }
  // The trainer spec's bos/eos/pad ids when they name a piece, else -1.
  int32_t bos_id() const { return bos_; }
  int32_t eos_id() const { return eos_; }
  int32_t pad_id() const { return pad_; }
  bool byte_fallback() const { return byte_fallback_; }
  // "<0xAB>" (upper-case hex, as the library writes byte pieces) -> 0xAB, else -1.
  static int byte_of_piece(std::string_view piece);

  // A text is at most 2^28 bytes per call (ids and offsets stay well inside int32).
  static constexpr std::size_t kMaxTextBytes = std::size_t(1) << 28;
  // Normalisation may grow a text at most this many times (nmt_nfkc's longest rule is about 11x);
  // a charsmap that expands more is refused at encode time rather than filling the heap.
  static constexpr std::size_t kMaxExpansion = 16;

 private:
  SentencePiece() = default;
  Status build_trie();
  // Hugging Face's steps (Pipeline) -> the normalised text's words: norm_begin/norm_end[i] = the
  // input range of the character normalised byte i came from; words = [begin, end) byte ranges.
  Status normalize_hf(std::string_view text, bool first, std::string& normalized, std::vector<uint32_t>& norm_begin,
                      std::vector<uint32_t>& norm_end, std::vector<std::pair<uint32_t, uint32_t>>& words) const;
  Status encode_hf(const char* text, std::size_t length, bool first, std::vector<int32_t>& out) const;
  // Normalises text; norm_to_orig[i] = the input byte that normalised byte i came from.
  Status normalize(std::string_view text, std::string& normalized, std::vector<uint32_t>& norm_to_orig) const;
  // (normalised begin, end, id) of each piece, in order.
  struct Span {
    uint32_t begin, end;
    int32_t id;
  };
  void unigram(std::string_view normalized, std::vector<Span>& out) const;
  void bpe(std::string_view normalized, std::vector<Span>& out) const;
  // One symbol of a text under BPE: a doubly linked list over the text's characters.
  struct BpeSymbol {
    int32_t prev, next;
    uint32_t begin, size;  // the symbol's bytes; size 0 once merged into its left neighbour
    bool freeze;           // a user-defined symbol: never merged
    int32_t id;            // Hugging Face: the symbol's token (-1: an unknown character)
  };
  void bpe_ranked(std::vector<BpeSymbol>& symbols, std::vector<Span>& out) const;
  // Longest user-defined symbol at the start of s (0 when none).
  std::size_t user_symbol(const char* s, std::size_t n) const;
  // The id of s when it is a piece, else -1.
  int32_t find(std::string_view s) const;
  // Trie: child of `node` on byte c, or 0 (the root is node 0 and never a child).
  uint32_t child(uint32_t node, unsigned char c) const;

  Algorithm algorithm_ = Algorithm::unigram;
  std::string blob_;               // the pieces back to back
  std::vector<uint32_t> starts_;   // piece i = blob_[starts_[i], starts_[i + 1])
  std::vector<float> scores_;
  std::vector<PieceType> types_;
  int32_t unk_ = -1, bos_ = -1, eos_ = -1, pad_ = -1;
  std::array<int32_t, 256> byte_ids_{};
  bool byte_fallback_ = false, has_user_symbols_ = false;
  bool add_dummy_prefix_ = true, remove_extra_whitespaces_ = true, escape_whitespaces_ = true, suffix_ = false;
  float min_score_ = 0, max_score_ = 0;
  std::string charsmap_blob_;
  Charsmap charsmap_;
  std::string unk_surface_ = " \xE2\x81\x87 ";
  // Byte trie over all pieces: node n's children are labels_/children_[first_[n], first_[n + 1]),
  // sorted by label; ids_[n] is the piece ending at n or -1. The root's children are also in root_.
  std::vector<int32_t> ids_;
  std::vector<uint32_t> first_;
  std::vector<unsigned char> labels_;
  std::vector<uint32_t> children_;
  std::array<uint32_t, 256> root_{};
  // Models from tokenizer.json: Hugging Face's steps, and BPE merges by pair of ids ->
  // (rank, merged id) instead of the pieces' scores.
  bool hf_ = false;
  Pipeline pipeline_;
  // BPE from tokenizer.json: true when no piece has a "▁" after another character except pieces
  // of "▁"s alone. Then no merge joins a character to a "▁" after it, so the merges of a text are
  // those of its stretches cut before each "▁" that follows another character: BPE runs on
  // stretches of a word or two instead of a whole text (Llama's form has no pre-tokenizer).
  bool cut_before_spaces_ = false;
  // (left id << 32 | right id) -> (rank, merged id): open addressing, a power-of-two table at most
  // half full (the lookup is BPE's inner loop; std::unordered_map's buckets cost twice as much).
  struct Merge {
    uint64_t key = ~uint64_t(0);
    int32_t rank = 0, merged = 0;
  };
  std::vector<Merge> merges_;
  uint64_t merge_mask_ = 0;
  int merge_shift_ = 60;  // 64 - log2(table size): the hash's top bits pick the slot
  const Merge* find_merge(int32_t left, int32_t right) const {
    if (merges_.empty()) return nullptr;
    const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
    for (uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> merge_shift_;; i = (i + 1) & merge_mask_) {
      const Merge& m = merges_[i];
      if (m.key == key) return &m;
      if (m.key == ~uint64_t(0)) return nullptr;
    }
  }
};

}  // namespace attnkit

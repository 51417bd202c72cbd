// SentencePiece's own model file (tokenizer.model, spiece.model, sentencepiece.bpe.model): a
// serialised ModelProto read field by field (attnkit/formats/protobuf.hpp).
#include <algorithm>
#include <cfloat>

#include "attnkit/text/sentencepiece.hpp"
#include "attnkit/formats/protobuf.hpp"
#include "attnkit/core/scratch.hpp"

#include "sentencepiece_internal.hpp"

namespace attnkit {

using sentencepiece_detail::bad;

Status SentencePiece::from_model_proto(const char* data, std::size_t size, std::unique_ptr<SentencePiece>& out) {
  if (size > (std::size_t(1) << 31)) return bad("tokenizer.model", "the file is larger than 2 GiB");
  // Everything below is a small multiple of the file: pieces, scores and types (< 3 bytes each
  // per file byte), the charsmap copy, and the trie (about 13 bytes per piece byte, with its
  // build queue and sort order).
  Status s = check_heap("tokenizer.model", 48.0 * static_cast<double>(size) + 65536);
  if (!s.ok()) return s;
  std::unique_ptr<SentencePiece> sp(new SentencePiece());
  if (!sp) return Status::error(Code::out_of_memory, "tokenizer.model", "no memory for the tokenizer");
  sp->starts_.push_back(0);
  bool have_unk_spec = false;
  int64_t unk_spec = 0, bos_spec = 1, eos_spec = 2, pad_spec = -1;
  int64_t model_type = 1;
  std::string_view charsmap;
  const auto malformed = [&](const ProtoReader& r, const char* what) {
    return bad("tokenizer.model", std::string("malformed protobuf in ") + what + ": " + (r.error() ? r.error() : "?"));
  };
  ProtoReader top(data, size);
  while (top.next()) {
    if (top.field() == 1 && top.wire() == ProtoReader::bytes) {  // SentencePiece
      std::string_view piece;
      float score = 0;
      int64_t type = 1;
      ProtoReader r(top.data());
      while (r.next()) {
        if (r.field() == 1 && r.wire() == ProtoReader::bytes) piece = r.data();
        else if (r.field() == 2 && r.wire() == ProtoReader::fixed32) score = r.f32();
        else if (r.field() == 3 && r.wire() == ProtoReader::varint) type = static_cast<int64_t>(r.u64());
      }
      if (r.error()) return malformed(r, "pieces");
      const std::string where = "pieces[" + std::to_string(sp->types_.size()) + "]";
      if (piece.empty()) return bad(where, where + " is empty");
      if (type < 1 || type > 6) return bad(where, where + " has an unknown type " + std::to_string(type));
      if (sp->blob_.size() + piece.size() > UINT32_MAX) return bad(where, "the pieces exceed 4 GiB");
      sp->blob_.append(piece);
      sp->starts_.push_back(static_cast<uint32_t>(sp->blob_.size()));
      sp->scores_.push_back(score);
      sp->types_.push_back(static_cast<PieceType>(type));
    } else if (top.field() == 2 && top.wire() == ProtoReader::bytes) {  // TrainerSpec
      ProtoReader r(top.data());
      while (r.next()) {
        if (r.wire() == ProtoReader::varint) {
          const auto v = static_cast<int64_t>(static_cast<int32_t>(r.u64()));  // int32 fields, sign-extended
          switch (r.field()) {
            case 3: model_type = v; break;
            case 24: sp->suffix_ = r.u64() != 0; break;
            case 35: sp->byte_fallback_ = r.u64() != 0; break;
            case 40: unk_spec = v, have_unk_spec = true; break;
            case 41: bos_spec = v; break;
            case 42: eos_spec = v; break;
            case 43: pad_spec = v; break;
            default: break;
          }
        } else if (r.field() == 44 && r.wire() == ProtoReader::bytes) {
          sp->unk_surface_ = std::string(r.data());
        }
      }
      if (r.error()) return malformed(r, "trainer_spec");
    } else if (top.field() == 3 && top.wire() == ProtoReader::bytes) {  // NormalizerSpec
      ProtoReader r(top.data());
      while (r.next()) {
        if (r.field() == 2 && r.wire() == ProtoReader::bytes) charsmap = r.data();
        else if (r.field() == 3 && r.wire() == ProtoReader::varint) sp->add_dummy_prefix_ = r.u64() != 0;
        else if (r.field() == 4 && r.wire() == ProtoReader::varint) sp->remove_extra_whitespaces_ = r.u64() != 0;
        else if (r.field() == 5 && r.wire() == ProtoReader::varint) sp->escape_whitespaces_ = r.u64() != 0;
      }
      if (r.error()) return malformed(r, "normalizer_spec");
    }
  }
  if (top.error()) return malformed(top, "the model");
  (void)have_unk_spec;
  if (model_type != 1 && model_type != 2) {
    return bad("trainer_spec.model_type", "model_type " + std::to_string(model_type) +
                                              (model_type == 3 || model_type == 4 ? " (WORD or CHAR)" : "") +
                                              " is not supported: only UNIGRAM (1) and BPE (2)");
  }
  sp->algorithm_ = static_cast<Algorithm>(model_type);
  const std::size_t n = sp->types_.size();
  if (n == 0) return bad("pieces", "the model has no pieces");
  if (n > INT32_MAX / 2) return bad("pieces", "the model has too many pieces");

  // The library's checks (ModelInterface::InitializePieces), and the score range of NORMAL pieces.
  sp->min_score_ = FLT_MAX;
  sp->max_score_ = FLT_MIN;
  std::array<bool, 256> byte_found{};
  for (std::size_t i = 0; i < n; ++i) {
    const PieceType t = sp->types_[i];
    const std::string where = "pieces[" + std::to_string(i) + "]";
    if (t == PieceType::unknown) {
      if (sp->unk_ >= 0) return bad(where, "there are two unknown pieces (" + std::to_string(sp->unk_) + " and " + std::to_string(i) + ")");
      sp->unk_ = static_cast<int32_t>(i);
    } else if (t == PieceType::byte) {
      if (!sp->byte_fallback_) return bad(where, "byte piece " + std::string(sp->piece(i)) + " although byte_fallback is false");
      const int b = byte_of_piece(sp->piece(i));
      if (b < 0) return bad(where, "byte piece " + std::string(sp->piece(i)) + " is not of the form <0xAB>");
      byte_found[b] = true;
      sp->byte_ids_[b] = static_cast<int32_t>(i);
    } else if (t == PieceType::normal) {
      sp->min_score_ = std::min(sp->min_score_, sp->scores_[i]);
      sp->max_score_ = std::max(sp->max_score_, sp->scores_[i]);
    } else if (t == PieceType::user_defined) {
      sp->has_user_symbols_ = true;
    }
  }
  if (sp->unk_ < 0) return bad("pieces", "the model has no unknown piece (type UNKNOWN)");
  if (sp->byte_fallback_ && std::find(byte_found.begin(), byte_found.end(), false) != byte_found.end()) {
    return bad("pieces", "byte_fallback is true but the 256 byte pieces <0x00>..<0xFF> are not all there");
  }
  const auto id_or_none = [n](int64_t v) { return v >= 0 && static_cast<std::size_t>(v) < n ? static_cast<int32_t>(v) : -1; };
  sp->bos_ = id_or_none(bos_spec);
  sp->eos_ = id_or_none(eos_spec);
  sp->pad_ = id_or_none(pad_spec);
  (void)unk_spec;
  sp->charsmap_blob_ = std::string(charsmap);
  s = sp->charsmap_.parse(sp->charsmap_blob_, "normalizer_spec.precompiled_charsmap");
  if (!s.ok()) return s;
  s = sp->build_trie();
  if (!s.ok()) return s;
  out = std::move(sp);
  return Status::success();
}

}  // namespace attnkit

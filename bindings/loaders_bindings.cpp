// The raw embind layer of attnkit-loaders.wasm: the file-format readers, built apart from the
// kernels so that their JSON parser (nlohmann/json) does not weigh on the main module's size and
// start-up. web/src/formats/safetensors.js loads it on first use.
#include <cstring>
#include <string>

#include "attnkit/models/model_config.hpp"
#include "attnkit/formats/gguf.hpp"
#include "attnkit/formats/safetensors.hpp"
#include "attnkit/ops/dequantize.hpp"
#include "attnkit/text/sentencepiece.hpp"
#include "attnkit/text/tokenizer.hpp"
#include "attnkit/text/utf8.hpp"
#include "raw.hpp"

using namespace attnkit;
using namespace attnkit_raw;

namespace {

int safetensors_prefix_raw(uintptr_t, double header_length, double file_size) {
  Status s = check_safetensors_prefix(static_cast<uint64_t>(header_length), static_cast<uint64_t>(file_size));
  return s.ok() ? 0 : fail(std::move(s));
}

std::string g_safetensors_index;  // the last validated header, as JSON for web/src/formats/safetensors.js

// Validates the header bytes; the index (tensors with numeric dtype and absolute offsets, and the
// metadata) is then read with _safetensorsIndexJson().
int safetensors_index_raw(uintptr_t, uintptr_t header, double header_length, double file_size) {
  SafetensorsIndex index;
  Status s = parse_safetensors_header(in<char>(header), static_cast<uint64_t>(header_length),
                                      static_cast<uint64_t>(file_size), index);
  if (!s.ok()) return fail(std::move(s));
  g_safetensors_index = safetensors_index_json(index);
  return 0;
}

std::string last_safetensors_index() { return g_safetensors_index; }

// count little-endian values of a float dtype (0 F32, 1 F16, 2 BF16, 3 F64) -> float32.
int to_float32_raw(uintptr_t slot, uintptr_t src, double count, int dtype) {
  Status s = check_integer("count", count, 0, kMaxOutputElements);
  if (s.ok() && (dtype < 0 || dtype > 3)) s = Status::error(Code::invalid_argument, "dtype", "unknown dtype");
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(count), [&](float* out) {
    convert_to_float32(out, in<void>(src), static_cast<std::size_t>(count), static_cast<TensorDType>(dtype));
    return Status::success();
  });
}

std::string g_gguf_index;  // the last validated GGUF header, as JSON for web/src/formats/gguf.js
double g_gguf_needed = 0;  // > 0 after _ggufIndex failed for want of a longer prefix

// The first `available` bytes of a `file_size`-byte GGUF file: validates the header; the index is
// then read (once) with _ggufIndexJson(). A prefix that ends inside the header fails with
// ERR_OUT_OF_RANGE naming "bytes", and _ggufNeeded() says how many bytes to call again with.
int gguf_index_raw(uintptr_t, uintptr_t bytes, double available, double file_size) {
  g_gguf_needed = 0;
  Status s = check_integer("bytes.length", available, 0, 4294967295.0);
  if (s.ok()) s = check_integer("fileSize", file_size, available, 9007199254740991.0);
  if (!s.ok()) return fail(std::move(s));
  GgufFile file;
  uint64_t needed = 0;
  s = parse_gguf(in<uint8_t>(bytes), static_cast<std::size_t>(available), static_cast<uint64_t>(file_size), file, &needed);
  g_gguf_needed = static_cast<double>(needed);
  if (s.ok()) s = check_heap("bytes", static_cast<double>(gguf_index_json_bytes(file)));
  if (!s.ok()) return fail(std::move(s));
  g_gguf_index = gguf_index_json(file);
  return 0;
}

double gguf_needed() { return g_gguf_needed; }

// The index, handed over once (its memory is given back).
std::string last_gguf_index() {
  std::string out;
  out.swap(g_gguf_index);
  return out;
}

// count elements of GGUF tensor data of ggml type `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_K) -> float32.
int gguf_dequantize_raw(uintptr_t slot, uintptr_t src, double count, int type) {
  Status s = check_integer("count", count, 0, kMaxOutputElements);
  if (s.ok() && ggml_block_elements(type) == 0) s = dequantize(nullptr, nullptr, 0, type);  // names the type
  if (!s.ok()) return fail(std::move(s));
  return with_result(slot, static_cast<std::size_t>(count), [&](float* out) {
    return dequantize(out, in<void>(src), static_cast<std::size_t>(count), type);
  });
}

std::string g_model_spec;  // the last config.json's spec (model_config.hpp), for web/src/models/model.js

int model_spec_raw(uintptr_t, uintptr_t text, double length) {
  Status s = check_integer("config.length", length, 0, 4294967295.0);
  if (s.ok()) s = model_spec_from_config(in<char>(text), static_cast<std::size_t>(length), g_model_spec);
  return s.ok() ? 0 : fail(std::move(s));
}

std::string last_model_spec() { return g_model_spec; }

Registry<Tokenizer> g_tokenizers{"Tokenizer", {}};

// kind 0: tokenizer.json in a (a Precompiled charsmap's base64 in b, or none); 1: vocab.txt in a
// (lowercase); 2: encoder.json in a, vocab.bpe in b.
// The handle goes to result slot [0].
int tokenizer_create(uintptr_t slot, int kind, uintptr_t a, double a_length, uintptr_t b, double b_length, bool lowercase) {
  Status s = check_integer("text.length", a_length, 0, 4294967295.0);
  if (s.ok()) s = check_integer("text.length", b_length, 0, 4294967295.0);
  if (s.ok() && (kind < 0 || kind > 2)) s = Status::error(Code::invalid_argument, "kind", "unknown tokenizer file kind");
  if (!s.ok()) return fail(std::move(s));
  std::unique_ptr<Tokenizer> t;
  const auto na = static_cast<std::size_t>(a_length), nb = static_cast<std::size_t>(b_length);
  s = kind == 0   ? Tokenizer::from_tokenizer_json(in<char>(a), na, t, std::string_view(in<char>(b), nb))
      : kind == 1 ? Tokenizer::from_vocab_txt(in<char>(a), na, lowercase, t)
                  : Tokenizer::from_gpt2_files(in<char>(a), na, in<char>(b), nb, t);
  if (!s.ok()) return fail(std::move(s));
  return g_tokenizers.adopt(slot, std::move(t));
}

// 1 when the tokenizer encodes whole texts in C++ (_tokenizerEncodeTexts), 2 when it does once
// JavaScript has normalised them (Tokenizer::normalizes_in_js), else 0.
int tokenizer_encodes_texts(double handle) {
  Tokenizer* t = nullptr;
  if (!g_tokenizers.find(handle, t).ok() || !(t->sentencepiece() || t->encodes_texts())) return 0;
  return !t->sentencepiece() && t->normalizes_in_js() ? 2 : 1;
}

std::string tokenizer_settings(double handle) {
  Tokenizer* t = nullptr;
  return g_tokenizers.find(handle, t).ok() ? t->settings() : std::string();
}

// words: UTF-8 words back to back; ends: int32 byte end of each. Result: int32 (id, word, end)
// triples.
int tokenizer_encode(uintptr_t slot, double handle, uintptr_t words, double length, uintptr_t ends, double count) {
  Tokenizer* t = nullptr;
  Status s = g_tokenizers.find(handle, t);
  if (s.ok()) s = check_integer("words.length", count, 0, 1 << 28);
  if (s.ok()) s = check_integer("bytes.length", length, 0, 2147483647.0);
  // At most one token per byte, three int32 each, in a vector that may double.
  if (s.ok()) s = check_heap("encode", 24.0 * length + 65536);
  std::vector<int32_t> out;
  if (s.ok()) s = t->encode(in<char>(words), static_cast<std::size_t>(length), in<int32_t>(ends), static_cast<std::size_t>(count), out);
  if (!s.ok()) return fail(std::move(s));
  return with_result<int32_t>(slot, out.size(), [&](int32_t* r) {
    std::copy(out.begin(), out.end(), r);
    return Status::success();
  });
}

// A Split step's own regular expression over one string (UTF-16 units): int32 [start, end) pairs of
// its matches, in units.
int tokenizer_split(uintptr_t slot, double handle, int program, uintptr_t text, double units) {
  Tokenizer* t = nullptr;
  Status s = g_tokenizers.find(handle, t);
  if (s.ok()) s = check_integer("text.length", units, 0, 1 << 29);
  // Code points and their positions (8 bytes a unit), and at most a match pair per unit and one more.
  if (s.ok()) s = check_heap("split", 16.0 * units + 65536);
  std::vector<int32_t> out;
  if (s.ok()) s = t->split_matches(program, in<uint16_t>(text), static_cast<std::size_t>(units), out);
  if (!s.ok()) return fail(std::move(s));
  return with_result<int32_t>(slot, out.size(), [&](int32_t* r) {
    std::copy(out.begin(), out.end(), r);
    return Status::success();
  });
}

void tokenizer_free(double handle) { g_tokenizers.free(handle); }

Registry<SentencePiece> g_sentencepieces{"SentencePiece", {}};

// A tokenizer.model's bytes -> handle in result slot [0].
int sentencepiece_create(uintptr_t slot, uintptr_t bytes, double length) {
  Status s = check_integer("tokenizerModel.length", length, 0, 2147483648.0);
  if (!s.ok()) return fail(std::move(s));
  std::unique_ptr<SentencePiece> sp;
  s = SentencePiece::from_model_proto(in<char>(bytes), static_cast<std::size_t>(length), sp);
  if (!s.ok()) return fail(std::move(s));
  return g_sentencepieces.adopt(slot, std::move(sp));
}

// int32: [pieces n, algorithm (1 Unigram, 2 BPE), unk, bos, eos, pad, byte fallback, 1 when every
// piece is well-formed UTF-8, then n piece types, then n + 1 UTF-16 starts of the pieces in the
// text _sentencepiecePieces' bytes decode to, then their n + 1 byte starts].
int sentencepiece_info(uintptr_t slot, double handle) {
  SentencePiece* sp = nullptr;
  Status s = g_sentencepieces.find(handle, sp);
  if (!s.ok()) return fail(std::move(s));
  const std::size_t n = sp->size();
  return with_result<int32_t>(slot, 8 + 3 * n + 2, [&](int32_t* r) {
    bool valid = true;
    int32_t* types = r + 8;
    int32_t* starts = r + 8 + n;
    int32_t* byte_starts = starts + n + 1;
    starts[0] = byte_starts[0] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      types[i] = static_cast<int32_t>(sp->type(i));
      const std::string_view p = sp->piece(i);
      int32_t units = 0;
      const auto* u = reinterpret_cast<const unsigned char*>(p.data());
      for (std::size_t k = 0; valid && k < p.size();) {  // UTF-16 units, checking the UTF-8 on the way
        const std::size_t len = utf8::decode(u + k, p.size() - k);
        valid = len > 0;
        units += len == 4 ? 2 : 1;
        k += len;
      }
      starts[i + 1] = starts[i] + units;
      byte_starts[i + 1] = byte_starts[i] + static_cast<int32_t>(p.size());
    }
    const int32_t head[8] = {static_cast<int32_t>(n), static_cast<int32_t>(sp->algorithm()), sp->unk_id(), sp->bos_id(),
                             sp->eos_id(), sp->pad_id(), sp->byte_fallback(), valid};
    std::copy(head, head + 8, r);
    return Status::success();
  });
}

// The pieces' bytes back to back (uint8).
int sentencepiece_pieces(uintptr_t slot, double handle) {
  SentencePiece* sp = nullptr;
  Status s = g_sentencepieces.find(handle, sp);
  if (!s.ok()) return fail(std::move(s));
  const std::size_t n = sp->size();
  const std::size_t bytes = n ? sp->piece(n - 1).data() + sp->piece(n - 1).size() - sp->piece(0).data() : 0;
  return with_result<uint8_t>(slot, bytes, [&](uint8_t* r) {
    if (bytes) std::memcpy(r, sp->piece(0).data(), bytes);
    return Status::success();
  });
}

// A batch of texts (UTF-8 back to back, `ends[i]` the byte end of text i) in one call; firsts
// (uint8, or 0 = all) marks the texts that begin their input (Metaspace's prepend_scheme "first";
// the others follow an added token). Result int32: the token count of each text, then (id, start,
// end) triples with start and end in UTF-16 units of their text (what String.slice takes).
// One text through a SentencePiece-style model, or through a tokenizer's C++ text steps: (id,
// byte start, byte end) triples.
Status encode_one(const SentencePiece* sp, const char* text, std::size_t n, std::vector<int32_t>& out, bool first) {
  return sp->encode(text, n, out, first);
}
Status encode_one(Tokenizer* t, const char* text, std::size_t n, std::vector<int32_t>& out, bool) {
  return t->encode_text(text, n, out);
}

template <class Model>
int encode_texts(uintptr_t slot, Model model, uintptr_t bytes, double length, uintptr_t ends, uintptr_t firsts,
                 double count) {
  Status s = check_integer("texts.length", count, 0, 1 << 28);
  if (s.ok()) s = check_integer("bytes.length", length, 0, 2147483647.0);
  if (!s.ok()) return fail(std::move(s));
  const auto* text = in<char>(bytes);
  const auto* end = in<int32_t>(ends);
  const auto* first = firsts ? in<uint8_t>(firsts) : nullptr;
  const auto n = static_cast<std::size_t>(count);
  std::vector<int32_t> out, counts, u16;
  s = check_heap("encode", 4.0 * static_cast<double>(n) + 8.0 * length + 65536);
  if (s.ok()) counts.reserve(n);
  int32_t at = 0;
  for (std::size_t i = 0; s.ok() && i < n; ++i) {
    if (end[i] < at || static_cast<double>(end[i]) > length) {
      s = Status::error(Code::out_of_range, "ends", "ends[" + std::to_string(i) + "] = " + std::to_string(end[i]) +
                                                        " is not in [" + std::to_string(at) + ", " + show_number(length) + "]");
      break;
    }
    const std::size_t before = out.size();
    s = encode_one(model, text + at, static_cast<std::size_t>(end[i] - at), out, first ? first[i] != 0 : true);
    if (!s.ok()) break;
    // Byte offsets -> UTF-16 units: a 4-byte character is two units, continuation bytes none.
    u16.assign(static_cast<std::size_t>(end[i] - at) + 1, 0);
    for (int32_t k = 0; k < end[i] - at; ++k) {
      const auto c = static_cast<unsigned char>(text[at + k]);
      u16[k + 1] = u16[k] + ((c & 0xC0) == 0x80 ? 0 : c >= 0xF0 ? 2 : 1);
    }
    for (std::size_t k = before; k < out.size(); k += 3) {
      out[k + 1] = u16[out[k + 1]];
      out[k + 2] = u16[out[k + 2]];
    }
    counts.push_back(static_cast<int32_t>((out.size() - before) / 3));
    at = end[i];
  }
  if (!s.ok()) return fail(std::move(s));
  return with_result<int32_t>(slot, counts.size() + out.size(), [&](int32_t* r) {
    std::copy(counts.begin(), counts.end(), r);
    std::copy(out.begin(), out.end(), r + counts.size());
    return Status::success();
  });
}

int sentencepiece_encode(uintptr_t slot, double handle, uintptr_t bytes, double length, uintptr_t ends, double count) {
  SentencePiece* sp = nullptr;
  Status s = g_sentencepieces.find(handle, sp);
  if (!s.ok()) return fail(std::move(s));
  return encode_texts(slot, static_cast<const SentencePiece*>(sp), bytes, length, ends, 0, count);
}

// ids -> UTF-8 text (uint8 result) by the model's decoding.
int decode_ids(uintptr_t slot, const SentencePiece* sp, uintptr_t ids, double count, bool strip_first) {
  Status s = check_integer("ids.length", count, 0, 1 << 28);
  std::string text;
  if (s.ok()) s = sp->decode(in<int32_t>(ids), static_cast<std::size_t>(count), text, strip_first);
  if (!s.ok()) return fail(std::move(s));
  return with_result<uint8_t>(slot, text.size(), [&](uint8_t* r) {
    std::memcpy(r, text.data(), text.size());
    return Status::success();
  });
}

// A tokenizer.json SentencePiece-style model (Tokenizer::sentencepiece()).
const SentencePiece* tokenizer_model(double handle, Status& s) {
  Tokenizer* t = nullptr;
  s = g_tokenizers.find(handle, t);
  if (s.ok() && !t->sentencepiece()) s = Status::error(Code::invalid_argument, "handle", "this tokenizer encodes words, not texts");
  return s.ok() ? t->sentencepiece() : nullptr;
}

// Whole texts through a tokenizer: its SentencePiece-style model, or its C++ text steps
// (Tokenizer::encodes_texts).
int tokenizer_encode_texts(uintptr_t slot, double handle, uintptr_t bytes, double length, uintptr_t ends, uintptr_t firsts,
                           double count) {
  Tokenizer* t = nullptr;
  Status s = g_tokenizers.find(handle, t);
  if (s.ok() && !t->sentencepiece() && !t->encodes_texts()) {
    s = Status::error(Code::invalid_argument, "handle", "this tokenizer encodes words, not texts");
  }
  if (!s.ok()) return fail(std::move(s));
  if (const SentencePiece* sp = t->sentencepiece()) return encode_texts(slot, sp, bytes, length, ends, firsts, count);
  return encode_texts(slot, t, bytes, length, ends, firsts, count);
}

int tokenizer_decode_ids(uintptr_t slot, double handle, uintptr_t ids, double count, bool strip_first) {
  Status s;
  const SentencePiece* sp = tokenizer_model(handle, s);
  return sp ? decode_ids(slot, sp, ids, count, strip_first) : fail(std::move(s));
}

// ids -> UTF-8 text (uint8 result), as the library decodes.
int sentencepiece_decode(uintptr_t slot, double handle, uintptr_t ids, double count) {
  SentencePiece* sp = nullptr;
  Status s = g_sentencepieces.find(handle, sp);
  return s.ok() ? decode_ids(slot, sp, ids, count, true) : fail(std::move(s));
}

void sentencepiece_free(double handle) { g_sentencepieces.free(handle); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnkit_loaders) {
  emscripten::function("_safetensorsPrefix", &safetensors_prefix_raw);
  emscripten::function("_safetensorsIndex", &safetensors_index_raw);
  emscripten::function("_safetensorsIndexJson", &last_safetensors_index);
  emscripten::function("_toFloat32", &to_float32_raw);
  emscripten::function("_ggufIndex", &gguf_index_raw);
  emscripten::function("_ggufNeeded", &gguf_needed);
  emscripten::function("_ggufIndexJson", &last_gguf_index);
  emscripten::function("_ggufDequantize", &gguf_dequantize_raw);
  emscripten::function("_modelSpec", &model_spec_raw);
  emscripten::function("_modelSpecJson", &last_model_spec);
  emscripten::function("_tokenizerCreate", &tokenizer_create);
  emscripten::function("_tokenizerSettings", &tokenizer_settings);
  emscripten::function("_tokenizerEncode", &tokenizer_encode);
  emscripten::function("_tokenizerSplit", &tokenizer_split);
  emscripten::function("_tokenizerFree", &tokenizer_free);
  emscripten::function("_sentencepieceCreate", &sentencepiece_create);
  emscripten::function("_sentencepieceInfo", &sentencepiece_info);
  emscripten::function("_sentencepiecePieces", &sentencepiece_pieces);
  emscripten::function("_sentencepieceEncode", &sentencepiece_encode);
  emscripten::function("_sentencepieceDecode", &sentencepiece_decode);
  emscripten::function("_sentencepieceFree", &sentencepiece_free);
  emscripten::function("_tokenizerEncodeTexts", &tokenizer_encode_texts);
  emscripten::function("_tokenizerEncodesTexts", &tokenizer_encodes_texts);
  emscripten::function("_tokenizerDecodeIds", &tokenizer_decode_ids);
  attnkit_raw::bind_common();
}

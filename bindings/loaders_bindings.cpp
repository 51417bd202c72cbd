// The raw embind layer of attnkit-loaders.wasm: the file-format readers, built apart from the
// kernels so that their JSON parser (nlohmann/json) does not weigh on the main module's size and
// start-up. web/safetensors.js loads it on first use.
#include <string>

#include "attnkit/model_config.hpp"
#include "attnkit/safetensors.hpp"
#include "attnkit/tokenizer.hpp"
#include "raw.hpp"

using namespace attnkit;
using namespace attnkit_raw;

namespace {

int safetensors_prefix_raw(uintptr_t, double header_length, double file_size) {
  Status s = check_safetensors_prefix(static_cast<uint64_t>(header_length), static_cast<uint64_t>(file_size));
  return s.ok() ? 0 : fail(std::move(s));
}

std::string g_safetensors_index;  // the last validated header, as JSON for web/safetensors.js

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

std::string g_model_spec;  // the last config.json's spec (model_config.hpp), for web/model.js

int model_spec_raw(uintptr_t, uintptr_t text, double length) {
  Status s = check_integer("config.length", length, 0, 4294967295.0);
  if (s.ok()) s = model_spec_from_config(in<char>(text), static_cast<std::size_t>(length), g_model_spec);
  return s.ok() ? 0 : fail(std::move(s));
}

std::string last_model_spec() { return g_model_spec; }

Registry<Tokenizer> g_tokenizers{"Tokenizer", {}};

// kind 0: tokenizer.json in a; 1: vocab.txt in a (lowercase); 2: encoder.json in a, vocab.bpe in b.
// The handle goes to result slot [0].
int tokenizer_create(uintptr_t slot, int kind, uintptr_t a, double a_length, uintptr_t b, double b_length, bool lowercase) {
  Status s = check_integer("text.length", a_length, 0, 4294967295.0);
  if (s.ok()) s = check_integer("text.length", b_length, 0, 4294967295.0);
  if (s.ok() && (kind < 0 || kind > 2)) s = Status::error(Code::invalid_argument, "kind", "unknown tokenizer file kind");
  if (!s.ok()) return fail(std::move(s));
  std::unique_ptr<Tokenizer> t;
  const auto na = static_cast<std::size_t>(a_length), nb = static_cast<std::size_t>(b_length);
  s = kind == 0   ? Tokenizer::from_tokenizer_json(in<char>(a), na, t)
      : kind == 1 ? Tokenizer::from_vocab_txt(in<char>(a), na, lowercase, t)
                  : Tokenizer::from_gpt2_files(in<char>(a), na, in<char>(b), nb, t);
  if (!s.ok()) return fail(std::move(s));
  return g_tokenizers.adopt(slot, std::move(t));
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

void tokenizer_free(double handle) { g_tokenizers.free(handle); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnkit_loaders) {
  emscripten::function("_safetensorsPrefix", &safetensors_prefix_raw);
  emscripten::function("_safetensorsIndex", &safetensors_index_raw);
  emscripten::function("_safetensorsIndexJson", &last_safetensors_index);
  emscripten::function("_toFloat32", &to_float32_raw);
  emscripten::function("_modelSpec", &model_spec_raw);
  emscripten::function("_modelSpecJson", &last_model_spec);
  emscripten::function("_tokenizerCreate", &tokenizer_create);
  emscripten::function("_tokenizerSettings", &tokenizer_settings);
  emscripten::function("_tokenizerEncode", &tokenizer_encode);
  emscripten::function("_tokenizerFree", &tokenizer_free);
  attnkit_raw::bind_common();
}

// The raw embind layer: `_name` functions on heap offsets that return a status code (0 = ok).
//
// Conventions, shared with web/attnkit.js:
// - Sizes and numeric options arrive as doubles so the C++ core can reject non-integers, NaN and
//   huge values with a message naming the argument (JavaScript numbers are doubles anyway).
// - Outputs are allocated here, after validation, and reported through a result slot: JS passes
//   the offset of two uint32 [data offset, element count], copies the data out and frees it.
// - On failure nothing is allocated; lastError* describe the failure until the next call fails.
#include <emscripten/bind.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "attnkit/positional.hpp"
#include "attnkit/status.hpp"

using namespace attnkit;

namespace {

Status g_last_error;

int fail(Status s) {
  g_last_error = std::move(s);
  return static_cast<int>(g_last_error.code);
}

struct ResultSlot {
  uint32_t data;
  uint32_t count;
};

// Allocates `count` floats for a result; reports out_of_memory instead of aborting.
float* alloc_result(uintptr_t slot, std::size_t count, Status& status) {
  auto* r = reinterpret_cast<ResultSlot*>(slot);
  r->data = 0;
  r->count = static_cast<uint32_t>(count);
  if (count == 0) return nullptr;
  auto* p = static_cast<float*>(std::malloc(count * sizeof(float)));
  if (!p) {
    status = Status::error(Code::out_of_memory, "result",
                           "could not allocate " + std::to_string(count * sizeof(float)) +
                               " bytes in the wasm heap for the result");
  }
  r->data = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
  return p;
}

int sinusoidal(uintptr_t slot, double length, double dim, double base, double offset, int layout) {
  const SinusoidalParams p{length, dim, base, offset, static_cast<SinusoidalLayout>(layout)};
  Status s = check_sinusoidal(p);
  if (!s.ok()) return fail(std::move(s));
  float* out = alloc_result(slot, sinusoidal_size(p), s);
  if (!s.ok()) return fail(std::move(s));
  s = sinusoidal_positional_encoding(out, p);
  if (!s.ok()) {
    std::free(out);
    return fail(std::move(s));
  }
  return 0;
}

std::string last_error_message() { return g_last_error.message; }
std::string last_error_argument() { return g_last_error.argument; }
std::string code_name_of(int code) { return code_name(static_cast<Code>(code)); }

// Bytes currently handed out by malloc: the leak checks in the tests watch this.
double malloc_in_use() { return static_cast<double>(mallinfo().uordblks); }

bool has_simd() {
#if ATTNKIT_HAVE_SIMD
  return true;
#else
  return false;
#endif
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnkit) {
  emscripten::function("_sinusoidal", &sinusoidal);
  emscripten::function("_lastErrorMessage", &last_error_message);
  emscripten::function("_lastErrorArgument", &last_error_argument);
  emscripten::function("_codeName", &code_name_of);
  emscripten::function("_mallocInUse", &malloc_in_use);
  emscripten::function("_hasSimd", &has_simd);
}

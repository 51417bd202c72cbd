// Shared by the raw embind layers (attnkit_bindings.cpp, loaders_bindings.cpp): the last error,
// result slots, and the functions every module exports (error text, code names, malloc use).
//
// Conventions, shared with web/src/runtime/heap.js:
// - Sizes and numeric options arrive as doubles so the C++ core can reject non-integers, NaN and
//   huge values with a message naming the argument (JavaScript numbers are doubles anyway).
// - Outputs are allocated here, after validation, and reported through a result slot: JS passes
//   the offset of [data offset, element count] pairs, copies the data out and frees it.
// - On failure nothing is allocated; lastError* describe the failure until the next call fails.
#pragma once

#include <emscripten/bind.h>
#include <malloc.h>

#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/status.hpp"

namespace attnkit_raw {

using namespace attnkit;

inline Status g_last_error;

// The last error's strings are assigned, not moved in: their capacity only grows, so a repeated
// failure leaves the heap exactly as it was (the leak checks compare malloc's bytes in use, and a
// message's length varies with, for example, the heap room it reports).
inline int fail(Status s) {
  g_last_error.code = s.code;
  g_last_error.argument.assign(s.argument);
  g_last_error.message.assign(s.message);
  return static_cast<int>(g_last_error.code);
}

// JS allocates 40 bytes: [data, count] of the result and, for attention, [data, count] of the
// weights after it (a Model's forward uses all five pairs).
struct ResultSlot {
  uint32_t data;
  uint32_t count;
};

// Allocates `count` elements (float, int32 or uint8) for a result; reports out_of_memory
// instead of aborting.
template <class T = float>
T* alloc_result(uintptr_t slot, std::size_t count, Status& status) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 1, "results are float32, int32 or uint8");
  auto* r = reinterpret_cast<ResultSlot*>(slot);
  r->data = 0;
  r->count = static_cast<uint32_t>(count);
  if (count == 0) return nullptr;
  auto* p = static_cast<T*>(std::malloc(count * sizeof(T)));
  if (!p) {
    status = Status::error(Code::out_of_memory, "result",
                           "could not allocate " + std::to_string(count * sizeof(T)) +
                               " bytes in the wasm heap for the result");
  }
  r->data = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
  return p;
}

// Runs `op(out)` on a freshly allocated result of `count` elements; frees it again on failure.
template <class T = float, class Op>
int with_result(uintptr_t slot, std::size_t count, Op op) {
  Status s;
  T* out = alloc_result<T>(slot, count, s);
  if (!s.ok()) return fail(std::move(s));
  s = op(out);
  if (!s.ok()) {
    std::free(out);
    reinterpret_cast<ResultSlot*>(slot)->data = 0;
    return fail(std::move(s));
  }
  return 0;
}

// Runs `op(out, weights)` on a fresh output (slot[0..1]) and, when `want_weights`, fresh
// attention weights (slot[2..3]); frees both on failure.
template <class Op>
int with_output_and_weights(uintptr_t slot, std::size_t n_out, bool want_weights, std::size_t n_weights, Op op) {
  auto* weights_slot = reinterpret_cast<ResultSlot*>(slot) + 1;
  *weights_slot = {0, 0};
  return with_result(slot, n_out, [&](float* out) {
    float* weights = nullptr;
    if (want_weights) {
      Status ws;
      weights = alloc_result(reinterpret_cast<uintptr_t>(weights_slot), n_weights, ws);
      if (!ws.ok()) return ws;
    }
    Status r = op(out, weights);
    if (!r.ok() && weights) {
      std::free(weights);
      *weights_slot = {0, 0};
    }
    return r;
  });
}

// Modules (Embeddings, MultiHeadAttention) live in C++; JavaScript holds a handle (a number):
// 1 + an index into a registry. A stale or made-up handle is an error, not a wild pointer. Freed
// slots are reused.
template <class T>
struct Registry {
  const char* kind;
  std::vector<std::unique_ptr<T>> items;

  Status find(double handle, T*& out) const {
    const bool valid = handle >= 1 && handle <= static_cast<double>(items.size()) && handle == std::floor(handle);
    if (!valid || !items[static_cast<std::size_t>(handle) - 1]) {
      return Status::error(Code::invalid_argument, "handle",
                           std::string("no live ") + kind + " module has handle " + show_number(handle) +
                               " (was it disposed?)");
    }
    out = items[static_cast<std::size_t>(handle) - 1].get();
    return Status::success();
  }
  // Creates a module with T::create(config) and reports its handle in result slot [0].
  template <class Config>
  int create(uintptr_t slot, const Config& config) {
    std::unique_ptr<T> m;
    Status s = T::create(config, m);
    if (!s.ok()) return fail(std::move(s));
    return adopt(slot, std::move(m));
  }
  // Takes ownership of a created object and reports its handle in result slot [0].
  int adopt(uintptr_t slot, std::unique_ptr<T> m) {
    std::size_t i = 0;
    while (i < items.size() && items[i]) ++i;
    if (i == items.size()) items.emplace_back();
    items[i] = std::move(m);
    *reinterpret_cast<ResultSlot*>(slot) = {static_cast<uint32_t>(i + 1), 0};
    return 0;
  }
  void free(double handle) {
    T* m = nullptr;
    if (find(handle, m).ok()) items[static_cast<std::size_t>(handle) - 1].reset();
  }
};

template <class T>
const T* in(uintptr_t p) { return reinterpret_cast<const T*>(p); }

inline std::string last_error_message() { return g_last_error.message; }
inline std::string last_error_argument() { return g_last_error.argument; }
inline std::string code_name_of(int code) { return code_name(static_cast<Code>(code)); }

// Bytes currently handed out by malloc: the leak checks in the tests watch this.
inline double malloc_in_use() { return static_cast<double>(mallinfo().uordblks); }

// Refuses (out_of_memory) a plan that needs more than the heap can still give: JS asks before it
// creates a whole model's modules, so a 4 GB checkpoint fails at once with the sizes named.
inline int heap_check(uintptr_t, double bytes) {
  Status s = check_heap("weights", bytes);
  return s.ok() ? 0 : fail(std::move(s));
}

inline void bind_common() {
  emscripten::function("_heapCheck", &heap_check);
  emscripten::function("_heapMax", &heap_max_bytes);
  emscripten::function("_lastErrorMessage", &last_error_message);
  emscripten::function("_lastErrorArgument", &last_error_argument);
  emscripten::function("_codeName", &code_name_of);
  emscripten::function("_mallocInUse", &malloc_in_use);
}

}  // namespace attnkit_raw

// Scratch vectors reused between calls (static thread_local: the hot per-word calls would
// otherwise allocate each time) keep their room only up to a bound: one very large text must not
// hold its size in the module for the rest of its life.
#pragma once

#include <cstddef>

namespace attnkit {

// Room kept after a call: 64 Ki elements.
constexpr std::size_t kScratchKeep = std::size_t{1} << 16;

// Declared right after the vector is cleared for a call: when the call returns (by any path) a
// vector grown past kScratchKeep elements gives its memory back.
template <class Vector>
struct TrimAfterCall {
  Vector& v;
  explicit TrimAfterCall(Vector& vector) : v(vector) {}
  TrimAfterCall(const TrimAfterCall&) = delete;
  TrimAfterCall& operator=(const TrimAfterCall&) = delete;
  ~TrimAfterCall() {
    if (v.capacity() > kScratchKeep) Vector().swap(v);
  }
};

}  // namespace attnkit

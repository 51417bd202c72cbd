#include "attnkit/core/status.hpp"

#include <cmath>
#include <cstdio>

#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#include <malloc.h>
#endif

namespace attnkit {

const char* code_name(Code code) {
  switch (code) {
    case Code::ok: return "OK";
    case Code::invalid_argument: return "ERR_INVALID_ARGUMENT";
    case Code::out_of_range: return "ERR_OUT_OF_RANGE";
    case Code::shape_mismatch: return "ERR_SHAPE_MISMATCH";
    case Code::out_of_memory: return "ERR_OUT_OF_MEMORY";
  }
  return "ERR_UNKNOWN";
}

// Prints integers without a decimal point and everything else with enough digits to be exact.
// (snprintf, not iostreams: <sstream> alone adds ~100 KB of locale code to the .wasm.)
std::string show_number(double v) {
  char buf[40];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", v);
  }
  return buf;
}

Status check_integer(const char* what, double value, double lo, double hi) {
  if (!std::isfinite(value) || value != std::floor(value)) {
    return Status::error(Code::invalid_argument, what,
                         std::string(what) + " must be an integer, got " + show_number(value));
  }
  if (value < lo || value > hi) {
    return Status::error(Code::out_of_range, what,
                         std::string(what) + " must be in [" + show_number(lo) + ", " + show_number(hi) +
                             "], got " + show_number(value));
  }
  return Status::success();
}

Status check_positive_finite(const char* what, double value, double hi) {
  if (!std::isfinite(value) || value <= 0 || value > hi) {
    return Status::error(Code::out_of_range, what,
                         std::string(what) + " must be a finite number in (0, " + show_number(hi) +
                             "], got " + show_number(value));
  }
  return Status::success();
}

Status check_output_size(const char* what, double elements) {
  if (elements > kMaxOutputElements) {
    return Status::error(Code::out_of_range, what,
                         std::string(what) + " asks for " + show_number(elements) +
                             " output elements; at most " + show_number(kMaxOutputElements) +
                             " (1 GiB of float32) fit one result");
  }
  return Status::success();
}

Status check_length(const char* what, double actual, double expected, const char* expected_text) {
  if (actual != expected) {
    return Status::error(Code::shape_mismatch, what,
                         std::string(what) + " has " + show_number(actual) + " elements, expected " +
                             expected_text + " = " + show_number(expected));
  }
  return Status::success();
}

double heap_max_bytes() {
#ifdef __EMSCRIPTEN__
  return static_cast<double>(emscripten_get_heap_max());
#else
  return 0;
#endif
}

Status check_heap(const char* what, double bytes) {
#ifdef __EMSCRIPTEN__
  // Memory not yet grown into is free for certain: no need to ask malloc (mallinfo walks every
  // chunk of the heap, which costs more than a tokenizer's whole encode of a sentence).
  if (bytes <= heap_max_bytes() - static_cast<double>(emscripten_get_heap_size())) return Status::success();
  const double left = heap_max_bytes() - static_cast<double>(mallinfo().uordblks);
#else
  const double left = 70368744177664.0;  // 2^46
#endif
  if (!(bytes <= left)) {
    return Status::error(Code::out_of_memory, what,
                         std::string(what) + " needs " + show_number(bytes) + " bytes but the heap has " +
                             show_number(left) + " left (ceiling " + show_number(heap_max_bytes()) + " bytes)");
  }
  return Status::success();
}

}  // namespace attnkit

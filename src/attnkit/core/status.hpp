// Status: how every validated entry point of attnkit reports failure.
//
// The C++ core validates all arguments before a kernel runs; kernels assume valid input and never
// fail. A failed call returns a Status naming the offending argument (with the JavaScript spelling,
// since that is what most users see), the expected and the actual value. The bindings turn it into
// an AttnkitError with the same `code`.
#pragma once

#include <cstdint>
#include <string>

namespace attnkit {

enum class Code : int {
  ok = 0,
  invalid_argument = 1,  // wrong type or value: non-integer size, unknown option, NaN
  out_of_range = 2,      // a value outside its allowed range: id >= vocab, length too large
  shape_mismatch = 3,    // buffer lengths or dims that do not agree
  out_of_memory = 4,     // the output could not be allocated
};

// Stable string spelling of a code ("ERR_INVALID_ARGUMENT", ...), the same in C++ and JavaScript.
const char* code_name(Code code);

struct Status {
  Code code = Code::ok;
  std::string argument;  // the argument at fault ("dim", "inputIds[3]"), empty when ok
  std::string message;   // a full sentence: what was expected and what was given

  bool ok() const { return code == Code::ok; }
  static Status success() { return {}; }
  static Status error(Code code, std::string argument, std::string message) {
    return {code, std::move(argument), std::move(message)};
  }
};

// Checks that `value` is an integer in [lo, hi]; `what` is the argument's name in messages.
// Sizes travel from JavaScript as doubles, so non-integers and NaN are caught here, not in JS.
Status check_integer(const char* what, double value, double lo, double hi);

// Checks that `value` is finite and in the open/closed range (lo, hi].
Status check_positive_finite(const char* what, double value, double hi);

// The largest number of float32 elements one output may have: 2^28 (1 GiB). Larger requests are
// refused with out_of_range before any allocation, instead of failing deep inside the heap.
constexpr double kMaxOutputElements = 268435456.0;

Status check_output_size(const char* what, double elements);

// Checks a buffer's element count: "what has N elements, expected <expected_text> = M".
Status check_length(const char* what, double actual, double expected, const char* expected_text);

// Checks that `bytes` more bytes can still be allocated: in wasm, against the heap's ceiling
// (emscripten_get_heap_max) less what malloc hands out now; natively every request up to 2^46
// passes. Callers compute what an operation will allocate and ask first, because a failed
// allocation inside the standard library aborts the wasm instance instead of returning null.
// The error (out_of_memory) names `what`, the bytes asked and the bytes left.
Status check_heap(const char* what, double bytes);

// The wasm heap's ceiling in bytes (0 natively: no fixed ceiling).
double heap_max_bytes();

// A number as messages print it: integers without a decimal point, others exactly (%.17g).
std::string show_number(double v);

}  // namespace attnkit

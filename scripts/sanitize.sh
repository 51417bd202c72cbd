#!/usr/bin/env bash
# The native test suite built with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (build/fuzz, shared with the fuzzers), run by ctest, and the worker pool under ThreadSanitizer.
# Any sanitizer report fails its test.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
[ -f build/fuzz/CMakeCache.txt ] || CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTNKIT_FUZZ=ON >/dev/null
cmake --build build/fuzz -j"$jobs" --target attnkit_tests 2>&1 | { grep -E 'error|warning' || true; }
test "${PIPESTATUS[0]}" -eq 0
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build/fuzz --output-on-failure -j2
# The worker pool under ThreadSanitizer (a data race fails the run).
mkdir -p build/tsan
clang++ -std=c++17 -O1 -g -fsanitize=thread -DATTNKIT_THREADS=1 -Isrc tests/tsan/pool.cpp src/core/parallel.cpp src/core/status.cpp \
  -o build/tsan/pool
TSAN_OPTIONS=halt_on_error=1 build/tsan/pool

#!/usr/bin/env bash
# Builds the native library + tests (build/native) and the wasm modules (build/wasm -> web/dist):
# attnkit-simd, attnkit-scalar and attnkit-loaders, and the wrapper bundled into web/dist/attnkit.mjs.
# Incremental: a second run with nothing changed takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's emscripten 3.1.6 needs its own acorn on Node's path.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
# `npm run` puts node_modules/.bin first on PATH, and with it npm's binaryen, which em++ 3.1.6 then
# takes for its other links: the loaders' and scalar builds' imports got minified without their
# glue following (a LinkError at load). npm's binaryen is for the SIMD builds' links only, through
# build/wasm/relaxed/with-binaryen (CMakeLists.txt).
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '/node_modules/\.bin$' | paste -sd: -)
export PATH
jobs=$(nproc 2>/dev/null || echo 2)

# Builds a CMake tree printing only its errors and warnings; a failed compile fails the script (the
# old binaries must not be tested as if they were new).
build() {
  local status=0
  cmake --build "$1" -j"$jobs" > "$1/build.log" 2>&1 || status=$?
  grep -E 'error|warning' "$1/build.log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 30 "$1/build.log" >&2
    echo "build: cmake --build $1 failed (exit $status); the whole log is $1/build.log" >&2
    exit "$status"
  fi
}

what=${1:-all}
if [ "$what" = all ] || [ "$what" = native ]; then
  [ -f build/native/CMakeCache.txt ] || cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  build build/native
  test -x build/native/attnkit_tests
fi
if [ "$what" = all ] || [ "$what" = wasm ]; then
  [ -f build/wasm/CMakeCache.txt ] || emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
  # clang++-19 installed since the tree was configured: configure again to add the relaxed-SIMD builds.
  if [ -x /usr/bin/clang++-19 ] && grep -q '^ATTNKIT_RELAXED_CXX:FILEPATH=.*NOTFOUND' build/wasm/CMakeCache.txt; then
    cmake build/wasm >/dev/null
  fi
  build build/wasm
  test -f web/dist/attnkit-simd.wasm && test -f web/dist/attnkit-scalar.wasm && test -f web/dist/attnkit-loaders.wasm
  if [ ! -f web/dist/attnkit-simd-relaxed.wasm ]; then
    echo "build: skipped attnkit-simd-relaxed and attnkit-simd-relaxed-threads (no clang++-19 or node_modules/binaryen;" \
      "scripts/setup.sh installs both): load() runs the SIMD128 build, the relaxed tests are skipped"
  fi
  # The package's entry point: the wrapper's modules in one file (scripts/bundle.mjs).
  node scripts/bundle.mjs
fi

#!/usr/bin/env bash
# `npm test`: set-up, build, then native gtest (ctest), the same suite under ASan + UBSan, a short
# run of each libFuzzer harness from its seeds, the wasm builds in Node, and the real-browser test
# (headless Chromium through playwright-core).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup-bundlers.sh
bash scripts/build.sh
echo "== native (ctest)"
ctest --test-dir build/native --output-on-failure -j2
echo "== native with ASan + UBSan (ctest), and each fuzzer for a short run"
bash scripts/sanitize.sh
FUZZ_JS=0 bash scripts/fuzz.sh "${FUZZ_SECONDS:-10}"  # the JavaScript fuzzer runs below, as tests/node/js_fuzz.test.mjs
echo "== wasm in Node and in Chromium (node --test)"
node --test --test-concurrency=1 tests/node/ tests/browser/
if [ -f web/dist/attnkit-simd-relaxed.wasm ]; then
  # Node 20 runs relaxed SIMD behind a flag, and right only on its optimising tier (docs/relaxed-simd.md).
  echo "== the relaxed-SIMD builds in Node (--experimental-wasm-relaxed-simd --no-liftoff): the golden, special-value and threads tests"
  ATTNKIT_BACKENDS=relaxed node --experimental-wasm-relaxed-simd --no-liftoff --test --test-concurrency=1 \
    tests/node/ops/ tests/node/nn/ tests/node/models/ tests/node/hostile.test.mjs tests/node/runtime/threads.test.mjs
else
  echo "== skipped: the relaxed-SIMD builds' pass (not built: scripts/build.sh needs clang++-19)"
fi

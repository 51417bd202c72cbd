#!/usr/bin/env bash
# `npm test`: set-up, build, then native gtest (ctest), the wasm builds in Node, and the
# real-browser test (headless Chromium through playwright-core).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
echo "== native (ctest)"
ctest --test-dir build/native --output-on-failure -j2
echo "== wasm in Node and in Chromium (node --test)"
node --test --test-concurrency=1 tests/node/ tests/browser/

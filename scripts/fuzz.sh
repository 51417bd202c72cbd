#!/usr/bin/env bash
# `npm run fuzz [-- SECONDS [TARGET...]]` (targets: the C++ harnesses' names, and js): builds the
# libFuzzer harnesses of tests/fuzz with clang,
# ASan and UBSan (build/fuzz), then runs each target for SECONDS (default 180; FUZZ_SECONDS too)
# from its committed seeds (tests/fuzz/seeds/TARGET). New inputs go to build/fuzz/corpus/TARGET;
# a crash is written to build/fuzz/crash-* and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
seconds=${1:-${FUZZ_SECONDS:-180}}
shift || true
explicit=("$@")
targets=()
for t in "${explicit[@]}"; do [ "$t" = js ] || targets+=("$t"); done
[ ${#explicit[@]} -gt 0 ] || targets=(safetensors tokenizer sentencepiece config attention regex gguf)
jobs=$(nproc 2>/dev/null || echo 2)
# build/fuzz is shared with the sanitizer suite (scripts/sanitize.sh): one clang build, two uses.
[ -f build/fuzz/CMakeCache.txt ] || CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTNKIT_FUZZ=ON >/dev/null
[ ${#targets[@]} -eq 0 ] || cmake --build build/fuzz -j"$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")
for t in "${targets[@]}"; do
  mkdir -p "build/fuzz/corpus/$t"
  echo "== fuzz_$t for ${seconds}s"
  # -rss_limit_mb: a parser must stay within a small multiple of its input (inputs are <= 320 KB).
  status=0
  "build/fuzz/fuzz_$t" "build/fuzz/corpus/$t" "tests/fuzz/seeds/$t" -max_total_time="$seconds" \
    -max_len=327680 -rss_limit_mb=2048 -timeout=10 -artifact_prefix=build/fuzz/ -print_final_stats=1 \
    > "build/fuzz/$t.log" 2>&1 || status=$?
  grep -E '^(Done [0-9]+ runs|==[0-9]+==ERROR|SUMMARY|Test unit written)' "build/fuzz/$t.log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 40 "build/fuzz/$t.log"
    echo "fuzz_$t failed (exit $status); the input is in build/fuzz/" >&2
    exit 1
  fi
done
# The JavaScript side (tokenizer steps, added tokens, padding, loaders through the public API),
# which the C++ harnesses cannot reach; a finding's inputs go to build/fuzz/js-finding-*.json.
# (npm test runs it as a node test instead: FUZZ_JS=0 here.)
if { [ ${#explicit[@]} -eq 0 ] && [ "${FUZZ_JS:-1}" != 0 ]; } || [[ " ${explicit[*]} " == *" js "* ]]; then
  echo "== fuzz_js for ${seconds}s"
  node tests/fuzz/fuzz_js.mjs "$seconds" "${FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}"
fi

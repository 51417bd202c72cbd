#!/usr/bin/env bash
# Installs what attnkit's build and tests need, and nothing when all of it is present.
# Debian packages through apt-get (as root), npm packages from the committed lockfile.
# On a machine without apt or root it prints what to install and fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# command or file that proves a package is present -> Debian package name
declare -A NEED=(
  [/usr/bin/em++]=emscripten
  [/usr/bin/wasm-dis]=binaryen
  [/usr/include/xsimd/xsimd.hpp]=libxsimd-dev
  [/usr/include/nlohmann/json.hpp]=nlohmann-json3-dev
  [/usr/include/gtest/gtest.h]=libgtest-dev
  [/usr/bin/cmake]=cmake
  [/usr/bin/g++]=g++
  [/usr/bin/clang++]=clang
  [/usr/bin/chromium]=chromium
  [/usr/bin/brotli]=brotli
)
# Optional groups, for the scripts run by hand or by `npm run bench`:
#   --bench     bench/export_gpt2.py exports the generation benchmark's model with PyTorch;
#   --goldens   tests/golden/*.py write the fixtures with PyTorch and Google's SentencePiece;
#   --training  scripts/train_tutorial_model.py (PyTorch, the Bible's text, and OpenBLAS: with
#               Debian's reference BLAS a training step takes ten times as long).
TORCH=/usr/lib/python3/dist-packages/torch/__init__.py
for arg in "$@"; do
  case "$arg" in
    --bench) NEED[$TORCH]=python3-torch ;;
    --goldens)
      NEED[$TORCH]=python3-torch
      NEED[/usr/lib/python3/dist-packages/sentencepiece/__init__.py]=python3-sentencepiece
      NEED[/usr/lib/python3/dist-packages/google/protobuf/__init__.py]=python3-protobuf
      NEED[/usr/bin/bible]=bible-kjv
      NEED[/usr/share/games/fortunes/fortunes]=fortunes ;;
    --training)
      NEED[$TORCH]=python3-torch
      NEED[/usr/bin/bible]=bible-kjv
      NEED['/usr/lib/*/openblas-pthread/libopenblas.so.0']=libopenblas0-pthread ;;
    *) echo "setup: unknown option $arg (known: --bench, --goldens, --training)" >&2; exit 2 ;;
  esac
done

missing=()
# (compgen -G: a path may hold a wildcard, the multiarch directory.)
for f in "${!NEED[@]}"; do compgen -G "$f" >/dev/null || missing+=("${NEED[$f]}"); done
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: install them (sudo apt-get install ${missing[*]}) or their equivalents and re-run." >&2
    exit 1
  fi
fi

# clang-19 compiles the relaxed-SIMD builds' kernels (docs/relaxed-simd.md): installed where apt
# has it; without it the other builds are made and tested, and scripts/build.sh says what it skipped.
if [ ! -x /usr/bin/clang++-19 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing clang-19 (the relaxed-SIMD builds)"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends clang-19; } >/dev/null ||
      echo "setup: could not install clang-19: the relaxed-SIMD builds will be skipped" >&2
  else
    echo "setup: clang-19 is missing (sudo apt-get install clang-19): the relaxed-SIMD builds will be skipped" >&2
  fi
fi

# npm packages: reinstall only when the lockfile changed since the last install.
stamp=node_modules/.attnkit-lock.sha
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: npm ci"
  # --ignore-scripts: onnxruntime-node (under @huggingface/transformers, the tokenizer peer) would
  # download binaries in its install script; nothing attnkit uses needs an install script.
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

#!/usr/bin/env bash
# Installs the consumer projects of tests/bundlers/ (Vite 8, webpack, Rollup, Parcel, Next.js) from
# their lockfiles, each only when its lockfile changed since its last install. `npm test` runs it;
# the tutorial and the build do not need them.
set -euo pipefail
cd "$(dirname "$0")/../tests/bundlers"
for lock in */package-lock.json; do
  dir=$(dirname "$lock")
  stamp=$dir/node_modules/.attnkit-lock.sha
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: npm ci in tests/bundlers/$dir"
    # No install scripts: the bundlers' native parts come as prebuilt optional packages.
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
done

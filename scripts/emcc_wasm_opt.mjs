#!/usr/bin/env node
// `wasm-opt` for em++ 3.1.6 when it links the relaxed-SIMD builds (CMakeLists.txt puts this first on
// its PATH): npm's binaryen (package.json), which reads relaxed-SIMD opcodes, where Debian's binaryen
// 108 cannot. Same arguments; one difference in output: newer binaryen prints the import/export
// renaming of --minify-imports-and-exports[-and-modules] as JSON, and em++ 3.1.6 reads
// `old => new` lines (tools/building.py), so the JSON is rewritten into those lines. That pass is
// em++'s last; it also drops the target_features section, which binaryen 108 left out and 132 keeps.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const wasmOpt = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../node_modules/binaryen/bin/wasm-opt');
const args = process.argv.slice(2);
const minify = args.some((a) => a.startsWith('--minify-imports'));
if (minify) args.push('--strip-target-features');
const r = spawnSync(process.execPath, [wasmOpt, ...args], { stdio: ['inherit', minify ? 'pipe' : 'inherit', 'inherit'], maxBuffer: 1 << 28 });
if (r.error) throw r.error;
if (minify && r.status === 0) {
  const out = r.stdout.toString();
  const start = out.indexOf('{');
  if (start < 0) {
    process.stdout.write(out); // already `old => new` lines
  } else {
    const map = JSON.parse(out.slice(start));
    const lines = [...(map.imports ?? []).map(([, base, to]) => `${base} => ${to}`), ...(map.exports ?? []).map(([from, to]) => `${from} => ${to}`)];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
process.exit(r.status ?? 1);

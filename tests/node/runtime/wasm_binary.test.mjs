// What is inside the .wasm files: SIMD128 instructions in the SIMD build, none in the others.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../helpers.mjs';

const wasm = (name) => path.join(ROOT, 'web/dist', `attnkit-${name}.wasm`);
const SIMD_OP = /\b(v128|f32x4|f64x2|i8x16|i16x8|i32x4|i64x2)\.[a-z_0-9]+/g;

function simdOps(file) {
  const text = execFileSync('wasm-dis', [file], { maxBuffer: 256 << 20 }).toString();
  const counts = {};
  for (const m of text.matchAll(SIMD_OP)) counts[m[0]] = (counts[m[0]] ?? 0) + 1;
  return counts;
}

// binaryen validates the module with every feature Emscripten 3.1.6 may use except SIMD.
function validatesWithoutSimd(file) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-')), 'x.wasm');
  try {
    execFileSync('wasm-opt', ['--mvp-features', '--enable-sign-ext', '--enable-mutable-globals',
      '--enable-bulk-memory', '--enable-nontrapping-float-to-int', file, '-o', out], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

test('the SIMD build contains SIMD128 arithmetic', () => {
  const ops = simdOps(wasm('simd'));
  const total = Object.values(ops).reduce((a, b) => a + b, 0);
  assert.ok(total > 50, `only ${total} SIMD128 instructions: ${JSON.stringify(ops)}`);
  assert.ok(ops['f32x4.mul'] > 0 && ops['f32x4.add'] > 0, JSON.stringify(ops));
  assert.equal(validatesWithoutSimd(wasm('simd')), false);
});

// Debian's binaryen 108 cannot read relaxed-SIMD opcodes: npm's binaryen (package.json) disassembles them.
const RELAXED_OP = /\b(f32x4|i32x4|i16x8|i8x16|f64x2)\.relaxed_[a-z_0-9]+/g;
function relaxedOps(file) {
  const text = execFileSync(process.execPath, [path.join(ROOT, 'node_modules/binaryen/bin/wasm-dis'), file], { maxBuffer: 256 << 20 }).toString();
  const counts = {};
  for (const m of text.matchAll(RELAXED_OP)) counts[m[0]] = (counts[m[0]] ?? 0) + 1;
  return counts;
}

test('the relaxed-SIMD builds fuse their multiply-adds (f32x4.relaxed_madd); the SIMD128 build has no relaxed opcode', {
  skip: !fs.existsSync(wasm('simd-relaxed')) && 'the relaxed-SIMD builds were not built (no clang++-19)',
}, () => {
  for (const name of ['simd-relaxed', 'simd-relaxed-threads']) {
    const ops = relaxedOps(wasm(name));
    assert.ok(ops['f32x4.relaxed_madd'] >= 30, `${name}: ${JSON.stringify(ops)}`);
    assert.deepEqual(Object.keys(ops), ['f32x4.relaxed_madd'], `${name}: only the multiply-add is reachable yet`);
  }
  assert.deepEqual(relaxedOps(wasm('simd')), {});
});

test('the scalar build contains no SIMD128 instruction', () => {
  assert.deepEqual(simdOps(wasm('scalar')), {});
  assert.equal(validatesWithoutSimd(wasm('scalar')), true);
});

test('the loaders module (file formats) contains no SIMD128 instruction', () => {
  assert.deepEqual(simdOps(wasm('loaders')), {});
});

// The kernels' modules load at start-up: 200 KB each, and since the model core (issue 35: one C++
// object runs a whole forward pass and owns the KV cache; 201.5 -> 221.3 KB for the SIMD build)
// 224 KB for the SIMD build. The loaders module is fetched on the first
// file read only and carries every tokenizer (SentencePiece's model and pipeline since issue 19,
// compiled -O3 for speed, and the Unicode tables of the text steps; 184 KB before): 430 KB, and
// since the Split regex engine and the Unicode general categories and scripts it needs (419 -> 493
// KB; 173 -> 206 KB gzipped) 500 KB, and since issue 33's parser checks (WordPiece's hashed search,
// the Sequence cap, safetensors' contiguity and repeated keys, rope_scaling by key: 498.2 -> 502.9
// KB) 504 KB. Issue 35's family registry (one reader and tensor table per family, task heads:
// about 55 KB) and issue 36's GGUF reader and dequantisers (25.6 KB) took it to 596 KB (242 KB
// gzipped): 600 KB until the tokenizers move to a module of their own (the next step: a page that
// only tokenizes, or only reads weights, then fetches half of it).
// The relaxed-SIMD build (issue 37) is the SIMD build's objects with its kernels compiled by
// clang-19: 220.8 KB against the SIMD build's 221.1 KB when it was added. Both SIMD builds: 232 KB
// since the families' blocks (soft-capping, q/k norms, parallel residual, windows, task heads:
// 221.3 -> 229.2 KB).
test('each .wasm stays within its size budget', () => {
  for (const [name, kb] of [['simd', 232], ['scalar', 200], ['loaders', 600], ['simd-relaxed', 232]]) {
    if (name === 'simd-relaxed' && !fs.existsSync(wasm(name))) continue; // not built (no clang++-19)
    const size = fs.statSync(wasm(name)).size;
    assert.ok(size <= kb * 1024, `attnkit-${name}.wasm is ${size} bytes, over ${kb} KB`);
  }
});

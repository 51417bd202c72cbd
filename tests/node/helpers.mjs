// Shared by the Node tests: fixtures, both backends, comparisons.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { env, load } from '../../web/attnkit.js';
import { relaxedUnavailable } from '../../web/src/runtime/relaxed.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// No test reaches the network: a string that is a Hub id ('x', 'org/name') resolves to a port
// fetch refuses, with remote models and the download cache off, unless a test points ak.env at
// the local stand-in for the Hub (tests/node/hub_server.mjs: useHub).
env.remoteHost = 'http://127.0.0.1:9/';
env.allowRemoteModels = false;
env.useCache = false;

export function fixture(name) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures', name), 'utf8'));
}

/**
 * The builds, forced: every behaviour test runs on each (threaded with this machine's cores). The
 * relaxed-SIMD pass of scripts/test.sh (ATTNKIT_BACKENDS=relaxed, Node run with
 * --experimental-wasm-relaxed-simd --no-liftoff) runs the same tests on the two relaxed builds
 * instead, first the threaded one (tests that take [simd, scalar] get both); elsewhere the relaxed
 * builds are added when the engine runs them (web/src/runtime/relaxed.js) and they were built.
 */
export async function backends() {
  if (process.env.ATTNKIT_BACKENDS === 'relaxed') return relaxedBackends();
  const builds = [await load({ simd: true }), await load({ simd: true, threads: 1 }), await load({ simd: false })];
  return relaxedUnavailable() === null && relaxedBuilt() ? [...builds, ...await relaxedBackends()] : builds;
}

async function relaxedBackends() {
  return [await load({ simd: 'relaxed' }), await load({ simd: 'relaxed', threads: 1 })];
}

/** Whether scripts/build.sh made the relaxed-SIMD builds (it needs clang++-19). */
export function relaxedBuilt() {
  return fs.existsSync(path.join(ROOT, 'web/dist/attnkit-simd-relaxed.wasm'));
}

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} != ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d; // NaN wins
  }
  return m;
}

/** |got - want| <= atol + rtol |want| elementwise (NaN fails), naming the first bad index. */
export function assertClose(got, want, what, atol = 2e-5, rtol = 1e-4) {
  if (got.length !== want.length) throw new Error(`${what}: length ${got.length}, PyTorch ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= atol + rtol * Math.abs(want[i]))) {
      throw new Error(`${what}: [${i}] = ${got[i]}, PyTorch ${want[i]}`);
    }
  }
}

export const AWKWARD = [1, 3, 4, 5, 7, 17, 63, 65, 771];

// Characters by kind: ASCII letters, digits, punctuation and symbols; whitespace of every kind;
// controls and format characters; Latin-1 and accented letters, precomposed and combining; Greek
// capitals (final sigma), Turkish İ, ligatures, full-width forms, CJK, Hangul, Thai, Arabic,
// Devanagari, emoji with ZWJ and variation selectors, astral letters and digits, U+FFFD;
// currency and math symbols, kana.
export const TEXT_POOLS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  ' \t\n\r\v\f\u00a0\u1680\u2000\u2003\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u0085',
  '\u0000\u0001\u0007\u001b\u007f\u0080\u009f\u00ad\u200b\u200c\u200d\u200e\u2060\ufffd',
  'àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćŁłŒœŠšŸŽžǅǈǋ', '\u0301\u0300\u0308\u0327\u0323\u20dd\u0903\u093f\u0e31\u0e34',
  'ΑΒΓΔΣσςΩΌΐΰ', 'İıŞşĞğ', 'ﬁﬂﬀﬃ', 'ＡＢＣａｂｃ１２３！？', '東京日本語中文北京鬱龘', '한국어서울',
  'สวัสดีครับ', 'مرحبابالعالم', 'नमस्ते', '😀🎉👨‍👩‍👧❤️👍🏽🇫🇷',
  '\u{1D400}\u{1D7CE}\u{10400}\u{20000}\u{1F600}', "'s't're've'm'll'd", '€$¥£∑±×÷©®™ひらがなカタカナー々〆',
];
export function randomText(rand, n) {
  let s = '';
  for (let i = 0; i < n; i++) {
    const pool = [...TEXT_POOLS[rand(TEXT_POOLS.length)]];
    const run = 1 + rand(6);
    for (let k = 0; k < run; k++) s += pool[rand(pool.length)];
  }
  return s;
}

// A seeded generator of integers in [0, n) (an LCG in 32-bit arithmetic: Math.imul keeps every
// bit, where a float product would round the low ones away).
export function seededRandom(seed) {
  return (n) => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return (seed >>> 8) % n;
  };
}

// Shared by the Node tests: fixtures, both backends, comparisons.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../web/attnkit.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function fixture(name) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/fixtures', name), 'utf8'));
}

/** The three builds, forced: every behaviour test runs on each (threaded with this machine's cores). */
export async function backends() {
  return [await load({ simd: true }), await load({ simd: true, threads: 1 }), await load({ simd: false })];
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

// Timing helpers for `npm run bench`. Warm figures are medians after warm-up calls (V8 tiers wasm
// up between calls); the first, cold call is reported separately where it matters.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const now = () => performance.now();

export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return { n, min: s[0], median: n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, max: s[n - 1] };
}

/** Times fn: first call (cold) alone, then `warm` calls, then up to `reps` timed calls within budgetMs. */
export async function time(fn, { warm = 3, reps = 15, minReps = 5, budgetMs = 4000 } = {}) {
  const t0 = now();
  await fn();
  const cold = now() - t0;
  for (let i = 0; i < warm; i++) await fn();
  const t = [];
  const start = now();
  while (t.length < reps && (t.length < minReps || now() - start < budgetMs)) {
    const a = now();
    await fn();
    t.push(now() - a);
  }
  return { cold, ...stats(t) };
}

/** Runs implementations round by round (each round times each once), so ratios are fair. */
export async function interleaved(impls, { warm = 3, rounds = 15, budgetMs = 8000 } = {}) {
  const res = {};
  for (const [name, fn] of Object.entries(impls)) {
    const t0 = now();
    await fn();
    res[name] = { cold: now() - t0, t: [] };
    for (let i = 0; i < warm; i++) await fn();
  }
  const start = now();
  for (let r = 0; r < rounds && (r < 5 || now() - start < budgetMs); r++) {
    for (const [name, fn] of Object.entries(impls)) {
      const a = now();
      await fn();
      res[name].t.push(now() - a);
    }
  }
  for (const name of Object.keys(res)) res[name] = { cold: res[name].cold, ...stats(res[name].t) };
  return res;
}

/**
 * Like interleaved, but each turn times one implementation `reps` times in a row after `warm`
 * untimed calls, so each is measured in its own steady cache state (a working set other peers
 * evicted between single calls would penalise whoever runs next); turns rotate `blocks` times so
 * slow periods of the machine hit everyone. `before` runs untimed before every timed call;
 * `pauseMs` of idle time precede every turn (a threaded peer's workers spin on after its calls).
 */
export async function blocked(impls, { warm = 3, reps = 10, blocks = 3, before = () => {}, pauseMs = 0 } = {}) {
  const res = {};
  for (const [name, fn] of Object.entries(impls)) {
    const t0 = now();
    await fn();
    res[name] = { cold: now() - t0, t: [] };
  }
  for (let b = 0; b < blocks; b++) {
    for (const [name, fn] of Object.entries(impls)) {
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      for (let i = 0; i < warm; i++) await fn();
      for (let i = 0; i < reps; i++) {
        before(); // untimed, e.g. evicting the caches
        const a = now();
        await fn();
        res[name].t.push(now() - a);
      }
    }
  }
  for (const name of Object.keys(res)) res[name] = { cold: res[name].cold, ...stats(res[name].t) };
  return res;
}

// Reading 64 MiB (twice the L3 of the machines we measure on) evicts what the last call left in
// cache, so the next call starts as a real forward pass does: its table rows in DRAM.
const flushBuffer = new Float64Array(8 * 2 ** 20);
export function evictCaches() {
  let s = 0;
  for (let i = 0; i < flushBuffer.length; i += 8) s += flushBuffer[i]++;
  return s;
}

/** Runs a script in a fresh Node process `n` times; each prints one JSON line. */
export function fresh(script, args, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const txt = execFileSync(process.execPath, [path.join(ROOT, script), ...args], { cwd: ROOT }).toString();
    out.push(JSON.parse(txt.trim().split('\n').pop()));
  }
  return out;
}

export const fmt = (x, d = 2) => (x == null || Number.isNaN(x) ? '-' : Number(x).toFixed(d));

export function table(title, header, rows) {
  const cells = [header, ...rows].map((r) => r.map(String));
  const w = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  console.log(`\n## ${title}\n`);
  for (const [k, r] of cells.entries()) {
    console.log(`| ${r.map((c, i) => c.padEnd(w[i])).join(' | ')} |`);
    if (k === 0) console.log(`|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`);
  }
}

/** n deterministic N(0, sd) values (Box-Muller over a 32-bit LCG): weights for the benchmarks. */
export function normal(n, sd, seed) {
  const a = new Float32Array(n);
  let s = seed >>> 0;
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u())) * sd, t = 2 * Math.PI * u();
    a[i] = r * Math.cos(t);
    if (i + 1 < n) a[i + 1] = r * Math.sin(t);
  }
  return a;
}

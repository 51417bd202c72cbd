// Choosing the next token from a language model's logits: Hugging Face's logits processors
// (repetition penalty, temperature, top-k, top-p, min-p) in their order, greedy argmax, and
// sampling with a seeded generator that is the same in every build and engine. The functions
// below take checked inputs (generate checks them); `sampling`, at the end, is their public face
// with every argument checked (tutorials step through sampling with it).
import { AttnkitError } from '../runtime/errors.js';
import { attached, describe, integerIn, numberIn, options as checkOptions } from '../runtime/args.js';

/**
 * The generator behind `seed`: xoshiro128** (Blackman and Vigna's reference next()), its state
 * words k = 1..4 set to fmix32(seed + k * 0x9E3779B9) (MurmurHash3's finalizer, as SplitMix
 * seeds). next() -> an unsigned 32-bit integer; uniform() -> [0, 1) as next() / 2^32. Integer
 * arithmetic only, so a seed gives the same numbers in every engine and build.
 */
export function createRng(seed) {
  let z = seed >>> 0;
  const splitmix = () => {
    z = (z + 0x9e3779b9) >>> 0;
    let t = z;
    t = Math.imul(t ^ (t >>> 16), 0x85ebca6b);
    t = Math.imul(t ^ (t >>> 13), 0xc2b2ae35);
    return (t ^ (t >>> 16)) >>> 0;
  };
  const s = new Uint32Array([splitmix(), splitmix(), splitmix(), splitmix()]);
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  const next = () => {
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  };
  return { next, uniform: () => next() / 4294967296 };
}

/**
 * transformers' RepetitionPenaltyLogitsProcessor: each id that occurs in `seen` has its logit
 * divided by `penalty` when positive and multiplied when negative (in place).
 */
export function applyRepetitionPenalty(logits, seen, penalty) {
  if (penalty === 1) return;
  const done = new Set();
  for (const id of seen) {
    if (id < 0 || id >= logits.length || done.has(id)) continue;
    done.add(id);
    const l = logits[id];
    logits[id] = l < 0 ? l * penalty : l / penalty;
  }
}

/** The first index of the largest value (torch.argmax's choice); NaN counts as largest, as in torch. */
export function argmax(v) {
  let best = 0;
  for (let i = 1; i < v.length; i++) {
    if (Number.isNaN(v[best])) break;
    if (v[i] > v[best] || Number.isNaN(v[i])) best = i;
  }
  return best;
}

/**
 * logits (one row, float32 [V]) -> the distribution sampling draws from, float64 [V] summing to 1:
 * softmax(logits / temperature) with the tokens removed by top-k (keep the k largest; ties with
 * the k-th stay), top-p (drop the least likely tokens while their total is at most 1 - topP;
 * the most likely always stays) and min-p (drop tokens below minP times the largest
 * probability), in that order, as transformers' warpers do. topK 0, topP 1 and minP 0 are off.
 */
export function samplingDistribution(logits, { temperature = 1, topK = 0, topP = 1, minP = 0 }) {
  const V = logits.length;
  const scores = new Float64Array(V);
  for (let i = 0; i < V; i++) scores[i] = logits[i] / temperature;
  if (topK > 0 && topK < V) {
    const kth = kthLargest(scores, topK);
    for (let i = 0; i < V; i++) if (scores[i] < kth) scores[i] = -Infinity;
  }
  let p = softmax(scores);
  if (topP < 1) {
    // Only tokens above (1 - topP) / V can survive: those below it total at most 1 - topP and are
    // the least likely, so they all go; the rest are sorted.
    const floor = (1 - topP) / V;
    const candidates = [];
    let removed = 0;
    for (let i = 0; i < V; i++) {
      if (p[i] > floor) candidates.push(i);
      else removed += p[i];
    }
    candidates.sort((a, b) => p[a] - p[b] || b - a);
    const drop = new Uint8Array(V);
    for (let i = 0; i < V; i++) if (!(p[i] > floor)) drop[i] = 1;
    for (let j = 0; j < candidates.length - 1; j++) {
      removed += p[candidates[j]];
      if (removed > 1 - topP) break;
      drop[candidates[j]] = 1;
    }
    for (let i = 0; i < V; i++) if (drop[i]) scores[i] = -Infinity;
    p = softmax(scores);
  }
  if (minP > 0) {
    let top = 0;
    for (let i = 0; i < V; i++) top = Math.max(top, p[i]);
    let changed = false;
    for (let i = 0; i < V; i++) {
      if (p[i] < minP * top) {
        scores[i] = -Infinity;
        changed = true;
      }
    }
    if (changed) p = softmax(scores);
  }
  return p;
}

/** An id drawn from probabilities p (float64, summing to 1): the first whose running sum passes u * total. */
export function sampleFrom(p, u) {
  let total = 0;
  for (let i = 0; i < p.length; i++) total += p[i];
  const target = u * total;
  let sum = 0, last = 0;
  for (let i = 0; i < p.length; i++) {
    if (p[i] <= 0) continue;
    sum += p[i];
    last = i;
    if (sum > target) return i;
  }
  return last;
}

/** softmax over scores (any numeric array) in float64; all zeros when every score is -Infinity or NaN leads. */
export function softmax(scores) {
  let max = -Infinity;
  for (const s of scores) if (s > max) max = s;
  const p = new Float64Array(scores.length);
  if (max === -Infinity || Number.isNaN(max)) return p;
  let sum = 0;
  for (let i = 0; i < scores.length; i++) sum += (p[i] = Math.exp(scores[i] - max));
  for (let i = 0; i < p.length; i++) p[i] /= sum;
  return p;
}

// The k-th largest value (k >= 1), by a min-heap of k.
function kthLargest(v, k) {
  const heap = new Float64Array(k);
  let n = 0;
  const down = (i) => {
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < n && heap[l] < heap[m]) m = l;
      if (r < n && heap[r] < heap[m]) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  for (const x of v) {
    if (n < k) {
      let i = n++;
      heap[i] = x;
      while (i > 0 && heap[(i - 1) >> 1] > heap[i]) {
        const up = (i - 1) >> 1;
        [heap[i], heap[up]] = [heap[up], heap[i]];
        i = up;
      }
    } else if (x > heap[0]) {
      heap[0] = x;
      down(0);
    }
  }
  return heap[0];
}

/** temperature, topK, topP, minP of an options object, checked (generate's and sampling.distribution's). */
export function samplingSettings(fn, o) {
  return {
    temperature: numberIn(fn, 'temperature', o.temperature ?? 1, (t) => t > 0, 'a finite number > 0'),
    topK: integerIn(fn, 'topK', o.topK ?? 0, 0, 2 ** 31 - 1),
    topP: numberIn(fn, 'topP', o.topP ?? 1, (p) => p > 0 && p <= 1, 'a number in (0, 1]'),
    minP: numberIn(fn, 'minP', o.minP ?? 0, (p) => p >= 0 && p <= 1, 'a number in [0, 1]'),
  };
}

// One row of scores: a Float32Array, Float64Array or array of numbers, not empty.
function row(fn, name, v) {
  const ok = v instanceof Float32Array || v instanceof Float64Array || (Array.isArray(v) && v.every((x) => typeof x === 'number'));
  if (!ok || v.length === 0) {
    throw new AttnkitError(`${fn}: ${name} must be a non-empty Float32Array, Float64Array or array of numbers, got ${describe(v)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
  return ArrayBuffer.isView(v) ? attached(fn, name, v) : v;
}

/**
 * The public face of the functions above, every argument checked: softmax(scores), argmax(scores),
 * distribution(logits, { temperature, topK, topP, minP }) (what generate samples from),
 * sampleFrom(probabilities, u in [0, 1)), createRng(seed) (generate's seeded generator).
 */
export const sampling = Object.freeze({
  softmax: (scores) => softmax(row('sampling.softmax', 'scores', scores)),
  argmax: (scores) => argmax(row('sampling.argmax', 'scores', scores)),
  distribution(logits, options) {
    const fn = 'sampling.distribution';
    const o = checkOptions(fn, options, ['temperature', 'topK', 'topP', 'minP']);
    return samplingDistribution(row(fn, 'logits', logits), samplingSettings(fn, o));
  },
  sampleFrom(probabilities, u) {
    const fn = 'sampling.sampleFrom';
    return sampleFrom(row(fn, 'probabilities', probabilities), numberIn(fn, 'u', u, (x) => x >= 0 && x < 1, 'a number in [0, 1)'));
  },
  createRng: (seed) => createRng(integerIn('sampling.createRng', 'seed', seed, 0, 2 ** 32 - 1)),
});

// The tutorial's default weights: small, deterministic and untrained, so that every reader sees the
// same numbers for the same sentence. Drawn from a seeded generator (mulberry32 + Box–Muller) with
// the scales of a freshly initialised model: entries of std 1/sqrt(dim) (queries and keys 2/sqrt(dim)), so that the sqrt(dim)
// embedding scale and LayerNorm have something to show.

export const DIM = 32;
export const HEADS = 4;
export const MAX_POSITIONS = 512;

function generator(seed) {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (n, std) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(1 - uniform())), a = 2 * Math.PI * uniform();
      out[i] = r * Math.cos(a) * std;
      if (i + 1 < n) out[i + 1] = r * Math.sin(a) * std;
    }
    return out;
  };
}

const cache = new Map();
let positionTable = null;

/** The learned position table [MAX_POSITIONS, D], the same whatever the vocabulary. */
export function defaultPositionTable() {
  positionTable ??= { data: generator(512)(MAX_POSITIONS * DIM, 1 / Math.sqrt(DIM)), dims: [MAX_POSITIONS, DIM] };
  return positionTable;
}

/**
 * Weights for a vocabulary of `vocabSize` ids: tables word [V, D], position [MAX_POSITIONS, D],
 * tokenType [2, D], LayerNorm gamma/beta [D], attention projections [D, D] (nn.Linear's [out, in]).
 */
export function defaultWeights(vocabSize) {
  if (!cache.has(vocabSize)) {
    const normal = generator(20260 + vocabSize);
    const std = 1 / Math.sqrt(DIM);
    const t = (data, dims) => ({ data, dims });
    cache.clear(); // one vocabulary at a time: GPT-2's table alone is 6 MB
    cache.set(vocabSize, {
      dim: DIM, heads: HEADS, headDim: DIM / HEADS, vocabSize, maxPositions: MAX_POSITIONS, eps: 1e-12,
      word: t(normal(vocabSize * DIM, std), [vocabSize, DIM]),
      position: defaultPositionTable(),
      tokenType: t(normal(2 * DIM, std), [2, DIM]),
      gamma: t(new Float32Array(DIM).fill(1), [DIM]),
      beta: t(new Float32Array(DIM), [DIM]),
      // Queries and keys twice as large: scores of std ~4 give attention patterns worth looking at.
      q: t(normal(DIM * DIM, 2 * std), [DIM, DIM]),
      k: t(normal(DIM * DIM, 2 * std), [DIM, DIM]),
      v: t(normal(DIM * DIM, std), [DIM, DIM]),
      out: t(normal(DIM * DIM, std), [DIM, DIM]),
    });
  }
  return cache.get(vocabSize);
}

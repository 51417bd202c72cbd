// What sections 1, 2, 4, 5 and 6 show, computed in the worker from one sentence: tokens and ids,
// the lookup, the summed embeddings and LayerNorm, the masks, and one attention layer taken apart
// head by head. Every tensor comes from an attnkit call; the few element-wise steps done here in
// JavaScript (scaling, adding the mask) are checked against attnkit's fused kernels, and the
// result carries those differences so the page can show them.

export const MAX_TOKENS = 64;

const t2 = (data, rows, cols) => ({ data, dims: [rows, cols] });

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d > m || Number.isNaN(d)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

function rowStats(x, rows, cols) {
  const mean = new Float32Array(rows), std = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0, s2 = 0;
    for (let c = 0; c < cols; c++) s += x[r * cols + c];
    const m = s / cols;
    for (let c = 0; c < cols; c++) s2 += (x[r * cols + c] - m) ** 2;
    mean[r] = m;
    std[r] = Math.sqrt(s2 / cols);
  }
  return { mean, std };
}

const rms = (x) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / Math.max(1, x.length));

/** Section 1: the sentence (and optional second segment) as tokens, ids, segments and padding. */
export function tokenize(tokenizer, { text, pair, addSpecial = true, padTo = 0, padSide = 'right' }) {
  const enc = tokenizer.encode(text, {
    pair: pair ? pair : undefined, addSpecialTokens: addSpecial, maxLength: MAX_TOKENS, truncation: true,
  });
  const vocab = tokenizer.vocab;
  const padId = ['[PAD]', '<pad>', '<|endoftext|>'].map((t) => vocab.indexOf(t)).find((i) => i >= 0) ?? 0;
  const n = enc.inputIds.data.length;
  const pads = Math.max(0, Math.min(MAX_TOKENS, padTo) - n);
  const fill = (arr, v) => {
    const padding = Array(pads).fill(v);
    return padSide === 'left' ? [...padding, ...arr] : [...arr, ...padding];
  };
  const offsets = fill(enc.offsets, null);
  return {
    model: tokenizer.model,
    vocabSize: vocab.length,
    tokens: fill(enc.tokens, vocab[padId]),
    ids: Int32Array.from(fill(Array.from(enc.inputIds.data), padId)),
    typeIds: Int32Array.from(fill(Array.from(enc.tokenTypeIds.data), 0)),
    attentionMask: Int32Array.from(fill(Array.from(enc.attentionMask.data), 0)),
    offsets,
    padId,
    padToken: vocab[padId],
    truncated: n >= MAX_TOKENS,
  };
}

/** Section 2: one-hot rows times the table equal the lookup; what each costs; the sqrt(d) scale. */
export function lookup(ak, w, tok, { scale }) {
  const { ids } = tok;
  const L = ids.length, V = w.vocabSize, D = w.dim;
  const t0 = performance.now();
  const oneHot = ak.oneHot(ids, V);
  const viaMatmul = ak.linear(oneHot, w.word, { layout: 'inOut' }); // [L, V] · [V, D]
  const t1 = performance.now();
  const rows = ak.embedding(ids, w.word);
  const t2ms = performance.now();
  // Where each one-hot row has its 1, read back from the one-hot tensor itself.
  const hot = new Int32Array(L).fill(-1);
  let ones = 0;
  for (let i = 0; i < oneHot.data.length; i++) {
    if (oneHot.data[i] !== 0) { hot[Math.floor(i / V)] = i % V; ones++; }
  }
  const scaled = scale ? ak.embedding(ids, w.word, { scale: true }) : rows;
  const pe = ak.sinusoidalPositionalEncoding(L, D);
  return {
    vocabSize: V, dim: D, hot, ones, rows: rows.data, scaled: scaled.data, scale: scale ? Math.sqrt(D) : 1,
    matmulDiff: maxAbsDiff(viaMatmul.data, rows.data), matmulMs: t1 - t0, lookupMs: t2ms - t1,
    macs: L * V * D, rmsRows: rms(rows.data), rmsScaled: rms(scaled.data), rmsPositional: rms(pe.data),
  };
}

function positionIds(ak, w, tok) {
  const L = tok.ids.length;
  if (w.positionIds === 'padding') {
    return ak.positionIds(1, L, { inputIds: { data: tok.ids, dims: [1, L] }, paddingIdx: w.paddingIdx }).data;
  }
  return Int32Array.from({ length: L }, (_, i) => i);
}

/**
 * Section 4: word + position + segment rows, their sum and its LayerNorm. positional:
 * 'sinusoidal' | 'learned' | 'none' (RoPE and ALiBi put positions inside attention instead);
 * word: the looked-up (and scaled) rows of section 2.
 */
export function embed(ak, w, tok, { positional, word }) {
  const { ids, typeIds } = tok;
  const L = ids.length, D = w.dim;
  const positions = positionIds(ak, w, tok);
  let position = new Float32Array(L * D);
  if (positional === 'sinusoidal') position = ak.sinusoidalPositionalEncoding(L, D).data;
  else if (positional === 'learned') position = ak.embedding(positions, w.position).data;
  const segment = w.tokenType ? ak.embedding(typeIds, w.tokenType).data : new Float32Array(L * D);
  const sum = new Float32Array(L * D);
  for (let i = 0; i < sum.length; i++) sum[i] = word[i] + position[i] + segment[i];
  const normed = w.gamma ? ak.layerNorm(t2(sum, L, D), { gamma: w.gamma, beta: w.beta, eps: w.eps }).data : sum;
  return {
    positional, positions, word, position, segment, sum, normed, hasSegments: !!w.tokenType, hasNorm: !!w.gamma,
    before: rowStats(sum, L, D), after: rowStats(normed, L, D),
  };
}

/** attnkit's Embeddings module on the default weights: the reference the summed steps must match. */
export function embeddingsModuleDiff(ak, w, tok, emb, scale) {
  const m = new ak.Embeddings({
    vocabSize: w.vocabSize, dim: w.dim, maxPositions: w.maxPositions, typeVocabSize: 2, eps: w.eps,
    positional: emb.positional === 'none' ? 'none' : emb.positional, scale, norm: 'layernorm',
  });
  try {
    m.setWeights({
      word: w.word, tokenType: w.tokenType, normWeight: w.gamma, normBias: w.beta,
      ...(emb.positional === 'learned' ? { position: w.position } : {}),
    });
    return maxAbsDiff(m.forward(tok.ids, { tokenTypeIds: tok.typeIds }).data, emb.normed);
  } finally {
    m.dispose();
  }
}

/** Section 5: the padding mask, the causal mask and their AND, as [L, L] matrices (1 = may attend). */
export function masks(ak, tok) {
  const L = tok.ids.length;
  const padding = ak.paddingMaskFromAttentionMask({ data: tok.attentionMask, dims: [1, L] }); // [1, 1, 1, L]
  const causal = ak.causalMask(L);
  const combined = ak.combineMasks(padding, causal);
  const broadcast = new Uint8Array(L * L);
  for (let i = 0; i < L; i++) broadcast.set(padding.data, i * L);
  const fullyMasked = [];
  for (let i = 0; i < L; i++) if (!combined.data.subarray(i * L, (i + 1) * L).some((v) => v)) fullyMasked.push(i);
  return {
    padding: padding.data, paddingDims: padding.dims, paddingMatrix: broadcast, causal: causal.data,
    combined: combined.data, fullyMasked,
    // What attention adds to the scores, [L, L]: without and with the causal mask.
    additive: { padding: ak.toAdditiveMask({ data: broadcast, dims: [L, L] }).data, combined: ak.toAdditiveMask(combined).data },
  };
}

// [L, H*hd] → [H, L, hd]
function splitHeads(x, L, H, hd) {
  const out = new Float32Array(H * L * hd);
  for (let h = 0; h < H; h++) for (let i = 0; i < L; i++) out.set(x.subarray(i * H * hd + h * hd, i * H * hd + (h + 1) * hd), (h * L + i) * hd);
  return out;
}
function mergeHeads(x, L, H, hd) {
  const out = new Float32Array(L * H * hd);
  for (let h = 0; h < H; h++) for (let i = 0; i < L; i++) out.set(x.subarray((h * L + i) * hd, (h * L + i + 1) * hd), i * H * hd + h * hd);
  return out;
}
const head = (x, h, L, n) => x.slice(h * L * n, (h + 1) * L * n);

function softmaxRows(x, L) {
  const out = new Float32Array(L * L);
  for (let i = 0; i < L; i++) {
    const row = x.subarray(i * L, (i + 1) * L);
    const m = Math.max(...row);
    if (m === -Infinity) continue; // fully masked: attnkit's documented zeros
    let s = 0;
    for (let j = 0; j < L; j++) s += Math.exp(row[j] - m);
    for (let j = 0; j < L; j++) out[i * L + j] = Math.exp(row[j] - m) / s;
  }
  return out;
}

/**
 * Section 6: one attention layer on the embeddings, step by step for head `head`, and the weights
 * of all heads. positional: 'sinusoidal' | 'learned' (already in x) | 'rope' | 'alibi'.
 */
export function attention(ak, w, tok, x, mask, { positional, causal, head: h }) {
  const L = tok.ids.length, D = w.dim, H = w.heads, hd = w.headDim;
  const layout = w.layout ?? 'outIn';
  const input = w.preNorm ? ak.layerNorm(t2(x, L, D), w.preNorm).data : x;
  const project = (m, b) => ak.linear(t2(input, L, D), m, { bias: b ?? undefined, layout }).data;
  const q = splitHeads(project(w.q, w.qBias), L, H, hd);
  const k = splitHeads(project(w.k, w.kBias), L, H, hd);
  const v = splitHeads(project(w.v, w.vBias), L, H, hd);
  const rope = positional === 'rope', alibi = positional === 'alibi';
  const qr = rope ? ak.rotary({ data: q, dims: [1, H, L, hd] }).data : q;
  const kr = rope ? ak.rotary({ data: k, dims: [1, H, L, hd] }).data : k;
  const scale = w.scale ?? 1 / Math.sqrt(hd);
  const padding = { data: mask.padding, dims: mask.paddingDims };
  const fused = ak.attention({ data: qr, dims: [1, H, L, hd] }, { data: kr, dims: [1, H, L, hd] },
    { data: v, dims: [1, H, L, hd] }, { mask: padding, causal, alibi: alibi || undefined, scale, returnWeights: true });

  // Head h by hand: Q Kᵀ as a linear layer whose weight is K, then scale, bias and mask.
  const qh = head(qr, h, L, hd), kh = head(kr, h, L, hd);
  const scores = ak.linear(t2(qh, L, hd), t2(kh, L, hd)).data;
  const slopes = ak.alibiSlopes(H).data;
  const scaled = scores.map((s) => s * scale);
  const bias = new Float32Array(L * L);
  if (alibi) for (let i = 0; i < L; i++) for (let j = 0; j < L; j++) bias[i * L + j] = slopes[h] * (j - i);
  const additive = causal ? mask.additive.combined : mask.additive.padding;
  const masked = scaled.map((s, i) => s + bias[i] + additive[i]);
  const weights = head(fused.weights.data, h, L, L);
  const concat = mergeHeads(fused.output.data, L, H, hd);
  const output = ak.linear(t2(concat, L, D), w.out, { bias: w.outBias ?? undefined, layout }).data;
  return {
    L, D, H, hd, head: h, positional, causal, scale, input, q: head(q, h, L, hd), k: head(k, h, L, hd),
    v: head(v, h, L, hd), qRotated: rope ? qh : null, kRotated: rope ? kh : null, scores, scaled,
    bias: alibi ? bias : null, slopes, masked, weights, allWeights: fused.weights.data,
    headOutput: head(fused.output.data, h, L, hd), concat, output,
    softmaxDiff: maxAbsDiff(softmaxRows(masked, L), weights),
    ropeDemo: ropeDemo(ak, q, k, h, L, hd),
  };
}

/** attnkit's MultiHeadAttention on the default weights: the reference for the layer's output. */
export function attentionModuleDiff(ak, w, tok, x, att) {
  const m = new ak.MultiHeadAttention({
    dim: w.dim, numHeads: w.heads, bias: false, causal: att.causal,
    positional: att.positional === 'rope' ? 'rotary' : att.positional === 'alibi' ? 'alibi' : 'none',
  });
  try {
    m.setWeights({ qWeight: w.q, kWeight: w.k, vWeight: w.v, outWeight: w.out });
    const L = tok.ids.length;
    const y = m.forward({ data: x, dims: [1, L, w.dim] }, { attentionMask: { data: tok.attentionMask, dims: [1, L] } });
    return maxAbsDiff(y.data, att.output);
  } finally {
    m.dispose();
  }
}

/**
 * RoPE makes q·k depend on the offset m − n only: the first token's q and the second's k (head h,
 * before rotation) scored at query position n + δ against key position n, for three n. The lines
 * coincide. Adding position vectors to q and k instead gives lines that do not.
 */
function ropeDemo(ak, q, k, h, L, hd) {
  const qv = q.subarray(h * L * hd, h * L * hd + hd);
  const kv = k.subarray((h * L + Math.min(1, L - 1)) * hd, (h * L + Math.min(1, L - 1) + 1) * hd);
  const deltas = Array.from({ length: 33 }, (_, i) => i - 16);
  const bases = [16, 40, 100];
  const pe = ak.sinusoidalPositionalEncoding(bases.at(-1) + 17, hd).data;
  const series = [];
  for (const n of bases) {
    const N = deltas.length;
    const rep = (vec) => { const a = new Float32Array(N * hd); for (let i = 0; i < N; i++) a.set(vec, i * hd); return a; };
    const qRot = ak.rotary({ data: rep(qv), dims: [N, hd] }, { positions: Int32Array.from(deltas, (d) => n + d) }).data;
    const kRot = ak.rotary({ data: rep(kv), dims: [N, hd] }, { positions: new Int32Array(N).fill(n) }).data;
    const rope = new Float32Array(N), added = new Float32Array(N);
    for (let i = 0; i < N; i++) {
      const m = n + deltas[i];
      for (let c = 0; c < hd; c++) {
        rope[i] += qRot[i * hd + c] * kRot[i * hd + c];
        added[i] += (qv[c] + pe[m * hd + c]) * (kv[c] + pe[n * hd + c]);
      }
    }
    series.push({ n, rope, added });
  }
  return { deltas: Int32Array.from(deltas), series };
}

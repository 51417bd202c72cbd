// What sections 7–9 show, computed in the worker from a causal language model (the trained default
// or a GPT-2 checkpoint): each head's attention for the typed text, what each head learned
// (previous-token and induction scores), the logit lens, and generation step by step with the
// model's KV cache. Every tensor comes from attnkit: Model.forward, layerNorm and linear.
import { sampling } from '../attnkit.js';

const { argmax, createRng, sampleFrom, softmax } = sampling;
const samplingDistribution = sampling.distribution;

const t2 = (data, rows, cols) => ({ data, dims: [rows, cols] });

/**
 * The logit lens: each layer's hidden state (the embeddings' output, then each layer's) read
 * through the final LayerNorm and the tied LM head, as the most likely next token per position.
 * hidden: Model.forward's hiddenStates (the last one is already after the final norm).
 * Returns {rows: layers + 1, cols: L, top [rows, L] ids, prob [rows, L], lastLogits [V]}.
 */
export function logitLens(ak, w, hidden) {
  const rows = hidden.length, [, L, D] = hidden[0].dims, V = w.lm.word.dims[0];
  const top = new Int32Array(rows * L), prob = new Float32Array(rows * L);
  let lastLogits = null;
  for (let r = 0; r < rows; r++) {
    const h = r === rows - 1 ? hidden[r].data : ak.layerNorm(t2(hidden[r].data, L, D), w.lm.norm).data;
    const logits = ak.linear(t2(h, L, D), w.lm.word).data; // [L, V]: the word table is nn.Linear's [out, in]
    for (let i = 0; i < L; i++) {
      const row = logits.subarray(i * V, (i + 1) * V);
      // The top token's softmax probability: 1 / sum(exp(row - row[best])).
      const best = argmax(row);
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(row[v] - row[best]);
      top[r * L + i] = best;
      prob[r * L + i] = 1 / sum;
    }
    if (r === rows - 1) lastLogits = logits;
  }
  return { rows, cols: L, top, prob, logits: lastLogits };
}

/**
 * What each head learned, measured on the probes the training script used (metrics.json):
 * previous-token score = mean attention from position i to i − 1 (i ≥ 1) on held-out text;
 * induction score = on [EOT, r, r] (r random tokens, `half` long), the mean attention from each
 * position of the second copy to the position after the same token's first occurrence.
 */
export function headScores(model, metrics) {
  const run = (ids) => model.forward({ data: Int32Array.from(ids), dims: [1, ids.length] }, { outputAttentions: true }).attentions;
  const prevMaps = run(metrics.previousToken.ids);
  const L = metrics.previousToken.ids.length;
  const H = prevMaps[0].dims[1];
  const previousToken = prevMaps.map((a) => Array.from({ length: H }, (_, h) => {
    let s = 0;
    for (let i = 1; i < L; i++) s += a.data[(h * L + i) * L + i - 1];
    return s / (L - 1);
  }));
  const { ids, half } = metrics.induction;
  const N = ids.length;
  const indMaps = run(ids);
  const induction = indMaps.map((a) => Array.from({ length: H }, (_, h) => {
    let s = 0;
    for (let i = 1 + half; i < 1 + 2 * half; i++) s += a.data[(h * N + i) * N + i - half + 1];
    return s / half;
  }));
  return {
    previousToken, induction, expected: { previousToken: metrics.previousToken.scores, induction: metrics.induction.scores },
    probe: { text: metrics.previousToken.text, ids: metrics.previousToken.ids, inductionIds: ids, half },
    // The induction probe's attention, every head, for the page's pictures: [layers][H * N * N].
    inductionMaps: indMaps.map((a) => a.data), previousMaps: prevMaps.map((a) => a.data), N, L,
  };
}

/**
 * Generation, one token per call, with the model's KV cache: `start` runs the prompt (the cache
 * holds its keys and values afterwards), `step` picks the next token from the last logits (greedy,
 * or sampled with the seeded generator) and runs only that token against the cache.
 */
export class Generation {
  constructor(model, tokenizer) {
    this.model = model;
    this.tokenizer = tokenizer;
    this.ids = [];
    this.logits = null;
    this.probs = null;
    this.rng = null;
  }

  start(text, seed) {
    const ids = Array.from(this.tokenizer.encode(text, { addSpecialTokens: false }).inputIds.data);
    if (!ids.length) throw new Error('type a prompt of at least one token to generate from');
    const max = this.model.contextSize;
    if (ids.length >= max) throw new Error(`the prompt has ${ids.length} tokens; this model reads at most ${max}, so shorten it`);
    this.model.resetCache();
    this.rng = createRng(seed);
    this.ids = ids;
    return this._run(ids, { prompt: true });
  }

  step({ sample, temperature, topK, topP }) {
    if (!this.logits) throw new Error('start the generation first');
    if (this.model.cacheLength >= this.model.contextSize) {
      throw new Error(`the cache is full: this model reads at most ${this.model.contextSize} positions; press reset`);
    }
    const p = sample ? samplingDistribution(this.logits, { temperature, topK, topP }) : this.probs;
    const id = sample ? sampleFrom(p, this.rng.uniform()) : argmax(this.logits);
    const chosen = { id, token: this.tokenizer.vocab[id], probability: p[id] };
    this.ids.push(id);
    return { ...this._run([id], { prompt: false }), chosen };
  }

  _run(ids, { prompt }) {
    const n = ids.length;
    const out = this.model.forward({ data: Int32Array.from(ids), dims: [1, n] }, { useCache: true, lastTokenOnly: true, outputAttentions: true });
    this.logits = out.logits.data;
    const probs = this.probs = softmax(this.logits); // the next step's distribution when greedy
    const order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a]).slice(0, 8);
    return {
      prompt, newIds: ids, tokens: ids.map((i) => this.tokenizer.vocab[i]), cacheLength: this.model.cacheLength,
      cacheBytes: this.model.cacheBytes, text: this.tokenizer.decode(Int32Array.from(this.ids)),
      // Each layer's attention for the new rows: [H, n, cacheLength] (the bottom-right of the causal mask).
      attentions: out.attentions.map((a) => ({ data: a.data, dims: a.dims })),
      candidates: order.map((i) => ({ id: i, token: this.tokenizer.vocab[i], probability: probs[i] })),
    };
  }
}

// Autoregressive generation on a Model with its KV cache: the prompt once, then one token per
// step (forward with useCache and lastTokenOnly), each chosen greedily or by sampling; streaming,
// stopping (eos ids, stop strings, maxNewTokens) and cancellation.
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { boolean, callback, describe, idsInput, integerIn, numberIn, options as checkOptions } from '../runtime/args.js';
import { applyRepetitionPenalty, argmax, createRng, sampleFrom, samplingDistribution, samplingSettings, softmax } from './sampling.js';

export const GENERATE_OPTIONS = ['maxNewTokens', 'doSample', 'temperature', 'topK', 'topP', 'minP', 'repetitionPenalty',
  'seed', 'eosTokenId', 'padTokenId', 'stopStrings', 'tokenizer', 'onToken', 'signal', 'attentionMask', 'outputLogits',
  'outputScores', 'outputProbabilities'];
const SAMPLING_ONLY = ['temperature', 'topK', 'topP', 'minP', 'seed'];

function bad(fn, argument, message, code = 'ERR_INVALID_ARGUMENT') {
  return new AttnkitError(`${fn}: ${message}`, { code, argument });
}

// Every option checked before the model runs.
function settings(fn, model, o, B, L) {
  const V = model.spec.embeddings.vocabSize;
  const doSample = boolean(fn, 'doSample', o.doSample ?? false);
  if (!doSample) {
    const given = SAMPLING_ONLY.find((k) => o[k] !== undefined);
    if (given) throw bad(fn, given, `${given} applies when sampling; pass doSample: true (greedy decoding ignores it)`);
  }
  const room = model.contextSize - L;
  if (room < 1) {
    throw bad(fn, 'inputIds', `the prompt has ${L} positions and the model ${model.contextSize} (config.json), so there is no room ` +
      'for a new token', 'ERR_OUT_OF_RANGE');
  }
  const maxNewTokens = o.maxNewTokens ?? 20;
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1 || maxNewTokens > room) {
    throw bad(fn, 'maxNewTokens', `maxNewTokens must be an integer in [1, ${room}] (the model's ${model.contextSize} positions ` +
      `less the prompt's ${L}), got ${describe(maxNewTokens)}`, typeof maxNewTokens === 'number' ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT');
  }
  const s = {
    doSample, maxNewTokens,
    ...samplingSettings(fn, { ...o, topK: o.topK ?? 50 }),
    repetitionPenalty: numberIn(fn, 'repetitionPenalty', o.repetitionPenalty ?? 1, (p) => p > 0, 'a finite number > 0'),
    seed: o.seed === undefined ? (Math.random() * 2 ** 32) >>> 0 : integerIn(fn, 'seed', o.seed, 0, 2 ** 32 - 1),
    onToken: callback(fn, 'onToken', o.onToken),
    outputLogits: boolean(fn, 'outputLogits', o.outputLogits ?? false),
    outputScores: boolean(fn, 'outputScores', o.outputScores ?? false),
    outputProbabilities: boolean(fn, 'outputProbabilities', o.outputProbabilities ?? false),
  };
  // eos: the option (an id, a list, or null for none), else config.json's eos_token_id.
  const eos = o.eosTokenId === undefined ? model.spec.eosTokenIds ?? [] : o.eosTokenId === null ? [] : [o.eosTokenId].flat();
  eos.forEach((id, i) => integerIn(fn, o.eosTokenId === undefined ? 'eos_token_id' : Array.isArray(o.eosTokenId) ? `eosTokenId[${i}]` : 'eosTokenId', id, 0, 2 ** 24));
  s.eos = new Set(eos);
  // Finished rows continue with padTokenId: given, or config.json's pad / eos id within the vocabulary, or 0.
  s.pad = o.padTokenId !== undefined ? integerIn(fn, 'padTokenId', o.padTokenId, 0, V - 1) : defaultPad(model, eos);
  const stops = o.stopStrings === undefined ? [] : [o.stopStrings].flat();
  stops.forEach((t, i) => {
    if (typeof t !== 'string' || t === '') throw bad(fn, 'stopStrings', `stopStrings[${i}] must be a non-empty string, got ${describe(t)}`);
  });
  if (stops.length > 0 && (typeof o.tokenizer?.decode !== 'function')) {
    throw bad(fn, 'tokenizer', `stopStrings need the tokenizer to read the text (pass tokenizer), got ${describe(o.tokenizer)}`);
  }
  s.stops = stops;
  s.tokenizer = o.tokenizer;
  if (o.signal !== undefined && !(typeof o.signal === 'object' && o.signal !== null && 'aborted' in o.signal)) {
    throw bad(fn, 'signal', `signal must be an AbortSignal, got ${describe(o.signal)}`);
  }
  s.signal = o.signal;
  return s;
}

// The first of config.json's pad id, `more` (a tokenizer's pad, the eos ids) that is in the
// vocabulary, else 0: what padding and finished rows use when padTokenId is not given.
function defaultPad(model, more) {
  const V = model.spec.embeddings.vocabSize;
  return [model.spec.padTokenId, ...more].find((id) => Number.isInteger(id) && id >= 0 && id < V) ?? 0;
}

// Lets timers, input and abort() run between steps without a 4 ms setTimeout clamp.
function yieldToEventLoop() {
  if (typeof globalThis.scheduler?.yield === 'function') return globalThis.scheduler.yield();
  if (typeof globalThis.setImmediate === 'function') return new Promise((r) => globalThis.setImmediate(r));
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

function aborted(fn, signal) {
  return new AttnkitError(`${fn}: aborted${signal.reason?.message ? ` (${signal.reason.message})` : ''}`, {
    code: 'ERR_ABORTED', argument: 'signal', cause: signal.reason,
  });
}

/**
 * model.generate: inputIds [L] or [batch, L] (left-padded, with attentionMask) -> {sequences
 * (int32 [batch, L + n], the prompt then the new tokens; finished rows continue with padTokenId),
 * and per step with outputLogits the raw logits [batch, V], with outputScores the processed ones,
 * with outputProbabilities the distribution chosen from}. The model's KV cache is reset first.
 *
 * Calls on one model are queued: each runs once the one before it has finished, since they share
 * the model's KV cache. While one runs, the calls that read or write that cache from outside it
 * (forward with useCache, resetCache, saveCache, loadCache) are refused with ERR_BUSY.
 */
export function generate(model, inputIds, options) {
  const run = (model._generateQueue ?? Promise.resolve()).then(async () => {
    model._generating = true;
    try {
      return await generateOwningCache(model, inputIds, options);
    } finally {
      model._generating = false;
    }
  });
  model._generateQueue = run.catch(() => {});
  return run;
}

async function generateOwningCache(model, inputIds, options) {
  const fn = 'generate';
  const o = checkOptions(fn, options, GENERATE_OPTIONS);
  model._live(fn);
  model._checkHead(fn, 'generate');
  if (!model.spec.layer.causal) {
    throw bad(fn, 'model', `${model.spec.family} models are not causal language models; generate needs GPT-2 or LLaMA`);
  }
  const ids = idsInput(fn, 'inputIds', inputIds);
  if (ids.dims.length > 2 || ids.data.length === 0) {
    throw bad(fn, 'inputIds', `inputIds must be [length] or [batch, length] with length >= 1, got dims ${JSON.stringify(ids.dims)}`,
      'ERR_SHAPE_MISMATCH');
  }
  const [B, L] = ids.dims.length === 2 ? ids.dims : [1, ids.dims[0]];
  const V = model.spec.embeddings.vocabSize;
  for (const id of ids.data) {
    if (id < 0 || id >= V) throw bad(fn, 'inputIds', `inputIds holds id ${id}, outside the vocabulary [0, ${V})`, 'ERR_OUT_OF_RANGE');
  }
  const s = settings(fn, model, o, B, L);
  let mask;
  if (o.attentionMask !== undefined) {
    mask = idsInput(fn, 'attentionMask', o.attentionMask).data;
    if (mask.length !== B * L) {
      throw bad(fn, 'attentionMask', `attentionMask must have ${B * L} elements ([batch, length]), got ${mask.length}`, 'ERR_SHAPE_MISMATCH');
    }
  }
  if (s.signal?.aborted) throw aborted(fn, s.signal);

  const rng = createRng(s.seed);
  const N = s.maxNewTokens;
  const out = new Int32Array(B * (L + N));
  for (let b = 0; b < B; b++) out.set(ids.data.subarray(b * L, (b + 1) * L), b * (L + N));
  const finished = new Uint8Array(B);
  const seen = Array.from({ length: B }, (_, b) => Array.from(ids.data.subarray(b * L, (b + 1) * L)));
  const result = {};
  if (s.outputLogits) result.logits = [];
  if (s.outputScores) result.scores = [];
  if (s.outputProbabilities) result.probabilities = [];
  const next = new Int32Array(B);
  const ones = new Int32Array(B).fill(1);

  let logits = model._ownCache(() => {
    model.resetCache();
    return model.forward({ data: ids.data, dims: [B, L] },
      { attentionMask: mask && { data: mask, dims: [B, L] }, useCache: true, lastTokenOnly: true }).logits.data;
  });
  let steps = 0, lastYield = performance.now();
  for (let step = 0; step < N; step++) {
    const scores = s.outputScores || s.outputProbabilities ? new Float32Array(B * V) : null;
    const probs = s.outputProbabilities ? new Float32Array(B * V) : null;
    if (s.outputLogits) result.logits.push(new Tensor('float32', logits.slice(), [B, V]));
    for (let b = 0; b < B; b++) {
      const row = logits.subarray(b * V, (b + 1) * V);
      applyRepetitionPenalty(row, seen[b], s.repetitionPenalty);
      if (s.doSample) {
        const p = samplingDistribution(row, s);
        if (!(p.reduce((a, x) => a + x, 0) > 0.5)) {
          throw bad(fn, 'logits', `the model's logits for row ${b} at step ${step} give no distribution to sample (NaN or ` +
            'every token removed)', 'ERR_INVALID_VALUE');
        }
        const u = rng.uniform(); // one draw per row and step, finished rows included
        next[b] = finished[b] ? s.pad : sampleFrom(p, u);
        if (probs) probs.set(p, b * V);
        if (scores) for (let i = 0; i < V; i++) scores[b * V + i] = p[i] > 0 ? row[i] / s.temperature : -Infinity;
      } else {
        next[b] = finished[b] ? s.pad : argmax(row);
        if (scores) scores.set(row, b * V);
        if (probs) probs.set(softmax(row), b * V);
      }
    }
    if (scores && s.outputScores) result.scores.push(new Tensor('float32', scores, [B, V]));
    if (probs) result.probabilities.push(new Tensor('float32', probs, [B, V]));
    for (let b = 0; b < B; b++) {
      out[b * (L + N) + L + step] = next[b];
      if (finished[b]) continue;
      seen[b].push(next[b]);
      if (s.eos.has(next[b])) finished[b] = 1;
      else if (s.stops.length > 0) {
        const text = s.tokenizer.decode(out.subarray(b * (L + N) + L, b * (L + N) + L + step + 1));
        if (s.stops.some((t) => text.includes(t))) finished[b] = 1;
      }
    }
    steps = step + 1;
    if (s.onToken) {
      const r = s.onToken({ step, tokenIds: next.slice(), finished: Array.from(finished, (f) => f === 1) });
      if (r && typeof r.then === 'function') await r;
    }
    if (finished.every((f) => f) || step === N - 1) break;
    // Give the event loop a turn every few milliseconds (abort, input, rendering).
    if (performance.now() - lastYield > 8) {
      await yieldToEventLoop();
      lastYield = performance.now();
    }
    if (s.signal?.aborted) throw aborted(fn, s.signal);
    const T = L + step + 1; // the positions after this step
    if (T - 1 === model.spec.ropeRecomputeAt) {
      // LongRoPE (Phi-3) switches to its long factors past the original context, for every
      // position: the cached keys were rotated with the short ones, so the whole sequence runs
      // again (as transformers' Phi-3 drops its cache there).
      const whole = new Int32Array(B * T), wmask = mask ? new Int32Array(B * T).fill(1) : null;
      for (let b = 0; b < B; b++) {
        whole.set(out.subarray(b * (L + N), b * (L + N) + T), b * T);
        if (wmask) wmask.set(mask.subarray(b * L, (b + 1) * L), b * T);
      }
      logits = model._ownCache(() => {
        model.resetCache();
        return model.forward({ data: whole, dims: [B, T] },
          { attentionMask: wmask && { data: wmask, dims: [B, T] }, useCache: true, lastTokenOnly: true }).logits.data;
      });
      continue;
    }
    logits = model._ownCache(() => model.forward({ data: next, dims: [B, 1] },
      { attentionMask: mask && { data: ones, dims: [B, 1] }, useCache: true, lastTokenOnly: true }).logits.data);
  }
  const width = L + steps;
  const sequences = new Int32Array(B * width);
  for (let b = 0; b < B; b++) sequences.set(out.subarray(b * (L + N), b * (L + N) + width), b * width);
  result.sequences = new Tensor('int32', sequences, ids.dims.length === 2 ? [B, width] : [width]);
  return result;
}

/**
 * model.generateText: a prompt (or a list: one left-padded batch) through the tokenizer, generate,
 * and the new text back: {text (string, or one per prompt), sequences, ...generate's outputs}.
 * onToken also gets `text`: each row's newly complete text since the last call (streaming; a
 * character split across byte tokens waits for its last byte). addSpecialTokens follows the
 * tokenizer (LLaMA's BOS; none for GPT-2).
 */
export async function generateText(model, tokenizer, prompt, options) {
  const fn = 'generateText';
  if (!tokenizer || typeof tokenizer.encode !== 'function' || typeof tokenizer.decode !== 'function') {
    throw bad(fn, 'tokenizer', `tokenizer must be an attnkit Tokenizer, got ${describe(tokenizer)}`);
  }
  const batched = Array.isArray(prompt);
  const prompts = batched ? prompt : [prompt];
  prompts.forEach((p, i) => {
    if (typeof p !== 'string') throw bad(fn, batched ? `prompt[${i}]` : 'prompt', `the prompt must be a string, got ${describe(p)}`);
  });
  if (prompts.length === 0) throw bad(fn, 'prompt', 'the list of prompts is empty');
  const known = [...GENERATE_OPTIONS.filter((k) => k !== 'attentionMask' && k !== 'tokenizer'), 'addSpecialTokens'];
  const { addSpecialTokens = true, ...rest } = checkOptions(fn, options, known);
  boolean(fn, 'addSpecialTokens', addSpecialTokens);
  const onToken = callback(fn, 'onToken', rest.onToken);
  const padId = rest.padTokenId ?? defaultPad(model, [tokenizer.padTokenId, ...(model.spec.eosTokenIds ?? [])]);
  const enc = tokenizer.encode(prompts, { addSpecialTokens, paddingSide: 'left', padId });
  // Each row's new ids up to and including the one that finished it, and the text shown so far.
  const generated = prompts.map(() => []);
  const done = new Uint8Array(prompts.length);
  const shown = prompts.map(() => '');
  const read = (b) => tokenizer.decode(generated[b], { skipSpecialTokens: true });
  const result = await generate(model, enc.inputIds, {
    ...rest, tokenizer, attentionMask: enc.attentionMask, padTokenId: padId,
    onToken: (event) => {
      event.tokenIds.forEach((id, b) => {
        if (done[b]) return;
        generated[b].push(id);
        if (event.finished[b]) done[b] = 1;
      });
      if (!onToken) return undefined;
      const text = shown.map((before, b) => {
        const full = read(b);
        if (full.endsWith('\uFFFD') && !done[b]) return ''; // a character still missing bytes
        shown[b] = full;
        return full.startsWith(before) ? full.slice(before.length) : full;
      });
      return onToken({ ...event, text: batched ? text : text[0] });
    },
  });
  const texts = prompts.map((_, b) => read(b));
  return { ...result, text: batched ? texts : texts[0] };
}

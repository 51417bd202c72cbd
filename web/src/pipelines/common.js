// What the task pipelines share: checking their inputs and options, encoding texts for a model,
// labels, and the score functions of Hugging Face's pipelines (softmax and sigmoid in float64 over
// the model's float32 logits).
import { AttnkitError } from '../runtime/errors.js';
import { boolean, describe } from '../runtime/args.js';

export function bad(fn, argument, message, code = 'ERR_INVALID_ARGUMENT') {
  return new AttnkitError(`${fn}: ${message}`, { code, argument });
}

/** Stable softmax of a row (any array of numbers) in float64. */
export function softmax(row) {
  let max = -Infinity;
  for (const x of row) if (x > max) max = x;
  const out = new Float64Array(row.length);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += out[i] = Math.exp(row[i] - max);
  for (let i = 0; i < row.length; i++) out[i] /= sum;
  return out;
}

export const sigmoid = (x) => 1 / (1 + Math.exp(-x));

/**
 * A pipeline's text input: a string (one result) or a non-empty array of strings (one result
 * each). -> {texts, batched}.
 */
export function textsInput(fn, name, x) {
  const batched = Array.isArray(x);
  const texts = batched ? x : [x];
  if (batched && texts.length === 0) throw bad(fn, name, `${name} is an empty list`);
  texts.forEach((t, i) => {
    if (typeof t !== 'string') {
      throw bad(fn, batched ? `${name}[${i}]` : name, `${batched ? `${name}[${i}]` : name} must be a string, got ${describe(t)}`);
    }
  });
  return { texts, batched };
}

/** The longest row a model takes: the tokenizer's model_max_length, at most the model's positions. */
export function maxLengthOf(ctx) {
  const m = ctx.tokenizer.modelMaxLength;
  return Number.isInteger(m) && m > 0 ? Math.min(m, ctx.model.contextSize) : ctx.model.contextSize;
}

/**
 * Texts (and pairs) as one right-padded batch, truncated to what the model takes. A tokenizer
 * without a pad token (GPT-2's) pads with its eos token: the mask leaves the pads out anyway.
 */
export function encodeBatch(ctx, texts, extra = {}) {
  const t = ctx.tokenizer;
  const padId = t.padTokenId === null ? t.eosTokenId ?? 0 : undefined;
  return t.encode(texts, {
    padding: 'longest', truncation: extra.truncation ?? true, maxLength: maxLengthOf(ctx), paddingSide: 'right',
    ...(extra.pair ? { pair: extra.pair } : {}), ...(padId !== undefined ? { padId } : {}),
  });
}

/** config.json's label of class i (id2label), or LABEL_i as transformers names unnamed classes. */
export function labelOf(model, i) {
  const map = model.config.id2label;
  return map && Object.hasOwn(map, String(i)) ? map[String(i)] : `LABEL_${i}`;
}

/** topK: an integer >= 1, or null (every class) where the task allows it. */
export function topKOption(fn, v, { allowNull = false } = {}) {
  if (v === null && allowNull) return null;
  if (!Number.isInteger(v) || v < 1) {
    throw bad(fn, 'topK', `topK must be an integer >= 1${allowNull ? ' or null (all)' : ''}, got ${describe(v)}`,
      typeof v === 'number' ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT');
  }
  return v;
}

export function oneOfOption(fn, name, v, allowed) {
  if (!allowed.includes(v)) {
    throw bad(fn, name, `${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(v)}`);
  }
  return v;
}

export function integerOption(fn, name, v, lo, hi = Number.MAX_SAFE_INTEGER) {
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw bad(fn, name, `${name} must be an integer in [${lo}, ${hi === Number.MAX_SAFE_INTEGER ? 'inf' : hi}], got ${describe(v)}`,
      typeof v === 'number' ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT');
  }
  return v;
}

export { boolean };

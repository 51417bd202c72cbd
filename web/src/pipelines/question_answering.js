// question-answering: an extractive QA head's answer span, after Hugging Face's
// QuestionAnsweringPipeline (pipelines/question_answering.py, fast-tokenizer path):
//   - the question and the context make one pair (question first when the tokenizer pads on the
//     right); a context longer than maxSeqLen allows is cut into windows of as many context
//     tokens as fit, each starting docStride tokens before the previous one ended (the tokenizer's
//     overflow with stride), every window with the question and the template's special tokens;
//   - per window: the logits of tokens that are not the context's (and not CLS) become -10000,
//     start and end probabilities are softmaxes over the window, the first token's are then
//     zeroed (its product is the "no answer" score); a span is start <= end < start + maxAnswerLen
//     over context tokens, scored p(start) * p(end); the best topK * 2 + 10 (alignToWords) or topK;
//   - a span becomes characters of the context: with alignToWords, from the start of its first
//     token's word to the end of its last token's word, else the tokens' own offsets; answers with
//     the same text (case-insensitive) across windows add their scores;
//   - handleImpossibleAnswer adds {answer: '', start: 0, end: 0} scored by the smallest "no answer"
//     score of the windows; answers sorted by score, the first topK.
// Words: a token and the continuation pieces after it (WordPiece's "##"; for SentencePiece and
// byte-level BPE, the pieces that follow without a space and, for BPE, in the same class of
// characters: letters, digits, other), which is the pre-tokenizer's word for WordPiece and
// Metaspace tokenizers.
import { bad, boolean, integerOption, maxLengthOf, softmax, topKOption } from './common.js';
import { describeModel } from './text_classification.js';

export const questionAnswering = {
  options: ['topK', 'docStride', 'maxSeqLen', 'maxAnswerLen', 'handleImpossibleAnswer', 'alignToWords'],
  defaults: { topK: 1, maxAnswerLen: 15, handleImpossibleAnswer: false, alignToWords: true },
  check(fn, o) {
    topKOption(fn, o.topK);
    integerOption(fn, 'maxAnswerLen', o.maxAnswerLen, 1);
    if (o.maxSeqLen !== undefined) integerOption(fn, 'maxSeqLen', o.maxSeqLen, 1);
    if (o.docStride !== undefined) integerOption(fn, 'docStride', o.docStride, 0);
    boolean(fn, 'handleImpossibleAnswer', o.handleImpossibleAnswer);
    boolean(fn, 'alignToWords', o.alignToWords);
  },
  create(ctx, fn) {
    if (ctx.model.spec.head?.task !== 'span') {
      throw bad(fn, 'source', `question-answering needs an extractive QA model (*ForQuestionAnswering), got ${describeModel(ctx.model)}`);
    }
  },
  /**
   * (question, context) -> {answer, score, start, end} (or the topK best, a list); lists of
   * questions and contexts (or a list of questions on one context) -> one result each.
   */
  run(ctx, fn, o, question, context) {
    const batched = Array.isArray(question);
    const questions = batched ? question : [question];
    const contexts = Array.isArray(context) ? context : batched ? questions.map(() => context) : [context];
    if (Array.isArray(context) && (!batched || context.length !== questions.length)) {
      throw bad(fn, 'context', `context must be one string, or a list as long as the list of questions (${batched ? questions.length : 'a single question'})`,
        'ERR_SHAPE_MISMATCH');
    }
    if (batched && questions.length === 0) throw bad(fn, 'question', 'question is an empty list');
    questions.forEach((q, i) => checkText(fn, batched ? `question[${i}]` : 'question', q));
    contexts.forEach((c, i) => checkText(fn, Array.isArray(context) ? `context[${i}]` : 'context', c));
    const maxSeqLen = Math.min(o.maxSeqLen ?? Math.min(maxLengthOf(ctx), 384), ctx.model.contextSize);
    const docStride = o.docStride ?? Math.min(Math.floor(maxSeqLen / 2), 128);
    if (docStride > maxSeqLen) throw bad(fn, 'docStride', `docStride (${docStride}) is larger than maxSeqLen (${maxSeqLen})`, 'ERR_OUT_OF_RANGE');
    const results = questions.map((q, i) => answer(ctx, fn, o, q, contexts[i], maxSeqLen, docStride));
    return batched ? results : results[0];
  },
};

function checkText(fn, name, x) {
  if (typeof x !== 'string') throw bad(fn, name, `${name} must be a string, got ${typeof x}`);
  if (x === '') throw bad(fn, name, `${name} is empty`);
}

/** The windows of one (question, context): rows {ids, types, spans, seq} (seq: 0 / 1 per token, -1 for the template's). */
export function windows(ctx, fn, question, context, maxSeqLen, docStride) {
  const tok = ctx.tokenizer;
  const [q, c] = tok._piecesMany(fn, [question, context]);
  const questionFirst = tok.paddingSide === 'right';
  const tmpl = tok._s.template?.pair;
  const specials = tmpl ? tmpl.filter((t) => t.sequence === undefined).length : 0;
  const n = c.ids.length;
  const budget = maxSeqLen - specials - q.ids.length;
  if (budget <= 0) {
    throw bad(fn, 'question', `the question takes ${q.ids.length} tokens and the template ${specials}: maxSeqLen ${maxSeqLen} leaves no room for the context`,
      'ERR_OUT_OF_RANGE');
  }
  // The tokenizer's overflow: windows of `budget` context tokens, each docStride before the last's end.
  const ranges = [];
  if (n <= budget) ranges.push([0, n]);
  else {
    if (docStride >= budget) {
      throw bad(fn, 'docStride', `docStride (${docStride}) must be below the context tokens a window holds (${budget}: maxSeqLen ${maxSeqLen} ` +
        `less the question's ${q.ids.length} and the template's ${specials})`, 'ERR_OUT_OF_RANGE');
    }
    for (let start = 0; ; start += budget - docStride) {
      const stop = Math.min(start + budget, n);
      ranges.push([start, stop]);
      if (stop === n) break;
    }
  }
  return ranges.map(([s, e]) => {
    const part = { ids: c.ids.subarray(s, e), spans: c.spans.subarray(2 * s, 2 * e) };
    const [a, b] = questionFirst ? [q, part] : [part, q];
    const row = tok._encodeOne(fn, a, b, true, undefined, false);
    // The template's tokens have no span; the first a.ids.length others are sequence 0.
    const seq = new Int8Array(row.ids.length);
    let k = 0;
    for (let i = 0; i < row.ids.length; i++) seq[i] = row.spans[2 * i] < 0 ? -1 : k++ < a.ids.length ? 0 : 1;
    return { ...row, seq, contextSeq: questionFirst ? 1 : 0 };
  });
}

function answer(ctx, fn, o, question, context, maxSeqLen, docStride) {
  const { model, tokenizer } = ctx;
  const rows = windows(ctx, fn, question, context, maxSeqLen, docStride);
  const W = rows.length, L = Math.max(...rows.map((r) => r.ids.length));
  const ids = new Int32Array(W * L).fill(tokenizer.padTokenId ?? 0), types = new Int32Array(W * L), mask = new Int32Array(W * L);
  rows.forEach((r, w) => {
    ids.set(r.ids, w * L);
    types.set(r.types, w * L);
    mask.fill(1, w * L, w * L + r.ids.length);
  });
  const out = model.forward({ data: ids, dims: [W, L] }, {
    attentionMask: { data: mask, dims: [W, L] }, outputLogits: true,
    ...(model.spec.embeddings.typeVocabSize > 0 ? { tokenTypeIds: { data: types, dims: [W, L] } } : {}),
  });
  const preTopK = o.alignToWords ? o.topK * 2 + 10 : o.topK;
  let minNull = 1000000;
  const answers = [];
  rows.forEach((r, w) => {
    const n = r.ids.length;
    // Tokens an answer may hold: the context's, and CLS (kept for "no answer").
    const desired = Array.from(r.seq, (s, i) => s === r.contextSeq || r.ids[i] === tokenizer.clsTokenId);
    const masked = (logits) => Array.from(logits.subarray(w * L, w * L + n), (x, i) => (desired[i] ? x : -10000));
    const ps = softmax(masked(out.startLogits.data)), pe = softmax(masked(out.endLogits.data));
    if (o.handleImpossibleAnswer) minNull = Math.min(minNull, ps[0] * pe[0]);
    ps[0] = pe[0] = 0;
    for (const [s, e, score] of bestSpans(ps, pe, desired, preTopK, o.maxAnswerLen)) {
      const [startChar, endChar] = charSpan(tokenizer, r, s, e, context, o.alignToWords);
      const text = context.slice(startChar, endChar);
      const same = answers.find((a) => a.answer.toLowerCase() === text.toLowerCase());
      if (same) same.score += score;
      else answers.push({ answer: text, score, start: startChar, end: endChar });
    }
  });
  if (o.handleImpossibleAnswer) answers.push({ answer: '', score: minNull, start: 0, end: 0 });
  const best = answers.sort((a, b) => b.score - a.score).slice(0, o.topK);
  return best.length === 1 ? best[0] : best;
}

/**
 * The best k spans [start, end, score] of one window: start <= end < start + maxAnswerLen, both
 * tokens desired (the first token counts as one, as in Hugging Face's decode_spans), scored
 * ps[start] * pe[end], best first (equal scores in start, then end order).
 */
export function bestSpans(ps, pe, desired, k, maxAnswerLen) {
  const ok = (i) => i === 0 || desired[i];
  const spans = [];
  for (let s = 0; s < ps.length; s++) {
    if (!ok(s)) continue;
    for (let e = s; e < Math.min(ps.length, s + maxAnswerLen); e++) if (ok(e)) spans.push([s, e, ps[s] * pe[e]]);
  }
  return spans.sort((a, b) => b[2] - a[2] || a[0] - b[0] || a[1] - b[1]).slice(0, k);
}

// The characters of tokens s..e of a window: their words' (alignToWords) or their own offsets.
function charSpan(tokenizer, r, s, e, context, alignToWords) {
  const span = (i) => (r.spans[2 * i] < 0 ? [0, 0] : [r.spans[2 * i], r.spans[2 * i + 1]]);
  if (!alignToWords || r.seq[s] !== r.contextSeq || r.seq[e] !== r.contextSeq) return [span(s)[0], span(e)[1]];
  const continues = (i) => i > 0 && r.seq[i - 1] === r.contextSeq && isContinuation(tokenizer, r, i, context);
  let a = s, b = e;
  while (continues(a)) a--;
  while (b + 1 < r.ids.length && r.seq[b + 1] === r.contextSeq && isContinuation(tokenizer, r, b + 1, context)) b++;
  return [span(a)[0], span(b)[1]];
}

const CLASS = (c) => (/\p{L}/u.test(c) ? 'L' : /\p{N}/u.test(c) ? 'N' : /\s/u.test(c) ? 'S' : 'P');

// Whether token i of a window continues the word of token i - 1.
function isContinuation(tokenizer, r, i, text) {
  const piece = tokenizer.vocab[r.ids[i]] ?? '';
  const prefix = tokenizer._s.continuingSubwordPrefix;
  if (prefix) return piece.startsWith(prefix);
  const start = r.spans[2 * i];
  if (start !== r.spans[2 * i - 1] || start <= 0) return false; // not right after the token before
  if (piece.startsWith('\u2581')) return false; // SentencePiece's word start
  if (tokenizer.model !== 'bpe' || tokenizer._sp) return true;
  if (piece.startsWith('\u0120')) return false; // byte-level BPE's space
  const before = CLASS(text[start - 1]), here = CLASS(text[start]);
  return before !== 'S' && before === here;
}

// token-classification (NER): a token-classification head's labels per token, or grouped into
// entities, after Hugging Face's TokenClassificationPipeline (pipelines/token_classification.py):
//   - the template's special tokens are skipped; each other token has its softmax scores, its
//     token string (`word`; for the unknown token, the text it covers) and its [start, end) in the text;
//   - a token is a sub-word when the tokenizer has a continuing-subword prefix (WordPiece's ##) and
//     its string's length differs from the text it covers, otherwise (byte-level BPE,
//     SentencePiece) when it starts after 0 and the characters either side of its start hold no
//     space; the unknown token never is;
//   - 'none': one entity per token, {entity, score, index, word, start, end};
//   - 'simple': those grouped: a token joins the group before it when its tag (the label without
//     B- / I-) is the same and it is not a B-; {entity_group, score (the mean), word, start, end};
//   - 'first' / 'average' / 'max': tokens merged into words first (a word: a token and the
//     sub-words after it) with the label of the word's first token, of the mean of its tokens'
//     scores, or of its token with the highest score; then grouped as 'simple';
//   - entities whose label (or group) is in ignoreLabels (default ['O']) are dropped.
// Words of merged tokens are the tokens' strings joined as the tokenizer's decoder joins them.
import { decodeChain } from '../text/decoders.js';
import { bad, encodeBatch, labelOf, oneOfOption, softmax, textsInput } from './common.js';
import { describeModel } from './text_classification.js';

export const STRATEGIES = ['none', 'simple', 'first', 'average', 'max'];

export const tokenClassification = {
  options: ['aggregationStrategy', 'ignoreLabels'],
  defaults: { aggregationStrategy: 'none', ignoreLabels: ['O'] },
  check(fn, o) {
    oneOfOption(fn, 'aggregationStrategy', o.aggregationStrategy, STRATEGIES);
    if (!Array.isArray(o.ignoreLabels) || !o.ignoreLabels.every((l) => typeof l === 'string')) {
      throw bad(fn, 'ignoreLabels', 'ignoreLabels must be an array of label strings');
    }
  },
  create(ctx, fn) {
    if (ctx.model.spec.head?.task !== 'token') {
      throw bad(fn, 'source', `token-classification needs a token-classification model (*ForTokenClassification), got ${describeModel(ctx.model)}`);
    }
  },
  /** texts -> per text, its entities (one list, or one list per text for a list of texts). */
  run(ctx, fn, o, texts) {
    const { texts: list, batched } = textsInput(fn, 'texts', texts);
    const { model, tokenizer } = ctx;
    const enc = encodeBatch(ctx, list);
    const logits = model.forward(enc, { outputLogits: true }).logits;
    const [B, L, C] = logits.dims;
    const special = enc.specialTokensMask.data, ids = enc.inputIds.data;
    const offsets = enc.offsets;
    const prefix = tokenizer._s.continuingSubwordPrefix || null;
    const results = list.map((sentence, b) => {
      const pre = [];
      for (let i = 0; i < L; i++) {
        if (special[b * L + i]) continue;
        const id = ids[b * L + i];
        const [start, end] = offsets[b][i];
        const ref = sentence.slice(start, end);
        let word = tokenizer.vocab[id];
        let isSubword = prefix ? word.length !== ref.length
          : start > 0 && !sentence.slice(start - 1, start + 1).includes(' ');
        if (id === tokenizer.unkTokenId) {
          word = ref;
          isSubword = false;
        }
        pre.push({ word, scores: softmax(logits.data.subarray((b * L + i) * C, (b * L + i + 1) * C)), start, end, index: i, isSubword });
      }
      return aggregate(pre, o.aggregationStrategy, (i) => labelOf(model, i), (tokens) => tokensToString(tokenizer, tokens))
        .filter((e) => !o.ignoreLabels.includes(e.entity ?? e.entity_group));
    });
    return batched ? results : results[0];
  },
};

/**
 * Hugging Face's aggregation over a text's tokens {word, scores, start, end, index, isSubword}:
 * label(i) names class i, join(words) joins token strings into text.
 */
export function aggregate(pre, strategy, label, join) {
  let entities;
  if (strategy === 'none' || strategy === 'simple') {
    entities = pre.map((p) => {
      const k = argmax(p.scores);
      return { entity: label(k), score: p.scores[k], index: p.index, word: p.word, start: p.start, end: p.end };
    });
    if (strategy === 'none') return entities;
  } else {
    entities = [];
    let group = null;
    for (const p of pre) {
      if (group === null) group = [p];
      else if (p.isSubword) group.push(p);
      else {
        entities.push(aggregateWord(group, strategy, label, join));
        group = [p];
      }
    }
    if (group !== null) entities.push(aggregateWord(group, strategy, label, join));
  }
  return groupEntities(entities, join);
}

function aggregateWord(tokens, strategy, label, join) {
  let scores;
  if (strategy === 'first') scores = tokens[0].scores;
  else if (strategy === 'max') {
    // The token whose best score is the highest (the first of equals).
    let best = tokens[0], bestMax = Math.max(...tokens[0].scores);
    for (const t of tokens.slice(1)) {
      const m = Math.max(...t.scores);
      if (m > bestMax) [best, bestMax] = [t, m];
    }
    scores = best.scores;
  } else {
    scores = new Float64Array(tokens[0].scores.length);
    for (const t of tokens) for (let i = 0; i < scores.length; i++) scores[i] += t.scores[i] / tokens.length;
  }
  const k = argmax(scores);
  return { entity: label(k), score: scores[k], word: join(tokens.map((t) => t.word)), start: tokens[0].start, end: tokens.at(-1).end };
}

// B- / I- prefixes: anything else is taken as I- of itself.
function tagOf(entity) {
  if (entity.startsWith('B-')) return ['B', entity.slice(2)];
  if (entity.startsWith('I-')) return ['I', entity.slice(2)];
  return ['I', entity];
}

function groupEntities(entities, join) {
  const groups = [];
  let open = [];
  const close = () => {
    const score = open.reduce((s, e) => s + e.score, 0) / open.length;
    groups.push({
      entity_group: open[0].entity.slice(open[0].entity.indexOf('-') + 1), // after the first '-', if any
      score, word: join(open.map((e) => e.word)), start: open[0].start, end: open.at(-1).end,
    });
  };
  for (const e of entities) {
    if (open.length === 0) {
      open.push(e);
      continue;
    }
    const [bi, tag] = tagOf(e.entity);
    const [, lastTag] = tagOf(open.at(-1).entity);
    if (tag === lastTag && bi !== 'B') open.push(e);
    else {
      close();
      open = [e];
    }
  }
  if (open.length) close();
  return groups;
}

function argmax(v) {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
  return best;
}

/**
 * Token strings joined as transformers' convert_tokens_to_string does: through the tokenizer's
 * decoder (tokenizer.json), WordPiece's "##" joining (vocab.txt), or byte-level BPE's bytes.
 */
export function tokensToString(tokenizer, tokens) {
  const s = tokenizer._s;
  if (s.decoder) return s.decoder.length ? decodeChain(tokens, s.decoder) : tokens.join(' ');
  if (tokenizer.model === 'bpe' && !tokenizer._sp) return decodeChain(tokens, [{ type: 'byteLevel' }]);
  if (tokenizer.model === 'wordpiece') return decodeChain(tokens, [{ type: 'wordPiece', prefix: s.continuingSubwordPrefix ?? '##', cleanup: true }]);
  return tokens.join('').replace(/\u2581/g, ' ').trim();
}

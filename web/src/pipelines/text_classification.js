// text-classification: a sequence-classification head's scores as [{label, score}], shaped as
// transformers.js returns them. The score function follows Hugging Face's TextClassificationPipeline:
// none for problem_type "regression", sigmoid for "multi_label_classification" or one label,
// softmax otherwise; functionToApply overrides it.
import { bad, encodeBatch, labelOf, oneOfOption, sigmoid, softmax, textsInput, topKOption } from './common.js';

export const textClassification = {
  options: ['topK', 'functionToApply'],
  defaults: { topK: 1 },
  check(fn, o) {
    topKOption(fn, o.topK, { allowNull: true });
    if (o.functionToApply !== undefined) oneOfOption(fn, 'functionToApply', o.functionToApply, ['softmax', 'sigmoid', 'none']);
  },
  create(ctx, fn) {
    if (ctx.model.spec.head?.task !== 'sequence') {
      throw bad(fn, 'source', `text-classification needs a sequence-classification model (*ForSequenceClassification), got ${describeModel(ctx.model)}`);
    }
  },
  /**
   * texts -> for one text and topK 1, [{label, score}]; for one text, the topK best; for a list,
   * one {label, score} per text (topK 1) or one list per text. topK null: every label.
   */
  run(ctx, fn, o, texts) {
    const { texts: list, batched } = textsInput(fn, 'texts', texts);
    const logits = ctx.model.forward(encodeBatch(ctx, list), { outputLogits: true }).logits;
    const apply = o.functionToApply ?? defaultFunction(ctx);
    const C = logits.dims[1];
    const results = list.map((_, b) => {
      const row = logits.data.subarray(b * C, (b + 1) * C);
      const scores = apply === 'softmax' ? softmax(row) : apply === 'sigmoid' ? Array.from(row, sigmoid) : Array.from(row);
      return rank(ctx.model, scores, o.topK);
    });
    if (o.topK === 1) return results.map((r) => r[0]);
    return batched ? results : results[0];
  },
};

/** Hugging Face's default score function for this model's config.json. */
export function defaultFunction(ctx) {
  const problem = ctx.config?.problem_type;
  const n = ctx.model.spec.head?.numLabels;
  if (problem === 'regression') return 'none';
  if (problem === 'multi_label_classification' || n === 1) return 'sigmoid';
  return 'softmax';
}

/** Labels by score, best first (equal scores in class order), the first topK (null: all). */
export function rank(model, scores, topK) {
  const order = Array.from(scores, (_, i) => i).sort((i, j) => scores[j] - scores[i] || i - j);
  return order.slice(0, topK ?? order.length).map((i) => ({ label: labelOf(model, i), score: scores[i] }));
}

export function describeModel(model) {
  const s = model.spec;
  return s.architecture ? `a ${s.architecture}` : `a ${s.family} model without that head`;
}

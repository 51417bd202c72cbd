// zero-shot-classification: an NLI model (sequence classification with an "entailment" label)
// scores candidate labels, after Hugging Face's ZeroShotClassificationPipeline: each label fills
// hypothesisTemplate's {} and the (text, hypothesis) pair runs through the model (the text
// truncated, never the hypothesis); the entailment id is the first label2id entry whose name
// starts with "entail" (any case), the contradiction id 0 (or the last when entailment is 0).
// One label, or multiLabel: each label's softmax over [contradiction, entailment]; else the
// softmax of the entailment logits over the labels. Labels sorted by score.
import { bad, boolean, encodeBatch, softmax, textsInput } from './common.js';
import { describeModel } from './text_classification.js';

export const zeroShotClassification = {
  options: ['hypothesisTemplate', 'multiLabel'],
  defaults: { hypothesisTemplate: 'This example is {}.', multiLabel: false },
  check(fn, o) {
    if (typeof o.hypothesisTemplate !== 'string' || o.hypothesisTemplate.split('{}').length !== 2) {
      throw bad(fn, 'hypothesisTemplate', `hypothesisTemplate must be a string with one {} where the label goes, got ${JSON.stringify(o.hypothesisTemplate)}`);
    }
    boolean(fn, 'multiLabel', o.multiLabel);
  },
  create(ctx, fn) {
    const { model } = ctx;
    if (model.spec.head?.task !== 'sequence') {
      throw bad(fn, 'source', `zero-shot-classification needs an NLI model (*ForSequenceClassification with an entailment label), got ${describeModel(model)}`);
    }
    const entry = Object.entries(model.config.label2id ?? {}).find(([label]) => label.toLowerCase().startsWith('entail'));
    if (!entry) {
      throw bad(fn, 'label2id', `config.json's label2id names no entailment label (${JSON.stringify(model.config.label2id)}); zero-shot ` +
        'classification needs an NLI model whose labels say which one is entailment');
    }
    ctx.entailment = entry[1];
    ctx.contradiction = entry[1] === 0 ? model.spec.head.numLabels - 1 : 0;
  },
  /**
   * (texts, candidateLabels) -> {sequence, labels, scores} per text, labels best first.
   * candidateLabels: a list, or one string of comma-separated labels.
   */
  run(ctx, fn, o, texts, candidateLabels) {
    const { texts: list, batched } = textsInput(fn, 'texts', texts);
    const labels = typeof candidateLabels === 'string'
      ? candidateLabels.split(',').map((l) => l.trim()).filter(Boolean) : candidateLabels;
    if (!Array.isArray(labels) || labels.length === 0 || !labels.every((l) => typeof l === 'string')) {
      throw bad(fn, 'candidateLabels', 'candidateLabels must be a non-empty list of labels (or a string of comma-separated labels)');
    }
    const hypotheses = labels.map((l) => o.hypothesisTemplate.replace('{}', l));
    const each = o.multiLabel || labels.length === 1;
    const results = list.map((premise) => {
      const enc = encodeBatch(ctx, labels.map(() => premise), { pair: hypotheses, truncation: 'only_first' });
      const logits = ctx.model.forward(enc, { outputLogits: true }).logits;
      const C = logits.dims[1];
      const at = (k, id) => logits.data[k * C + id];
      const scores = each
        ? labels.map((_, k) => softmax([at(k, ctx.contradiction), at(k, ctx.entailment)])[1])
        : Array.from(softmax(labels.map((_, k) => at(k, ctx.entailment))));
      const order = labels.map((_, k) => k).sort((x, y) => scores[y] - scores[x] || x - y);
      return { sequence: premise, labels: order.map((k) => labels[k]), scores: order.map((k) => scores[k]) };
    });
    return batched ? results : results[0];
  },
};

// Each task of ak.pipeline against what PyTorch and Hugging Face's pipeline rules give on the same
// tiny Hub-shaped checkpoints (tests/golden/pipelines.py -> tests/fixtures/pipelines.json): the
// embeddings against sentence-transformers' pooling in torch, classification scores, token
// classification with each aggregation strategy (and the hand-worked cases through the same
// function), fill-mask, question answering over stride windows, zero-shot on an NLI head.
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FIXTURES, ak, close, files, golden, sameScored } from './helpers.mjs';
import { aggregate, tokensToString } from '../../../web/src/pipelines/token_classification.js';
import { windows } from '../../../web/src/pipelines/question_answering.js';

const NLI = (c) => ({ ...c, id2label: golden.zeroShot.id2label, label2id: golden.zeroShot.label2id });

test('feature-extraction: mean, normalized, CLS and no pooling against torch; binary quantization as sentence-transformers', async () => {
  const g = golden.featureExtraction;
  const embed = await ak.pipeline('feature-extraction', path.join(FIXTURES, g.model), { pooling: 'mean', normalize: true });
  try {
    assert.equal(embed.task, 'feature-extraction');
    const normalized = await embed(g.texts);
    assert.deepEqual(normalized.dims, [3, 32]);
    close(normalized.data, g.meanNormalized, 'mean, normalized');
    close((await embed(g.texts, { normalize: false })).data, g.mean, 'mean');
    close((await embed(g.texts, { pooling: 'cls', normalize: false })).data, g.cls, 'cls');
    const none = await embed(g.texts[0], { pooling: 'none', normalize: false });
    assert.deepEqual(none.dims, [1, g.noneFirstLength, 32]);
    close(none.data, g.noneFirst, 'hidden states');
    // One string: a batch of one, as transformers.js returns it.
    assert.deepEqual((await embed(g.texts[1])).dims, [1, 32]);
    const binary = await embed(g.texts, { quantize: true });
    assert.deepEqual([binary.type, binary.dims, Array.from(binary.data)], ['int8', [3, 4], g.binary]);
    const ubinary = await embed(g.texts, { quantize: true, precision: 'ubinary' });
    assert.deepEqual([ubinary.type, Array.from(ubinary.data)], ['uint8', g.ubinary]);
    // No pooling, normalized: each token's vector has norm 1.
    const unit = await embed(g.texts[2], { pooling: 'none' });
    for (let i = 0; i < unit.dims[1]; i++) {
      const v = unit.data.subarray(i * 32, (i + 1) * 32);
      close(Math.hypot(...v), 1, `token ${i}'s norm`);
    }
  } finally {
    embed.dispose();
  }
});

test('text-classification: softmax for single-label problems, sigmoid for multi-label, topK shaped as transformers.js', async () => {
  const g = golden.textClassification;
  const classify = await ak.pipeline('text-classification', files(g.model));
  try {
    // One text, topK 1: a list of one; several texts, topK 1: one result each.
    sameScored(await classify(g.texts[0]), [g.softmax[0][0]], 'one text');
    sameScored(await classify(g.texts), g.softmax.map((r) => r[0]), 'texts');
    sameScored(await classify(g.texts[1], { topK: 2 }), g.softmax[1].slice(0, 2), 'topK 2');
    sameScored(await classify(g.texts, { topK: null }), g.softmax, 'topK null');
    sameScored(await classify(g.texts, { topK: 3, functionToApply: 'none' }), g.none, 'none');
    sameScored(await classify(g.texts[2], { topK: null, functionToApply: 'sigmoid' }), g.sigmoid[2], 'sigmoid');
  } finally {
    classify.dispose();
  }
  // config.json's problem_type picks the function, as in transformers.
  const multi = await ak.pipeline('sentiment-analysis', files(g.model, 'repos/bert', (c) => ({ ...c, problem_type: 'multi_label_classification' })),
    { topK: null });
  sameScored(await multi(g.texts), g.sigmoid, 'multi-label');
  multi.dispose();
  const regression = await ak.pipeline('text-classification', files(g.model, 'repos/bert', (c) => ({ ...c, problem_type: 'regression' })));
  sameScored(await regression(g.texts[0], { topK: null }), g.none[0], 'regression');
  regression.dispose();
});

test('token-classification: every aggregation strategy against Hugging Face\'s rules, with word offsets', async () => {
  const g = golden.tokenClassification;
  const ner = await ak.pipeline('ner', files(g.model));
  try {
    for (const strategy of ['none', 'simple', 'first', 'average', 'max']) {
      const all = await ner(g.texts, { aggregationStrategy: strategy, ignoreLabels: [] });
      g.results.forEach((r, i) => sameScored(all[i], r[strategy], `${strategy}, text ${i}`));
      // The default ignoreLabels drops O (entities and groups).
      const kept = await ner(g.texts[0], { aggregationStrategy: strategy });
      sameScored(kept, g.results[0][strategy].filter((e) => (e.entity ?? e.entity_group) !== 'O'), `${strategy}, without O`);
      // Word strategies: each group's word is the text it spans (lowercased by the tokenizer).
      for (const e of kept) if (!['none', 'simple'].includes(strategy)) assert.equal(e.word.toLowerCase().replace(/ /g, ''), g.texts[0].slice(e.start, e.end).toLowerCase().replace(/ /g, ''));
    }
  } finally {
    ner.dispose();
  }
});

test('token-classification: the hand-worked cases (sub-word merging, B- / I- tags) group as written by hand', async () => {
  const tokenizer = await ak.Tokenizer.fromPretrained(path.join(FIXTURES, 'repos/bert'));
  try {
    const join = (tokens) => tokensToString(tokenizer, tokens);
    for (const c of golden.tokenClassification.hand) {
      const pre = c.tokens.map((t) => ({ ...t, isSubword: t.is_subword }));
      for (const strategy of ['none', 'simple', 'first', 'average', 'max']) {
        const got = aggregate(pre, strategy, (i) => c.labels[i], join);
        sameScored(got, c.expected[strategy], `${c.name}, ${strategy}`);
      }
      for (const [strategy, groups] of Object.entries(c.byHand)) {
        const got = aggregate(pre, strategy, (i) => c.labels[i], join);
        assert.deepEqual(got.map((e) => [e.entity_group, e.word, e.start, e.end]), groups.map((x) => x.slice(0, 4)), `${c.name}, ${strategy}`);
        got.forEach((e, i) => close(e.score, groups[i][4], `${c.name}, ${strategy}, score ${i}`, 1e-12, 0));
      }
    }
  } finally {
    tokenizer.dispose();
  }
});

test('fill-mask: softmax at the mask, topK, token_str and sequence; one list per mask when there are several', async () => {
  const g = golden.fillMask;
  const unmask = await ak.pipeline('fill-mask', files(g.model));
  try {
    sameScored(await unmask(g.texts[0]), g.results[0], 'one mask');
    sameScored(await unmask(g.texts[1]), g.results[1], 'two masks');
    sameScored(await unmask(g.texts), g.results, 'a list of texts');
    sameScored(await unmask(g.texts[0], { topK: 2 }), g.results[0].slice(0, 2), 'topK 2');
    await assert.rejects(unmask('the cat sat'), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /no mask token \(\[MASK\]\)/.test(e.message));
  } finally {
    unmask.dispose();
  }
});

test('question-answering: spans over stride windows with character offsets, as Hugging Face\'s pipeline', async () => {
  const g = golden.questionAnswering;
  const qa = await ak.pipeline('question-answering', files(g.model));
  try {
    for (const c of g.cases) {
      const question = c.question ?? g.question, context = c.context ?? g.context;
      const got = await qa(question, context, c.options);
      sameScored(got, c.result, JSON.stringify(c.options));
      const maxSeqLen = c.options.maxSeqLen ?? 40;
      assert.equal(windows(qa, 'qa', question, context, maxSeqLen, c.options.docStride ?? Math.min(maxSeqLen >> 1, 128)).length, c.windows);
      for (const a of [got].flat()) assert.equal(context.slice(a.start, a.end), a.answer);
    }
    // Lists of questions and contexts, or several questions on one context: one result each.
    const [a, b] = g.cases.slice(-1).concat(g.cases[0]);
    sameScored(await qa([a.question, g.question], [a.context, g.context], { topK: 2 }), [a.result, (await qa(g.question, g.context, { topK: 2 }))], 'lists');
    sameScored(await qa([g.question, g.question], g.context), [b.result, b.result], 'one context');
  } finally {
    qa.dispose();
  }
});

test('zero-shot-classification: NLI pairs, the entailment id from label2id, single- and multi-label scores', async () => {
  const g = golden.zeroShot;
  const zs = await ak.pipeline('zero-shot-classification', files(g.model, 'repos/bert', NLI));
  try {
    for (const c of g.cases) {
      sameScored(await zs(c.premise, c.labels, { hypothesisTemplate: c.hypothesisTemplate, multiLabel: c.multiLabel }), c.expected, c.premise);
    }
    const [c] = g.cases;
    sameScored(await zs([c.premise], c.labels.join(', ')), [c.expected], 'a list, labels as one string');
  } finally {
    zs.dispose();
  }
  // A classifier without an entailment label is refused when the pipeline is made.
  await assert.rejects(ak.pipeline('zero-shot-classification', files(g.model)),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'label2id' && /no entailment label/.test(e.message));
});

// What pipeline() and its calls accept: tasks and their aliases, options given when the pipeline is
// made (defaults) or per call, every option checked (unknown keys refused with the closest name,
// transformers.js's snake_case names pointed to their camelCase), the wrong model for a task,
// sources, dispose(), and the top-level pipeline() of transformers.js's form.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES, ak, files, golden } from './helpers.mjs';
import * as attnkit from '../../../web/attnkit.js';
import { DEFAULT_MODELS, TASKS } from '../../../web/src/pipelines/pipeline.js';

const BERT = path.join(FIXTURES, 'repos/bert');
const code = (c, re, argument) => (e) => e.code === c && re.test(e.message) && (argument === undefined || e.argument === argument);

test('tasks: names, transformers.js\'s aliases, suggestions for a misspelt one, the encoder-decoder tasks not yet', async () => {
  assert.deepEqual(Object.keys(TASKS), ['feature-extraction', 'text-classification', 'token-classification', 'fill-mask',
    'question-answering', 'zero-shot-classification', 'text-generation']);
  await assert.rejects(ak.pipeline('text-clasification', BERT), code('ERR_INVALID_ARGUMENT', /unknown task 'text-clasification'; did you mean 'text-classification'\?/, 'task'));
  await assert.rejects(ak.pipeline('summarization', BERT), code('ERR_INVALID_ARGUMENT', /encoder-decoder models/, 'task'));
  await assert.rejects(ak.pipeline('translation_en_to_fr', BERT), code('ERR_INVALID_ARGUMENT', /encoder-decoder models/, 'task'));
  await assert.rejects(ak.pipeline(42, BERT), code('ERR_INVALID_ARGUMENT', /task must be a string/, 'task'));
  const e = await ak.pipeline('embeddings', BERT);
  assert.equal(e.task, 'feature-extraction');
  e.dispose();
});

test('options: checked when the pipeline is made and on each call; unknown ones refused with the closest name', async () => {
  await assert.rejects(ak.pipeline('feature-extraction', BERT, { pooling: 'max' }), code('ERR_INVALID_ARGUMENT', /pooling must be one of 'none', 'mean', 'cls', 'last'/, 'pooling'));
  await assert.rejects(ak.pipeline('feature-extraction', BERT, { poolling: 'mean' }), code('ERR_INVALID_ARGUMENT', /unknown option 'poolling'; did you mean 'pooling'\?/));
  const classify = await ak.pipeline('text-classification', files(golden.textClassification.model), { topK: 2 });
  try {
    assert.equal((await classify('the cat')).length, 2, 'the pipeline\'s topK is the default');
    assert.equal((await classify('the cat', { topK: 1 })).length, 1, 'a call\'s option wins');
    await assert.rejects(classify('the cat', { top_k: 3 }), code('ERR_INVALID_ARGUMENT', /unknown option 'top_k'; did you mean 'topK'\?/, 'top_k'));
    await assert.rejects(classify('the cat', { topK: 0 }), code('ERR_OUT_OF_RANGE', /topK must be an integer >= 1 or null/, 'topK'));
    await assert.rejects(classify('the cat', { functionToApply: 'relu' }), code('ERR_INVALID_ARGUMENT', /functionToApply must be one of/, 'functionToApply'));
    await assert.rejects(classify(42), code('ERR_INVALID_ARGUMENT', /texts must be a string/, 'texts'));
    await assert.rejects(classify([]), code('ERR_INVALID_ARGUMENT', /empty list/));
    await assert.rejects(classify('a', {}, {}), code('ERR_INVALID_ARGUMENT', /got 3 arguments/));
  } finally {
    classify.dispose();
  }
  const ner = await ak.pipeline('token-classification', files('families/bert-tokcls'));
  await assert.rejects(ner('a', { aggregation_strategy: 'simple' }), code('ERR_INVALID_ARGUMENT', /did you mean 'aggregationStrategy'\?/));
  await assert.rejects(ner('a', { aggregationStrategy: 'mean' }), code('ERR_INVALID_ARGUMENT', /'none', 'simple', 'first', 'average', 'max'/));
  await assert.rejects(ner('a', { ignoreLabels: 'O' }), code('ERR_INVALID_ARGUMENT', /ignoreLabels must be an array/));
  ner.dispose();
  const qa = await ak.pipeline('question-answering', files('families/bert-qa'));
  await assert.rejects(qa('where?', ''), code('ERR_INVALID_ARGUMENT', /context is empty/, 'context'));
  await assert.rejects(qa('where?'), code('ERR_INVALID_ARGUMENT', /takes 2 inputs \(question, context\)/));
  await assert.rejects(qa('where?', 'the cat sat on the mat and the dog ran', { maxSeqLen: 12, docStride: 7 }),
    code('ERR_OUT_OF_RANGE', /docStride \(7\) must be below the context tokens a window holds \(7:/, 'docStride'));
  await assert.rejects(qa('the cat sat on the mat the cat sat on the mat', 'the cat', { maxSeqLen: 10 }),
    code('ERR_OUT_OF_RANGE', /leaves no room for the context/, 'question'));
  await assert.rejects(qa(['a?', 'b?'], ['c']), code('ERR_SHAPE_MISMATCH', /as long as the list of questions/, 'context'));
  qa.dispose();
  const zs = await ak.pipeline('zero-shot-classification', files('families/bert-seqcls', 'repos/bert',
    (c) => ({ ...c, id2label: golden.zeroShot.id2label, label2id: golden.zeroShot.label2id })));
  await assert.rejects(zs('a', ['b'], { hypothesisTemplate: 'no slot' }), code('ERR_INVALID_ARGUMENT', /one \{\} where the label goes/));
  await assert.rejects(zs('a', []), code('ERR_INVALID_ARGUMENT', /candidateLabels must be a non-empty list/));
  zs.dispose();
});

test('a model without the task\'s head is refused when the pipeline is made, naming what it is', async () => {
  await assert.rejects(ak.pipeline('text-classification', BERT), code('ERR_INVALID_ARGUMENT', /needs a sequence-classification model/, 'source'));
  await assert.rejects(ak.pipeline('question-answering', files('families/bert-seqcls')), code('ERR_INVALID_ARGUMENT', /got a BertForSequenceClassification/));
  await assert.rejects(ak.pipeline('fill-mask', files('families/bert-qa')), code('ERR_INVALID_ARGUMENT', /needs a masked language model/));
  await assert.rejects(ak.pipeline('text-generation', BERT), code('ERR_INVALID_ARGUMENT', /needs a causal language model/));
  await assert.rejects(ak.pipeline('token-classification', path.join(FIXTURES, 'repos/gpt2')), code('ERR_INVALID_ARGUMENT', /token-classification model/));
});

test('sources: a folder, an object of files (Responses among them), no source; a failed load frees what loaded', async () => {
  await assert.rejects(ak.pipeline('feature-extraction'), code('ERR_INVALID_ARGUMENT', /pass the model's source/, 'source'));
  assert.deepEqual(DEFAULT_MODELS, {}, 'no default models until Hub ids resolve');
  const f = files('repos/bert', 'repos/bert');
  for (const name of ['config.json', 'tokenizer_config.json', 'special_tokens_map.json']) f[name] = new Response(f[name]);
  const embed = await ak.pipeline('feature-extraction', f, { pooling: 'cls' });
  assert.deepEqual((await embed('the cat')).dims, [1, 32]);
  embed.dispose();
  const before = ak.mallocInUse();
  const noTokenizer = files('repos/bert');
  for (const k of Object.keys(noTokenizer)) if (!/config\.json|safetensors/.test(k) || k === 'tokenizer_config.json') delete noTokenizer[k];
  await assert.rejects(ak.pipeline('feature-extraction', noTokenizer), code('ERR_LOAD', /no tokenizer\.json/));
  assert.equal(ak.mallocInUse(), before, 'the model that loaded was freed');
  // onProgress hears the model's and the tokenizer's files: bytes so far, and at the end the total.
  const events = [];
  const gpt2 = await ak.pipeline('text-generation', path.join(FIXTURES, 'repos/gpt2'), { onProgress: (...e) => events.push(e) });
  gpt2.dispose();
  const done = new Set(events.filter(([, , f]) => f.done).map(([, , f]) => f.file));
  assert.ok(['tokenizer.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'].every((f) => done.has(f)), [...done].join());
  assert.ok(events.every(([l], i) => i === 0 || l >= events[i - 1][0]), 'loaded only grows');
  const [loaded, total] = events.at(-1);
  assert.equal(loaded, total);
});

test('a tokenizer without a pad token (GPT-2\'s files) still batches: the pads are masked', async () => {
  const dir = path.join(FIXTURES, 'repos/gpt2');
  const f = Object.fromEntries(fs.readdirSync(dir).map((name) => [name, fs.readFileSync(path.join(dir, name))]));
  f['tokenizer_config.json'] = JSON.stringify({ model_max_length: 32, tokenizer_class: 'GPT2Tokenizer' });
  delete f['special_tokens_map.json'];
  const embed = await ak.pipeline('feature-extraction', f, { pooling: 'last' });
  try {
    assert.equal(embed.tokenizer.padTokenId, null);
    const both = await embed(['the cat sat on', 'hello']);
    const alone = await embed('hello');
    assert.deepEqual(both.dims, [2, 24]);
    for (let i = 0; i < 24; i++) assert.ok(Math.abs(both.data[24 + i] - alone.data[i]) < 1e-5);
  } finally {
    embed.dispose();
  }
});

test('dispose() frees the model and the tokenizer; later calls are ERR_DISPOSED', async () => {
  const before = ak.mallocInUse();
  const embed = await ak.pipeline('feature-extraction', BERT);
  assert.ok(ak.mallocInUse() > before);
  embed.dispose();
  embed.dispose();
  assert.equal(ak.mallocInUse(), before);
  await assert.rejects(embed('the cat'), code('ERR_DISPOSED', /feature-extraction: this pipeline was disposed/));
});

test('the top-level pipeline(task, source, options) is transformers.js\'s form, on the default module', async () => {
  const embed = await attnkit.pipeline('feature-extraction', BERT, { pooling: 'mean', normalize: true });
  const g = golden.featureExtraction;
  const out = await embed(g.texts);
  assert.deepEqual(out.dims, [3, 32]);
  assert.ok(Math.abs(out.data[0] - g.meanNormalized[0]) < 1e-5);
  embed.dispose();
});

// Inputs as transformers.js users pass them, and the Tensor helpers they reach for: model.forward
// takes tokenizer.encode's whole result; pooling a padded batch without its mask is refused (never
// silently wrong); Tensor get / tolist / argmax / topk / slice (torch's semantics: NaN the largest,
// ties in index order, Python's slice rules).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FIXTURES, ak, close } from './helpers.mjs';
import { Tensor } from '../../../web/attnkit.js';

const BERT = path.join(FIXTURES, 'repos/bert');
const TEXTS = ['the cat sat on the mat', 'hello world'];

test('model.forward(tokenizer.encode(texts, { padding: true })): the encoding\'s ids, mask and token types', async () => {
  const [model, tokenizer] = await Promise.all([ak.Model.fromPretrained(BERT), ak.Tokenizer.fromPretrained(BERT)]);
  try {
    const enc = tokenizer.encode(TEXTS, { padding: true, pair: ['a dog', 'the cat ran'] });
    const whole = model.forward(enc, { pooling: 'mean' });
    const parts = model.forward(enc.inputIds, { attentionMask: enc.attentionMask, tokenTypeIds: enc.tokenTypeIds, pooling: 'mean' });
    assert.deepEqual(Array.from(whole.lastHiddenState.data), Array.from(parts.lastHiddenState.data));
    assert.deepEqual(Array.from(whole.pooled.data), Array.from(parts.pooled.data));
    // Options beside it win (here a mask of ones: every pad counts).
    const ones = { data: new Int32Array(enc.inputIds.size).fill(1), dims: enc.inputIds.dims };
    const unmasked = model.forward(enc, { attentionMask: ones, pooling: 'mean' });
    assert.notDeepEqual(Array.from(unmasked.pooled.data), Array.from(whole.pooled.data));
    // A model without token types (DistilBERT) takes the encoding too: its token types are left out.
    const distil = await ak.Model.fromPretrained(path.join(FIXTURES, 'families/distilbert-mlm'));
    const a = distil.forward(tokenizer.encode(TEXTS, { padding: true }), { outputLogits: true });
    const b = distil.forward(tokenizer.encode(TEXTS, { padding: true }).inputIds, { attentionMask: tokenizer.encode(TEXTS, { padding: true }).attentionMask, outputLogits: true });
    assert.deepEqual(Array.from(a.logits.data), Array.from(b.logits.data));
    distil.dispose();
    // transformers' special_tokens_mask: 1 for the template's tokens and padding.
    assert.deepEqual(tokenizer.encode(TEXTS, { padding: true }).specialTokensMask.tolist(),
      [[1, 0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 1, 1, 1, 1, 1]]);
  } finally {
    model.dispose();
    tokenizer.dispose();
  }
});

test('pooling a padded batch without its mask is an error, with or without the encoding\'s marker', async () => {
  const [model, tokenizer] = await Promise.all([ak.Model.fromPretrained(BERT), ak.Tokenizer.fromPretrained(BERT)]);
  try {
    const enc = tokenizer.encode(TEXTS, { padding: true });
    assert.throws(() => model.forward(enc.inputIds, { pooling: 'mean' }),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'attentionMask' && /padded batch without its mask/.test(e.message));
    // The same ids as plain arrays: config.json's pad_token_id (0) in them says padding.
    assert.throws(() => model.forward(enc.inputIds.tolist(), { pooling: 'cls' }),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && /inputIds\[1\] holds the pad id 0/.test(e.message));
    // Unpadded rows, or the mask given, pool.
    const one = tokenizer.encode(TEXTS[0]);
    assert.deepEqual(model.forward(one.inputIds, { pooling: 'mean' }).pooled.dims, [1, 32]);
    const masked = model.forward(enc.inputIds, { attentionMask: enc.attentionMask, pooling: 'mean' }).pooled;
    // Row 1 pooled with its mask is row 1 alone: the pads do not count.
    const alone = model.forward(tokenizer.encode(TEXTS[1]).inputIds, { pooling: 'mean' }).pooled;
    close(masked.data.subarray(32), alone.data, 'masked pooling', 1e-5, 1e-4);
    // Without pooling nothing changes (the hidden states of every position, as asked).
    assert.deepEqual(model.forward(enc.inputIds).lastHiddenState.dims, [2, 8, 32]);
  } finally {
    model.dispose();
    tokenizer.dispose();
  }
});

test('Tensor.get, tolist: elements by index (negative from the end), nested arrays', () => {
  const t = new Tensor('float32', Float32Array.from({ length: 24 }, (_, i) => i), [2, 3, 4]);
  assert.equal(t.get(1, 2, 3), 23);
  assert.equal(t.get(-1, 0, -2), 14);
  assert.deepEqual(t.tolist()[1][2], [20, 21, 22, 23]);
  assert.equal(new Tensor('float32', Float32Array.of(5), []).tolist(), 5);
  assert.equal(new Tensor('float32', Float32Array.of(5), []).get(), 5);
  assert.deepEqual(new Tensor('int64', BigInt64Array.of(1n, 2n), [2]).tolist(), [1n, 2n]);
  assert.throws(() => t.get(0, 3, 0), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'indices[1]');
  assert.throws(() => t.get(0, 0), (e) => e.code === 'ERR_SHAPE_MISMATCH' && /takes 3 indices, got 2/.test(e.message));
  assert.throws(() => t.get(0, 0.5, 0), (e) => e.code === 'ERR_INVALID_ARGUMENT');
});

test('Tensor.argmax and topk along an axis: first of equals, NaN the largest, [values, indices] and .values / .indices', () => {
  const t = new Tensor('float32', Float32Array.of(1, 5, 5, 2, /**/ 7, NaN, 0, 7, /**/ 3, 3, 3, 3), [3, 4]);
  assert.deepEqual(t.argmax().tolist(), [1, 1, 0]);
  assert.deepEqual(t.argmax(0).tolist(), [1, 1, 0, 1]);
  assert.deepEqual(t.argmax(-2).dims, [4]);
  const [values, indices] = t.topk(2);
  assert.deepEqual(indices.tolist(), [[1, 2], [1, 0], [0, 1]]);
  assert.deepEqual(values.tolist().map((r) => r.map(String)), [['5', '5'], ['NaN', '7'], ['3', '3']]);
  const both = t.topk(2);
  assert.deepEqual([both.values, both.indices], [both[0], both[1]]);
  const byRow = t.topk(1, 0);
  assert.deepEqual([byRow.values.dims, byRow.indices.tolist()], [[1, 4], [[1, 1, 0, 1]]]);
  assert.deepEqual(new Tensor('int32', Int32Array.of(4, 9, 1), [3]).topk(3).values.tolist(), [9, 4, 1]);
  assert.equal(t.topk(0).values.size, 0);
  assert.throws(() => t.topk(5), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'k');
  assert.throws(() => t.argmax(2), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'axis');
});

test('Tensor.slice: a batch row, a head, ranges with Python\'s rules; the top-attended key per head in one line', async () => {
  const t = new Tensor('float32', Float32Array.from({ length: 24 }, (_, i) => i), [2, 3, 4]);
  assert.deepEqual(t.slice(1).tolist(), [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]);
  assert.deepEqual(t.slice(null, 2).tolist(), [[8, 9, 10, 11], [20, 21, 22, 23]]);
  assert.deepEqual(t.slice(0, [1, null], [-2, null]).tolist(), [[6, 7], [10, 11]]);
  assert.deepEqual(t.slice([5, 9]).dims, [0, 3, 4]);
  assert.deepEqual(t.slice(-1, -1, -1).dims, []);
  assert.equal(t.slice(-1, -1, -1).tolist(), 23);
  assert.throws(() => t.slice(2), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'slices[0]');
  assert.throws(() => t.slice(0, 0, 0, 0), (e) => e.code === 'ERR_SHAPE_MISMATCH');
  assert.throws(() => t.slice([0, 1, 2]), (e) => e.code === 'ERR_INVALID_ARGUMENT');
  // The example: which key each head of the last layer attends to most, for query 2.
  const [model, tokenizer] = await Promise.all([ak.Model.fromPretrained(BERT), ak.Tokenizer.fromPretrained(BERT)]);
  try {
    const { attentions } = model.forward(tokenizer.encode(TEXTS[0]), { outputAttentions: true });
    const att = attentions.at(-1); // [1, heads, L, L]
    const top = att.slice(0).argmax(-1); // [heads, L]
    const [, H, L] = att.dims;
    for (let h = 0; h < H; h++) {
      const row = Array.from(att.data.subarray((h * L + 2) * L, (h * L + 3) * L));
      assert.equal(top.get(h, 2), row.indexOf(Math.max(...row)));
    }
  } finally {
    model.dispose();
    tokenizer.dispose();
  }
});

// Generation on both builds against tests/fixtures/generation.json: greedy decoding with the KV
// cache token-exact against a PyTorch loop that re-runs the whole sequence (single prompts and
// left-padded batches, GPT-2 and LLaMA), cached logits equal to a re-run, eos and stop strings,
// streaming and cancellation, seeded sampling, and the options' errors.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tensor } from '../../../web/attnkit.js';
import { createRng } from '../../../web/src/models/sampling.js';
import { ROOT, backends, fixture, assertClose } from '../helpers.mjs';

const fx = fixture('generation.json');
const [simd, scalar] = await backends();
const file = (dir, name) => fs.readFileSync(path.join(ROOT, 'tests/fixtures', dir, name));
const load = (ak, dir) => ak.Model.fromPretrained({
  config: file(dir, 'config.json').toString('utf8'), weights: new Uint8Array(file(dir, 'model.safetensors')),
});
const inputs = (c) => ({
  ids: new Tensor('int32', Int32Array.from(c.inputIds), c.dims),
  attentionMask: new Tensor('int32', Int32Array.from(c.attentionMask), c.dims),
});
const name = (c) => `${c.model} [${c.dims}]`;

// A GPT-2 byte-level tokenizer for gpt2-gen's 96 ids: printable ASCII (space as 'Ġ') and <|endoftext|> = 95.
async function asciiTokenizer(ak) {
  const vocab = {};
  for (let c = 0x20; c < 0x7f; c++) vocab[c === 0x20 ? '\u0120' : String.fromCharCode(c)] = c - 0x20;
  vocab['<|endoftext|>'] = 95;
  return ak.Tokenizer.fromGpt2(JSON.stringify(vocab), '#version: 0.2\n');
}

test('the seeded generator is xoshiro128** seeded by fmix32, as the reference C code computes it', () => {
  // From Vigna's xoshiro128** next() in C with the same seeding, seed 0 (not from this code).
  const r = createRng(0);
  assert.deepEqual([r.next(), r.next(), r.next()], [3809008728, 1133695204, 53579671]);
  const u = createRng(2 ** 32 - 1).uniform();
  assert.ok(u >= 0 && u < 1);
});

for (const ak of [simd, scalar]) {
  const models = {};
  for (const c of fx.cases) models[c.model] ??= await load(ak, c.dir);

  for (const c of fx.cases) {
    test(`${ak.backend}: greedy generation of ${name(c)} is PyTorch's, token for token`, async () => {
      const model = models[c.model];
      const { ids, attentionMask } = inputs(c);
      const r = await model.generate(ids, { attentionMask, maxNewTokens: c.maxNewTokens, eosTokenId: null, outputLogits: true });
      assert.deepEqual(r.sequences.dims, [c.dims[0], c.dims[1] + c.maxNewTokens]);
      assert.deepEqual(Array.from(r.sequences.data), c.sequences);
      assert.equal(r.logits.length, c.maxNewTokens);
      assertClose(r.logits[0].data, c.firstLogits, `${name(c)} first step`, 2e-4, 1e-4);
      assertClose(r.logits.at(-1).data, c.lastLogits, `${name(c)} last step`, 2e-4, 1e-4);
      // The cache held the prompt and every token but the last.
      assert.equal(model.cacheLength, c.dims[1] + c.maxNewTokens - 1);
    });
  }

  test(`${ak.backend}: cached decoding gives the logits of re-running the whole sequence`, async () => {
    for (const c of fx.cases.filter((x) => x.dims[0] > 1)) {
      const model = models[c.model];
      const { ids, attentionMask } = inputs(c);
      const N = 6;
      const r = await model.generate(ids, { attentionMask, maxNewTokens: N, eosTokenId: null, outputLogits: true });
      const [B, L] = c.dims, W = L + N;
      // The whole sequence at once, no cache: the mask and positions generation used.
      const mask = new Int32Array(B * W).fill(1), positions = new Int32Array(B * W);
      for (let b = 0; b < B; b++) {
        mask.set(c.attentionMask.slice(b * L, (b + 1) * L), b * W);
        for (let j = 0, n = 0; j < W; j++) positions[b * W + j] = mask[b * W + j] ? n++ : 1;
      }
      const full = model.forward(r.sequences, {
        attentionMask: new Tensor('int32', mask, [B, W]), positionIds: new Tensor('int32', positions, [B, W]), outputLogits: true,
      }).logits;
      const V = model.spec.embeddings.vocabSize;
      for (let step = 0; step < N; step++) {
        for (let b = 0; b < B; b++) {
          const row = full.data.subarray((b * W + L - 1 + step) * V, (b * W + L + step) * V);
          assertClose(r.logits[step].data.subarray(b * V, (b + 1) * V), row, `${name(c)} step ${step} row ${b}`, 1e-4, 1e-4);
        }
      }
      // forward with useCache, a chunk at a time, continues positions and masks the same way.
      model.resetCache();
      const first = model.forward(ids, { attentionMask, useCache: true, lastTokenOnly: true }).logits;
      assertClose(first.data, r.logits[0].data, `${name(c)} forward useCache`, 1e-5, 1e-5);
      assert.equal(model.cacheLength, L);
      assert.ok(model.cacheBytes > 0);
    }
  });

  test(`${ak.backend}: generation stops rows at eos and pads them; stop strings; streaming text`, async () => {
    const c = fx.cases.find((x) => x.model === 'gpt2-gen' && x.dims[0] === 2);
    const model = models[c.model];
    const { ids, attentionMask } = inputs(c);
    // config.json's eos_token_id (95) ends row 1 early; it continues with the pad (= eos here).
    const r = await model.generate(ids, { attentionMask, maxNewTokens: c.maxNewTokens });
    const [B, L] = c.dims, W = L + c.maxNewTokens;
    const want = c.sequences.slice();
    for (let b = 0; b < B; b++) {
      const at = want.slice(b * W + L, (b + 1) * W).indexOf(95);
      if (at >= 0) want.fill(95, b * W + L + at, (b + 1) * W);
    }
    assert.ok(want.slice(W + L).includes(95), 'the fixture has an eos to stop at');
    assert.deepEqual(Array.from(r.sequences.data), want);

    const tok = await asciiTokenizer(ak);
    const single = fx.cases.find((x) => x.model === 'gpt2-gen' && x.dims[0] === 1);
    const prompt = tok.decode(single.inputIds);
    const newIds = single.sequences.slice(single.dims[1]);
    const pieces = [];
    const t = await model.generateText(tok, prompt, {
      maxNewTokens: 32, eosTokenId: null, onToken: (e) => { pieces.push(e.text); },
    });
    assert.equal(t.text, tok.decode(newIds));
    assert.equal(pieces.join(''), t.text);
    assert.equal(pieces.length, 32);
    // A stop string ends generation at the token that completes it.
    const stop = tok.decode(newIds.slice(2, 4));
    const s = await model.generateText(tok, prompt, { maxNewTokens: 32, eosTokenId: null, stopStrings: [stop] });
    assert.ok(s.text.endsWith(stop) && s.text.length <= tok.decode(newIds.slice(0, 4)).length, s.text);
    // A batch of prompts: left-padded, each row's text.
    const texts = await model.generateText(tok, [prompt, tok.decode([54, 9, 30])], { maxNewTokens: 5, eosTokenId: null });
    assert.equal(texts.text[0], tok.decode(newIds.slice(0, 5)));
    assert.equal(texts.text.length, 2);
    tok.dispose();
  });

  test(`${ak.backend}: onToken streams each step, and an AbortSignal cancels between steps`, async () => {
    const c = fx.cases.find((x) => x.model === 'llama-tiny-bf16' && x.dims[0] === 1);
    const model = models[c.model];
    const { ids } = inputs(c);
    const seen = [];
    const controller = new AbortController();
    await assert.rejects(model.generate(ids, {
      maxNewTokens: 32, eosTokenId: null, signal: controller.signal,
      onToken: async (e) => {
        seen.push(e.tokenIds[0]);
        if (e.step === 2) setTimeout(() => controller.abort(new Error('user stop')), 0);
        await new Promise((r) => setTimeout(r, 5));
      },
    }), (e) => e.code === 'ERR_ABORTED' && e.argument === 'signal' && /user stop/.test(e.message));
    assert.ok(seen.length >= 3 && seen.length < 32, `${seen.length} steps ran`);
    assert.deepEqual(seen, c.sequences.slice(c.dims[1], c.dims[1] + seen.length));
    await assert.rejects(model.generate(ids, { signal: AbortSignal.abort() }), (e) => e.code === 'ERR_ABORTED');
    // The model goes on as before.
    const r = await model.generate(ids, { maxNewTokens: 32, eosTokenId: null });
    assert.deepEqual(Array.from(r.sequences.data), c.sequences);
  });

  test(`${ak.backend}: sampling: topK 1 is greedy; a seed gives the same tokens on both builds; probabilities`, async () => {
    const c = fx.cases.find((x) => x.model === 'gpt2-gen' && x.dims[0] === 2);
    const model = models[c.model];
    const { ids, attentionMask } = inputs(c);
    const greedy = await model.generate(ids, { attentionMask, maxNewTokens: 16, eosTokenId: null });
    const k1 = await model.generate(ids, { attentionMask, maxNewTokens: 16, eosTokenId: null, doSample: true, topK: 1, seed: 7 });
    assert.deepEqual(k1.sequences.data, greedy.sequences.data);
    const opts = { attentionMask, maxNewTokens: 24, eosTokenId: null, doSample: true, temperature: 1.3, topP: 0.95, topK: 0, seed: 1234 };
    const a = await model.generate(ids, opts);
    const other = ak === simd ? scalar : simd;
    const twin = await load(other, c.dir);
    const b = await twin.generate(ids, opts);
    twin.dispose();
    assert.deepEqual(a.sequences.data, b.sequences.data);
    const d = await model.generate(ids, { ...opts, seed: 1235 });
    assert.notDeepEqual(a.sequences.data, d.sequences.data);
    const p = await model.generate(ids, { ...opts, maxNewTokens: 2, outputProbabilities: true, outputScores: true });
    assert.equal(p.probabilities.length, 2);
    for (let b2 = 0; b2 < 2; b2++) {
      const row = p.probabilities[0].data.subarray(b2 * 96, (b2 + 1) * 96);
      assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) < 1e-5);
      assert.ok(row[p.sequences.data[b2 * (c.dims[1] + 2) + c.dims[1]]] > 0);
    }
  });

  test(`${ak.backend}: the first sampled token follows softmax(logits / T) within top-k and top-p (chi-square)`, async () => {
    const c = fx.cases.find((x) => x.model === 'gpt2-gen' && x.dims[0] === 1);
    const model = models[c.model];
    const ids = Int32Array.from(c.inputIds);
    const T = 1.5, topK = 12, topP = 0.9;
    // The reference distribution, computed here from the step's logits: scale, keep the 12 largest,
    // then the smallest set of the most likely whose mass reaches topP.
    const logits = model.forward(ids, { lastTokenOnly: true }).logits.data;
    const order = Array.from(logits.keys()).sort((i, j) => logits[j] - logits[i]).slice(0, topK);
    const z = order.map((i) => Math.exp((logits[i] - logits[order[0]]) / T));
    const sum = z.reduce((x, y) => x + y, 0);
    const kept = [];
    let mass = 0;
    for (let j = 0; j < order.length && mass < topP; j++) {
      kept.push([order[j], z[j] / sum]);
      mass += z[j] / sum;
    }
    const expected = new Map(kept.map(([i, q]) => [i, q / mass]));
    const n = 3000, counts = new Map();
    for (let seed = 0; seed < n; seed++) {
      const r = await model.generate(ids, { maxNewTokens: 1, doSample: true, temperature: T, topK, topP, seed });
      const id = r.sequences.data.at(-1);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const id of counts.keys()) assert.ok(expected.has(id), `token ${id} is outside top-k/top-p but was drawn`);
    let chi2 = 0;
    for (const [id, q] of expected) chi2 += ((counts.get(id) ?? 0) - n * q) ** 2 / (n * q);
    // df = kept - 1 (at most 11): the 0.1% critical value for 11 degrees of freedom is 31.3.
    assert.ok(expected.size >= 3, `${expected.size} tokens kept`);
    assert.ok(chi2 < 31.3, `chi-square ${chi2.toFixed(2)} over ${expected.size} tokens`);
  });

  test(`${ak.backend}: generate refuses bad options by name, leaks nothing, and the model works after`, async () => {
    const c = fx.cases.find((x) => x.model === 'gpt2-gen' && x.dims[0] === 1);
    const model = models[c.model];
    const ids = Int32Array.from(c.inputIds);
    const cases = [
      [{ maxNewTokens: 60 }, 'maxNewTokens', 'ERR_OUT_OF_RANGE', /\[1, 59\]/],
      [{ maxNewTokens: 0 }, 'maxNewTokens', 'ERR_OUT_OF_RANGE'],
      [{ maxNewTokens: '5' }, 'maxNewTokens', 'ERR_INVALID_ARGUMENT'],
      [{ doSample: true, temperature: 0 }, 'temperature', 'ERR_OUT_OF_RANGE'],
      [{ doSample: true, temperature: -1 }, 'temperature', 'ERR_OUT_OF_RANGE'],
      [{ doSample: true, topP: 0 }, 'topP', 'ERR_OUT_OF_RANGE'],
      [{ doSample: true, topP: 1.5 }, 'topP', 'ERR_OUT_OF_RANGE'],
      [{ doSample: true, topK: 2.5 }, 'topK', 'ERR_OUT_OF_RANGE'],
      [{ doSample: true, minP: 2 }, 'minP', 'ERR_OUT_OF_RANGE'],
      [{ doSample: true, seed: -1 }, 'seed', 'ERR_OUT_OF_RANGE'],
      [{ repetitionPenalty: 0 }, 'repetitionPenalty', 'ERR_OUT_OF_RANGE'],
      [{ temperature: 0.7 }, 'temperature', 'ERR_INVALID_ARGUMENT', /doSample: true/],
      [{ doSample: 'yes' }, 'doSample', 'ERR_INVALID_ARGUMENT'],
      [{ maxNewToken: 3 }, 'maxNewToken', 'ERR_INVALID_ARGUMENT', /did you mean 'maxNewTokens'/],
      [{ stopStrings: ['x'] }, 'tokenizer', 'ERR_INVALID_ARGUMENT'],
      [{ eosTokenId: -3 }, 'eosTokenId', 'ERR_OUT_OF_RANGE'],
      [{ padTokenId: 96 }, 'padTokenId', 'ERR_OUT_OF_RANGE'],
      [{ onToken: 3 }, 'onToken', 'ERR_INVALID_ARGUMENT'],
      [{ signal: {} }, 'signal', 'ERR_INVALID_ARGUMENT'],
      [{ attentionMask: [1, 1] }, 'attentionMask', 'ERR_SHAPE_MISMATCH'],
    ];
    const run = async () => {
      for (const [options, argument, code, pattern] of cases) {
        await assert.rejects(model.generate(ids, options), (e) =>
          e.argument === argument && e.code === code && (!pattern || pattern.test(e.message)), JSON.stringify(options));
      }
      await assert.rejects(model.generate(new Int32Array(65).fill(3)), (e) => e.argument === 'inputIds' && e.code === 'ERR_OUT_OF_RANGE');
      await assert.rejects(model.generate([5, 96]), (e) => e.argument === 'inputIds' && e.code === 'ERR_OUT_OF_RANGE');
      // The cache refuses what would pass the context, leaving itself as it was.
      model.resetCache();
      model.forward(new Int32Array(60).fill(3), { useCache: true });
      assert.throws(() => model.forward(new Int32Array(5).fill(3), { useCache: true }), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.argument === 'inputIds');
      assert.throws(() => model.forward([[3], [4]], { useCache: true }), (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === 'inputIds');
      assert.equal(model.cacheLength, 60);
    };
    await run(); // warm-up: scratch and cache storage reach their sizes
    const inUse = ak.mallocInUse();
    await run();
    assert.equal(ak.mallocInUse(), inUse);
    const r = await model.generate(ids, { maxNewTokens: 32, eosTokenId: null });
    assert.deepEqual(Array.from(r.sequences.data), c.sequences);
    // BERT has no causal head to generate with, nor a cache.
    const bert = await load(ak, 'models/bert-tiny');
    await assert.rejects(bert.generate([2, 5]), (e) => e.code === 'ERR_INVALID_ARGUMENT');
    assert.throws(() => bert.forward([2, 5], { useCache: true }), (e) => e.argument === 'useCache');
    bert.dispose();
  });
}

test('sampling: the public steps are generate\'s, and every argument is checked', async () => {
  const { sampling, AttnkitError } = await import('../../../web/attnkit.js');
  const { samplingDistribution } = await import('../../../web/src/models/sampling.js');
  const logits = new Float32Array([2, 1, 0.5, -1, 3]);
  assert.deepEqual(sampling.distribution(logits, { temperature: 0.7, topK: 3, topP: 0.9 }),
    samplingDistribution(logits, { temperature: 0.7, topK: 3, topP: 0.9, minP: 0 }));
  assert.equal(sampling.argmax([1, 5, 5]), 1);
  assert.ok(Math.abs(sampling.softmax([0, 0]).reduce((a, b) => a + b) - 1) < 1e-12);
  assert.deepEqual([sampling.createRng(0).next()], [createRng(0).next()]);
  assert.equal(sampling.sampleFrom([0, 1, 0], 0.5), 1);
  const refused = (f, argument) => assert.throws(f, (e) => e instanceof AttnkitError && e.argument === argument, argument);
  refused(() => sampling.distribution(logits, { temprature: 1 }), 'temprature');
  refused(() => sampling.distribution(logits, { topP: 0 }), 'topP');
  refused(() => sampling.distribution('abc'), 'logits');
  refused(() => sampling.softmax([]), 'scores');
  refused(() => sampling.sampleFrom([1], 1), 'u');
  refused(() => sampling.createRng(-1), 'seed');
});

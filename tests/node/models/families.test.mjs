// The model families from their Hugging Face folders against PyTorch: tiny random checkpoints
// written by tests/golden/families/<family>.py, whose forwards follow each family's modeling_*.py
// (file and version in the fixture's "modeling"). Hidden states, per-head attentions, the heads'
// logits, and 32 greedy tokens of each decoder (a left-padded batch and a single prompt).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, backends, assertClose } from '../helpers.mjs';

const DIR = path.join(ROOT, 'tests/fixtures/families');
const cases = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()
  .map((f) => JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')));
// The families attnkit runs; the fixtures of the others wait for their blocks (issue 35).
const SUPPORTED = new Set(['distilbert', 'xlm-roberta', 'bert', 'llama', 'qwen2', 'qwen3', 'mistral', 'gpt_neox', 'bloom', 'phi3', 'gemma2', 'modernbert']);
// The heads the model core has so far.
const HEADS = new Set(['causalLM', 'maskedLM', 'sequenceClassification', 'tokenClassification']);
const ids = (data, dims) => ({ data: Int32Array.from(data), dims });
const BAD = JSON.parse(fs.readFileSync(path.join(DIR, 'bad/cases.json'), 'utf8')).cases;

test('the family fixtures cover every family the issue names', () => {
  const families = new Set(cases.map((c) => c.family));
  for (const f of ['distilbert', 'xlm-roberta', 'qwen2', 'qwen3', 'mistral', 'phi3', 'gemma2', 'gpt_neox', 'bloom', 'modernbert']) {
    assert.ok(families.has(f), `a fixture of ${f}`);
  }
});

const builds = await backends();
for (const c of cases.filter((c) => SUPPORTED.has(c.family))) {
  const heads = Object.keys(c.logits ?? {});
  if (heads.some((h) => !HEADS.has(h))) continue;
  for (const a of builds) {
    test(`${a.backend}: ${c.name} (${c.architecture}) gives PyTorch's states, attentions and logits`, async () => {
      const model = await a.Model.fromPretrained(path.join(DIR, c.name));
      try {
        assert.deepEqual(model.spec.unknown, [], 'every config.json key is known');
        const [B, L] = c.dims;
        const r = model.forward(ids(c.inputIds, [B, L]), {
          attentionMask: ids(c.attentionMask, [B, L]), tokenTypeIds: c.tokenTypeIds ? ids(c.tokenTypeIds, [B, L]) : undefined,
          outputHiddenStates: true, outputAttentions: true, outputLogits: heads.length > 0 || Boolean(c.startLogits),
        });
        assert.equal(r.hiddenStates.length, c.hiddenStates.length);
        r.hiddenStates.forEach((h, i) => assertClose(h.data, c.hiddenStates[i], `${c.name} hidden state ${i}`, 1e-4, 1e-4));
        r.attentions.forEach((w, i) => assertClose(w.data, c.attentions[i], `${c.name} attentions ${i}`, 2e-5, 1e-4));
        // ModernBERT: the hidden states end before final_norm; lastHiddenState is after it.
        if (c.lastHiddenState) assertClose(r.lastHiddenState.data, c.lastHiddenState, `${c.name} last hidden state`, 1e-4, 1e-4);
        for (const h of heads) assertClose(r.logits.data, c.logits[h], `${c.name} ${h} logits`, 2e-4, 1e-4);
        if (c.startLogits) {
          assertClose(r.startLogits.data, c.startLogits, `${c.name} start logits`, 2e-4, 1e-4);
          assertClose(r.endLogits.data, c.endLogits, `${c.name} end logits`, 2e-4, 1e-4);
          assert.deepEqual(r.startLogits.dims, [B, L]);
        }
        if (c.numLabels && !c.startLogits) {
          assert.equal(model.config.numLabels, c.numLabels);
          assert.equal(r.logits.dims.at(-1), c.numLabels);
          if (c.labels) assert.deepEqual(c.labels.map((_, i) => model.config.id2label[String(i)]), c.labels);
        }
        for (const g of [c.greedy, c.greedySingle].filter(Boolean)) {
          const out = await model.generate(ids(g.inputIds, g.dims), {
            attentionMask: ids(g.attentionMask, g.dims), maxNewTokens: g.newTokens, eosTokenId: null,
          });
          assert.deepEqual(Array.from(out.sequences.data), g.sequences, `${c.name}: ${g.newTokens} greedy tokens of [${g.dims}]`);
        }
      } finally {
        model.dispose();
      }
    });
  }
}

for (const a of builds) {
  test(`${a.backend}: bad family files are refused with coded errors naming the key or tensor`, async () => {
    for (const c of BAD) {
      await assert.rejects(a.Model.fromPretrained(path.join(ROOT, 'tests/fixtures', c.dir)),
        (e) => e.code === c.expectCode && e.argument === c.tensor && /num_labels/.test(e.message), c.name);
    }
    // num_labels that disagrees with id2label; a fused tensor of the wrong size; a missing key.
    const dir = path.join(DIR, 'distilbert-seqcls');
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    const weights = new Uint8Array(fs.readFileSync(path.join(dir, 'model.safetensors')));
    const load = (cfg) => a.Model.fromPretrained({ config: JSON.stringify(cfg), weights });
    await assert.rejects(load({ ...config, num_labels: 4 }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'num_labels');
    const { n_heads: _, ...noHeads } = config;
    await assert.rejects(load(noHeads), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'n_heads');
    await assert.rejects(load({ ...config, id2label: { 0: 'a', 2: 'b' } }), (e) => e.argument === 'id2label');
    // A fused tensor of the wrong size: named by the checkpoint's tensor.
    const neox = path.join(DIR, 'gpt-neox');
    const state = await a.loadSafetensors(new Uint8Array(fs.readFileSync(path.join(neox, 'model.safetensors'))));
    const qkv = 'gpt_neox.layers.1.attention.query_key_value.weight';
    for (const bad of [state.tensors[qkv].data.subarray(1), state.tensors[qkv].data.subarray(12)]) {
      await assert.rejects(a.Model.fromPretrained({ config: fs.readFileSync(path.join(neox, 'config.json'), 'utf8'),
        weights: { ...state.tensors, [qkv]: bad } }), (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === qkv, qkv);
    }
    // The classifier tensor missing: named.
    const { architectures: __, ...base } = config;
    const m = await load(base);
    assert.equal(m.config.numLabels, null, 'no architectures: the base model, no head');
    assert.ok(m.unusedWeights.includes('classifier.weight'));
    m.dispose();
  });
}

for (const a of builds) {
  test(`${a.backend}: a sliding window on every layer bounds the KV cache, and decoding and saved caches stay exact`, async () => {
    const model = await a.Model.fromPretrained(path.join(DIR, 'mistral'));
    try {
      const w = model.spec.slidingWindow;
      const seq = Array.from({ length: 30 }, (_, i) => (i * 11 + 5) % 60 + 2);
      // A left-padded batch of 2, one token at a time: the cache never holds more than 2w positions.
      const B = 2, pad = 3;
      const rows = [seq, [0, 0, 0, ...seq.slice(0, seq.length - pad)]];
      const mask = [Array(seq.length).fill(1), [0, 0, 0, ...Array(seq.length - pad).fill(1)]];
      let max = 0, saved = null, savedAt = 17;
      const steps = [];
      for (let t = 0; t < seq.length; t++) {
        const r = model.forward(ids([rows[0][t], rows[1][t]], [B, 1]),
          { attentionMask: ids([mask[0][t], mask[1][t]], [B, 1]), useCache: true, lastTokenOnly: true });
        steps.push(r.logits.data);
        max = Math.max(max, model.cacheLength);
        if (t === savedAt) saved = model.saveCache();
      }
      assert.ok(max <= 2 * w, `the cache held ${max} positions; the window is ${w}`);
      assert.ok(saved.start > 0, 'the saved cache had dropped its first positions');
      // The same logits as the whole sequence without the cache (positions from the mask).
      const L = seq.length, whole = rows.flat(), m = mask.flat();
      const pos = m.map((v, i) => (v ? mask[Math.floor(i / L)].slice(0, i % L + 1).reduce((s, x) => s + x, 0) - 1 : 1));
      const full = model.forward(ids(whole, [B, L]), { attentionMask: ids(m, [B, L]), positionIds: ids(pos, [B, L]), outputLogits: true });
      const V = model.spec.embeddings.vocabSize;
      for (const t of [5, 12, 29]) {
        for (let b = 0; b < B; b++) {
          const got = steps[t].subarray(b * V, (b + 1) * V), want = full.logits.data.subarray((b * L + t) * V, (b * L + t + 1) * V);
          assertClose(got, want, `step ${t} row ${b}`, 1e-4, 1e-4);
        }
      }
      // A saved cache past its start goes back in and continues exactly.
      model.loadCache(saved);
      const again = model.forward(ids([rows[0][savedAt + 1], rows[1][savedAt + 1]], [B, 1]),
        { attentionMask: ids([1, 1], [B, 1]), useCache: true, lastTokenOnly: true });
      assert.deepEqual(Array.from(again.logits.data), Array.from(steps[savedAt + 1]));
      assert.throws(() => model.loadCache({ ...saved, start: model.contextSize }), (e) => e.code === 'ERR_OUT_OF_RANGE');
    } finally {
      model.dispose();
    }
  });
}

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
const SUPPORTED = new Set(['distilbert', 'xlm-roberta', 'bert', 'qwen2', 'qwen3', 'mistral', 'gpt_neox', 'bloom', 'phi3', 'gemma2', 'modernbert']);
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
    // The classifier tensor missing: named.
    const { architectures: __, ...base } = config;
    const m = await load(base);
    assert.equal(m.config.numLabels, null, 'no architectures: the base model, no head');
    assert.ok(m.unusedWeights.includes('classifier.weight'));
    m.dispose();
  });
}

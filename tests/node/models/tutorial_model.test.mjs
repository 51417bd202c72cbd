// The tutorial's trained model (web/tutorial/model, written by scripts/train_tutorial_model.py):
// attnkit reads its folder in one call, tokenizes as the script's own BPE encoder did, matches
// PyTorch's logits on held-out text, and measures the heads' scores the script measured.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { backends, fixture, assertClose, maxAbsDiff, ROOT } from '../helpers.mjs';
import { headScores } from '../../../web/tutorial/language_model.js';

const DIR = path.join(ROOT, 'web/tutorial/model');
const metrics = JSON.parse(fs.readFileSync(path.join(DIR, 'metrics.json'), 'utf8'));
const golden = fixture('tutorial_model.json');

test('the trained model is small enough to ship with the page', () => {
  const bytes = fs.statSync(path.join(DIR, 'model.safetensors')).size;
  assert.ok(bytes <= 4 * 1024 * 1024, `${bytes} bytes`);
  // What the training script claims, and the page repeats.
  assert.ok(metrics.perplexity.heldOut < metrics.perplexity.unigramHeldOut / 2, JSON.stringify(metrics.perplexity));
});

for (const ak of await backends()) {
  test(`${ak.backend}: the trained model's folder loads in one call and tokenizes as the training script did`, async () => {
    const tokenizer = await ak.Tokenizer.fromPretrained(DIR);
    try {
      assert.equal(tokenizer.vocab.length, 4096);
      for (const [text, ids] of [[golden.text, golden.ids], [metrics.previousToken.text, metrics.previousToken.ids]]) {
        const got = Array.from(tokenizer.encode(text).inputIds.data);
        assert.deepEqual(got.slice(0, ids.length), ids);
        assert.equal(tokenizer.decode(Int32Array.from(got)), text);
      }
    } finally {
      tokenizer.dispose();
    }
  });

  test(`${ak.backend}: the trained model's logits and hidden states match PyTorch on held-out text`, async () => {
    (await ak.Model.fromPretrained(DIR)).dispose(); // the first load sets up 40 bytes that stay
    const before = ak.mallocInUse();
    const model = await ak.Model.fromPretrained(DIR);
    try {
      assert.deepEqual(model.unusedWeights, []);
      const L = golden.ids.length, V = 4096;
      const out = model.forward({ data: Int32Array.from(golden.ids), dims: [1, L] }, { outputLogits: true });
      const picked = [];
      for (let i = 0; i < L; i++) for (const c of golden.columns) picked.push(out.logits.data[i * V + c]);
      assertClose(picked, golden.logits, 'logits', 2e-4, 2e-4);
      assertClose(out.logits.data.subarray((L - 1) * V), golden.lastLogits, 'last logits', 2e-4, 2e-4);
      assertClose(out.lastHiddenState.data, golden.lastHidden, 'last hidden state', 1e-4, 1e-4);
    } finally {
      model.dispose();
    }
    assert.equal(ak.mallocInUse(), before);
  });

  test(`${ak.backend}: the heads' previous-token and induction scores are the training script's`, async () => {
    const model = await ak.Model.fromPretrained(DIR);
    try {
      const s = headScores(model, metrics);
      assert.ok(maxAbsDiff(s.previousToken.flat(), metrics.previousToken.scores.flat()) < 1e-3);
      assert.ok(maxAbsDiff(s.induction.flat(), metrics.induction.scores.flat()) < 1e-3);
      // What the page is for: a head that reads the token before (>= 0.5 of its weight on held-out
      // text) and an induction head (>= 0.3 on the repeated random tokens), measured by attnkit.
      const best = (rows) => Math.max(...rows.flat());
      assert.ok(best(s.previousToken) >= 0.5, `best previous-token score ${best(s.previousToken)}`);
      assert.ok(best(s.induction) >= 0.3, `best induction score ${best(s.induction)}`);
    } finally {
      model.dispose();
    }
  });
}

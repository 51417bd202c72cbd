// One model, callers who do two things at once (issue 33, finding 1): generate() calls on one
// model queue, since they share its KV cache; the cache's other users (forward with useCache,
// resetCache, saveCache, loadCache) are refused with ERR_BUSY while a generate runs; a forward
// without the cache runs between its steps and gets what it gets alone.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AttnkitError } from '../../../web/attnkit.js';
import { ROOT, backends } from '../helpers.mjs';

const file = (dir, name) => fs.readFileSync(path.join(ROOT, 'tests/fixtures/models', dir, name));
const open = (ak, dir) => ak.Model.fromPretrained({
  config: file(dir, 'config.json').toString('utf8'), weights: new Uint8Array(file(dir, 'model.safetensors')),
});
const busy = (e) => e instanceof AttnkitError && e.code === 'ERR_BUSY';

for (const ak of await backends()) {
  for (const dir of ['gpt2-gen', 'llama-tiny-bf16']) {
    test(`${ak.backend}: ${dir}: two generate calls and a forward at once give what each gives alone`, async () => {
      const model = await open(ak, dir);
      const a = { ids: [7, 3, 60, 41, 12], maxNewTokens: 24 };
      const b = { ids: [[1, 50, 12, 33], [2, 9, 8, 17]], maxNewTokens: 16 };
      const probe = [5, 6, 7, 8, 9, 10];
      // Alone, one after another.
      const aloneA = Array.from((await model.generate(a.ids, { maxNewTokens: a.maxNewTokens, eosTokenId: null })).sequences.data);
      const aloneB = Array.from((await model.generate(b.ids, { maxNewTokens: b.maxNewTokens, eosTokenId: null })).sequences.data);
      const aloneF = Array.from(model.forward(probe, { outputLogits: true }).logits.data);

      // At once: both generates started before either runs; a forward (and the cache's users)
      // called from inside the first one's steps.
      const refused = [];
      let between = null;
      const first = model.generate(a.ids, {
        maxNewTokens: a.maxNewTokens, eosTokenId: null,
        onToken: ({ step }) => {
          if (step !== 3) return;
          between = Array.from(model.forward(probe, { outputLogits: true }).logits.data);
          for (const call of [() => model.forward(probe, { useCache: true }), () => model.resetCache(), () => model.saveCache(),
            () => model.loadCache({ batch: 0, length: 0, mask: null, layers: Array.from({ length: model.numLayers }, () => ({ key: new Float32Array(), value: new Float32Array() })) })]) {
            try {
              call();
              refused.push(false);
            } catch (e) {
              refused.push(busy(e));
            }
          }
        },
      });
      const second = model.generate(b.ids, { maxNewTokens: b.maxNewTokens, eosTokenId: null });
      const [ra, rb] = await Promise.all([first, second]);
      assert.deepEqual(Array.from(ra.sequences.data), aloneA);
      assert.deepEqual(Array.from(rb.sequences.data), aloneB);
      assert.deepEqual(between, aloneF);
      assert.deepEqual(refused, [true, true, true, true], 'the cache\'s users are refused with ERR_BUSY during a generate');
      // Once both finished, the cache is free again.
      model.resetCache();
      assert.equal(model.cacheLength, 0);
      model.dispose();
    });
  }

  test(`${ak.backend}: a failed generate does not block the ones queued after it`, async () => {
    const model = await open(ak, 'gpt2-gen');
    const bad = model.generate([7, 3], { maxNewTokens: 0 });
    const good = model.generate([7, 3], { maxNewTokens: 4, eosTokenId: null });
    await assert.rejects(bad, (e) => e instanceof AttnkitError && e.argument === 'maxNewTokens');
    assert.equal((await good).sequences.data.length, 6);
    model.dispose();
  });

  test(`${ak.backend}: a generate interleaved by a caller's cached forward no longer corrupts (refused, tokens unchanged)`, async () => {
    const model = await open(ak, 'gpt2-gen');
    const alone = Array.from((await model.generate([7, 3, 88], { maxNewTokens: 12, eosTokenId: null })).sequences.data);
    let refusedCode = null;
    const r = await model.generate([7, 3, 88], {
      maxNewTokens: 12, eosTokenId: null,
      onToken: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        try {
          model.forward([1, 2, 3], { useCache: true });
        } catch (e) {
          refusedCode = e.code;
        }
      },
    });
    assert.equal(refusedCode, 'ERR_BUSY');
    assert.deepEqual(Array.from(r.sequences.data), alone);
    model.dispose();
  });
}

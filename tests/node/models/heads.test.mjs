// Heads over the base models on both builds against tests/fixtures/heads.json (PyTorch from the
// models fixture's hidden states): BERT's and RoBERTa's masked-LM logits, BERT's pooler, and
// sentence embeddings pooled as sentence-transformers does (mean over the mask, first token, last
// real token), with and without L2 normalisation.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tensor } from '../../../web/attnkit.js';
import { ROOT, backends, fixture, assertClose } from '../helpers.mjs';

const fx = fixture('heads.json');
const [simd, scalar] = await backends();
const file = (dir, name) => fs.readFileSync(path.join(ROOT, 'tests/fixtures', dir, name));
const load = (ak, dir, edit = (t) => t) => ak.loadSafetensors(new Uint8Array(file(dir, 'model.safetensors'))).then(async (state) =>
  new ak.Model(await ak.modelSpec(file(dir, 'config.json').toString('utf8'))).setWeights(edit({ ...state.tensors })));

for (const ak of [simd, scalar]) {
  for (const c of fx.cases) {
    test(`${ak.backend}: ${c.name}: pooled embeddings${c.mlmLogits ? ', the pooler and masked-LM logits' : ''} are PyTorch's`, async () => {
      const model = await load(ak, c.dir);
      assert.deepEqual(model.unusedWeights, []);
      const [B, L] = c.dims;
      const ids = new Tensor('int32', Int32Array.from(c.inputIds), c.dims);
      const attentionMask = new Tensor('int32', Int32Array.from(c.attentionMask), c.dims);
      const tokenTypeIds = c.tokenTypeIds ? new Tensor('int32', Int32Array.from(c.tokenTypeIds), c.dims) : undefined;
      const poolings = ['mean', 'cls', 'last', ...(c.pooler ? ['pooler'] : [])];
      for (const pooling of poolings) {
        const r = model.forward(ids, { attentionMask, tokenTypeIds, pooling });
        assert.deepEqual(r.pooled.dims, [B, model.spec.layer.dim]);
        assertClose(r.pooled.data, c[pooling], `${c.name} ${pooling}`, 1e-4, 1e-4);
        if (c[`${pooling}Normalized`]) {
          const n = model.forward(ids, { attentionMask, tokenTypeIds, pooling, normalize: true }).pooled;
          assertClose(n.data, c[`${pooling}Normalized`], `${c.name} ${pooling} normalized`, 2e-5, 1e-4);
        }
      }
      if (c.mlmLogits) {
        const r = model.forward(ids, { attentionMask, tokenTypeIds, outputLogits: true });
        assert.deepEqual(r.logits.dims, [B, L, model.spec.embeddings.vocabSize]);
        assertClose(r.logits.data, c.mlmLogits, `${c.name} masked-LM logits`, 2e-4, 1e-4);
      }
      assert.throws(() => model.forward(ids, { pooling: 'max' }), (e) => e.argument === 'pooling' && /'mean', 'cls'/.test(e.message));
      assert.throws(() => model.forward(ids, { normalize: true }), (e) => e.argument === 'normalize');
      assert.throws(() => model.forward(ids, { pooling: 'mean', normalize: 1 }), (e) => e.argument === 'normalize');
      if (!c.pooler) assert.throws(() => model.forward(ids, { pooling: 'pooler' }), (e) => e.argument === 'pooling' && /do not have/.test(e.message));
      model.dispose();
    });
  }

  test(`${ak.backend}: a BERT checkpoint without its masked-LM head or pooler loads, and says so when asked`, async () => {
    const dir = fx.cases[0].dir;
    const model = await load(ak, dir, (t) => {
      for (const k of Object.keys(t)) if (k.startsWith('cls.') || k.includes('pooler.dense.bias')) delete t[k];
      return t;
    });
    // A head given in part is off, its tensors listed as unused.
    assert.deepEqual(model.unusedWeights, ['bert.pooler.dense.weight']);
    assert.throws(() => model.forward([2, 5, 3], { outputLogits: true }), (e) => e.argument === 'outputLogits' && /cls\.predictions/.test(e.message));
    assert.throws(() => model.forward([2, 5, 3], { pooling: 'pooler' }), (e) => e.argument === 'pooling' && /lack/.test(e.message));
    assert.equal(model.forward([2, 5, 3], { pooling: 'mean' }).pooled.dims[1], 32);
    model.dispose();
  });
}

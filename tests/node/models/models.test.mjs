// Whole models from Hugging Face files on both builds: tiny BERT, RoBERTa (F16), GPT-2 and LLaMA
// (BF16) checkpoints written by tests/golden/gen_fixtures.py, whose hidden states and attention
// weights PyTorch computed with transformers' modeling code written out.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tensor } from '../../../web/attnkit.js';
import { ROOT, backends, fixture, assertClose } from '../helpers.mjs';

const fx = fixture('models.json');
const [simd, scalar] = await backends();
const file = (dir, name) => fs.readFileSync(path.join(ROOT, 'tests/fixtures', dir, name));

for (const ak of [simd, scalar]) {
  for (const c of fx.cases) {
    test(`${ak.backend}: ${c.name} gives PyTorch's hidden states and attention weights`, async () => {
      const model = await ak.Model.fromPretrained({
        config: file(c.dir, 'config.json').toString('utf8'), weights: new Uint8Array(file(c.dir, 'model.safetensors')),
      });
      const [B, L] = c.dims;
      const ids = new Tensor('int32', Int32Array.from(c.inputIds), [B, L]);
      const attentionMask = new Tensor('int32', Int32Array.from(c.attentionMask), [B, L]);
      const tokenTypeIds = c.tokenTypeIds ? new Tensor('int32', Int32Array.from(c.tokenTypeIds), [B, L]) : undefined;
      const r = model.forward(ids, { attentionMask, tokenTypeIds, outputHiddenStates: true, outputAttentions: true });
      assert.equal(r.hiddenStates.length, c.hiddenStates.length);
      r.hiddenStates.forEach((h, i) => assertClose(h.data, c.hiddenStates[i], `${c.name} hidden state ${i}`, 1e-4, 1e-4));
      assertClose(r.lastHiddenState.data, c.hiddenStates.at(-1), `${c.name} last hidden state`, 1e-4, 1e-4);
      assert.deepEqual(r.lastHiddenState.dims, [B, L, model.spec.layer.dim]);
      assert.equal(r.attentions.length, c.attentions.length);
      r.attentions.forEach((a, i) => {
        assert.deepEqual(a.dims, [B, model.spec.layer.numHeads, L, L]);
        assertClose(a.data, c.attentions[i], `${c.name} attentions ${i}`, 2e-5, 1e-4);
      });
      // Without the extras: the same last state.
      const plain = model.forward(ids, { attentionMask, tokenTypeIds });
      assert.deepEqual(Object.keys(plain), ['lastHiddenState']);
      assert.deepEqual(plain.lastHiddenState.data, r.lastHiddenState.data);
      model.dispose();
      assert.throws(() => model.forward(ids), (e) => e.code === 'ERR_DISPOSED');
    });
  }

  for (const c of fx.cases.filter((c) => c.logits)) {
    test(`${ak.backend}: ${c.name}'s language-model head gives PyTorch's logits, and the last position's alone`, async () => {
      const model = await ak.Model.fromPretrained({
        config: file(c.dir, 'config.json').toString('utf8'), weights: new Uint8Array(file(c.dir, 'model.safetensors')),
      });
      const [B, L] = c.dims, V = model.spec.embeddings.vocabSize;
      const ids = new Tensor('int32', Int32Array.from(c.inputIds), [B, L]);
      const attentionMask = new Tensor('int32', Int32Array.from(c.attentionMask), [B, L]);
      const r = model.forward(ids, { attentionMask, outputLogits: true });
      assert.deepEqual(r.logits.dims, [B, L, V]);
      assertClose(r.logits.data, c.logits, `${c.name} logits`, 2e-4, 1e-4);
      // The last position only: [B, V], the same rows.
      const last = model.forward(ids, { attentionMask, lastTokenOnly: true });
      assert.deepEqual(last.logits.dims, [B, V]);
      for (let b = 0; b < B; b++) {
        assertClose(last.logits.data.subarray(b * V, (b + 1) * V), r.logits.data.subarray((b * L + L - 1) * V, (b * L + L) * V),
          `row ${b}'s last logits`, 1e-6, 1e-6);
      }
      assert.ok(!model.unusedWeights.includes('lm_head.weight'), model.unusedWeights.join());
      assert.equal(model.spec.lmHead, c.name.startsWith('gpt2') ? 'tied' : 'separate');
      // Options are checked like every other.
      assert.throws(() => model.forward(ids, { outputLogits: 1 }), (e) => e.argument === 'outputLogits');
      assert.throws(() => model.forward(ids, { lastToken: true }), (e) => e.argument === 'lastToken' && /lastTokenOnly/.test(e.message));
      model.dispose();
      assert.throws(() => model.forward(ids, { outputLogits: true }), (e) => e.code === 'ERR_DISPOSED');
    });
  }

  test(`${ak.backend}: logits need a head: a LLaMA checkpoint may lack lm_head.weight (BERT's: tests/node/models/heads.test.mjs)`, async () => {
    const dir = 'models/llama-tiny-bf16';
    const state = await ak.loadSafetensors(new Uint8Array(file(dir, 'model.safetensors')));
    const base = { ...state.tensors };
    delete base['lm_head.weight'];
    const cycle = async () => {
      const llama = await ak.Model.fromPretrained({ config: file(dir, 'config.json').toString('utf8'), weights: base });
      assert.equal(llama.forward([1, 2]).lastHiddenState.dims.length, 3); // hidden states need no head
      assert.throws(() => llama.forward([1, 2], { lastTokenOnly: true }), (e) => e.argument === 'lm_head.weight');
      // A head of the wrong shape names the checkpoint's tensor.
      await assert.rejects(ak.Model.fromPretrained({ config: file(dir, 'config.json').toString('utf8'),
        weights: { ...base, 'lm_head.weight': new Tensor('float32', new Float32Array(64 * 31), [64, 31]) } }),
      (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === 'lm_head.weight');
      llama.dispose();
    };
    await cycle(); // the first round grows the module registries once
    const before = ak.mallocInUse();
    await cycle();
    assert.equal(ak.mallocInUse(), before);
  });

  test(`${ak.backend}: Model reports unused tensors and unknown settings, rejects missing weights, leaks nothing`, async () => {
    const dir = 'models/bert-tiny';
    const config = JSON.parse(file(dir, 'config.json'));
    const bytes = new Uint8Array(file(dir, 'model.safetensors'));
    const model = await ak.Model.fromPretrained({ config: { ...config, my_setting: 3 }, weights: bytes });
    assert.deepEqual(model.spec.unknown, ['my_setting']);
    assert.ok(model.spec.ignored.includes('attention_probs_dropout_prob'));
    assert.deepEqual(model.unusedWeights, []); // the pooler and the masked-LM head are taken (tests/node/models/heads.test.mjs)
    model.dispose();
    // config.json as bytes, like the tokenizer files (TextSource in the types).
    const text = file(dir, 'config.json');
    const spec = await ak.modelSpec(config);
    assert.deepEqual(await ak.modelSpec(new Uint8Array(text)), spec);
    assert.deepEqual(await ak.modelSpec(new Uint8Array(text).slice().buffer), spec);

    const state = await ak.loadSafetensors(bytes);
    const partial = { ...state.tensors };
    delete partial['bert.encoder.layer.1.output.dense.bias'];
    const wrong = { ...state.tensors, 'bert.embeddings.LayerNorm.bias': new Tensor('float32', new Float32Array(5), [5]) };
    const failures = async () => {
      await assert.rejects(ak.Model.fromPretrained({ config, weights: partial }),
        (e) => e.argument === 'encoder.layer.1.output.dense.bias' && /lack/.test(e.message));
      await assert.rejects(ak.Model.fromPretrained({ config: { ...config, position_embedding_type: 'relative_key' }, weights: state }),
        (e) => e.argument === 'position_embedding_type');
      await assert.rejects(ak.Model.fromPretrained({ config: '{"model_type": "bert"', weights: state }),
        (e) => e.argument === 'config' && /not valid JSON/.test(e.message));
      await assert.rejects(ak.Model.fromPretrained({ config, weights: bytes.subarray(0, 1000) }),
        (e) => e.code === 'ERR_INVALID_ARGUMENT' || e.code === 'ERR_SHAPE_MISMATCH');
      // Errors name the checkpoint's tensor and its expected dims; a transposed matrix is refused
      // although its element count is right, and so is a layer the config does not have.
      await assert.rejects(ak.Model.fromPretrained({ config, weights: wrong }), (e) =>
        e.argument === 'bert.embeddings.LayerNorm.bias' && /has dims \[5\], expected \[32\]/.test(e.message));
      const q = state.tensors['bert.encoder.layer.0.attention.self.query.weight'];
      await assert.rejects(ak.Model.fromPretrained({ config, weights: { ...state.tensors,
        'bert.encoder.layer.0.attention.self.query.weight': new Tensor('float32', q.data, [q.dims[0] * q.dims[1]]) } }),
      (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === 'bert.encoder.layer.0.attention.self.query.weight' &&
        /expected \[32,32\] \(num_attention_heads \* head size, hidden_size\)/.test(e.message));
      await assert.rejects(ak.Model.fromPretrained({ config, weights: { ...state.tensors,
        'bert.encoder.layer.00.attention.self.query.weight': q } }), (e) => /names layer 00/.test(e.message));
      // Nothing is written before everything is checked: a bad last layer leaves a model's
      // weights as they were.
      const m = new ak.Model(await ak.modelSpec(config)).setWeights(state);
      const before = m.forward([[2, 5, 3]]).lastHiddenState.data;
      const last = 'bert.encoder.layer.1.output.dense.weight';
      const zeros = Object.fromEntries(Object.entries(state.tensors).map(([k, t]) => [k, new Tensor('float32', new Float32Array(t.data.length), t.dims)]));
      zeros[last] = new Tensor('float32', new Float32Array(state.tensors[last].data.length), [state.tensors[last].data.length]);
      assert.throws(() => m.setWeights(zeros), (e) => e.argument === last);
      assert.deepEqual(m.forward([[2, 5, 3]]).lastHiddenState.data, before);
      m.dispose();
      await assert.rejects(ak.Model.fromPretrained({ config, weights: { ...state.tensors,
        'bert.encoder.layer.2.attention.self.query.weight': q } }), (e) => /config.json gives 2 layers/.test(e.message));
      const huge = { ...config, hidden_size: 4096, num_attention_heads: 32, intermediate_size: 16384, num_hidden_layers: 24 };
      await assert.rejects((async () => new ak.Model(await ak.modelSpec(huge)))(),
        (e) => e.code === 'ERR_OUT_OF_MEMORY' && /bytes but the heap has/.test(e.message));
      // A checkpoint far smaller than its config is refused before anything is allocated (the JS
      // fuzzer's find: a 600-byte config asked for gigabytes before the weights were checked).
      await assert.rejects(ak.Model.fromPretrained({ config: huge, weights: state }),
        (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === 'weights' && /describes a model of \d+ values/.test(e.message));
    };
    // Both wasm modules (the core and the loaders). A first pass leaves what stays allocated by
    // design (handle tables' capacity, each module's last error message); the second must add nothing.
    const loadersHeap = await (await import('../../../web/src/runtime/loaders.js')).loaders(ak);
    const inUse = () => [ak.mallocInUse(), loadersHeap.mallocInUse()];
    await failures();
    const before = inUse();
    await failures();
    assert.deepEqual(inUse(), before, 'failed loads return all wasm memory');
  });
}

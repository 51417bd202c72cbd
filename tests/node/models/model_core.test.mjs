// The model core (src/attnkit/models/model.hpp): a forward pass is one call into C++. Its results
// are the same bits as the models assembled from the public modules (Embeddings, EncoderLayer,
// the norms, linear), which is how attnkit ran a model before the core existed: the reference
// below is that per-layer path, kept as the readable definition of what the core computes.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tensor } from '../../../web/attnkit.js';
import { familyTensors } from '../../../web/src/models/families.js';
import { ROOT, backends } from '../helpers.mjs';

const file = (dir, name) => fs.readFileSync(path.join(ROOT, 'tests/fixtures/models', dir, name));

// The per-layer path: every module built from the spec and fed the checkpoint's tensors by the
// family's names; a forward crosses into wasm for the embeddings, each layer, the norm and the head.
function layered(ak, spec, tensors) {
  const f = familyTensors(spec);
  const emb = {}, final = {}, mlm = {}, layers = Array.from({ length: spec.numLayers }, () => ({}));
  let head = null;
  for (const [full, t] of Object.entries(tensors)) {
    const prefix = f.prefixes.find((p) => full.startsWith(p));
    const name = prefix ? full.slice(prefix.length) : full;
    const m = f.layer.exec(name);
    if (f.embeddings[name]) emb[f.embeddings[name]] = t;
    else if (f.final[name]) final[f.final[name]] = t.data;
    else if (m && f.layerWeights[m[2]]) layers[Number(m[1])][f.layerWeights[m[2]]] = t;
    else if (name === 'lm_head.weight') head = t;
    else if (f.mlm?.[name]) mlm[f.mlm[name]] = t.data;
  }
  const embeddings = new ak.Embeddings(spec.embeddings).setWeights(emb);
  const hd = spec.layer.headDim;
  const modules = layers.map((w, i) => {
    const scale = spec.layerScale === 'inverseLayerIdx' ? (spec.layer.scale ?? 1 / Math.sqrt(hd)) / (i + 1) : spec.layer.scale;
    return new ak.EncoderLayer({ ...spec.layer, scale }).setWeights(w);
  });
  const lmHead = head && new ak.Embeddings({ vocabSize: spec.embeddings.vocabSize, dim: spec.layer.dim, positional: 'none', norm: 'none' })
    .setWeights({ word: head });
  const forward = (ids, B, L, mask) => {
    const positions = spec.positionIds === 'padding'
      ? ak.positionIds(B, L, { inputIds: ids, paddingIdx: spec.embeddings.paddingIdx }) : undefined;
    let x = embeddings.forward({ data: ids, dims: [B, L] }, { positionIds: spec.embeddings.positional === 'learned' ? positions : undefined });
    const pad = mask && ak.paddingMaskFromAttentionMask({ data: mask, dims: [B, L] });
    const hidden = [], attentions = [];
    for (const layer of modules) {
      hidden.push(x);
      const r = layer.forward(x, { mask: pad, returnWeights: true });
      attentions.push(r.weights);
      x = r.output;
    }
    if (spec.finalNorm) {
      x = spec.finalNorm.norm === 'rmsnorm' ? ak.rmsNorm(x, { weight: final.weight, eps: spec.finalNorm.eps })
        : ak.layerNorm(x, { gamma: final.weight, beta: final.bias, eps: spec.finalNorm.eps });
    }
    hidden.push(x);
    let logits = null;
    if (mlm.denseWeight) {
      const D = spec.layer.dim, V = spec.embeddings.vocabSize;
      let t = ak.linear(new Tensor('float32', x.data, [B * L, D]), new Tensor('float32', mlm.denseWeight, [D, D]), { bias: mlm.denseBias });
      t = ak.activation(t, spec.family === 'roberta' ? 'gelu' : spec.layer.activation);
      t = ak.layerNorm(t, { gamma: mlm.normWeight, beta: mlm.normBias, eps: spec.layer.eps });
      logits = embeddings._logits('test', t.data, B * L);
      for (let r = 0; r < B * L; r++) for (let v = 0; v < V; v++) logits[r * V + v] += mlm.bias[v];
    } else if (spec.lmHead) {
      logits = (lmHead ?? embeddings)._logits('test', x.data, B * L);
    }
    return { hidden, attentions, logits };
  };
  const dispose = () => [embeddings, ...modules, lmHead].forEach((m) => m?.dispose());
  return { forward, dispose };
}

const same = (got, want, what) => {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < got.length; i++) {
    if (!Object.is(got[i], want[i])) assert.fail(`${what}[${i}]: ${got[i]} vs the per-layer path's ${want[i]}`);
  }
};

for (const ak of await backends()) {
  for (const dir of ['bert-tiny', 'roberta-tiny-f16', 'gpt2-tiny', 'llama-tiny-bf16']) {
    test(`${ak.backend} ${dir}: the C++ model core gives the per-layer path's bits, in one call`, async () => {
      const config = file(dir, 'config.json').toString('utf8');
      const weights = new Uint8Array(file(dir, 'model.safetensors'));
      const model = await ak.Model.fromPretrained({ config, weights });
      const spec = model.spec;
      const ref = layered(ak, spec, (await ak.loadSafetensors(weights)).tensors);
      try {
        const B = 2, L = 7;
        const ids = Int32Array.from({ length: B * L }, (_, i) => (i * 7 + 3) % 60 + 2);
        const mask = Int32Array.from({ length: B * L }, (_, i) => (i >= L + 5 ? 0 : 1));
        const headed = Boolean(spec.lmHead) || Boolean(model._family.mlm);
        const calls = ak.rawCalls;
        const r = model.forward({ data: ids, dims: [B, L] }, {
          attentionMask: { data: mask, dims: [B, L] }, outputHiddenStates: true, outputAttentions: true, outputLogits: headed,
        });
        assert.equal(ak.rawCalls - calls, 1, 'one call into wasm per forward pass');
        const want = ref.forward(ids, B, L, mask);
        r.hiddenStates.forEach((h, i) => same(h.data, want.hidden[i].data, `hidden state ${i}`));
        r.attentions.forEach((a, i) => same(a.data, want.attentions[i].data, `attentions ${i}`));
        same(r.lastHiddenState.data, want.hidden.at(-1).data, 'last hidden state');
        if (headed) same(r.logits.data, want.logits, 'logits');
      } finally {
        model.dispose();
        ref.dispose();
      }
    });
  }

  test(`${ak.backend}: a decoding step is one call, and the core's cache gives the uncached forward's logits`, async () => {
    const model = await ak.Model.fromPretrained({
      config: file('llama-tiny-bf16', 'config.json').toString('utf8'), weights: new Uint8Array(file('llama-tiny-bf16', 'model.safetensors')),
    });
    try {
      // A left-padded batch: the cache keeps the mask, positions count only tokens.
      const prompt = Int32Array.from([0, 0, 5, 9, 11, 3, 7, 8, 4, 6]), mask = Int32Array.from([0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
      model.forward({ data: prompt, dims: [2, 5] }, { attentionMask: { data: mask, dims: [2, 5] }, useCache: true });
      const calls = ak.rawCalls;
      const step = model.forward({ data: Int32Array.from([12, 13]), dims: [2, 1] }, { useCache: true, lastTokenOnly: true });
      assert.equal(ak.rawCalls - calls, 1);
      assert.equal(model.cacheLength, 6);
      // The same positions without the cache: the whole prefix with its mask.
      const whole = Int32Array.from([0, 0, 5, 9, 11, 12, 3, 7, 8, 4, 6, 13]);
      const wmask = Int32Array.from([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
      const pos = Int32Array.from([1, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5]);
      const full = model.forward({ data: whole, dims: [2, 6] }, {
        attentionMask: { data: wmask, dims: [2, 6] }, positionIds: { data: pos, dims: [2, 6] }, lastTokenOnly: true,
      });
      const d = Math.max(...step.logits.data.map((v, i) => Math.abs(v - full.logits.data[i])));
      assert.ok(d < 1e-5, `cached step vs whole prefix: ${d}`);
    } finally {
      model.dispose();
    }
  });
}

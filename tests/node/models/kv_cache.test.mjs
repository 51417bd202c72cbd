// A model's KV cache as a value: saveCache copies it out, loadCache and forward's pastKeyValues put
// it back, in the same model or another of the same shape, and the decoding continues exactly as
// it would have. Bad caches are refused by name, all or nothing, and nothing leaks.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, backends } from '../helpers.mjs';

const file = (dir, name) => fs.readFileSync(path.join(ROOT, 'tests/fixtures/models', dir, name));
const load = (ak, dir) => ak.Model.fromPretrained({
  config: file(dir, 'config.json').toString('utf8'), weights: new Uint8Array(file(dir, 'model.safetensors')),
});
const ids = (a, B = 1) => ({ data: Int32Array.from(a), dims: [B, a.length / B] });

for (const ak of await backends()) {
  for (const dir of ['gpt2-tiny', 'llama-tiny-bf16']) {
    test(`${ak.backend} ${dir}: a saved cache continues the decoding exactly, here and in another model`, async () => {
      const a = await load(ak, dir), b = await load(ak, dir);
      try {
        a.forward(ids([5, 17, 3, 40, 22, 9]), { useCache: true });
        const saved = a.saveCache();
        assert.equal(saved.length, 6);
        assert.equal(saved.batch, 1);
        assert.equal(saved.layers.length, a.numLayers);
        const L = a.spec.layer;
        assert.deepEqual(saved.layers[0].key.dims, [1, L.numKvHeads || L.numHeads, 6, L.headDim]);
        const steps = (m, opts = {}) => [7, 31, 2].map((t, i) => m.forward(ids([t]), { useCache: true, lastTokenOnly: true, ...(i ? {} : opts) }).logits.data);
        const first = steps(a);
        assert.equal(a.cacheLength, 9);
        // Back in the same model, and into a second one through forward's pastKeyValues.
        a.loadCache(saved);
        assert.equal(a.cacheLength, 6);
        assert.deepEqual(steps(a), first);
        assert.deepEqual(steps(b, { pastKeyValues: saved }), first);
        assert.equal(b.cacheLength, 9);
        // An empty cache is a reset.
        b.loadCache({ batch: 0, length: 0, mask: null, layers: saved.layers });
        assert.equal(b.cacheLength, 0);
      } finally {
        a.dispose();
        b.dispose();
      }
    });
  }

  test(`${ak.backend}: a left-padded batch's cache keeps its mask`, async () => {
    const m = await load(ak, 'gpt2-tiny');
    try {
      const mask = { data: Int32Array.from([0, 0, 1, 1, 1, 1, 1, 1]), dims: [2, 4] };
      m.forward(ids([0, 0, 5, 6, 7, 8, 9, 10], 2), { useCache: true, attentionMask: mask });
      const saved = m.saveCache();
      assert.deepEqual(Array.from(saved.mask), Array.from(mask.data));
      const next = m.forward(ids([3, 4], 2), { useCache: true, lastTokenOnly: true }).logits.data;
      m.resetCache();
      const again = m.forward(ids([3, 4], 2), { useCache: true, lastTokenOnly: true, pastKeyValues: saved }).logits.data;
      assert.deepEqual(again, next);
    } finally {
      m.dispose();
    }
  });

  test(`${ak.backend}: bad caches are refused by name, all or nothing, and nothing leaks`, async () => {
    // Twice: the first round also grows the last-error strings to this message's length (their
    // capacity is kept, so that a repeated failure leaves the heap as it was); the second counts.
    let before = 0;
    for (const round of [0, 1]) {
      if (round) before = ak.mallocInUse();
      const m = await load(ak, 'gpt2-tiny');
      try {
        m.forward(ids([1, 2, 3]), { useCache: true });
        const saved = m.saveCache();
        const refuse = (cache, code, re) => assert.throws(() => m.loadCache(cache), (e) => e.code === code && e.argument === 'cache' && re.test(e.message));
        refuse(null, 'ERR_INVALID_ARGUMENT', /saveCache/);
        refuse({ ...saved, layers: saved.layers.slice(1) }, 'ERR_SHAPE_MISMATCH', /one \{key, value\} per layer/);
        refuse({ ...saved, length: m.contextSize + 1 }, 'ERR_OUT_OF_RANGE', /positions/);
        refuse({ ...saved, length: 2.5 }, 'ERR_INVALID_ARGUMENT', /integer/);
        refuse({ ...saved, mask: [1, 1, 1] }, 'ERR_SHAPE_MISMATCH', /mask/);
        refuse({ ...saved, layers: saved.layers.map(() => ({ key: [1], value: [2] })) }, 'ERR_INVALID_ARGUMENT', /Float32Array/);
        assert.equal(m.cacheLength, 3, 'a cache refused before copying leaves the model\'s as it was');
        // Sizes that do not match the layer's shape: the C++ side refuses, naming the layer; every
        // layer is emptied.
        const short = { ...saved, layers: saved.layers.map((l, i) => (i === 1 ? { key: l.key.data.subarray(1), value: l.value.data } : l)) };
        assert.throws(() => m.loadCache(short), (e) => e.code === 'ERR_SHAPE_MISMATCH' && e.argument === 'cache.layers[1]');
        assert.equal(m.cacheLength, 0);
        assert.equal(m.cacheLength, 0);
        assert.throws(() => m.forward(ids([4]), { pastKeyValues: saved }), (e) => e.argument === 'pastKeyValues' && /useCache: true/.test(e.message));
        assert.throws(() => m.forward(ids([4]), { useCache: true, pastKeyValuse: saved }), /pastKeyValues/);
        // A step that does not fit the given cache (its batch) is refused before the cache is
        // replaced: the model's own cache is left as it was.
        m.forward(ids([7, 8]), { useCache: true });
        assert.throws(() => m.forward(ids([4, 5], 2), { useCache: true, pastKeyValues: saved }), (e) => e.argument === 'inputIds');
        assert.equal(m.cacheLength, 2);
        m.resetCache();
        // Still usable: the saved cache goes back in.
        m.loadCache(saved);
        assert.equal(m.forward(ids([4]), { useCache: true }).lastHiddenState.dims[1], 1);
        assert.equal(m.cacheLength, 4);
        m.resetCache();
      } finally {
        m.dispose();
      }
    }
    assert.equal(ak.mallocInUse(), before);
  });
}

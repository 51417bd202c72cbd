// The Embeddings module from JavaScript, on both builds: PyTorch's outputs (fixtures from
// tests/golden/gen_fixtures.py), shapes, argument errors, no writes on failure, no leaks.
import test from 'node:test';
import assert from 'node:assert/strict';
import { AttnkitError } from '../../../web/attnkit.js';
import { backends, fixture, assertClose } from '../helpers.mjs';

const fx = fixture('embeddings.json');
const [simd, scalar] = await backends();
const f32 = (a) => Float32Array.from(a);

function fromCase(ak, c) {
  const cfg = { ...c.config, scale: c.config.scale === 'sqrt' ? true : c.config.scale };
  if (cfg.layout) cfg.sinusoidal = { layout: cfg.layout };
  delete cfg.layout;
  const m = new ak.Embeddings(cfg);
  m.setWeights(Object.fromEntries(Object.entries(c.weights).map(([k, v]) => [k, f32(v)])));
  return m;
}

function smallBert(ak) {
  const m = new ak.Embeddings({ vocabSize: 10, dim: 6, maxPositions: 4, typeVocabSize: 2 });
  m.setWeights({ word: new Float32Array(60).map((_, i) => Math.sin(i)), position: new Float32Array(24).fill(0.25),
    tokenType: new Float32Array(12).map((_, i) => i / 12) });
  return m;
}

for (const ak of [simd, scalar]) {
  test(`${ak.backend}: Embeddings.forward matches the PyTorch modules`, () => {
    assert.ok(fx.cases.length >= 8);
    for (const c of fx.cases) {
      const m = fromCase(ak, c);
      const ids = [];
      for (let b = 0; b < c.batch; b++) ids.push(c.inputIds.slice(b * c.length, (b + 1) * c.length));
      const opts = { pastLength: c.past };
      if (c.tokenTypeIds) opts.tokenTypeIds = Int32Array.from(c.tokenTypeIds);
      if (c.positionIds) opts.positionIds = Int32Array.from(c.positionIds);
      if (c.attentionMask) opts.attentionMask = Int32Array.from(c.attentionMask);
      const t = m.forward(ids, opts);
      assert.deepEqual(t.dims, [c.batch, c.length, c.config.dim], c.name);
      assertClose(t.data, c.out, `${c.name}`, 2e-5, 2e-6);
      m.dispose();
    }
  });

  test(`${ak.backend}: Embeddings shapes: [L] ids give [1, L, dim]; shared [L] positions; out`, () => {
    const m = smallBert(ak);
    const one = m.forward([1, 2, 3]);
    assert.deepEqual(one.dims, [1, 3, 6]);
    const batch = m.forward({ data: Int32Array.from([1, 2, 3, 1, 2, 3]), dims: [2, 3] }, { positionIds: [0, 1, 2] });
    assert.deepEqual(batch.dims, [2, 3, 6]);
    assert.deepEqual(batch.data.subarray(18), one.data);
    const out = new Float32Array(18);
    assert.equal(m.forward([1, 2, 3], { out }).data, out);
    assert.deepEqual(out, one.data);
    assert.deepEqual(m.forward([[1, 2, 3]], { tokenTypeIds: [0, 0, 0] }).data, one.data); // type 0 by default
    assert.notDeepEqual(m.forward([1, 2, 3], { tokenTypeIds: [1, 1, 1] }).data, one.data);
    m.dispose();
  });

  test(`${ak.backend}: Embeddings rejects bad input naming the argument, writes nothing, leaks nothing`, () => {
    const m = smallBert(ak);
    const cases = [
      [() => m.forward([1, 10, 2]), 'ERR_OUT_OF_RANGE', 'inputIds[1]', /inputIds\[1\] must be in \[0, 10\), got 10/],
      [() => m.forward([1, 2, -3]), 'ERR_OUT_OF_RANGE', 'inputIds[2]', /got -3/],
      [() => m.forward(Float32Array.from([1, 2])), 'ERR_INVALID_ARGUMENT', 'inputIds', /Int32Array/],
      [() => m.forward([1, 2.5]), 'ERR_INVALID_ARGUMENT', 'inputIds[1]', /int32 integer, got 2.5/],
      [() => m.forward([[1, 2], [3]]), 'ERR_SHAPE_MISMATCH', 'inputIds[1]', /1 ids, expected 2/],
      [() => m.forward([1, 2], { tokenTypeIds: [0, 2] }), 'ERR_OUT_OF_RANGE', 'tokenTypeIds[1]', /\[0, 2\), got 2/],
      [() => m.forward([1, 2], { tokenTypeIds: [0] }), 'ERR_SHAPE_MISMATCH', 'tokenTypeIds', /expected batch \* length = 2/],
      [() => m.forward([1, 2], { positionIds: [3, 4] }), 'ERR_OUT_OF_RANGE', 'positionIds[1]', /\[0, 4\), got 4/],
      [() => m.forward([1, 2, 3], { pastLength: 2 }), 'ERR_OUT_OF_RANGE', 'length', /maxPositions = 4/],
      [() => m.forward([1, 2], { attentionMask: [1, 2] }), 'ERR_INVALID_ARGUMENT', 'attentionMask[1]', /0 or 1/],
      [() => m.forward([1, 2], { out: new Float32Array(11) }), 'ERR_SHAPE_MISMATCH', 'out', /length 12, got 11/],
      [() => m.setWeights({ word: new Float32Array(59) }), 'ERR_SHAPE_MISMATCH', 'word', /59 elements, expected vocabSize \* dim = 60/],
      [() => m.setWeights({ wordEmbeddings: new Float32Array(60) }), 'ERR_INVALID_ARGUMENT', 'wordEmbeddings', /unknown weight/],
      [() => m.setWeights({ position: [1, 2] }), 'ERR_INVALID_ARGUMENT', 'position', /Float32Array/],
    ];
    const out = new Float32Array(12).fill(-7);
    const check = () => {
      for (const [call, code, argument, message] of cases) {
        assert.throws(call, (e) => e instanceof AttnkitError && e.code === code && e.argument === argument && message.test(e.message),
          `${call}`);
      }
      assert.throws(() => m.forward([1, 99], { out }), /inputIds\[1\]/);
    };
    check();
    assert.ok(out.every((v) => v === -7), 'a failed call wrote into out');
    const before = m.forward([1, 2]).data;
    // A failing setWeights writes none of its weights, even the valid ones before the bad one.
    assert.throws(() => m.setWeights({ word: new Float32Array(60), tokenType: new Float32Array(5) }), /tokenType/);
    assert.deepEqual(m.forward([1, 2]).data, before);

    // The last error's message is kept (its buffer counts as in use), so both measurements follow
    // the same failing call.
    const failTwice = () => {
      try { m.forward([1, 2, 10]); } catch { /* expected */ }
      try { m.forward([1, 2], { positionIds: [0, 9] }); } catch { /* expected */ }
    };
    failTwice();
    const heap = ak.heapSize();
    const inUse = ak.mallocInUse();
    for (let i = 0; i < 10000; i++) failTwice();
    assert.equal(ak.mallocInUse(), inUse);
    assert.equal(ak.heapSize(), heap);
    check();
    m.dispose();
  });

  test(`${ak.backend}: Embeddings config errors, unset weights, dispose`, () => {
    const bad = [
      [{ vocabSize: 10, dim: 7, positional: 'sinusoidal' }, 'dim'],
      [{ vocabSize: 0, dim: 8 }, 'vocabSize'],
      [{ vocabSize: 10, dim: 8, paddingIdx: 10 }, 'paddingIdx'],
      [{ vocabSize: 10, dim: 8, norm: 'batchnorm' }, 'norm'],
      [{ vocabSize: 10, dim: 8, positional: 'rotary' }, 'positional'],
      [{ vocabSize: 10, dim: '8' }, 'dim'],
      [{ vocabSize: 1e6, dim: 1024 }, 'vocabSize * dim'],
    ];
    // Warm-up: the handle table's capacity and the last error's message stay allocated.
    new ak.Embeddings({ vocabSize: 1, dim: 1 }).dispose();
    assert.throws(() => new ak.Embeddings(bad.at(-1)[0]));
    const inUse = ak.mallocInUse();
    for (const [options, argument] of [...bad, bad.at(-1)]) {
      assert.throws(() => new ak.Embeddings(options), (e) => e instanceof AttnkitError && e.argument === argument,
        JSON.stringify(options));
    }
    assert.equal(ak.mallocInUse(), inUse);

    const m = new ak.Embeddings({ vocabSize: 10, dim: 8, maxPositions: 16 });
    assert.throws(() => m.forward([1]), (e) => e.argument === 'word' && /setWeights/.test(e.message));
    m.setWeights({ word: new Float32Array(80) });
    assert.throws(() => m.forward([1]), (e) => e.argument === 'position');
    m.dispose();
    m.dispose();
    assert.throws(() => m.forward([1]), (e) => e.code === 'ERR_DISPOSED');
    assert.throws(() => m.setWeights({}), (e) => e.code === 'ERR_DISPOSED');
    assert.throws(() => new ak.Embeddings(bad.at(-1)[0]));
    assert.equal(ak.mallocInUse(), inUse, 'dispose frees the tables');

    // sinusoidal tables need no weights; scale true is sqrt(dim)
    const s = new ak.Embeddings({ vocabSize: 3, dim: 4, maxPositions: 8, positional: 'sinusoidal', scale: true, norm: 'none' });
    s.setWeights({ word: f32([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]) });
    const pe = ak.sinusoidalPositionalEncoding(2, 4);
    const t = s.forward([1, 0]);
    assert.deepEqual(Array.from(t.data), Array.from(pe.data, (v, i) => (i < 4 ? v + 2 : v)));
    s.dispose();
  });
}

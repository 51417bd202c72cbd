// A full heap is a coded error, not an abort (issue 17): modules of ~1 GiB each are created until
// the 4 GB heap cannot hold another; the failure is ERR_OUT_OF_MEMORY naming the bytes, nothing
// leaks, and the module keeps working. One build (the C++ allocation path is the same in both):
// its wasm memory stays grown for the rest of this test process.
import test from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../../web/attnkit.js';

test('wasm-simd128: modules past the heap ceiling fail with ERR_OUT_OF_MEMORY and the module keeps working', async () => {
  const ak = await load({ simd: true });
  const fill = () => {
    const modules = [];
    let error;
    try {
      // dim 8192, 64 heads: 4 x 8192^2 floats of projections, ~1.07 GB per module.
      for (let i = 0; i < 6; i++) modules.push(new ak.MultiHeadAttention({ dim: 8192, numHeads: 64 }));
    } catch (e) {
      error = e;
    }
    assert.ok(modules.length >= 2, `at least two modules fit (got ${modules.length})`);
    assert.equal(error?.code, 'ERR_OUT_OF_MEMORY', String(error));
    assert.match(error.message, /\d+ bytes/);
    assert.ok(ak.heapSize() > 2 ** 31, 'the heap grew past 2 GiB');
    // A small module made in the full heap works.
    const e = new ak.Embeddings({ vocabSize: 3, dim: 4, positional: 'none', norm: 'none' });
    e.setWeights({ word: new Float32Array([0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]) });
    assert.deepEqual(Array.from(e.forward([2]).data), [5, 6, 7, 8]);
    e.dispose();
    for (const m of modules) m.dispose();
    return modules.length;
  };
  // The first pass leaves what stays by design (handle tables' capacity, the last error's text);
  // the second must return every byte it takes.
  const n = fill();
  const after = ak.mallocInUse();
  assert.equal(fill(), n, 'the same number of modules fits again');
  assert.equal(ak.mallocInUse(), after, 'all module memory is returned');
  assert.ok(Math.abs(ak.layerNorm(new Float32Array([1, 2, 3, 4])).data[0] + 1.3416) < 1e-3);
});

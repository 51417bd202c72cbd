// Hugging Face folders as users have them (issue 18): tests/fixtures/repos holds a BERT folder
// shaped like bert-base-uncased's ("padding": null in tokenizer.json, the pad token in
// tokenizer_config.json, an I64 position_ids buffer) and a GPT-2 folder sharded into two files
// with an index, both written by tests/golden/gen_fixtures.py around the tiny checkpoints whose
// forward passes PyTorch wrote to models.json. Loaded from a folder path, over HTTP from a local
// server, and from an object of file contents.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, assertClose, backends, fixture } from '../helpers.mjs';
import { startServer } from '../../../scripts/serve.mjs';
import { loaders } from '../../../web/src/runtime/loaders.js';

const REPOS = path.join(ROOT, 'tests/fixtures/repos');
const cases = Object.fromEntries(fixture('models.json').cases.map((c) => [c.name, c]));

function checkForward(model, c, what) {
  const r = model.forward({ data: Int32Array.from(c.inputIds), dims: c.dims },
    { attentionMask: { data: Int32Array.from(c.attentionMask), dims: c.dims },
      ...(c.tokenTypeIds ? { tokenTypeIds: { data: Int32Array.from(c.tokenTypeIds), dims: c.dims } } : {}) });
  assertClose(r.lastHiddenState.data, c.hiddenStates.at(-1), what, 1e-4, 1e-3);
}

const { server } = await startServer({ root: ROOT, served: ['tests/fixtures/repos'] });
const base = `http://127.0.0.1:${server.address().port}/tests/fixtures/repos`;
test.after(() => server.close());

for (const ak of await backends()) {
  test(`${ak.backend}: Model.fromPretrained reads a BERT folder and a sharded GPT-2 folder, from disk and over HTTP`, async () => {
    const bert = await ak.Model.fromPretrained(path.join(REPOS, 'bert'));
    checkForward(bert, cases['bert-tiny'], 'bert folder');
    assert.deepEqual(bert.unusedWeights, []); // the pooler and the masked-LM head are read too
    bert.dispose();
    const seen = [];
    const gpt2 = await ak.Model.fromPretrained(`${base}/gpt2/`, { onProgress: (loaded, total) => seen.push([loaded, total]) });
    checkForward(gpt2, cases['gpt2-tiny'], 'gpt2 over HTTP');
    gpt2.dispose();
    const shards = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']
      .reduce((n, f) => n + fs.statSync(path.join(REPOS, 'gpt2', f)).size, 0);
    assert.deepEqual(seen.at(-1), [shards, shards], 'progress counts the bytes of every shard');
    assert.ok(seen.every(([a], i) => i === 0 || a >= seen[i - 1][0]), 'progress only grows');
    // An object of file contents, ids as int64 (transformers.js tensors hold BigInt64Array).
    const files = Object.fromEntries(fs.readdirSync(path.join(REPOS, 'bert')).map((f) => [f, fs.readFileSync(path.join(REPOS, 'bert', f))]));
    const fromObject = await ak.Model.fromPretrained(files);
    const c = cases['bert-tiny'];
    const r = fromObject.forward({ type: 'int64', data: BigInt64Array.from(c.inputIds, BigInt), dims: c.dims },
      { attentionMask: { data: Int32Array.from(c.attentionMask), dims: c.dims }, tokenTypeIds: { data: Int32Array.from(c.tokenTypeIds), dims: c.dims } });
    assertClose(r.lastHiddenState.data, c.hiddenStates.at(-1), 'bert from an object, int64 ids', 1e-4, 1e-3);
    fromObject.dispose();
  });

  test(`${ak.backend}: the RoBERTa (F16) and LLaMA (BF16, GQA, RoPE scaling) fixture folders load by path and match PyTorch`, async () => {
    for (const [name, dir] of [['roberta-tiny-f16', 'models/roberta-tiny-f16'], ['llama-tiny-bf16', 'models/llama-tiny-bf16']]) {
      const model = await ak.Model.fromPretrained(path.join(ROOT, 'tests/fixtures', dir));
      checkForward(model, cases[name], name);
      model.dispose();
    }
  });

  test(`${ak.backend}: Tokenizer.fromPretrained takes the pad token, model_max_length and padding_side from the config files`, async () => {
    const bert = await ak.Tokenizer.fromPretrained(path.join(REPOS, 'bert'));
    assert.equal(bert.padTokenId, 0);
    assert.equal(bert.clsTokenId, 2);
    assert.equal(bert.maskToken, '[MASK]');
    assert.equal(bert.modelMaxLength, 40);
    assert.equal(bert.paddingSide, 'right');
    // The README's batch example: tokenizer.json has "padding": null, the pad token comes from tokenizer_config.json.
    const one = bert.encode('the cat sat on the mat.');
    const two = bert.encode('hello world');
    const batch = bert.encode(['the cat sat on the mat.', 'hello world'], { padding: true });
    const L = one.inputIds.dims[0];
    assert.deepEqual(batch.inputIds.dims, [2, L]);
    assert.deepEqual(Array.from(batch.inputIds.data.subarray(L)), [...two.inputIds.data, ...new Array(L - two.inputIds.dims[0]).fill(0)]);
    // Left padding: the pads first, positions counting the tokens only.
    const left = bert.encode(['the cat sat on the mat.', 'hello world'], { padding: true, paddingSide: 'left' });
    const pads = L - two.inputIds.dims[0];
    assert.deepEqual(Array.from(left.inputIds.data.subarray(L)), [...new Array(pads).fill(0), ...two.inputIds.data]);
    assert.deepEqual(Array.from(left.attentionMask.data.subarray(L)), [...new Array(pads).fill(0), ...new Array(L - pads).fill(1)]);
    assert.deepEqual(Array.from(left.positionIds.data.subarray(L, L + pads + 1)), [...new Array(pads).fill(1), 0]);
    // truncation: true without maxLength stops at model_max_length, as in transformers.
    const long = 'the cat sat on the mat. '.repeat(20);
    assert.equal(bert.encode(long, { truncation: true }).inputIds.dims[0], 40);
    assert.equal(bert.encode(long, { padding: 'max_length', truncation: true }).inputIds.dims[0], 40);
    // A pair, and batchDecode of a padded batch.
    const pair = bert.encode('hello world', { pair: 'the dog ran' });
    assert.deepEqual(pair.tokens, ['[CLS]', 'hello', 'world', '[SEP]', 'the', 'dog', 'ran', '[SEP]']);
    assert.deepEqual(bert.batchDecode(batch.inputIds, { skipSpecialTokens: true }), ['the cat sat on the mat.', 'hello world']);
    assert.throws(() => bert.decode(batch.inputIds), (e) => e.code === 'ERR_SHAPE_MISMATCH' && /batchDecode|each row/.test(e.message));
    assert.equal(bert.decode(BigInt64Array.from(two.inputIds.data, BigInt), { skipSpecialTokens: true }), 'hello world');
    bert.dispose();

    const gpt2 = await ak.Tokenizer.fromPretrained(`${base}/gpt2`);
    assert.equal(gpt2.paddingSide, 'left');
    assert.equal(gpt2.eosTokenId, 63);
    assert.equal(gpt2.padTokenId, 63);
    const g = gpt2.encode(['The cat sat on the mat', 'hello world'], { padding: true });
    assert.equal(g.attentionMask.data[g.inputIds.dims[1]], 0, 'the shorter row is padded on the left');
    assert.deepEqual(gpt2.batchDecode(g.inputIds, { skipSpecialTokens: true }), ['The cat sat on the mat', 'hello world']);
    gpt2.dispose();
    // vocab.txt and vocab.json + merges.txt alone are found too.
    const files = (dir, names) => Object.fromEntries(names.map((f) => [f, fs.readFileSync(path.join(REPOS, dir, f))]));
    const fromVocab = await ak.Tokenizer.fromPretrained(files('bert', ['vocab.txt', 'tokenizer_config.json']));
    assert.deepEqual(Array.from(fromVocab.encode('hello world').inputIds.data), Array.from(two.inputIds.data));
    fromVocab.dispose();
    const fromMerges = await ak.Tokenizer.fromPretrained(files('gpt2', ['vocab.json', 'merges.txt', 'special_tokens_map.json']));
    assert.equal(fromMerges.decode(fromMerges.encode('hello world').inputIds), 'hello world');
    fromMerges.dispose();
  });

  test(`${ak.backend}: wrong, missing and foreign files are coded errors naming the file`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-repo-'));
    try {
      fs.copyFileSync(path.join(REPOS, 'bert', 'config.json'), path.join(dir, 'config.json'));
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => e.code === 'ERR_LOAD' && /no model.safetensors/.test(e.message));
      // A PyTorch .bin (a zip) where the weights should be.
      fs.writeFileSync(path.join(dir, 'pytorch_model.bin'), Uint8Array.from([0x50, 0x4b, 3, 4, 0, 0, 0, 0]));
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => e.code === 'ERR_LOAD' && /pytorch_model.bin/.test(e.message) && /convert/.test(e.message));
      fs.copyFileSync(path.join(dir, 'pytorch_model.bin'), path.join(dir, 'model.safetensors'));
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => /looks like a zip archive/.test(e.message) && /convert/.test(e.message));
      fs.writeFileSync(path.join(dir, 'model.safetensors'), Uint8Array.from([0x08, 0x07, 0x12, 0x07, ...Buffer.from('pytorch'), 0, 0, 0]));
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => /looks like an ONNX model/.test(e.message) && /convert/.test(e.message));
      fs.writeFileSync(path.join(dir, 'model.safetensors'), Uint8Array.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => /HDF5/.test(e.message) && /convert/.test(e.message));
      // A config with fewer layers than the checkpoint.
      fs.copyFileSync(path.join(REPOS, 'bert', 'model.safetensors'), path.join(dir, 'model.safetensors'));
      const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 1 }));
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => /names layer 1, but config.json gives 1 layers/.test(e.message));
      // An HTML page (a wrong URL answered by a page) instead of config.json.
      fs.writeFileSync(path.join(dir, 'config.json'), '<!DOCTYPE html><html></html>');
      await assert.rejects(ak.Model.fromPretrained(dir), (e) => e.argument === 'config.json' && /HTML/.test(e.message));
      await assert.rejects(ak.Tokenizer.fromPretrained(dir), (e) => e.code === 'ERR_LOAD' && /no tokenizer.json/.test(e.message));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await assert.rejects(ak.Model.fromPretrained(`${base}/nothing-here/`), (e) => e.code === 'ERR_LOAD' && /no config.json/.test(e.message));
    // A 404 Response given as a file is a load error with its status, not "not valid JSON".
    await assert.rejects(ak.Tokenizer.fromJSON(await fetch(`${base}/nothing-here/tokenizer.json`)),
      (e) => e.code === 'ERR_LOAD' && /HTTP 404/.test(e.message));
    await assert.rejects(ak.Model.fromPretrained({ config: await fetch(`${base}/nothing-here/config.json`), weights: new Uint8Array(8) }),
      (e) => e.code === 'ERR_LOAD' && /HTTP 404/.test(e.message));
    // Repeated failures leave both wasm heaps as they were.
    const heap = await loaders(ak);
    const bad = { 'config.json': fs.readFileSync(path.join(REPOS, 'bert', 'config.json')), 'model.safetensors': new Uint8Array([0x50, 0x4b, 3, 4, 0, 0, 0, 0, 0]) };
    const fail = async () => {
      for (let i = 0; i < 20; i++) {
        await assert.rejects(ak.Model.fromPretrained(bad));
        await assert.rejects(ak.Tokenizer.fromPretrained({ 'tokenizer.json': '{"model": {"type": "WordPiece", "vocab": {"a": -1}}}' }));
      }
    };
    await fail();
    const [core, files] = [ak.mallocInUse(), heap.mallocInUse()];
    await fail();
    assert.deepEqual([ak.mallocInUse(), heap.mallocInUse()], [core, files], 'no leak over repeated failures');
    await assert.rejects(ak.Model.fromPretrained(42), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'source');
    await assert.rejects(ak.Model.fromPretrained(path.join(REPOS, 'bert'), { on_progress: () => {} }),
      (e) => e.message.includes("did you mean 'onProgress'?"));
  });
}

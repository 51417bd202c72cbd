// pipeline(task, 'org/name'): the model and its tokenizer by Hub id from the local stand-in for
// the Hub (tests/node/hub_server.mjs; every fetch checked for its host), kept in the download
// cache: a second pipeline for the same id downloads no weights; revision and cache pass through.
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { guardNetwork, startHub, useHub } from '../hub_server.mjs';
import { env } from '../../../web/attnkit.js';
import { FIXTURES, ak, close, golden } from './helpers.mjs';

const hub = await startHub({ 'org/bert': path.join(FIXTURES, 'repos/bert'), 'org/chat': path.join(FIXTURES, golden.chat.model) });
const host = new URL(hub.url).host;
const net = guardNetwork(() => [host]);
const restore = useHub(env, hub);
test.afterEach(() => net.check());
test.after(async () => {
  net.restore();
  restore();
  await hub.close();
});

test('feature-extraction by Hub id: the embeddings of the folder, and no weight download the second time', async () => {
  const g = golden.featureExtraction;
  const files = [];
  const embed = await ak.pipeline('feature-extraction', 'org/bert', {
    pooling: 'mean', normalize: true, revision: 'main', onProgress: (loaded, total, file) => { if (file.done) files.push(file); },
  });
  close((await embed(g.texts)).data, g.meanNormalized, 'by Hub id');
  embed.dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 1);
  assert.ok(files.some((f) => f.file === 'model.safetensors' && !f.fromCache));
  files.length = 0;
  const again = await ak.pipeline('feature-extraction', 'org/bert', { onProgress: (l, t, file) => { if (file.done) files.push(file); } });
  again.dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 1, 'the cache served the weights');
  assert.ok(files.some((f) => f.file === 'model.safetensors' && f.fromCache));
  const uncached = await ak.pipeline('feature-extraction', 'org/bert', { cache: false });
  uncached.dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 2, 'cache: false downloads');
  await assert.rejects(ak.pipeline('feature-extraction', 'org/bert', { revision: 'v9' }), (e) => e.code === 'ERR_LOAD');
});

test('a chat model by Hub id answers as from its folder', async () => {
  const chat = await ak.pipeline('text-generation', 'org/chat');
  const [{ generated_text: messages }] = await chat(golden.chat.messages, { maxNewTokens: golden.chat.newTokens });
  assert.equal(messages.at(-1).content, golden.chat.content);
  chat.dispose();
});

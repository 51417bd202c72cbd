// Hub ids and the download cache in headless Chromium (issue 39): the page loads 'org/bert' from a
// local stand-in for the Hub (tests/node/hub_server.mjs, another origin: CORS), which counts the
// requests. After a reload the weights come from the Cache API with no GET; a changed ETag fetches
// them again; cache: false bypasses the cache; a truncated cached file is fetched again; where the
// Cache API is missing, the origin private file system keeps the files. No request leaves the two
// local servers. The page imports the package's bundle (web/dist/attnkit.mjs, what npm users get).
import test from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPage } from './browser.mjs';
import { ROOT, assertClose, fixture } from '../node/helpers.mjs';
import { startHub } from '../node/hub_server.mjs';

const c = fixture('models.json').cases.find((x) => x.name === 'bert-tiny');

// In the page: load 'org/bert' (model and tokenizer) through the stand-in; the hidden state, the
// files' last progress events and the cache's entries. `before` runs first (in the page).
function loadInPage(page, hubUrl, { options = {}, noCacheApi = false, truncate = false } = {}) {
  return page.evaluate(async ({ hubUrl, options, noCacheApi, truncate, fx }) => {
    if (noCacheApi) Object.defineProperty(globalThis, 'caches', { value: undefined, configurable: true });
    const { load } = await import('/web/dist/attnkit.mjs');
    const ak = await load({ threads: 1 }); // no worker pool for a reload to cut
    ak.env.remoteHost = hubUrl;
    if (truncate) {
      // The Cache API entry of model.safetensors, 100 bytes short (its key is the cache's own name for it).
      const entry = (await ak.cache.list()).find((e) => e.file === 'model.safetensors');
      const store = await caches.open('attnkit-v1');
      const key = `https://attnkit-cache.invalid/${entry.id}`;
      const r = await store.match(key);
      const bytes = new Uint8Array(await r.arrayBuffer());
      await store.put(key, new Response(bytes.slice(0, bytes.length - 100), { headers: r.headers }));
    }
    const done = {};
    const model = await ak.Model.fromPretrained('org/bert', {
      ...options, onProgress: (loaded, total, file) => { if (file.done) done[file.file] = file.fromCache; },
    });
    const tok = await ak.Tokenizer.fromPretrained('org/bert', { ...options, onProgress: (l, t, file) => { if (file.done) done[file.file] = file.fromCache; } });
    const out = model.forward({ data: Int32Array.from(fx.inputIds), dims: fx.dims },
      { attentionMask: { data: Int32Array.from(fx.attentionMask), dims: fx.dims }, tokenTypeIds: { data: Int32Array.from(fx.tokenTypeIds), dims: fx.dims } });
    const tokens = tok.encode('hello world').tokens;
    model.dispose();
    tok.dispose();
    const entries = (await ak.cache.list()).map((e) => e.file).sort();
    return { last: Array.from(out.lastHiddenState.data), done, tokens, entries };
  }, { hubUrl, options, noCacheApi, truncate, fx: c });
}

test('Chromium: a Hub id loads; after a reload the weights come from the Cache API (no GET); ETag, cache: false, truncation; OPFS without the Cache API', async (t) => {
  const hub = await startHub({ 'org/bert': path.join(ROOT, 'tests/fixtures/repos/bert') });
  // A quiet page of the server's origin (not the tutorial, whose own loads a reload would cut).
  const { page, problems, requests, close, url } = await openPage({ served: ['web', 'tests/fixtures'], home: '/tests/fixtures/repos/bert/config.json' });
  t.after(async () => {
    await close();
    await hub.close();
  });
  const missing = [];
  page.on('response', (r) => { if (r.status() === 404) missing.push(new URL(r.url()).pathname); });
  const gets = () => hub.count('GET', '/model.safetensors');

  const first = await loadInPage(page, hub.url);
  assertClose(first.last, c.hiddenStates.at(-1), 'bert by Hub id in Chromium', 1e-4, 1e-4);
  assert.deepEqual(first.tokens, ['[CLS]', 'hello', 'world', '[SEP]']);
  assert.equal(first.done['model.safetensors'], false, 'downloaded');
  assert.equal(gets(), 1);
  assert.deepEqual(first.entries, ['config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']);

  await page.reload();
  const again = await loadInPage(page, hub.url);
  assertClose(again.last, c.hiddenStates.at(-1), 'bert from the Cache API', 1e-4, 1e-4);
  assert.equal(gets(), 1, 'after a reload: no GET of the weights');
  assert.equal(hub.count('GET'), 5, 'nor of any other file (5 from the first load)');
  assert.ok(Object.values(again.done).every(Boolean), `every file from the cache: ${JSON.stringify(again.done)}`);

  hub.touch('org/bert', 'model.safetensors');
  await page.reload();
  const changed = await loadInPage(page, hub.url);
  assert.equal(gets(), 2, 'a changed ETag fetches the file again');
  assert.equal(changed.done['model.safetensors'], false);
  assert.equal(changed.done['tokenizer.json'], true, 'the unchanged files from the cache');

  await page.reload();
  await loadInPage(page, hub.url, { options: { cache: false } });
  assert.equal(gets(), 3, 'cache: false fetches');

  await page.reload();
  const cut = await loadInPage(page, hub.url, { truncate: true });
  assert.equal(gets(), 4, 'a truncated cached file is fetched again');
  assert.equal(cut.done['model.safetensors'], false);
  assertClose(cut.last, c.hiddenStates.at(-1), 'bert after a truncated cache entry', 1e-4, 1e-4);

  // Without the Cache API: the origin private file system.
  await page.reload();
  const opfs = await loadInPage(page, hub.url, { noCacheApi: true });
  assert.equal(gets(), 5, 'OPFS starts empty');
  assert.equal(opfs.entries.length, 5);
  await page.reload();
  const opfsAgain = await loadInPage(page, hub.url, { noCacheApi: true });
  assert.equal(gets(), 5, 'after a reload: the weights from OPFS');
  assert.ok(Object.values(opfsAgain.done).every(Boolean));
  assertClose(opfsAgain.last, c.hiddenStates.at(-1), 'bert from OPFS', 1e-4, 1e-4);
  const cleared = await page.evaluate(async () => {
    Object.defineProperty(globalThis, 'caches', { value: undefined, configurable: true });
    const { load } = await import('/web/dist/attnkit.mjs');
    const ak = await load({ threads: 1 });
    return [await ak.cache.clear(), (await ak.cache.list()).length];
  });
  assert.deepEqual(cleared, [5, 0]);

  const hosts = new Set(requests.map((r) => new URL(r)).filter((u) => /^https?:$/.test(u.protocol)).map((u) => u.host)); // (blob: workers aside)
  assert.deepEqual([...hosts].sort(), [new URL(url).host, new URL(hub.url).host].sort(), 'no other host');
  // The one file not found is the JSON page's favicon, asked for on the first visit (Chromium logs
  // it as a console error): no 404 after, from either server.
  assert.deepEqual(missing, []);
  assert.ok(hub.requests.every((r) => r.status !== 404));
  const notFound = problems.filter((p) => /status of 404/.test(p));
  assert.ok(notFound.length <= 1, notFound.join('\n'));
  assert.deepEqual(problems.filter((p) => !notFound.includes(p)), []);
});

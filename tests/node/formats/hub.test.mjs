// Models by Hub id and the download cache (issue 39), with no network: a local stand-in for the
// Hub (tests/node/hub_server.mjs) serves the Hub-shaped fixture folders under Hugging Face's
// layout, ak.env.remoteHost points at it, ak.env.cacheDir is a temporary folder, and every fetch
// of the process is recorded: a request to any other host fails the test.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, assertClose, fixture } from '../helpers.mjs';
import { guardNetwork, startHub, useHub } from '../hub_server.mjs';
import { AttnkitError, cache, env, load } from '../../../web/attnkit.js';
import { isHubId, sourceKind } from '../../../web/src/formats/hub.js';

const REPOS = path.join(ROOT, 'tests/fixtures/repos');
const cases = Object.fromEntries(fixture('models.json').cases.map((c) => [c.name, c]));

// A second revision of the BERT folder: the same files, tokenizer_config.json's model_max_length changed.
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-hub-'));
const v1 = path.join(work, 'bert-v1');
fs.cpSync(path.join(REPOS, 'bert'), v1, { recursive: true });
const tc = JSON.parse(fs.readFileSync(path.join(v1, 'tokenizer_config.json'), 'utf8'));
fs.writeFileSync(path.join(v1, 'tokenizer_config.json'), JSON.stringify({ ...tc, model_max_length: 17 }));

const hub = await startHub({
  'org/bert': { revisions: { main: path.join(REPOS, 'bert'), v1, 'refs/pr/1': v1 } },
  'org/gpt2': path.join(REPOS, 'gpt2'),
  gpt2: path.join(REPOS, 'gpt2'), // a legacy id, no organisation
  'org/private': { revisions: { main: path.join(REPOS, 'bert') }, private: true },
  'org/config-only': { revisions: { main: path.join(work, 'config-only') } },
});
fs.mkdirSync(path.join(work, 'config-only'));
fs.copyFileSync(path.join(REPOS, 'bert', 'config.json'), path.join(work, 'config-only', 'config.json'));
const host = new URL(hub.url).host;
const net = guardNetwork(() => [host]);
let restore = useHub(env, hub);
test.afterEach(() => net.check());
test.after(async () => {
  net.restore();
  restore();
  await hub.close();
  fs.rmSync(work, { recursive: true, force: true });
});

/** A fresh cache folder and request count for a test. */
function fresh() {
  restore();
  restore = useHub(env, hub);
  hub.reset();
  return restore.dir;
}

const ak = await load();

function checkForward(model, c, what) {
  const r = model.forward({ data: Int32Array.from(c.inputIds), dims: c.dims },
    { attentionMask: { data: Int32Array.from(c.attentionMask), dims: c.dims },
      ...(c.tokenTypeIds ? { tokenTypeIds: { data: Int32Array.from(c.tokenTypeIds), dims: c.dims } } : {}) });
  assertClose(r.lastHiddenState.data, c.hiddenStates.at(-1), what, 1e-4, 1e-3);
}

// An AttnkitError with `code` whose message has every string of `parts`.
const coded = (code, ...parts) => (e) => {
  assert.ok(e instanceof AttnkitError, `an AttnkitError, got ${e?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  for (const p of parts) assert.ok(e.message.includes(p), `the message names ${p}: ${e.message}`);
  return true;
};

test('org/name loads model and tokenizer from remoteHost + remotePathTemplate (resolve/main/), matching PyTorch', async () => {
  fresh();
  const bert = await ak.Model.fromPretrained('org/bert');
  checkForward(bert, cases['bert-tiny'], 'bert by Hub id');
  bert.dispose();
  const tok = await ak.Tokenizer.fromPretrained('org/bert');
  assert.equal(tok.modelMaxLength, 40);
  tok.dispose();
  const gpt2 = await ak.Model.fromPretrained('org/gpt2'); // sharded: the index, then both shards
  checkForward(gpt2, cases['gpt2-tiny'], 'sharded gpt2 by Hub id');
  gpt2.dispose();
  (await ak.Model.fromPretrained('gpt2')).dispose(); // a legacy id without an organisation
  assert.ok(hub.requests.every((r) => /^\/(org\/)?[\w-]+\/resolve\/main\//.test(r.path)), hub.requests.map((r) => r.path).join(' '));
  assert.equal(hub.count('GET', '/org/gpt2/resolve/main/model-00002-of-00002.safetensors'), 1);
  assert.equal(hub.count('GET', 'pytorch_model.bin'), 0, 'files are asked for with HEAD, not downloaded to see whether they exist');
  // remotePathTemplate: another layout.
  fresh();
  env.remotePathTemplate = 'models/{model}/{revision}';
  try {
    await assert.rejects(ak.Tokenizer.fromPretrained('org/bert'), coded('ERR_LOAD', `${hub.url}models/org/bert/main/`,
      'HTTP 404 for tokenizer_config.json, special_tokens_map.json, tokenizer.json'));
  } finally {
    delete env.remotePathTemplate;
  }
  assert.equal(env.remotePathTemplate, '{model}/resolve/{revision}/');
});

test('revision: the option picks resolve/<revision>/ (encoded); a missing revision is ERR_LOAD naming it', async () => {
  fresh();
  const tok = await ak.Tokenizer.fromPretrained('org/bert', { revision: 'v1' });
  assert.equal(tok.modelMaxLength, 17, 'the v1 folder');
  tok.dispose();
  const pr = await ak.Tokenizer.fromPretrained('org/bert', { revision: 'refs/pr/1' });
  assert.equal(pr.modelMaxLength, 17);
  pr.dispose();
  assert.ok(hub.count('GET', '/org/bert/resolve/refs%2Fpr%2F1/tokenizer.json') === 1, 'the revision is one path segment');
  await assert.rejects(ak.Model.fromPretrained('org/bert', { revision: 'v9' }),
    coded('ERR_LOAD', '/org/bert/resolve/v9/config.json', 'HTTP 404', 'RevisionNotFound', 'org/bert has no revision "v9"'));
  // Revisions are cached apart: main after v1 downloads main's tokenizer_config.json.
  const main = await ak.Tokenizer.fromPretrained('org/bert');
  assert.equal(main.modelMaxLength, 40);
  main.dispose();
});

test('a missing file (404), a missing or private repository (401): coded errors naming the file and the status', async () => {
  fresh();
  await assert.rejects(ak.Model.fromPretrained('org/config-only'),
    coded('ERR_LOAD', 'no model.safetensors', 'org/config-only at revision main', 'HTTP 404 for model.safetensors'));
  await assert.rejects(ak.Tokenizer.fromPretrained('org/config-only'),
    coded('ERR_LOAD', 'no tokenizer.json', 'HTTP 404 for', 'tokenizer.json, vocab.txt'));
  for (const id of ['org/private', 'org/nothing']) {
    await assert.rejects(ak.Model.fromPretrained(id), (e) => coded('ERR_LOAD', `${hub.url}${id}/resolve/main/config.json`,
      'HTTP 401', 'RepoNotFound', `${id} is private or gated, or does not exist`)(e) && e.argument === 'config.json');
  }
  // In Node an id that might have been meant as a folder says there is no such folder.
  await assert.rejects(ak.Model.fromPretrained('org/config-only'), coded('ERR_LOAD', `there is no folder ${path.resolve('org/config-only')}`));
  await assert.rejects(ak.Model.fromPretrained('org/private'), coded('ERR_LOAD', `org/private was taken for a Hub id: there is no folder ${path.resolve('org/private')}`));
});

test('strings: an existing path wins, ./ and / are paths, a Hub id form that is no folder is an id; revision only for ids', async () => {
  assert.ok(isHubId('org/name') && isHubId('gpt2') && isHubId('Org_1/name.v2-x'));
  for (const s of ['a/b/c', 'org/', '-org/x', 'org/x-', 'a--b/c', 'a..b', '.', '', 'org/na me', 'C:\\m']) assert.ok(!isHubId(s), s);
  const cwd = process.cwd();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-cwd-'));
  fs.cpSync(path.join(REPOS, 'bert'), path.join(dir, 'org', 'bert'), { recursive: true });
  process.chdir(dir);
  try {
    fresh();
    assert.equal(sourceKind('org/bert'), 'path', 'a folder that exists');
    assert.equal(sourceKind('org/gpt2'), 'hub');
    assert.equal(sourceKind('./org/gpt2'), 'path');
    assert.equal(sourceKind('/org/gpt2'), 'path');
    assert.equal(sourceKind('https://x.org/org/gpt2'), 'url');
    const local = await ak.Tokenizer.fromPretrained('org/bert');
    local.dispose();
    assert.equal(hub.requests.length, 0, 'the folder org/bert was read, not the Hub');
    await assert.rejects(ak.Model.fromPretrained('./org/gpt2'), coded('ERR_LOAD', 'the folder ./org/gpt2 does not exist', dir));
    await assert.rejects(ak.Model.fromPretrained('models/a/b'), coded('ERR_LOAD', 'the folder models/a/b does not exist'));
    assert.equal(hub.requests.length, 0);
    await assert.rejects(ak.Tokenizer.fromPretrained('org/bert', { revision: 'v1' }),
      (e) => coded('ERR_INVALID_ARGUMENT', 'revision is for Hub ids')(e) && e.argument === 'revision');
  } finally {
    process.chdir(cwd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('localModelPath is looked in first, file by file; allowRemoteModels: false never asks the network', async () => {
  fresh();
  const local = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-local-'));
  try {
    fs.cpSync(path.join(REPOS, 'bert'), path.join(local, 'org', 'bert'), { recursive: true });
    env.localModelPath = local;
    const bert = await ak.Model.fromPretrained('org/bert');
    checkForward(bert, cases['bert-tiny'], 'bert from localModelPath');
    bert.dispose();
    assert.equal(hub.requests.length, 0, 'every file was in localModelPath');
    // A file the local folder lacks comes from the Hub.
    fs.rmSync(path.join(local, 'org', 'bert', 'tokenizer_config.json'));
    (await ak.Tokenizer.fromPretrained('org/bert')).dispose();
    assert.deepEqual(hub.requests.map((r) => `${r.method} ${path.basename(r.path)}`), ['HEAD tokenizer_config.json', 'GET tokenizer_config.json']);
    // Without the network: localModelPath and the cache only.
    env.allowRemoteModels = false;
    hub.reset();
    (await ak.Tokenizer.fromPretrained('org/bert')).dispose(); // tokenizer_config.json is in the cache now
    await assert.rejects(ak.Model.fromPretrained('org/gpt2'),
      coded('ERR_LOAD', 'no config.json', 'remote models are off (ak.env.allowRemoteModels is false)'));
    assert.equal(hub.requests.length, 0, 'no request at all');
  } finally {
    env.localModelPath = null;
    env.allowRemoteModels = true;
    fs.rmSync(local, { recursive: true, force: true });
  }
});

test('cache: a second load makes no weight request; progress says which bytes came from the cache; list, delete, clear', async () => {
  const dir = fresh();
  const events = [];
  const first = await ak.Model.fromPretrained('org/gpt2', { onProgress: (loaded, total, file) => events.push({ ...file, all: loaded, allTotal: total }) });
  first.dispose();
  assert.equal(hub.count('GET', '.safetensors'), 2);
  const done = events.filter((e) => e.done);
  assert.deepEqual(done.map((e) => [e.file, e.fromCache]), [['model-00001-of-00002.safetensors', false], ['model-00002-of-00002.safetensors', false]]);
  assert.ok(done.every((e) => e.loaded === e.total && e.total > 0), 'each file whole');
  assert.equal(events.at(-1).all, events.at(-1).allTotal, 'the whole load is done');

  hub.reset();
  events.length = 0;
  const second = await ak.Model.fromPretrained('org/gpt2', { onProgress: (loaded, total, file) => events.push({ ...file, all: loaded, allTotal: total }) });
  checkForward(second, cases['gpt2-tiny'], 'gpt2 from the cache');
  second.dispose();
  assert.equal(hub.count('GET'), 0, `no GET at all: ${hub.requests.map((r) => `${r.method} ${r.path} ${r.status}`).join(', ')}`);
  assert.ok(hub.requests.every((r) => r.method === 'HEAD' && (r.status === 304 || r.path.endsWith('/model.safetensors'))),
    'each cached file revalidated by a conditional HEAD (304); model.safetensors is still absent (404)');
  assert.deepEqual(events.filter((e) => e.done).map((e) => [e.file, e.fromCache]),
    [['model-00001-of-00002.safetensors', true], ['model-00002-of-00002.safetensors', true]]);
  // Tokenizer loads take onProgress too, with the same events.
  const tokEvents = [];
  (await ak.Tokenizer.fromPretrained('org/gpt2', { onProgress: (loaded, total, file) => tokEvents.push({ ...file, all: loaded, allTotal: total }) })).dispose();
  const tokDone = tokEvents.filter((e) => e.done).map((e) => e.file).sort();
  assert.deepEqual(tokDone, ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']);
  assert.ok(tokEvents.every((e, i) => e.allTotal === undefined && (i === 0 || e.all >= tokEvents[i - 1].all)), 'bytes of all files, growing');

  const list = await cache.list();
  assert.equal(ak.cache, cache);
  assert.equal(ak.env, env);
  const files = list.filter((x) => x.model === 'org/gpt2').map((x) => x.file).sort();
  assert.deepEqual(files, ['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors',
    'model.safetensors.index.json', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']);
  const shard = list.find((x) => x.file === 'model-00001-of-00002.safetensors');
  assert.equal(shard.size, fs.statSync(path.join(REPOS, 'gpt2', shard.file)).size);
  assert.equal(shard.revision, 'main');
  assert.equal(shard.url, `${hub.url}org/gpt2/resolve/main/${shard.file}`);
  assert.match(shard.etag, /^".+"$/);
  assert.ok(fs.readdirSync(dir).length > 0, 'the cache is in ak.env.cacheDir');
  assert.equal(await cache.delete(shard.id), 1);
  assert.equal((await cache.list()).length, list.length - 1);
  hub.reset();
  (await ak.Model.fromPretrained('org/gpt2')).dispose();
  assert.equal(hub.count('GET', '.safetensors'), 1, 'only the deleted shard is fetched again');
  assert.equal(await cache.delete('org/gpt2'), list.length, 'a model id deletes every file of it');
  assert.equal(await cache.delete('org/gpt2'), 0);
  (await ak.Tokenizer.fromPretrained('org/bert')).dispose();
  assert.ok((await cache.clear()) > 0);
  assert.deepEqual(await cache.list(), []);
  await assert.rejects(cache.delete(''), coded('ERR_INVALID_ARGUMENT', 'cache.delete'));
});

test('cache: a changed ETag refetches; cache: false and env.useCache = false bypass it', async () => {
  fresh();
  (await ak.Model.fromPretrained('org/bert')).dispose();
  hub.touch('org/bert', 'model.safetensors'); // same bytes, new ETag: the server says the file changed
  hub.reset();
  (await ak.Model.fromPretrained('org/bert')).dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 1, 'fetched again');
  assert.equal(hub.count('GET', 'config.json'), 0, 'the unchanged config.json is not');
  hub.reset();
  (await ak.Model.fromPretrained('org/bert')).dispose();
  assert.equal(hub.count('GET'), 0, 'and stored under the new ETag');
  // cache: false reads nothing from the cache and writes nothing to it.
  await cache.clear();
  hub.reset();
  (await ak.Model.fromPretrained('org/bert', { cache: false })).dispose();
  (await ak.Tokenizer.fromPretrained('org/bert', { cache: false })).dispose();
  assert.deepEqual(await cache.list(), []);
  (await ak.Model.fromPretrained('org/bert', { cache: false })).dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 2);
  env.useCache = false;
  try {
    (await ak.Model.fromPretrained('org/bert')).dispose();
    assert.deepEqual(await cache.list(), []);
    assert.equal(hub.count('GET', 'model.safetensors'), 3);
    (await ak.Model.fromPretrained('org/bert', { cache: true })).dispose(); // the option wins
    assert.equal((await cache.list()).length, 2);
  } finally {
    env.useCache = true;
  }
});

test('cache: a truncated or altered cached file is fetched again; a download cut short is never cached', async () => {
  const dir = fresh();
  (await ak.Model.fromPretrained('org/bert')).dispose();
  const entry = (await cache.list()).find((x) => x.file === 'model.safetensors');
  const file = path.join(dir, 'v1', entry.id);
  assert.ok(fs.existsSync(file), 'the bytes sit in <cacheDir>/v1/<id>');
  const whole = fs.readFileSync(file);
  fs.truncateSync(file, whole.length - 100);
  hub.reset();
  const events = [];
  const again = await ak.Model.fromPretrained('org/bert', { onProgress: (l, t, f) => events.push(f) });
  checkForward(again, cases['bert-tiny'], 'bert after a truncated cache file');
  again.dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 1, 'the truncated file was fetched again');
  assert.equal(events.at(-1).fromCache, false);
  assert.deepEqual(fs.readFileSync(file), whole, 'and the cache repaired');
  // Same size, one byte changed: the stored SHA-256 tells.
  const altered = Buffer.from(whole);
  altered[altered.length - 1] ^= 0xff;
  fs.writeFileSync(file, altered);
  hub.reset();
  (await ak.Model.fromPretrained('org/bert')).dispose();
  assert.equal(hub.count('GET', 'model.safetensors'), 1, 'the altered file was fetched again');
  assert.deepEqual(fs.readFileSync(file), whole);
  // A connection dropped mid-body: ERR_LOAD, and neither an entry nor a temporary file is left.
  await cache.clear();
  hub.cutNext('org/bert', 'model.safetensors');
  await assert.rejects(ak.Model.fromPretrained('org/bert'), coded('ERR_LOAD', `${hub.url}org/bert/resolve/main/model.safetensors`));
  assert.ok(!(await cache.list()).some((x) => x.file === 'model.safetensors'), 'no entry for the cut file');
  const left = fs.readdirSync(path.join(dir, 'tmp'));
  assert.deepEqual(left, [], 'no partial file left');
  (await ak.Model.fromPretrained('org/bert')).dispose(); // whole this time
});

test('cache: with the host unreachable, or remote models off, cached files load; a damaged one then is ERR_LOAD', async () => {
  const dir = fresh();
  (await ak.Model.fromPretrained('org/bert')).dispose();
  (await ak.Tokenizer.fromPretrained('org/bert')).dispose();
  // The network fails: every request to the host is a dropped connection.
  hub.setDown(true);
  const events = [];
  try {
    const bert = await ak.Model.fromPretrained('org/bert', { onProgress: (l, t, f) => events.push(f) });
    checkForward(bert, cases['bert-tiny'], 'bert offline from the cache');
    bert.dispose();
    assert.ok(events.filter((e) => e.done).every((e) => e.fromCache));
    (await ak.Tokenizer.fromPretrained('org/bert')).dispose();
    await assert.rejects(ak.Model.fromPretrained('org/gpt2'), coded('ERR_LOAD', `${hub.url}org/gpt2/resolve/main/config.json`));
    const entry = (await cache.list()).find((x) => x.file === 'model.safetensors');
    fs.truncateSync(path.join(dir, 'v1', entry.id), 10);
    await assert.rejects(ak.Model.fromPretrained('org/bert'), coded('ERR_LOAD', 'the cached model.safetensors of org/bert is damaged', 'cannot be reached'));
  } finally {
    hub.setDown(false);
  }
  // Remote models off: the cache serves what it has, without a request.
  env.allowRemoteModels = false;
  hub.reset();
  try {
    (await ak.Tokenizer.fromPretrained('org/bert')).dispose();
    assert.equal(hub.requests.length, 0);
  } finally {
    env.allowRemoteModels = true;
  }
});

test('env settings and the new options are checked', async () => {
  assert.throws(() => { env.remotehost = hub.url; }, (e) => coded('ERR_INVALID_ARGUMENT', "did you mean 'remoteHost'?")(e));
  assert.throws(() => { env.remoteHost = 'ftp://x/'; }, coded('ERR_INVALID_ARGUMENT', 'remoteHost must be an http(s) URL'));
  assert.throws(() => { env.remotePathTemplate = 'resolve/{revision}'; }, coded('ERR_INVALID_ARGUMENT', '{model}'));
  assert.throws(() => { env.allowRemoteModels = 'no'; }, coded('ERR_INVALID_ARGUMENT', 'allowRemoteModels must be true or false'));
  assert.throws(() => { env.cacheDir = 5; }, coded('ERR_INVALID_ARGUMENT', 'cacheDir'));
  assert.throws(() => { env.localModelPath = 5; }, coded('ERR_INVALID_ARGUMENT', 'localModelPath'));
  assert.throws(() => Object.defineProperty(env, 'remoteHost', { value: 'x' }), coded('ERR_INVALID_ARGUMENT'));
  const saved = env.cacheDir;
  env.cacheDir = null;
  const xdg = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = '/tmp/xdg-test';
  try {
    assert.equal(env.cacheDir, path.join('/tmp/xdg-test', 'attnkit'), 'the default: $XDG_CACHE_HOME/attnkit');
    delete process.env.XDG_CACHE_HOME;
    assert.equal(env.cacheDir, path.join(os.homedir(), '.cache', 'attnkit'), 'else ~/.cache/attnkit');
  } finally {
    if (xdg === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = xdg;
    env.cacheDir = saved;
  }
  await assert.rejects(ak.Model.fromPretrained('org/bert', { revison: 'v1' }), coded('ERR_INVALID_ARGUMENT', "did you mean 'revision'?"));
  await assert.rejects(ak.Model.fromPretrained('org/bert', { revision: '' }), (e) => coded('ERR_INVALID_ARGUMENT', 'revision')(e) && e.argument === 'revision');
  await assert.rejects(ak.Tokenizer.fromPretrained('org/bert', { cache: 'no' }), (e) => coded('ERR_INVALID_ARGUMENT', 'cache')(e) && e.argument === 'cache');
  await assert.rejects(ak.Tokenizer.fromPretrained('org/bert', { onProgress: 1 }), coded('ERR_INVALID_ARGUMENT', 'onProgress'));
});

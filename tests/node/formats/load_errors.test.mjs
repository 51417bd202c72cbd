// Loading as a new user meets it (issue 39): folders served by dev servers that answer a missing
// file with their index.html, and errors that say what happened: a folder that does not exist,
// the network's cause of a failed fetch, a .safetensors file cut short, decode given a batch,
// constructors called directly; no message names an internal function.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ROOT, assertClose, fixture } from '../helpers.mjs';
import { Attnkit, AttnkitError, Model, Tokenizer, load } from '../../../web/attnkit.js';

const REPOS = path.join(ROOT, 'tests/fixtures/repos');
const gpt2Case = fixture('models.json').cases.find((c) => c.name === 'gpt2-tiny');
const ak = await load();
const messages = []; // every error message of this file, checked for internal names at the end

const coded = (code, ...parts) => (e) => {
  assert.ok(e instanceof AttnkitError, `an AttnkitError, got ${e?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  for (const p of parts) assert.ok(p instanceof RegExp ? p.test(e.message) : e.message.includes(p), `the message has ${p}: ${e.message}`);
  messages.push(e.message);
  return true;
};

const INDEX = '<!DOCTYPE html>\n<html><head><script type="module" src="/main.js"></script></head><body></body></html>\n';

/**
 * A dev server's way with a folder: the files it has, and for any other path a 200 with the
 * app's index.html (Vite's SPA fallback, for HEAD too); `typed: false` sends it without a
 * Content-Type. `hidden` files are answered by the fallback as if absent.
 */
async function devServer({ typed = true, hidden = [] } = {}) {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '');
    const file = path.join(REPOS, rel);
    if (file.startsWith(REPOS + path.sep) && fs.existsSync(file) && fs.statSync(file).isFile() && !hidden.includes(path.basename(file))) {
      const data = fs.readFileSync(file);
      res.writeHead(200, { 'Content-Length': data.length, 'Content-Type': 'application/octet-stream' });
      return res.end(req.method === 'HEAD' ? undefined : data);
    }
    res.writeHead(200, { 'Content-Length': Buffer.byteLength(INDEX), ...(typed ? { 'Content-Type': 'text/html' } : {}) });
    return res.end(req.method === 'HEAD' ? undefined : INDEX);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

test("a dev server's index.html for a missing file is an absent file: the sharded GPT-2 folder and its tokenizer load", async () => {
  const { server, base } = await devServer();
  try {
    const gpt2 = await ak.Model.fromPretrained(`${base}/gpt2/`); // model.safetensors is answered by the page
    const c = gpt2Case;
    const r = gpt2.forward({ data: Int32Array.from(c.inputIds), dims: c.dims }, { attentionMask: { data: Int32Array.from(c.attentionMask), dims: c.dims } });
    assertClose(r.lastHiddenState.data, c.hiddenStates.at(-1), 'gpt2 from a dev server', 1e-4, 1e-3);
    gpt2.dispose();
    const tok = await ak.Tokenizer.fromPretrained(`${base}/gpt2/`);
    assert.equal(tok.paddingSide, 'left');
    tok.dispose();
    await assert.rejects(ak.Model.fromPretrained(`${base}/none/`), coded('ERR_LOAD', 'no config.json'));
  } finally {
    server.close();
  }
});

test('an optional file whose body is an HTML page (no Content-Type to tell) is absent; a required one is named', async () => {
  const { server, base } = await devServer({ typed: false, hidden: ['special_tokens_map.json', 'tokenizer_config.json'] });
  try {
    const tok = await ak.Tokenizer.fromPretrained(`${base}/bert/`);
    assert.equal(tok.modelMaxLength, null, 'no tokenizer_config.json was read');
    tok.dispose();
    // Weights are not downloaded to learn what they are: the page read as model.safetensors is named.
    await assert.rejects(ak.Model.fromPretrained(`${base}/gpt2/`), coded('ERR_INVALID_ARGUMENT', `${base}/gpt2/model.safetensors`,
      "it looks like an HTML or XML page (not the file: a wrong URL, or a dev server's index.html for a missing file?)"));
  } finally {
    server.close();
  }
});

test('errors say what happened: a folder that does not exist, a failed fetch and its cause, a file cut short', async () => {
  await assert.rejects(ak.Model.fromPretrained('./models/not-here'), coded('ERR_LOAD', 'the folder ./models/not-here does not exist', process.cwd()));
  await assert.rejects(ak.Tokenizer.fromPretrained(path.join(os.tmpdir(), 'attnkit-none', 'x')), coded('ERR_LOAD', 'does not exist'));
  await assert.rejects(ak.Model.fromPretrained(path.join(REPOS, 'bert', 'config.json')), coded('ERR_LOAD', 'is a file, not a folder'));
  // Nothing listens: the cause is in the message, with what it means.
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${closed.address().port}/bert/`;
  await new Promise((resolve) => closed.close(resolve));
  await assert.rejects(ak.Tokenizer.fromPretrained(url), coded('ERR_LOAD', 'fetch failed', 'ECONNREFUSED', 'nothing listens there', url));
  // A .safetensors file cut short: in its data, and in its header.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-cut-'));
  try {
    fs.cpSync(path.join(REPOS, 'bert'), dir, { recursive: true });
    const whole = fs.readFileSync(path.join(dir, 'model.safetensors'));
    fs.writeFileSync(path.join(dir, 'model.safetensors'), whole.subarray(0, whole.length - 1000));
    await assert.rejects(ak.Model.fromPretrained(dir), (e) => coded('ERR_INVALID_ARGUMENT', `${whole.length - 1000} of the ${whole.length} bytes`,
      'incomplete (an interrupted download or copy?)', 'fetch it again')(e) && !/Model\.fromPretrained: .*Model\.fromPretrained:/.test(e.message));
    fs.writeFileSync(path.join(dir, 'model.safetensors'), whole.subarray(0, 100));
    await assert.rejects(ak.Model.fromPretrained(dir), coded('ERR_INVALID_ARGUMENT', 'or more bytes its header describes', 'incomplete'));
    await assert.rejects(ak.loadSafetensors(whole.subarray(0, whole.length - 1)), coded('ERR_INVALID_ARGUMENT', 'incomplete'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('decode given a batch names batchDecode; constructors called directly say how to make one', async () => {
  const tok = await ak.Tokenizer.fromPretrained(path.join(REPOS, 'bert'));
  const batch = tok.encode(['the cat', 'a dog sat'], { padding: true });
  assert.throws(() => tok.decode(batch.inputIds), coded('ERR_SHAPE_MISMATCH', 'batchDecode(ids)'));
  assert.throws(() => tok.decode([[1, 2], [3, 4]]), coded('ERR_SHAPE_MISMATCH', 'batchDecode'));
  assert.deepEqual(tok.batchDecode(batch.inputIds, { skipSpecialTokens: true }), ['the cat', 'a dog sat']);
  tok.dispose();
  assert.throws(() => new Model(), (e) => coded('ERR_INVALID_ARGUMENT', 'ak.Model.fromPretrained(source)', 'new ak.Model(spec)', 'await load()')(e) && e.argument === 'ak');
  assert.throws(() => new ak.Model(), (e) => coded('ERR_INVALID_ARGUMENT', 'ak.modelSpec(config)')(e) && e.argument === 'spec');
  assert.throws(() => new Attnkit(), coded('ERR_INVALID_ARGUMENT', 'await load()'));
  assert.throws(() => new Tokenizer(), coded('ERR_INVALID_ARGUMENT', 'ak.Tokenizer.fromPretrained(source)'));
});

test('no message of these loads names an internal function', () => {
  assert.ok(messages.length >= 14, `${messages.length} messages`);
  for (const m of messages) {
    assert.doesNotMatch(m, /\b_[a-z]\w*\(|\b_(raw|call|malloc|safetensors\w*|model\w*|tokenizer\w*)\b|readCheckpoint|storedSafetensors|loadModelFrom|bodyBytes|fetchFile|sourceOf/, m);
  }
});

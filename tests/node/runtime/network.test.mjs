// Loads over a network that misbehaves (issue 33): a local server on 127.0.0.1 serves the BERT
// fixture folder of pretrained.test.mjs, and under /<mode>/ its model.safetensors and
// tokenizer.json come cut, short, longer than their Content-Length, stalled or never. Every
// failure must be an AttnkitError with a code, naming the file's URL, never a bare
// `TypeError: terminated` or a hang.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ROOT } from '../helpers.mjs';
import { AttnkitError, load } from '../../../web/attnkit.js';

const BERT = path.join(ROOT, 'tests/fixtures/repos/bert');
const BIG = new Set(['model.safetensors', 'tokenizer.json']); // the files the modes apply to
const sockets = new Set();
let onStall = () => {};

// Writes the response by hand on the socket: Node's http module would not send a wrong length.
function raw(socket, length, body) {
  socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`);
  if (body) socket.write(body);
}

const server = http.createServer((req, res) => {
  const [, mode, name] = req.url.split('/');
  const file = path.join(BERT, path.basename(name ?? ''));
  if (mode === 'hang') return; // no answer at all, not even to HEAD
  if (!name || !fs.existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  const data = fs.readFileSync(file);
  if (req.method === 'HEAD' || mode === 'ok' || !BIG.has(name)) {
    res.writeHead(200, { 'Content-Length': data.length }).end(req.method === 'HEAD' ? undefined : data);
    return;
  }
  const s = req.socket;
  const half = data.subarray(0, data.length >> 1);
  if (mode === 'cut') { // the connection drops mid-body
    raw(s, data.length, half);
    s.write('', () => s.destroy());
  } else if (mode === 'short') { // 100 bytes fewer, then a clean close
    raw(s, data.length, data.subarray(0, data.length - 100));
    s.end();
  } else if (mode === 'long') { // the whole file under a Content-Length 100 short
    raw(s, data.length - 100, data);
    s.end();
  } else if (mode === 'stall') { // half, then nothing, the socket left open
    raw(s, data.length, half);
    s.write('', () => onStall(s));
  } else {
    res.writeHead(400).end();
  }
});
server.on('connection', (s) => {
  sockets.add(s);
  s.on('close', () => sockets.delete(s));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;
test.after(() => {
  for (const s of sockets) s.destroy(); // the stalled ones
  server.close();
});

const ak = await load();

// An AttnkitError with `code` whose message names every string of `names`.
const coded = (code, ...names) => (e) => {
  assert.ok(e instanceof AttnkitError, `an AttnkitError, got ${e?.name}: ${e?.message}`);
  assert.equal(e.code, code, e.message);
  for (const n of names) assert.ok(e.message.includes(n), `the message names ${n}: ${e.message}`);
  return true;
};
// The error a load failed with, or a failure if it succeeded.
const failure = (promise) => promise.then(() => assert.fail('the load succeeded'), (e) => e);

test('the fixture folder loads from the well-behaved routes', async () => {
  const model = await ak.Model.fromPretrained(`${base}/ok/`, { timeout: 5000 });
  model.dispose();
  const tok = await ak.Tokenizer.fromPretrained(`${base}/ok/`, { signal: new AbortController().signal });
  tok.dispose();
});

test('a connection dropped mid-body is ERR_LOAD naming the URL, with the network error as cause', async () => {
  const e = await failure(ak.Model.fromPretrained(`${base}/cut/`));
  coded('ERR_LOAD', `${base}/cut/model.safetensors`)(e);
  assert.ok(e.cause instanceof Error, 'the original error is the cause');
  await assert.rejects(ak.Tokenizer.fromPretrained(`${base}/cut/`), coded('ERR_LOAD', `${base}/cut/tokenizer.json`));
  // A Response the caller fetched.
  const r = await fetch(`${base}/cut/model.safetensors`);
  await assert.rejects(ak.loadSafetensors(r), coded('ERR_LOAD', `${base}/cut/model.safetensors`));
});

test('a body shorter than its Content-Length is ERR_LOAD naming the URL', async () => {
  await assert.rejects(ak.Model.fromPretrained(`${base}/short/`), coded('ERR_LOAD', `${base}/short/model.safetensors`));
  await assert.rejects(ak.Tokenizer.fromPretrained(`${base}/short/`), coded('ERR_LOAD', `${base}/short/tokenizer.json`));
  await assert.rejects(ak.loadSafetensors(await fetch(`${base}/short/model.safetensors`)),
    coded('ERR_LOAD', `${base}/short/model.safetensors`));
  // A Response whose stream ends early without an error of its own.
  const bytes = fs.readFileSync(path.join(BERT, 'model.safetensors'));
  const early = new Response(bytes.subarray(0, 1000), { headers: { 'content-length': String(bytes.length) } });
  await assert.rejects(ak.loadSafetensors(early), coded('ERR_LOAD', `1000 of the ${bytes.length} bytes`));
});

test('a body longer than its Content-Length: cut by fetch (then refused as a file), or refused', async () => {
  // undici reads exactly Content-Length bytes and drops the rest, so the file arrives 100 bytes
  // short: the .safetensors reader refuses it, and the message still names the URL.
  const e = await failure(ak.Model.fromPretrained(`${base}/long/`));
  assert.ok(e instanceof AttnkitError && typeof e.code === 'string' && e.message.includes(`${base}/long/model.safetensors`), e.message);
  // A stream that gives more bytes than its Content-Length says is refused by the length check.
  const bytes = fs.readFileSync(path.join(BERT, 'model.safetensors'));
  const long = new Response(bytes, { headers: { 'content-length': String(bytes.length - 100) } });
  await assert.rejects(ak.loadSafetensors(long), coded('ERR_LOAD', `${bytes.length - 100} bytes`));
});

test('a server that stalls is ERR_TIMEOUT after `timeout` ms without a byte, not a hang', async () => {
  const t0 = performance.now();
  await assert.rejects(ak.Model.fromPretrained(`${base}/stall/`, { timeout: 300 }),
    coded('ERR_TIMEOUT', `${base}/stall/model.safetensors`, '300 ms'));
  await assert.rejects(ak.Tokenizer.fromPretrained(`${base}/stall/`, { timeout: 300 }),
    coded('ERR_TIMEOUT', `${base}/stall/tokenizer.json`));
  // No answer at all, not even headers (the first file asked, with HEAD).
  await assert.rejects(ak.Tokenizer.fromPretrained(`${base}/hang/`, { timeout: 300 }), coded('ERR_TIMEOUT', `${base}/hang/`));
  assert.ok(performance.now() - t0 < 10000, 'the timeouts fire in time');
});

test('an AbortSignal aborts a body being read: ERR_ABORTED naming the URL, the connection closed', async () => {
  for (const [what, start, file] of [
    ['Model', (signal) => ak.Model.fromPretrained(`${base}/stall/`, { signal }), 'model.safetensors'],
    ['Tokenizer', (signal) => ak.Tokenizer.fromPretrained(`${base}/stall/`, { signal }), 'tokenizer.json'],
  ]) {
    const controller = new AbortController();
    let stalled;
    const reached = new Promise((resolve) => {
      onStall = (s) => resolve((stalled = s));
    });
    const p = start(controller.signal);
    await Promise.race([reached, p.catch(() => {})]); // the server has sent half the body (or the load failed early)
    controller.abort();
    const e = await failure(p);
    coded('ERR_ABORTED', `${base}/stall/${file}`)(e);
    assert.equal(e.cause, controller.signal.reason, `${what}: the signal's reason is the cause`);
    // The read was cancelled, so the connection goes too.
    await new Promise((resolve, reject) => {
      if (stalled.destroyed) return resolve();
      const t = setTimeout(() => reject(new Error(`${what}: the stalled connection was not closed`)), 2000);
      stalled.once('close', () => resolve(clearTimeout(t)));
    });
  }
  // A signal aborted before the call: nothing is fetched.
  await assert.rejects(ak.Model.fromPretrained(`${base}/ok/`, { signal: AbortSignal.abort() }), coded('ERR_ABORTED', `${base}/ok/`));
});

test('signal and timeout are checked', async () => {
  await assert.rejects(ak.Model.fromPretrained(`${base}/ok/`, { signal: {} }), (e) => coded('ERR_INVALID_ARGUMENT', 'signal')(e) && e.argument === 'signal');
  await assert.rejects(ak.Tokenizer.fromPretrained(`${base}/ok/`, { timeout: -1 }), (e) => coded('ERR_INVALID_ARGUMENT', 'timeout')(e) && e.argument === 'timeout');
  await assert.rejects(ak.Tokenizer.fromPretrained(`${base}/ok/`, { timeout: '300' }), coded('ERR_INVALID_ARGUMENT', 'timeout'));
  await assert.rejects(ak.Model.fromPretrained(`${base}/ok/`, { timeout: NaN }), coded('ERR_INVALID_ARGUMENT', 'timeout'));
  for (const timeout of [0, Infinity]) (await ak.Tokenizer.fromPretrained(`${base}/ok/`, { timeout })).dispose();
});

test('a fetch that fails (nothing listens) is ERR_LOAD naming the URL, with the cause', async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${closed.address().port}/`;
  await new Promise((resolve) => closed.close(resolve));
  const e = await failure(ak.Tokenizer.fromPretrained(url));
  coded('ERR_LOAD', url)(e);
  assert.ok(e.cause instanceof Error, 'the original error is the cause');
});

test('a Response whose body was already read is ERR_INVALID_ARGUMENT naming it, not a TypeError', async () => {
  const used = async (file) => {
    const r = await fetch(`${base}/ok/${file}`);
    await r.arrayBuffer();
    return r;
  };
  await assert.rejects(ak.loadSafetensors(await used('model.safetensors')),
    coded('ERR_INVALID_ARGUMENT', 'already read', `${base}/ok/model.safetensors`));
  await assert.rejects(ak.Tokenizer.fromPretrained({ 'tokenizer.json': await used('tokenizer.json') }),
    (e) => coded('ERR_INVALID_ARGUMENT', 'already read', 'tokenizer.json')(e) && e.argument === 'tokenizer.json');
  await assert.rejects(ak.Tokenizer.fromJSON(await used('tokenizer.json')), coded('ERR_INVALID_ARGUMENT', 'already read', 'tokenizerJson'));
  await assert.rejects(ak.Model.fromPretrained({ config: await used('config.json'), weights: new Uint8Array(8) }),
    coded('ERR_INVALID_ARGUMENT', 'already read', `${base}/ok/config.json`));
});

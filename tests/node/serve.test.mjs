// The tutorial server (scripts/serve.mjs) against requests a hostile page or a careless client
// sends: bad escapes, other methods, a foreign Host (DNS rebinding), symlinks out of its roots.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { startServer } from '../../scripts/serve.mjs';

// A raw request (fetch would normalise the path and refuse to set Host).
function request(port, { method = 'GET', path: p = '/', host = `127.0.0.1:${port}` } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the tutorial server answers bad requests with 4xx and keeps serving', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-serve-'));
  fs.mkdirSync(path.join(root, 'web'));
  fs.writeFileSync(path.join(root, 'web', 'index.html'), '<p>hi</p>');
  fs.writeFileSync(path.join(root, 'secret.txt'), 'secret');
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(root, 'web', 'link.txt'));
  const { server } = await startServer({ root, served: ['web'] });
  const port = server.address().port;
  try {
    assert.equal((await request(port, { path: '/web/' })).status, 200);
    assert.equal((await request(port, { path: '/web/%' })).status, 400);
    assert.equal((await request(port, { path: '/web/%E0%A4%A' })).status, 400);
    assert.equal((await request(port, { path: '/web/%00' })).status, 400);
    assert.equal((await request(port, { method: 'POST', path: '/web/' })).status, 405);
    assert.equal((await request(port, { method: 'DELETE', path: '/web/' })).status, 405);
    assert.equal((await request(port, { method: 'HEAD', path: '/web/' })).status, 200);
    assert.equal((await request(port, { path: '/web/', host: 'evil.example:80' })).status, 421);
    assert.equal((await request(port, { path: '/web/', host: `localhost:${port}` })).status, 200);
    const link = await request(port, { path: '/web/link.txt' });
    assert.equal(link.status, 404);
    assert.doesNotMatch(link.body, /secret/);
    assert.equal((await request(port, { path: '/web/../secret.txt' })).status, 404);
    assert.equal((await request(port, { path: '/web/%2e%2e/secret.txt' })).status, 404);
    assert.equal((await request(port, { path: '/web/' })).status, 200, 'still serving');
  } finally {
    server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
});

// A bundler's view of the package: Vite builds an app that imports 'attnkit', must emit both .wasm
// files as assets, and the built app must run in Chromium.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { ROOT } from '../node/helpers.mjs';
import { openPage } from './browser.mjs';

test('a Vite build of an app importing attnkit emits both .wasm files and runs', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-vite-'));
  try {
    const app = path.join(work, 'app');
    fs.cpSync(path.join(ROOT, 'tests/browser/vite-app'), app, { recursive: true });
    // What `npm install attnkit` would leave: the package (its "files") under node_modules.
    fs.mkdirSync(path.join(app, 'node_modules'));
    fs.symlinkSync(ROOT, path.join(app, 'node_modules', 'attnkit'), 'dir');
    const dist = path.join(work, 'dist');
    await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: dist, target: 'es2022' } });

    const assets = fs.readdirSync(path.join(dist, 'assets'));
    assert.ok(assets.some((f) => /^attnkit-simd-.*\.wasm$/.test(f)), `no SIMD wasm in ${assets}`);
    assert.ok(assets.some((f) => /^attnkit-scalar-.*\.wasm$/.test(f)), `no scalar wasm in ${assets}`);

    const { page, problems, close } = await openPage({ root: dist, served: ['.'], home: '/' });
    try {
      await page.waitForFunction(() => document.getElementById('out').textContent !== 'loading');
      assert.equal(await page.textContent('#out'), `wasm-simd128 ${Math.sin(1).toFixed(4)}`);
      assert.deepEqual(problems, []);
    } finally {
      await close();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});

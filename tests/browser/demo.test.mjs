import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDemo, canvasStats, ARTIFACTS } from './browser.mjs';
import { fixture, maxAbsDiff } from '../node/helpers.mjs';

const fx = fixture('positional.json');
const golden = (layout) => fx.cases.find((c) => c.length === 100 && c.dim === 128 && c.layout === layout);

test('the demo page draws PyTorch\'s table in headless Chromium', async (t) => {
  const { page, problems, close } = await openDemo();
  t.after(close);
  fs.mkdirSync(ARTIFACTS, { recursive: true });

  assert.equal(await page.textContent('#backend'), 'wasm-simd128');
  const first = await page.evaluate(() => ({ data: Array.from(window.attnkitDemo.table.data), p: window.attnkitDemo.params }));
  assert.deepEqual(first.p, { length: 100, dim: 128, base: 10000, layout: 'interleaved' });
  assert.ok(maxAbsDiff(first.data, golden('interleaved').data) < 2e-6 + 100 * 1.2e-7);
  const drawn = await canvasStats(page, 'pe-heatmap');
  assert.ok(drawn.colours > 200, `only ${drawn.colours} colours on the heatmap`);
  assert.ok(drawn.inked > drawn.pixels / 3, `only ${drawn.inked} of ${drawn.pixels} pixels drawn`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'demo-positional.png'), fullPage: true });

  // Changing a control recomputes and redraws.
  const draws = await page.evaluate(() => window.attnkitDemo.draws);
  await page.selectOption('#pe-layout', 'split');
  await page.waitForFunction((n) => window.attnkitDemo.draws > n, draws);
  const split = await page.evaluate(() => Array.from(window.attnkitDemo.table.data));
  assert.ok(maxAbsDiff(split, golden('split').data) < 2e-6 + 100 * 1.2e-7);

  // A bad value shows attnkit's own message, and the page keeps working afterwards.
  await page.fill('#pe-dim', '7');
  await page.waitForFunction(() => document.getElementById('pe-status').classList.contains('error'));
  assert.match(await page.textContent('#pe-status'), /dim must be even.*got 7/);
  await page.fill('#pe-dim', '64');
  await page.waitForFunction(() => window.attnkitDemo.params?.dim === 64);
  assert.equal(await page.evaluate(() => window.attnkitDemo.table.dims.join('x')), '100x64');

  assert.deepEqual(problems, []);
});

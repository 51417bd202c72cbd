// Debian's Chromium driven by playwright-core (no browser download: executablePath).
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';
import { ROOT } from '../node/helpers.mjs';

export const ARTIFACTS = path.join(ROOT, 'test-results');

/**
 * Serves `serverOptions` (see scripts/serve.mjs), opens its home page in headless Chromium and
 * collects console errors/warnings, page errors and failed requests into `problems`.
 */
export async function openPage({ viewport = { width: 1100, height: 900 }, ...serverOptions } = {}) {
  const { server, url } = await startServer(serverOptions);
  const opened = await openUrl(url, { viewport });
  const close = async () => {
    await opened.close();
    server.close();
  };
  return { ...opened, close, url };
}

/** Opens `url` (served by someone else, a bundler's dev server say) in headless Chromium. */
export async function openUrl(url, { viewport = { width: 1100, height: 900 } } = {}) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport });
  const problems = [];
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(url);
  return { page, problems, requests, close: () => browser.close(), url };
}

/** The tutorial page, once its first draw has finished. */
export async function openTutorial(viewport) {
  const opened = await openPage({ viewport });
  await opened.page.evaluate(() => window.tutorial.ready);
  return opened;
}

/** Distinct colours, non-white pixels and a hash of the pixels of a canvas, read back from the page. */
export function canvasStats(page, id) {
  return page.evaluate((id) => {
    // Read a copy, so that the page's own canvas is never read back (Chromium warns about
    // repeated readbacks of a canvas that was not created for them).
    const c = document.getElementById(id);
    const copy = document.createElement('canvas');
    copy.width = c.width;
    copy.height = c.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(c, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let inked = 0;
    for (let i = 0; i < d.length; i += 4) {
      colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) inked++;
    }
    let hash = 7;
    for (let i = 0; i < d.length; i++) hash = (hash * 31 + d[i]) % 1000000007;
    return { colours: colours.size, inked, pixels: d.length / 4, hash };
  }, id);
}

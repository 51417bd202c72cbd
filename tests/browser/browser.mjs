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
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(url);
  const close = async () => {
    await browser.close();
    server.close();
  };
  return { page, problems, close, url };
}

/** The demo page, once its first draw has finished. */
export async function openDemo(viewport) {
  const opened = await openPage({ viewport });
  await opened.page.evaluate(() => window.attnkitDemo.ready);
  return opened;
}

/** Distinct colours and non-white pixels inside a canvas, read back from the page. */
export function canvasStats(page, id) {
  return page.evaluate((id) => {
    const c = document.getElementById(id);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let inked = 0;
    for (let i = 0; i < d.length; i += 4) {
      colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250) inked++;
    }
    return { colours: colours.size, inked, pixels: d.length / 4 };
  }, id);
}

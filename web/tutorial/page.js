// What every section of the tutorial page uses: the worker's requests, the figures (heatmaps, line
// charts, blanking after a failure), the status lines, and what the browser test reads (window.tutorial).
import { Heatmap, drawLines, formatValue as fmt } from './plots.js';

export const $ = (id) => document.getElementById(id);

// What the browser test reads: the latest results and how often each part was drawn.
export const tutorial = {
  results: null, positions: null, speed: null, checkpoint: null, scores: null, next: null, generation: null,
  draws: { pipeline: 0, positions: 0, speed: 0, scores: 0, next: 0, generation: 0 }, errors: [],
};
window.tutorial = tutorial;

// ---- the worker, with one request in flight per kind and only the newest waiting -------------
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const pending = new Map();
let nextId = 0;
worker.onmessage = ({ data }) => {
  const p = pending.get(data.id);
  pending.delete(data.id);
  if (data.error) p.reject(Object.assign(new Error(data.error.message), data.error));
  else p.resolve(data.result);
};
worker.onerror = (e) => {
  e.preventDefault();
  for (const p of pending.values()) p.reject(new Error(`the worker failed to start: ${e.message ?? 'unknown error'}`));
  pending.clear();
};
export function call(op, args, transfer = []) {
  return new Promise((resolve, reject) => {
    const id = ++nextId;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, args }, transfer);
  });
}
export function latestOnly(op, render, fail) {
  let busy = false, waiting = null;
  const run = async (args) => {
    if (busy) { waiting = args; return; }
    busy = true;
    try {
      render(await call(op, args));
    } catch (e) {
      fail(e);
    } finally {
      busy = false;
      if (waiting) { const a = waiting; waiting = null; run(a); }
    }
  };
  return run;
}

// Settles once sections 1–6 and section 3 have each been drawn (or an error was shown).
let firstDrawn;
export const firstDraw = new Promise((resolve) => { firstDrawn = resolve; });
export const checkFirstDraw = () => {
  if ((tutorial.draws.pipeline && tutorial.draws.positions) || tutorial.errors.length) firstDrawn();
};

export function showStatus(el, text, error = false) {
  if (error) { tutorial.errors.push(text); checkFirstDraw(); }
  el.textContent = text;
  el.classList.toggle('error', error);
}

// ---- figures: <figure data-plot=id data-title=…> gets a caption, a canvas and a readout -------
// Every plot can be saved as a PNG (the canvas as drawn, at the screen's pixel ratio).
function exportPng(id) {
  $(id).toBlob((blob) => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `attnkit-${id}.png`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }, 'image/png');
}
export function makeFigure(fig, id, title) {
  fig.dataset.plot = id;
  fig.innerHTML = `<figcaption><span id="${id}-caption"></span> <button type="button" class="export" id="${id}-png">PNG</button></figcaption>` +
    `<canvas id="${id}" role="img"></canvas><p class="readout" id="${id}-readout" aria-live="polite"></p>`;
  $(`${id}-caption`).textContent = title;
  $(`${id}-png`).setAttribute('aria-label', `Save “${title}” as a PNG image`);
  $(`${id}-png`).addEventListener('click', () => exportPng(id));
}
for (const fig of document.querySelectorAll('figure[data-plot]')) makeFigure(fig, fig.dataset.plot, fig.dataset.title);

export const heatmaps = new Map();
export function range(data) {
  let lo = Infinity, hi = -Infinity;
  for (const v of data) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return lo === Infinity ? [0, 0] : [lo, hi];
}
export function heat(id, spec) {
  const canvas = $(id);
  if (!heatmaps.has(id)) heatmaps.set(id, new Heatmap(canvas, $(`${id}-readout`)));
  heatmaps.get(id).draw(spec);
  const [lo, hi] = range(spec.data);
  canvas.setAttribute('aria-label', `${$(`${id}-caption`).textContent}: heatmap of ${spec.rows} ${spec.rowTitle} rows by ` +
    `${spec.cols} ${spec.colTitle} columns, values from ${fmt(lo)} to ${fmt(hi)}. Focus it and use the arrow keys to read cells.`);
}
export function lines(id, spec, summary) {
  drawLines($(id), spec);
  $(id).setAttribute('aria-label', `${$(`${id}-caption`).textContent}: line chart of ${spec.yTitle} against ${spec.xTitle}. ${summary ?? ''}`);
}

/** Blanks the plots of `section` (after a failed request: nothing stale stays on screen). */
export function blankSection(section) {
  for (const c of document.querySelectorAll(`#${section} canvas`)) blankCanvas(c);
  for (const r of document.querySelectorAll(`#${section} .readout, #${section} .facts`)) r.textContent = '';
}
export function blankCanvas(c) {
  const ctx = c.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, c.width, c.height);
  c.setAttribute('aria-label', 'Nothing to show: see the message above.');
  heatmaps.get(c.id)?.forget();
}

export const display = (t) => (t ?? '').replace(/^Ġ/, '␣').replace(/Ċ/g, '⏎');

/** Options 0..n-1 for a select, keeping `value`. */
export function fillSelect(sel, n, value) {
  if (sel.options.length !== n) sel.innerHTML = Array.from({ length: n }, (_, i) => `<option value="${i}">${i}</option>`).join('');
  sel.value = String(value);
}

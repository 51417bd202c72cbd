// The demo page: every number on it comes from the attnkit wasm module.
import { load } from '../attnkit.js';
import { drawHeatmap } from './heatmap.js';

const $ = (id) => document.getElementById(id);

// State the browser test reads: the last table drawn and the parameters it was drawn with.
const demo = { table: null, params: null, draws: 0 };
window.attnkitDemo = demo;

function readParams() {
  return {
    length: Number($('pe-length').value),
    dim: Number($('pe-dim').value),
    base: Number($('pe-base').value),
    layout: $('pe-layout').value,
  };
}

function drawPositional(ak) {
  const p = readParams();
  const status = $('pe-status');
  try {
    const t0 = performance.now();
    const table = ak.sinusoidalPositionalEncoding(p.length, p.dim, { base: p.base, layout: p.layout });
    const ms = performance.now() - t0;
    drawHeatmap($('pe-heatmap'), table.data, p.length, p.dim, { rowLabel: 'position p', colLabel: 'dimension i' });
    status.className = 'status';
    status.textContent = `${p.length} × ${p.dim} table computed in ${ms.toFixed(2)} ms (${ak.backend}).`;
    $('pe-caption').textContent =
      `PE[p, i] for p < ${p.length}, i < ${p.dim}, base ${p.base}, ${p.layout} layout. ` +
      `PE[1, 0..3] = ${Array.from(table.data.slice(p.dim, p.dim + 4), (v) => v.toFixed(4)).join(', ')}`;
    demo.table = table;
    demo.params = p;
    demo.draws++;
  } catch (e) {
    // attnkit's errors name the argument and value: show them as they are.
    status.className = 'status error';
    status.textContent = e.message;
  }
}

demo.ready = (async () => {
  const ak = await load();
  $('backend').textContent = ak.backend;
  for (const id of ['pe-length', 'pe-dim', 'pe-base', 'pe-layout']) {
    $(id).addEventListener('input', () => drawPositional(ak));
  }
  drawPositional(ak);
})();

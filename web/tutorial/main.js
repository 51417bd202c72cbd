// The tutorial page: reads the controls, asks the worker (worker.js) for the numbers, draws them.
// Nothing here computes the model; the page only lays out what attnkit returned.
import { Heatmap, drawLines, drawBars, drawOneHot, formatValue as fmt } from './plots.js';

const $ = (id) => document.getElementById(id);

// What the browser test reads: the latest results and how often each part was drawn.
const tutorial = { results: null, positions: null, speed: null, checkpoint: null, draws: { pipeline: 0, positions: 0, speed: 0 }, errors: [] };
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
function call(op, args, transfer = []) {
  return new Promise((resolve, reject) => {
    const id = ++nextId;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, op, args }, transfer);
  });
}
function latestOnly(op, render, fail) {
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
const firstDraw = new Promise((resolve) => { firstDrawn = resolve; });
const checkFirstDraw = () => {
  if ((tutorial.draws.pipeline && tutorial.draws.positions) || tutorial.errors.length) firstDrawn();
};

function showStatus(el, text, error = false) {
  if (error) { tutorial.errors.push(text); checkFirstDraw(); }
  el.textContent = text;
  el.classList.toggle('error', error);
}

// ---- figures: <figure data-plot=id data-title=…> gets a caption, a canvas and a readout -------
function makeFigure(fig, id, title) {
  fig.dataset.plot = id;
  fig.innerHTML = `<figcaption id="${id}-caption"></figcaption><canvas id="${id}" role="img"></canvas>` +
    `<p class="readout" id="${id}-readout" aria-live="polite"></p>`;
  $(`${id}-caption`).textContent = title;
}
for (const fig of document.querySelectorAll('figure[data-plot]')) makeFigure(fig, fig.dataset.plot, fig.dataset.title);

const heatmaps = new Map();
function range(data) {
  let lo = Infinity, hi = -Infinity;
  for (const v of data) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  return lo === Infinity ? [0, 0] : [lo, hi];
}
function heat(id, spec) {
  const canvas = $(id);
  if (!heatmaps.has(id)) heatmaps.set(id, new Heatmap(canvas, $(`${id}-readout`)));
  heatmaps.get(id).draw(spec);
  const [lo, hi] = range(spec.data);
  canvas.setAttribute('aria-label', `${$(`${id}-caption`).textContent}: heatmap of ${spec.rows} ${spec.rowTitle} rows by ` +
    `${spec.cols} ${spec.colTitle} columns, values from ${fmt(lo)} to ${fmt(hi)}. Focus it and use the arrow keys to read cells.`);
}
function lines(id, spec, summary) {
  drawLines($(id), spec);
  $(id).setAttribute('aria-label', `${$(`${id}-caption`).textContent}: line chart of ${spec.yTitle} against ${spec.xTitle}. ${summary ?? ''}`);
}

const display = (t) => (t ?? '').replace(/^Ġ/, '␣').replace(/Ċ/g, '⏎');

// ---- state --------------------------------------------------------------------------------------
const controls = ['text', 'pair', 'tokenizer', 'special', 'pad-to', 'pad-side', 'scale', 'emb-positional', 'att-positional', 'att-causal', 'att-head'];
function pipelineArgs() {
  return {
    text: $('text').value, pair: $('pair').value, tokenizer: $('tokenizer').value, addSpecial: $('special').checked,
    padTo: Number($('pad-to').value) || 0, padSide: $('pad-side').value, scale: $('scale').checked,
    embPositional: $('emb-positional').value, attPositional: $('att-positional').value,
    causal: $('att-causal').checked, head: Number($('att-head').value) || 0,
  };
}
function positionArgs() {
  return {
    length: Number($('pe-length').value), dim: Number($('pe-dim').value), base: Number($('pe-base').value),
    layout: $('pe-layout').value, p: Number($('pe-p').value), k: Number($('pe-k').value),
  };
}

// ---- section 1 ----------------------------------------------------------------------------------
function renderTokens(r) {
  const t = r.tokens;
  const L = t.ids.length, real = t.attentionMask.reduce((a, b) => a + b, 0);
  const cls = (i) => (t.attentionMask[i] === 0 ? 'pad' : t.offsets[i] && t.offsets[i][1] === t.offsets[i][0] ? 'special' : t.typeIds[i] ? 'seg1' : '');
  const row = (name, f) => `<tr><th scope="row">${name}</th>${Array.from({ length: L }, (_, i) => `<td class="${cls(i)}">${f(i)}</td>`).join('')}</tr>`;
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  $('token-table').tBodies[0].innerHTML = [
    row('position', (i) => i),
    row('token', (i) => esc(display(t.tokens[i]))),
    row('id', (i) => t.ids[i]),
    row('segment', (i) => t.typeIds[i]),
    row('attention mask', (i) => t.attentionMask[i]),
    row('characters', (i) => (t.offsets[i] ? `${t.offsets[i][0]}–${t.offsets[i][1]}` : '')),
  ].join('');
  showStatus($('status'), `${L} positions: ${real} tokens and ${L - real} padding (“${display(t.padToken)}”, id ${t.padId}); ` +
    `vocabulary of ${t.vocabSize} (${t.model === 'bpe' ? 'byte-level BPE' : 'WordPiece'}).` +
    (t.truncated ? ` Truncated to the tutorial's ${L} tokens.` : ''));
}

// ---- section 2 ----------------------------------------------------------------------------------
function renderLookup(r, labels) {
  const k = r.lookup, L = labels.length;
  drawOneHot($('onehot'), { ids: Array.from(k.hot), depth: k.vocabSize, rowLabels: labels });
  $('onehot').setAttribute('aria-label', `One-hot rows: ${L} rows of ${k.vocabSize} entries, each 0 except a 1 at the token's id.`);
  heat('lookup-rows', { data: k.scaled, rows: L, cols: k.dim, rowLabels: labels, rowTitle: 'token', colTitle: 'dimension' });
  $('lookup-facts').innerHTML =
    `The one-hot matrix has ${L} × ${k.vocabSize.toLocaleString('en')} = ${(L * k.vocabSize).toLocaleString('en')} entries, ` +
    `${k.ones} of them 1. Multiplying it by <var>E</var> took ${k.matmulMs.toFixed(2)} ms ` +
    `(${k.macs.toLocaleString('en')} multiply-adds, nearly all by zero); the lookup took ${k.lookupMs.toFixed(3)} ms. ` +
    `Largest difference between the two: <strong>${fmt(k.matmulDiff)}</strong>. ` +
    `Root-mean-square entry: ${k.rmsRows.toFixed(3)} looked up, ${k.rmsScaled.toFixed(3)} after × ${k.scale.toFixed(2)}, ` +
    `${k.rmsPositional.toFixed(3)} for the sinusoidal positions added next.`;
}

// ---- section 3 ----------------------------------------------------------------------------------
function renderPositions(r) {
  const { length, dim, base, layout, p, k } = r.params;
  heat('pe-heatmap', { data: r.table, rows: length, cols: dim, range: 1, rowTitle: 'position p', colTitle: 'dimension i', values: false, height: 380 });
  // Four sine columns, from fast to slow.
  const pairs = [...new Set([0, Math.floor(dim / 16), Math.floor(dim / 8), Math.floor(dim / 4)])];
  const xs = Array.from({ length }, (_, i) => i);
  lines('pe-waves', {
    series: pairs.map((j) => {
      const col = layout === 'split' ? j : 2 * j;
      return { label: `i = ${col} (wavelength ${fmt(2 * Math.PI * base ** (2 * j / dim))})`, x: xs, y: xs.map((q) => r.table[q * dim + col]) };
    }),
    xTitle: 'position p', yTitle: 'PE[p, i]', yRange: [-1.15, 1.15],
  });
  lines('pe-dots', {
    series: r.dots.map((d, n) => ({ label: `p₀ = ${d.p0}`, x: Array.from(d.values, (_, i) => i), y: d.values, dash: n ? [6, 4] : [] })),
    xTitle: 'shift k', yTitle: 'dot product',
  }, `Starting at p₀ = ${r.dots.map((d) => d.p0).join(' and ')}; the curves coincide.`);
  // T(k) is block-diagonal; its top-left corner shows the 2 × 2 rotations (interleaved) or the
  // two diagonals (split) that it is made of.
  const n = Math.min(dim, 16), corner = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) corner[i * n + j] = r.shift.T[i * dim + j];
  $('pe-shift-caption').textContent = `T(${k}): a rotation in each (sin, cos) pair${n < dim ? ` (top-left ${n} × ${n} of ${dim} × ${dim})` : ''}`;
  heat('pe-shift', { data: corner, rows: n, cols: n, range: 1, rowTitle: 'output i', colTitle: 'input j', maxCell: 40 });
  const idx = Array.from({ length: dim }, (_, i) => i);
  lines('pe-shift-check', {
    series: [
      { label: `PE(${p + k})`, x: idx, y: r.shift.target, points: dim <= 64 },
      { label: `T(${k}) · PE(${p})`, x: idx, y: r.shift.mapped, dash: [5, 4] },
    ],
    xTitle: 'dimension i', yTitle: 'value', yRange: [-1.15, 1.15],
  });
  $('pe-shift-facts').innerHTML = `T(${k}) · PE(${p}) = PE(${p + k}) to within <strong>${fmt(r.shift.diff)}</strong> ` +
    `(float32 rounding). First entries: ${Array.from(r.shift.mapped.slice(0, 4), (v) => v.toFixed(5)).join(', ')} against ` +
    `${Array.from(r.shift.target.slice(0, 4), (v) => v.toFixed(5)).join(', ')}.`;
  const lt = r.learned;
  $('pe-learned-caption').textContent = `Learned position table P[p, i] (${r.learnedSource === 'default' ? 'default, untrained' : `the ${r.learnedSource} checkpoint`}, first ${lt.rows} rows)`;
  heat('pe-learned', { data: lt.data, rows: lt.rows, cols: lt.dim, rowTitle: 'position p', colTitle: 'dimension i', values: false, height: 300 });
  lines('pe-learned-cos', {
    series: lt.cosines.map((d, n) => ({ label: `p₀ = ${d.p0}`, x: Array.from(d.values, (_, i) => i), y: d.values, dash: n ? [6, 4] : [] })),
    xTitle: 'shift k', yTitle: 'cosine similarity', yRange: [-1, 1.05],
  });
}

// ---- section 4 ----------------------------------------------------------------------------------
function renderSum(r, labels) {
  const e = r.embed, L = labels.length, D = r.dim;
  const common = Math.max(...[e.word, e.position, e.segment, e.sum].map((x) => Math.max(...range(x).map(Math.abs))));
  const spec = (data) => ({ data, rows: L, cols: D, rowLabels: labels, rowTitle: 'token', colTitle: 'dimension', range: common, values: false });
  heat('emb-word', spec(e.word));
  heat('emb-position', spec(e.position));
  heat('emb-segment', spec(e.segment));
  heat('emb-sum', spec(e.sum));
  heat('emb-norm', { ...spec(e.normed), range: undefined });
  $('emb-position-caption').textContent = `+ position (${e.positional})`;
  $('emb-segment-caption').textContent = e.hasSegments ? '+ segment' : '+ segment (this model has none: zeros)';
  $('emb-norm-caption').textContent = e.hasNorm ? 'LayerNorm(sum)' : 'no LayerNorm here (GPT-2 normalises inside each layer)';
  const xs = Array.from({ length: L }, (_, i) => i);
  lines('emb-stats', {
    series: [
      { label: 'mean before', x: xs, y: e.before.mean, points: true },
      { label: 'std before', x: xs, y: e.before.std, points: true },
      { label: 'mean after', x: xs, y: e.after.mean, dash: [5, 4] },
      { label: 'std after', x: xs, y: e.after.std, dash: [5, 4] },
    ],
    xTitle: 'token position', yTitle: 'over the dimensions',
  });
  $('emb-facts').innerHTML = `Each row after LayerNorm: mean ${fmt(Math.max(...e.after.mean.map(Math.abs)))} at most in absolute value, ` +
    `standard deviation between ${fmt(Math.min(...e.after.std))} and ${fmt(Math.max(...e.after.std))}. ` +
    `The step-by-step result differs from ${e.check.against} by at most <strong>${fmt(e.check.diff)}</strong>.`;
}

// ---- section 5 ----------------------------------------------------------------------------------
function renderMasks(r, labels) {
  const L = labels.length, m = r.masks;
  const spec = (data) => ({ data: Float32Array.from(data), rows: L, cols: L, rowLabels: labels, colLabels: labels,
    rowTitle: 'query', colTitle: 'key', scale: 'sequential', range: 1, values: false });
  heat('mask-padding', spec(m.paddingMatrix));
  heat('mask-causal', spec(m.causal));
  heat('mask-combined', spec(m.combined));
  const allowed = m.combined.reduce((a, b) => a + b, 0);
  $('mask-facts').innerHTML = `The padding mask's own shape is [${m.paddingDims.join(', ')}]; combined, ${allowed} of ${L * L} ` +
    `query–key pairs may attend. ` + (m.fullyMasked.length
    ? `Rows ${m.fullyMasked.join(', ')} are fully masked: a query that may see nothing. attnkit's attention gives them zero weights and a zero output (PyTorch would give NaN).`
    : 'No query row is fully masked.');
}

// ---- section 6 ----------------------------------------------------------------------------------
function renderAttention(r, labels) {
  const a = r.attention, L = labels.length;
  const sel = $('att-head');
  if (sel.options.length !== a.H) {
    sel.innerHTML = Array.from({ length: a.H }, (_, h) => `<option value="${h}">${h}</option>`).join('');
    sel.value = String(a.head);
  }
  const dims = Array.from({ length: a.hd }, (_, i) => String(i));
  const qkv = (id, data, title) => heat(id, { data, rows: L, cols: a.hd, rowLabels: labels, colLabels: dims, rowTitle: 'token', colTitle: title, values: false });
  qkv('att-q', a.qRotated ?? a.q, 'q dimension');
  qkv('att-k', a.kRotated ?? a.k, 'k dimension');
  qkv('att-v', a.v, 'v dimension');
  $('att-q-caption').textContent = a.qRotated ? `Q of head ${a.head}, rotated by RoPE` : `Q of head ${a.head}`;
  $('att-k-caption').textContent = a.kRotated ? 'K, rotated by RoPE' : 'K';
  const square = (data, extra = {}) => ({ data, rows: L, cols: L, rowLabels: labels, colLabels: labels, rowTitle: 'query', colTitle: 'key', ...extra });
  heat('att-scores', square(a.scores));
  heat('att-scaled', square(a.scaled));
  $('att-scaled-caption').textContent = `② × 1/√${a.hd} = ${fmt(a.scale)}`;
  $('att-bias').closest('figure').hidden = !a.bias;
  if (a.bias) heat('att-bias', square(a.bias));
  heat('att-masked', square(a.masked));
  heat('att-weights', square(a.weights, { scale: 'sequential' }));
  heat('att-output', { data: a.headOutput, rows: L, cols: a.hd, rowLabels: labels, colLabels: dims, rowTitle: 'token', colTitle: 'output dimension', values: false });
  $('att-facts').innerHTML = `Softmax of ③, row by row, against the weights of attnkit's fused attention kernel: largest difference ` +
    `<strong>${fmt(a.softmaxDiff)}</strong>. The layer's output (heads concatenated, then projected to width ${a.D}) against ` +
    `${a.check.against}: <strong>${fmt(a.check.diff)}</strong>.`;

  // Small multiples: every head's weights.
  const grid = $('att-heads');
  if (grid.children.length !== a.H) {
    grid.innerHTML = '';
    for (let h = 0; h < a.H; h++) {
      const fig = document.createElement('figure');
      grid.append(fig);
      makeFigure(fig, `att-head-${h}`, `head ${h}`);
      heatmaps.delete(`att-head-${h}`);
    }
  }
  for (let h = 0; h < a.H; h++) {
    heat(`att-head-${h}`, square(a.allWeights.slice(h * L * L, (h + 1) * L * L), { scale: 'sequential', values: false, maxCell: 16 }));
  }

  const d = a.ropeDemo;
  lines('att-rope', {
    series: d.series.flatMap((s, n) => [
      { label: `RoPE, n = ${s.n}`, x: Array.from(d.deltas), y: s.rope, colour: ['#0072B2', '#009E73', '#CC79A7'][n], dash: n ? [2 + 4 * n, 3] : [] },
      { label: `added, n = ${s.n}`, x: Array.from(d.deltas), y: s.added, colour: ['#D55E00', '#E69F00', '#000000'][n], dash: [8, 5] },
    ]),
    xTitle: 'offset δ = m − n', yTitle: 'q · k',
  });
  drawBars($('att-slopes'), { labels: Array.from(a.slopes, (_, h) => `head ${h}`), values: Array.from(a.slopes), xTitle: 'slope m', format: (v) => v.toPrecision(3) });
  $('att-slopes').setAttribute('aria-label', `ALiBi slopes: ${Array.from(a.slopes, (v) => v.toPrecision(3)).join(', ')}`);
  const w = r.weights === 'checkpoint' ? `the loaded ${tutorial.checkpoint?.family} checkpoint (layer 0; its own positions and mask)` : 'the default weights';
  showStatus($('att-settings'), `${a.H} heads of width ${a.hd} from ${w}; positions: ${a.positional}; ${a.causal ? 'causal' : 'bidirectional'}.`);
}

// ---- the pipeline: one request redraws sections 1, 2, 4, 5 and 6 -----------------------------
function renderPipeline(r) {
  tutorial.results = r;
  const labels = r.tokens.tokens.map(display);
  renderTokens(r);
  renderLookup(r, labels);
  renderSum(r, labels);
  renderMasks(r, labels);
  renderAttention(r, labels);
  tutorial.draws.pipeline++;
  checkFirstDraw();
}
const runPipeline = latestOnly('pipeline', renderPipeline, (e) => showStatus($('status'), e.message, true));
const runPositions = latestOnly('positions', (r) => {
  tutorial.positions = r;
  renderPositions(r);
  showStatus($('pe-status'), `${r.params.length} × ${r.params.dim} table, base ${r.params.base}, ${r.params.layout} layout.`);
  tutorial.draws.positions++;
  checkFirstDraw();
}, (e) => showStatus($('pe-status'), e.message, true));

let timer = 0;
const soon = (f) => { clearTimeout(timer); timer = setTimeout(f, 120); };
// 'input' fires for text, number, select and checkbox alike.
for (const id of controls) $(id).addEventListener('input', () => soon(() => runPipeline(pipelineArgs())));
for (const id of ['pad-to', 'pad-side']) {
  // Section 5 mirrors the padding controls of section 1.
  const mirror = $(`mask-${id}`);
  $(id).addEventListener('input', () => { mirror.value = $(id).value; });
  mirror.addEventListener('input', () => { $(id).value = mirror.value; soon(() => runPipeline(pipelineArgs())); });
}
for (const id of ['pe-length', 'pe-dim', 'pe-base', 'pe-layout', 'pe-p', 'pe-k']) $(id).addEventListener('input', () => runPositions(positionArgs()));

// ---- section 7 ----------------------------------------------------------------------------------
$('speed-run').addEventListener('click', async () => {
  const button = $('speed-run');
  button.disabled = true;
  showStatus($('speed-status'), 'Timing both builds…');
  try {
    const r = await call('speed', { length: Number($('speed-length').value), heads: 4, headDim: 64 });
    tutorial.speed = r;
    renderSpeed(r);
    tutorial.draws.speed++;
  } catch (e) {
    showStatus($('speed-status'), e.message, true);
  } finally {
    button.disabled = false;
  }
});
function renderSpeed(r) {
  const ok = r.runs.filter((x) => !x.error);
  drawBars($('speed-bars'), { labels: ok.map((x) => x.backend), values: ok.map((x) => x.medianMs), xTitle: 'milliseconds per call', format: (v) => `${v.toFixed(3)} ms` });
  $('speed-bars').setAttribute('aria-label', `Median milliseconds: ${ok.map((x) => `${x.backend} ${x.medianMs.toFixed(3)}`).join(', ')}`);
  $('speed-table').tBodies[0].innerHTML = r.runs.map((x) => (x.error
    ? `<tr><td>${x.backend}</td><td colspan="4">${x.error}</td></tr>`
    : `<tr><td>${x.backend}</td><td>${x.firstMs.toFixed(3)}</td><td>${x.medianMs.toFixed(3)}</td><td>${x.minMs.toFixed(3)}</td><td>${x.gflops.toFixed(2)}</td></tr>`)).join('');
  showStatus($('speed-status'), `Sequence of ${r.length}, ${r.heads} heads of ${r.headDim}: ${(r.flops / 1e6).toFixed(1)} Mflop per call, median of ${ok[0]?.reps ?? 0} warm samples of ${ok.map((x) => `${x.batch}`).join(' and ')} calls. ` +
    (r.speedup ? `SIMD is ${r.speedup.toFixed(1)}× faster than scalar here.` : ''));
}

// ---- checkpoint files -----------------------------------------------------------------------------
const modelControls = ['scale', 'emb-positional', 'att-positional', 'att-causal'];
$('ckpt-files').addEventListener('change', async (e) => {
  const status = $('ckpt-status');
  try {
    // The picked Files go to the worker as they are; it reads them as Model.fromPretrained does.
    const files = Array.from(e.target.files);
    showStatus(status, 'Loading the checkpoint…');
    const s = await call('loadCheckpoint', files);
    tutorial.checkpoint = s;
    const tokOption = $('tokenizer').querySelector('option[value=loaded]');
    tokOption.disabled = !s.tokenizer;
    $('tokenizer').value = s.tokenizer ? 'loaded' : s.family === 'gpt2' ? 'gpt2' : 'bert';
    $('att-positional').value = 'learned';
    $('att-causal').checked = s.causal;
    $('scale').checked = s.scale;
    $('emb-positional').value = 'learned';
    for (const id of modelControls) $(id).disabled = true;
    $('ckpt-unload').disabled = false;
    showStatus(status, `Loaded a ${s.family} model: ${s.layers} layers, width ${s.dim}, ${s.heads} heads, vocabulary ${s.vocabSize}, ` +
      `${s.parameters.toLocaleString('en')} parameters in ${s.tensorCount} tensors` +
      (s.tokenizer ? `, and its ${s.tokenizer} tokenizer.` : '; no tokenizer.json, so the bundled tokenizer of its family is used.') +
      ' Sections 2–6 now use its tables and its first layer; the switches that would change the model are fixed to its own.');
    runPipeline(pipelineArgs());
    runPositions(positionArgs());
  } catch (err) {
    showStatus(status, err.message, true);
  }
});
$('ckpt-unload').addEventListener('click', async () => {
  await call('unloadCheckpoint');
  tutorial.checkpoint = null;
  for (const id of modelControls) $(id).disabled = false;
  const tokOption = $('tokenizer').querySelector('option[value=loaded]');
  tokOption.disabled = true;
  if ($('tokenizer').value === 'loaded') $('tokenizer').value = 'bert';
  $('ckpt-unload').disabled = true;
  $('ckpt-files').value = '';
  showStatus($('ckpt-status'), 'Using the default weights.');
  runPipeline(pipelineArgs());
  runPositions(positionArgs());
});

// Redraw at the new width when the layout changes (phone rotation, window resize).
let lastWidth = 0, resizeTimer = 0;
new ResizeObserver(([entry]) => {
  const w = Math.round(entry.contentRect.width);
  if (w === lastWidth) return;
  lastWidth = w;
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (tutorial.results) renderPipeline(tutorial.results);
    if (tutorial.positions) renderPositions(tutorial.positions);
    if (tutorial.speed) renderSpeed(tutorial.speed);
  }, 150);
}).observe($('main'));

tutorial.ready = (async () => {
  try {
    const { backend } = await call('init');
    $('backend').textContent = backend;
  } catch (e) {
    $('backend').textContent = `failed: ${e.message}`;
    throw e;
  }
  runPipeline(pipelineArgs());
  runPositions(positionArgs());
  await firstDraw;
})();

// The tutorial page: reads the controls, asks the worker (worker.js) for the numbers, draws them.
// Nothing here computes the model; the page only lays out what attnkit returned.
import { Heatmap, drawLines, drawBars, drawOneHot, drawThumb, drawHeadView, formatValue as fmt } from './plots.js';
import { sampling } from '../attnkit.js';

const $ = (id) => document.getElementById(id);

// What the browser test reads: the latest results and how often each part was drawn.
const tutorial = {
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
function makeFigure(fig, id, title) {
  fig.dataset.plot = id;
  fig.innerHTML = `<figcaption><span id="${id}-caption"></span> <button type="button" class="export" id="${id}-png">PNG</button></figcaption>` +
    `<canvas id="${id}" role="img"></canvas><p class="readout" id="${id}-readout" aria-live="polite"></p>`;
  $(`${id}-caption`).textContent = title;
  $(`${id}-png`).setAttribute('aria-label', `Save “${title}” as a PNG image`);
  $(`${id}-png`).addEventListener('click', () => exportPng(id));
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

/** Blanks the plots of `section` (after a failed request: nothing stale stays on screen). */
function blankSection(section) {
  for (const c of document.querySelectorAll(`#${section} canvas`)) blankCanvas(c);
  for (const r of document.querySelectorAll(`#${section} .readout, #${section} .facts`)) r.textContent = '';
}
function blankCanvas(c) {
  const ctx = c.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, c.width, c.height);
  c.setAttribute('aria-label', 'Nothing to show: see the message above.');
  heatmaps.get(c.id)?.forget();
}

const display = (t) => (t ?? '').replace(/^Ġ/, '␣').replace(/Ċ/g, '⏎');

// ---- state --------------------------------------------------------------------------------------
const controls = ['text', 'pair', 'tokenizer', 'special', 'pad-to', 'pad-side', 'scale', 'emb-positional', 'att-positional', 'att-causal', 'att-layer', 'att-head'];
function pipelineArgs() {
  return {
    text: $('text').value, pair: $('pair').value, tokenizer: $('tokenizer').value, addSpecial: $('special').checked,
    padTo: Number($('pad-to').value) || 0, padSide: $('pad-side').value, scale: $('scale').checked,
    embPositional: $('emb-positional').value, attPositional: $('att-positional').value,
    causal: $('att-causal').checked, layer: Number($('att-layer').value) || 0, head: Number($('att-head').value) || 0,
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
    rowTitle: 'query', colTitle: 'key', scale: 'sequential', range: 1, values: false,
    swatches: [{ value: 1, label: '1: may attend' }, { value: 0, label: '0: hidden' }] });
  heat('mask-padding', spec(m.paddingMatrix));
  heat('mask-causal', spec(m.causal));
  heat('mask-combined', spec(m.combined));
  const allowed = m.combined.reduce((a, b) => a + b, 0);
  $('mask-facts').innerHTML = `The padding mask's own shape is [${m.paddingDims.join(', ')}]; combined, ${allowed} of ${L * L} ` +
    `query–key pairs may attend. ` + (m.fullyMasked.length
    ? `Rows ${m.fullyMasked.join(', ')} are fully masked: a query that may see nothing. attnkit's attention gives them zero weights and a zero output (PyTorch would give NaN).`
    : 'No query row is fully masked.');
}

/** Options 0..n-1 for a select, keeping `value`. */
function fillSelect(sel, n, value) {
  if (sel.options.length !== n) sel.innerHTML = Array.from({ length: n }, (_, i) => `<option value="${i}">${i}</option>`).join('');
  sel.value = String(value);
}

// ---- section 6 ----------------------------------------------------------------------------------
function renderAttention(r, labels) {
  const a = r.attention, L = labels.length;
  fillSelect($('att-head'), a.H, a.head);
  fillSelect($('att-layer'), r.model?.layers ?? 1, a.layer);
  $('att-layer').disabled = !r.model;
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
      { label: `RoPE, n = ${s.n}`, x: Array.from(d.deltas), y: s.rope, colour: ['#0072B2', '#009E73', '#CC79A7'][n] },
      { label: `added, n = ${s.n}`, x: Array.from(d.deltas), y: s.added, colour: ['#D55E00', '#E69F00', '#000000'][n], dash: [8, 5] },
    ]),
    xTitle: 'offset δ = m − n', yTitle: 'q · k',
  });
  drawBars($('att-slopes'), { labels: Array.from(a.slopes, (_, h) => `head ${h}`), values: Array.from(a.slopes), xTitle: 'slope m', format: (v) => v.toPrecision(3) });
  $('att-slopes').setAttribute('aria-label', `ALiBi slopes: ${Array.from(a.slopes, (v) => v.toPrecision(3)).join(', ')}`);
  const w = r.weights === 'checkpoint' ? `${modelName()} (layer ${a.layer}; its own positions and mask)` : 'the toy weights (one layer)';
  showStatus($('att-settings'), `${a.H} heads of width ${a.hd} from ${w}; positions: ${a.positional}; ${a.causal ? 'causal' : 'bidirectional'}.`);
}

// ---- section 7: every head, and what two of them learned --------------------------------------
let selected = { layer: 0, head: 0 };
function renderModelView(r, labels) {
  const view = $('model-view');
  const m = r.model;
  $('heads').classList.toggle('unavailable', !m);
  if (!m) {
    view.innerHTML = '';
    blankSection('heads');
    showStatus($('heads-status'), 'The toy model has a single attention layer (section 6). Choose the trained model above to see every layer.');
    return;
  }
  const L = labels.length, H = m.heads;
  selected = { layer: Math.min(selected.layer, m.layers - 1), head: Math.min(selected.head, H - 1) };
  if (view.dataset.shape !== `${m.layers}x${H}`) {
    view.dataset.shape = `${m.layers}x${H}`;
    view.style.setProperty('--heads', H);
    view.innerHTML = '';
    for (let l = 0; l < m.layers; l++) {
      for (let h = 0; h < H; h++) {
        const c = document.createElement('canvas');
        c.id = `mv-${l}-${h}`;
        c.className = 'thumb';
        c.tabIndex = 0;
        c.setAttribute('role', 'button');
        const pick = () => selectHead(l, h);
        c.addEventListener('click', pick);
        c.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
        const fig = document.createElement('figure');
        fig.className = 'thumb';
        const cap = document.createElement('figcaption');
        cap.textContent = `layer ${l}, head ${h}`;
        fig.append(cap, c);
        view.append(fig);
      }
    }
  }
  for (let l = 0; l < m.layers; l++) {
    for (let h = 0; h < H; h++) {
      const c = $(`mv-${l}-${h}`);
      drawThumb(c, m.attentions[l].subarray(h * L * L, (h + 1) * L * L), L, Math.max(60, Math.min(130, Math.floor((view.clientWidth - 12 * H) / H))));
      c.setAttribute('aria-label', `Layer ${l}, head ${h}: attention weights of ${L} tokens. Press Enter to take it apart in section 6.`);
      c.classList.toggle('selected', l === selected.layer && h === selected.head);
    }
  }
  const w = m.attentions[selected.layer].subarray(selected.head * L * L, (selected.head + 1) * L * L);
  drawHeadView($('head-view'), { weights: w, labels });
  $('head-view-caption').textContent = `Head view of layer ${selected.layer}, head ${selected.head}: each token (left) reads the tokens (right) its lines reach`;
  $('head-view').setAttribute('aria-label', `Head view of layer ${selected.layer}, head ${selected.head} for ${L} tokens.`);
  showStatus($('heads-status'), `${m.layers} layers × ${H} heads of ${modelName()}. Selected: layer ${selected.layer}, head ${selected.head}.`);
}
function selectHead(layer, head) {
  selected = { layer, head };
  $('att-layer').value = String(layer);
  $('att-head').value = String(head);
  runPipeline(pipelineArgs());
  $('attention').scrollIntoView({ block: 'start' });
}

const runScores = latestOnly('headScores', (r) => {
  tutorial.scores = r;
  renderScores(r);
  tutorial.draws.scores++;
}, (e) => { blankScores(); showStatus($('heads-status'), e.message, true); });
function blankScores() {
  for (const id of ['score-previous', 'score-induction', 'induction-map']) blankCanvas($(id));
  $('scores-facts').textContent = '';
}
function renderScores(r) {
  const layers = r.previousToken.length, H = r.previousToken[0].length;
  const grid = (id, scores, expected, what) => {
    const data = Float32Array.from(scores.flat());
    heat(id, { data, rows: layers, cols: H, rowLabels: Array.from({ length: layers }, (_, l) => `layer ${l}`),
      colLabels: Array.from({ length: H }, (_, h) => `head ${h}`), rowTitle: 'layer', colTitle: 'head', scale: 'sequential', range: 1, maxCell: 60 });
    let best = 0;
    for (let i = 1; i < data.length; i++) if (data[i] > data[best]) best = i;
    const l = Math.floor(best / H), h = best % H;
    const diff = Math.max(...scores.flat().map((v, i) => Math.abs(v - expected.flat()[i])));
    return { l, h, v: data[best], diff, what };
  };
  const prev = grid('score-previous', r.previousToken, r.expected.previousToken, 'previous-token');
  const ind = grid('score-induction', r.induction, r.expected.induction, 'induction');
  // The best induction head on its probe: the stripe one below the diagonal offset by the repeat.
  const N = r.N;
  heat('induction-map', { data: r.inductionMaps[ind.l].subarray(ind.h * N * N, (ind.h + 1) * N * N), rows: N, cols: N,
    rowTitle: 'query (first copy, then the second)', colTitle: 'key', scale: 'sequential', values: false, height: 360 });
  $('induction-map-caption').textContent = `Layer ${ind.l}, head ${ind.h} on ${r.probe.half} random tokens repeated twice: the stripe is the second copy reading the token after each token's first occurrence`;
  // What a head that spreads its weight evenly over the visible keys would score: the yardstick.
  let evenPrev = 0, evenInd = 0;
  for (let i = 1; i < r.L; i++) evenPrev += 1 / (i + 1) / (r.L - 1);
  for (let i = 1 + r.probe.half; i < 1 + 2 * r.probe.half; i++) evenInd += 1 / (i + 1) / r.probe.half;
  const verdict = (b, even, threshold) => (b.v >= threshold
    ? `${b.v.toFixed(3)}, against ${even.toFixed(3)} for weight spread evenly`
    : `${b.v.toFixed(3)}: little above the ${even.toFixed(3)} of weight spread evenly, so this model has not learned a clear ${b.what} head`);
  $('scores-facts').innerHTML = `Best previous-token head: <strong>layer ${prev.l}, head ${prev.h}</strong>, score ${verdict(prev, evenPrev, 0.5)}. ` +
    `Best induction head: <strong>layer ${ind.l}, head ${ind.h}</strong>, score ${verdict(ind, evenInd, 0.3)}. ` +
    `Measured here by attnkit; the training script measured the same heads in PyTorch, largest difference ` +
    `<strong>${fmt(Math.max(prev.diff, ind.diff))}</strong>. Click those heads in the model view above` +
    (ind.v < 0.3 ? '; docs/tutorial-model.md tells what its training tried.' : '.');
}

// ---- section 8: the next word, and the logit lens -------------------------------------------------
function nextArgs() {
  const num = (id) => Number($(id).value);
  return { temperature: num('next-temperature'), topK: Math.trunc(num('next-topk')), topP: num('next-topp') };
}
/** The sampling controls, checked as generate() checks its options: the message says what to fix. */
function checkNextArgs({ temperature, topK, topP }) {
  if (!(temperature > 0 && temperature <= 5)) return `temperature must be above 0 (and at most 5 here); got ${$('next-temperature').value || 'nothing'}`;
  if (!(topK >= 0 && Number.isInteger(topK))) return `top-k must be a whole number, 0 or more (0 keeps every token); got ${$('next-topk').value || 'nothing'}`;
  if (!(topP > 0 && topP <= 1)) return `top-p must be in (0, 1]; got ${$('next-topp').value || 'nothing'}`;
  return null;
}
function renderNext() {
  const r = tutorial.results;
  const next = r?.next;
  tutorial.next = null;
  if (!next) {
    blankSection('next');
    showStatus($('next-status'), r?.model ? 'This model has no language-model head (BERT and RoBERTa read, they do not predict the next word).'
      : 'The toy model predicts nothing. Choose the trained model above.');
    return;
  }
  const args = nextArgs();
  const problem = checkNextArgs(args);
  if (problem) {
    blankCanvas($('next-bars')); // the lens below does not depend on these settings
    showStatus($('next-status'), problem, true);
    return;
  }
  const p = sampling.distribution(next.logits, args);
  const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a]).slice(0, 12).filter((i) => p[i] > 0);
  const vocab = tutorial.checkpoint?.vocab ?? [];
  const kept = p.reduce((n, v) => n + (v > 0), 0);
  drawBars($('next-bars'), {
    labels: order.map((i) => `“${display(vocab[i] ?? String(i))}” (${i})`), values: order.map((i) => p[i]),
    xTitle: 'probability', format: (v) => v.toFixed(3), colours: order.map(() => '#0072B2'),
  });
  $('next-bars').setAttribute('aria-label', `Next-token probabilities: ${order.slice(0, 5).map((i) => `${display(vocab[i])} ${p[i].toFixed(3)}`).join(', ')}`);
  tutorial.next = { args, top: order.map((i) => ({ id: i, probability: p[i] })), kept };
  const upTo = r.tokens.offsets[next.position]?.[1] ?? r.text.length;
  const before = r.text.slice(0, upTo);
  showStatus($('next-status'), `After “${before.length > 60 ? `…${before.slice(-60)}` : before}”: ${kept.toLocaleString('en')} of ${p.length.toLocaleString('en')} tokens keep a ` +
    `non-zero probability (temperature ${args.temperature}, top-k ${args.topK || 'off'}, top-p ${args.topP}). ` +
    `The logits differ from Model.forward's own by ${fmt(next.check)}.`);
  tutorial.draws.next++;
}
function renderLens(r, labels) {
  const lens = r.lens;
  if (!lens) return;
  const rowLabels = Array.from({ length: lens.rows }, (_, l) => (l === 0 ? 'embeddings' : `after layer ${l - 1}`));
  heat('lens', { data: lens.prob, rows: lens.rows, cols: lens.cols, rowLabels, colLabels: labels, rowTitle: 'layer',
    colTitle: 'after the token', scale: 'sequential', range: 1, cellText: lens.tokens.map(display), maxCell: 64 });
  const last = lens.rows - 1, pos = r.next.position;
  $('lens-facts').innerHTML = `At the last token the layers say, in turn: ` +
    Array.from({ length: lens.rows }, (_, l) => `“${display(lens.tokens[l * lens.cols + pos])}” (${lens.prob[l * lens.cols + pos].toFixed(2)})`).join(' → ') +
    `. The bottom row is the model's own prediction: it is section 8's most likely token, “${display(lens.tokens[last * lens.cols + pos])}”.`;
}
for (const id of ['next-temperature', 'next-topk', 'next-topp']) $(id).addEventListener('input', () => renderNext());

// ---- section 9: generation with the KV cache ------------------------------------------------------
const gen = { rows: [], tokens: [] }; // every step's attention rows (all layers) and tokens
function genButtons(running) {
  $('gen-start').disabled = running;
  $('gen-step').disabled = running || !tutorial.generation;
  $('gen-ten').disabled = running || !tutorial.generation;
}
function resetGeneration(message) {
  tutorial.generation = null;
  gen.rows = [];
  gen.tokens = [];
  blankSection('generate');
  $('gen-text').textContent = '';
  genButtons(false);
  if (message !== undefined) showStatus($('gen-status'), message);
}
function genFailed(e) {
  resetGeneration();
  showStatus($('gen-status'), e.message, true);
}
// Keeps a step's new attention rows (every layer) and its tokens.
function absorb(step) {
  gen.rows.push(step.attentions);
  gen.tokens.push(...step.tokens);
}
function renderGeneration() {
  const g = tutorial.generation;
  if (!g) return;
  const layer = Number($('gen-layer').value) || 0, head = Number($('gen-head').value) || 0;
  const total = g.cacheLength;
  // Rows: every query processed so far; columns: cache positions. Later columns of earlier rows
  // did not exist yet (grey).
  const rows = [];
  for (const step of gen.rows) {
    const { data, dims } = step[Math.min(layer, step.length - 1)];
    const [, H, n, keys] = dims;
    for (let i = 0; i < n; i++) {
      const row = new Float32Array(total).fill(NaN);
      row.set(data.subarray((Math.min(head, H - 1) * n + i) * keys, (Math.min(head, H - 1) * n + i + 1) * keys));
      rows.push(row);
    }
  }
  const data = new Float32Array(rows.length * total);
  rows.forEach((row, i) => data.set(row, i * total));
  const labels = gen.tokens.map(display);
  heat('gen-attention', { data, rows: rows.length, cols: total, rowLabels: labels, colLabels: labels, rowTitle: 'query',
    colTitle: 'cached key', scale: 'sequential', range: 1, values: false, outlineRow: rows.length - 1, nanLabel: 'not yet cached', maxCell: 22 });
  $('gen-attention-caption').textContent = `Layer ${layer}, head ${head}: one row per query so far (outlined: the newest, against all ${total} cached keys)`;
  const last = g.last;
  drawBars($('gen-candidates'), {
    labels: last.candidates.map((c) => `“${display(c.token)}” (${c.id})`), values: last.candidates.map((c) => c.probability),
    xTitle: 'probability of the next token', format: (v) => v.toFixed(3), colours: last.candidates.map(() => '#009E73'),
  });
  $('gen-candidates').setAttribute('aria-label', `Next-token candidates: ${last.candidates.slice(0, 4).map((c) => `${display(c.token)} ${c.probability.toFixed(3)}`).join(', ')}`);
  const esc = (t) => t.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  $('gen-text').innerHTML = esc(g.promptText) + `<mark>${esc(g.text.slice(g.promptText.length))}</mark>`;
  showStatus($('gen-status'), `${g.steps} new token${g.steps === 1 ? '' : 's'}` +
    (g.chosen ? `, the last “${display(g.chosen.token)}” with probability ${g.chosen.probability.toFixed(3)}` : '') +
    `. The cache holds ${total} positions (${(g.cacheBytes / 1024).toFixed(0)} KiB of keys and values over ${gen.rows[0].length} layers); ` +
    `each step added one. Context: ${tutorial.checkpoint?.maxPositions} positions.`);
}
async function genStart() {
  genButtons(true);
  try {
    const seed = Number($('gen-seed').value);
    if (!Number.isInteger(seed) || seed < 0 || seed > 4294967295) throw new Error(`the seed must be a whole number from 0 to 4294967295; got ${$('gen-seed').value || 'nothing'}`);
    const r = await call('generateStart', { text: $('gen-prompt').value, seed });
    gen.rows = [];
    gen.tokens = [];
    absorb(r);
    tutorial.generation = { cacheLength: r.cacheLength, cacheBytes: r.cacheBytes, steps: 0, promptText: r.text, text: r.text, last: r, chosen: null, history: [r.cacheLength] };
    fillSelect($('gen-layer'), r.attentions.length, Number($('gen-layer').value) || 0);
    fillSelect($('gen-head'), r.attentions[0].dims[1], Number($('gen-head').value) || 0);
    renderGeneration();
    tutorial.draws.generation++;
  } catch (e) {
    genFailed(e);
  } finally {
    genButtons(false);
  }
}
async function genSteps(n) {
  genButtons(true);
  try {
    for (let i = 0; i < n; i++) {
      const sample = $('gen-mode').value === 'sample';
      const args = nextArgs();
      const problem = sample ? checkNextArgs(args) : null;
      if (problem) throw new Error(`${problem} (section 8's settings)`);
      const r = await call('generateStep', { sample, ...args });
      absorb(r);
      const g = tutorial.generation;
      Object.assign(g, { cacheLength: r.cacheLength, cacheBytes: r.cacheBytes, steps: g.steps + 1, text: r.text, last: r, chosen: r.chosen });
      g.history.push(r.cacheLength);
      renderGeneration();
      tutorial.draws.generation++;
    }
  } catch (e) {
    showStatus($('gen-status'), e.message, true);
  } finally {
    genButtons(false);
  }
}
$('gen-start').addEventListener('click', genStart);
$('gen-step').addEventListener('click', () => genSteps(1));
$('gen-ten').addEventListener('click', () => genSteps(10));
for (const id of ['gen-layer', 'gen-head']) $(id).addEventListener('input', () => renderGeneration());

// ---- the pipeline: one request redraws sections 1, 2, 4, 5, 6, 7 and 8 --------------------------
const PIPELINE_SECTIONS = ['tokens', 'lookup', 'sum', 'masks', 'attention', 'heads', 'next'];
function renderPipeline(r) {
  tutorial.results = r;
  const labels = r.tokens.tokens.map(display);
  renderTokens(r);
  renderLookup(r, labels);
  renderSum(r, labels);
  renderMasks(r, labels);
  renderAttention(r, labels);
  renderModelView(r, labels);
  renderNext();
  renderLens(r, labels);
  tutorial.draws.pipeline++;
  checkFirstDraw();
}
// A failed request leaves nothing stale: the token table and every plot it fed are emptied.
function pipelineFailed(e) {
  tutorial.results = null;
  $('token-table').tBodies[0].innerHTML = '';
  for (const id of PIPELINE_SECTIONS) blankSection(id);
  $('model-view').innerHTML = '';
  delete $('model-view').dataset.shape;
  showStatus($('status'), e.message, true);
}
const runPipeline = latestOnly('pipeline', renderPipeline, pipelineFailed);
const runPositions = latestOnly('positions', (r) => {
  tutorial.positions = r;
  renderPositions(r);
  showStatus($('pe-status'), `${r.params.length} × ${r.params.dim} table, base ${r.params.base}, ${r.params.layout} layout.`);
  tutorial.draws.positions++;
  checkFirstDraw();
}, (e) => {
  tutorial.positions = null;
  blankSection('positions');
  showStatus($('pe-status'), e.message, true);
});

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

// ---- section 10 ---------------------------------------------------------------------------------
$('speed-run').addEventListener('click', async () => {
  const button = $('speed-run');
  button.disabled = true;
  showStatus($('speed-status'), 'Warming up and timing the builds…');
  try {
    const r = await call('speed', { length: Number($('speed-length').value), heads: 4, headDim: 64 });
    tutorial.speed = r;
    renderSpeed(r);
    tutorial.draws.speed++;
  } catch (e) {
    tutorial.speed = null;
    blankSection('speed');
    $('speed-table').tBodies[0].innerHTML = '';
    showStatus($('speed-status'), e.message, true);
  } finally {
    button.disabled = false;
  }
});
// A build's label: its name, and its thread count when it has threads.
const buildLabel = (x) => (x.threads > 1 ? `${x.backend} (${x.threads} threads)` : x.backend);
// What a ratio of two medians says, or that the run was too noisy to say anything.
function compare(ratio, fast, slow) {
  if (!(ratio > 0)) return '';
  if (ratio >= 1.05) return `${fast} took ${(1 / ratio).toFixed(2)} of ${slow}'s time: ${ratio.toFixed(1)}× as fast.`;
  return `${fast} and ${slow} were within ${Math.abs(100 * (1 - ratio)).toFixed(0)}% of each other on this run; something else may have held the CPU. Run it again.`;
}
function renderSpeed(r) {
  const ok = r.runs.filter((x) => !x.error);
  drawBars($('speed-bars'), { labels: ok.map(buildLabel), values: ok.map((x) => x.medianMs), xTitle: 'milliseconds per call', format: (v) => `${v.toFixed(3)} ms` });
  $('speed-bars').setAttribute('aria-label', `Median milliseconds: ${ok.map((x) => `${buildLabel(x)} ${x.medianMs.toFixed(3)}`).join(', ')}`);
  $('speed-table').tBodies[0].innerHTML = r.runs.map((x) => (x.error
    ? `<tr><td>${buildLabel(x)}</td><td colspan="4">${x.error}</td></tr>`
    : `<tr><td>${buildLabel(x)}</td><td>${x.firstMs.toFixed(3)}</td><td>${x.medianMs.toFixed(3)}</td><td>${x.minMs.toFixed(3)}</td><td>${x.gflops.toFixed(2)}</td></tr>`)).join('');
  const threads = r.threadsUnavailableReason
    ? `No threads here: ${r.threadsUnavailableReason}.`
    : compare(r.threadSpeedup, `${ok[0].threads} threads`, 'one thread');
  showStatus($('speed-status'), `Sequence of ${r.length}, ${r.heads} heads of ${r.headDim}: ${(r.flops / 1e6).toFixed(1)} Mflop per call. ` +
    `Each build was warmed up for ${r.warmupMs} ms first, then timed in ${ok[0]?.reps ?? 0} alternating rounds of ${ok.map((x) => `${x.batch}`).join(', ')} calls; ` +
    `the first call is shown apart. ${compare(r.speedup, 'SIMD', 'scalar')} ${threads}`);
}

// ---- the model: trained, toy, or picked from disk ------------------------------------------------
const modelControls = ['scale', 'emb-positional', 'att-positional', 'att-causal'];
function modelName() {
  const s = tutorial.checkpoint;
  if (!s) return 'the toy model';
  return s.source === 'trained' ? 'the trained GPT-2' : `the loaded ${s.family} checkpoint`;
}
// What each model starts with: the trained one reads Bible-like text and has no second segment.
const PRESETS = {
  trained: { text: 'And God said unto Moses, Go in unto Pharaoh, and say unto him', pair: '', padTo: '0' },
  toy: {
    text: 'The quick brown fox jumps over the lazy dog.', pair: 'It was not amused.', padTo: '20', tokenizer: 'bert',
    switches: { scale: true, 'emb-positional': 'sinusoidal', 'att-positional': 'sinusoidal', 'att-causal': false },
  },
};
function applyPreset(name) {
  const p = PRESETS[name];
  if (!p) return;
  $('text').value = p.text;
  $('pair').value = p.pair;
  $('pad-to').value = $('mask-pad-to').value = p.padTo;
  if (p.tokenizer) $('tokenizer').value = p.tokenizer;
  for (const [id, v] of Object.entries(p.switches ?? {})) {
    if (typeof v === 'boolean') $(id).checked = v;
    else $(id).value = v;
  }
}
function modelLoaded(s) {
  tutorial.checkpoint = s;
  resetGeneration(s?.languageModel ? 'Type a prompt and run it.' : 'Generation needs a GPT-2 model: choose the trained model above.');
  const tokOption = $('tokenizer').querySelector('option[value=loaded]');
  tokOption.disabled = !s?.tokenizer;
  if (s) {
    $('tokenizer').value = s.tokenizer ? 'loaded' : s.family === 'gpt2' ? 'gpt2' : 'bert';
    $('att-positional').value = 'learned';
    $('att-causal').checked = s.causal;
    $('scale').checked = s.scale;
    $('emb-positional').value = 'learned';
  } else if ($('tokenizer').value === 'loaded') {
    $('tokenizer').value = 'bert';
  }
  for (const id of modelControls) $(id).disabled = !!s;
  $('gen-start').disabled = !s?.languageModel;
  runPipeline(pipelineArgs());
  runPositions(positionArgs());
  if (s?.source === 'trained') runScores();
  else {
    tutorial.scores = null;
    blankScores();
  }
}
function describeModel(s) {
  if (!s) return 'Using the toy model: untrained, width 32, 4 heads, one layer.';
  const what = s.source === 'trained' ? 'the trained GPT-2' : `a ${s.family} model`;
  return `Using ${what}: ${s.layers} layers, width ${s.dim}, ${s.heads} heads, vocabulary ${s.vocabSize}, ` +
    `${s.parameters.toLocaleString('en')} parameters in ${s.tensorCount} tensors` +
    (s.tokenizer ? `, and its ${s.tokenizer} tokenizer.` : '; no tokenizer.json, so the bundled tokenizer of its family is used.') +
    ' Its own settings fix the switches that would change the model.';
}
let modelInUse = 'trained';
async function chooseModel(name) {
  const status = $('ckpt-status');
  $('model-choice').disabled = true;
  try {
    showStatus(status, name === 'trained' ? 'Loading the trained model…' : 'Switching to the toy model…');
    const s = await call('useModel', { name });
    modelInUse = name;
    $('ckpt-files').value = '';
    $('model-choice').querySelector('option[value=checkpoint]').disabled = true;
    applyPreset(name);
    showStatus(status, describeModel(s));
    modelLoaded(s);
  } catch (e) {
    $('model-choice').value = modelInUse;
    showStatus(status, `${e.message}. Still using ${modelName()}.`, true);
  } finally {
    $('model-choice').disabled = false;
  }
}
$('model-choice').addEventListener('change', (e) => chooseModel(e.target.value));
$('ckpt-files').addEventListener('change', async (e) => {
  const status = $('ckpt-status');
  const files = Array.from(e.target.files);
  if (!files.length) return;
  try {
    // The picked Files go to the worker as they are; it reads them as Model.fromPretrained does.
    showStatus(status, 'Loading the checkpoint…');
    const s = await call('loadCheckpoint', files);
    modelInUse = 'checkpoint';
    const option = $('model-choice').querySelector('option[value=checkpoint]');
    option.disabled = false;
    $('model-choice').value = 'checkpoint';
    showStatus(status, describeModel(s));
    modelLoaded(s);
  } catch (err) {
    // The model in use stays, and so do its (still valid) plots; the message says what to fix.
    $('ckpt-files').value = '';
    showStatus(status, `Could not load the checkpoint: ${err.message}. Pick a Hugging Face folder's config.json together with ` +
      `its model.safetensors (and optionally tokenizer.json). Still using ${modelName()}.`, true);
  }
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
    if (tutorial.scores) renderScores(tutorial.scores);
    if (tutorial.generation) renderGeneration();
  }, 150);
}).observe($('main'));

tutorial.ready = (async () => {
  try {
    const { backend, threads, threadsUnavailableReason } = await call('init');
    // Where threads cannot run, the page says why (section 10 repeats it).
    $('backend').textContent = threads > 1 ? `${backend}, ${threads} threads`
      : `${backend}, one thread${threadsUnavailableReason ? `: ${threadsUnavailableReason}` : ''}`;
  } catch (e) {
    $('backend').textContent = `failed: ${e.message}`;
    throw e;
  }
  await chooseModel('trained');
  await firstDraw;
})();

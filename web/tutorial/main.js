// The tutorial page: reads the controls, asks the worker (worker.js) for the numbers, draws them.
// Nothing here computes the model; the page only lays out what attnkit returned. Sections 8 and 9
// (the next word, generation) are in sections_lm.js; what every section uses is in page.js.
import { drawBars, drawOneHot, drawThumb, drawHeadView, formatValue as fmt } from './plots.js';
import {
  $, tutorial, call, latestOnly, firstDraw, checkFirstDraw, showStatus, makeFigure, heatmaps, range, heat, lines,
  blankSection, blankCanvas, display, fillSelect,
} from './page.js';
import { renderNext, renderLens, resetGeneration, renderGeneration } from './sections_lm.js';

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

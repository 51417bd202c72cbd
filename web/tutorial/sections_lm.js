// Sections 8 and 9 of the tutorial page, on a language model: the next word (the sampling settings
// and the logit lens) and generation with the KV cache, step by step.
import { drawBars, formatValue as fmt } from './plots.js';
import { sampling } from '../attnkit.js';
import { $, tutorial, call, showStatus, blankSection, blankCanvas, heat, display, fillSelect } from './page.js';

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
export function renderNext() {
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
export function renderLens(r, labels) {
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
export function resetGeneration(message) {
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
export function renderGeneration() {
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

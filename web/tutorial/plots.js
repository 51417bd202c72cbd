// Canvas plots for the tutorial: labelled heatmaps (with a pointer and keyboard readout), line
// charts and bar charts, all with axes and legends. Canvases are sized to their CSS width at the
// device's pixel ratio, so text stays readable on a phone; drawing code works in CSS pixels.

const INK = '#1b1b1f';
const MUTED = '#4a4a55';
const FONT = '12px system-ui, sans-serif';
// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];

/** Sizes the backing store to the canvas's CSS width × `height` and returns a CSS-pixel context. */
function fit(canvas, height) {
  const w = Math.max(200, Math.round(canvas.clientWidth || canvas.parentElement?.clientWidth || 600));
  const dpr = globalThis.devicePixelRatio || 1;
  canvas.style.height = `${height}px`;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(height * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, height);
  ctx.font = FONT;
  return { ctx, w, h: height };
}

/** Rounded tick positions covering [lo, hi] (about `n` of them). */
export function niceTicks(lo, hi, n = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

function fmt(v) {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '+∞';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}
export { fmt as formatValue };

// Diverging blue–white–red for signed values; white → dark blue for probabilities.
function diverging(t) {
  const c = Math.max(-1, Math.min(1, t));
  const [r, g, b] = c < 0 ? [33, 102, 172] : [178, 24, 43];
  const a = Math.abs(c);
  return [255 + (r - 255) * a, 255 + (g - 255) * a, 255 + (b - 255) * a].map(Math.round);
}
function sequential(t) {
  const c = Math.max(0, Math.min(1, t));
  return [255 + (8 - 255) * c, 255 + (48 - 255) * c, 255 + (107 - 255) * c].map(Math.round);
}
const MASKED = [190, 190, 196];

// The x title centred at (x, y) and the y title rotated along the left edge at height yMid.
function titles(ctx, xTitle, x, y, yTitle, yMid) {
  ctx.fillStyle = MUTED;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  ctx.fillText(xTitle, x, y);
  ctx.save();
  ctx.translate(12, yMid);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(yTitle, 0, 0);
  ctx.restore();
}

function clip(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > width) s = s.slice(0, -1);
  return `${s}…`;
}

/**
 * A matrix as coloured cells. Rows and columns may carry labels (tokens); -Infinity cells (masked
 * scores) are grey. Pointer hover and arrow keys (the canvas is focusable) report the cell under
 * the cursor in `readout`, an aria-live element.
 */
export class Heatmap {
  constructor(canvas, readout) {
    this.canvas = canvas;
    this.readout = readout;
    this.cursor = null;
    this.spec = null;
    canvas.tabIndex = 0;
    canvas.addEventListener('mousemove', (e) => {
      const cell = this._cellAt(e.offsetX, e.offsetY);
      if (cell) this._report(cell);
    });
    canvas.addEventListener('keydown', (e) => {
      if (!this.spec) return;
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      const m = moves[e.key];
      if (!m) return;
      e.preventDefault();
      const { rows, cols } = this.spec;
      const [r, c] = this.cursor ?? [0, 0];
      this.cursor = [Math.max(0, Math.min(rows - 1, r + m[0])), Math.max(0, Math.min(cols - 1, c + m[1]))];
      this.draw(this.spec);
      this._report(this.cursor);
    });
    canvas.addEventListener('blur', () => {
      if (this.cursor && this.spec) { this.cursor = null; this.draw(this.spec); }
    });
  }

  /**
   * spec: {data, rows, cols, rowLabels?, colLabels?, rowTitle, colTitle, scale: 'diverging' |
   * 'sequential', range? (default max |finite value|), values?: 'auto' | false, height?,
   * swatches?: [{value, label}] (a legend of those colours instead of the colour bar: 0/1 masks),
   * cellText?: strings drawn in the cells instead of the values, outlineRow?: a row to outline,
   * nanLabel?: what a NaN (grey) cell means}
   */
  draw(spec) {
    this.spec = spec;
    const { data, rows, cols, rowLabels, colLabels, rowTitle, colTitle, scale = 'diverging' } = spec;
    let range = spec.range;
    if (!range) {
      range = 0;
      for (const v of data) if (Number.isFinite(v)) range = Math.max(range, Math.abs(v));
      range = range || 1;
    }
    const measure = this.canvas.getContext('2d');
    measure.font = FONT;
    const labelWidth = (labels) => Math.min(90, Math.max(0, ...labels.map((l) => measure.measureText(l).width)) + 8);
    const left = 22 + (rowLabels ? labelWidth(rowLabels) : 30);
    const bottom = 22 + (colLabels ? labelWidth(colLabels) : 20);
    // The colour bar's (or the swatches') labels, measured, so that none is clipped.
    const barLabels = spec.swatches ? spec.swatches.map((x) => x.label)
      : [fmt(range), scale === 'sequential' ? '0' : fmt(-range), '−∞', spec.nanLabel ?? ''];
    const right = 14 + 12 + 3 + Math.ceil(Math.max(...barLabels.map((l) => measure.measureText(l).width))) + 6, top = 8;
    const width = Math.max(200, Math.round(this.canvas.clientWidth || 600));
    const maxCell = spec.maxCell ?? 34;
    const cellW = Math.min(maxCell, (width - left - right) / cols);
    const cellH = spec.height ? (spec.height - top - bottom) / rows : Math.min(maxCell, Math.max(cellW, rowLabels ? 14 : 3));
    const height = spec.height ?? Math.round(top + bottom + rows * cellH);
    const { ctx } = fit(this.canvas, height);
    const pw = cellW * cols, ph = cellH * rows;
    this.geom = { left, top, cellW, cellH, rows, cols };
    const paint = scale === 'sequential' ? (v) => sequential(v / range) : (v) => diverging(v / range);

    // Cells at data resolution, scaled up with smoothing off: one drawImage however many cells.
    const img = new ImageData(cols, rows);
    for (let i = 0; i < rows * cols; i++) {
      const v = data[i];
      const [r, g, b] = Number.isFinite(v) ? paint(v) : MASKED;
      img.data.set([r, g, b, 255], 4 * i);
    }
    const off = document.createElement('canvas');
    off.width = cols;
    off.height = rows;
    off.getContext('2d').putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, left, top, pw, ph);
    if (cellW >= 8 && cellH >= 8) {
      // Thin white rules between cells, so single cells can be counted.
      ctx.strokeStyle = 'rgba(255,255,255,0.8)';
      ctx.beginPath();
      for (let c = 1; c < cols; c++) { ctx.moveTo(left + c * cellW, top); ctx.lineTo(left + c * cellW, top + ph); }
      for (let r = 1; r < rows; r++) { ctx.moveTo(left, top + r * cellH); ctx.lineTo(left + pw, top + r * cellH); }
      ctx.stroke();
    }
    ctx.strokeStyle = '#333';
    ctx.strokeRect(left - 0.5, top - 0.5, pw + 1, ph + 1);

    // Text inside cells when it fits: the given cellText, else the values (masked cells get
    // their −∞); white on dark cells.
    const text = spec.cellText ? (i) => spec.cellText[i]
      : (i) => (Number.isFinite(data[i]) ? data[i].toFixed(Math.abs(data[i]) >= 10 ? 1 : 2) : fmt(data[i]));
    const fits = spec.cellText ? cellW >= 24 && cellH >= 14 : spec.values !== false && cellW >= 30 && cellH >= 16;
    if (fits) {
      ctx.font = spec.cellText ? '11px system-ui, sans-serif' : '10px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const v = data[r * cols + c];
          ctx.fillStyle = Number.isFinite(v) && Math.abs(v) / range > 0.55 ? '#fff' : INK;
          ctx.fillText(clip(ctx, text(r * cols + c), cellW - (spec.cellText ? 3 : 2)), left + (c + 0.5) * cellW, top + (r + 0.5) * cellH);
        }
      }
      ctx.font = FONT;
    }

    // Row labels (tokens or indices) and column labels (rotated).
    ctx.fillStyle = INK;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const rowStep = rowLabels ? Math.ceil(12 / cellH) : Math.max(1, niceStep(rows, ph / 22));
    for (let r = 0; r < rows; r += rowStep) {
      ctx.fillText(clip(ctx, rowLabels ? rowLabels[r] : String(r), left - 28), left - 5, top + (r + 0.5) * cellH);
    }
    const colStep = colLabels ? Math.ceil(12 / cellW) : Math.max(1, niceStep(cols, pw / 36));
    for (let c = 0; c < cols; c += colStep) {
      const x = left + (c + 0.5) * cellW;
      if (colLabels) {
        ctx.save();
        ctx.translate(x, top + ph + 5);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'right';
        ctx.fillText(clip(ctx, colLabels[c], bottom - 28), 0, 0);
        ctx.restore();
      } else {
        ctx.textAlign = 'center';
        ctx.textBaseline = 'top';
        ctx.fillText(String(c), x, top + ph + 4);
      }
    }
    titles(ctx, colTitle, left + pw / 2, height - 2, rowTitle, top + ph / 2);

    const bx = left + pw + 14, bw = 12;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    let below = top;
    if (spec.swatches) {
      // Two (or a few) colours with their meaning: a 0/1 mask has no scale in between.
      spec.swatches.forEach((x, i) => {
        const [r, g, b] = scale === 'sequential' ? sequential(x.value / range) : diverging(x.value / range);
        ctx.fillStyle = `rgb(${r},${g},${b})`;
        ctx.fillRect(bx, top + i * 20, bw, 12);
        ctx.strokeStyle = '#333';
        ctx.strokeRect(bx - 0.5, top + i * 20 - 0.5, bw + 1, 13);
        ctx.fillStyle = INK;
        ctx.fillText(x.label, bx + bw + 3, top + i * 20 + 6);
      });
      below = top + spec.swatches.length * 20 - 8;
    } else {
      // Colour bar with its range.
      const bh = Math.max(40, Math.min(ph, 220));
      for (let y = 0; y < bh; y++) {
        const t = 1 - y / bh;
        const [r, g, b] = scale === 'sequential' ? sequential(t) : diverging(2 * t - 1);
        ctx.fillStyle = `rgb(${r},${g},${b})`;
        ctx.fillRect(bx, top + y, bw, 1);
      }
      ctx.strokeRect(bx - 0.5, top - 0.5, bw + 1, bh + 1);
      ctx.fillStyle = INK;
      ctx.fillText(fmt(range), bx + bw + 3, top + 5);
      ctx.fillText(scale === 'sequential' ? '0' : fmt(-range), bx + bw + 3, top + bh - 5);
      below = top + bh;
    }
    const grey = [];
    if (Array.prototype.some.call(data, (v) => v === -Infinity)) grey.push('−∞');
    if (spec.nanLabel && Array.prototype.some.call(data, (v) => Number.isNaN(v))) grey.push(spec.nanLabel);
    grey.forEach((label, i) => {
      ctx.fillStyle = `rgb(${MASKED.join(',')})`;
      ctx.fillRect(bx, below + 8 + i * 16, bw, 10);
      ctx.fillStyle = INK;
      ctx.fillText(label, bx + bw + 3, below + 13 + i * 16);
    });
    if (spec.outlineRow !== undefined) {
      ctx.strokeStyle = PALETTE[1];
      ctx.lineWidth = 2;
      ctx.strokeRect(left + 1, top + spec.outlineRow * cellH + 1, pw - 2, Math.max(2, cellH - 2));
      ctx.lineWidth = 1;
    }

    if (this.cursor) {
      const [r, c] = this.cursor;
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      ctx.strokeRect(left + c * cellW + 1, top + r * cellH + 1, Math.max(2, cellW - 2), Math.max(2, cellH - 2));
      ctx.lineWidth = 1;
    }
  }

  /** Drops the picture's data (the canvas was blanked): the pointer and keys read nothing stale. */
  forget() {
    this.spec = null;
    this.geom = null;
    this.cursor = null;
  }

  _cellAt(x, y) {
    const g = this.geom;
    if (!g) return null;
    const c = Math.floor((x - g.left) / g.cellW), r = Math.floor((y - g.top) / g.cellH);
    return r >= 0 && r < g.rows && c >= 0 && c < g.cols ? [r, c] : null;
  }

  _report([r, c]) {
    if (!this.readout) return;
    const s = this.spec;
    const rl = s.rowLabels ? `“${s.rowLabels[r]}” (${r})` : r;
    const cl = s.colLabels ? `“${s.colLabels[c]}” (${c})` : c;
    this.readout.textContent = `${s.rowTitle} ${rl}, ${s.colTitle} ${cl}: ${fmt(s.data[r * s.cols + c])}`;
  }
}

function niceStep(n, maxTicks) {
  const raw = n / Math.max(1, maxTicks);
  for (const s of [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 1000]) if (s >= raw) return s;
  return Math.ceil(raw);
}

// Legend entries laid out in rows above the plot; returns the height they take.
function legendRows(ctx, items, width) {
  ctx.font = FONT;
  const rows = [[]];
  let x = 0;
  for (const s of items) {
    const w = ctx.measureText(s.label).width + 40;
    if (x + w > width && rows.at(-1).length) { rows.push([]); x = 0; }
    rows.at(-1).push({ s, x, w });
    x += w;
  }
  return rows;
}
function legend(ctx, rows, left, top) {
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  rows.forEach((row, r) => row.forEach(({ s, x }) => {
    const y = top + 8 + r * 16;
    ctx.strokeStyle = s.colour;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath();
    ctx.moveTo(left + x, y);
    ctx.lineTo(left + x + 24, y);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
    ctx.fillStyle = INK;
    ctx.fillText(s.label, left + x + 29, y);
  }));
}

function axes(ctx, box, xr, yr, xTitle, yTitle, { xTicks, yTicks } = {}) {
  const { left, top, pw, ph } = box;
  const X = (v) => left + ((v - xr[0]) / (xr[1] - xr[0] || 1)) * pw;
  const Y = (v) => top + ph - ((v - yr[0]) / (yr[1] - yr[0] || 1)) * ph;
  ctx.strokeStyle = '#e3e3e8';
  ctx.fillStyle = INK;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of yTicks ?? niceTicks(yr[0], yr[1], Math.max(2, Math.floor(ph / 40)))) {
    ctx.beginPath(); ctx.moveTo(left, Y(t)); ctx.lineTo(left + pw, Y(t)); ctx.stroke();
    ctx.fillText(fmt(t), left - 5, Y(t));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of xTicks ?? niceTicks(xr[0], xr[1], Math.max(2, Math.floor(pw / 70)))) {
    ctx.beginPath(); ctx.moveTo(X(t), top); ctx.lineTo(X(t), top + ph); ctx.stroke();
    ctx.fillText(fmt(t), X(t), top + ph + 4);
  }
  ctx.strokeStyle = '#333';
  ctx.strokeRect(left - 0.5, top - 0.5, pw + 1, ph + 1);
  titles(ctx, xTitle, left + pw / 2, top + ph + 36, yTitle, top + ph / 2);
  return { X, Y };
}

/**
 * Line chart. spec: {series: [{label, x: ArrayLike, y: ArrayLike, colour?, dash?, points?}],
 * xTitle, yTitle, height?, yRange?}
 */
export function drawLines(canvas, spec) {
  spec.series.forEach((s, k) => { s.colour ??= PALETTE[k % PALETTE.length]; });
  const measure = canvas.getContext('2d');
  const width = Math.max(200, Math.round(canvas.clientWidth || 600));
  const rows = legendRows(measure, spec.series, width - 58 - 12);
  const top = 10 + rows.length * 16;
  const height = (spec.height ?? 250) + rows.length * 16;
  const { ctx, w, h } = fit(canvas, height);
  const box = { left: 58, top, pw: w - 58 - 12, ph: h - top - 42 };
  let xr = [Infinity, -Infinity], yr = spec.yRange ? [...spec.yRange] : [Infinity, -Infinity];
  for (const s of spec.series) {
    for (let i = 0; i < s.x.length; i++) {
      xr = [Math.min(xr[0], s.x[i]), Math.max(xr[1], s.x[i])];
      if (!spec.yRange && Number.isFinite(s.y[i])) yr = [Math.min(yr[0], s.y[i]), Math.max(yr[1], s.y[i])];
    }
  }
  if (!(yr[1] > yr[0])) yr = [yr[0] - 1, yr[0] + 1];
  const pad = (yr[1] - yr[0]) * 0.05;
  if (!spec.yRange) yr = [yr[0] - pad, yr[1] + pad];
  const { X, Y } = axes(ctx, box, xr, yr, spec.xTitle, spec.yTitle);
  ctx.save();
  ctx.beginPath();
  ctx.rect(box.left, box.top, box.pw, box.ph);
  ctx.clip();
  spec.series.forEach((s) => {
    ctx.strokeStyle = s.colour;
    ctx.fillStyle = s.colour;
    ctx.lineWidth = 2;
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath();
    for (let i = 0; i < s.x.length; i++) (i ? ctx.lineTo : ctx.moveTo).call(ctx, X(s.x[i]), Y(s.y[i]));
    ctx.stroke();
    ctx.setLineDash([]);
    if (s.points) for (let i = 0; i < s.x.length; i++) ctx.fillRect(X(s.x[i]) - 2.5, Y(s.y[i]) - 2.5, 5, 5);
  });
  ctx.restore();
  ctx.lineWidth = 1;
  legend(ctx, rows, box.left, 2);
}

/** Horizontal bars. spec: {labels, values, colours?, xTitle, format?, height?} */
export function drawBars(canvas, spec) {
  const n = spec.labels.length;
  const measure = canvas.getContext('2d');
  measure.font = FONT;
  const left = Math.min(180, Math.max(...spec.labels.map((l) => measure.measureText(l).width)) + 14);
  const { ctx, w, h } = fit(canvas, spec.height ?? 40 + n * 30);
  const box = { left, top: 8, pw: w - left - 70, ph: h - 8 - 42 };
  const max = Math.max(...spec.values, 0) || 1;
  const { X } = axes(ctx, box, [0, max * 1.05], [0, n], spec.xTitle, '', { yTicks: [] });
  const bh = box.ph / n;
  spec.values.forEach((v, i) => {
    ctx.fillStyle = spec.colours?.[i] ?? PALETTE[i % PALETTE.length];
    ctx.fillRect(box.left, box.top + i * bh + bh * 0.2, X(v) - box.left, bh * 0.6);
    ctx.fillStyle = INK;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(spec.labels[i], box.left - 6, box.top + (i + 0.5) * bh);
    ctx.textAlign = 'left';
    ctx.fillText(spec.format ? spec.format(v) : fmt(v), X(v) + 4, box.top + (i + 0.5) * bh);
  });
}

/**
 * One-hot rows drawn as what they are: a vocabulary-wide row of zeros with a single 1. Each row
 * is a thin track over ids 0..depth-1 with a mark at the token's id.
 */
export function drawOneHot(canvas, { ids, depth, rowLabels }) {
  const n = ids.length;
  const measure = canvas.getContext('2d');
  measure.font = FONT;
  const left = Math.min(110, Math.max(...rowLabels.map((l) => measure.measureText(l).width)) + 14);
  const { ctx, w, h } = fit(canvas, 50 + n * 18);
  const box = { left, top: 8, pw: w - left - 14, ph: h - 8 - 42 };
  const { X } = axes(ctx, box, [0, depth - 1], [0, n], `vocabulary id 0 … ${depth - 1} (all 0 but one 1)`, '', { yTicks: [] });
  const rh = box.ph / n;
  ids.forEach((id, i) => {
    const y = box.top + i * rh;
    ctx.fillStyle = '#f1f1f5';
    ctx.fillRect(box.left, y + rh * 0.25, box.pw, rh * 0.5);
    ctx.fillStyle = PALETTE[0];
    ctx.fillRect(X(id) - 1.5, y + 1, 3, rh - 2);
    ctx.fillStyle = INK;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    ctx.fillText(clip(ctx, rowLabels[i], left - 10), box.left - 6, y + rh / 2);
  });
}

/**
 * A small attention picture without labels (the model view's small multiples): weights [L, L]
 * in white → dark blue, `size` CSS pixels square.
 */
export function drawThumb(canvas, weights, L, size = 120) {
  const dpr = globalThis.devicePixelRatio || 1;
  canvas.style.width = `${size}px`;
  canvas.style.height = `${size}px`;
  canvas.width = Math.round(size * dpr);
  canvas.height = Math.round(size * dpr);
  const ctx = canvas.getContext('2d');
  const img = new ImageData(L, L);
  for (let i = 0; i < L * L; i++) img.data.set([...sequential(weights[i]), 255], 4 * i);
  const off = document.createElement('canvas');
  off.width = L;
  off.height = L;
  off.getContext('2d').putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, 0, 0, canvas.width, canvas.height);
}

/**
 * bertviz's head view: the tokens twice, queries on the left and keys on the right, a line from
 * query i to key j as dark as the weight. weights [L, L], rows summing to 1; labels [L].
 */
export function drawHeadView(canvas, { weights, labels, colour = PALETTE[0] }) {
  const L = labels.length;
  const measure = canvas.getContext('2d');
  measure.font = FONT;
  const tw = Math.min(120, Math.max(...labels.map((l) => measure.measureText(l).width)) + 10);
  const rowH = 18;
  const { ctx, w } = fit(canvas, 16 + L * rowH);
  const lx = 8 + tw, rx = Math.max(lx + 80, w - 8 - tw);
  const y = (i) => 8 + (i + 0.5) * rowH;
  ctx.lineWidth = 2;
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < L; j++) {
      const a = weights[i * L + j];
      if (!(a > 0.01)) continue;
      ctx.strokeStyle = colour;
      ctx.globalAlpha = Math.min(1, a);
      ctx.beginPath();
      ctx.moveTo(lx + 4, y(i));
      ctx.lineTo(rx - 4, y(j));
      ctx.stroke();
    }
  }
  ctx.globalAlpha = 1;
  ctx.lineWidth = 1;
  ctx.fillStyle = INK;
  ctx.textBaseline = 'middle';
  for (let i = 0; i < L; i++) {
    ctx.textAlign = 'right';
    ctx.fillText(clip(ctx, labels[i], tw - 6), lx, y(i));
    ctx.textAlign = 'left';
    ctx.fillText(clip(ctx, labels[i], tw - 6), rx, y(i));
  }
}

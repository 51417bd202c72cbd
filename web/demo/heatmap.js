// A labelled heatmap on a canvas: values in [-range, range] on a blue-white-red scale, with axes,
// ticks and a colour bar. Used by every matrix the demo shows.

const MARGIN = { left: 56, right: 70, top: 12, bottom: 44 };

// Diverging scale: -1 blue (33,102,172), 0 white, +1 red (178,24,43).
export function colour(v) {
  const t = Math.max(-1, Math.min(1, v));
  const [r, g, b] = t < 0 ? [33, 102, 172] : [178, 24, 43];
  const a = Math.abs(t);
  return [Math.round(255 + (r - 255) * a), Math.round(255 + (g - 255) * a), Math.round(255 + (b - 255) * a)];
}

function ticks(n, maxTicks) {
  const step = Math.max(1, Math.ceil(n / maxTicks / 8) * 8 || 1);
  const out = [];
  for (let i = 0; i < n; i += step) out.push(i);
  return out;
}

/**
 * Draws rows x cols values (row-major Float32Array) into `canvas`.
 * @param {{rowLabel: string, colLabel: string, range?: number}} opts
 */
export function drawHeatmap(canvas, data, rows, cols, { rowLabel, colLabel, range = 1 }) {
  const ctx = canvas.getContext('2d');
  const W = canvas.width, H = canvas.height;
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  const pw = W - MARGIN.left - MARGIN.right, ph = H - MARGIN.top - MARGIN.bottom;
  if (rows > 0 && cols > 0) {
    // Paint at data resolution, then scale: crisp cells, one putImageData.
    const img = new ImageData(cols, rows);
    for (let i = 0; i < rows * cols; i++) {
      const [r, g, b] = colour(data[i] / range);
      img.data[4 * i] = r; img.data[4 * i + 1] = g; img.data[4 * i + 2] = b; img.data[4 * i + 3] = 255;
    }
    const off = new OffscreenCanvas(cols, rows);
    off.getContext('2d').putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, MARGIN.left, MARGIN.top, pw, ph);
  }
  // axes and ticks
  ctx.strokeStyle = '#333';
  ctx.strokeRect(MARGIN.left - 0.5, MARGIN.top - 0.5, pw + 1, ph + 1);
  ctx.fillStyle = '#1b1b1f';
  ctx.font = '12px system-ui, sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const r of ticks(rows, 8)) ctx.fillText(String(r), MARGIN.left - 6, MARGIN.top + ((r + 0.5) / rows) * ph);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const c of ticks(cols, 10)) ctx.fillText(String(c), MARGIN.left + ((c + 0.5) / cols) * pw, MARGIN.top + ph + 4);
  ctx.font = '13px system-ui, sans-serif';
  ctx.fillText(colLabel, MARGIN.left + pw / 2, H - 18);
  ctx.save();
  ctx.translate(14, MARGIN.top + ph / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(rowLabel, 0, 0);
  ctx.restore();
  // colour bar
  const bx = W - MARGIN.right + 16, bw = 14;
  for (let y = 0; y < ph; y++) {
    const [r, g, b] = colour(1 - (2 * y) / ph);
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(bx, MARGIN.top + y, bw, 1);
  }
  ctx.strokeRect(bx - 0.5, MARGIN.top - 0.5, bw + 1, ph + 1);
  ctx.fillStyle = '#1b1b1f';
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.font = '12px system-ui, sans-serif';
  ctx.fillText(`+${range}`, bx + bw + 4, MARGIN.top + 6);
  ctx.fillText('0', bx + bw + 4, MARGIN.top + ph / 2);
  ctx.fillText(`−${range}`, bx + bw + 4, MARGIN.top + ph - 6);
}

// Section 3, computed in the worker: the sinusoidal table, the dot products PE(p)·PE(p + k), the
// rotation T(k) that maps PE(p) to PE(p + k) applied with attnkit's linear, and a learned table
// beside it.

// Column pairs (sin, cos) that share frequency w_j = base^(−2j/d): (2j, 2j+1) interleaved,
// (j, j + d/2) split.
export function pairColumns(j, dim, layout) {
  return layout === 'split' ? [j, j + dim / 2] : [2 * j, 2 * j + 1];
}

/**
 * T(k) as an nn.Linear weight [out, in]: in each (sin, cos) pair,
 *   sin(w(p+k)) =  cos(wk) sin(wp) + sin(wk) cos(wp)
 *   cos(w(p+k)) = −sin(wk) sin(wp) + cos(wk) cos(wp)
 * a rotation by the angle wk, the same for every p.
 */
export function shiftMatrix(k, dim, base, layout) {
  const T = new Float32Array(dim * dim);
  for (let j = 0; j < dim / 2; j++) {
    const a = k * base ** (-2 * j / dim);
    const [s, c] = pairColumns(j, dim, layout);
    T[s * dim + s] = Math.cos(a); T[s * dim + c] = Math.sin(a);
    T[c * dim + s] = -Math.sin(a); T[c * dim + c] = Math.cos(a);
  }
  return T;
}

// x [rows, dim] times one row r of it: all dot products with row r, as a linear layer.
function dotsWithRow(ak, x, rows, dim, r) {
  return ak.linear({ data: x, dims: [rows, dim] }, { data: x.slice(r * dim, (r + 1) * dim), dims: [1, dim] }).data;
}

export function positionsLesson(ak, { length, dim, base, layout, p, k }, learnedTable) {
  const table = ak.sinusoidalPositionalEncoding(length, dim, { base, layout });
  const starts = [...new Set([0, Math.min(p, length - 1)])];
  const dots = starts.map((p0) => ({ p0, values: dotsWithRow(ak, table.data, length, dim, p0).slice(p0) }));

  const T = shiftMatrix(k, dim, base, layout);
  const pe = (pos) => ak.sinusoidalPositionalEncoding(1, dim, { base, layout, offset: pos }).data;
  const from = pe(p);
  const mapped = ak.linear({ data: from, dims: [1, dim] }, { data: T, dims: [dim, dim] }).data;
  const target = pe(p + k);
  let diff = 0;
  for (let i = 0; i < dim; i++) diff = Math.max(diff, Math.abs(mapped[i] - target[i]));

  // The learned table: its first rows, and the cosine similarity of row p0 with row p0 + k.
  const [maxPositions, learnedDim] = learnedTable.dims;
  const rows = Math.min(length, maxPositions);
  const learned = learnedTable.data.slice(0, rows * learnedDim);
  const norms = new Float32Array(rows);
  for (let r = 0; r < rows; r++) norms[r] = Math.hypot(...learned.subarray(r * learnedDim, (r + 1) * learnedDim));
  const learnedStarts = [...new Set([0, Math.min(p, rows - 1)])];
  const cosines = learnedStarts.map((p0) => {
    const d = dotsWithRow(ak, learned, rows, learnedDim, p0).slice(p0);
    return { p0, values: d.map((v, i) => v / (norms[p0] * norms[p0 + i] || 1)) };
  });
  return {
    params: { length, dim, base, layout, p, k }, table: table.data, dims: table.dims, dots,
    shift: { T, from, mapped, target, diff }, learned: { data: learned, rows, dim: learnedDim, cosines },
  };
}

// Whether the relaxed-SIMD builds (wasm-simd128-relaxed, -threads; docs/relaxed-simd.md) may run
// here: the engine must validate relaxed opcodes and compute, on its first tier, what the spec
// allows for every relaxed instruction the builds use. Node 20's baseline compiler (Liftoff, behind
// --experimental-wasm-relaxed-simd) validates them and returns a wrong i32x4.relaxed_dot_i8x16_i7x16_add_s
// until the optimising tier takes over: validation alone is not enough.

// A module with memory "m" and two functions of no arguments, each reading its three operands from
// memory and storing its result (no constant an engine could fold):
//   madd: m[48..64)   = f32x4.relaxed_madd(m[0..16), m[16..32), m[32..48))
//   dot:  m[112..128) = i32x4.relaxed_dot_i8x16_i7x16_add_s(m[64..80), m[80..96), m[96..112))
const uleb = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const sleb = (n) => {
  const out = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) return [...out, b];
    out.push(b | 0x80);
  }
};
const vec = (items) => [...uleb(items.length), ...items.flat()];
const section = (id, body) => [id, ...uleb(body.length), ...body];
const name = (s) => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const load = (addr) => [0x41, ...sleb(addr), 0xfd, 0x00, 4, 0]; // i32.const addr; v128.load align=16
// out = op(a, b, c): i32.const out, three loads, the 0xfd-prefixed opcode, v128.store, end.
const ternary = (op, out, a, b, c) => [0x41, ...sleb(out), ...load(a), ...load(b), ...load(c), 0xfd, ...uleb(op), 0xfd, 0x0b, 4, 0, 0x0b];
const body = (code) => vec([0, ...code].map((x) => [x])); // no locals
const F32X4_RELAXED_MADD = 0x105;
const I32X4_RELAXED_DOT_I8X16_I7X16_ADD_S = 0x113;

export const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0,
  ...section(1, vec([[0x60, 0, 0]])), // type 0: [] -> []
  ...section(3, vec([[0], [0]])), // two functions of type 0
  ...section(5, vec([[0, 1]])), // memory: 1 page
  ...section(7, vec([[...name('m'), 2, 0], [...name('madd'), 0, 0], [...name('dot'), 0, 1]])),
  ...section(10, vec([
    body(ternary(F32X4_RELAXED_MADD, 48, 0, 16, 32)),
    body(ternary(I32X4_RELAXED_DOT_I8X16_I7X16_ADD_S, 112, 64, 80, 96)),
  ])),
]);

// f32x4.relaxed_madd(a, b, c) may be fused (a b + c rounded once) or not (a b rounded, then + c):
// each lane's result must be one of the two. Lane 0 tells them apart: (1 + 2^-23)(1 - 2^-23) - 1 is
// -2^-46 fused, 0 unfused. The others: exact products, an infinity, a signed zero.
const MADD = {
  a: [1 + 2 ** -23, 2, 3.5, -0],
  b: [1 - 2 ** -23, 3, 1e30, 5],
  c: [-1, 4, -Infinity, 0],
  fused: [-(2 ** -46), 10, -Infinity, 0],
  unfused: [0, 10, -Infinity, 0],
};
// i32x4.relaxed_dot_i8x16_i7x16_add_s(a, b, c): lane i = c[i] + sum over k < 4 of a[4i+k] b[4i+k]. With
// every b in 0..127 the result is exact and the same everywhere (the spec's relaxation is only for
// b >= 128). The inputs reach the extremes: a = -128 with b = 127, a large accumulator, one that
// wraps; Node 20's Liftoff drops the accumulator and doubles the dot (lane 0 gives -130048).
const DOT = {
  a: [-128, -128, -128, -128, 127, -1, 5, -7, 1, 2, 3, 4, -100, 50, -3, 9],
  b: [127, 127, 127, 127, 127, 127, 0, 1, 1, 2, 3, 4, 100, 60, 127, 90],
  c: [1000, -7, 2 ** 30, -(2 ** 31) + 100000],
};
DOT.want = DOT.c.map((c, l) => {
  let s = c;
  for (let k = 0; k < 4; k++) s += DOT.a[4 * l + k] * DOT.b[4 * l + k];
  return s | 0;
});

const same = (x, y) => Object.is(x, y);
const list = (a) => `[${[...a].join(', ')}]`;

/**
 * Runs the known-answer test once per call. Returns { reason: null, fused } when the relaxed builds
 * may run here (`fused`: whether this engine's relaxed_madd rounds once), or { reason } saying why not.
 */
export function probeRelaxedSimd() {
  try {
    if (typeof WebAssembly !== 'object') return { reason: 'this engine has no WebAssembly' };
    if (!WebAssembly.validate(RELAXED_PROBE)) {
      return { reason: 'this engine does not support WebAssembly relaxed SIMD (in Node 20, --experimental-wasm-relaxed-simd enables it)' };
    }
    const { exports: e } = new WebAssembly.Instance(new WebAssembly.Module(RELAXED_PROBE));
    const f32 = new Float32Array(e.m.buffer), i8 = new Int8Array(e.m.buffer), i32 = new Int32Array(e.m.buffer);
    f32.set(MADD.a, 0);
    f32.set(MADD.b, 4);
    f32.set(MADD.c, 8);
    e.madd();
    const madd = f32.slice(12, 16);
    const fused = same(madd[0], MADD.fused[0]);
    for (let l = 0; l < 4; l++) {
      if (!same(madd[l], MADD.fused[l]) && !same(madd[l], MADD.unfused[l])) {
        return { reason: `this engine computes f32x4.relaxed_madd wrongly: ${list(madd)} for ${list(MADD.fused)} (fused) or ${list(MADD.unfused)}` };
      }
    }
    i8.set(DOT.a, 64);
    i8.set(DOT.b, 80);
    i32.set(DOT.c, 24);
    e.dot();
    const dot = i32.slice(28, 32);
    if (!DOT.want.every((w, l) => w === dot[l])) {
      return { reason: `this engine computes i32x4.relaxed_dot_i8x16_i7x16_add_s wrongly: ${list(dot)} for ${list(DOT.want)} ` +
        '(Node 20 does on its baseline tier; --no-liftoff avoids it)' };
    }
    return { reason: null, fused };
  } catch (e) {
    return { reason: `the relaxed-SIMD probe failed: ${e?.message ?? e}` };
  }
}

let cached;
/** Why the relaxed-SIMD builds cannot run here, or null when they can (probed once). */
export function relaxedUnavailable() {
  cached ??= probeRelaxedSimd();
  return cached.reason;
}

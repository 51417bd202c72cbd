// Rotary position embedding (C++ contract: src/attnkit/ops/rotary.hpp).
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { boolean, describe, floatInput, idsInput, num, oneOf, optionalNumber, options as checkOptions } from '../runtime/args.js';
import { ENUMS, writeRotaryConfig } from '../runtime/boundary.generated.js';

export const ROTARY_OPTIONS = ['rotaryDim', 'base', 'layout', 'scaling'];

/**
 * The RotaryConfig fields (bindings/boundary.json) of rotary options, checked. scaling: {type,
 * factor, originalMaxPositions, lowFreqFactor, highFreqFactor, betaFast, betaSlow,
 * attentionFactor, mscale, mscaleAllDim, truncate}.
 */
export function rotaryFields(fn, headDim, rotary, where = 'rotary') {
  const { rotaryDim, base = 10000, layout = 'half', scaling } = checkOptions(fn, rotary, ROTARY_OPTIONS, where);
  const sc = checkOptions(fn, scaling, ['type', 'factor', 'originalMaxPositions', 'lowFreqFactor', 'highFreqFactor',
    'betaFast', 'betaSlow', 'attentionFactor', 'mscale', 'mscaleAllDim', 'truncate'], 'scaling');
  const opt = (key, dflt) => optionalNumber(fn, `scaling.${key}`, sc[key], dflt);
  // Checked in wire order (the first bad option is the one reported).
  const type = sc.type ?? 'none';
  return {
    headDim: num(fn, 'headDim', headDim),
    rotaryDim: optionalNumber(fn, 'rotaryDim', rotaryDim, 0),
    base: num(fn, 'base', base),
    layout: ENUMS.RotaryLayout[oneOf(fn, 'layout', layout, ENUMS.RotaryLayout)],
    scaling: ENUMS.RotaryScaling[oneOf(fn, 'scaling.type', type, ENUMS.RotaryScaling)],
    factor: opt('factor', 1),
    originalMaxPositions: opt('originalMaxPositions', 0),
    lowFreqFactor: opt('lowFreqFactor', 1),
    highFreqFactor: opt('highFreqFactor', 4),
    betaFast: opt('betaFast', 32),
    betaSlow: opt('betaSlow', 1),
    attentionFactor: opt('attentionFactor', NaN),
    mscale: opt('mscale', 0),
    mscaleAllDim: opt('mscaleAllDim', 0),
    truncate: sc.truncate === undefined || boolean(fn, 'scaling.truncate', sc.truncate),
  };
}

/** The RotaryConfig on the wire (the rotary ops take it as doubles). */
export const rotaryConfig = (fn, headDim, rotary, where) => writeRotaryConfig(rotaryFields(fn, headDim, rotary, where));

/**
 * Rotates x [batch, heads, length, headDim] (or [heads, length, headDim] or [length, headDim])
 * by RoPE. Positions: `positions` [length] or [batch, length], else offset + 0..length-1.
 */
export function rotary(ak, x, options) {
  const fn = 'rotary';
  const { positions, offset = 0, ...config } = checkOptions(fn, options, ['positions', 'offset', ...ROTARY_OPTIONS]);
  const t = floatInput(fn, 'x', x);
  if (t.dims.length < 2 || t.dims.length > 4) {
    throw new AttnkitError(`${fn}: x must have 2 to 4 dims ([batch, heads, length, headDim]), got ${JSON.stringify(t.dims)}`,
      { code: 'ERR_SHAPE_MISMATCH', argument: 'x.dims' });
  }
  const [B, H, L, d] = [1, 1, 1, 1].slice(t.dims.length).concat(t.dims);
  const cfg = rotaryConfig(fn, d, config, '');
  let kind = 0;
  let pos = null;
  if (positions !== undefined) {
    pos = idsInput(fn, 'positions', positions);
    kind = pos.dims.length === 2 ? 2 : 1;
  }
  const o = num(fn, 'offset', offset);
  const data = ak._withInputs([t.data, pos?.data, cfg], ([px, pp, pc]) =>
    ak._call(fn, '_rotary', [px, t.data.length, B, H, L, pp, pos?.data.length ?? 0, kind, o, pc]));
  return new Tensor('float32', data, [...t.dims]);
}

/**
 * RoPE's inverse frequencies (rotaryDim / 2 of them) and the factor applied to cos/sin, as
 * Hugging Face computes them for the scaling; seqLength matters only for 'dynamic'.
 */
export function rotaryFrequencies(ak, headDim, options) {
  const fn = 'rotaryFrequencies';
  const { seqLength, ...config } = checkOptions(fn, options, ['seqLength', ...ROTARY_OPTIONS]);
  const cfg = rotaryConfig(fn, headDim, config, '');
  const seq = optionalNumber(fn, 'seqLength', seqLength, 0);
  const r = ak._withInputs([cfg], ([pc]) => ak._call(fn, '_rotaryFrequencies', [pc, seq]));
  return { invFreq: r.slice(0, r.length - 1), attentionFactor: r[r.length - 1] };
}

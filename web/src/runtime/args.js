// Argument checks only JavaScript can make (types, typed-array kinds, dims against lengths);
// values and ranges are checked in C++, which names the argument in its messages too.
import { AttnkitError } from './errors.js';
import { Tensor } from './tensor.js';

export function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || v === undefined || typeof v !== 'object') return String(v);
  return v.constructor?.name ?? 'object';
}

/**
 * Refuses a typed array whose ArrayBuffer was transferred (postMessage to a worker, structuredClone
 * with transfer): it reads as empty, which would be taken for an empty input.
 */
export function attached(fn, name, view) {
  if (view.byteLength !== 0) return view;
  const buffer = view.buffer ?? view;
  let detached = buffer.detached;
  if (detached === undefined) {
    try {
      new Uint8Array(buffer, 0, 0); // throws on a detached buffer (engines without .detached)
      detached = false;
    } catch {
      detached = true;
    }
  }
  if (detached) {
    throw new AttnkitError(`${fn}: ${name} is detached (its ArrayBuffer was transferred, e.g. to a worker)`, {
      code: 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
  return view;
}

export function num(fn, name, v) {
  if (typeof v !== 'number') {
    throw new AttnkitError(`${fn}: ${name} must be a number, got ${typeof v} ${describe(v)}`, {
      code: 'ERR_INVALID_ARGUMENT',
      argument: name,
    });
  }
  return v;
}

/** A finite number (NaN and infinities are refused, not replaced by a default). */
export function finite(fn, name, v) {
  if (!Number.isFinite(num(fn, name, v))) {
    throw new AttnkitError(`${fn}: ${name} must be a finite number, got ${v}`, { code: 'ERR_INVALID_ARGUMENT', argument: name });
  }
  return v;
}

export function oneOf(fn, name, v, options) {
  const i = options.indexOf(v);
  if (i < 0) {
    throw new AttnkitError(
      `${fn}: ${name} must be one of ${options.map((o) => `'${o}'`).join(', ')}, got ${describe(v)}`,
      { code: 'ERR_INVALID_ARGUMENT', argument: name },
    );
  }
  return i;
}

// int64 ids (transformers.js and onnxruntime tensors hold BigInt64Array) as int32, each checked.
function int32FromBigInts(fn, name, data) {
  attached(fn, name, data);
  const out = new Int32Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const x = data[i];
    if (x < -2147483648n || x > 2147483647n) {
      throw new AttnkitError(`${fn}: ${name}[${i}] = ${x}n does not fit int32`, { code: 'ERR_OUT_OF_RANGE', argument: name });
    }
    out[i] = Number(x);
  }
  return out;
}
const isBigInts = (x) => x instanceof BigInt64Array || x instanceof BigUint64Array;

// Token ids: an Int32Array or BigInt64Array, an Array of integers (or of equally long arrays of
// them), or an int32 / int64 Tensor. Returns { data (Int32Array), dims }.
export function idsInput(fn, name, v) {
  if (isBigInts(v)) return { data: int32FromBigInts(fn, name, v), dims: [v.length] };
  if (v instanceof Tensor || (v && typeof v === 'object' && 'data' in v && 'dims' in v)) {
    if (isBigInts(v.data)) {
      checkDims(fn, name, v.dims, v.data.length);
      return { data: int32FromBigInts(fn, name, v.data), dims: [...v.dims] };
    }
    if (!(v.data instanceof Int32Array)) {
      throw new AttnkitError(`${fn}: ${name} must hold int32 data, got ${describe(v.data)}`, {
        code: 'ERR_INVALID_ARGUMENT',
        argument: name,
      });
    }
    attached(fn, name, v.data);
    checkDims(fn, name, v.dims, v.data.length);
    return { data: v.data, dims: [...v.dims] };
  }
  if (v instanceof Int32Array) return { data: attached(fn, name, v), dims: [v.length] };
  if (Array.isArray(v) && v.length > 0 && Array.isArray(v[0])) {
    // [[...], [...]]: a batch of equally long rows
    const rows = v.map((row, b) => idsInput(fn, `${name}[${b}]`, row));
    const width = rows[0].data.length;
    rows.forEach((r, b) => {
      if (r.dims.length !== 1 || r.data.length !== width) {
        throw new AttnkitError(`${fn}: ${name}[${b}] has ${r.data.length} ids, expected ${width} like ${name}[0]`, {
          code: 'ERR_SHAPE_MISMATCH',
          argument: `${name}[${b}]`,
        });
      }
    });
    const data = new Int32Array(v.length * width);
    rows.forEach((r, b) => data.set(r.data, b * width));
    return { data, dims: [v.length, width] };
  }
  if (Array.isArray(v)) {
    const data = new Int32Array(v.length);
    for (let i = 0; i < v.length; i++) {
      if (!Number.isInteger(v[i]) || v[i] < -2147483648 || v[i] > 2147483647) {
        throw new AttnkitError(`${fn}: ${name}[${i}] must be an int32 integer, got ${describe(v[i])}`, {
          code: 'ERR_INVALID_ARGUMENT',
          argument: `${name}[${i}]`,
        });
      }
      data[i] = v[i];
    }
    return { data, dims: [v.length] };
  }
  throw new AttnkitError(
    `${fn}: ${name} must be an Int32Array, an array of integers or an int32 Tensor, got ${describe(v)}`,
    { code: 'ERR_INVALID_ARGUMENT', argument: name },
  );
}

// float32 input: a Float32Array (1-D) or a float32 Tensor. Returns { data, dims }.
export function floatInput(fn, name, v) {
  if (v instanceof Float32Array) return { data: attached(fn, name, v), dims: [v.length] };
  if (v && typeof v === 'object' && v.data instanceof Float32Array && Array.isArray(v.dims)) {
    attached(fn, name, v.data);
    checkDims(fn, name, v.dims, v.data.length);
    return { data: v.data, dims: [...v.dims] };
  }
  const got = v && typeof v === 'object' && 'data' in v ? `a tensor of ${describe(v.data)}` : describe(v);
  throw new AttnkitError(`${fn}: ${name} must be a Float32Array or a float32 Tensor, got ${got}`, {
    code: 'ERR_INVALID_ARGUMENT',
    argument: name,
  });
}

export function checkDims(fn, name, dims, length) {
  const ok = Array.isArray(dims) && dims.every((d) => Number.isInteger(d) && d >= 0);
  const n = ok ? dims.reduce((a, b) => a * b, 1) : NaN;
  if (n !== length) {
    throw new AttnkitError(
      `${fn}: ${name}.dims ${JSON.stringify(dims)} describe ${n} elements but ${name}.data has ${length}`,
      { code: 'ERR_SHAPE_MISMATCH', argument: `${name}.dims` },
    );
  }
}

/** An integer in [lo, hi]: ERR_OUT_OF_RANGE for a number outside, ERR_INVALID_ARGUMENT for a non-number. */
export function integerIn(fn, name, v, lo, hi) {
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw new AttnkitError(`${fn}: ${name} must be an integer in [${lo}, ${hi}], got ${describe(v)}`, {
      code: typeof v === 'number' ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
  return v;
}

/** A finite number for which ok(v) holds; `expected` says which in the message. */
export function numberIn(fn, name, v, ok, expected) {
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) {
    throw new AttnkitError(`${fn}: ${name} must be ${expected}, got ${describe(v)}`, {
      code: typeof v === 'number' ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
  return v;
}

/** A boolean option: true or false, nothing else. */
export function boolean(fn, name, v) {
  if (typeof v !== 'boolean') {
    throw new AttnkitError(`${fn}: ${name} must be true or false, got ${describe(v)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
  return v;
}

/** An optional callback: undefined or a function. */
export function callback(fn, name, v) {
  if (v !== undefined && typeof v !== 'function') {
    throw new AttnkitError(`${fn}: ${name} must be a function, got ${describe(v)}`, { code: 'ERR_INVALID_ARGUMENT', argument: name });
  }
  return v;
}

export const optionalNumber = (fn, name, v, dflt) => (v === undefined ? dflt : num(fn, name, v));

/**
 * A fetch Response that succeeded and can still be read; a failed one (a 404) is ERR_LOAD with its
 * status and URL, one whose body was read (or is being read) ERR_INVALID_ARGUMENT.
 */
export function okResponse(fn, name, r) {
  if (!r.ok) {
    const status = `HTTP ${r.status}${r.statusText ? ` ${r.statusText}` : ''}`;
    throw new AttnkitError(`${fn}: ${name} is an ${status} response${r.url ? ` for ${r.url}` : ''}`, { code: 'ERR_LOAD', argument: name });
  }
  if (r.bodyUsed || r.body?.locked) {
    throw new AttnkitError(`${fn}: ${name}${r.url ? ` (${r.url})` : ''} is a Response whose body was already read; ` +
      'pass a fresh one (or response.clone() before reading it)', { code: 'ERR_INVALID_ARGUMENT', argument: name });
  }
  return r;
}

/**
 * A parsed JSON object given in place of a file, as its text. What JSON cannot hold (a cycle, a
 * BigInt, nesting deeper than the engine's stack, a throwing getter or Proxy) is an
 * ERR_INVALID_ARGUMENT naming the argument, not the engine's TypeError or RangeError.
 */
export function jsonText(fn, name, x) {
  try {
    return JSON.stringify(x);
  } catch (e) {
    const why = e instanceof RangeError ? 'nested too deeply' : e.message.split('\n')[0];
    throw new AttnkitError(`${fn}: ${name} cannot be read as JSON (${why})`, { code: 'ERR_INVALID_ARGUMENT', argument: name, cause: e });
  }
}


// The closest known option to a misspelt one: its camelCase form when that is known (Hugging Face
// and PyTorch users write attention_mask, max_length), else the nearest by edit distance.
function suggestion(key, known) {
  const camel = key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  if (known.includes(camel)) return camel;
  // A shortened name (addBos for addBosToken) names the one known key it begins.
  const starts = known.filter((k) => camel.length >= 3 && k.toLowerCase().startsWith(camel.toLowerCase()));
  if (starts.length === 1) return starts[0];
  const distance = (a, b) => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) {
        row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      prev = row;
    }
    return prev[b.length];
  };
  let best = null, bestDistance = Infinity;
  for (const k of known) {
    const d = Math.min(distance(key.toLowerCase(), k.toLowerCase()), distance(camel.toLowerCase(), k.toLowerCase()));
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : null;
}

/**
 * An options object: undefined or null is no options ({}); anything else must be a plain object
 * whose every key is in `known` (an unknown key is refused, naming the closest known one).
 * `where` prefixes nested options' names in messages ('scaling' -> 'scaling.factor').
 */
export function options(fn, value, known, where = '') {
  if (value === undefined || value === null) return {};
  const name = where || 'options';
  if (typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    throw new AttnkitError(`${fn}: ${name} must be an object, got ${describe(value)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
  // A snapshot of the own enumerable keys: a Proxy or a getter that throws fails here, once, as an
  // AttnkitError, and nothing later reads the caller's object again (a getter could change its answer).
  let keys;
  const copy = {};
  try {
    keys = Object.keys(value);
    for (const key of keys) if (known.includes(key)) copy[key] = value[key];
  } catch (e) {
    throw new AttnkitError(`${fn}: ${name} could not be read (${e?.message ?? describe(e)})`, {
      code: 'ERR_INVALID_ARGUMENT', argument: name, cause: e,
    });
  }
  for (const key of keys) {
    if (known.includes(key)) continue;
    const hint = suggestion(key, known);
    const full = where ? `${where}.${key}` : key;
    throw new AttnkitError(`${fn}: unknown option '${full}'${hint ? `; did you mean '${hint}'?` : ''} ` +
      `(known: ${known.join(', ')})`, { code: 'ERR_INVALID_ARGUMENT', argument: full });
  }
  return copy;
}

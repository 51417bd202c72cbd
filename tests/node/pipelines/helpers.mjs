// What the pipeline tests share: the module, the expected values of tests/golden/pipelines.py, and
// Hub-shaped sources put together from the fixtures (a family checkpoint with the BERT test repo's
// tokenizer files, config.json edited where a test needs another label map or problem type).
import fs from 'node:fs';
import path from 'node:path';
import { load } from '../../../web/attnkit.js';
import { ROOT, fixture } from '../helpers.mjs';

export const FIXTURES = path.join(ROOT, 'tests/fixtures');
export const golden = fixture('pipelines.json');
export const ak = await load();

/** {file name: contents} of a checkpoint folder and a tokenizer folder; `edit` changes config.json. */
export function files(model, tokenizer = 'repos/bert', edit = (c) => c) {
  const out = {};
  for (const f of fs.readdirSync(path.join(FIXTURES, tokenizer))) {
    if (/^(tokenizer|special_tokens_map|vocab|merges)/.test(f)) out[f] = fs.readFileSync(path.join(FIXTURES, tokenizer, f), 'utf8');
  }
  out['config.json'] = JSON.stringify(edit(JSON.parse(fs.readFileSync(path.join(FIXTURES, model, 'config.json'), 'utf8'))));
  out['model.safetensors'] = fs.readFileSync(path.join(FIXTURES, model, 'model.safetensors'));
  return out;
}

/** |got - want| <= atol + rtol |want| for numbers or arrays of numbers. */
export function close(got, want, what, atol = 1e-5, rtol = 1e-4) {
  const g = typeof got === 'number' ? [got] : Array.from(got), w = typeof want === 'number' ? [want] : Array.from(want);
  if (g.length !== w.length) throw new Error(`${what}: length ${g.length}, expected ${w.length}`);
  for (let i = 0; i < w.length; i++) {
    if (!(Math.abs(g[i] - w[i]) <= atol + rtol * Math.abs(w[i]))) throw new Error(`${what}: [${i}] = ${g[i]}, expected ${w[i]}`);
  }
}

/** Results with scores: the same keys and values, scores within tolerance. */
export function sameScored(got, want, what) {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      throw new Error(`${what}: ${JSON.stringify(got)}\nexpected ${JSON.stringify(want)}`);
    }
    want.forEach((w, i) => sameScored(got[i], w, `${what}[${i}]`));
    return;
  }
  if (want !== null && typeof want === 'object') {
    const keys = Object.keys(want).sort();
    if (JSON.stringify(Object.keys(got ?? {}).sort()) !== JSON.stringify(keys)) {
      throw new Error(`${what}: keys ${JSON.stringify(Object.keys(got ?? {}))}, expected ${JSON.stringify(keys)}`);
    }
    for (const k of keys) sameScored(got[k], want[k], `${what}.${k}`);
    return;
  }
  if (typeof want === 'number' && !Number.isInteger(want)) close(got, want, what);
  else if (got !== want) throw new Error(`${what}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
}

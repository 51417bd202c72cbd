// The JavaScript side's fuzzer (the libFuzzer harnesses cannot reach it): tokenizer.json steps,
// added-token matching, encode's padding and truncation, decode, tokenizer_config.json, safetensors
// and config.json through the public API, driven by random structures derived from committed seeds
// (tests/fuzz/seeds/{tokenizer,config,safetensors} and tests/fuzz/seeds/js). It checks what the
// hardening rules promise: every failure is an AttnkitError with a code, no call takes more than
// SLOW_MS, and the loaders module holds no more memory after a case than before it.
//
//   node tests/fuzz/fuzz_js.mjs [SECONDS] [SEED]    (npm run fuzz runs it too; npm test briefly)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AttnkitError, load } from '../../web/attnkit.js';
import { loaders } from '../../web/src/runtime/loaders.js';
import { seededRandom } from '../node/helpers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SEEDS = path.join(ROOT, 'tests/fuzz/seeds');
// A call may take SLOW_MS plus SLOW_MS_PER_KB for each KB of its text, in CPU time: the hazards
// looked for are hangs and work that grows faster than the input (a cubic search, an amplifying
// step). (A replay of the findings of a 10-minute run on a machine busy compiling: every one ran
// within its budget alone; wall-clock time had flagged them.)
const SLOW_MS = 2000, SLOW_MS_PER_KB = 3;
const sizeOf = (input) => (typeof input === 'string' ? input.length : Array.isArray(input)
  ? input.reduce((a, x) => a + sizeOf(x), 0) : input && typeof input === 'object' ? sizeOf(input.text ?? '') : 0);

// The tests' seeded generator (tests/node/helpers.mjs), with the draws the mutations need.
function generator(seed) {
  const int = seededRandom(seed >>> 0);
  const next = () => int(1 << 23) / (1 << 23);
  return { next, int, pick: (list) => list[int(list.length)], chance: (p) => next() < p };
}

/** The committed seeds: tokenizer.json texts (the tokenizer harness's kind-0 inputs), configs, safetensors files, and this fuzzer's own. */
export function readSeeds() {
  const files = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort().map((f) => path.join(dir, f)) : []);
  const tokenizers = [];
  for (const f of files(path.join(SEEDS, 'tokenizer'))) {
    const b = fs.readFileSync(f);
    if (b[0] !== 0) continue; // kind 0: tokenizer.json
    try {
      tokenizers.push(JSON.parse(b.subarray(1).toString('utf8')));
    } catch {
      // a seed that is not whole JSON stays the C++ harness's
    }
  }
  const js = files(path.join(SEEDS, 'js')).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  for (const s of js) if (s.tokenizer) tokenizers.push(s.tokenizer);
  return {
    tokenizers,
    configs: files(path.join(SEEDS, 'config')).map((f) => JSON.parse(fs.readFileSync(f, 'utf8'))),
    safetensors: files(path.join(SEEDS, 'safetensors')).map((f) => new Uint8Array(fs.readFileSync(f))),
    texts: js.flatMap((s) => s.texts ?? []),
    options: js.flatMap((s) => s.options ?? []),
  };
}

// Values of every kind the API may be handed.
const STEP_TYPES = {
  normalizer: ['BertNormalizer', 'Lowercase', 'NFD', 'NFC', 'NFKD', 'NFKC', 'StripAccents', 'Nmt', 'Replace', 'Prepend', 'Strip',
    'Precompiled', 'Sequence'],
  pre_tokenizer: ['BertPreTokenizer', 'ByteLevel', 'Whitespace', 'WhitespaceSplit', 'Digits', 'Punctuation', 'Split',
    'CharDelimiterSplit', 'Metaspace', 'Sequence'],
  decoder: ['ByteLevel', 'WordPiece', 'Metaspace', 'ByteFallback', 'Fuse', 'Strip', 'Replace', 'BPEDecoder', 'Sequence'],
  post_processor: ['TemplateProcessing', 'BertProcessing', 'RobertaProcessing', 'ByteLevel', 'Sequence'],
};
const LIST_KEY = { normalizer: 'normalizers', pre_tokenizer: 'pretokenizers', decoder: 'decoders', post_processor: 'processors' };

function makeFuzzer(rand, seeds) {
  const { int, pick, chance } = rand;
  const chars = ['a', 'aa', ' ', '  ', '\t', '\n', '\u2581', 'Ġ', '##', '<s>', '[UNK]', '\ue000', '\u{10fffd}', '\u0301', 'é', 'Σ',
    '東', '\u{20000}', '😀', '\ud800', '\u0000', '\ufffd', '1', '23', '.', "'s", 'x'.repeat(300)];
  const text = (max = 40) => {
    if (seeds.texts.length && chance(0.3)) return pick(seeds.texts);
    let s = '';
    for (let i = int(max); i > 0; i--) s += pick(chars);
    if (chance(0.02)) s = s.repeat(1 + int(2000));
    return s;
  };
  const number = () => pick([0, 1, -1, 2, 3, 7, 31, 64, 100, 2 ** 31 - 1, 2 ** 32, -(2 ** 31), 1e9, 1e18, 1e30, 0.5, -0.5, NaN,
    Infinity, -Infinity, Number.MAX_SAFE_INTEGER, int(50000)]);
  const value = (depth = 0) => {
    switch (int(depth > 3 ? 6 : 9)) {
      case 0: return number();
      case 1: return text();
      case 2: return chance(0.5);
      case 3: return null;
      case 4: return undefined;
      case 5: return pick([1n, -1n, 2n ** 70n]);
      case 6: return Array.from({ length: int(4) }, () => value(depth + 1));
      case 7: {
        const o = {};
        for (let i = int(4); i > 0; i--) o[pick(['type', 'content', 'pattern', 'id', 'String', 'Regex', 'a', 'behavior'])] = value(depth + 1);
        return o;
      }
      default: return step(pick(Object.keys(STEP_TYPES)), depth + 1);
    }
  };
  // A step of a tokenizer.json pipeline, with fields of the right names and random values.
  const step = (kind, depth = 0) => {
    const type = pick(STEP_TYPES[kind]);
    const s = { type };
    const fields = ['content', 'pattern', 'behavior', 'invert', 'replacement', 'prepend_scheme', 'split', 'add_prefix_space',
      'trim_offsets', 'use_regex', 'individual_digits', 'start', 'stop', 'prefix', 'cleanup', 'suffix', 'delimiter',
      'clean_text', 'handle_chinese_chars', 'strip_accents', 'lowercase', 'left', 'right', 'single', 'pair', 'special_tokens'];
    for (let i = int(4); i > 0; i--) s[pick(fields)] = value(depth + 1);
    if (type === 'Replace' || type === 'Split') s.pattern = chance(0.7) ? { String: text(3) } : { Regex: pick(['\\s+', 'a*', '(a|aa)+', '[', '\\p{L}+', text(4)]) };
    if (type === 'Replace') s.content = text(4);
    if (type === 'Sequence') {
      const n = chance(0.05) ? 1 + int(200) : int(5);
      s[LIST_KEY[kind]] = Array.from({ length: n }, () => (depth > 2 ? { type: pick(STEP_TYPES[kind]) } : step(kind, depth + 1)));
    }
    return s;
  };
  // Applies one random change somewhere inside a JSON-like value (objects are changed in place).
  const mutateInside = (root) => {
    let node = root;
    for (let d = 0; d < 6 && node && typeof node === 'object'; d++) {
      const keys = Object.keys(node);
      if (keys.length === 0 || chance(0.25)) break;
      const k = pick(keys);
      if (!node[k] || typeof node[k] !== 'object' || chance(0.3)) {
        const r = int(10);
        if (r < 6) node[k] = value();
        else if (r < 7) delete node[k];
        else if (r < 8 && typeof node[k] === 'string') node[k] = node[k] + node[k];
        else if (r < 9 && typeof node[k] === 'number') node[k] = pick([node[k] + 1, node[k] - 1, -node[k], node[k] * 1e6]);
        else node[k] = structuredCloneSafe(node[pick(keys)]);
        return;
      }
      node = node[k];
    }
    if (Array.isArray(node)) {
      if (chance(0.5) && node.length) node.push(...Array.from({ length: 1 + int(chance(0.1) ? 300 : 3) }, () => structuredCloneSafe(pick(node))));
      else node.splice(int(node.length + 1), chance(0.5) ? 1 : 0, value());
    } else if (node && typeof node === 'object') {
      node[pick(['type', 'extra', 'vocab', 'merges', 'unk_token', 'content', 'id'])] = value();
    }
  };
  return { text, number, value, step, mutateInside };
}

function structuredCloneSafe(x) {
  try {
    return structuredClone(x);
  } catch {
    return x;
  }
}

// A mutated tokenizer.json: pipeline steps swapped or stacked, fields changed, added tokens added.
function mutateTokenizer(rand, fz, json) {
  const j = structuredCloneSafe(json);
  if (!j || typeof j !== 'object') return j;
  for (let m = 1 + rand.int(4); m > 0; m--) {
    const r = rand.int(10);
    if (r < 3) {
      const kind = rand.pick(Object.keys(STEP_TYPES));
      j[kind] = fz.step(kind);
    } else if (r < 5) {
      const id = rand.chance(0.8) ? rand.int(Math.max(1, Object.keys(j.model?.vocab ?? {}).length)) : fz.number();
      if (!Array.isArray(j.added_tokens)) j.added_tokens = [];
      j.added_tokens.push({
        id, content: rand.chance(0.05) ? 'x'.repeat(70000) : fz.text(6), single_word: rand.chance(0.3), lstrip: rand.chance(0.3),
        rstrip: rand.chance(0.3), normalized: rand.chance(0.5), special: rand.chance(0.5),
      });
    } else {
      fz.mutateInside(j);
    }
  }
  return j;
}

function encodeOptions(rand, fz, seeds) {
  if (seeds.options.length && rand.chance(0.3)) return structuredCloneSafe(rand.pick(seeds.options));
  const o = {};
  const keys = ['pair', 'addSpecialTokens', 'maxLength', 'truncation', 'padding', 'padId', 'paddingSide', 'max_length', 'bogus'];
  for (let i = rand.int(4); i > 0; i--) {
    const k = rand.pick(keys);
    o[k] = rand.pick([fz.value(), true, false, 'max_length', 'longest', 'only_first', 'only_second', 'left', rand.int(64), fz.number()]);
  }
  if (rand.chance(0.05)) return new Proxy(o, { ownKeys() { throw new Error('a Proxy that throws'); } });
  if (rand.chance(0.05)) Object.defineProperty(o, 'maxLength', { enumerable: true, get() { throw new Error('a getter that throws'); } });
  if (rand.chance(0.03)) o.self = o;
  return o;
}

// The safetensors header (8-byte little-endian length, JSON) mutated, or raw byte flips.
function mutateSafetensors(rand, fz, bytes) {
  const b = bytes.slice();
  if (rand.chance(0.4) || b.length < 8) {
    for (let i = 1 + rand.int(8); i > 0 && b.length; i--) b[rand.int(b.length)] = rand.int(256);
    return rand.chance(0.2) ? b.subarray(0, rand.int(b.length + 1)) : b;
  }
  const n = Number(new DataView(b.buffer).getBigUint64(0, true));
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + n)));
  } catch {
    return b;
  }
  fz.mutateInside(header);
  let text;
  try {
    text = JSON.stringify(header);
  } catch {
    return b;
  }
  const h = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + h.length + (b.length - 8 - n));
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(b.subarray(8 + n), 8 + h.length);
  return out;
}

/**
 * Runs for `seconds`; returns {executions, findings: [{case, iteration, error}], byKind}. A finding
 * is a thrown value that is not an AttnkitError (or has no code), or a call slower than SLOW_MS.
 */
export async function fuzzJs({ seconds = 10, seed = 1, ak: given } = {}) {
  const ak = given ?? (await load());
  const heap = await loaders(ak);
  const seeds = readSeeds();
  const rand = generator(seed);
  const fz = makeFuzzer(rand, seeds);
  const findings = [];
  const byKind = { tokenizer: 0, pretrained: 0, safetensors: 0, config: 0, loaded: 0 };
  let executions = 0;
  // What the current case passed, written out with a finding (build/fuzz/js-finding-*.json).
  const trace = [];
  const deadline = performance.now() + seconds * 1000;

  // One public call: any throw must be a coded AttnkitError; slow calls are findings too.
  // Time is CPU time (this process, all its threads): a machine busy with other work must not
  // make a linear call look slow.
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const call = async (what, f, input) => {
    trace.push({ what, input });
    const t0 = cpuMs();
    executions++;
    try {
      return await f();
    } catch (e) {
      if (!(e instanceof AttnkitError) || typeof e.code !== 'string') {
        findings.push({ case: what, error: `${e?.constructor?.name}: ${String(e?.message ?? e).slice(0, 300)}`, trace: [...trace] });
      }
      return undefined;
    } finally {
      const ms = cpuMs() - t0;
      if (ms > SLOW_MS + SLOW_MS_PER_KB * sizeOf(input) / 1000) findings.push({ case: what, error: `took ${ms.toFixed(0)} ms`, trace: [...trace] });
    }
  };

  for (let iteration = 0; performance.now() < deadline; iteration++) {
    trace.length = 0;
    const before = heap.mallocInUse();
    const r = rand.int(10);
    if (r < 5) {
      byKind.tokenizer++;
      const json = mutateTokenizer(rand, fz, rand.pick(seeds.tokenizers));
      const input = rand.chance(0.5) ? json : rand.chance(0.5) ? safeJsonText(json) : new TextEncoder().encode(safeJsonText(json) ?? '');
      const tok = await call(`fromJSON #${iteration}`, () => ak.Tokenizer.fromJSON(input), json);
      if (tok) await exercise(rand, fz, seeds, tok, call, iteration, byKind);
    } else if (r < 7) {
      byKind.pretrained++;
      const config = { model_max_length: fz.number(), padding_side: rand.pick(['left', 'right', fz.value()]) };
      if (rand.chance(0.5)) config[rand.pick(['pad_token', 'unk_token', 'cls_token', 'bos_token'])] = rand.chance(0.5) ? fz.text(4) : fz.value();
      const files = { 'tokenizer.json': mutateTokenizer(rand, fz, rand.pick(seeds.tokenizers)), 'tokenizer_config.json': config };
      const tok = await call(`fromPretrained #${iteration}`, () => ak.Tokenizer.fromPretrained(files), files);
      if (tok) await exercise(rand, fz, seeds, tok, call, iteration, byKind);
    } else if (r < 9) {
      byKind.safetensors++;
      const bytes = mutateSafetensors(rand, fz, rand.pick(seeds.safetensors));
      const st = await call(`loadSafetensors #${iteration}`, () => ak.loadSafetensors(bytes), Buffer.from(bytes).toString('base64'));
      st?.dispose?.();
    } else {
      byKind.config++;
      const config = structuredCloneSafe(rand.pick(seeds.configs));
      for (let m = 1 + rand.int(3); m > 0; m--) fz.mutateInside(config);
      const weights = rand.pick(seeds.safetensors);
      const model = await call(`Model #${iteration}`, () => ak.Model.fromPretrained({ config, weights }), config);
      if (model) {
        await call(`forward #${iteration}`, () => model.forward([0, 1, 2].slice(0, 1 + rand.int(3)), encodeOptions(rand, fz, seeds)));
        model.dispose();
      }
    }
    // A case that failed leaves nothing behind (the scratch block is kept up to 1 MiB).
    const after = heap.mallocInUse();
    if (after > before + (1 << 20) + 65536) {
      findings.push({ case: `${['tokenizer', 'pretrained', 'safetensors', 'config'][r < 5 ? 0 : r < 7 ? 1 : r < 9 ? 2 : 3]} #${iteration}`,
        error: `malloc in use grew ${before} -> ${after}`, trace: [...trace] });
    }
    if (findings.length >= 20) break;
  }
  return { executions, findings, byKind };
}

function safeJsonText(x) {
  try {
    return JSON.stringify(x);
  } catch {
    return undefined;
  }
}

async function exercise(rand, fz, seeds, tok, call, iteration, byKind) {
  byKind.loaded++;
  try {
    for (let k = rand.int(4); k >= 0; k--) {
      const batch = rand.chance(0.3);
      const t = batch ? Array.from({ length: 1 + rand.int(4) }, () => fz.text()) : fz.text();
      const options = encodeOptions(rand, fz, seeds);
      const enc = await call(`encode #${iteration}`, () => tok.encode(t, options), { text: t, options: safeJsonText(options) });
      const ids = enc ? Array.from(enc.inputIds.data).slice(0, 64) : [];
      if (rand.chance(0.2)) ids.push(rand.pick([-1, tok.vocab.length, 2 ** 31 - 1, 0.5]));
      const decodeOptions = rand.chance(0.5) ? { skipSpecialTokens: rand.chance(0.5) } : encodeOptions(rand, fz, seeds);
      await call(`decode #${iteration}`, () => tok.decode(ids, decodeOptions), { ids });
      const more = fz.text();
      await call(`tokenize #${iteration}`, () => tok.tokenize(more), { text: more });
    }
  } finally {
    tok.dispose();
  }
}

// As a script: run, print, and exit non-zero on a finding.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const seconds = Number(process.argv[2] ?? 60), seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
  const r = await fuzzJs({ seconds, seed });
  console.log(`fuzz_js: seed ${seed}, ${seconds} s: ${r.executions} executions (${JSON.stringify(r.byKind)}), ${r.findings.length} findings`);
  fs.mkdirSync(path.join(ROOT, 'build/fuzz'), { recursive: true });
  r.findings.forEach((f, i) => {
    const file = path.join(ROOT, `build/fuzz/js-finding-${i}.json`);
    fs.writeFileSync(file, safeJsonText(f) ?? '{}');
    console.log(`  ${f.case}: ${f.error} (inputs: ${path.relative(ROOT, file)})`);
  });
  process.exit(r.findings.length ? 1 : 0);
}

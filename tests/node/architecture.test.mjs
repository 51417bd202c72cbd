// The layering of docs/architecture.md, checked on the include/import graph: the "may use" column
// of its layer table is the rule; every `#include "attnkit/<layer>/..."` of a C++ file under
// src/<layer>/ (and of a public header under src/attnkit/<layer>/) and every relative import of a
// JavaScript file under web/src/<layer>/ must name a layer its row allows; the tutorial imports
// only the package's entry. The fixture tree tests/fixtures/layering/ breaks each rule once.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

/** The layer table of docs/architecture.md: layer -> Set of the layers it may use. */
export function layerRules(markdown) {
  const rules = new Map();
  const lines = markdown.split('\n');
  const head = lines.findIndex((l) => /^\| layer \|.*\| may use \|$/.test(l));
  if (head < 0) throw new Error('docs/architecture.md has no "| layer | ... | may use |" table');
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    rules.set(cells[0], new Set(cells.at(-1).split(',').map((s) => s.trim())));
  }
  return rules;
}

function walk(dir, keep) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p, keep) : keep(p) ? [p] : [];
  });
}

/** Every use across layers that the rules forbid, as "file:line: layer -> layer (what)". */
export function violations(root, rules) {
  const out = [];
  const layers = [...rules.keys()];
  // The layer of a file: the first folder under src/, src/attnkit/ or web/src/ (ops/simd is ops).
  const layerOf = (rel) => {
    const m = /^(?:src\/attnkit|src|web\/src)\/([a-z]+)\//.exec(rel);
    return m && layers.includes(m[1]) ? m[1] : null;
  };
  const check = (file, line, from, to, what) => {
    if (to && !rules.get(from).has(to)) out.push(`${file}:${line}: ${from} -> ${to} (${what})`);
  };
  const rel = (p) => path.relative(root, p).split(path.sep).join('/');
  for (const file of walk(path.join(root, 'src'), (p) => /\.(cpp|hpp)$/.test(p))) {
    const from = layerOf(rel(file));
    if (!from) continue;
    fs.readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      const m = /^\s*#\s*include\s+"attnkit\/([a-z]+)\/[^"]*"/.exec(text);
      const directive = m?.[0].trim();
      if (m) check(rel(file), i + 1, from, layers.includes(m[1]) ? m[1] : `unknown layer ${m[1]}`, directive);
      else if (/^\s*#\s*include\s+"attnkit\/[^/"]+"/.test(text)) out.push(`${rel(file)}:${i + 1}: a header outside every layer (${text.trim()})`);
    });
  }
  const imports = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;
  for (const file of walk(path.join(root, 'web'), (p) => /\.m?js$/.test(p) && !p.includes(`${path.sep}dist${path.sep}`))) {
    const r = rel(file);
    const from = layerOf(r);
    const tutorial = r.startsWith('web/tutorial/');
    if (!from && !tutorial) continue;
    fs.readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      for (const m of text.matchAll(imports)) {
        const target = rel(path.resolve(path.dirname(file), m[2]));
        if (tutorial) {
          if (!target.startsWith('web/tutorial/') && target !== 'web/attnkit.js' && !TUTORIAL_EXCEPTIONS.has(`${r} -> ${target}`)) {
            out.push(`${r}:${i + 1}: the tutorial imports ${target}, not the public API (web/attnkit.js)`);
          }
          continue;
        }
        if (target.startsWith('web/dist/')) continue; // the wasm glue
        if (THIRD_PARTY.has(`${r} -> ${target}`)) continue;
        const to = layerOf(target);
        check(r, i + 1, from, to ?? `outside the layers: ${target}`, m[2]);
      }
    });
  }
  return out;
}

// Third-party modules the library imports by path (bundled into web/dist/attnkit.mjs; by path so
// that the unbundled source runs in pages and workers without an import map).
const THIRD_PARTY = new Set(['web/src/pipelines/chat_template.js -> node_modules/@huggingface/jinja/dist/index.js']);

// The tutorial's remaining reach into the library: its checkpoint view reads a folder's spec and
// tensors without building a model (readCheckpoint), which the public API does not offer yet.
const TUTORIAL_EXCEPTIONS = new Set(['web/tutorial/checkpoint.js -> web/src/models/checkpoint.js']);

const rules = layerRules(fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));

test('docs/architecture.md declares every layer the tree has, and what each may use', () => {
  assert.deepEqual([...rules.keys()], ['core', 'runtime', 'ops', 'nn', 'formats', 'text', 'models', 'pipelines']);
  for (const [layer, uses] of rules) {
    assert.ok(uses.has(layer), `${layer} may use itself`);
    for (const u of uses) assert.ok(rules.has(u), `${layer} names an unknown layer ${u}`);
  }
  // Every folder of src/, src/attnkit/ and web/src/ is a layer.
  for (const dir of ['src', 'src/attnkit', 'web/src']) {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      if (e.isDirectory() && !(dir === 'src' && e.name === 'attnkit')) assert.ok(rules.has(e.name), `${dir}/${e.name} is not a layer of docs/architecture.md`);
    }
  }
});

test('the tree keeps the layering: no include or import reaches a layer its row does not allow', () => {
  assert.deepEqual(violations(ROOT, rules), []);
});

test('the check reports the fixture\'s deliberately wrong include and imports', () => {
  const found = violations(path.join(ROOT, 'tests/fixtures/layering'), rules);
  assert.deepEqual(found, [
    'src/ops/softmax.cpp:2: ops -> nn (#include "attnkit/nn/encoder_layer.hpp")',
    'web/src/runtime/heap.js:2: runtime -> models (../models/model.js)',
    'web/tutorial/main.js:2: the tutorial imports web/src/ops/attention.js, not the public API (web/attnkit.js)',
  ]);
});

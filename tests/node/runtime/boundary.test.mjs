// The C++/JavaScript boundary is declared once (bindings/boundary.json): both generated sides are
// what scripts/gen_boundary.mjs makes of it, and a field on one side only fails — on the C++ side
// at compile time (a struct field the declaration lacks, a declared field the struct lacks, an
// enumerator out of order), on the JavaScript side when the writer is called.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../helpers.mjs';
import { OUTPUTS, generate, readDeclaration } from '../../../scripts/gen_boundary.mjs';
import { ENUMS, WEIGHTS, writeRotaryConfig, writeMultiHeadAttentionConfig } from '../../../web/src/runtime/boundary.generated.js';

const decl = readDeclaration();

test('the committed generated files are what bindings/boundary.json makes (run node scripts/gen_boundary.mjs)', () => {
  const out = generate(decl);
  assert.equal(fs.readFileSync(path.join(ROOT, OUTPUTS.cpp), 'utf8'), out.cpp, OUTPUTS.cpp);
  assert.equal(fs.readFileSync(path.join(ROOT, OUTPUTS.js), 'utf8'), out.js, OUTPUTS.js);
});

// Compiles the generated C++ side of `declaration` against the real headers: '' or the errors.
function compile(declaration) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-boundary-'));
  try {
    fs.writeFileSync(path.join(dir, 'boundary.generated.hpp'), generate(declaration).cpp);
    fs.writeFileSync(path.join(dir, 'check.cpp'), '#include "boundary.generated.hpp"\n');
    execFileSync('g++', ['-std=c++17', '-fsyntax-only', '-I', path.join(ROOT, 'src'), '-I', dir, path.join(dir, 'check.cpp')],
      { encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (e) {
    return `${e.stdout}${e.stderr}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('C++: the declaration compiles against the headers; a field on one side only, or enumerators out of order, do not', () => {
  assert.equal(compile(decl), '');
  // A field the C++ struct has and the declaration lacks (as if added to the struct only).
  const fewer = structuredClone(decl);
  fewer.structs.RotaryConfig.fields = fewer.structs.RotaryConfig.fields.filter(([js]) => js !== 'mscaleAllDim');
  assert.match(compile(fewer), /RotaryConfig has a field that bindings\/boundary.json's RotaryConfig does not declare/);
  // A field declared that the struct lacks (as if added to the declaration only).
  const more = structuredClone(decl);
  more.structs.LayerSettings.fields.push(['ffnDropout', 'ffn_dropout', 'number']);
  assert.match(compile(more), /ffn_dropout/);
  // Enumerators in another order than the C++ enum's.
  const swapped = structuredClone(decl);
  swapped.enums.RotaryScaling.values.reverse();
  assert.match(compile(swapped), /RotaryScaling's enumerators are not in the order/);
  // Weight numbers that are not the C++ ones.
  const moved = structuredClone(decl);
  moved.weights.Embeddings.names.reverse();
  assert.match(compile(moved), /EmbeddingsWeight's numbers are not those/);
});

test('JavaScript: the writers take exactly the declared fields, enums by name', () => {
  const fields = Object.fromEntries(decl.structs.RotaryConfig.fields.map(([js, , type]) => [js,
    type === 'bool' ? true : Object.hasOwn(ENUMS, type) ? ENUMS[type][0] : 1]));
  assert.equal(writeRotaryConfig(fields).length, decl.structs.RotaryConfig.fields.length);
  assert.throws(() => writeRotaryConfig({ ...fields, dropout: 0 }), /RotaryConfig has no field dropout/);
  const { base, ...missing } = fields;
  assert.throws(() => writeRotaryConfig(missing), /RotaryConfig.base is missing/);
  assert.throws(() => writeRotaryConfig({ ...fields, layout: 'sideways' }), /RotaryConfig.layout is sideways/);
  // Nested structs go in place: a MultiHeadAttentionConfig holds a RotaryConfig.
  const mha = Object.fromEntries(decl.structs.MultiHeadAttentionConfig.fields.map(([js, , type]) => [js,
    type === 'RotaryConfig' ? fields : type === 'bool' ? false : Object.hasOwn(ENUMS, type) ? ENUMS[type][1] : 2]));
  const wire = writeMultiHeadAttentionConfig(mha);
  assert.equal(wire.length, decl.structs.MultiHeadAttentionConfig.fields.length - 1 + decl.structs.RotaryConfig.fields.length);
  assert.deepEqual(WEIGHTS.EncoderLayer.slice(0, WEIGHTS.MultiHeadAttention.length), WEIGHTS.MultiHeadAttention);
});

// The JavaScript side's fuzzer (tests/fuzz/fuzz_js.mjs) for a short run in `npm test`:
// FUZZ_JS_SECONDS (default 10) from seed FUZZ_SEED (default 1, so a failure here reproduces with
// `node tests/fuzz/fuzz_js.mjs 10 1`). `npm run fuzz` runs it longer with a fresh seed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fuzzJs } from '../fuzz/fuzz_js.mjs';

test('fuzz_js: every failure of the tokenizer, safetensors and config paths is a coded AttnkitError, in bounded time and memory', async () => {
  const seconds = Number(process.env.FUZZ_JS_SECONDS ?? 10), seed = Number(process.env.FUZZ_SEED ?? 1);
  const r = await fuzzJs({ seconds, seed });
  console.log(`# fuzz_js: seed ${seed}, ${seconds} s: ${r.executions} executions ${JSON.stringify(r.byKind)}`);
  assert.ok(r.executions > 100, 'the fuzzer ran');
  assert.ok(r.byKind.loaded > 10, 'some mutated tokenizers loaded and were exercised');
  assert.deepEqual(r.findings.map((f) => `${f.case}: ${f.error}`), []);
});

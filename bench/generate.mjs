// Greedy decoding of a 4-layer, 256-wide GPT-2 (4 heads, vocabulary 50257, 1024 positions;
// bench/export_gpt2.py writes its Hugging Face folder and its ONNX export with past key/values):
// a 32-token prompt and 128 new tokens, batch 1, one thread. attnkit's generate (KV cache) against
// (a) attnkit re-running the whole prefix per token and (b) onnxruntime-web running the exported
// graph with its past key/values fed back, greedy argmax in JavaScript, in the same run; then the
// cost of one token after 32, 256 and 1023 positions.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, fmt, now, table } from './lib.mjs';
import { argmax } from '../web/src/models/sampling.js';

const PROMPT = 32, NEW = 128, LAYERS = 4, H = 4, HD = 64, V = 50257;

export async function benchGenerate({ simd, scalar }) {
  const dir = path.join(ROOT, 'bench/models/gpt2-bench');
  if (!fs.existsSync(path.join(dir, 'model.onnx'))) {
    // Written once by PyTorch (Debian's python3-torch, as the golden generator uses).
    try {
      execFileSync('/usr/bin/python3', [path.join(ROOT, 'bench/export_gpt2.py'), dir], { stdio: 'inherit' });
    } catch (e) {
      throw new Error(`bench generate: bench/export_gpt2.py could not write ${dir} (it needs /usr/bin/python3 with ` +
        `torch: bash scripts/setup.sh --bench, which npm run bench runs): ${e.message}`);
    }
  }
  const prompt = Int32Array.from({ length: PROMPT }, (_, t) => (Math.imul(t + 3, 2654435761) >>> 0) % V);
  const rows = [], tokens = {}, results = {};
  const record = (name, firstMs, totalMs, ids) => {
    results[name] = { firstTokenMs: firstMs, tokensPerSecond: NEW / (totalMs / 1000), totalMs };
    tokens[name] = ids;
  };

  // attnkit: generate with the cache; and the prefix re-run each step (lastTokenOnly, no cache).
  const models = {};
  for (const ak of [simd, scalar]) {
    const model = await ak.Model.fromPretrained(dir);
    models[ak.backend] = model;
    await model.generate(prompt, { maxNewTokens: 4, eosTokenId: null }); // warm-up
    let first = 0;
    const t0 = now();
    const r = await model.generate(prompt, {
      maxNewTokens: NEW, eosTokenId: null, onToken: (e) => { if (e.step === 0) first = now() - t0; },
    });
    record(`attnkit ${ak.backend} generate (KV cache)`, first, now() - t0, Array.from(r.sequences.data.subarray(PROMPT)));
  }
  {
    const model = models['wasm-simd128'];
    const seq = Array.from(prompt);
    let first = 0;
    const t0 = now();
    for (let i = 0; i < NEW; i++) {
      const logits = model.forward(Int32Array.from(seq), { lastTokenOnly: true }).logits.data;
      seq.push(argmax(logits));
      if (i === 0) first = now() - t0;
    }
    record('attnkit wasm-simd128, prefix re-run per token', first, now() - t0, seq.slice(PROMPT));
  }

  // onnxruntime-web: the export's past key/values fed back each step.
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  const session = await ort.InferenceSession.create(fs.readFileSync(path.join(dir, 'model.onnx')),
    { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const emptyPast = () => {
    const feeds = {};
    for (let i = 0; i < LAYERS; i++) for (const kv of ['key', 'value']) feeds[`past_${kv}_${i}`] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, HD]);
    return feeds;
  };
  const ortStep = async (past, ids, start) => {
    const n = ids.length;
    const out = await session.run({
      ...past, input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(start + i)), [1, n]),
    });
    const next = {};
    for (let i = 0; i < LAYERS; i++) for (const kv of ['key', 'value']) next[`past_${kv}_${i}`] = out[`present_${kv}_${i}`];
    return { logits: out.logits.data, past: next };
  };
  { // warm-up
    let { logits, past } = await ortStep(emptyPast(), Array.from(prompt), 0);
    for (let i = 0; i < 3; i++) ({ logits, past } = await ortStep(past, [argmax(logits)], PROMPT + i));
  }
  {
    const t0 = now();
    let { logits, past } = await ortStep(emptyPast(), Array.from(prompt), 0);
    const ids = [argmax(logits)];
    const first = now() - t0;
    for (let i = 1; i < NEW; i++) {
      ({ logits, past } = await ortStep(past, [ids[i - 1]], PROMPT + i - 1));
      ids.push(argmax(logits));
    }
    record('onnxruntime-web (past key/values)', first, now() - t0, ids);
  }

  const ref = tokens['attnkit wasm-simd128 generate (KV cache)'];
  const ours = results['attnkit wasm-simd128 generate (KV cache)'];
  for (const [name, r] of Object.entries(results)) {
    const same = tokens[name].findIndex((t, i) => t !== ref[i]);
    rows.push([name, fmt(r.firstTokenMs, 2), fmt(r.totalMs, 1), fmt(r.tokensPerSecond, 1),
      fmt(ours.tokensPerSecond / r.tokensPerSecond, 2), same < 0 ? `all ${NEW}` : `first ${same}`]);
  }
  table(`Greedy generation: GPT-2 ${LAYERS} layers, dim 256, ${H} heads, vocab ${V}; prompt ${PROMPT}, ${NEW} new tokens, batch 1`,
    ['implementation', 'first token ms', 'total ms', 'tokens/s', 'attnkit SIMD is (x)', 'tokens equal to attnkit SIMD'], rows);

  // Per-token cost after a prefix of n positions: the cache filled by one call, then 16 steps.
  const perToken = [];
  const steps = 16;
  for (const n of [32, 256, 1023 - steps]) {
    const ids = Int32Array.from({ length: n }, (_, t) => (Math.imul(t + 11, 2654435761) >>> 0) % V);
    const row = [String(n)];
    for (const backend of ['wasm-simd128', 'wasm-scalar']) {
      const model = models[backend];
      model.resetCache();
      let logits = model.forward(ids, { useCache: true, lastTokenOnly: true }).logits.data;
      const t0 = now();
      for (let i = 0; i < steps; i++) logits = model.forward([argmax(logits)], { useCache: true, lastTokenOnly: true }).logits.data;
      row.push(fmt((now() - t0) / steps, 3));
    }
    let { logits, past } = await ortStep(emptyPast(), Array.from(ids), 0);
    const t0 = now();
    for (let i = 0; i < steps; i++) ({ logits, past } = await ortStep(past, [argmax(logits)], n + i));
    row.push(fmt((now() - t0) / steps, 3));
    perToken.push(row);
  }
  table(`One decoding step after n cached positions (ms per token, mean of ${steps})`,
    ['n', 'attnkit wasm-simd128', 'attnkit wasm-scalar', 'onnxruntime-web'], perToken);
  const ortRate = results['onnxruntime-web (past key/values)'].tokensPerSecond;
  console.log(`\nattnkit SIMD generates ${fmt(ours.tokensPerSecond, 1)} tokens/s: ${fmt(ours.tokensPerSecond / ortRate, 2)}x ` +
    `onnxruntime-web (target >= 2x) and ${fmt(ours.tokensPerSecond / results['attnkit wasm-simd128, prefix re-run per token'].tokensPerSecond, 2)}x ` +
    're-running the prefix.');
  for (const m of Object.values(models)) m.dispose();
  await session.release();
  return { results, perToken };
}

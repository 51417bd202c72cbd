// `npm run bench -- memory`: the peak memory of loading a BERT-base-sized checkpoint (110 M
// parameters: hidden 768, 12 layers, vocabulary 30 522) from a folder, F32 and F16, each load in a
// fresh Node process. Two paths: Model.fromPretrained(folder), whose tensors stay in the file's
// bytes until each is copied into wasm memory, and the older object form (loadSafetensors makes a
// float32 Tensor of every tensor first, then setWeights copies them in). Reported: the process's
// peak resident memory (Linux VmHWM) above what it held once attnkit was loaded, which counts the
// file's bytes, any JS tensors and the wasm heap alike, and the wasm heap at the end, in MB.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);
const [, , mode, folder] = process.argv;

if (mode === 'child-folder' || mode === 'child-object') {
  // One load, sampling memory every 2 ms.
  const { load } = await import('../web/attnkit.js');
  const ak = await load({ simd: true, threads: 1 });
  await ak.loadSafetensors(new Uint8Array(16)).catch(() => {}); // the loaders module, loaded before the baseline
  const status = (key) => Number(/(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(key)))[1]) * 1024;
  const base = status('VmRSS:');
  const t0 = performance.now();
  let model;
  if (mode === 'child-folder') {
    model = await ak.Model.fromPretrained(folder);
  } else {
    const config = fs.readFileSync(path.join(folder, 'config.json'));
    const weights = fs.readFileSync(path.join(folder, 'model.safetensors'));
    model = await ak.Model.fromPretrained({ config, weights });
  }
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ peakMB: (status('VmHWM:') - base) / 2 ** 20, heapMB: ak.heapSize() / 2 ** 20, ms }));
  model.dispose();
  process.exit(0);
}

// A BERT-base-shaped checkpoint with random weights, written as Hugging Face writes it.
function writeCheckpoint(dir, dtype) {
  const D = 768, F = 3072, V = 30522, P = 512, L = 12;
  const shapes = {
    'embeddings.word_embeddings.weight': [V, D], 'embeddings.position_embeddings.weight': [P, D],
    'embeddings.token_type_embeddings.weight': [2, D], 'embeddings.LayerNorm.weight': [D], 'embeddings.LayerNorm.bias': [D],
  };
  for (let i = 0; i < L; i++) {
    const p = `encoder.layer.${i}.`;
    for (const n of ['query', 'key', 'value']) Object.assign(shapes, { [`${p}attention.self.${n}.weight`]: [D, D], [`${p}attention.self.${n}.bias`]: [D] });
    Object.assign(shapes, {
      [`${p}attention.output.dense.weight`]: [D, D], [`${p}attention.output.dense.bias`]: [D],
      [`${p}attention.output.LayerNorm.weight`]: [D], [`${p}attention.output.LayerNorm.bias`]: [D],
      [`${p}intermediate.dense.weight`]: [F, D], [`${p}intermediate.dense.bias`]: [F],
      [`${p}output.dense.weight`]: [D, F], [`${p}output.dense.bias`]: [D],
      [`${p}output.LayerNorm.weight`]: [D], [`${p}output.LayerNorm.bias`]: [D],
    });
  }
  const width = dtype === 'F32' ? 4 : 2;
  const header = {};
  let offset = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const bytes = shape.reduce((a, b) => a * b, 1) * width;
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const fd = fs.openSync(path.join(dir, 'model.safetensors'), 'w');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(text.length));
  fs.writeSync(fd, prefix);
  fs.writeSync(fd, text);
  // Small values (F16 0x2000-ish patterns, F32 ~1e-3): the load's cost does not depend on them.
  const chunk = Buffer.alloc(1 << 24);
  for (let i = 0; i < chunk.length; i += 4) chunk.writeUInt32LE(dtype === 'F32' ? 0x3a83126f : 0x1a0b1a0b, i);
  for (let left = offset; left > 0; left -= chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, left));
  fs.closeSync(fd);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    model_type: 'bert', vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12,
    intermediate_size: 3072, max_position_embeddings: 512, type_vocab_size: 2,
  }));
  return offset;
}

export function benchLoadMemory() {
  const rows = [];
  const results = {};
  for (const dtype of ['F32', 'F16']) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `attnkit-mem-${dtype}-`));
    try {
      const bytes = writeCheckpoint(dir, dtype);
      for (const mode of ['folder', 'object']) {
        const r = JSON.parse(execFileSync(process.execPath, [HERE, `child-${mode}`, dir]).toString().trim().split('\n').pop());
        results[`${dtype} ${mode}`] = { fileMB: bytes / 2 ** 20, ...r };
        rows.push([dtype, mode === 'folder' ? 'Model.fromPretrained(folder)' : 'fromPretrained({config, weights}) (loadSafetensors first)',
          (bytes / 2 ** 20).toFixed(0), r.peakMB.toFixed(0), r.heapMB.toFixed(0), (r.peakMB / (110e6 * 4 / 2 ** 20)).toFixed(2), r.ms.toFixed(0)]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return { rows, results };
}

// What llama.cpp itself makes of the GGUF fixtures (tests/fixtures/gguf/, written by gen_gguf.py),
// recorded for tests/node/models/gguf_models.test.mjs, which then needs no llama.cpp:
// - each tokenizer's ids for a small corpus (llama_tokenize with add_special false and
//   parse_special true: control tokens in the text are read as such, as attnkit's tokenizers
//   read added tokens), and whether llama.cpp prepends BOS: the fixtures' own tiny vocabularies,
//   and real ones in vocabulary-only files (tests/fixtures/gguf/vocab_files.mjs: a SentencePiece
//   BPE model and GPT-2's vocabulary under four pre-tokenizers) with random texts of every script;
// - each model's greedy continuation of its reference prompt (32 tokens) and its next-token
//   probabilities after the prompt (as log-probabilities).
//
//   node tests/golden/gen_gguf_llamacpp.mjs [path to node-llama-cpp's dist/index.js]
//
// It needs node-llama-cpp (native llama.cpp; 3.21.1 was used), which is not a dependency of this
// package: install it anywhere (`npm i -E node-llama-cpp@3.21.1` in a scratch folder) and give the
// path of its dist/index.js (default /tmp/nlc/node_modules/node-llama-cpp/dist/index.js). CPU only,
// one thread, so that the numbers do not depend on the machine's GPU.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { vocabGgufs } from '../fixtures/gguf/vocab_files.mjs';
import { randomText, seededRandom } from '../node/helpers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIR = path.join(ROOT, 'tests/fixtures/gguf');
const OUT = path.join(DIR, 'llamacpp.json');
const NLC = process.argv[2] ?? '/tmp/nlc/node_modules/node-llama-cpp/dist/index.js';

// Texts for the tokenizers: the fixtures' training words, and what tokenizers get wrong: runs and
// kinds of whitespace, digits, contractions, punctuation, bytes outside the vocabulary (accents,
// CJK, emoji: byte fallback for SentencePiece), control tokens in the text, an empty text.
const CORPUS = [
  'the quick brown fox jumps over the lazy dog .',
  'she sells sea shells by the sea shore',
  'hello world and hello again',
  'Hello World',
  '  leading spaces',
  'trailing spaces   ',
  'two  spaces and\tabs\nnew lines\n\nand \r\n crlf',
  ' ',
  '',
  "don't we'll they're I'M it's YOU'D",
  'numbers 1 22 333 4444 55555 3.14159',
  'punctuation!? (brackets) [x] {y} <z> "quotes" \'single\' -- ... ;:',
  'café naïve Zürich déjà vu',
  '東京 日本語 中文',
  'emoji 😀 🎉 👍🏽',
  'mixed: the rain in spain 2024, ok?',
  '▁already▁escaped',
  '<s>the </s>',
  'hello<|endoftext|>world',
  '<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n',
  '<unk> is unknown',
];

const fx = JSON.parse(fs.readFileSync(path.join(DIR, 'gguf.json'), 'utf8'));
const REFERENCE = { llama: fx.llama.reference, gpt2: fx.gpt2.reference, qwen2: fx.qwen2.reference };
const MODELS = Object.keys(fx.files).filter((f) => /^(llama|gpt2|qwen2)-/.test(f));
const TOKENIZERS = ['llama-f32.gguf', 'gpt2-f16.gguf', 'qwen2-f32.gguf'];
const STEPS = 32;

const { getLlama } = await import(pathToFileURL(NLC).href);
const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
const nlcVersion = JSON.parse(fs.readFileSync(path.join(path.dirname(NLC), '..', 'package.json'), 'utf8')).version;
const out = {
  generator: 'tests/golden/gen_gguf_llamacpp.mjs',
  llamaCpp: `node-llama-cpp ${nlcVersion} (${llama.llamaCppRelease.repo} ${llama.llamaCppRelease.release}), CPU, 1 thread`,
  tokenizers: {},
  models: {},
};

// Random texts of every script and kind of character (the tokenizer tests' pools).
const rand = seededRandom(36);
const RANDOM = Array.from({ length: 150 }, () => randomText(rand, 1 + rand(12)));

async function tokenizer(modelPath, texts) {
  const model = await llama.loadModel({ modelPath, vocabOnly: true });
  const record = {
    bos: model.tokens.bos ?? null, eos: model.tokens.eos ?? null, prependBos: model.tokens.shouldPrependBosToken,
    cases: texts.map((text) => ({ text, ids: Array.from(model.tokenize(text, true)) })),
  };
  await model.dispose();
  return record;
}
for (const file of TOKENIZERS) out.tokenizers[file] = await tokenizer(path.join(DIR, file), CORPUS);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-vocab-'));
for (const [file, bytes] of Object.entries(vocabGgufs())) {
  fs.writeFileSync(path.join(tmp, file), bytes);
  out.tokenizers[file] = await tokenizer(path.join(tmp, file), [...CORPUS, ...RANDOM]);
  console.log(`${file}: ${out.tokenizers[file].cases.length} texts`);
}
fs.rmSync(tmp, { recursive: true });

for (const file of MODELS) {
  const arch = file.split('-')[0];
  const { prompt } = REFERENCE[arch];
  const model = await llama.loadModel({ modelPath: path.join(DIR, file) });
  const context = await model.createContext({ contextSize: 64, batchSize: 64, threads: 1 });
  const sequence = context.getSequence();
  const greedy = [];
  let probabilities = null;
  for await (const step of sequence.evaluateWithMetadata(prompt, { probabilities: true }, { temperature: 0 })) {
    if (!probabilities) probabilities = step.probabilities;
    greedy.push(step.token);
    if (greedy.length >= STEPS) break;
  }
  // (a probability that underflowed to 0 is written as null)
  const logProbs = Array.from({ length: probabilities.size }, (_, id) => (probabilities.get(id) > 0 ? Math.log(probabilities.get(id)) : null));
  out.models[file] = { prompt, greedy, logProbs };
  await context.dispose();
  await model.dispose();
  console.log(`${file}: greedy ${greedy.slice(0, 8).join(' ')} ...`);
}

// (arrays of numbers on one line each)
fs.writeFileSync(OUT, `${JSON.stringify(out, null, 1).replace(/\[[-\d.e+,\snul]*\]/g, (a) => a.replace(/\s+/g, ''))}\n`);
console.log(`wrote ${path.relative(ROOT, OUT)} (${out.llamaCpp})`);
await llama.dispose();

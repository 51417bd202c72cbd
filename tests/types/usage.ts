// A typed user of attnkit: each line is a use the declarations must accept, each @ts-expect-error a
// misuse they must refuse. Checked by `tsc --strict` (tests/node/types.test.mjs) with lib es2022
// only: no DOM lib, no @types/node.
import {
  AttnkitError, Embeddings, Model, MultiHeadAttention, Tensor, Tokenizer, invertMask, load, simdSupported,
  toAdditiveMask,
} from 'attnkit';
import type { Attnkit, BoolTensor, ErrorCode, KVCache, ModelOutput, TensorType } from 'attnkit';

const ak: Attnkit = await load({ simd: 'auto' });
const backend: 'wasm-simd128-relaxed-threads' | 'wasm-simd128-relaxed' | 'wasm-simd128-threads' | 'wasm-simd128' | 'wasm-scalar' = ak.backend;
const threads: number = ak.threads;
const noThreads: string | null = ak.threadsUnavailableReason;
const noRelaxed: string | null = ak.relaxedUnavailableReason;
await load({ simd: 'relaxed', wasmUrl: { 'wasm-simd128-relaxed': '/r.wasm' } });
// @ts-expect-error simd is 'auto', 'relaxed' or a boolean
await load({ simd: 'relax' });
const running: number = ak.threadsRunning;
await load({ threads: 4 });
// @ts-expect-error threads is a number
await load({ threads: 'auto' });
const simd: boolean = simdSupported();
await load({ wasmUrl: { 'wasm-simd128': '/a.wasm', 'wasm-loaders': '/b.wasm' } });
// @ts-expect-error unknown option
await load({ simdd: true });

// Masks are bool tensors at run time, and in the types.
const causal: BoolTensor = ak.causalMask(3, 5);
const boolType: 'bool' = causal.type;
const maskBytes: Uint8Array = causal.data;
const inverted: BoolTensor = invertMask(causal);
const additive: Tensor<Float32Array> = toAdditiveMask(causal);
const padded: BoolTensor = ak.paddingMask([[5, 6, 0]], 0);
const t: TensorType = additive.type;

// returnWeights as a boolean variable: the result is either shape, to be narrowed.
const q = new Tensor('float32', new Float32Array(2 * 3 * 4), [1, 2, 3, 4]);
const plain: Tensor<Float32Array> = ak.attention(q, q, q, { causal: true });
const both: { output: Tensor<Float32Array>; weights: Tensor<Float32Array> } = ak.attention(q, q, q, { returnWeights: true });
const wanted: boolean = Math.random() < 2;
const either = ak.attention(q, q, q, { mask: padded, returnWeights: wanted });
const eitherOutput: Tensor<Float32Array> = 'output' in either ? either.output : either;
// @ts-expect-error the weights are not there without returnWeights: true
ak.attention(q, q, q).weights;

// Outputs asked for are present in the result's type.
declare const model: Model;
const out = model.forward([[1, 2, 3]], { outputHiddenStates: true, outputAttentions: true });
const layers: Tensor<Float32Array>[] = out.hiddenStates;
const heads: Tensor<Float32Array>[] = out.attentions;
const bare: ModelOutput = model.forward([1, 2, 3]);
// @ts-expect-error not asked for: possibly undefined
const notAsked: Tensor<Float32Array>[] = bare.hiddenStates;

const next = model.forward([[1, 2, 3]], { lastTokenOnly: true });
const nextLogits: Tensor<Float32Array> = next.logits;
const all: Tensor<Float32Array> = model.forward([1, 2], { outputLogits: true, attentionMask: [1, 1] }).logits;
// @ts-expect-error not asked for
const noLogits: Tensor<Float32Array> = model.forward([1, 2]).logits;

// The embedding table as the README writes it: dims as a plain array.
const table = { data: new Float32Array(10 * 4), dims: [10, 4] };
const rows: Tensor<Float32Array> = ak.embedding([1, 2], table, { scale: true });

// The exported classes take the module first, as at run time; through ak they are bound.
const emb1 = new Embeddings(ak, { vocabSize: 10, dim: 4 });
const emb2 = new ak.Embeddings({ vocabSize: 10, dim: 4 });
// @ts-expect-error the module is needed
new Embeddings();
// @ts-expect-error the module is needed
new MultiHeadAttention({ dim: 8, numHeads: 2 });
const tok1: Tokenizer = await Tokenizer.fromVocab(ak, '[PAD]\n[UNK]\nhello\n');
const tok2: Tokenizer = await ak.Tokenizer.fromVocab('[PAD]\n[UNK]\nhello\n', { lowercase: true });
// @ts-expect-error tokenizers come from files, not from a constructor
new Tokenizer();
const enc = tok2.encode(['a b', 'c'], { padding: true });
const tokens: string[][] = enc.tokens;
const one: string[] = tok2.encode('a b').tokens;

// Errors.
try {
  ak.sinusoidalPositionalEncoding(4, 7);
} catch (e) {
  if (e instanceof AttnkitError) {
    const code: ErrorCode = e.code;
    const argument: string | undefined = e.argument;
    const disposed: boolean = code === 'ERR_DISPOSED';
  }
}

// Sources without the DOM lib: strings, objects of file contents, bytes.
const m1: Model = await ak.Model.fromPretrained('./models/bert/', { onProgress: (loaded, total) => {} });
const m2: Model = await ak.Model.fromPretrained({ 'config.json': '{}', 'model.safetensors': new Uint8Array(8) });
const st = await ak.loadSafetensors(new Uint8Array(8));
const anyTensor: Tensor<import('attnkit').TensorData> | undefined = st.tensors['x'];
const gguf = await ak.loadGguf(new Uint8Array(8), { onProgress: (loaded, total) => {} });
const ggufTensor: import('attnkit').GgufTensor | undefined = gguf.tensors['x'];
const ggufKind: import('attnkit').GgufTensorType | undefined = ggufTensor?.type;
const ggufValue: import('attnkit').GgufValue | undefined = gguf.metadata['general.architecture'];
const ggufTokens = gguf.metadata['tokenizer.ggml.tokens'] as import('attnkit').GgufStrings;
const firstToken: string | undefined = ggufTokens.at(0);
void ggufKind; void ggufValue; void firstToken;
emb1.dispose(); emb2.dispose(); tok1.dispose(); m1.dispose(); m2.dispose();
export { nextLogits, all, noLogits, backend, noRelaxed, simd, boolType, maskBytes, inverted, t, plain, both, eitherOutput, layers, heads, notAsked, rows, tokens, one, anyTensor };

// Generation and pooling (issue 20).
async function generation(ak: Attnkit, model: Model, tok: Tokenizer) {
  const r = await model.generate([1, 2, 3], { maxNewTokens: 4, doSample: true, topK: 5, seed: 1, outputProbabilities: true });
  const seq: Int32Array = r.sequences.data;
  const probs: Tensor<Float32Array>[] | undefined = r.probabilities;
  const one = await model.generateText(tok, 'Hi', { onToken: (e) => { const t: string = e.text; void t; } });
  const s: string = one.text;
  const many = await model.generateText(tok, ['Hi', 'Yo'], { onToken: (e) => { const t: string[] = e.text; void t; } });
  const m: string[] = many.text;
  const pooled: Tensor<Float32Array> = model.forward([1, 2], { pooling: 'mean', normalize: true }).pooled;
  const n: number = model.cacheLength + model.cacheBytes + model.contextSize;
  model.resetCache().forward([5], { useCache: true });
  const saved: KVCache = model.saveCache();
  const keys: Tensor<Float32Array> = saved.layers[0].key;
  model.loadCache(saved).forward([6], { useCache: true, pastKeyValues: saved });
  // @ts-expect-error pastKeyValues is a saved cache
  model.forward([6], { useCache: true, pastKeyValues: [1] });
  void keys;
  // @ts-expect-error pooling takes one of four names
  model.forward([1], { pooling: 'max' });
  void [ak, seq, probs, s, m, pooled, n];
}
void generation;

// Pipelines: each task's inputs, options and results; options checked by task.
async function pipelines(ak: Attnkit) {
  const embed = await ak.pipeline('feature-extraction', './m', { pooling: 'mean', normalize: true, timeout: 0 });
  const vectors: Tensor<Float32Array> = await embed(['a', 'b']);
  const bits: Tensor<Int8Array> | Tensor<Uint8Array> = await embed('a', { quantize: true, precision: 'ubinary' });
  // @ts-expect-error pooling is 'none', 'mean', 'cls' or 'last'
  await embed('a', { pooling: 'pooler' });
  const classify = await ak.pipeline('sentiment-analysis', './m', { topK: null });
  const labels: { label: string; score: number }[] = await classify('a', { functionToApply: 'sigmoid' });
  // @ts-expect-error transformers.js's top_k is topK here
  await classify('a', { top_k: 2 });
  const ner = await ak.pipeline('ner', './m');
  const entities = await ner('Ann lives in Paris', { aggregationStrategy: 'first', ignoreLabels: [] });
  const start: number = entities[0].start;
  const qa = await ak.pipeline('question-answering', './m');
  const answer = await qa('Where?', 'In Paris.', { docStride: 16, alignToWords: false });
  const answers = await qa(['Where?', 'Who?'], 'Ann, in Paris.');
  const zs = await ak.pipeline('zero-shot-classification', './m');
  const z: string[] = (await zs('a text', 'x, y', { multiLabel: true })).labels;
  const gen = await ak.pipeline('text-generation', './m', { maxNewTokens: 8 });
  const text: string = (await gen('Once', { returnFullText: false }))[0].generated_text;
  const chat = await gen([{ role: 'user', content: 'Hi' }], { onToken: (e) => void e.text, chatTemplate: '{{ messages }}' });
  const last = chat[0].generated_text.at(-1)?.content;
  const mask = await ak.pipeline('fill-mask', './m');
  const filled = await mask('a [MASK] b', { topK: 2 });
  const task: string = mask.task;
  mask.dispose();
  // @ts-expect-error an unknown task
  await ak.pipeline('summarize', './m');
  const enc = mask.tokenizer.encode(['a', 'b c'], { padding: true });
  const special: Tensor<Int32Array> = enc.specialTokensMask;
  const out = mask.model.forward(enc, { pooling: 'mean' }).pooled;
  const top: number = out.argmax().get(0);
  const [values, indices] = out.topk(2);
  const row: Tensor<Float32Array> = out.slice(0, [0, 4]);
  const list = values.tolist();
  void [vectors, bits, labels, start, answer, answers, z, text, last, filled, task, special, top, indices, row, list];
}
void pipelines;

// Hub ids, ak.env and the download cache (issue 39).
async function hub(ak: Attnkit) {
  const { env, cache } = await import('attnkit');
  const same: boolean = ak.env === env && ak.cache === cache;
  env.remoteHost = 'https://hf-mirror.example/';
  env.localModelPath = null;
  env.allowRemoteModels = false;
  const dir: string | null = env.cacheDir;
  // @ts-expect-error allowRemoteModels is a boolean
  env.allowRemoteModels = 'no';
  const progress: import('attnkit').LoadProgress = (loaded, total, file) => {
    const fromCache: boolean = file.fromCache;
    const name: string = file.file;
    const done: boolean = file.done;
    const fileTotal: number | undefined = file.total;
    void [loaded, total, fromCache, name, done, fileTotal];
  };
  const m = await ak.Model.fromPretrained('org/name', { revision: 'v1', cache: false, onProgress: progress });
  const t = await ak.Tokenizer.fromPretrained('org/name', { onProgress: (loaded, total, file) => {} });
  // @ts-expect-error revision is a string
  await ak.Model.fromPretrained('org/name', { revision: 1 });
  const entries: import('attnkit').CacheEntry[] = await ak.cache.list();
  const first: string | undefined = entries[0]?.model;
  const deleted: number = await cache.delete('org/name');
  const cleared: number = await ak.cache.clear();
  m.dispose(); t.dispose();
  return [same, dir, first, deleted, cleared];
}
export { hub };

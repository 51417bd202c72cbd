// A real Hugging Face checkpoint for the tutorial: config.json → spec (attnkit's loaders), the
// .safetensors tensors, an attnkit Model for the reference pass, and the tables and layer-0
// attention weights that the step-by-step sections take apart, found through the spec's tensor table
// (spec.tensors: how the family names its tensors, the table Model.setWeights reads).
// The result has the shape of default_weights.js, so the pipeline does not care where its weights
// came from.

import { readCheckpoint } from '../src/models/checkpoint.js';

// The Hugging Face name of a weight, from the spec's tensor table (the one Model.setWeights uses):
// `role` is the module weight it maps to ('word', 'qWeight', 'norm1.weight', ...).
function hfName(table, role) {
  return Object.keys(table).find((name) => table[name] === role);
}

function find(tensors, prefixes, name) {
  for (const prefix of ['', ...prefixes]) {
    if (tensors[prefix + name]) return tensors[prefix + name];
  }
  return null;
}

// Columns [from, from + n) of a row-major [rows, cols] matrix (GPT-2's fused c_attn).
function columns(t, from, n) {
  const [rows, cols] = t.dims.length === 2 ? t.dims : [1, t.dims[0]];
  const out = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) out.set(t.data.subarray(r * cols + from, r * cols + from + n), r * n);
  return { data: out, dims: t.dims.length === 2 ? [rows, n] : [n] };
}

/**
 * files: the picked Files of a Hugging Face folder (config.json, model.safetensors or its shards
 * with their index, and optionally the tokenizer's files), read as Model.fromPretrained and
 * Tokenizer.fromPretrained read them. Resolves to the weights object.
 */
export async function loadCheckpoint(ak, files) {
  const { spec, tensors } = await readCheckpoint(ak, files);
  const family = spec.tensors;
  if (!['bert', 'roberta', 'gpt2'].includes(spec.family)) {
    throw new Error(`the step-by-step view takes BERT, RoBERTa or GPT-2 checkpoints; this config.json is ` +
      `a ${spec.family} model`);
  }
  const st = { tensors };
  const hasTokenizer = files.some((f) => ['tokenizer.json', 'vocab.txt', 'vocab.json'].includes(f.name));
  const tokenizer = hasTokenizer ? await ak.Tokenizer.fromPretrained(files) : null;
  let model;
  try {
    model = new ak.Model(spec).setWeights(st);
  } catch (e) {
    tokenizer?.dispose();
    throw e;
  }
  const t = (name) => {
    const found = find(st.tensors, family.prefixes, name);
    if (!found) throw new Error(`the checkpoint has no tensor ${name}`);
    return found;
  };
  const emb = (role) => t(hfName(family.embeddings, role));
  const L = spec.layer, E = spec.embeddings, D = L.dim, hd = L.headDim;
  // One layer's attention weights, as section 6 takes them apart.
  const layerWeights = (l) => {
    const get = (role) => t(`${family.layerPrefix}${l}.${hfName(family.layerWeights, role)}`);
    const lw = {
      preNorm: L.normPlacement === 'post' ? null : { gamma: get('norm1.weight'), beta: get('norm1.bias'), eps: L.eps },
      out: get('outWeight'), outBias: get('outBias'),
    };
    if (spec.family === 'gpt2') {
      // GPT-2's Conv1D c_attn is [D, 3D] (in, out): q, k and v are its column blocks.
      const qkv = get('inProjWeight'), b = get('inProjBias');
      for (const [i, n] of ['q', 'k', 'v'].entries()) {
        lw[n] = columns(qkv, i * D, D);
        lw[`${n}Bias`] = columns(b, i * D, D);
      }
    } else {
      for (const n of ['q', 'k', 'v']) {
        lw[n] = get(`${n}Weight`);
        lw[`${n}Bias`] = get(`${n}Bias`);
      }
    }
    return lw;
  };
  const layers = Array.from({ length: spec.numLayers }, (_, l) => layerWeights(l));
  const w = {
    source: 'checkpoint', family: spec.family, spec, model, tokenizer,
    dim: D, heads: L.numHeads, headDim: hd, vocabSize: E.vocabSize, maxPositions: E.maxPositions,
    eps: E.eps ?? 1e-12, layout: L.weightLayout, causal: L.causal, scale: L.scale ?? 1 / Math.sqrt(hd),
    positionIds: spec.positionIds, paddingIdx: E.paddingIdx,
    word: emb('word'), position: emb('position'),
    tokenType: E.typeVocabSize > 0 ? emb('tokenType') : null,
    gamma: E.norm === 'layernorm' ? emb('normWeight') : null, beta: E.norm === 'layernorm' ? emb('normBias') : null,
    layers, ...layers[0],
    tensorCount: Object.keys(st.tensors).length,
    parameters: Object.values(st.tensors).reduce((n, x) => n + x.size, 0),
    unused: model.unusedWeights,
  };
  // GPT-2's language-model head: the final LayerNorm, then the word table (tied) as the output
  // projection. The logit lens and the next-word section read every layer through it.
  if (spec.family === 'gpt2') {
    w.lm = { norm: { gamma: t('ln_f.weight'), beta: t('ln_f.bias'), eps: spec.finalNorm?.eps ?? L.eps }, word: w.word };
  }
  return w;
}

/** Frees the wasm memory the checkpoint holds (its Model and tokenizer). */
export function disposeCheckpoint(w) {
  w?.model?.dispose();
  w?.tokenizer?.dispose();
}

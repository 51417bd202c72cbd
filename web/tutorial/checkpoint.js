// A real Hugging Face checkpoint for the tutorial: config.json → spec (attnkit's loaders), the
// .safetensors tensors, an attnkit Model for the reference pass, and the tables and layer-0
// attention weights that the step-by-step sections take apart, found through model.js's name table.
// The result has the shape of default_weights.js, so the pipeline does not care where its weights
// came from.

import { FAMILIES, readCheckpoint } from '../model.js';

// The Hugging Face name of a weight, from model.js's family table (the one Model.setWeights uses):
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
  const family = FAMILIES[spec.family];
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
  const layer0 = (role) => t(`${family.layerPrefix}0.${hfName(family.layerWeights, role)}`);
  const L = spec.layer, E = spec.embeddings, D = L.dim, hd = L.headDim;
  const w = {
    source: 'checkpoint', family: spec.family, spec, model, tokenizer,
    dim: D, heads: L.numHeads, headDim: hd, vocabSize: E.vocabSize, maxPositions: E.maxPositions,
    eps: E.eps ?? 1e-12, layout: L.weightLayout, causal: L.causal, scale: L.scale ?? 1 / Math.sqrt(hd),
    positionIds: spec.positionIds, paddingIdx: E.paddingIdx,
    word: emb('word'), position: emb('position'),
    tokenType: E.typeVocabSize > 0 ? emb('tokenType') : null,
    gamma: E.norm === 'layernorm' ? emb('normWeight') : null, beta: E.norm === 'layernorm' ? emb('normBias') : null,
    preNorm: L.normPlacement === 'post' ? null : { gamma: layer0('norm1.weight'), beta: layer0('norm1.bias'), eps: L.eps },
    out: layer0('outWeight'), outBias: layer0('outBias'),
    tensorCount: Object.keys(st.tensors).length,
    parameters: Object.values(st.tensors).reduce((n, x) => n + x.size, 0),
    unused: model.unusedWeights,
  };
  if (spec.family === 'gpt2') {
    // GPT-2's Conv1D c_attn is [D, 3D] (in, out): q, k and v are its column blocks.
    const qkv = layer0('inProjWeight'), b = layer0('inProjBias');
    for (const [i, n] of ['q', 'k', 'v'].entries()) {
      w[n] = columns(qkv, i * D, D);
      w[`${n}Bias`] = columns(b, i * D, D);
    }
  } else {
    for (const n of ['q', 'k', 'v']) {
      w[n] = layer0(`${n}Weight`);
      w[`${n}Bias`] = layer0(`${n}Bias`);
    }
  }
  return w;
}

/** Frees the wasm memory the checkpoint holds (its Model and tokenizer). */
export function disposeCheckpoint(w) {
  w?.model?.dispose();
  w?.tokenizer?.dispose();
}

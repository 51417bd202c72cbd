// A real Hugging Face checkpoint for the tutorial: config.json → spec (attnkit's loaders), the
// .safetensors tensors, an attnkit Model for the reference pass, and the tables and layer-0
// attention weights that the step-by-step sections take apart — in the same shape as
// default_weights.js, so the pipeline does not care where its weights came from.

// Hugging Face names, relative to the base model (checkpoints of heads prefix "bert.", "roberta."
// or "transformer.").
const NAMES = {
  bert: {
    word: 'embeddings.word_embeddings.weight', position: 'embeddings.position_embeddings.weight',
    tokenType: 'embeddings.token_type_embeddings.weight', gamma: 'embeddings.LayerNorm.weight',
    beta: 'embeddings.LayerNorm.bias',
    q: 'encoder.layer.0.attention.self.query.weight', qBias: 'encoder.layer.0.attention.self.query.bias',
    k: 'encoder.layer.0.attention.self.key.weight', kBias: 'encoder.layer.0.attention.self.key.bias',
    v: 'encoder.layer.0.attention.self.value.weight', vBias: 'encoder.layer.0.attention.self.value.bias',
    out: 'encoder.layer.0.attention.output.dense.weight', outBias: 'encoder.layer.0.attention.output.dense.bias',
  },
  gpt2: {
    word: 'wte.weight', position: 'wpe.weight', preGamma: 'h.0.ln_1.weight', preBeta: 'h.0.ln_1.bias',
    qkv: 'h.0.attn.c_attn.weight', qkvBias: 'h.0.attn.c_attn.bias',
    out: 'h.0.attn.c_proj.weight', outBias: 'h.0.attn.c_proj.bias',
  },
};
NAMES.roberta = NAMES.bert;

function find(tensors, name) {
  for (const prefix of ['', 'bert.', 'roberta.', 'transformer.']) {
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

/** files: {config: text, weights: ArrayBuffer, tokenizer?: text}. Resolves to the weights object. */
export async function loadCheckpoint(ak, files) {
  const spec = await ak.modelSpec(files.config);
  const names = NAMES[spec.family];
  if (!names) {
    throw new Error(`the step-by-step view takes BERT, RoBERTa or GPT-2 checkpoints; this config.json is ` +
      `a ${spec.family} model`);
  }
  const st = await ak.loadSafetensors(files.weights);
  const tokenizer = files.tokenizer ? await ak.Tokenizer.fromJSON(files.tokenizer) : null;
  let model;
  try {
    model = new ak.Model(spec).setWeights(st);
  } catch (e) {
    tokenizer?.dispose();
    throw e;
  }
  const t = (name) => {
    const found = find(st.tensors, name);
    if (!found) throw new Error(`the checkpoint has no tensor ${name}`);
    return found;
  };
  const L = spec.layer, E = spec.embeddings, D = L.dim, hd = L.headDim;
  const w = {
    source: 'checkpoint', family: spec.family, spec, model, tokenizer,
    dim: D, heads: L.numHeads, headDim: hd, vocabSize: E.vocabSize, maxPositions: E.maxPositions,
    eps: E.eps ?? 1e-12, layout: L.weightLayout, causal: L.causal, scale: L.scale ?? 1 / Math.sqrt(hd),
    positionIds: spec.positionIds, paddingIdx: E.paddingIdx,
    word: t(names.word), position: t(names.position),
    tokenType: E.typeVocabSize > 0 ? t(names.tokenType) : null,
    gamma: E.norm === 'layernorm' ? t(names.gamma) : null, beta: E.norm === 'layernorm' ? t(names.beta) : null,
    preNorm: L.normPlacement === 'post' ? null : { gamma: t(names.preGamma), beta: t(names.preBeta), eps: L.eps },
    out: t(names.out), outBias: t(names.outBias),
    tensorCount: Object.keys(st.tensors).length,
    parameters: Object.values(st.tensors).reduce((n, x) => n + x.data.length, 0),
    unused: model.unusedWeights,
  };
  if (names.qkv) {
    // GPT-2's Conv1D c_attn is [D, 3D] (in, out): q, k and v are its column blocks.
    const qkv = t(names.qkv), b = t(names.qkvBias);
    for (const [i, n] of ['q', 'k', 'v'].entries()) {
      w[n] = columns(qkv, i * D, D);
      w[`${n}Bias`] = columns(b, i * D, D);
    }
  } else {
    for (const n of ['q', 'k', 'v']) {
      w[n] = t(names[n]);
      w[`${n}Bias`] = t(names[`${n}Bias`]);
    }
  }
  return w;
}

/** Frees the wasm memory the checkpoint holds (its Model and tokenizer). */
export function disposeCheckpoint(w) {
  w?.model?.dispose();
  w?.tokenizer?.dispose();
}

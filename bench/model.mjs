// A whole model end to end from ids: a 4-layer, 256-wide BERT-style encoder (4 heads, FFN 1024,
// GELU, post-LN; vocab 30522, learned positions, token types) over 128 tokens. attnkit's Model
// (built by Model.fromPretrained from a config.json object and a Hugging Face state dict; SIMD and
// scalar builds, output copied out to JS) against onnxruntime-web (wasm, SIMD, one thread) running
// the same architecture and weights as an ONNX graph (built here with bench/onnx.mjs; ORT's graph
// optimisations fuse it: Attention, BiasGelu, SkipLayerNorm), in one run.
import { blocked, fmt, table, normal } from './lib.mjs';
import { model, node, tensor, valueInfo, FLOAT, INT32 } from './onnx.mjs';
import { maxAbsDiff } from '../tests/node/helpers.mjs';

const V = 30522, D = 256, LAYERS = 4, H = 4, F = 1024, P = 512, L = 128, EPS = 1e-12;

// [out, in] -> [in, out]
function transpose(w, out, inn) {
  const t = new Float32Array(w.length);
  for (let o = 0; o < out; o++) for (let i = 0; i < inn; i++) t[i * out + o] = w[o * inn + i];
  return t;
}

/**
 * The encoder's weights (a Hugging Face state dict and config.json object), its input and the same
 * network as an ONNX graph (`graph`, output `output`): shared with bench/threads.mjs.
 */
export function buildEncoder() {
  let seed = 1;
  const sd = {};
  const put = (name, n, s = 0.05, plusOne = false) => {
    sd[name] = normal(n, s, seed++);
    if (plusOne) for (let i = 0; i < n; i++) sd[name][i] += 1;
  };
  put('embeddings.word_embeddings.weight', V * D, 0.5);
  put('embeddings.position_embeddings.weight', P * D, 0.3);
  put('embeddings.token_type_embeddings.weight', 2 * D, 0.3);
  put('embeddings.LayerNorm.weight', D, 0.1, true);
  put('embeddings.LayerNorm.bias', D, 0.1);
  for (let l = 0; l < LAYERS; l++) {
    const p = `encoder.layer.${l}.`;
    for (const m of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
      put(`${p}${m}.weight`, D * D, 0.06);
      put(`${p}${m}.bias`, D, 0.02);
    }
    put(`${p}attention.output.LayerNorm.weight`, D, 0.1, true);
    put(`${p}attention.output.LayerNorm.bias`, D, 0.1);
    put(`${p}intermediate.dense.weight`, F * D, 0.06);
    put(`${p}intermediate.dense.bias`, F, 0.02);
    put(`${p}output.dense.weight`, D * F, 0.03);
    put(`${p}output.dense.bias`, D, 0.02);
    put(`${p}output.LayerNorm.weight`, D, 0.1, true);
    put(`${p}output.LayerNorm.bias`, D, 0.1);
  }
  const config = {
    model_type: 'bert', vocab_size: V, hidden_size: D, num_hidden_layers: LAYERS, num_attention_heads: H,
    intermediate_size: F, hidden_act: 'gelu', max_position_embeddings: P, type_vocab_size: 2, layer_norm_eps: EPS,
  };
  const ids = Int32Array.from({ length: L }, (_, t) => (Math.imul(t + 7, 2654435761) >>> 0) % V);
  const types = Int32Array.from({ length: L }, (_, t) => (t < L / 2 ? 0 : 1));

  // The same network as an ONNX graph; MatMul weights [in, out].
  const nodes = [], inits = [];
  const init = (name, data, dims) => { inits.push(tensor(name, data, dims)); return name; };
  const pos = sd['embeddings.position_embeddings.weight'].subarray(0, L * D);
  nodes.push(node('Gather', [init('word', sd['embeddings.word_embeddings.weight'], [V, D]), 'ids'], ['we']));
  nodes.push(node('Gather', [init('type', sd['embeddings.token_type_embeddings.weight'], [2, D]), 'types'], ['te']));
  nodes.push(node('Add', ['we', 'te'], ['e1']));
  nodes.push(node('Add', ['e1', init('pos', pos, [L, D])], ['e2']));
  nodes.push(node('LayerNormalization', ['e2', init('eg', sd['embeddings.LayerNorm.weight'], [D]), init('eb', sd['embeddings.LayerNorm.bias'], [D])],
    ['x0'], { axis: { i: -1 }, epsilon: EPS }));
  init('shape_heads', BigInt64Array.from([L, H, D / H].map(BigInt)), [3]);
  init('shape_flat', BigInt64Array.from([L, D].map(BigInt)), [2]);
  init('scale', Float32Array.of(1 / Math.sqrt(D / H)), []);
  init('half', Float32Array.of(0.5), []);
  init('one', Float32Array.of(1), []);
  init('rsqrt2', Float32Array.of(Math.SQRT1_2), []);
  let x = 'x0';
  for (let l = 0; l < LAYERS; l++) {
    const p = `encoder.layer.${l}.`, n = (s) => `l${l}_${s}`;
    const dense = (input, m, out, inn, name) => {
      nodes.push(node('MatMul', [input, init(n(`${name}_w`), transpose(sd[`${p}${m}.weight`], out, inn), [inn, out])], [n(`${name}_mm`)]));
      nodes.push(node('Add', [n(`${name}_mm`), init(n(`${name}_b`), sd[`${p}${m}.bias`], [out])], [n(name)]));
      return n(name);
    };
    const heads = (t, perm, name) => {
      nodes.push(node('Reshape', [t, 'shape_heads'], [n(`${name}_r`)]));
      nodes.push(node('Transpose', [n(`${name}_r`)], [n(name)], { perm: { ints: perm } }));
      return n(name);
    };
    const q = heads(dense(x, 'attention.self.query', D, D, 'q'), [1, 0, 2], 'qh');
    const k = heads(dense(x, 'attention.self.key', D, D, 'k'), [1, 2, 0], 'kh');
    const v = heads(dense(x, 'attention.self.value', D, D, 'v'), [1, 0, 2], 'vh');
    nodes.push(node('MatMul', [q, k], [n('s')]));
    nodes.push(node('Mul', [n('s'), 'scale'], [n('ss')]));
    nodes.push(node('Softmax', [n('ss')], [n('p')], { axis: { i: -1 } }));
    nodes.push(node('MatMul', [n('p'), v], [n('c')]));
    nodes.push(node('Transpose', [n('c')], [n('ct')], { perm: { ints: [1, 0, 2] } }));
    nodes.push(node('Reshape', [n('ct'), 'shape_flat'], [n('cf')]));
    const a = dense(n('cf'), 'attention.output.dense', D, D, 'ao');
    nodes.push(node('Add', [a, x], [n('r1')]));
    nodes.push(node('LayerNormalization', [n('r1'), init(n('g1'), sd[`${p}attention.output.LayerNorm.weight`], [D]),
      init(n('b1'), sd[`${p}attention.output.LayerNorm.bias`], [D])], [n('h1')], { axis: { i: -1 }, epsilon: EPS }));
    const f = dense(n('h1'), 'intermediate.dense', F, D, 'f1');
    nodes.push(node('Mul', [f, 'rsqrt2'], [n('gs')]));
    nodes.push(node('Erf', [n('gs')], [n('ge')]));
    nodes.push(node('Add', [n('ge'), 'one'], [n('g1p')]));
    nodes.push(node('Mul', [f, n('g1p')], [n('gm')]));
    nodes.push(node('Mul', [n('gm'), 'half'], [n('g')]));
    const o = dense(n('g'), 'output.dense', D, F, 'f2');
    nodes.push(node('Add', [o, n('h1')], [n('r2')]));
    nodes.push(node('LayerNormalization', [n('r2'), init(n('g2'), sd[`${p}output.LayerNorm.weight`], [D]),
      init(n('b2'), sd[`${p}output.LayerNorm.bias`], [D])], [n('out')], { axis: { i: -1 }, epsilon: EPS }));
    x = n('out');
  }
  const graph = model({
    nodes, inputs: [valueInfo('ids', INT32, [L]), valueInfo('types', INT32, [L])],
    outputs: [valueInfo(x, FLOAT, [L, D])], initializers: inits,
  });
  const flops = 2 * L * LAYERS * (4 * D * D + 2 * D * F) + 4 * L * L * D * LAYERS;
  return { config, sd, ids, types, graph, output: x, flops };
}

export async function benchModel({ simd, scalar }) {
  const { config, sd, ids, types, graph, output: x, flops } = buildEncoder();
  const impls = {}, outputs = {}, models = [];
  for (const ak of [simd, scalar]) {
    const m = await ak.Model.fromPretrained({ config, weights: sd });
    models.push(m);
    impls[`attnkit ${ak.backend}`] = () => {
      outputs[`attnkit ${ak.backend}`] = m.forward(ids, { tokenTypeIds: types }).lastHiddenState.data;
    };
  }
  const withWeights = models[0];
  impls['attnkit wasm-simd128 + all attentions and hidden states'] = () =>
    withWeights.forward(ids, { tokenTypeIds: types, outputAttentions: true, outputHiddenStates: true });

  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  const session = await ort.InferenceSession.create(graph, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const feeds = { ids: new ort.Tensor('int32', ids, [L]), types: new ort.Tensor('int32', types, [L]) };
  impls['onnxruntime-web'] = async () => {
    const r = await session.run(feeds);
    outputs['onnxruntime-web'] = r[x].data;
  };

  const r = await blocked(impls, { warm: 3, reps: 10, blocks: 3 });
  const ours = r['attnkit wasm-simd128'].median;
  const ref = outputs['attnkit wasm-simd128'];
  table(`Encoder end to end from ids: ${LAYERS} layers, dim ${D}, ${H} heads, FFN ${F}, ${L} tokens, vocab ${V} (ms)`,
    ['implementation', 'first call', 'min', 'median', 'GFLOP/s', 'attnkit SIMD is', 'max |diff| vs attnkit'],
    Object.entries(r).map(([k, v]) => [k, fmt(v.cold, 2), fmt(v.min, 2), fmt(v.median, 2), fmt(flops / v.median / 1e6, 1),
      `${fmt(v.median / ours)}x faster`, outputs[k] ? maxAbsDiff(outputs[k], ref).toExponential(1) : '-']));
  const vsOrt = r['onnxruntime-web'].median / ours;
  console.log(`\nattnkit (SIMD) runs the encoder ${fmt(vsOrt)}x as fast as onnxruntime-web (target: > 1x); ` +
    `the SIMD build is ${fmt(r['attnkit wasm-scalar'].median / ours, 1)}x the scalar build.`);
  for (const m of models) m.dispose();
  await session.release();
  return { V, D, LAYERS, H, F, L, ...r, summary: { vsOnnxruntime: vsOrt } };
}

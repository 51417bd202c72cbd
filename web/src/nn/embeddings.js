// The Embeddings module: weights held in wasm memory by a C++ attnkit::Embeddings, addressed by a
// handle; forward runs the fused lookup + adds + norm and copies the result out.
import { AttnkitError } from '../runtime/errors.js';
import { HandleModule } from './handle_module.js';
import { Tensor } from '../runtime/tensor.js';
import { idsInput, num, oneOf, options as checkOptions } from '../runtime/args.js';
import { ENUMS, WEIGHTS, writeEmbeddingsConfig } from '../runtime/boundary.generated.js';

/** Embeddings' options -> {fields (EmbeddingsConfig, bindings/boundary.json), config (as reported)}. */
export function embeddingsConfig(fn, options) {
  const {
    vocabSize, dim, maxPositions = 512, typeVocabSize = 0, positional = 'learned', scale = 1,
    paddingIdx, norm = 'layernorm', eps, sinusoidal: sinusoidalOptions,
  } = checkOptions(fn, options, ['vocabSize', 'dim', 'maxPositions', 'typeVocabSize', 'positional', 'scale',
    'paddingIdx', 'norm', 'eps', 'sinusoidal']);
  const sinusoidal = checkOptions(fn, sinusoidalOptions, ['base', 'layout'], 'sinusoidal');
  const s = scale === true ? Math.sqrt(num(fn, 'dim', dim)) : scale === false ? 1 : num(fn, 'scale', scale);
  oneOf(fn, 'norm', norm, ENUMS.NormKind);
  const e = eps === undefined ? (norm === 'rmsnorm' ? 1e-6 : 1e-12) : num(fn, 'eps', eps);
  const layout = sinusoidal.layout ?? 'interleaved';
  const fields = {
    vocabSize: num(fn, 'vocabSize', vocabSize),
    dim: num(fn, 'dim', dim),
    maxPositions: num(fn, 'maxPositions', maxPositions),
    typeVocabSize: num(fn, 'typeVocabSize', typeVocabSize),
    positional: ENUMS.PositionKind[oneOf(fn, 'positional', positional, ENUMS.PositionKind)],
    scale: s,
    paddingIdx: paddingIdx === undefined || paddingIdx === null ? -1 : num(fn, 'paddingIdx', paddingIdx),
    norm,
    eps: e,
    sinusoidalBase: num(fn, 'sinusoidal.base', sinusoidal.base ?? 10000),
    sinusoidalLayout: ENUMS.SinusoidalLayout[oneOf(fn, 'sinusoidal.layout', layout, ENUMS.SinusoidalLayout)],
  };
  return { fields, config: { vocabSize, dim, maxPositions, typeVocabSize, positional, scale: s, paddingIdx, norm, eps: e } };
}

/** Each Embeddings weight's dims for a config (setWeights checks tensors against them). */
export function embeddingsShapes(c) {
  const D = [c.dim, 'dim'];
  return {
    word: [[c.vocabSize, 'vocabSize'], D], position: [[c.maxPositions, 'maxPositions'], D],
    tokenType: [[c.typeVocabSize, 'typeVocabSize'], D], normWeight: [D], normBias: [D],
  };
}

export class Embeddings extends HandleModule {
  /**
   * @param ak a loaded Attnkit (users write `new ak.Embeddings(options)`)
   * @param options see web/attnkit.d.ts
   */
  constructor(ak, options) {
    super();
    const fn = 'Embeddings';
    const { fields, config } = embeddingsConfig(fn, options);
    const wire = writeEmbeddingsConfig(fields);
    this.config = config;
    const handle = ak._withInputs([wire], ([pc]) => ak._raw(fn, '_embeddingsCreate', [pc])[0]);
    this._adopt(ak, handle, 'Embeddings', { free: '_embeddingsFree', weight: '_embeddingsWeight' }, WEIGHTS.Embeddings);
  }

  // Each weight's dims (setWeights checks tensors against them).
  _shapes() {
    return embeddingsShapes(this.config);
  }

  /**
   * inputIds [L] or [batch, L] -> float32 [batch, L, dim]:
   * norm(word[id] * scale + tokenType[type] + position[pos]).
   * Positions: positionIds ([batch, L] or [L]) if given, else from attentionMask
   * ([batch, pastLength + L], 1 = token: cumsum - 1, padding at 1), else pastLength + arange(L).
   */
  forward(inputIds, options) {
    const fn = 'forward';
    const { tokenTypeIds, positionIds, attentionMask, pastLength = 0, out } =
      checkOptions(fn, options, ['tokenTypeIds', 'positionIds', 'attentionMask', 'pastLength', 'out']);
    this._live(fn);
    const ids = idsInput(fn, 'inputIds', inputIds);
    if (ids.dims.length < 1 || ids.dims.length > 2) {
      throw new AttnkitError(`${fn}: inputIds must have dims [length] or [batch, length], got ${JSON.stringify(ids.dims)}`, {
        code: 'ERR_SHAPE_MISMATCH',
        argument: 'inputIds',
      });
    }
    const [batch, length] = ids.dims.length === 2 ? ids.dims : [1, ids.dims[0]];
    const types = tokenTypeIds === undefined ? null : idsInput(fn, 'tokenTypeIds', tokenTypeIds).data;
    const positions = positionIds === undefined ? null : idsInput(fn, 'positionIds', positionIds).data;
    const mask = attentionMask === undefined ? null : idsInput(fn, 'attentionMask', attentionMask).data;
    const past = num(fn, 'pastLength', pastLength);
    const data = this._ak._withInputs([ids.data, types, positions, mask], ([pi, pt, pp, pm]) =>
      this._ak._call(fn, '_embeddingsForward', [this._handle, pi, batch, length, pt, types?.length ?? 0, pp,
        positions?.length ?? 0, pm, mask?.length ?? 0, past], out));
    return new Tensor('float32', data, [batch, length, this.config.dim]);
  }

  /**
   * The word table as an output embedding (a language model's head): x float32 [rows, dim] ->
   * logits [rows, vocabSize], x @ word.T (the word scale is not applied). Used by Model.
   */
  _logits(fn, x, rows) {
    this._live(fn);
    return this._ak._withInputs([x], ([px]) => this._ak._call(fn, '_embeddingsLogits', [this._handle, px, x.length, rows]));
  }
}

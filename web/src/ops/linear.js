// Linear layer (C++ contract: src/attnkit/ops/linear.hpp).
import { AttnkitError } from '../runtime/errors.js';
import { Tensor } from '../runtime/tensor.js';
import { floatInput, oneOf, options as checkOptions } from '../runtime/args.js';
import { ENUMS } from '../runtime/boundary.generated.js';

/**
 * y = x W^T + b over the last dim of x [..., in] -> [..., out]. weight: [out, in] (layout
 * 'outIn', torch.nn.Linear) or [in, out] ('inOut', GPT-2's Conv1D); a bare Float32Array is read
 * with out = weight.length / in.
 */
export function linear(ak, x, weight, options) {
  const fn = 'linear';
  const { bias, layout = 'outIn' } = checkOptions(fn, options, ['bias', 'layout']);
  const X = floatInput(fn, 'x', x);
  const W = floatInput(fn, 'weight', weight);
  const B = bias === undefined || bias === null ? null : floatInput(fn, 'bias', bias).data;
  const lay = oneOf(fn, 'layout', layout, ENUMS.WeightLayout);
  const n = X.dims[X.dims.length - 1];
  const shapeError = (argument, message) => new AttnkitError(`${fn}: ${message}`, { code: 'ERR_SHAPE_MISMATCH', argument });
  if (!(n > 0)) throw shapeError('x.dims', `x must end in a nonzero feature dim, got dims ${JSON.stringify(X.dims)}`);
  let out = W.data.length / n;
  if (W.dims.length === 2) {
    const inAt = lay === 0 ? 1 : 0;
    if (W.dims[inAt] !== n) {
      throw shapeError('weight.dims', `weight ${JSON.stringify(W.dims)} in layout '${layout}' must have ` +
        `${n} input features (x's last dim) in dim ${inAt}`);
    }
    out = W.dims[1 - inAt];
  } else if (W.dims.length !== 1 || !Number.isInteger(out)) {
    throw shapeError('weight.dims', `weight must be [out, in] or [in, out] for ${n} input features, ` +
      `got dims ${JSON.stringify(W.dims)}`);
  }
  const rows = X.data.length / n;
  const data = ak._withInputs([X.data, W.data, B], ([px, pw, pb]) =>
    ak._call(fn, '_linear', [px, X.data.length, rows, n, out, pw, W.data.length, lay, pb, B?.length ?? 0]));
  return new Tensor('float32', data, [...X.dims.slice(0, -1), out]);
}

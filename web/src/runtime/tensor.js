// The tensor object every op returns.

/** A dense tensor, the same shape of object as onnxruntime-web's and transformers.js's. */
export class Tensor {
  constructor(type, data, dims) {
    this.type = type;
    this.data = data;
    this.dims = dims;
  }
  get size() {
    return this.data.length;
  }
}

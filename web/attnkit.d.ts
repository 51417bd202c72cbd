// Type declarations for attnkit (web/attnkit.js).

export type Backend = 'wasm-simd128' | 'wasm-scalar';

export type ErrorCode =
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_OUT_OF_RANGE'
  | 'ERR_SHAPE_MISMATCH'
  | 'ERR_OUT_OF_MEMORY'
  | 'ERR_SIMD_UNSUPPORTED'
  | 'ERR_LOAD';

/** Thrown for bad arguments and load failures. */
export class AttnkitError extends Error {
  readonly name: 'AttnkitError';
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** The argument at fault, spelled as in the call ("dim", "inputIds[3]"), when there is one. */
  readonly argument?: string;
}

/** A dense tensor: the same shape of object as onnxruntime-web's and transformers.js's. */
export class Tensor<T extends Float32Array | Int32Array = Float32Array> {
  constructor(type: 'float32' | 'int32', data: T, dims: number[]);
  readonly type: 'float32' | 'int32';
  readonly data: T;
  readonly dims: number[];
  /** Number of elements. */
  readonly size: number;
}

export interface LoadOptions {
  /** 'auto' (default) probes with WebAssembly.validate; true/false force a build. */
  simd?: 'auto' | boolean;
  /** Where the .wasm is (default: web/dist next to this module). One URL, or one per backend. */
  wasmUrl?: string | URL | Partial<Record<Backend, string | URL>>;
  /** The .wasm bytes themselves; skips fetching. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** True when this JavaScript engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean;

/** Loads (once per configuration) and resolves to a ready module. */
export function load(options?: LoadOptions): Promise<Attnkit>;

export type SinusoidalLayout = 'interleaved' | 'split';

export interface SinusoidalOptions {
  /** Wavelength base (default 10000); finite, >= 1. */
  base?: number;
  /** 'interleaved' (default): sin on even, cos on odd columns. 'split': all sines, then all cosines. */
  layout?: SinusoidalLayout;
  /** First position (default 0); offset + length <= 65536. */
  offset?: number;
  /** Fill this array (length * dim elements) instead of allocating; written only on success. */
  out?: Float32Array;
}

export class Attnkit {
  /** Which build is running. */
  readonly backend: Backend;
  /** Bytes of wasm heap currently allocated (for leak checks). */
  mallocInUse(): number;
  /** Size of the wasm linear memory in bytes. */
  heapSize(): number;
  /** Sinusoidal positional encoding table, dims [length, dim]. */
  sinusoidalPositionalEncoding(length: number, dim: number, options?: SinusoidalOptions): Tensor<Float32Array>;
}

// The JavaScript side of a raw embind module (conventions in bindings/raw.hpp): one result slot,
// status codes turned into AttnkitError, inputs copied in and results copied out, every wasm
// allocation freed in `finally`. No heap view is kept across a call (memory growth detaches them)
// but the result slot's, which is remade whenever the memory's buffer changes.
import { AttnkitError } from './errors.js';
import { describe } from './args.js';

const TEXT_ENCODER = new TextEncoder();
// The scratch block kept between calls: 1 MiB holds a 300 KB text's UTF-8 and pieces' ends.
const SCRATCH_KEEP = 1 << 20;
const SLOT_PAIRS = 5;

export class WasmHeap {
  constructor(module) {
    this._m = module;
    // [data offset, count] x 5 (a Model's forward reports five results), written by every `_name` call.
    this._slot = module._malloc(8 * SLOT_PAIRS) >>> 0;
    /** Raw calls made so far (the tests count a forward pass's). */
    this.rawCalls = 0;
  }

  // Runs a raw function with the result slot; throws AttnkitError on a non-zero status, else
  // returns the slot's two uint32 [data offset or handle, count].
  _raw(fn, name, args) {
    this.rawCalls++;
    const status = this._m[name](this._slot, ...args);
    if (status !== 0) {
      throw new AttnkitError(`${fn}: ${this._m._lastErrorMessage()}`, {
        code: this._m._codeName(status),
        argument: this._m._lastErrorArgument(),
      });
    }
    const slot = this._slotWords();
    return [slot[0], slot[1]];
  }

  // The result slot's four uint32, as a view kept while the memory's buffer stays the same (every
  // raw call reads it: no new view per call).
  _slotWords() {
    const buffer = this._buffer();
    if (this._slotBuffer !== buffer) {
      this._slotBuffer = buffer;
      this._slotView = new Uint32Array(buffer, this._slot, 2 * SLOT_PAIRS);
    }
    return this._slotView;
  }

  // Runs a raw function with the result slot and returns its float32 result: copied into `out`
  // when given (a Float32Array of exactly the result's length, written only on success), else into
  // a new Float32Array. Throws AttnkitError on a non-zero status. Frees the wasm result always.
  _call(fn, name, args, out, Type = Float32Array) {
    if (out !== undefined && !(out instanceof Type)) {
      throw new AttnkitError(`${fn}: out must be a ${Type.name}, got ${describe(out)}`, {
        code: 'ERR_INVALID_ARGUMENT',
        argument: 'out',
      });
    }
    const [ptr, count] = this._raw(fn, name, args);
    try {
      if (out !== undefined && out.length !== count) {
        throw new AttnkitError(`${fn}: out must have length ${count}, got ${out.length}`, {
          code: 'ERR_SHAPE_MISMATCH',
          argument: 'out',
        });
      }
      const result = this._view(Type, ptr, count);
      if (out === undefined) return result.slice();
      out.set(result);
      return out;
    } finally {
      if (ptr) this._m._free(ptr);
    }
  }

  // _raw for functions that also report attention weights in the slot's second pair: returns
  // [output, weights or null] as fresh Float32Arrays and frees both wasm results.
  _callWithWeights(fn, name, args) {
    const [ptr, count] = this._raw(fn, name, args);
    const [wptr, wcount] = this._second();
    try {
      return [this._view(Float32Array, ptr, count).slice(), wptr ? this._view(Float32Array, wptr, wcount).slice() : null];
    } finally {
      if (ptr) this._m._free(ptr);
      if (wptr) this._m._free(wptr);
    }
  }

  // _raw for functions that report `n` float32 results in the slot's pairs: returns them as fresh
  // Float32Arrays (empty where a count is 0) and frees every wasm result.
  _callSlots(fn, name, args, n) {
    this._raw(fn, name, args);
    const slot = this._slotWords().slice(0, 2 * n);
    try {
      return Array.from({ length: n }, (_, i) => (slot[2 * i] ? this._view(Float32Array, slot[2 * i], slot[2 * i + 1]).slice() : new Float32Array(0)));
    } finally {
      for (let i = 0; i < n; i++) if (slot[2 * i]) this._m._free(slot[2 * i]);
    }
  }

  // A fresh view of `count` elements at `ptr` (memory growth detaches old views: never keep one).
  _view(Type, ptr, count) {
    return new Type(this._buffer(), ptr, count);
  }

  // The wasm memory's buffer now. In the threaded build memory grown on a worker leaves the glue's
  // HEAP* views on the old, shorter buffer, so the memory itself is asked.
  _buffer() {
    return this._m.wasmMemory?.buffer ?? this._m.HEAPU8.buffer;
  }

  // The second [data, count] pair of the result slot (attention weights).
  _second() {
    const slot = this._slotWords();
    return [slot[2], slot[3]];
  }

  // A wasm allocation of `bytes`, or ERR_OUT_OF_MEMORY naming what it was for.
  _malloc(bytes, what) {
    const p = this._m._malloc(bytes) >>> 0; // above 2 GiB the export's i32 reads negative
    if (!p) throw new AttnkitError(`could not allocate ${bytes} bytes in the wasm heap for ${what}`, { code: 'ERR_OUT_OF_MEMORY' });
    return p;
  }

  // Copies typed arrays into fresh wasm allocations, runs body(offsets), frees them all.
  // null/undefined entries become offset 0 ("not given").
  _withInputs(arrays, body) {
    const ptrs = [];
    try {
      for (const a of arrays) {
        if (a == null) {
          ptrs.push(0);
          continue;
        }
        const p = this._malloc(Math.max(a.byteLength, 4), 'an input');
        ptrs.push(p);
        this._view(Uint8Array, p, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      }
      return body(ptrs);
    } finally {
      for (const p of ptrs) if (p) this._m._free(p);
    }
  }

  // Writes strings as UTF-8 straight into fresh wasm allocations (no intermediate copy: a T5
  // tokenizer.json's charsmap is 320 KB), runs body([[offset, bytes], ...]), frees them all.
  _withTexts(strings, body) {
    const blocks = [];
    try {
      for (const s of strings) {
        const room = Math.max(3 * s.length, 4);
        const p = this._malloc(room, 'a text');
        blocks.push([p, 0]);
        blocks[blocks.length - 1][1] = TEXT_ENCODER.encodeInto(s, this._view(Uint8Array, p, room)).written;
      }
      return body(blocks);
    } finally {
      for (const [p] of blocks) this._m._free(p);
    }
  }

  // A wasm block of at least `bytes` bytes kept between calls: inputs of the hot per-text calls
  // (tokenizers) are written here instead of a malloc and free per call. Valid until the next
  // _scratch call; callers copy in, call, and are done, then call _scratchDone, which gives back a
  // block grown past SCRATCH_KEEP (one large text must not hold its size for the module's life).
  _scratch(bytes) {
    if (!this._scratchPtr || this._scratchBytes < bytes) {
      if (this._scratchPtr) this._m._free(this._scratchPtr);
      this._scratchPtr = 0;
      this._scratchBytes = 0;
      const size = Math.max(4096, 2 ** Math.ceil(Math.log2(bytes + 1)));
      this._scratchPtr = this._malloc(size, 'an input');
      this._scratchBytes = size;
    }
    return this._scratchPtr;
  }

  _scratchDone() {
    if (this._scratchBytes > SCRATCH_KEEP) {
      this._m._free(this._scratchPtr);
      this._scratchPtr = 0;
      this._scratchBytes = 0;
    }
  }

  /** Bytes of wasm heap that are in use by malloc right now (for leak checks). */
  mallocInUse() {
    return this._m._mallocInUse();
  }

  /** Size of the wasm linear memory in bytes. */
  heapSize() {
    return this._buffer().byteLength;
  }
}

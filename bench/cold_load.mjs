// One cold start, in a fresh process: import, instantiate, first call. Prints one JSON line.
// Usage: node bench/cold_load.mjs attnkit-simd|attnkit-simd-threads|attnkit-scalar|tfjs|ort
const which = process.argv[2];
const t0 = performance.now();
let tImport, tReady;
if (which.startsWith('attnkit')) {
  const { load } = await import('attnkit'); // the package's entry point (web/dist/attnkit.mjs)
  tImport = performance.now();
  const ak = await load(which === 'attnkit-simd-threads' ? {} : { simd: which === 'attnkit-simd', threads: 1 });
  if (ak.backend !== `wasm-${which.slice('attnkit-'.length).replace('simd', 'simd128')}`) throw new Error(`${which}: loaded ${ak.backend}`);
  tReady = performance.now();
  ak.sinusoidalPositionalEncoding(16, 64);
} else if (which === 'tfjs') {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  wasm.setThreadsCount(1);
  tImport = performance.now();
  await tf.setBackend('wasm');
  await tf.ready();
  tReady = performance.now();
  tf.add(tf.tensor1d([1, 2]), tf.tensor1d([3, 4])).dataSync();
} else if (which === 'ort') {
  const ort = await import('onnxruntime-web');
  const { model, node, valueInfo, FLOAT } = await import('./onnx.mjs');
  ort.env.wasm.numThreads = 1;
  tImport = performance.now();
  const bytes = model({ nodes: [node('Add', ['X', 'X'], ['Y'])], inputs: [valueInfo('X', FLOAT, [2])], outputs: [valueInfo('Y', FLOAT, [2])] });
  const s = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
  tReady = performance.now();
  await s.run({ X: new ort.Tensor('float32', Float32Array.from([1, 2]), [2]) });
} else {
  throw new Error(`unknown target ${which}`);
}
const tEnd = performance.now();
console.log(JSON.stringify({ importMs: tImport - t0, initMs: tReady - tImport, firstOpMs: tEnd - tReady, totalMs: tEnd - t0 }));

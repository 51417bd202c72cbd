const T = [['start', performance.now()]];
const mark = (n) => T.push([n, performance.now()]);
const v = process.argv[2];
const fsP = await import('node:fs/promises'); mark('import fs');
const url = new URL('../web/dist/attnkit-simd.wasm', import.meta.url);
const bytes = await fsP.readFile(url); mark('read');
let g, compiled;
if (v === 'sync') { const p = import('../web/dist/attnkit-simd.mjs'); compiled = new WebAssembly.Module(bytes); g = await p; }
else if (v === 'syncfirst') { compiled = new WebAssembly.Module(bytes); g = await import('../web/dist/attnkit-simd.mjs'); }
else [g, compiled] = await Promise.all([import('../web/dist/attnkit-simd.mjs'), WebAssembly.compile(bytes)]);
mark('glue+compile');
const m = await g.default({ instantiateWasm: (imports, receive) => { 
  if (v === 'sync' || v === 'syncfirst') { receive(new WebAssembly.Instance(compiled, imports), compiled); mark('instantiated'); return receive.exports || {}; }
  WebAssembly.instantiate(compiled, imports).then((i) => { mark('instantiated'); receive(i, compiled); }); return {}; } });
mark('factory');
console.log(v, T.slice(1).map(([n, t], i) => `${n} ${(t - T[i][1]).toFixed(2)}`).join(' | '), 'total', (T[T.length-1][1]-T[0][1]).toFixed(2));

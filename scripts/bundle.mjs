// Bundles the ESM wrapper (web/attnkit.js and the ~20 modules it imports) into one file,
// web/dist/attnkit.mjs, which is what the package exports. Node's ES module loader costs about
// 0.8 ms per file on a cold start, so one file instead of twenty takes ~15 ms off `import`.
// The wasm glue stays separate (imported on demand); paths relative to web/ are rewritten to be
// relative to web/dist/.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = await rollup({
  input: path.join(ROOT, 'web/attnkit.js'),
  external: (id) => id.startsWith('./dist/'),
  onwarn: (w) => { throw new Error(`rollup: ${w.message}`); },
  plugins: [{
    name: 'dist-relative',
    // './dist/x' in web/*.js is './x' from web/dist/attnkit.mjs.
    renderChunk: (code) => ({ code: code.replace(/(['"])\.\/dist\//g, '$1./'), map: null }),
  }],
});
await bundle.write({ file: path.join(ROOT, 'web/dist/attnkit.mjs'), format: 'es' });
await bundle.close();

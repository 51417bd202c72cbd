// Bundles the ESM wrapper (web/attnkit.js, the ~20 modules it imports, and the wasm glue of the
// three builds) into one minified file, web/dist/attnkit.mjs, with a source map into
// web/*.js; that file is what the package exports. One file with no dynamic import(): bundlers then
// see one module and three .wasm assets (Vite 7's worker build cannot split code, webpack warns on
// variable imports), and Node's ES module loader costs about 0.8 ms per file on a cold start.
// Minified because V8 scans it faster (~1.4 ms less for 98 KB -> 48 KB). (The SIMD and scalar glue
// cannot be one function: each maps minified export names in its own .wasm's export order.)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';
import { transform } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'web/dist');
// Lines of at most 300 characters: Node prints the source line of an uncaught error's throw site,
// which was 33 KB of one minified line before (1.3 KB now). Measured in 25 alternating fresh
// processes: +0.5 ms per cold start (noise ~0.3 ms); bundling the scalar and loaders glue too cost
// +1.0 ms (11.3 -> 12.3 ms median, docs/performance.md). The public classes keep their names through
// web/attnkit.js (esbuild's keepNames measured +1.1 ms and is not used).
const minify = (code, sourcefile) => transform(code, {
  minify: true, lineLimit: 300, format: 'esm', target: 'es2020', sourcefile, sourcemap: true,
});

const bundle = await rollup({
  input: path.join(ROOT, 'web/attnkit.js'),
  onwarn: (w) => { throw new Error(`rollup: ${w.message}`); },
  plugins: [{
    name: 'dist-relative-minified',
    // './dist/x' in web/*.js is './x' from web/dist/attnkit.mjs; then minify (rollup chains the
    // two source maps, so the published map points into web/*.js).
    async renderChunk(code) {
      const { code: min, map } = await minify(code.replace(/(['"])\.\/dist\//g, '$1./'), 'attnkit.mjs');
      return { code: min, map };
    },
  }],
});
const { output: [chunk] } = await bundle.write({ file: path.join(DIST, 'attnkit.mjs'), format: 'es', sourcemap: true });
await bundle.close();
// Bundlers find the .wasm files by these literals: the line limit must not have cut one (esbuild
// may break a long line inside a string with a backslash continuation).
for (const build of ['simd', 'scalar', 'loaders']) {
  const literal = `new URL("./attnkit-${build}.wasm",import.meta.url)`;
  if (chunk.code.split(literal).length !== 2) throw new Error(`bundle: ${literal} is not in web/dist/attnkit.mjs once, whole`);
}

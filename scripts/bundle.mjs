// Bundles the ESM wrapper (web/attnkit.js, the ~25 modules it imports from web/src, and the wasm glue of the
// single-thread builds) into one minified file, web/dist/attnkit.mjs, with a source map into
// web/*.js; that file is what the package exports. One file whose only dynamic import() is the
// threaded build's glue, by a URL and marked for bundlers to leave alone (its pool's workers
// import that same file, so it cannot be inlined): bundlers see one module and its assets (Vite 7's
// worker build cannot split code, webpack warns on variable imports), and Node's ES module loader
// costs about 0.8 ms per file on a cold start.
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
const minify = (code, sourcefile, lineLimit) => transform(code, {
  minify: true, lineLimit, format: 'esm', target: 'es2020', sourcefile, sourcemap: true,
});
// Bundlers find the .wasm files by these literals; a line break inside one (esbuild may break a
// long line inside `import.meta.url`, or inside a string with a backslash continuation) hides it.
const ASSETS = ['simd.wasm', 'scalar.wasm', 'loaders.wasm', 'simd-threads.wasm', 'simd-relaxed.wasm', 'simd-relaxed-threads.wasm'];
const literalsWhole = (code) => ASSETS.every((b) => code.split(`new URL("./attnkit-${b}",import.meta.url)`).length === 2);
// The one dynamic import of the bundle's own code (the threaded glue, web/src/runtime/threads.js) is of a URL
// known only at run time: bundlers are told to leave it alone (minification drops comments, so they
// are put back). It is the only import( of an identifier; the texts of the glue and the pool
// workers' script, strings in the bundle, have imports of their own.
const IGNORE = '/* @vite-ignore */ /* webpackIgnore: true */ ';
function markImport(code) {
  const found = code.match(/\bimport\([\w$]+\)/g) ?? [];
  if (found.length !== 1) throw new Error(`bundle: expected one import(identifier) in the bundle, found ${found.join(', ')}`);
  return code.replace(/\bimport\(([\w$]+)\)/, `import(${IGNORE}$1)`);
}

const bundle = await rollup({
  input: path.join(ROOT, 'web/attnkit.js'),
  onwarn: (w) => { throw new Error(`rollup: ${w.message}`); },
  plugins: [{
    // The chat templates' Jinja (web/src/pipelines/chat_template.js) is Hugging Face's own
    // @huggingface/jinja (MIT), bundled in from node_modules like the rest: the package stays one file.
    name: 'bundled-dependencies',
    resolveId: (id) => (id === '@huggingface/jinja' ? path.join(ROOT, 'node_modules/@huggingface/jinja/dist/index.js') : null),
  }, {
    name: 'dist-relative-minified',
    // './dist/x' in web/attnkit.js and '../../dist/x' in web/src/*/*.js are './x' from
    // web/dist/attnkit.mjs; then minify (rollup chains the two source maps, so the published map
    // points into web/).
    async renderChunk(code) {
      // The first line limit from 300 up whose breaks leave every literal whole (deterministic:
      // the same input picks the same limit).
      const input = code.replace(/(['"])(?:\.\/|(?:\.\.\/)+)dist\//g, '$1./');
      for (let limit = 300; limit < 400; limit++) {
        const { code: min, map } = await minify(input, 'attnkit.mjs', limit);
        if (literalsWhole(min)) return { code: markImport(min), map };
      }
      throw new Error('bundle: no line limit in [300, 400) keeps the .wasm URL literals whole');
    },
  }],
});
// The licence notice of the bundled dependency (MIT asks for it in copies).
const banner = '/*! attnkit (MIT). Bundles @huggingface/jinja (MIT License, Copyright (c) 2023 Hugging Face). */';
const { output: [chunk] } = await bundle.write({ file: path.join(DIST, 'attnkit.mjs'), format: 'es', sourcemap: true, banner });
await bundle.close();
// Bundlers find the .wasm files by these literals: the line limit must not have cut one (esbuild
// may break a long line inside a string with a backslash continuation).
if (!literalsWhole(chunk.code)) throw new Error('bundle: a .wasm URL literal is not in web/dist/attnkit.mjs once, whole');

// Rollup leaves `new URL('./x.wasm', import.meta.url)` alone: a plugin copies the assets. This is
// the one attnkit-specific setting (the README shows it), limited to attnkit's module so that the
// app's own `new URL('./worker.js', import.meta.url)` names the worker entry built beside the page.
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';

export default {
  input: { main: 'main.js', worker: 'worker.js' },
  plugins: [nodeResolve({ browser: true }), importMetaAssets({ include: ['**/node_modules/attnkit/**'] })],
  output: { dir: 'dist', format: 'es', entryFileNames: '[name].js' },
};

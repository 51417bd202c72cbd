// Reading a .wasm (or any file) as bytes from a URL: fetch in browsers, the file system for
// file: URLs in Node.
import { describe } from './args.js';
import { AttnkitError } from './errors.js';

// Through globalThis: Parcel bundles a polyfill package for any mention of the free name `process`.
const nodeProcess = globalThis.process;
export const isNode = typeof nodeProcess?.versions?.node === 'string';

/** A Node built-in module, synchronously (Node >= 20.16): no import() for bundlers to resolve. */
export function nodeBuiltin(name) {
  if (typeof nodeProcess.getBuiltinModule !== 'function') {
    throw new AttnkitError(`attnkit needs Node 20.16 or later to read files (process.getBuiltinModule), this is ${nodeProcess.version}`,
      { code: 'ERR_LOAD' });
  }
  return nodeProcess.getBuiltinModule(name);
}

/** A URL the user gave (string or URL), relative to the page in browsers, to this module in Node. */
export function resolveUrl(spec) {
  return new URL(String(spec), typeof location === 'object' ? location.href : import.meta.url);
}

// Vite's dev server pre-bundles dependencies into node_modules/.vite/deps/ (or .vite/deps/ without
// a package.json) and leaves their assets behind, so `new URL('./x.wasm', import.meta.url)` there
// names nothing (the server answers with the app's index.html). The file is still served from the
// package's own folder.
const VITE_DEPS = /^(.*?\/)(?:node_modules\/)?\.vite\/deps\/(attnkit-[\w.-]+\.(?:wasm|mjs|js|cjs))$/;

/** What to do when a file of this package's dist is not where its module says. */
export const WASM_MISSING_HINT = "; if your bundler did not copy attnkit's files (esbuild does not), copy " +
  'node_modules/attnkit/web/dist/*.wasm and attnkit-simd-threads.* next to the bundle, or pass load({ wasmUrl })';

/** A file URL of this package's dist (.wasm, the threaded glue and worker), corrected for where a dev server moved the module. */
export function packageAsset(url) {
  const m = VITE_DEPS.exec(url.pathname);
  return m ? new URL(`${m[1]}node_modules/attnkit/web/dist/${m[2]}`, url) : url;
}

/**
 * The bytes of one of this package's .wasm files: from `explicit` (the user's wasmUrl; `argument`
 * names it) if given, else from `bundled` (its `new URL(..., import.meta.url)`). `what` names the
 * build in messages. Resolves to { bytes, url }; every failure is an AttnkitError that says what to do.
 */
export async function readPackageWasm(what, explicit, argument, bundled) {
  let url;
  try {
    url = explicit ? resolveUrl(explicit) : packageAsset(bundled());
  } catch (e) {
    throw new AttnkitError(`load: ${argument} ${describe(explicit)} is not a valid URL (${e.message})`, {
      code: 'ERR_INVALID_ARGUMENT', argument: 'wasmUrl',
    });
  }
  let bytes;
  try {
    bytes = await readBytes(url);
  } catch (e) {
    throw new AttnkitError(`load: could not read ${what} from ${url.href}: ${e.message}${explicit ? '' : WASM_MISSING_HINT}`, {
      code: 'ERR_LOAD',
    });
  }
  notWasm(bytes, `load: ${url.href}`);
  return { bytes, url };
}

export async function readBytes(url) {
  if (url.protocol === 'file:') {
    if (!isNode) throw new Error('file: URLs can only be read in Node');
    // A sync read of the .wasm is ~0.6 ms quicker on a cold start than a read on the thread pool.
    return nodeBuiltin('node:fs').readFileSync(url);
  }
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  return new Uint8Array(await response.arrayBuffer());
}

// A .wasm begins with \0asm. A bundler that moved the package without its .wasm files makes the URL
// answer with the app's HTML page (a dev server's fallback for unknown paths).
function notWasm(bytes, where) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, 4);
  if (b[0] === 0 && b[1] === 0x61 && b[2] === 0x73 && b[3] === 0x6d) return;
  const head = new TextDecoder().decode(b.subarray(0, 64)).trimStart().toLowerCase();
  const html = head.startsWith('<');
  throw new AttnkitError(`${where} is not a .wasm file${html ? ' but an HTML page: your bundler moved attnkit ' +
    "without its .wasm files (in Vite with a custom cacheDir, add optimizeDeps: { exclude: ['attnkit'] })" +
    WASM_MISSING_HINT : ''}`, { code: 'ERR_LOAD', argument: 'wasmUrl' });
}

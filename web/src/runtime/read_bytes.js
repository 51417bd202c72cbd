// Reading a .wasm (or any file) as bytes from a URL: fetch in browsers, the file system for
// file: URLs in Node. And the one guarded fetch and body read of the model loads (fetchFile,
// bodyBytes): a stall limit, the caller's AbortSignal, and coded errors naming the file.
import { attached, describe, jsonText, okResponse } from './args.js';
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
// a package.json) and leaves their assets behind, so `new URL('../../x.wasm', import.meta.url)` there
// names nothing (the server answers with the app's index.html). The file is still served from the
// package's own folder.
const VITE_DEPS = /^(.*?\/)(?:node_modules\/)?\.vite\/deps\/(attnkit-[\w.-]+\.(?:wasm|mjs|js|cjs))$/;

/** What to do when a file of this package's dist is not where its module says. */
export const WASM_MISSING_HINT = "; if your bundler did not copy attnkit's files (esbuild does not), copy " +
  'node_modules/attnkit/web/dist/*.wasm and attnkit-simd*-threads.* next to the bundle, or pass load({ wasmUrl })';

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

/** How long a load from a URL waits for the network when no `timeout` is given: 30 s without a byte. */
export const DEFAULT_TIMEOUT = 30000;

/**
 * The network options of a load (fromPretrained's): `signal` (an AbortSignal) ends it with
 * ERR_ABORTED; `timeout` ms without progress (no response, no byte of a body) ends it with
 * ERR_TIMEOUT, 0 or Infinity for no limit. A stall limit, not a deadline: a large file on a slow
 * line is fine as long as bytes come.
 */
export function netOptions(fn, { signal, timeout = DEFAULT_TIMEOUT } = {}) {
  if (signal !== undefined && !(typeof signal?.addEventListener === 'function' && 'aborted' in signal)) {
    throw new AttnkitError(`${fn}: signal must be an AbortSignal, got ${describe(signal)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: 'signal',
    });
  }
  if (typeof timeout !== 'number' || !(timeout >= 0)) {
    throw new AttnkitError(`${fn}: timeout must be a number of ms >= 0 (0 or Infinity: no limit), got ${describe(timeout)}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: 'timeout',
    });
  }
  return { signal, timeout: timeout || Infinity };
}

/** The error of a load that the caller's signal ended, with the signal's reason as cause. */
export function abortError(fn, what, signal) {
  return new AttnkitError(`${fn}: loading ${what} was aborted${signal.reason?.message ? ` (${signal.reason.message})` : ''}`,
    { code: 'ERR_ABORTED', argument: 'signal', cause: signal.reason });
}

// Waits for one network step of reading `what` (a response's headers, a body's next chunk): the
// caller's signal or `timeout` ms without an answer end it with a coded error, and stop(error)
// cancels what is behind it (the fetch, the read) so that no socket is left open.
function step(fn, what, { signal, timeout = Infinity } = {}, promise, stop) {
  return new Promise((resolve, reject) => {
    let timer;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const end = (error) => {
      done();
      stop(error);
      reject(error);
    };
    const onAbort = () => end(abortError(fn, what, signal));
    promise.then((v) => {
      done();
      resolve(v);
    }, (e) => {
      done();
      reject(e);
    });
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    if (timeout < Infinity) {
      timer = setTimeout(() => end(new AttnkitError(`${fn}: ${what} sent nothing for ${timeout} ms (the timeout option; 0 for no limit)`,
        { code: 'ERR_TIMEOUT', argument: 'timeout' })), timeout);
    }
  });
}

// What a network error says, its causes included: undici's `fetch failed` wraps the reason
// (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND host`; an AggregateError when
// every address of a host refused), and a hint for the common ones.
function networkWhy(e) {
  const parts = [];
  for (let x = e, depth = 0; x && depth < 4; x = x.cause, depth++) {
    if (x.message && !parts.includes(x.message)) parts.push(x.message);
    if (Array.isArray(x.errors)) {
      for (const inner of x.errors) if (inner?.message && !parts.includes(inner.message)) parts.push(inner.message);
    }
  }
  const all = parts.join(': ');
  const hint = /ENOTFOUND|EAI_AGAIN/.test(all) ? ' (no network, or a wrong host name)'
    : /ECONNREFUSED/.test(all) ? ' (nothing listens there)'
      : /ECONNRESET|other side closed|terminated/.test(all) ? ' (the connection was dropped)'
        : /certificate|CERT_|SSL|TLS/i.test(all) ? ' (a TLS certificate problem)' : '';
  return all + hint;
}

// A load's failure as an AttnkitError naming `what` (ours pass through): an abort of the caller's
// own fetch is ERR_ABORTED, anything else (the network, a cut body) ERR_LOAD; the error is the cause.
function loadFailure(fn, what, e, argument, verb = 'read') {
  if (e instanceof AttnkitError) return e;
  const why = networkWhy(e); // undici: 'terminated: other side closed'
  return new AttnkitError(`${fn}: could not ${verb} ${what}${why ? `: ${why}` : ''}`, {
    code: e?.name === 'AbortError' ? 'ERR_ABORTED' : 'ERR_LOAD', argument, cause: e,
  });
}

/**
 * fetch(url, init) for a load: resolves to the Response whatever its status; a network failure,
 * the caller's signal (`net` from netOptions) or `net.timeout` ms without an answer rejects with an
 * AttnkitError naming the URL.
 */
export async function fetchFile(fn, url, init, net, argument) {
  const controller = new AbortController();
  try {
    return await step(fn, url.href, net, fetch(url, { ...init, signal: controller.signal }), (e) => controller.abort(e));
  } catch (e) {
    throw loadFailure(fn, url.href, e, argument, 'fetch');
  }
}

/**
 * The body of a Response (or of anything with a readable `body`) read to its end, calling
 * onBytes(n) per chunk. A body cut short or longer than its Content-Length, the signal, and
 * `timeout` ms without a byte reject with an AttnkitError naming `what` (the read is cancelled).
 */
export async function bodyBytes(fn, what, response, { onBytes, signal, timeout, argument } = {}) {
  if (!response.body) {
    return new Uint8Array(await response.arrayBuffer().catch((e) => {
      throw loadFailure(fn, what, e, argument);
    }));
  }
  const chunks = [];
  const total = await bodyChunks(fn, what, response, {
    signal, timeout, argument,
    onChunk: (value) => {
      chunks.push(value);
      onBytes?.(value.length);
    },
  });
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}

/**
 * A Response's body read to its end chunk by chunk, each given to `await onChunk(chunk)` (the
 * download cache writes them to disk: memory stays one chunk); resolves to the byte count. The
 * checks of bodyBytes: a body cut short or longer than its Content-Length, the signal, `timeout`
 * ms without a byte; an error of onChunk cancels the read and is thrown as it is.
 */
export async function bodyChunks(fn, what, response, { onChunk, signal, timeout, argument } = {}) {
  const failed = (e) => {
    throw loadFailure(fn, what, e, argument);
  };
  // The length the server announced, unless the body is decoded (gzip: it counts the wire bytes).
  const length = response.headers?.get?.('content-length');
  const encoding = response.headers?.get?.('content-encoding');
  const declared = length != null && (!encoding || encoding === 'identity') ? Number(length) : NaN;
  let total = 0;
  const reader = response.body.getReader();
  const cancel = (e) => reader.cancel(e).catch(() => {});
  try {
    for (;;) {
      const { done, value } = await step(fn, what, { signal, timeout }, reader.read().catch(failed), cancel);
      if (done) break;
      total += value.length;
      if (total > declared) {
        throw new AttnkitError(`${fn}: ${what} sent more than the ${declared} bytes its Content-Length announced`, {
          code: 'ERR_LOAD', argument,
        });
      }
      await onChunk(value);
    }
  } catch (e) {
    cancel(e); // an error of onChunk too: no connection is left open
    throw e;
  }
  if (total < declared) {
    throw new AttnkitError(`${fn}: ${what} ended after ${total} of the ${declared} bytes its Content-Length announced`, {
      code: 'ERR_LOAD', argument,
    });
  }
  return total;
}

/**
 * A text file given as a string, bytes (UTF-8), a parsed JSON object or a fetch Response -> its
 * text (a Response's body read as bodyBytes reads it: a cut body is a coded ERR_LOAD).
 */
export async function textInput(fn, name, x) {
  if (typeof Response === 'function' && x instanceof Response) {
    return new TextDecoder().decode(await bodyBytes(fn, name, okResponse(fn, name, x), { argument: name }));
  }
  if (x instanceof ArrayBuffer || ArrayBuffer.isView(x)) return new TextDecoder().decode(attached(fn, name, x));
  if (typeof x === 'string') return x;
  if (x && typeof x === 'object') return jsonText(fn, name, x);
  throw new AttnkitError(`${fn}: ${name} must be text, bytes, a parsed object or a Response, got ${describe(x)}`, {
    code: 'ERR_INVALID_ARGUMENT', argument: name,
  });
}

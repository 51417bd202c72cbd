// A GGUF file as Model.fromPretrained and Tokenizer.fromPretrained take one: a URL or path ending
// in .gguf, a File, the file's bytes, or a fetch Response. isGgufSource tells such a source from a
// Hugging Face folder; ggufSourceBytes reads it (a URL or path through the folder's FileSource, so
// signal, timeout and progress work as for a folder's files).
import { AttnkitError } from '../runtime/errors.js';
import { abortError, isNode, nodeBuiltin, resolveUrl } from '../runtime/read_bytes.js';
import { fileSource } from './file_source.js';
import { sourceKind } from './hub.js';
import { bytesOf, sourceBytes } from './safetensors.js';

const GGUF_NAME = /\.gguf$/i;
const isBlob = (x) => typeof Blob === 'function' && x instanceof Blob;
const isResponse = (x) => typeof Response === 'function' && x instanceof Response;

// The path of a URL-like string or URL, without its query and fragment.
function urlPath(s) {
  return String(s).replace(/[?#].*$/s, '');
}

/**
 * Whether `source` is one GGUF file rather than a Hugging Face folder: a string or URL whose path
 * ends in .gguf, a File (or Blob) or a list of one File named *.gguf, bytes (ArrayBuffer or typed
 * array: a folder is never bytes), or a Response (a folder is never one either; the GGUF reader says
 * what a Response of another kind holds).
 */
export function isGgufSource(source) {
  if (typeof source === 'string') return GGUF_NAME.test(urlPath(source.trim()));
  if (source instanceof URL) return GGUF_NAME.test(source.pathname);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source) || isResponse(source)) return true;
  if (isBlob(source)) return true;
  const list = typeof FileList === 'function' && source instanceof FileList ? Array.from(source) : source;
  return Array.isArray(list) && list.length === 1 && isBlob(list[0]) && GGUF_NAME.test(list[0].name ?? '');
}

// 'org/name/file.gguf' -> ['org/name', 'file.gguf'] when 'org/name' is a Hub id by sourceKind's
// rule (in Node: no such folder or file on disk), else null.
function hubFile(source) {
  if (typeof source !== 'string') return null;
  const s = source.trim();
  const cut = s.lastIndexOf('/');
  if (cut <= 0 || (isNode && nodeBuiltin('node:fs').statSync(s, { throwIfNoEntry: false }))) return null;
  return sourceKind(s.slice(0, cut)) === 'hub' ? [s.slice(0, cut), s.slice(cut + 1)] : null;
}

/** A GGUF source's file name, for messages ('model.gguf', or 'the given bytes'). */
export function ggufSourceName(source) {
  if (typeof source === 'string') return urlPath(source.trim()).split(/[\\/]/).pop();
  if (source instanceof URL) return decodeURIComponent(source.pathname.split('/').pop());
  const one = Array.isArray(source) || (typeof FileList === 'function' && source instanceof FileList) ? source[0] : source;
  if (isBlob(one) && typeof one.name === 'string') return one.name;
  if (isResponse(source) && source.url) return urlPath(source.url).split('/').pop();
  return 'the GGUF file';
}

/**
 * The bytes of a GGUF source (isGgufSource), with `options` of fromPretrained: onProgress(loaded,
 * total, file) as for a folder's files, and { signal, timeout, revision, cache } for the reads
 * through a FileSource (a URL or a path; 'org/name/file.gguf' is that file of a Hub repository).
 */
export async function ggufSourceBytes(fn, source, options = {}) {
  const { onProgress, ...net } = options;
  const name = ggufSourceName(source);
  const event = (loaded, total, done) => ({ file: name, loaded, total, fromCache: false, done });
  const given = typeof source !== 'string' && !(source instanceof URL);
  if (given && net.revision !== undefined) {
    throw new AttnkitError(`${fn}: revision is for Hub ids ('org/name/file.gguf'); the source is ${name}`, {
      code: 'ERR_INVALID_ARGUMENT', argument: 'revision',
    });
  }
  if (given && net.signal?.aborted) throw abortError(fn, name, net.signal);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const bytes = bytesOf(fn, source);
    onProgress?.(bytes.length, bytes.length, event(bytes.length, bytes.length, true));
    return bytes;
  }
  if (isResponse(source)) {
    return sourceBytes(fn, source, onProgress && ((loaded, total) => onProgress(loaded, total, event(loaded, total, false))));
  }
  const one = Array.isArray(source) || (typeof FileList === 'function' && source instanceof FileList) ? source[0] : source;
  if (isBlob(one)) {
    const total = one.size;
    let loaded = 0;
    const bytes = typeof one.stream === 'function' && onProgress
      ? await sourceBytes(fn, new Response(one.stream()), (n) => onProgress((loaded = n), total, event(n, total, false)))
      : new Uint8Array(await one.arrayBuffer());
    if (onProgress && loaded !== bytes.length) onProgress(bytes.length, total, event(bytes.length, total, true));
    return bytes;
  }
  // A URL or a path: the file `file` of the folder (or Hub repository) `folder`.
  let folder, file;
  const hub = hubFile(source);
  if (hub) [folder, file] = hub;
  else if (source instanceof URL || (typeof source === 'string' && sourceKind(source.trim()) === 'url')) {
    let url;
    try {
      url = source instanceof URL ? source : resolveUrl(source.trim());
    } catch (e) {
      throw new AttnkitError(`${fn}: source ${JSON.stringify(String(source))} is not a valid URL (${e.message})`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'source',
      });
    }
    file = url.pathname.split('/').pop() + url.search;
    folder = new URL('./', url);
  } else {
    const s = source.trim();
    const cut = Math.max(s.lastIndexOf('/'), isNode && nodeBuiltin('node:path').sep === '\\' ? s.lastIndexOf('\\') : -1);
    folder = cut < 0 ? '.' : s.slice(0, cut) || '/';
    if (cut < 0 && !isNode) folder = './';
    file = s.slice(cut + 1);
  }
  const src = fileSource(fn, folder, net);
  if (!(await src.has(file))) {
    throw new AttnkitError(`${fn}: there is no ${file} in ${src.label}`, { code: 'ERR_LOAD', argument: 'source' });
  }
  let loaded = 0;
  const total = await Promise.resolve(src.size(file)).catch(() => undefined);
  return src.bytes(file, onProgress && ((n, ev) => onProgress((loaded += n), total ?? ev?.total, ev)));
}

/**
 * A reader of a GGUF source's first bytes, for what needs only its header (a tokenizer): a File
 * or Blob, or (Node) a file on disk by path or file: URL; null for the others (read whole).
 * { size, read(n) -> Promise of the first n bytes }; onProgress hears each prefix read.
 */
export function ggufSourceHead(fn, source, { onProgress, signal, revision } = {}) {
  if (revision !== undefined) return null; // (for Hub files: the whole read checks it)
  const name = ggufSourceName(source);
  const report = (n, size) => onProgress?.(n, size, { file: name, loaded: n, total: size, fromCache: false, done: n === size });
  const checked = (n, size) => {
    if (signal?.aborted) throw abortError(fn, name, signal);
    return Math.min(n, size);
  };
  const one = Array.isArray(source) || (typeof FileList === 'function' && source instanceof FileList) ? source[0] : source;
  if (isBlob(one)) {
    const size = one.size;
    return {
      size,
      async read(n) {
        const bytes = new Uint8Array(await one.slice(0, checked(n, size)).arrayBuffer());
        report(bytes.length, size);
        return bytes;
      },
    };
  }
  if (!isNode) return null;
  let file = null;
  if (source instanceof URL && source.protocol === 'file:') file = decodeURIComponent(source.pathname);
  else if (typeof source === 'string' && /^file:/i.test(source.trim())) file = decodeURIComponent(new URL(source.trim()).pathname);
  else if (typeof source === 'string' && sourceKind(source.trim()) !== 'url') file = source.trim();
  const stat = file === null ? undefined : nodeBuiltin('node:fs').statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) return null; // (a Hub repository's file, or none: the whole read says which)
  const size = stat.size;
  return {
    size,
    async read(n) {
      const want = checked(n, size);
      let handle;
      try {
        handle = await nodeBuiltin('node:fs/promises').open(file, 'r');
        const bytes = new Uint8Array(want);
        const { bytesRead } = await handle.read(bytes, 0, want, 0);
        report(bytesRead, size);
        return bytes.subarray(0, bytesRead);
      } catch (e) {
        throw new AttnkitError(`${fn}: could not read ${file}: ${e.message}`, { code: 'ERR_LOAD', argument: 'source' });
      } finally {
        await handle?.close();
      }
    },
  };
}

// Hugging Face model folders as users have them: a base URL (string or URL), a folder path (Node),
// a Hub id ('org/name', hub.js: with the download cache), files picked in a page (a FileList or an
// array of File, a picked directory included), or an object of file name -> contents. One
// interface over all of them, a FileSource:
//   has(name) -> boolean, size(name) -> bytes or undefined, bytes(name, onBytes) -> Uint8Array,
//   where(name) -> how messages name the file, label -> how they name the folder;
// readText / readJson / readOptionalJson read files through it. onBytes(n, event) hears each chunk
// with the file's event { file, loaded, total, fromCache, done } (a last call with n = 0 and done).
// Model.fromPretrained, Tokenizer.fromPretrained and the pipelines find their files through it.
import { AttnkitError } from '../runtime/errors.js';
import { describe, jsonText, okResponse } from '../runtime/args.js';
import { abortError, bodyBytes, fetchFile, isNode, netOptions, nodeBuiltin, resolveUrl } from '../runtime/read_bytes.js';
import { hubOptions, hubSource, sourceKind } from './hub.js';

/** The options of fileSource that its callers pass on (fromPretrained's, the pipelines'). */
export const SOURCE_OPTIONS = ['signal', 'timeout', 'revision', 'cache'];

const loadError = (fn, message, argument = 'source') => new AttnkitError(`${fn}: ${message}`, { code: 'ERR_LOAD', argument });

/**
 * What a file's first bytes say it is, for errors that name the real kind of a wrong file:
 * a PyTorch .bin (zip or pickle), TensorFlow's HDF5, an HTML page (a wrong URL, a login page),
 * gzip, JSON text, a .safetensors file; null when nothing is recognised.
 */
export function sniff(bytes) {
  const b = (i) => bytes[i] ?? -1;
  if (b(0) === 0x50 && b(1) === 0x4b && b(2) === 0x03 && b(3) === 0x04) return 'a zip archive (a PyTorch .bin checkpoint)';
  if (b(0) === 0x80 && b(1) >= 2 && b(1) <= 5) return 'a pickle (a PyTorch .bin checkpoint)';
  if (b(0) === 0x89 && b(1) === 0x48 && b(2) === 0x44 && b(3) === 0x46) return 'an HDF5 file (a TensorFlow .h5 checkpoint)';
  if (b(0) === 0x1f && b(1) === 0x8b) return 'a gzip file';
  if (b(0) === 0x47 && b(1) === 0x47 && b(2) === 0x55 && b(3) === 0x46) return 'a GGUF file (llama.cpp)';
  // ONNX's ModelProto: field 1 (ir_version, a small varint), then field 2 (producer_name).
  if (b(0) === 0x08 && b(1) > 0 && b(1) < 0x20 && b(2) === 0x12) return 'an ONNX model (protobuf)';
  const head = new TextDecoder().decode(bytes.subarray(0, 64)).trimStart().toLowerCase();
  if (head.startsWith('<!doctype') || head.startsWith('<html') || head.startsWith('<?xml')) return "an HTML or XML page (not the file: a wrong URL, or a dev server's index.html for a missing file?)";
  if (head.startsWith('{') || head.startsWith('[')) return 'JSON text';
  if (bytes.length >= 10 && b(6) === 0 && b(7) === 0 && b(8) === 0x7b && b(9) === 0x22) return 'a .safetensors file';
  return null;
}

// The hint for a weights file that is not .safetensors.
export function convertHint(kind) {
  if (/GGUF/.test(kind ?? '')) return '; ak.loadGguf reads it';
  return /PyTorch|TensorFlow|HDF5|ONNX/.test(kind ?? '')
    ? '; attnkit reads .safetensors: convert it (e.g. transformers\' save_pretrained(..., safe_serialization=True))'
    : '';
}

const isFileLike = (x) => typeof Blob === 'function' && x instanceof Blob && typeof x.name === 'string';
const isFileList = (x) => (typeof FileList === 'function' && x instanceof FileList) || (Array.isArray(x) && x.length > 0 && x.every(isFileLike));

/**
 * A base URL: every file is fetched once, relative to it; a 404 means the file is absent. `net`
 * (netOptions) bounds every fetch and body read.
 */
function urlSource(fn, base, net) {
  const dir = new URL(base.href.endsWith('/') ? base.href : `${base.href}/`);
  const fetched = (name, init) => fetchFile(fn, new URL(name, dir), { credentials: 'same-origin', ...init }, net, name);
  const responses = new Map();
  const get = (name) => {
    if (!responses.has(name)) responses.set(name, fetched(name));
    return responses.get(name);
  };
  const ok = async (name) => {
    const r = okResponse(fn, name, await get(name));
    responses.delete(name); // a body is read once
    return r;
  };
  // has() and size() ask with HEAD (a missing pytorch_model.bin must not be downloaded to learn
  // that it exists); a server that refuses HEAD is asked with GET.
  const heads = new Map();
  const head = (name) => {
    if (!heads.has(name)) {
      heads.set(name, fetched(name, { method: 'HEAD' }).then(async (r) => {
        if (r.status === 405 || r.status === 501) return get(name);
        await r.arrayBuffer(); // (empty) read to its end, so the browser does not log it as aborted
        return r;
      }));
    }
    return heads.get(name);
  };
  return {
    label: dir.href,
    where: (name) => new URL(name, dir).href,
    async has(name) {
      const r = await head(name);
      if (r.status === 404 || r.status === 410) return false;
      // A dev server (Vite, vite preview) answers a file it does not have with its index.html.
      if (r.ok && isHtmlAnswer(name, r)) return false;
      return true; // other statuses are reported when the file is read
    },
    async size(name) {
      const r = await head(name);
      return Number(r.headers.get('content-length')) || undefined;
    },
    async bytes(name, onBytes) {
      const r = await ok(name);
      if (isHtmlAnswer(name, r)) {
        await r.body?.cancel().catch(() => {});
        throw loadError(fn, `${new URL(name, dir).href} is not there: the server answered with an HTML page ` +
          "(a dev server's index.html for a missing file, or a wrong URL)", name);
      }
      return bodyBytes(fn, new URL(name, dir).href, r, { ...net, onBytes, argument: name });
    },
  };
}

// A 200 with an HTML page for a file that is not one.
const isHtmlAnswer = (name, r) => /^\s*text\/html/i.test(r.headers.get('content-type') ?? '') && !/\.html?$/i.test(name);

/**
 * A folder on disk (Node). One that does not exist is ERR_LOAD saying so, unless `optional`
 * (env.localModelPath's folders: a model not there is looked for elsewhere).
 */
function folderSource(fn, folder, optional = false) {
  const fs = nodeBuiltin('node:fs/promises');
  const full = (name) => nodeBuiltin('node:path').join(folder, name);
  if (!optional) {
    const stat = nodeBuiltin('node:fs').statSync(folder, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) {
      const abs = nodeBuiltin('node:path').resolve(folder);
      throw loadError(fn, `${stat ? `${folder} is a file, not a folder` : `the folder ${folder} does not exist`}` +
        `${abs !== folder ? ` (${abs})` : ''}${stat ? '' : '; a Hub id has the form org/name'}`);
    }
  }
  return {
    label: folder,
    where: (name) => `${folder.replace(/[\\/]+$/, '')}/${name}`,
    async has(name) {
      try {
        return (await fs.stat(full(name))).isFile();
      } catch {
        return false;
      }
    },
    async size(name) {
      return (await fs.stat(full(name))).size;
    },
    async bytes(name, onBytes) {
      let data;
      try {
        data = new Uint8Array(await fs.readFile(full(name)));
      } catch (e) {
        throw loadError(fn, `could not read ${full(name)}: ${e.message}`, name);
      }
      onBytes?.(data.length);
      return data;
    },
  };
}

/** Picked files: by their names (a picked directory's files carry their path in webkitRelativePath). */
function pickedSource(fn, files) {
  const byName = new Map();
  for (const f of Array.from(files)) {
    const depth = (f.webkitRelativePath || f.name).split('/').length;
    const seen = byName.get(f.name);
    if (!seen || depth < seen.depth) byName.set(f.name, { file: f, depth }); // the shallowest of equal names
  }
  const file = (name) => {
    const f = byName.get(name)?.file;
    if (!f) throw loadError(fn, `the picked files have no ${name}`, name);
    return f;
  };
  return {
    label: `${byName.size} picked files`,
    where: (name) => byName.get(name)?.file.webkitRelativePath || name,
    has: async (name) => byName.has(name),
    size: async (name) => file(name).size,
    async bytes(name, onBytes) {
      const f = file(name);
      if (onBytes && typeof f.stream === 'function') {
        return bodyBytes(fn, f.webkitRelativePath || name, { body: f.stream() }, { onBytes, argument: name });
      }
      return new Uint8Array(await f.arrayBuffer());
    },
  };
}

/** An object of file name -> contents (text, bytes, Blob, Response, or a parsed JSON object). */
function objectSource(fn, files, net) {
  const get = (name) => {
    if (!Object.hasOwn(files, name) || files[name] == null) throw loadError(fn, `no ${name} was given`, name);
    return files[name];
  };
  const bytesOf = async (name, x, onBytes) => {
    if (typeof x === 'string') return new TextEncoder().encode(x);
    if (x instanceof ArrayBuffer) return new Uint8Array(x);
    if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
    if (typeof Blob === 'function' && x instanceof Blob) return new Uint8Array(await x.arrayBuffer());
    if (typeof Response === 'function' && x instanceof Response) {
      return bodyBytes(fn, x.url ? `${name} (${x.url})` : name, okResponse(fn, name, x), { ...net, onBytes, argument: name });
    }
    if (x && typeof x === 'object') return new TextEncoder().encode(jsonText(fn, 'source', x));
    throw new AttnkitError(`${fn}: a file's contents must be text, bytes, a Blob, a Response or a parsed object, got ${describe(x)}`,
      { code: 'ERR_INVALID_ARGUMENT', argument: 'source' });
  };
  return {
    label: 'the given files',
    where: (name) => name,
    has: async (name) => Object.hasOwn(files, name) && files[name] != null,
    size: async () => undefined,
    bytes: async (name, onBytes) => bytesOf(name, get(name), onBytes),
  };
}

/**
 * The FileSource for a user's `source`: a URL or URL string (http(s), file:, or relative to the
 * page), a folder path (Node), a Hub id ('org/name', resolved by hub.js; the rule telling ids from
 * paths is sourceKind's), a FileList or array of Files, or an object of file name -> contents.
 * `options` ({ signal, timeout }, see netOptions; { revision, cache } for Hub ids) bound its
 * network reads; the signal also stops a load from any source before its next file.
 */
export function fileSource(fn, source, options) {
  const net = netOptions(fn, options);
  const hub = hubOptions(fn, options);
  const src = sourceOf(fn, source, net, hub);
  if (hub.revision !== undefined && !src.hub) {
    throw new AttnkitError(`${fn}: revision is for Hub ids ('org/name'); ${describe(typeof source === 'string' ? source : src.label)} ` +
      'is not one', { code: 'ERR_INVALID_ARGUMENT', argument: 'revision' });
  }
  return {
    get label() {
      return src.label;
    },
    where: src.where,
    has: src.has,
    size: src.size,
    async bytes(name, onBytes) {
      if (net.signal?.aborted) throw abortError(fn, src.where(name), net.signal);
      if (!onBytes) return src.bytes(name);
      // Each chunk with its file's event; a last one (n = 0, done) when the file is whole.
      const total = await Promise.resolve(src.size(name)).catch(() => undefined);
      let loaded = 0, fromCache = false;
      const data = await src.bytes(name, (n, info) => {
        loaded += n;
        if (info?.fromCache !== undefined) fromCache = info.fromCache;
        onBytes(n, { file: name, loaded, total, fromCache, done: false });
      });
      onBytes(0, { file: name, loaded: data.length, total: total ?? data.length, fromCache, done: true });
      return data;
    },
  };
}

function sourceOf(fn, source, net, hub, optional = false) {
  if (source instanceof URL) {
    if (source.protocol === 'file:' && isNode) return folderSource(fn, decodeURIComponent(source.pathname), optional);
    return urlSource(fn, source, net);
  }
  if (typeof source === 'string') {
    const kind = sourceKind(source);
    if (kind === 'hub' && !optional) {
      return hubSource(fn, source, { ...hub, net, local: (where, opt) => sourceOf(fn, where, net, {}, opt) });
    }
    if (isNode && kind !== 'url') return folderSource(fn, source, optional);
    let url;
    try {
      url = resolveUrl(source);
    } catch (e) {
      throw new AttnkitError(`${fn}: source ${describe(source)} is not a valid URL (${e.message})`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'source',
      });
    }
    return sourceOf(fn, url, net, hub, optional);
  }
  if (isFileList(source)) return pickedSource(fn, source);
  if (source && typeof source === 'object' && !Array.isArray(source) && !ArrayBuffer.isView(source)) return objectSource(fn, source, net);
  throw new AttnkitError(`${fn}: source must be a URL, a folder path, a Hub id, picked Files or an object of file contents, ` +
    `got ${describe(source)}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'source' });
}

/**
 * A file of the source as text. A .json file that does not even begin like JSON is refused with
 * what it looks like (an HTML page from a wrong URL, a PyTorch checkpoint, ...).
 */
export async function readText(fn, src, name, onBytes) {
  const bytes = await src.bytes(name, onBytes);
  if (name.endsWith('.json')) {
    const kind = sniff(bytes);
    if (kind !== 'JSON text') {
      throw new AttnkitError(`${fn}: ${src.where(name)} is not JSON${kind ? `: it looks like ${kind}` : ''}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: name,
      });
    }
  }
  return new TextDecoder().decode(bytes);
}

/** A JSON file of the source, parsed (for the files read in JavaScript: indexes and tokenizer configs). */
export async function readJson(fn, src, name, onBytes) {
  const text = await readText(fn, src, name, onBytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new AttnkitError(`${fn}: ${src.where(name)} is not valid JSON (${e.message})`, {
      code: 'ERR_INVALID_ARGUMENT', argument: name,
    });
  }
}

/**
 * An optional JSON file of the source, parsed, or null: when it is absent, or when what came is an
 * HTML page (a dev server's answer for a file it does not have, without a Content-Type to tell).
 */
export async function readOptionalJson(fn, src, name, onBytes) {
  if (!(await src.has(name))) return null;
  const bytes = await src.bytes(name, onBytes);
  if (/^an HTML/.test(sniff(bytes) ?? '')) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new AttnkitError(`${fn}: ${src.where(name)} is not valid JSON (${e.message})`, { code: 'ERR_INVALID_ARGUMENT', argument: name });
  }
}

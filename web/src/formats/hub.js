// Models by Hugging Face Hub id: 'org/name' (or a legacy 'name') is read from
// env.remoteHost + env.remotePathTemplate ('{model}/resolve/{revision}/' by default: Hugging Face's
// layout), each file looked for in env.localModelPath/<id>/ first when that is set, and kept in
// the download cache (download_cache.js) unless `cache: false` or env.useCache is false.
// env.allowRemoteModels = false forbids the network: files then come from localModelPath or the
// cache only.
//
// Which strings are Hub ids (sourceKind): a string with a scheme ('https://', 'file:') is a URL;
// one that begins with './', '../', '/', '\' or '~', or a drive letter, is a path (a URL relative
// to the page in browsers); in Node a string naming a file or folder that exists is a path; what
// is left is a Hub id when it has a Hub id's form (one or two names of letters, digits, '-', '_'
// and '.', not beginning or ending with '-' or '.', no '--' or '..', at most 96 characters each),
// else a path (Node) or a relative URL (browsers).
import { AttnkitError } from '../runtime/errors.js';
import { describe, options as checkOptions } from '../runtime/args.js';
import { bodyBytes, fetchFile, isNode, nodeBuiltin, resolveUrl } from '../runtime/read_bytes.js';
import { cacheApi, defaultCacheDir, entryId, openStore } from './download_cache.js';

const DEFAULTS = {
  remoteHost: 'https://huggingface.co/',
  remotePathTemplate: '{model}/resolve/{revision}/',
  localModelPath: null,
  allowRemoteModels: true,
  useCache: true,
  cacheDir: null,
};
const KEYS = Object.keys(DEFAULTS);
const settings = { ...DEFAULTS };

const invalid = (name, message) => new AttnkitError(`ak.env: ${name} ${message}`, { code: 'ERR_INVALID_ARGUMENT', argument: name });

// Each setting's check: the value as stored, or an AttnkitError.
const CHECKS = {
  remoteHost(v) {
    let url;
    try {
      url = new URL(String(v));
    } catch {
      url = null;
    }
    if (!(typeof v === 'string' || v instanceof URL) || !url || !/^https?:$/.test(url.protocol)) {
      throw invalid('remoteHost', `must be an http(s) URL (string or URL), got ${describe(v)}`);
    }
    return url.href.endsWith('/') ? url.href : `${url.href}/`;
  },
  remotePathTemplate(v) {
    if (typeof v !== 'string' || !v.includes('{model}')) {
      throw invalid('remotePathTemplate', `must be a string with {model} (and usually {revision}), got ${describe(v)}`);
    }
    return v.endsWith('/') ? v : `${v}/`;
  },
  localModelPath(v) {
    if (v === null || v === undefined) return null;
    if (!(typeof v === 'string' && v !== '') && !(v instanceof URL)) {
      throw invalid('localModelPath', `must be a folder path or base URL (string or URL), or null, got ${describe(v)}`);
    }
    return v instanceof URL ? v.href : v;
  },
  allowRemoteModels(v) {
    if (typeof v !== 'boolean') throw invalid('allowRemoteModels', `must be true or false, got ${describe(v)}`);
    return v;
  },
  useCache(v) {
    if (typeof v !== 'boolean') throw invalid('useCache', `must be true or false, got ${describe(v)}`);
    return v;
  },
  cacheDir(v) {
    if (v === null || v === undefined) return null;
    if (typeof v !== 'string' || v === '') throw invalid('cacheDir', `must be a folder path (a string), or null for the default, got ${describe(v)}`);
    return v;
  },
};

/**
 * ak.env: where Hub ids are read from, and the download cache. Shared by every Attnkit of the
 * page or process. Setting an unknown key or a wrong value throws ERR_INVALID_ARGUMENT (the
 * closest known key named); cacheDir reads as the default folder while unset (null).
 */
export const env = new Proxy(settings, {
  get(target, key) {
    if (key === 'cacheDir') return target.cacheDir ?? defaultCacheDir();
    if (key === 'toJSON') return () => ({ ...target, cacheDir: target.cacheDir ?? defaultCacheDir() });
    return target[key];
  },
  set(target, key, value) {
    if (typeof key !== 'string' || !Object.hasOwn(CHECKS, key)) checkOptions('ak.env', { [String(key)]: value }, KEYS);
    target[key] = CHECKS[key](value);
    return true;
  },
  deleteProperty(target, key) {
    if (!Object.hasOwn(CHECKS, key)) return true;
    target[key] = DEFAULTS[key]; // `delete ak.env.remoteHost` restores the default
    return true;
  },
  defineProperty(target, key) {
    throw invalid(String(key), 'cannot be defined: assign the settings (ak.env.remoteHost = ...)');
  },
});

/** ak.cache: list(), delete(idOrModel), clear() of the download cache. */
export const cache = cacheApi(() => env);

// A Hub name: letters, digits, '-', '_', '.', not beginning or ending with '-' or '.', no '--' or '..'.
const NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?$/;

/** Whether `s` has the form of a Hub id: 'name' or 'org/name'. */
export function isHubId(s) {
  if (typeof s !== 'string') return false;
  const parts = s.split('/');
  return parts.length <= 2 && parts.every((p) => NAME.test(p) && !p.includes('--') && !p.includes('..'));
}

const hasScheme = (s) => /^[a-z][a-z0-9+.-]+:\/\//i.test(s) || s.startsWith('file:');
const pathLike = (s) => /^(\.\.?([\\/]|$)|[\\/~]|[a-z]:[\\/])/i.test(s);

function exists(s) {
  try {
    return nodeBuiltin('node:fs').statSync(s, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/**
 * What a string source names: 'url' (a URL with a scheme; in browsers also a relative URL),
 * 'path' (Node: a folder), or 'hub' (a Hub id). The rule is in this file's header.
 */
export function sourceKind(s) {
  if (hasScheme(s)) return 'url';
  if (pathLike(s)) return isNode ? 'path' : 'url';
  if (isNode && exists(s)) return 'path';
  if (isHubId(s)) return 'hub';
  return isNode ? 'path' : 'url';
}

/** The base URL of a Hub id's files at a revision: remoteHost + remotePathTemplate. */
export function hubUrl(id, revision = 'main', e = env) {
  const path = e.remotePathTemplate.replaceAll('{model}', id).replaceAll('{revision}', encodeURIComponent(revision));
  return new URL(path, e.remoteHost);
}

/** Checks fromPretrained's `revision` and `cache` options (undefined: not given). */
export function hubOptions(fn, { revision, cache: useCache } = {}) {
  if (revision !== undefined && (typeof revision !== 'string' || revision === '' || /[\s?#]/.test(revision))) {
    throw new AttnkitError(`${fn}: revision must be a branch, tag or commit name (a non-empty string), got ${describe(revision)}`,
      { code: 'ERR_INVALID_ARGUMENT', argument: 'revision' });
  }
  if (useCache !== undefined && typeof useCache !== 'boolean') {
    throw new AttnkitError(`${fn}: cache must be true or false, got ${describe(useCache)}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'cache' });
  }
  return { revision, cache: useCache };
}

const HTML = /^\s*text\/html/i;

// What an HTTP status of the Hub means for the repository (a 401 comes for a private, gated or
// missing repository alike: the Hub does not tell them apart without credentials).
function statusError(fn, id, revision, name, url, r) {
  const code = r.headers.get('x-error-code');
  const said = r.headers.get('x-error-message');
  const status = `HTTP ${r.status}${r.statusText ? ` ${r.statusText}` : ''}${code ? ` (${code}${said ? `: ${said}` : ''})` : ''}`;
  let why;
  if (r.status === 401 || r.status === 403 || code === 'GatedRepo') {
    why = `${id} is private or gated, or does not exist (attnkit sends no credentials: download the folder and load it ` +
      'by path or from your own server, or set ak.env.localModelPath)';
  } else if (code === 'RevisionNotFound') why = `${id} has no revision ${describe(revision)}`;
  else if (code === 'RepoNotFound') why = `there is no repository ${id}`;
  else if (r.status === 404 || r.status === 410) why = `${id} at revision ${describe(revision)} has no ${name}`;
  else why = `the server could not give ${name}`;
  return new AttnkitError(`${fn}: ${url} answered ${status}: ${why}`, { code: 'ERR_LOAD', argument: name });
}

// Whether a cached entry is the file a response (HEAD or GET, status 200) describes: same ETag,
// else same Last-Modified, else (no validator) the same size; a size that differs never is.
function fresh(meta, r) {
  const strip = (t) => t?.replace(/^W\//, '');
  const length = r.headers.get('content-length');
  const encoded = r.headers.get('content-encoding');
  if (length != null && (!encoded || encoded === 'identity') && Number(length) !== meta.size) return false;
  const etag = r.headers.get('etag');
  if (etag) return strip(etag) === strip(meta.etag);
  const modified = r.headers.get('last-modified');
  if (modified) return modified === meta.lastModified;
  return length != null;
}

/**
 * The FileSource of a Hub id (file_source.js's interface: has, size, bytes, where, label).
 * `local(base)` makes the FileSource of a folder path or base URL (file_source.js's), for
 * env.localModelPath. The settings are read once, when the source is made.
 */
export function hubSource(fn, id, { revision = 'main', cache: useCache, net, local }) {
  const e = { ...settings, cacheDir: env.cacheDir };
  const base = hubUrl(id, revision, e);
  const store = (useCache ?? e.useCache) ? openStore(e.cacheDir) : null;
  let localSrc = null;
  if (e.localModelPath !== null) {
    const root = e.localModelPath;
    localSrc = isNode && !hasScheme(root)
      ? local(nodeBuiltin('node:path').join(root, ...id.split('/')), true)
      : local(new URL(`${id}/`, resolveUrl(root.endsWith('/') ? root : `${root}/`)), true);
  }
  // What the absent files met, for messages: 'HTTP 404' -> [files], a sentence -> [].
  const notes = new Map();
  const note = (what, file) => {
    if (!notes.has(what)) notes.set(what, []);
    if (file && !notes.get(what).includes(file)) notes.get(what).push(file);
  };
  const url = (name) => new URL(name, base);
  const fetchIt = (name, init) => fetchFile(fn, url(name), { credentials: 'same-origin', ...init }, net, name);
  const ids = new Map();
  const idOf = (name) => {
    if (!ids.has(name)) ids.set(name, entryId(url(name).href, revision));
    return ids.get(name);
  };
  // A cache that cannot be opened (a browser's storage turned off) is no cache: never a failed load.
  const cached = async (name) => {
    try {
      return store ? await store.get(await idOf(name)) : null;
    } catch {
      return null;
    }
  };
  const readCached = async (meta, onBytes) => {
    try {
      return await store.read(meta, onBytes && ((n) => onBytes(n, { fromCache: true })));
    } catch {
      return null;
    }
  };
  // In Node a string of an id's form that is no folder here was taken for an id: say so when the Hub fails.
  const asPath = isNode && id.includes('/') ? nodeBuiltin('node:path').resolve(id) : null;
  const notAFolder = (err) => (asPath && err instanceof AttnkitError && !err.message.includes(asPath)
    ? new AttnkitError(`${err.message} (${id} was taken for a Hub id: there is no folder ${asPath})`, { code: err.code, argument: err.argument, cause: err.cause })
    : err);

  // Where a file comes from: { from: 'local' } | { from: 'cache', meta } | { from: 'remote', head,
  // meta (a cached entry the download may revalidate) } | { from: 'absent' }. Asked once per file.
  const found = new Map();
  const find = (name) => {
    if (!found.has(name)) found.set(name, locate(name));
    return found.get(name);
  };
  async function locate(name) {
    if (localSrc && (await localSrc.has(name))) return { from: 'local' };
    const meta = await cached(name);
    if (!e.allowRemoteModels) {
      if (meta) return { from: 'cache', meta };
      note('remote models are off (ak.env.allowRemoteModels is false), and the download cache does not have', name);
      return { from: 'absent' };
    }
    // HEAD answers whether the file is there, its size, and whether a cached copy is current (a
    // conditional request in Node; in browsers the validators are compared here, since
    // If-None-Match would make every cross-origin request a preflighted one).
    const headers = {};
    if (meta && isNode) {
      if (meta.etag) headers['if-none-match'] = meta.etag;
      else if (meta.lastModified) headers['if-modified-since'] = meta.lastModified;
    }
    let head;
    try {
      head = await fetchIt(name, { method: 'HEAD', headers });
      await head.arrayBuffer();
    } catch (err) {
      if (meta && err.code === 'ERR_LOAD') return { from: 'cache', meta, offline: true }; // offline: the cached copy
      throw notAFolder(err);
    }
    if (head.status === 304 && meta) return { from: 'cache', meta };
    if (head.status === 401 || head.status === 403) throw notAFolder(statusError(fn, id, revision, name, url(name).href, head));
    if (head.status === 404 || head.status === 410) {
      const code = head.headers.get('x-error-code');
      if (code === 'RepoNotFound' || code === 'RevisionNotFound' || code === 'GatedRepo') {
        throw notAFolder(statusError(fn, id, revision, name, url(name).href, head));
      }
      note(`HTTP ${head.status} for`, name);
      return { from: 'absent' };
    }
    if (head.ok && HTML.test(head.headers.get('content-type') ?? '') && !/\.html?$/i.test(name)) {
      note('an HTML page for', name); // a dev server's index.html for a file it does not have
      return { from: 'absent' };
    }
    if (head.status === 405 || head.status === 501) return { from: 'remote', head: null, meta };
    if (head.ok) return meta && fresh(meta, head) ? { from: 'cache', meta } : { from: 'remote', head, meta };
    if (meta) return { from: 'cache', meta, offline: true }; // the server is in trouble (5xx): the cached copy
    return { from: 'remote', head, meta };
  }

  async function download(name, onBytes, meta) {
    const headers = {};
    if (meta && isNode) {
      if (meta.etag) headers['if-none-match'] = meta.etag;
      else if (meta.lastModified) headers['if-modified-since'] = meta.lastModified;
    }
    const r = await fetchIt(name, { headers });
    if (r.status === 304 && meta) {
      await r.arrayBuffer();
      const bytes = await readCached(meta, onBytes);
      if (bytes) return bytes;
      return download(name, onBytes, null);
    }
    if (!r.ok) {
      await r.arrayBuffer().catch(() => {});
      throw statusError(fn, id, revision, name, url(name).href, r);
    }
    if (HTML.test(r.headers.get('content-type') ?? '') && !/\.html?$/i.test(name)) {
      await r.body?.cancel().catch(() => {});
      throw new AttnkitError(`${fn}: ${url(name).href} answered with an HTML page, not ${name} (a missing file, or a login page)`,
        { code: 'ERR_LOAD', argument: name });
    }
    const what = url(name).href;
    const read = { ...net, argument: name, onBytes: onBytes && ((n) => onBytes(n, { fromCache: false })) };
    if (store) {
      const entry = {
        id: await idOf(name), model: id, revision, file: name, url: what,
        etag: r.headers.get('etag'), lastModified: r.headers.get('last-modified'),
      };
      const stored = await store.write(fn, what, entry, r, read);
      if (stored) return stored.bytes;
    }
    return bodyBytes(fn, what, r, read);
  }

  const label = () => {
    const from = `${localSrc ? `${localSrc.label}, then ` : ''}${e.allowRemoteModels ? base.href : 'the download cache'}`;
    const here = asPath ? `; and there is no folder ${asPath}` : '';
    const said = [...notes].map(([what, files]) => `${what} ${files.join(', ')}`).join('; ');
    return `${id} at revision ${revision} (${from}${said ? `: ${said}${here}` : ''})`;
  };
  return {
    hub: true,
    get label() {
      return label();
    },
    where: (name) => url(name).href,
    async has(name) {
      return (await find(name)).from !== 'absent';
    },
    async size(name) {
      const f = await find(name);
      if (f.from === 'local') return localSrc.size(name);
      if (f.from === 'cache') return f.meta.size;
      return Number(f.head?.headers.get('content-length')) || undefined;
    },
    async bytes(name, onBytes) {
      const f = await find(name);
      if (f.from === 'local') return localSrc.bytes(name, onBytes);
      if (f.from === 'absent') {
        throw new AttnkitError(`${fn}: there is no ${name} in ${label()}`, { code: 'ERR_LOAD', argument: name });
      }
      if (f.from === 'cache') {
        const bytes = await readCached(f.meta, onBytes);
        if (bytes) return bytes;
        // A truncated or altered cached file: fetched again when the network may be used.
        if (!e.allowRemoteModels || f.offline) {
          throw new AttnkitError(`${fn}: the cached ${name} of ${id} is damaged (its size or hash is not the stored one) and ` +
            `${f.offline ? `${base.href} cannot be reached` : 'remote models are off (ak.env.allowRemoteModels is false)'}`,
          { code: 'ERR_LOAD', argument: name });
        }
        return download(name, onBytes, null);
      }
      return download(name, onBytes, f.head ? null : f.meta);
    },
  };
}

// The download cache of files fetched by Hub id (web/src/formats/hub.js): in Node a folder
// (ak.env.cacheDir), in browsers and workers the Cache API, or the origin private file system
// (OPFS) where the Cache API is missing. One entry per file, keyed by its URL and revision; beside
// the bytes its metadata: { id, model, revision, file, url, size, sha256, etag, lastModified,
// cachedAt }. A file is stored only once it has arrived whole (Node: written to a temporary file,
// then renamed), and every read checks its size and SHA-256: a truncated or altered file reads as
// absent and is fetched again.
import { AttnkitError } from '../runtime/errors.js';
import { describe } from '../runtime/args.js';
import { bodyBytes, bodyChunks, isNode, nodeBuiltin } from '../runtime/read_bytes.js';

const FORMAT = 'v1'; // the layout's version: a folder (Node), the Cache API cache's and OPFS folder's suffix
const CACHE_NAME = `attnkit-${FORMAT}`;
// The Cache API keys entries by request URL: a name of our own, never fetched.
const KEY_URL = 'https://attnkit-cache.invalid/';
const META_HEADER = 'x-attnkit-meta';
const READ_CHUNK = 8 << 20;

const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-256 of bytes, as hex (Node's crypto, else Web Crypto; null where neither exists). */
async function sha256(bytes) {
  if (isNode) return nodeBuiltin('node:crypto').createHash('sha256').update(bytes).digest('hex');
  if (!globalThis.crypto?.subtle) return null;
  return hex(await crypto.subtle.digest('SHA-256', bytes));
}

/** An entry's id: the first 32 hex digits of SHA-256(url + '\n' + revision). */
export async function entryId(url, revision) {
  const text = `${url}\n${revision}`;
  const h = await sha256(new TextEncoder().encode(text));
  if (h) return h.slice(0, 32);
  // No hash function (an insecure page has no Web Crypto, and then no Cache API either).
  return encodeURIComponent(text).replace(/%/g, '_').slice(-120);
}

const metaOk = (m) => m && typeof m === 'object' && typeof m.id === 'string' && Number.isInteger(m.size) && m.size >= 0;

/** The user's cache folder (Node): $XDG_CACHE_HOME, else the platform's (~/.cache on Linux). */
export function defaultCacheDir() {
  if (!isNode) return null;
  const env = globalThis.process.env;
  const path = nodeBuiltin('node:path');
  const home = nodeBuiltin('node:os').homedir();
  if (env.XDG_CACHE_HOME) return path.join(env.XDG_CACHE_HOME, 'attnkit');
  if (globalThis.process.platform === 'win32') return path.join(env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'attnkit', 'Cache');
  if (globalThis.process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'attnkit');
  return path.join(home, '.cache', 'attnkit');
}

const writeError = (fn, where, e) => new AttnkitError(`${fn}: could not write the download cache at ${where}: ${e?.message ?? e} ` +
  '(set ak.env.cacheDir to a writable folder, or pass cache: false)', { code: 'ERR_LOAD', argument: 'cacheDir', cause: e });

/** The cache in a folder (Node). */
function folderStore(dir) {
  const fs = nodeBuiltin('node:fs/promises');
  const path = nodeBuiltin('node:path');
  const files = path.join(dir, FORMAT);
  const tmp = path.join(dir, 'tmp');
  const data = (id) => path.join(files, id);
  const metaFile = (id) => path.join(files, `${id}.json`);
  const unique = () => `${globalThis.process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  const remove = async (id) => {
    await fs.rm(metaFile(id), { force: true });
    await fs.rm(data(id), { force: true });
  };
  return {
    kind: 'folder',
    where: files,
    async get(id) {
      try {
        const m = JSON.parse(await fs.readFile(metaFile(id), 'utf8'));
        return metaOk(m) && m.id === id ? m : null;
      } catch {
        return null;
      }
    },
    // The bytes of an entry read in chunks (onBytes per chunk), checked against its size and hash;
    // null when they do not match (the entry is removed) or are gone.
    async read(meta, onBytes) {
      let fh;
      try {
        fh = await fs.open(data(meta.id), 'r');
      } catch {
        return null;
      }
      try {
        const { size } = await fh.stat();
        if (size !== meta.size) {
          await fh.close();
          fh = null;
          await remove(meta.id);
          return null;
        }
        const bytes = new Uint8Array(size);
        const hash = nodeBuiltin('node:crypto').createHash('sha256');
        for (let at = 0; at < size;) {
          const { bytesRead } = await fh.read(bytes, at, Math.min(READ_CHUNK, size - at), at);
          if (bytesRead === 0) break;
          hash.update(bytes.subarray(at, at + bytesRead));
          at += bytesRead;
          onBytes?.(bytesRead);
        }
        if (hash.digest('hex') !== meta.sha256) {
          await fh.close();
          fh = null;
          await remove(meta.id);
          return null;
        }
        return bytes;
      } finally {
        await fh?.close();
      }
    },
    // Streams a Response's body into a temporary file (hashing it), renames it into place once
    // whole, then reads it back: memory holds the file once, never the download's chunks too.
    // Resolves to { bytes, meta }; null when the folder cannot be written at all (the caller
    // downloads without the cache). A body that fails leaves nothing behind.
    async write(fn, what, meta, response, { onBytes, signal, timeout, argument }) {
      let fh, part;
      try {
        await fs.mkdir(files, { recursive: true });
        await fs.mkdir(tmp, { recursive: true });
        part = path.join(tmp, `${meta.id}.${unique()}.part`);
        fh = await fs.open(part, 'wx');
      } catch {
        return null;
      }
      const hash = nodeBuiltin('node:crypto').createHash('sha256');
      let size;
      try {
        size = await bodyChunks(fn, what, response, {
          signal, timeout, argument,
          onChunk: async (chunk) => {
            hash.update(chunk);
            try {
              await fh.write(chunk);
            } catch (e) {
              throw writeError(fn, part, e);
            }
            onBytes?.(chunk.length);
          },
        });
        await fh.close();
        fh = null;
        const full = { ...meta, size, sha256: hash.digest('hex'), cachedAt: new Date().toISOString() };
        await fs.rename(part, data(meta.id));
        part = null;
        const metaPart = path.join(tmp, `${meta.id}.${unique()}.json`);
        await fs.writeFile(metaPart, JSON.stringify(full));
        await fs.rename(metaPart, metaFile(meta.id));
        const buf = await fs.readFile(data(meta.id));
        return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.length), meta: full };
      } catch (e) {
        throw e instanceof AttnkitError ? e : writeError(fn, files, e);
      } finally {
        await fh?.close().catch(() => {});
        if (part) await fs.rm(part, { force: true }).catch(() => {});
      }
    },
    remove,
    async list() {
      let names;
      try {
        names = await fs.readdir(files);
      } catch {
        return [];
      }
      const out = [];
      for (const n of names) {
        if (!n.endsWith('.json')) continue;
        const m = await this.get(n.slice(0, -5));
        if (m) out.push(m);
      }
      return out;
    },
    async clear() {
      await fs.rm(files, { recursive: true, force: true });
      await fs.rm(tmp, { recursive: true, force: true });
    },
  };
}

/** The cache in the Cache API (browsers, workers): the metadata in a header of the stored Response. */
function cacheApiStore() {
  const open = () => caches.open(CACHE_NAME);
  const metaOf = (r) => {
    try {
      const m = JSON.parse(decodeURIComponent(r?.headers.get(META_HEADER) ?? ''));
      return metaOk(m) ? m : null;
    } catch {
      return null;
    }
  };
  return {
    kind: 'cache-api',
    where: `the Cache API cache '${CACHE_NAME}'`,
    async get(id) {
      const m = metaOf(await (await open()).match(KEY_URL + id));
      return m?.id === id ? m : null;
    },
    async read(meta, onBytes) {
      const cache = await open();
      const r = await cache.match(KEY_URL + meta.id);
      if (!r) return null;
      let bytes;
      try {
        bytes = await bodyBytes('cache', meta.url, r, { onBytes });
      } catch {
        bytes = null;
      }
      if (!bytes || bytes.length !== meta.size || (meta.sha256 && (await sha256(bytes)) !== meta.sha256)) {
        await cache.delete(KEY_URL + meta.id);
        return null;
      }
      return bytes;
    },
    async write(fn, what, meta, response, { onBytes, signal, timeout, argument }) {
      const bytes = await bodyBytes(fn, what, response, { onBytes, signal, timeout, argument });
      const full = { ...meta, size: bytes.length, sha256: await sha256(bytes), cachedAt: new Date().toISOString() };
      try {
        // Stored only now, whole; a full quota (QuotaExceededError) leaves the load without a cache entry.
        await (await open()).put(KEY_URL + meta.id, new Response(bytes, {
          headers: { 'content-type': 'application/octet-stream', [META_HEADER]: encodeURIComponent(JSON.stringify(full)) },
        }));
      } catch {
        return { bytes, meta: null };
      }
      return { bytes, meta: full };
    },
    async remove(id) {
      await (await open()).delete(KEY_URL + id);
    },
    async list() {
      const cache = await open();
      const out = [];
      for (const req of await cache.keys()) {
        const m = metaOf(await cache.match(req));
        if (m) out.push(m);
      }
      return out;
    },
    async clear() {
      await caches.delete(CACHE_NAME);
    },
  };
}

/** The cache in the origin private file system (where the Cache API is missing). */
function opfsStore() {
  const folder = async () => (await navigator.storage.getDirectory()).getDirectoryHandle(CACHE_NAME, { create: true });
  const fileOf = async (dir, name) => {
    try {
      return await (await dir.getFileHandle(name)).getFile();
    } catch {
      return null;
    }
  };
  const writeFile = async (dir, name, bytes) => {
    // createWritable writes to a swap file, and the file changes only on close(): whole or not at all.
    const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
    await w.write(bytes);
    await w.close();
  };
  const store = {
    kind: 'opfs',
    where: `the origin private file system folder '${CACHE_NAME}'`,
    async get(id) {
      try {
        const f = await fileOf(await folder(), `${id}.json`);
        const m = f && JSON.parse(await f.text());
        return metaOk(m) && m.id === id ? m : null;
      } catch {
        return null;
      }
    },
    async read(meta, onBytes) {
      const dir = await folder();
      const f = await fileOf(dir, meta.id);
      let bytes = null;
      if (f && f.size === meta.size) {
        try {
          bytes = await bodyBytes('cache', meta.url, { body: f.stream() }, { onBytes });
        } catch {
          bytes = null;
        }
      }
      if (!bytes || bytes.length !== meta.size || (meta.sha256 && (await sha256(bytes)) !== meta.sha256)) {
        await store.remove(meta.id);
        return null;
      }
      return bytes;
    },
    async write(fn, what, meta, response, { onBytes, signal, timeout, argument }) {
      const bytes = await bodyBytes(fn, what, response, { onBytes, signal, timeout, argument });
      const full = { ...meta, size: bytes.length, sha256: await sha256(bytes), cachedAt: new Date().toISOString() };
      try {
        const dir = await folder();
        await writeFile(dir, meta.id, bytes);
        await writeFile(dir, `${meta.id}.json`, new TextEncoder().encode(JSON.stringify(full)));
      } catch {
        return { bytes, meta: null };
      }
      return { bytes, meta: full };
    },
    async remove(id) {
      const dir = await folder();
      for (const name of [`${id}.json`, id]) await dir.removeEntry(name).catch(() => {});
    },
    async list() {
      const dir = await folder();
      const out = [];
      for await (const name of dir.keys()) {
        if (!name.endsWith('.json')) continue;
        const m = await store.get(name.slice(0, -5));
        if (m) out.push(m);
      }
      return out;
    },
    async clear() {
      await (await navigator.storage.getDirectory()).removeEntry(CACHE_NAME, { recursive: true }).catch(() => {});
    },
  };
  return store;
}

/**
 * The store for this environment: a folder in Node (`cacheDir`), else the Cache API, else OPFS
 * (with createWritable); null where there is none (a page that is not a secure context).
 */
export function openStore(cacheDir) {
  if (isNode) return cacheDir ? folderStore(cacheDir) : null;
  if (typeof caches === 'object' && caches && typeof caches.open === 'function') return cacheApiStore();
  const fileHandle = globalThis.FileSystemFileHandle;
  if (typeof navigator === 'object' && typeof navigator.storage?.getDirectory === 'function' &&
      typeof fileHandle === 'function' && typeof fileHandle.prototype.createWritable === 'function') {
    return opfsStore();
  }
  return null;
}

/** What ak.cache lists: the entries' metadata, oldest first. */
const entryView = (m) => ({
  id: m.id, model: m.model, revision: m.revision, file: m.file, url: m.url, size: m.size,
  etag: m.etag ?? null, lastModified: m.lastModified ?? null, cachedAt: m.cachedAt ?? null,
});

/**
 * ak.cache over the store `settings()` names at each call: list(), delete(idOrModel), clear().
 */
export function cacheApi(settings) {
  const store = () => openStore(settings().cacheDir);
  return {
    /** Every cached file: [{ id, model, revision, file, url, size, etag, lastModified, cachedAt }]. */
    async list() {
      const s = store();
      if (!s) return [];
      const all = (await s.list()).map(entryView);
      return all.sort((a, b) => String(a.cachedAt).localeCompare(String(b.cachedAt)) || a.id.localeCompare(b.id));
    },
    /**
     * Deletes the entry with this id, or every entry of a model id ('org/name': every file of every
     * revision); resolves to the number of entries deleted.
     */
    async delete(id) {
      if (typeof id !== 'string' || id === '') {
        throw new AttnkitError(`cache.delete: id must be an entry's id or a model id (a non-empty string), got ${describe(id)}`,
          { code: 'ERR_INVALID_ARGUMENT', argument: 'id' });
      }
      const s = store();
      if (!s) return 0;
      const gone = (await s.list()).filter((m) => m.id === id || m.model === id);
      for (const m of gone) await s.remove(m.id);
      return gone.length;
    },
    /** Deletes every entry; resolves to the number deleted. */
    async clear() {
      const s = store();
      if (!s) return 0;
      const n = (await s.list()).length;
      await s.clear();
      return n;
    },
  };
}

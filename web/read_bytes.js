// Reading a .wasm (or any file) as bytes from a URL: fetch in browsers, the file system for
// file: URLs in Node.
export const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

/** A URL the user gave (string or URL), relative to the page in browsers, to this module in Node. */
export function resolveUrl(spec) {
  return new URL(String(spec), typeof location === 'object' ? location.href : import.meta.url);
}

export async function readBytes(url) {
  if (url.protocol === 'file:') {
    if (!isNode) throw new Error('file: URLs can only be read in Node');
    // Node >= 20.16 hands out built-ins synchronously; a sync read of the .wasm is ~0.6 ms quicker
    // on a cold start than importing node:fs/promises and reading on the thread pool.
    const fs = process.getBuiltinModule?.('node:fs');
    if (fs) return fs.readFileSync(url);
    // Variable specifiers keep bundlers from trying to resolve Node built-ins for the browser.
    const fsName = 'node:fs/promises';
    const urlName = 'node:url';
    const [{ readFile }, { fileURLToPath }] = await Promise.all([
      import(/* @vite-ignore */ fsName),
      import(/* @vite-ignore */ urlName),
    ]);
    return readFile(fileURLToPath(url));
  }
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  return new Uint8Array(await response.arrayBuffer());
}

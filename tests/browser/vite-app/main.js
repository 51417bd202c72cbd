// A user's app: imports the package by name, as after `npm install attnkit`, and lets Vite find the
// .wasm files through `new URL(..., import.meta.url)`.
import { load } from 'attnkit';

const out = document.getElementById('out');
try {
  const ak = await load();
  const pe = ak.sinusoidalPositionalEncoding(2, 4);
  // Row 1, column 0 is sin(1).
  out.textContent = `${ak.backend} ${pe.data[4].toFixed(4)}`;
} catch (e) {
  out.textContent = `failed: ${e.message}`;
  throw e;
}

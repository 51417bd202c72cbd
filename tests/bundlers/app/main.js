// The page: runs attnkit itself and in a module worker, and writes both results into the page.
import { runAttnkit } from './use.js';

const show = (id, text) => { document.getElementById(id).textContent = text; };
runAttnkit().then((text) => show('out', text), (e) => show('out', `failed: ${e.message}`));
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = (e) => show('worker', e.data);
worker.onerror = (e) => show('worker', `failed: ${e.message}`);

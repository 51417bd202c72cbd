// A module worker that imports attnkit.
import { runAttnkit } from './use.js';

runAttnkit().then((text) => postMessage(text), (e) => postMessage(`failed: ${e.message}`));

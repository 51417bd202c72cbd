// What a user's app does with attnkit, on the page and in a module worker: load the kernels' build
// (its .wasm found by the bundler), and tokenize, which loads the loaders' build (a second .wasm).
import { load } from 'attnkit';

export async function runAttnkit() {
  const ak = await load();
  const pe = ak.sinusoidalPositionalEncoding(2, 4);
  const tok = await ak.Tokenizer.fromVocab('[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\n');
  // Row 1, column 0 of the table is sin(1); [CLS] hello world [SEP] is 2 4 5 3.
  // Where threads could have run but did not, why (a test failure then says it).
  const why = globalThis.crossOriginIsolated && ak.threadsUnavailableReason ? ` (${ak.threadsUnavailableReason})` : '';
  return `${ak.backend}${why} ${pe.data[4].toFixed(4)} ${tok.encode('Hello world').inputIds.data.join(' ')}`;
}

// With the DOM lib, the API takes the real URL, Response, File and FileList.
import { load } from 'attnkit';

const ak = await load({ wasmUrl: new URL('/wasm/attnkit-simd.wasm', location.href) });
const tok = await ak.Tokenizer.fromPretrained(new URL('./models/gpt2/', location.href));
const sp = await ak.Tokenizer.fromSentencePiece(await fetch('/llama/tokenizer.model'), { addBosToken: true });
const st = await ak.loadSafetensors(await fetch('/model.safetensors'));
const input = document.querySelector('input[type=file]') as HTMLInputElement;
const model = await ak.Model.fromPretrained(input.files!, { onProgress: (loaded, total) => console.log(loaded, total) });
const picked = await ak.Model.fromPretrained([new File(['{}'], 'config.json')]);
// @ts-expect-error a number is no source
await ak.Model.fromPretrained(42);
tok.dispose(); sp.dispose(); model.dispose(); picked.dispose();
export { st };

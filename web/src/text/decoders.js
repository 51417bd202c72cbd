// Hugging Face's decoders (decode_chain: tokens in, tokens out; decode joins the last ones).
import { bytesToUnicode } from './pre_tokenizers.js';
import { growthLimit, tooLong } from './normalizers.js';

const utf8 = new TextEncoder();
const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;
const lossy = (bytes) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(bytes));
// The WordPiece decoder's clean-up: transformers' (below) and " do not" -> " don't". The Rust
// code runs that one between " 'm" and " 's"; running it last is the same, since the three after
// it only drop the space before an apostrophe, which neither makes nor breaks a " do not".
const cleanup = (t) => cleanUpSpaces(t).replaceAll(' do not', " don't");
const DECODERS = {
  // Byte-level characters back to bytes (a token with any other character, an added token, as its
  // UTF-8), then one lossy UTF-8 decode of all of them.
  byteLevel(tokens) {
    const { toByte } = bytesToUnicode();
    const bytes = [];
    for (const t of tokens) {
      const mapped = [];
      for (const c of t) {
        const b = toByte.get(c);
        if (b === undefined) { mapped.length = 0; mapped.push(...utf8.encode(t)); break; }
        mapped.push(b);
      }
      bytes.push(...mapped);
    }
    return [lossy(bytes)];
  },
  wordPiece(tokens, { prefix, cleanup: clean }) {
    return tokens.map((t, i) => {
      if (i) t = t.startsWith(prefix) ? t.slice(prefix.length) : ` ${t}`;
      return clean ? cleanup(t) : t;
    });
  },
  // Every replacement character is a space, except in the first token, where it is dropped
  // (unless the pre-tokenizer never prepends one).
  metaspace(tokens, { replacement, prependScheme }) {
    return tokens.map((t, i) => t.split(replacement).join(i === 0 && prependScheme !== 'never' ? '' : ' '));
  },
  // Runs of <0xNN> tokens become their bytes, decoded as UTF-8; a run that is not valid UTF-8
  // becomes one U+FFFD per byte.
  byteFallback(tokens) {
    const out = [];
    let run = [];
    const flush = () => {
      if (!run.length) return;
      try {
        out.push(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Uint8Array.from(run)));
      } catch {
        for (let k = 0; k < run.length; k++) out.push('\uFFFD');
      }
      run = [];
    };
    for (const t of tokens) {
      const m = BYTE_TOKEN.exec(t);
      if (m) run.push(parseInt(m[1], 16));
      else {
        flush();
        out.push(t);
      }
    }
    flush();
    return out;
  },
  fuse: (tokens) => [tokens.join('')],
  // Up to `start` leading and `stop` trailing `content` characters off each token.
  strip(tokens, { content, start, stop }) {
    return tokens.map((t) => {
      const chars = [...t];
      let a = 0;
      while (a < Math.min(start, chars.length) && chars[a] === content) a++;
      let b = chars.length;
      while (chars.length - b < Math.min(stop, chars.length - a) && chars[b - 1] === content) b--;
      return chars.slice(a, b).join('');
    });
  },
  replace(tokens, { pattern, content }, limit) {
    let total = 0;
    return tokens.map((t) => {
      // The length it would have, before it is built.
      const grown = t.length + (t.split(pattern).length - 1) * (content.length - pattern.length);
      if ((total += grown) > limit.chars) throw tooLong('decoder', limit.input, limit.chars);
      return t.replaceAll(pattern, content);
    });
  },
  // The end-of-word suffix is a space, except on the last token.
  bpe: (tokens, { suffix }) => tokens.map((t, i) => t.replaceAll(suffix, i === tokens.length - 1 ? '' : ' ')),
};
// transformers' clean_up_tokenization (decode's clean_up_tokenization_spaces) on the whole text.
export function cleanUpSpaces(t) {
  return t.replaceAll(' .', '.').replaceAll(' ?', '?').replaceAll(' !', '!').replaceAll(' ,', ',')
    .replaceAll(" ' ", "'").replaceAll(" n't", "n't").replaceAll(" 'm", "'m").replaceAll(" 's", "'s")
    .replaceAll(" 've", "'ve").replaceAll(" 're", "'re");
}
export function decodeChain(tokens, steps) {
  let input = 0;
  for (const t of tokens) input += t.length;
  const limit = { input, chars: growthLimit(input) };
  for (const step of steps) tokens = DECODERS[step.type](tokens, step, limit);
  return tokens.join('');
}

// Hugging Face's normalizers as the JavaScript text steps run them (BertNormalizer, Lowercase, Nmt,
// StripAccents, the Unicode forms, literal Replace), each unit of the result keeping the source span
// it came from; and the growth limit on what Replace steps (here and in decoders.js) make of a text.
import { AttnkitError } from '../runtime/errors.js';
import { isChinese, isControl, isWhitespace } from './char_classes.js';
import { literalMatches } from './literals.js';

// BertNormalizer's strip_accents: decomposed, without the nonspacing marks.
const stripAccents = (s) => s.normalize('NFD').replace(/\p{Mn}/gu, '');
// Hugging Face's Nmt normalizer: ASCII and C1 controls go; other spaces, zero-width characters,
// U+2581, U+FEFF and U+FFFD become a space.
const NMT_DROP = /[\u0001-\u0008\u000B\u000E-\u001F\u007F\u008F\u009F]/gu;
const NMT_SPACE = /[\t\n\f\r\u1680\u200B-\u200F\u2028\u2029\u2581\uFEFF\uFFFD]/gu;
const nmt = (s) => s.replace(NMT_DROP, '').replace(NMT_SPACE, ' ');

// What composition may join: a base character and its combining marks, or Hangul jamo (leading,
// vowel, trailing; and a syllable with trailing jamo), which are letters, not marks, yet compose
// under NFC / NFKC.
const CLUSTER = /[\u1100-\u115F\uA960-\uA97C\uAC00-\uD7A3][\u1160-\u11FF\uD7B0-\uD7FF]+\p{M}*|\P{M}\p{M}*|\p{M}+/gsu;

/**
 * Normalises `text` by the steps, keeping for each UTF-16 unit of the result the [start, end) of
 * the source it came from. Works cluster by cluster (CLUSTER), so that composition and
 * decomposition stay within one source span.
 */
export function normalize(text, steps, base = 0) {
  if (steps.length === 0) { // no normaliser (BLOOM): each character is its own span, marks too
    const map = new Array(text.length);
    for (let i = 0; i < text.length;) {
      const n = text.codePointAt(i) > 0xffff ? 2 : 1;
      for (let k = 0; k < n; k++) map[i + k] = [base + i, base + i + n];
      i += n;
    }
    return { text, map };
  }
  if (steps.some((st) => st.type === 'replace')) return normalizeWithReplace(text, steps, base);
  let out = '';
  const map = [];
  for (const m of text.matchAll(CLUSTER)) {
    let s = m[0];
    for (const step of steps) {
      if (step.type === 'bert') {
        let t = '';
        for (const c of s) {
          if (step.cleanText && (c === '\0' || c === '\uFFFD' || isControl(c))) continue;
          if (step.cleanText && isWhitespace(c)) t += ' ';
          else if (step.handleChineseChars && isChinese(c.codePointAt(0))) t += ` ${c} `;
          else t += c;
        }
        if (step.stripAccents ?? step.lowercase) t = stripAccents(t);
        s = step.lowercase ? t.toLowerCase() : t;
      } else if (step.type === 'lowercase') s = s.toLowerCase();
      else if (step.type === 'nmt') s = nmt(s);
      else if (step.type === 'stripAccents') s = s.replace(/\p{Mn}/gu, '');
      else s = s.normalize(step.type.toUpperCase());
    }
    out += s;
    if (s === m[0]) { // left as it was: each character keeps its own span (as Hugging Face's alignments)
      for (let k = 0; k < s.length; k++) {
        const first = k > 0 && s.charCodeAt(k) >= 0xdc00 && s.charCodeAt(k) <= 0xdfff && s.charCodeAt(k - 1) >= 0xd800 && s.charCodeAt(k - 1) <= 0xdbff;
        const at = first ? k - 1 : k;
        map.push([base + m.index + at, base + m.index + at + (s.codePointAt(at) > 0xffff ? 2 : 1)]);
      }
    } else {
      for (let k = 0; k < s.length; k++) map.push([base + m.index, base + m.index + m[0].length]);
    }
  }
  return { text: out, map };
}

// normalize with literal Replace steps (ALBERT's "``" -> '"'), which can span clusters: the steps
// run in order on the whole text, each character keeping the source span it came from (a
// replacement's characters take the whole match's span).
function normalizeWithReplace(text, steps, base) {
  const limit = growthLimit(text.length);
  let cur = text;
  let map = Array.from({ length: text.length }, (_, i) => [base + i, base + i + 1]);
  const span = (a, b) => [map[a][0], map[b - 1][1]];
  for (let i = 0; i < steps.length;) {
    let out = '';
    const next = [];
    if (steps[i].type === 'replace') {
      const { pattern, content } = steps[i++];
      let at = 0;
      for (const m of literalMatches(cur, pattern)) {
        if (out.length + m.index - at + content.length > limit) throw tooLong('normalizer', text.length, limit);
        for (let k = at; k < m.index; k++) next.push(map[k]);
        out += cur.slice(at, m.index) + content;
        const s = span(m.index, m.index + pattern.length);
        for (let k = 0; k < content.length; k++) next.push(s);
        at = m.index + pattern.length;
      }
      for (let k = at; k < cur.length; k++) next.push(map[k]);
      out += cur.slice(at);
    } else {
      let j = i;
      while (j < steps.length && steps[j].type !== 'replace') j++;
      const run = normalize(cur, steps.slice(i, j), 0);
      out = run.text;
      for (const [a, b] of run.map) next.push(b > a ? span(a, b) : [map[a]?.[0] ?? base, map[a]?.[0] ?? base]);
      i = j;
    }
    cur = out;
    map = next;
  }
  return { text: cur, map };
}

// A file's Replace steps can grow a text without bound (a chain of Replace("a" -> "aa") doubles it
// at each step): a normalizer's or decoder's output may be at most MAX_GROWTH times its input plus
// GROWTH_SLACK characters, so that what a file makes an encode or decode hold stays a small multiple
// of what it was given. No converter's steps come near it (BERT's Chinese-character spacing triples
// a text; NFKD's longest expansion, U+FDFA, is 18 characters for 1 and is not a Replace).
export const MAX_GROWTH = 16, GROWTH_SLACK = 256;
export const growthLimit = (n) => MAX_GROWTH * n + GROWTH_SLACK;
export const tooLong = (what, n, limit) => new AttnkitError(`${what === 'decoder' ? 'decode' : 'encode'}: the tokenizer's ${what} would make a text of ${n} characters longer than ` +
  `${limit} (${MAX_GROWTH} times its length + ${GROWTH_SLACK}): its Replace steps amplify the text`, { code: 'ERR_OUT_OF_RANGE', argument: what });

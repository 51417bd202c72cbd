// Hugging Face's pre-tokenizers as the JavaScript text steps run them: a normalised string into
// words with their offsets (ByteLevel, Split, Whitespace, Digits, Punctuation, BERT's), and GPT-2's
// byte <-> character table that ByteLevel's words and its decoder are written in.
import { isPunctuation, isWhitespace } from './char_classes.js';
import { literalMatches } from './literals.js';

// GPT-2's byte <-> character table (bytes_to_unicode): printable bytes stand for themselves, the
// rest are shifted past U+00FF so that every byte is a visible character. Built on first use, not
// at import (import time is start-up time for every user of the package).
let byteTables = null;
export function bytesToUnicode() {
  if (byteTables) return byteTables;
  const toChar = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    toChar[b] = String.fromCharCode(printable ? b : 256 + n++);
  }
  return (byteTables = { toChar, toByte: new Map(toChar.map((c, b) => [c, b])) });
}
// GPT-2's pre-tokenisation pattern (encoder.py), with Unicode letter and number classes.
const GPT2_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
// The Split pre-tokenizer's patterns of known models (C++ names them after comparing the file's
// regex with their exact text), for texts that go through these JavaScript steps: run by V8 as
// the same expressions, (?i:...) spelt out with ASCII case classes and \s as Oniguruma's
// White_Space, as attnkit's own engine reads them. Other patterns run on that engine in C++
// (src/attnkit/text/regex.hpp, Tokenizer#_split), as do all of them in the C++ text steps.
const CONTRACTIONS = "'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])";
const splitPattern = (source) => new RegExp(source.replaceAll('\\s', '\\p{White_Space}').replaceAll('\\S', '\\P{White_Space}'), 'gu');
const SPLIT_PATTERNS = {
  cl100k: splitPattern(`${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`),
  qwen2: splitPattern(`${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`),
  gpt2: splitPattern("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"),
};

// Rust's regex \w and \s (Unicode), which the Whitespace pre-tokenizer's \w+|[^\w\s]+ means.
const WORD_OR_OTHER = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\p{White_Space}]+/gu;
// Rust's char::is_numeric (Nd, Nl, No) and the Punctuation pre-tokenizer's is_punc (ASCII
// punctuation, symbols included, or a Unicode P* character).
const NUMERIC = /\p{N}/u;
const PUNCTUATION = /[\p{P}!-/:-@[-`{-~]/u;

// Hugging Face's Pattern::find_matches: [start, end, isMatch] pieces covering the text, from
// regex-style matches (each match a piece, the gaps between them the others).
export function matchPieces(text, matches) {
  const ranges = [];
  for (const m of matches) ranges.push(m.index, m.index + m[0].length);
  return rangePieces(text, ranges);
}

// The same from [start, end, start, end, ...] match ranges (attnkit's regex engine's answer).
function rangePieces(text, ranges) {
  const pieces = [];
  let at = 0;
  for (let k = 0; k < ranges.length; k += 2) {
    if (ranges[k] > at) pieces.push([at, ranges[k], false]);
    pieces.push([ranges[k], ranges[k + 1], true]);
    at = ranges[k + 1];
  }
  if (at < text.length) pieces.push([at, text.length, false]);
  return pieces;
}

// The same from a character predicate: each matching character is a piece of its own.
function charPieces(text, test) {
  const pieces = [];
  let at = 0, i = 0;
  for (const c of text) {
    if (test.test(c)) {
      if (i > at) pieces.push([at, i, false]);
      pieces.push([i, i + c.length, true]);
      at = i + c.length;
    }
    i += c.length;
  }
  if (at < text.length) pieces.push([at, text.length, false]);
  return pieces;
}

// NormalizedString::split's behaviours on [start, end, isMatch] pieces: the [start, end) kept.
// Removed drops the matches; Isolated keeps every piece; MergedWithPrevious / MergedWithNext glue
// a match to the piece before / after it (unless that piece is a match too); Contiguous joins
// adjacent matches. Empty pieces are dropped.
export function splitPieces(pieces, behavior) {
  let out;
  if (behavior === 'removed') out = pieces.filter((p) => !p[2]);
  else if (behavior === 'isolated') out = pieces;
  else if (behavior === 'contiguous' || behavior === 'mergedWithPrevious') {
    out = [];
    let previous = false;
    for (const [a, b, match] of pieces) {
      const merge = behavior === 'contiguous' ? match === previous : match && !previous;
      if (merge && out.length) out[out.length - 1] = [out[out.length - 1][0], b];
      else out.push([a, b]);
      previous = match;
    }
  } else {
    out = [];
    let previous = false;
    for (let k = pieces.length - 1; k >= 0; k--) {
      const [a, b, match] = pieces[k];
      if (match && !previous && out.length) out[out.length - 1] = [a, out[out.length - 1][1]];
      else out.push([a, b]);
      previous = match;
    }
    out.reverse();
  }
  return out.filter((p) => p[1] > p[0]);
}

/** Words of a normalised string: [{text, start}] (start: index into that string). `split(program,
 *  text)`: the match ranges of a Split step's own regular expression (the tokenizer's wasm). */
export function preTokenize(text, steps, split) {
  let words = [{ text, start: 0 }];
  for (const step of steps) {
    const next = [];
    for (const w of words) {
      let pieces = null, behavior = null;
      if (step.type === 'split') {
        if (step.regex) pieces = matchPieces(w.text, w.text.matchAll(SPLIT_PATTERNS[step.regex]));
        else if (step.program !== undefined) pieces = rangePieces(w.text, split(step.program, w.text));
        else pieces = matchPieces(w.text, literalMatches(w.text, step.literal));
        if (step.invert) for (const p of pieces) p[2] = !p[2];
        behavior = step.behavior;
      } else if (step.type === 'whitespace') {
        pieces = matchPieces(w.text, w.text.matchAll(WORD_OR_OTHER));
        for (const p of pieces) p[2] = !p[2];
        behavior = 'removed';
      } else if (step.type === 'digits') {
        pieces = charPieces(w.text, NUMERIC);
        behavior = step.individualDigits ? 'isolated' : 'contiguous';
      } else if (step.type === 'punctuation') {
        pieces = charPieces(w.text, PUNCTUATION);
        behavior = step.behavior;
      }
      if (pieces) {
        for (const [a, b] of splitPieces(pieces, behavior)) next.push({ text: w.text.slice(a, b), start: w.start + a });
        continue;
      }
      if (step.type === 'byteLevel') {
        const pieces = step.useRegex ? w.text.matchAll(GPT2_PATTERN) : [Object.assign([w.text], { index: 0 })];
        for (const m of pieces) next.push({ text: m[0], start: w.start + m.index });
        continue;
      }
      let cur = '', at = 0;
      const flush = () => {
        if (cur) next.push({ text: cur, start: w.start + at });
        cur = '';
      };
      let i = 0;
      for (const c of w.text) {
        if (isWhitespace(c)) flush();
        else if (step.type === 'bert' && isPunctuation(c)) {
          flush();
          next.push({ text: c, start: w.start + i });
        } else {
          if (!cur) at = i;
          cur += c;
        }
        i += c.length;
      }
      flush();
    }
    words = next;
  }
  return words;
}

// Tokenizers: Hugging Face tokenizer.json (WordPiece, byte-level BPE), BERT's vocab.txt and
// GPT-2's encoder.json + vocab.bpe. The files are read and validated, and words become token ids,
// in C++ (src/attnkit/text/tokenizer.hpp, in attnkit-loaders.wasm); the Unicode text steps run in
// JavaScript: normalisation (String.normalize, \p{..} classes: normalizers.js), pre-tokenisation into
// words (pre_tokenizers.js), and here special tokens, truncation, padding and the post-processing
// template; decoders.js turns tokens back into text. Offsets are [start, end) indices into the
// JavaScript string given to encode (UTF-16 code units, what String.slice takes).
import { AttnkitError } from '../runtime/errors.js';
import { PADDED, Tensor } from '../runtime/tensor.js';
import { attached, boolean, callback, describe, idsInput, okResponse, options as checkOptions } from '../runtime/args.js';
import { loaders } from '../runtime/loaders.js';
import { OwnedHandle } from '../runtime/owned_handle.js';
import { SOURCE_OPTIONS, fileSource, readOptionalJson, readText } from '../formats/file_source.js';
import { ggufMetadataFrom, storedGguf } from '../formats/gguf.js';
import { ggufSourceBytes, ggufSourceHead, isGgufSource } from '../formats/gguf_source.js';
import { bodyBytes, textInput } from '../runtime/read_bytes.js';
import { normalize } from './normalizers.js';
import { bytesToUnicode, preTokenize } from './pre_tokenizers.js';
import { cleanUpSpaces, decodeChain } from './decoders.js';
import { LiteralMatcher } from './literals.js';
import { isWhitespace } from './char_classes.js';
import { ENCODING_STATE, LAZY_ENCODING } from './encoding.js';
import { ggufTokenizerParts } from './gguf_tokenizer.js';

// Special tokens a tokenizer_config.json / special_tokens_map.json may name, exposed as
// tokenizer.padTokenId etc. (null when the files name none).
const SPECIAL = ['pad', 'unk', 'cls', 'sep', 'mask', 'bos', 'eos'];
// SentencePiece model files by the names Hugging Face repositories use (Llama, T5, XLM-R).
const SPM_FILES = ['tokenizer.model', 'spiece.model', 'sentencepiece.bpe.model'];
// transformers writes int(1e30) as model_max_length when a model has no limit.
// The longest row encode pads or truncates to: 2^20 tokens, above every context length models
// ship with in tokenizer_config.json that attnkit runs. Padding a batch allocates rows x maxLength,
// so a file's model_max_length above it (transformers writes 1e30 for "none"; a file may say 1e9)
// counts as no limit, and a maxLength above it is refused.
export const MAX_LENGTH_CEILING = 2 ** 20;
// And the most tokens a padded batch may hold beyond what its texts gave (2^24: 384 MiB of arrays).
export const MAX_PADDED_TOKENS = 2 ** 24;

const utf8 = new TextEncoder();

// A Precompiled normalizer's charsmap (T5, XLM-R: 320 KB of base64, most of the file) is cut out
// of the text and handed to C++ on its own, where it is decoded, so that the JSON parser never
// reads it. Only a plain base64 string is cut (no escapes); anything else stays for C++ to read.
function splitCharsmap(text) {
  const key = '"precompiled_charsmap"';
  const k = text.indexOf(key);
  if (k < 0 || text.indexOf(key, k + key.length) >= 0) return { text, charsmap: '' };
  const head = /^\s*:\s*"/.exec(text.slice(k + key.length, k + key.length + 32));
  if (!head) return { text, charsmap: '' };
  const open = k + key.length + head[0].length;
  const close = text.indexOf('"', open);
  if (close < 0 || text.lastIndexOf('\\', close) >= open) return { text, charsmap: '' };
  return { text: text.slice(0, open) + text.slice(close), charsmap: text.slice(open, close) };
}

async function create(ak, fn, kind, a, b = '', lowercase = true) {
  const heap = await loaders(ak);
  const handle = heap._withTexts([a, b], ([[pa, na], [pb, nb]]) => heap._raw(fn, '_tokenizerCreate', [kind, pa, na, pb, nb, lowercase])[0]);
  return new Tokenizer(heap, handle, JSON.parse(heap._m._tokenizerSettings(handle)));
}

export class Tokenizer extends OwnedHandle {
  /** tokenizer.json (text, bytes, parsed object or Response). */
  static async fromJSON(ak, tokenizerJson) {
    const text = await textInput('Tokenizer.fromJSON', 'tokenizerJson', tokenizerJson);
    const split = splitCharsmap(text);
    return create(ak, 'Tokenizer.fromJSON', 0, split.text, split.charsmap);
  }

  /** BERT's vocab.txt (one token per line); lowercase: uncased models (default true). */
  static async fromVocab(ak, vocabTxt, options) {
    const { lowercase = true } = checkOptions('Tokenizer.fromVocab', options, ['lowercase']);
    boolean('Tokenizer.fromVocab', 'lowercase', lowercase);
    return create(ak, 'Tokenizer.fromVocab', 1, await textInput('Tokenizer.fromVocab', 'vocabTxt', vocabTxt), '', lowercase);
  }

  /** GPT-2's encoder.json and vocab.bpe. */
  static async fromGpt2(ak, encoderJson, vocabBpe) {
    const fn = 'Tokenizer.fromGpt2';
    return create(ak, fn, 2, await textInput(fn, 'encoderJson', encoderJson), await textInput(fn, 'vocabBpe', vocabBpe));
  }

  /**
   * A SentencePiece model file (tokenizer.model, spiece.model, sentencepiece.bpe.model: bytes or a
   * Response), Unigram or BPE, with the library's exact normalisation, segmentation, byte fallback
   * and decoding. As the library, it adds no special tokens unless asked: addBosToken (Llama),
   * addEosToken (T5).
   */
  static async fromSentencePiece(ak, tokenizerModel, options) {
    const fn = 'Tokenizer.fromSentencePiece';
    const { addBosToken = false, addEosToken = false } = checkOptions(fn, options, ['addBosToken', 'addEosToken']);
    boolean(fn, 'addBosToken', addBosToken);
    boolean(fn, 'addEosToken', addEosToken);
    let bytes;
    if (typeof Response === 'function' && tokenizerModel instanceof Response) {
      bytes = await bodyBytes(fn, 'tokenizerModel', okResponse(fn, 'tokenizerModel', tokenizerModel), { argument: 'tokenizerModel' });
    } else if (tokenizerModel instanceof ArrayBuffer || ArrayBuffer.isView(tokenizerModel)) {
      const b = attached(fn, 'tokenizerModel', tokenizerModel);
      bytes = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    } else {
      throw new AttnkitError(`${fn}: tokenizerModel must be the bytes of a tokenizer.model (ArrayBuffer, Uint8Array) or a Response, got ${describe(tokenizerModel)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'tokenizerModel',
      });
    }
    return Tokenizer._sentencePiece(ak, fn, bytes, { addBosToken, addEosToken });
  }

  // A SentencePiece ModelProto's bytes -> Tokenizer. `added` (a GGUF vocabulary's control, unknown
  // and user-defined tokens: [{id, content, special}]) are matched in the text first, each stretch
  // between them encoded on its own, as llama.cpp does; without it, as the library: none.
  static async _sentencePiece(ak, fn, bytes, { addBosToken, addEosToken, added = null }) {
    const heap = await loaders(ak);
    const handle = heap._withInputs([bytes], ([p]) => heap._raw(fn, '_sentencepieceCreate', [p, bytes.length])[0]);
    let info, blob;
    try {
      info = heap._call(fn, '_sentencepieceInfo', [handle], undefined, Int32Array);
      blob = heap._call(fn, '_sentencepiecePieces', [handle], undefined, Uint8Array);
    } catch (e) {
      heap._m._sentencepieceFree(handle);
      throw e;
    }
    const [n, algorithm, unk, bos, eos, pad, , valid] = info; // [6]: byte fallback (C++ applies it)
    const types = info.subarray(8, 8 + n), starts = info.subarray(8 + n, 9 + 2 * n), byteStarts = info.subarray(9 + 2 * n);
    // One TextDecoder call for all pieces, sliced at their UTF-16 starts (computed in C++), unless
    // a piece is not well-formed UTF-8 (then each is decoded on its own, with U+FFFD).
    const vocab = new Array(n);
    const whole = valid ? new TextDecoder().decode(blob) : null;
    if (whole !== null && whole.length === starts[n]) {
      for (let i = 0; i < n; i++) vocab[i] = whole.slice(starts[i], starts[i + 1]);
    } else {
      const dec = new TextDecoder();
      for (let i = 0; i < n; i++) vocab[i] = dec.decode(blob.subarray(byteStarts[i], byteStarts[i + 1]));
    }
    const CONTROL = 3, UNKNOWN = 2;
    const addedTokens = [];
    if (added) {
      for (const a of added) addedTokens.push({ id: a.id, content: a.content, special: a.special, normalized: false });
    } else {
      for (let i = 0; i < n; i++) {
        if (types[i] === CONTROL || types[i] === UNKNOWN) addedTokens.push({ id: i, content: vocab[i], special: true, spmOnly: true });
      }
    }
    const seq = (k, typeId) => ({ sequence: k, typeId });
    const tok = (id, typeId) => ({ id, typeId });
    const single = [], pair = [];
    if (addBosToken && bos >= 0) single.push(tok(bos, 0));
    single.push(seq(0, 0));
    if (addEosToken && eos >= 0) single.push(tok(eos, 0));
    pair.push(...single);
    if (addBosToken && bos >= 0) pair.push(tok(bos, 1));
    pair.push(seq(1, 1));
    if (addEosToken && eos >= 0) pair.push(tok(eos, 1));
    const settings = {
      vocab, model: algorithm === 1 ? 'unigram' : 'bpe', addedTokens, normalizer: [], preTokenizer: [],
      template: { single, pair }, pad: pad >= 0 ? { id: pad, typeId: 0 } : null, unkId: unk,
      sentencepiece: true, matchAdded: Boolean(added),
    };
    const t = new Tokenizer(heap, handle, settings, '_sentencepieceFree');
    if (bos >= 0) [t.bosToken, t.bosTokenId] = [vocab[bos], bos];
    if (eos >= 0) [t.eosToken, t.eosTokenId] = [vocab[eos], eos];
    return t;
  }

  /**
   * A tokenizer from a Hugging Face folder (a base URL, a folder path in Node, picked Files, or an
   * object of file name -> contents): tokenizer.json, or vocab.txt, or vocab.json + merges.txt, or
   * a SentencePiece model (tokenizer.model, spiece.model, sentencepiece.bpe.model),
   * with tokenizer_config.json and special_tokens_map.json for the special tokens,
   * model_max_length and padding_side.
   */
  static async fromPretrained(ak, source, options) {
    const fn = 'Tokenizer.fromPretrained';
    const o = checkOptions(fn, options, ['onProgress', ...SOURCE_OPTIONS]);
    const onProgress = callback(fn, 'onProgress', o.onProgress);
    if (isGgufSource(source)) return Tokenizer._fromGguf(ak, fn, source, { ...o, onProgress });
    const src = fileSource(fn, source, o);
    let loaded = 0; // bytes of every file read; no total: which files are read is known only as they are
    const onBytes = onProgress && ((n, file) => onProgress((loaded += n), undefined, file));
    const optional = (name) => readOptionalJson(fn, src, name, onBytes);
    const [config, map] = await Promise.all([optional('tokenizer_config.json'), optional('special_tokens_map.json')]);
    const text = (name) => readText(fn, src, name, onBytes);
    let tok;
    if (await src.has('tokenizer.json')) tok = await Tokenizer.fromJSON(ak, await text('tokenizer.json'));
    else if (await src.has('vocab.txt')) {
      const lower = config?.do_lower_case;
      tok = await Tokenizer.fromVocab(ak, await text('vocab.txt'), { lowercase: typeof lower === 'boolean' ? lower : true });
    } else if ((await src.has('vocab.json')) && (await src.has('merges.txt'))) {
      tok = await Tokenizer.fromGpt2(ak, await text('vocab.json'), await text('merges.txt'));
    } else {
      const spm = (await Promise.all(SPM_FILES.map((f) => src.has(f)))).findIndex(Boolean);
      if (spm < 0) {
        throw new AttnkitError(`${fn}: there is no tokenizer.json, vocab.txt, vocab.json + merges.txt or ` +
          `SentencePiece model (${SPM_FILES.join(', ')}) in ${src.label}`, { code: 'ERR_LOAD', argument: 'tokenizer.json' });
      }
      // As transformers' slow tokenizers: add_bos_token / add_eos_token from tokenizer_config.json,
      // else the class's default (Llama: <s> first; T5: </s> last).
      const cls = typeof config?.tokenizer_class === 'string' ? config.tokenizer_class : '';
      const flag = (key, dflt) => (typeof config?.[key] === 'boolean' ? config[key] : dflt);
      tok = await Tokenizer.fromSentencePiece(ak, await src.bytes(SPM_FILES[spm], onBytes), {
        addBosToken: flag('add_bos_token', /^(Code)?Llama|^Gemma/.test(cls)),
        addEosToken: flag('add_eos_token', /^(M?T5|UMT5)Tokenizer/.test(cls)),
      });
    }
    try {
      tok._configure(fn, config, map);
    } catch (e) {
      tok.dispose();
      throw e;
    }
    return tok;
  }

  // A GGUF file's tokenizer (tokenizer.ggml.*, see gguf_tokenizer.js), with its special tokens:
  // from the file's header alone where its start can be read (a File, a file on disk).
  static async _fromGguf(ak, fn, source, options) {
    const head = ggufSourceHead(fn, source, options);
    const metadata = head ? await ggufMetadataFrom(ak, fn, (n) => head.read(n), head.size)
      : (await storedGguf(ak, await ggufSourceBytes(fn, source, options), fn)).metadata;
    const parts = ggufTokenizerParts(fn, metadata);
    let tok;
    if (parts.sentencepiece) {
      tok = await Tokenizer._sentencePiece(ak, fn, parts.sentencepiece, parts);
    } else {
      try {
        tok = await Tokenizer.fromJSON(ak, parts.json);
      } catch (e) {
        // What the tokenizer.json reader refused, by the GGUF key it came from.
        if (!(e instanceof AttnkitError)) throw e;
        const key = /^model\.merges/.test(e.argument ?? '') ? 'tokenizer.ggml.merges' : 'tokenizer.ggml.tokens';
        throw new AttnkitError(`${fn}: the GGUF file's tokenizer: ${e.message.replace(/^Tokenizer\.fromJSON: /, '')}`, { code: e.code, argument: key });
      }
    }
    for (const [key, id] of Object.entries(parts.special)) {
      [tok[`${key}Token`], tok[`${key}TokenId`]] = id === null ? [null, null] : [tok.vocab[id], id];
    }
    return tok;
  }

  // Special tokens, model_max_length and padding_side from tokenizer_config.json and
  // special_tokens_map.json (both optional; the map wins where they differ, as in transformers).
  _configure(fn, config, map) {
    const ids = new Map(this.vocab.map((t, i) => [t, i]));
    for (const a of this._s.addedTokens) ids.set(a.content, a.id);
    for (const key of SPECIAL) {
      const v = map?.[`${key}_token`] ?? config?.[`${key}_token`];
      const content = typeof v === 'string' ? v : typeof v?.content === 'string' ? v.content : null;
      if (content === null) continue;
      if (!ids.has(content)) {
        throw new AttnkitError(`${fn}: ${key}_token ${JSON.stringify(content)} is not in the vocabulary`, {
          code: 'ERR_INVALID_ARGUMENT', argument: `${key}_token`,
        });
      }
      this[`${key}Token`] = content;
      this[`${key}TokenId`] = ids.get(content);
    }
    const max = config?.model_max_length;
    if (Number.isInteger(max) && max > 0 && max <= MAX_LENGTH_CEILING) this.modelMaxLength = max;
    const side = config?.padding_side;
    if (side !== undefined && side !== null) {
      if (side !== 'left' && side !== 'right') {
        throw new AttnkitError(`${fn}: padding_side must be 'left' or 'right', got ${describe(side)}`, {
          code: 'ERR_INVALID_ARGUMENT', argument: 'padding_side',
        });
      }
      this.paddingSide = side;
    }
  }

  constructor(heap, handle, settings, free = '_tokenizerFree') {
    super();
    if (typeof heap?._raw !== 'function' || settings === undefined) {
      throw new AttnkitError('Tokenizer: tokenizers come from `await ak.Tokenizer.fromPretrained(source)` (a folder, URL or Hub id) ' +
        'or the other factories (fromJSON, fromVocab, fromGpt2, fromSentencePiece), where `ak = await load()`',
      { code: 'ERR_INVALID_ARGUMENT', argument: 'heap' });
    }
    this._own(heap, handle, 'Tokenizer', free);
    // SentencePiece models, from a tokenizer.model ('model') or a tokenizer.json ('json'): their
    // decoding runs in C++ too (src/attnkit/text/sentencepiece.hpp).
    this._sp = settings.sentencepiece ? 'model' : settings.model === 'sentencepiece' ? 'json' : null;
    // Normalizer steps run here before C++ reads a text: a SentencePiece model's tokenizer.json
    // steps before its own (ALBERT's NFKD, Lowercase, ...), or the whole normalizer of a WordPiece /
    // BPE tokenizer that has a composing step (Qwen 2's NFC): C++ then runs its pre-tokenizer and model.
    const texts = heap._m._tokenizerEncodesTexts(handle);
    this._pre = settings.preNormalizer?.length ? settings.preNormalizer : texts === 2 ? settings.normalizer : null;
    // Whether every pre-normaliser step is a whole-text String.normalize form or toLowerCase (_unchanged).
    this._preSimple = this._pre !== null && this._pre.every((st) => ['nfc', 'nfkc', 'nfd', 'nfkd', 'lowercase'].includes(st.type));
    // How texts become pieces: 'model' (a tokenizer.model: the whole text in C++), 'texts' (added
    // tokens cut out here, each stretch of text in C++: tokenizer.json SentencePiece models, and
    // WordPiece / byte-level BPE whose pre-tokenizer runs in C++), or null (text steps here, words
    // to C++).
    this._whole = this._sp === 'model' ? 'model' : texts ? 'texts' : null;
    this._s = settings;
    // A Split step's own regular expression runs in C++ (src/attnkit/text/regex.hpp): the string's
    // UTF-16 units in, [start, end) match ranges out.
    this._split = (program, text) => {
      const units = new Uint16Array(text.length);
      for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
      return heap._withInputs([units], ([p]) => heap._call('encode', '_tokenizerSplit', [handle, program, p, units.length],
        undefined, Int32Array));
    };
    /** Token strings by id. */
    this.vocab = settings.vocab;
    /** 'wordpiece', 'bpe' (byte-level or SentencePiece) or 'unigram'. */
    this.model = settings.algorithm ?? settings.model;
    // Added tokens are matched in the text before the model sees it (SentencePiece's own control
    // pieces are not: the library reads "<s>" in a text as text).
    this._added = settings.addedTokens.filter((t) => !t.spmOnly).sort((x, y) => y.content.length - x.content.length);
    this._addedByContent = new Map(this._added.map((t) => [t.content, t]));
    this._addedById = new Map(this._added.map((t) => [t.id, t.content]));
    this._special = new Set(settings.addedTokens.filter((t) => t.special).map((t) => t.id));
    // As Hugging Face's AddedVocabulary: the tokens with normalized false are found first, then
    // those with normalized true in the text between them (GPT-NeoX's runs of spaces never take
    // the whitespace a ModernBERT [MASK]'s lstrip takes).
    this._addedMatchers = [false, true].map((n) => this._added.filter((t) => !t.normalized === !n))
      .filter((list) => list.length).map((list) => new LiteralMatcher(list.map((t) => t.content)));
    // Special tokens (fromPretrained fills them from tokenizer_config.json / special_tokens_map.json).
    for (const key of SPECIAL) {
      this[`${key}Token`] = null;
      this[`${key}TokenId`] = null;
    }
    if (settings.pad) {
      this.padTokenId = settings.pad.id;
      this.padToken = this.vocab[settings.pad.id] ?? null;
    }
    if (settings.unkId >= 0) {
      this.unkTokenId = settings.unkId;
      this.unkToken = this.vocab[settings.unkId];
    }
    /** The default maxLength when truncating (model_max_length), or null. */
    this.modelMaxLength = null;
    /** Where padding goes by default: 'right' or 'left' (padding_side). */
    this.paddingSide = settings.paddingSide ?? 'right';
  }

  // Added (special) tokens are matched on the raw text and never split: text -> [{text, start}
  // | {id, start, end}] in order.
  _segments(text) {
    let segments = [{ text, start: 0 }];
    for (const matcher of this._addedMatchers) {
      const next = [];
      for (const g of segments) {
        if (g.id === undefined) this._cut(g.text, g.start, matcher, next);
        else next.push(g);
      }
      segments = next;
    }
    return segments;
  }

  // The matches of `matcher` in `text` (at `base` in the encoded text) and the text between them -> out.
  _cut(text, base, matcher, out) {
    let at = 0;
    for (const m of matcher.matches(text)) {
      const tok = this._addedByContent.get(m[0]);
      let start = m.index, end = m.index + m[0].length;
      if (tok.singleWord && (/\w/u.test(text[start - 1] ?? '') || /\w/u.test(text[end] ?? ''))) continue;
      if (start < at) continue;
      if (tok.lstrip) while (start > at && isWhitespace(text[start - 1])) start--;
      if (tok.rstrip) while (end < text.length && isWhitespace(text[end])) end++;
      out.push({ text: text.slice(at, start), start: base + at });
      out.push({ id: tok.id, start: base + m.index, end: base + m.index + m[0].length });
      at = end;
    }
    out.push({ text: text.slice(at), start: base + at });
  }

  // Whether the pre-normaliser leaves `text` as it is (most texts are NFC already), told without
  // its cluster-by-cluster offset map: each step is a String.normalize form or toLowerCase and
  // changes nothing of the whole text (then nothing of any cluster either).
  _unchanged(text) {
    if (!this._preSimple) return false;
    for (const st of this._pre) {
      if ((st.type === 'lowercase' ? text.toLowerCase() : text.normalize(st.type.toUpperCase())) !== text) return false;
    }
    return true;
  }

  // Texts -> for each, {ids, spans} before the template. SentencePiece: one C++ call for all.
  // `reserve` ({before, after}) leaves that many slots around each text's pieces (the template's
  // special tokens), so that _encodeOne can fill them in place instead of copying into a new row.
  _piecesMany(fn, texts, reserve) {
    for (const t of texts) {
      if (typeof t !== 'string') {
        throw new AttnkitError(`${fn}: text must be a string, got ${describe(t)}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'text' });
      }
    }
    if (!this._whole) return texts.map((t) => Tokenizer._typed(this._pieces(fn, t)));
    // A tokenizer.model reads the whole text (the library matches no added tokens); a
    // tokenizer.json model, or a GGUF file's SentencePiece (matchAdded), the text between added tokens.
    const segs = this._whole === 'texts' || this._s.matchAdded ? texts.map((t) => this._segments(t)) : texts.map((t) => [{ text: t, start: 0 }]);
    const parts = [];
    let room = 0;
    for (const list of segs) {
      for (const g of list) {
        if (g.text !== undefined && g.text !== '') {
          if (this._pre && !this._unchanged(g.text)) {
            // What C++ reads is the pre-normalised text; `map` takes its offsets back to the source.
            const n = normalize(g.text, this._pre, 0);
            g.send = n.text;
            g.map = n.map;
          }
          parts.push(g);
          room += 3 * (g.send ?? g.text).length;
        }
      }
    }
    // One scratch block in the wasm heap: [ends: int32 x n][firsts: uint8 x n][UTF-8 bytes].
    const heap = this._heap, n = parts.length;
    const head = 5 * n + ((4 - ((5 * n) % 4)) % 4);
    const base = heap._scratch(head + room);
    let ptr = 0, count = 0;
    try {
      const mem = heap._m.HEAPU8;
      const ends = new Int32Array(mem.buffer, base, n), firsts = mem.subarray(base + 4 * n, base + 5 * n);
      const text = mem.subarray(base + head, base + head + room);
      let at = 0;
      for (let i = 0; i < n; i++) {
        at += utf8.encodeInto(parts[i].send ?? parts[i].text, text.subarray(at)).written;
        ends[i] = at;
        firsts[i] = parts[i].start === 0 ? 1 : 0;
      }
      if (n > 0) {
        [ptr, count] = this._whole === 'texts'
          ? heap._raw(fn, '_tokenizerEncodeTexts', [this._handle, base + head, at, base, base + 4 * n, n])
          : heap._raw(fn, '_sentencepieceEncode', [this._handle, base + head, at, base, n]);
      }
      // Read in place (no copy): nothing below allocates in the wasm heap.
      return this._deinterleave(segs, parts.length, ptr ? heap._view(Int32Array, ptr, count) : new Int32Array(0), reserve);
    } finally {
      if (ptr) heap._m._free(ptr);
      heap._scratchDone(); // also when C++ refused the text
    }
  }

  // The (count per part, then (id, start, end) triples) the C++ side returned -> typed arrays per
  // text, segment offsets added.
  _deinterleave(segs, parts, r, reserve) {
    let k = parts, p = 0;
    return segs.map((list) => {
      let n = 0;
      for (let g = 0, q = p; g < list.length; g++) {
        if (list[g].id !== undefined) n++;
        else if (list[g].text !== '') n += r[q++];
      }
      let out;
      if (reserve) {
        const total = reserve.before + n + reserve.after;
        const whole = { ids: new Int32Array(total), spans: new Int32Array(2 * total), before: reserve.before };
        out = { ids: whole.ids.subarray(reserve.before, reserve.before + n),
          spans: whole.spans.subarray(2 * reserve.before, 2 * (reserve.before + n)), whole };
      } else {
        out = { ids: new Int32Array(n), spans: new Int32Array(2 * n) };
      }
      let j = 0;
      for (const g of list) {
        if (g.id !== undefined) {
          out.ids[j] = g.id;
          out.spans[2 * j] = g.start;
          out.spans[2 * j++ + 1] = g.end;
          continue;
        }
        if (g.text === '') continue;
        const count = r[p++];
        for (let c = 0; c < count; c++, k += 3, j++) {
          out.ids[j] = r[k];
          let a = r[k + 1], b = r[k + 2];
          if (g.map) {
            const from = g.map[a]?.[0] ?? g.text.length;
            [a, b] = [from, b > r[k + 1] ? g.map[b - 1][1] : from];
          }
          out.spans[2 * j] = g.start + a;
          out.spans[2 * j + 1] = g.start + b;
        }
      }
      return out;
    });
  }

  // [{id, start, end}] -> {ids, spans: [start, end] pairs} typed arrays (the word-level
  // tokenizers' pieces).
  static _typed(list) {
    const n = list.length;
    const out = { ids: new Int32Array(n), spans: new Int32Array(2 * n) };
    for (let i = 0; i < n; i++) {
      out.ids[i] = list[i].id;
      out.spans[2 * i] = list[i].start;
      out.spans[2 * i + 1] = list[i].end;
    }
    return out;
  }

  // One text (a string) -> [{id, start, end}] before the template, with the text steps here.
  _pieces(fn, text) {
    // 1. Added (special) tokens are matched on the raw text and never split.
    const segments = this._segments(text);
    // 2. Normalise and split the rest into words; 3. the words to ids in one C++ call.
    const words = [];
    const byteLevel = this._s.preTokenizer.some((p) => p.type === 'byteLevel');
    const toChar = byteLevel ? bytesToUnicode().toChar : null;
    const prefixSpace = this._s.preTokenizer.some((p) => p.addPrefixSpace);
    for (const seg of segments) {
      if (seg.id !== undefined) {
        words.push(seg);
        continue;
      }
      const n = normalize(seg.text, this._s.normalizer, seg.start);
      if (prefixSpace && n.text && !n.text.startsWith(' ')) {
        n.text = ' ' + n.text;
        n.map.unshift([seg.start, seg.start]);
      }
      for (const w of preTokenize(n.text, this._s.preTokenizer, this._split)) {
        // For each byte of the string C++ sees: the [start, end) within w.text of the source
        // character it stands for (byte-level BPE sees 1-2 bytes per source byte).
        const from = [], to = [];
        let model = '';
        let k = 0;
        for (const c of w.text) {
          for (const byte of utf8.encode(c)) {
            const n = byteLevel ? (toChar[byte].charCodeAt(0) < 0x80 ? 1 : 2) : 1;
            if (byteLevel) model += toChar[byte];
            for (let r = 0; r < n; r++) from.push(k), to.push(k + c.length);
          }
          if (!byteLevel) model += c;
          k += c.length;
        }
        words.push({ model, from, to, start: w.start, map: n.map, text: w.text });
      }
    }
    const modelWords = words.filter((w) => w.id === undefined);
    const encoded = modelWords.map((w) => utf8.encode(w.model));
    const ends = new Int32Array(modelWords.length);
    let total = 0;
    encoded.forEach((b, i) => { total += b.length; ends[i] = total; });
    const bytes = new Uint8Array(total);
    encoded.forEach((b, i) => bytes.set(b, ends[i] - b.length));
    const triples = modelWords.length === 0 ? new Int32Array(0)
      : this._heap._withInputs([bytes, ends], ([pw, pe]) => this._heap._call(fn, '_tokenizerEncode',
        [this._handle, pw, bytes.length, pe, modelWords.length], undefined, Int32Array));
    // 4. Back to source offsets.
    const byWord = new Map();
    for (let t = 0; t < triples.length; t += 3) {
      const w = triples[t + 1];
      if (!byWord.has(w)) byWord.set(w, []);
      byWord.get(w).push([triples[t], triples[t + 2]]);
    }
    const pieces = [];
    let mi = 0;
    for (const w of words) {
      if (w.id !== undefined) {
        pieces.push({ id: w.id, start: w.start, end: w.end });
        continue;
      }
      let prev = 0;
      for (const [id, endByte] of byWord.get(mi) ?? []) {
        let st = w.from[prev];
        const e = w.to[endByte - 1];
        if (byteLevel) while (st < e - 1 && w.text[st] === ' ') st++; // trim_offsets: not the leading space
        pieces.push({ id, start: w.map[w.start + st][0], end: w.map[w.start + e - 1][1] });
        prev = endByte;
      }
      mi++;
    }
    return pieces;
  }

  /** Token strings of a text, without special tokens added. */
  tokenize(text) {
    this._live('tokenize');
    return Array.from(this._piecesMany('tokenize', [text])[0].ids, (id) => this.vocab[id]);
  }

  /**
   * text (or an array of texts: a batch, padded to its longest) -> {inputIds, attentionMask,
   * tokenTypeIds, positionIds} as int32 Tensors ([L] or [batch, L]), tokens, and offsets
   * ([start, end) in the text; [0, 0] for added special tokens and padding).
   * Options: pair (a second text, or an array for a batch), addSpecialTokens (true: the model's
   * template, e.g. [CLS] A [SEP] B [SEP]), maxLength, truncation (true = 'longest_first' when
   * maxLength is given; 'only_first', 'only_second', false), padding (false; true: to maxLength
   * when given; 'max_length': to maxLength; a batch is padded to its longest row at least), padId
   * (when the tokenizer has no pad token).
   */
  encode(text, options) {
    const fn = 'encode';
    this._live(fn);
    const o = checkOptions(fn, options, ['pair', 'addSpecialTokens', 'maxLength', 'truncation', 'padding', 'padId', 'paddingSide']);
    const { pair, addSpecialTokens = true, truncation, padding = false, padId, paddingSide = this.paddingSide } = o;
    // As transformers: truncation or padding to 'max_length' without maxLength use model_max_length.
    let { maxLength } = o;
    if (maxLength === undefined && (truncation === true || padding === 'max_length') && this.modelMaxLength !== null) {
      maxLength = this.modelMaxLength;
    }
    if (paddingSide !== 'left' && paddingSide !== 'right') {
      throw new AttnkitError(`${fn}: paddingSide must be 'left' or 'right', got ${describe(paddingSide)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'paddingSide',
      });
    }
    boolean(fn, 'addSpecialTokens', addSpecialTokens);
    if (![true, false, 'max_length', 'longest'].includes(padding)) {
      throw new AttnkitError(`${fn}: padding must be true, false, 'longest' or 'max_length', got ${describe(padding)}`, {
        code: 'ERR_INVALID_ARGUMENT', argument: 'padding',
      });
    }
    if (![undefined, true, false, 'longest_first', 'only_first', 'only_second'].includes(truncation)) {
      throw new AttnkitError(`${fn}: truncation must be true, false, 'longest_first', 'only_first' or 'only_second', got ${describe(truncation)}`,
        { code: 'ERR_INVALID_ARGUMENT', argument: 'truncation' });
    }
    if (padId !== undefined && !(Number.isInteger(padId) && padId >= 0 && padId < this.vocab.length)) {
      throw new AttnkitError(`${fn}: padId must be a token id in [0, ${this.vocab.length}), got ${describe(padId)}`, {
        code: 'ERR_OUT_OF_RANGE', argument: 'padId',
      });
    }
    if (Array.isArray(text) && pair !== undefined && (!Array.isArray(pair) || pair.length !== text.length)) {
      throw new AttnkitError(`${fn}: for a batch, pair must be an array of ${text.length} texts`, {
        code: 'ERR_SHAPE_MISMATCH', argument: 'pair',
      });
    }
    if (padding === 'max_length' && maxLength === undefined) {
      throw new AttnkitError(`${fn}: padding 'max_length' needs maxLength (tokenizer_config.json's model_max_length is absent or ` +
        `above ${MAX_LENGTH_CEILING})`, { code: 'ERR_INVALID_ARGUMENT', argument: 'maxLength' });
    }
    if (maxLength !== undefined && !(Number.isInteger(maxLength) && maxLength >= 0 && maxLength <= MAX_LENGTH_CEILING)) {
      throw new AttnkitError(`${fn}: maxLength must be an integer in [0, ${MAX_LENGTH_CEILING}], got ${describe(maxLength)}`, {
        code: Number.isInteger(maxLength) && maxLength > 0 ? 'ERR_OUT_OF_RANGE' : 'ERR_INVALID_ARGUMENT', argument: 'maxLength',
      });
    }
    const batched = Array.isArray(text);
    const texts = batched ? text : [text];
    const pairs = pair === undefined ? null : batched ? pair : [pair];
    // One text per row, no pair and no truncation: the pieces get room for the template's specials.
    const tmpl = addSpecialTokens && !pairs && maxLength === undefined ? this._s.template?.single : null;
    const at = tmpl ? tmpl.findIndex((t) => t.sequence !== undefined) : -1;
    const reserve = at >= 0 && tmpl.filter((t) => t.sequence !== undefined).length === 1
      ? { before: at, after: tmpl.length - at - 1 } : undefined;
    const pieces = this._piecesMany(fn, pairs ? [...texts, ...pairs] : texts, reserve);
    const rows = texts.map((_, i) =>
      this._encodeOne(fn, pieces[i], pairs ? pieces[texts.length + i] : null, addSpecialTokens, maxLength, truncation));
    // A batch is always padded to its longest row; padding true / 'max_length' pad to maxLength.
    const toMax = (padding === true || padding === 'max_length') && maxLength !== undefined;
    return this._finish(fn, rows, toMax ? maxLength : undefined, padId, batched, paddingSide === 'left');
  }

  // Pieces {ids, spans} of a text (and its pair) -> a row: truncated, with the template.
  _encodeOne(fn, a, b, addSpecialTokens, maxLength, truncation) {
    const tmpl = addSpecialTokens && this._s.template ? this._s.template[b ? 'pair' : 'single'] : null;
    const strategy = truncation === undefined || truncation === true ? 'longest_first' : truncation;
    if (maxLength !== undefined && strategy) {
      const budget = maxLength - (tmpl ? tmpl.filter((t) => t.sequence === undefined).length : 0);
      if (budget < 0) {
        throw new AttnkitError(`${fn}: maxLength ${maxLength} leaves no room for the special tokens`, {
          code: 'ERR_INVALID_ARGUMENT', argument: 'maxLength',
        });
      }
      if (!['longest_first', 'only_first', 'only_second'].includes(strategy)) {
        throw new AttnkitError(`${fn}: truncation must be true, false, 'longest_first', 'only_first' or 'only_second', got ${describe(truncation)}`,
          { code: 'ERR_INVALID_ARGUMENT', argument: 'truncation' });
      }
      let na = a.ids.length, nb = b ? b.ids.length : 0;
      while (na + nb > budget) {
        const cutB = strategy === 'only_second' || (strategy === 'longest_first' && b && nb > na);
        if (strategy === 'only_second' ? !b || nb === 0 : cutB ? nb === 0 : na === 0) {
          throw new AttnkitError(`${fn}: cannot truncate to maxLength ${maxLength} with truncation '${strategy}'`, {
            code: 'ERR_INVALID_ARGUMENT', argument: 'truncation',
          });
        }
        if (cutB) nb--;
        else na--;
      }
      const cut = (x, m) => ({ ids: x.ids.subarray(0, m), spans: x.spans.subarray(0, 2 * m) });
      a = cut(a, na);
      if (b) b = cut(b, nb);
    }
    // The row: ids, token types, and source offsets (-1 for the template's special tokens).
    const parts = tmpl ?? [{ sequence: 0, typeId: 0 }, ...(b ? [{ sequence: 1, typeId: 1 }] : [])];
    let n = 0;
    for (const t of parts) n += t.sequence === undefined ? 1 : (t.sequence === 0 ? a : b).ids.length;
    const w = a.whole;
    if (!b && w && w.ids.length === n && a.ids.length === n - (tmpl ? tmpl.length - 1 : 0)) {
      // The pieces were laid out with room for the template's specials: fill them in place.
      const types = new Int32Array(n);
      let j = 0;
      for (const t of parts) {
        if (t.sequence === undefined) {
          w.ids[j] = t.id;
          w.spans[2 * j] = w.spans[2 * j + 1] = -1;
          types[j++] = t.typeId;
        } else {
          types.fill(t.typeId, j, j + a.ids.length);
          j += a.ids.length;
        }
      }
      if (j === n) return { ids: w.ids, types, spans: w.spans };
    }
    const row = { ids: new Int32Array(n), types: new Int32Array(n), spans: new Int32Array(2 * n).fill(-1) };
    let j = 0;
    for (const t of parts) {
      if (t.sequence === undefined) {
        row.ids[j] = t.id;
        row.types[j++] = t.typeId;
        continue;
      }
      const x = t.sequence === 0 ? a : b;
      row.ids.set(x.ids, j);
      row.spans.set(x.spans, 2 * j);
      row.types.fill(t.typeId, j, j + x.ids.length);
      j += x.ids.length;
    }
    return row;
  }

  _finish(fn, rows, target, padId, batched, left) {
    const pad = padId ?? this._s.pad?.id ?? this.padTokenId ?? undefined;
    let longest = 0;
    for (const r of rows) longest = Math.max(longest, r.ids.length);
    const L = Math.max(target ?? longest, longest);
    // Padding past the longest row is the one place encode's output outgrows its input.
    if (L > longest && rows.length * L > MAX_PADDED_TOKENS) {
      throw new AttnkitError(`${fn}: padding ${rows.length} rows to maxLength ${L} makes ${rows.length * L} tokens, more than ` +
        `${MAX_PADDED_TOKENS}; pad to the longest row (padding: true without maxLength) or encode fewer rows at once`,
      { code: 'ERR_OUT_OF_RANGE', argument: 'maxLength' });
    }
    if (pad === undefined && rows.some((r) => r.ids.length < L)) {
      throw new AttnkitError(`${fn}: this tokenizer has no pad token; pass padId`, { code: 'ERR_INVALID_ARGUMENT', argument: 'padId' });
    }
    const B = rows.length;
    // One unpadded row (one text, the common call): its arrays become the result's, no copies.
    const whole = B === 1 && rows[0].ids.length === L;
    const ids = whole ? rows[0].ids : new Int32Array(B * L), types = whole ? rows[0].types : new Int32Array(B * L);
    const mask = new Int32Array(B * L);
    const padType = this._s.pad?.typeId ?? 0;
    // Left padding (batched causal models) puts the pads first.
    if (whole) mask.fill(1);
    else {
      for (let b = 0; b < B; b++) {
        const r = rows[b], n = r.ids.length, row = b * L, first = left ? L - n : 0;
        if (n < L) {
          ids.fill(pad, row, row + L);
          types.fill(padType, row, row + L);
        }
        ids.set(r.ids, row + first);
        types.set(r.types, row + first);
        mask.fill(1, row + first, row + first + n);
      }
    }
    const dims = batched ? [B, L] : [L];
    const result = {
      inputIds: new Tensor('int32', ids, dims), attentionMask: new Tensor('int32', mask, dims),
      tokenTypeIds: new Tensor('int32', types, dims),
    };
    // Padded ids remember their mask: Model.forward will not pool them without it.
    if (rows.some((r) => r.ids.length < L)) Object.defineProperty(result.inputIds, PADDED, { value: result.attentionMask });
    // positionIds, tokens and offsets are built on first read (most callers only want the ids),
    // by getters shared by every encoding (no closures per call).
    result[ENCODING_STATE] = { rows, ids, B, L, left, batched, dims, vocab: this.vocab };
    Object.defineProperties(result, LAZY_ENCODING);
    return result;
  }

  /** A batch of ids ([batch, length]: a Tensor, or an array of rows) -> one string per row. */
  batchDecode(ids, options) {
    const fn = 'batchDecode';
    this._live(fn);
    const given = idsInput(fn, 'ids', ids);
    if (given.dims.length !== 2) {
      throw new AttnkitError(`${fn}: ids must be a batch [batch, length], got dims ${JSON.stringify(given.dims)}`, {
        code: 'ERR_SHAPE_MISMATCH', argument: 'ids',
      });
    }
    const [B, L] = given.dims;
    return Array.from({ length: B }, (_, b) => this.decode(given.data.subarray(b * L, (b + 1) * L), options));
  }

  /** ids (array, Int32Array or Tensor) -> text. skipSpecialTokens drops [CLS], <|endoftext|>, ... */
  decode(ids, options) {
    const fn = 'decode';
    this._live(fn);
    const { skipSpecialTokens = false, cleanUpTokenizationSpaces = false } =
      checkOptions(fn, options, ['skipSpecialTokens', 'cleanUpTokenizationSpaces']);
    boolean(fn, 'skipSpecialTokens', skipSpecialTokens);
    boolean(fn, 'cleanUpTokenizationSpaces', cleanUpTokenizationSpaces);
    const text = this._decode(fn, ids, skipSpecialTokens);
    return cleanUpTokenizationSpaces ? cleanUpSpaces(text) : text;
  }

  _decode(fn, ids, skipSpecialTokens) {
    const given = idsInput(fn, 'ids', ids);
    if (given.dims.length !== 1) {
      throw new AttnkitError(`${fn}: ids must be one sequence ([length]), got dims ${JSON.stringify(given.dims)}` +
        (given.dims.length === 2 ? '; for a batch use batchDecode(ids), which gives one text per row' : ''),
      { code: 'ERR_SHAPE_MISMATCH', argument: 'ids' });
    }
    const list = given.data;
    const kept = [];
    for (const id of list) {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocab.length) {
        throw new AttnkitError(`${fn}: id ${describe(id)} is outside [0, ${this.vocab.length})`, {
          code: 'ERR_OUT_OF_RANGE', argument: 'ids',
        });
      }
      if (skipSpecialTokens && this._special.has(id)) continue;
      kept.push(id);
    }
    if (this._sp) { // SentencePiece decoding in C++; tokenizer.json: added tokens as their text
      const run = (ids, stripFirst) => {
        const ids32 = Int32Array.from(ids);
        const bytes = this._heap._withInputs([ids32], ([p]) => (this._sp === 'json'
          ? this._heap._call(fn, '_tokenizerDecodeIds', [this._handle, p, ids32.length, stripFirst], undefined, Uint8Array)
          : this._heap._call(fn, '_sentencepieceDecode', [this._handle, p, ids32.length], undefined, Uint8Array)));
        return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
      };
      if (this._sp === 'model') return run(kept, true);
      let out = '', ids = [], first = true;
      for (const id of kept) {
        const added = this._addedById.get(id);
        if (added === undefined) {
          ids.push(id);
          continue;
        }
        if (ids.length) out += run(ids, first);
        ids = [];
        out += added;
        first = false;
      }
      return ids.length ? out + run(ids, first) : out;
    }
    const parts = kept.map((id) => this.vocab[id]);
    // tokenizer.json: its decoder, step by step (none: the tokens joined by spaces, as Hugging Face does).
    if (this._s.decoder) return this._s.decoder.length ? decodeChain(parts, this._s.decoder) : parts.join(' ');
    // vocab.json + merges.txt: GPT-2's byte-level decoder (added tokens, outside its alphabet, as
    // their text).
    if (this.model === 'bpe') return decodeChain(parts, [{ type: 'byteLevel' }]);
    const prefix = this._s.continuingSubwordPrefix;
    return parts.join(' ').split(` ${prefix}`).join('')
      .replace(/ ([.?!,])/g, '$1').replace(/ ' /g, "'").replace(/ n't/g, "n't")
      .replace(/ '(m|s|ve|re)\b/g, "'$1");
  }
}

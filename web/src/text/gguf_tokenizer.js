// A GGUF file's tokenizer (tokenizer.ggml.* metadata) as llama.cpp runs it (src/llama-vocab.cpp),
// in the forms attnkit's tokenizers read:
// - 'llama' (SentencePiece, LLAMA_VOCAB_TYPE_SPM): tokens, scores and token types become a
//   SentencePiece ModelProto (a tokenizer.model) of a BPE model with byte fallback. Its engine
//   merges as llama.cpp's llm_tokenizer_spm does: the adjacent pair whose joined piece scores
//   highest, the leftmost on ties (a tokenizer.json BPE merges by a list's rank instead, which
//   cannot say "leftmost on equal scores"). As llama.cpp: a space is prepended to every stretch of
//   text (add_space_prefix) and spaces become U+2581, nothing else is normalised; control, unknown
//   and user-defined tokens are matched in the text first (llama.cpp's parse_special).
// - 'gpt2' (byte-level BPE, LLAMA_VOCAB_TYPE_BPE): tokens and merges become a tokenizer.json; the
//   pre-tokenizer is the regular expressions llama.cpp uses for tokenizer.ggml.pre (the common
//   ones: gpt-2, llama-bpe / llama3, qwen2, default); control, unknown and user-defined tokens
//   are added tokens.
// Both with bos/eos/unk/pad from tokenizer.ggml.*_token_id and llama.cpp's add_bos / add_eos rules.
import { AttnkitError } from '../runtime/errors.js';
import { describe } from '../runtime/args.js';

// Token types (llama_token_type, which are SentencePiece's piece types).
const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6;

// llama.cpp's pre-tokenizer regular expressions by tokenizer.ggml.pre (llm_tokenizer_bpe), each
// split applied in turn (unicode_regex_split keeps matches and the text between them).
const GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const LLAMA3 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2 = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const DEFAULT = ['[\\p{P}\\$\\+<=>\\^~\\|]+', "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)", '\\p{N}+', '[0-9][0-9][0-9]'];
// tokenizer.ggml.pre -> [regular expressions, ignore_merges, add_bos default].
const PRE = {
  'gpt-2': [[GPT2], false, false], 'phi-2': [[GPT2], false, false], 'roberta-bpe': [[GPT2], false, false],
  'llama-bpe': [[LLAMA3], true, true], llama3: [[LLAMA3], true, true], 'llama-v3': [[LLAMA3], true, true], falcon3: [[LLAMA3], true, true],
  dbrx: [[LLAMA3], false, false], 'smaug-bpe': [[LLAMA3], false, false],
  qwen2: [[QWEN2], false, false], stablelm2: [[QWEN2], false, false], megrez: [[QWEN2], false, false],
  default: [DEFAULT, false, false],
};

const invalid = (fn, message, argument) => new AttnkitError(`${fn}: ${message}`, { code: 'ERR_INVALID_ARGUMENT', argument });

// Protobuf writing (the ModelProto fields sentencepiece_model.proto declares).
class Proto {
  constructor() {
    this.parts = [];
    this.length = 0;
  }
  _push(b) {
    this.parts.push(b);
    this.length += b.length;
  }
  varint(v) {
    let n = BigInt.asUintN(64, BigInt(v)); // negative int32 fields are 10-byte varints
    const out = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n) b |= 0x80;
      out.push(b);
    } while (n);
    this._push(Uint8Array.from(out));
    return this;
  }
  tag(field, wire) {
    return this.varint(field * 8 + wire);
  }
  int(field, v) {
    return this.tag(field, 0).varint(v);
  }
  bytes(field, b) {
    this.tag(field, 2).varint(b.length);
    this._push(b);
    return this;
  }
  float(field, v) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    this.tag(field, 5);
    this._push(b);
    return this;
  }
  message(field, m) {
    return this.bytes(field, m.done());
  }
  done() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

// Metadata readers, errors naming the key.
function reader(fn, metadata) {
  const has = (key) => Object.hasOwn(metadata, key);
  const id = (key, n, dflt) => {
    if (!has(key)) return dflt;
    const v = typeof metadata[key] === 'bigint' ? Number(metadata[key]) : metadata[key];
    if (!Number.isInteger(v) || v < 0) throw invalid(fn, `${key} must be a token id, got ${describe(metadata[key])}`, key);
    // llama.cpp warns and keeps its default for an id past the vocabulary.
    return v < n ? v : dflt;
  };
  const flag = (key, dflt) => {
    if (!has(key)) return dflt;
    if (typeof metadata[key] !== 'boolean') throw invalid(fn, `${key} must be true or false, got ${describe(metadata[key])}`, key);
    return metadata[key];
  };
  const array = (key, Type, n) => {
    if (!has(key)) return null;
    const v = metadata[key];
    if (!(v instanceof Type) && !(Type === Int32Array && v instanceof Uint32Array)) {
      throw invalid(fn, `${key} must be an array of ${Type === Float32Array ? 'f32' : 'i32'}, got ${describe(v)}`, key);
    }
    if (v.length !== n) throw invalid(fn, `${key} has ${v.length} entries for the ${n} of tokenizer.ggml.tokens`, key);
    return v;
  };
  return { has, id, flag, array };
}

/**
 * What a GGUF file's tokenizer.ggml.* metadata builds: { sentencepiece: ModelProto bytes, added }
 * ('llama') or { json: a tokenizer.json object } ('gpt2'), with { special: {bos, eos, unk, pad}
 * ids or null, addBosToken, addEosToken } and `added`: the tokens matched in the text first
 * [{ id, content, special }].
 */
export function ggufTokenizerParts(fn, metadata) {
  const r = reader(fn, metadata);
  const model = metadata['tokenizer.ggml.model'];
  if (model === undefined) throw invalid(fn, 'the GGUF file has no tokenizer (tokenizer.ggml.model)', 'tokenizer.ggml.model');
  if (model !== 'llama' && model !== 'gpt2') {
    throw invalid(fn, `tokenizer.ggml.model ${typeof model === 'string' ? `'${model}'` : describe(model)} is not supported (supported: 'llama', SentencePiece; 'gpt2', byte-level BPE)`,
      'tokenizer.ggml.model');
  }
  const tokens = metadata['tokenizer.ggml.tokens'];
  if (!tokens || typeof tokens.bytes !== 'function' || tokens.length === 0) {
    throw invalid(fn, 'tokenizer.ggml.tokens must be a non-empty array of strings', 'tokenizer.ggml.tokens');
  }
  const n = tokens.length;
  if (n >= 2 ** 24) throw invalid(fn, `tokenizer.ggml.tokens has ${n} tokens; attnkit's tokenizers hold fewer than 2^24`, 'tokenizer.ggml.tokens');
  const types = r.array('tokenizer.ggml.token_type', Int32Array, n);
  const spm = model === 'llama';
  // llama.cpp's defaults by model: SentencePiece <s> 1, </s> 2, <unk> 0; BPE 11 and 11 (GPT-2's
  // converter always writes its own); add_bos by tokenizer.ggml.pre for BPE.
  const pre = spm ? null : metadata['tokenizer.ggml.pre'] ?? 'default';
  if (!spm && !Object.hasOwn(PRE, pre)) {
    throw invalid(fn, `tokenizer.ggml.pre ${typeof pre === 'string' ? `'${pre}'` : describe(pre)} is not supported (supported: ${Object.keys(PRE).join(', ')})`, 'tokenizer.ggml.pre');
  }
  const special = {
    bos: r.id('tokenizer.ggml.bos_token_id', n, spm ? 1 : 11),
    eos: r.id('tokenizer.ggml.eos_token_id', n, spm ? 2 : 11),
    unk: r.id('tokenizer.ggml.unknown_token_id', n, spm ? 0 : null),
    pad: r.id('tokenizer.ggml.padding_token_id', n, null),
  };
  for (const k of ['bos', 'eos', 'unk']) if (special[k] !== null && special[k] >= n) special[k] = null;
  const addBosToken = r.flag('tokenizer.ggml.add_bos_token', spm ? true : PRE[pre][2]);
  const addEosToken = r.flag('tokenizer.ggml.add_eos_token', false);
  // Text of token i; llama.cpp names an empty token "[EMPTY_i]".
  const text = (i) => (tokens.bytes(i).length ? tokens.at(i) : `[EMPTY_${i}]`);
  const typeOf = (i) => (types ? types[i] : NORMAL);
  // Control, unknown and user-defined tokens: matched in the text first (llama.cpp's
  // cache_special_tokens with parse_special).
  const added = [];
  for (let i = 0; i < n; i++) {
    const t = typeOf(i);
    if (t === CONTROL || t === UNKNOWN || t === USER_DEFINED) added.push({ id: i, content: text(i), special: t !== USER_DEFINED });
  }
  if (spm) return { sentencepiece: sentencePieceModel(fn, r, tokens, typeOf, special), added, special, addBosToken, addEosToken };
  return { json: bpeJson(fn, r, metadata, tokens, text, added, special, pre, addBosToken, addEosToken), added, special, addBosToken, addEosToken };
}

// tokenizer.ggml.* of a 'llama' vocabulary -> a SentencePiece ModelProto (BPE, byte fallback when
// the 256 byte tokens are there, the text only escaped: no normalisation rules).
function sentencePieceModel(fn, r, tokens, typeOf, special) {
  const n = tokens.length;
  const scores = r.array('tokenizer.ggml.scores', Float32Array, n);
  const BYTE_TOKEN = /^<0x[0-9A-F]{2}>$/;
  const byteTokens = new Set();
  for (let i = 0; i < n; i++) if (typeOf(i) === BYTE && BYTE_TOKEN.test(tokens.at(i))) byteTokens.add(tokens.at(i));
  const byteFallback = byteTokens.size === 256;
  // Exactly one unknown piece: tokenizer.ggml.unknown_token_id's (else the first of that type).
  let unk = special.unk;
  if (unk === null) {
    for (let i = 0; i < n && unk === null; i++) if (typeOf(i) === UNKNOWN) unk = i;
  }
  if (unk === null) {
    throw invalid(fn, 'the SentencePiece vocabulary has no unknown token (tokenizer.ggml.unknown_token_id, or a token of type 2)',
      'tokenizer.ggml.unknown_token_id');
  }
  const p = new Proto();
  const enc = new TextEncoder();
  for (let i = 0; i < n; i++) {
    let t = typeOf(i);
    // As llama.cpp: an unused token is a token like the others (it merges and is kept), one of
    // an unknown type is normal; a byte token without the whole byte set is not a fallback.
    if (t === UNUSED || t < NORMAL || t > BYTE) t = NORMAL;
    if (t === UNKNOWN && i !== unk) t = CONTROL;
    if (i === unk) t = UNKNOWN;
    if (t === BYTE && !byteFallback) t = CONTROL;
    const raw = tokens.bytes(i);
    const piece = new Proto().bytes(1, raw.length ? raw : enc.encode(`[EMPTY_${i}]`));
    if (scores && scores[i] !== 0) piece.float(2, scores[i]);
    if (t !== NORMAL) piece.int(3, t);
    p.message(1, piece);
  }
  const trainer = new Proto().int(3, 2) // BPE
    .int(35, byteFallback ? 1 : 0).int(40, unk).int(41, special.bos ?? -1).int(42, special.eos ?? -1).int(43, special.pad ?? -1);
  p.message(2, trainer);
  // (llama.cpp's SentencePiece reads add_space_prefix; remove_extra_whitespaces only for T5's Unigram)
  const normalizer = new Proto().bytes(1, enc.encode('identity'))
    .int(3, r.flag('tokenizer.ggml.add_space_prefix', true) ? 1 : 0)
    .int(4, 0)
    .int(5, 1);
  p.message(3, normalizer);
  return p.done();
}

// tokenizer.ggml.* of a 'gpt2' vocabulary -> tokenizer.json: byte-level BPE with llama.cpp's
// pre-tokenizer for tokenizer.ggml.pre, its added tokens, and bos / eos as the template adds them.
function bpeJson(fn, r, metadata, tokens, text, added, special, pre, addBos, addEos) {
  const merges = metadata['tokenizer.ggml.merges'];
  if (!merges || typeof merges.bytes !== 'function') {
    throw invalid(fn, 'a gpt2 tokenizer needs tokenizer.ggml.merges (an array of strings)', 'tokenizer.ggml.merges');
  }
  const vocab = {};
  for (let i = 0; i < tokens.length; i++) {
    const t = text(i);
    // (tokenizer.json's vocabulary is an object: a string twice would lose an id)
    if (Object.hasOwn(vocab, t)) throw invalid(fn, `tokenizer.ggml.tokens has ${JSON.stringify(t)} twice (ids ${vocab[t]} and ${i})`, 'tokenizer.ggml.tokens');
    vocab[t] = i;
  }
  const [patterns, ignoreMerges] = PRE[pre];
  const preTokenizer = {
    type: 'Sequence',
    pretokenizers: [
      ...patterns.map((p) => ({ type: 'Split', pattern: { Regex: p }, behavior: 'Isolated', invert: false })),
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    ],
  };
  const bos = addBos && special.bos !== null, eos = addEos && special.eos !== null;
  const ids = { bos: special.bos, eos: special.eos };
  const tok = (name) => ({ SpecialToken: { id: name, type_id: 0 } });
  const seq = (s) => ({ Sequence: { id: s, type_id: 0 } });
  const specials = {};
  for (const [name, on] of [['bos', bos], ['eos', eos]]) if (on) specials[name] = { id: name, ids: [ids[name]], tokens: [text(ids[name])] };
  const around = (s) => [...(bos ? [tok('bos')] : []), seq(s), ...(eos ? [tok('eos')] : [])];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added.map((a) => ({
      id: a.id, content: a.content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: a.special,
    })),
    normalizer: null,
    pre_tokenizer: preTokenizer,
    post_processor: bos || eos ? { type: 'TemplateProcessing', single: around('A'), pair: [...around('A'), ...around('B')], special_tokens: specials } : null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: special.unk !== null ? text(special.unk) : null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: ignoreMerges, vocab, merges: merges.toArray(),
    },
  };
}

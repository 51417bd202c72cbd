// The Whitespace, Digits and Punctuation pre-tokenizers and Split's five behaviours (with invert),
// against the expectations of Hugging Face tokenizers' own Rust unit tests (punctuation.rs,
// digits.rs, whitespace.rs, split.rs: pieces and byte offsets, the same as character offsets on
// their ASCII inputs), then through a tokenizer.json end to end, and Unicode inputs whose answer
// follows from the Rust definitions (char::is_numeric = N*, is_punc = ASCII punctuation or P*,
// regex \w / \s Unicode-aware).
import test from 'node:test';
import assert from 'node:assert/strict';
import { backends } from '../helpers.mjs';
import { matchPieces, preTokenize, splitPieces } from '../../../web/src/text/pre_tokenizers.js';

const pieces = (text, ...steps) => preTokenize(text, steps).map((w) => [w.text, [w.start, w.start + w.text.length]]);

test('Punctuation isolates each punctuation character (punctuation.rs)', () => {
  assert.deepEqual(pieces('Hey friend!     How are you?!?', { type: 'punctuation', behavior: 'isolated' }), [
    ['Hey friend', [0, 10]], ['!', [10, 11]], ['     How are you', [11, 27]], ['?', [27, 28]], ['!', [28, 29]], ['?', [29, 30]],
  ]);
});

test('Digits groups or isolates digits (digits.rs)', () => {
  assert.deepEqual(pieces('Hey 123 friend!', { type: 'digits', individualDigits: false }),
    [['Hey ', [0, 4]], ['123', [4, 7]], [' friend!', [7, 15]]]);
  assert.deepEqual(pieces('Hey 123 friend!', { type: 'digits', individualDigits: true }),
    [['Hey ', [0, 4]], ['1', [4, 5]], ['2', [5, 6]], ['3', [6, 7]], [' friend!', [7, 15]]]);
});

test('Whitespace keeps words and runs of other characters (whitespace.rs)', () => {
  const ws = { type: 'whitespace' };
  assert.deepEqual(pieces('Hey man!', ws), [['Hey', [0, 3]], ['man', [4, 7]], ['!', [7, 8]]]);
  assert.deepEqual(pieces('How are you doing?', ws),
    [['How', [0, 3]], ['are', [4, 7]], ['you', [8, 11]], ['doing', [12, 17]], ['?', [17, 18]]]);
  assert.deepEqual(pieces('\n', ws), []);
});

test('Split with invert: the five behaviours of split.rs', () => {
  // split.rs splits "How are you doing?" on \w+|[^\w\s]+ inverted: the spaces are the matches,
  // and "doing" and "?" are two pieces side by side.
  const text = 'How are you doing?';
  const inverted = () => matchPieces(text, text.matchAll(/\w+|[^\w\s]+/g)).map(([a, b, m]) => [a, b, !m]);
  const expected = {
    removed: [['How', [0, 3]], ['are', [4, 7]], ['you', [8, 11]], ['doing', [12, 17]], ['?', [17, 18]]],
    isolated: [['How', [0, 3]], [' ', [3, 4]], ['are', [4, 7]], [' ', [7, 8]], ['you', [8, 11]], [' ', [11, 12]], ['doing', [12, 17]], ['?', [17, 18]]],
    mergedWithPrevious: [['How ', [0, 4]], ['are ', [4, 8]], ['you ', [8, 12]], ['doing', [12, 17]], ['?', [17, 18]]],
    mergedWithNext: [['How', [0, 3]], [' are', [3, 7]], [' you', [7, 11]], [' doing', [11, 17]], ['?', [17, 18]]],
    contiguous: [['How', [0, 3]], [' ', [3, 4]], ['are', [4, 7]], [' ', [7, 8]], ['you', [8, 11]], [' ', [11, 12]], ['doing?', [12, 18]]],
  };
  for (const [behavior, want] of Object.entries(expected)) {
    assert.deepEqual(splitPieces(inverted(), behavior).map(([a, b]) => [text.slice(a, b), [a, b]]), want, behavior);
  }
  // The docs' example of the four behaviours: "the-final--countdown" split on '-'.
  const dash = (behavior) => pieces('the-final--countdown', { type: 'split', literal: '-', behavior, invert: false }).map((p) => p[0]);
  assert.deepEqual(dash('removed'), ['the', 'final', 'countdown']);
  assert.deepEqual(dash('isolated'), ['the', '-', 'final', '-', '-', 'countdown']);
  assert.deepEqual(dash('mergedWithPrevious'), ['the-', 'final-', '-', 'countdown']);
  assert.deepEqual(dash('mergedWithNext'), ['the', '-final', '-', '-countdown']);
  assert.deepEqual(dash('contiguous'), ['the', '-', 'final', '--', 'countdown']);
  // invert (split.rs's test): splitting inverted on "Hello" equals splitting on " ".
  assert.deepEqual(pieces('Hello Hello Hello', { type: 'split', literal: 'Hello', behavior: 'removed', invert: true }),
    pieces('Hello Hello Hello', { type: 'split', literal: ' ', behavior: 'removed', invert: false }));
});

test('Unicode: numerals, punctuation and words as the Rust definitions classify them', () => {
  assert.deepEqual(pieces('x٣٤½Ⅻy', { type: 'digits', individualDigits: false }).map((p) => p[0]), ['x', '٣٤½Ⅻ', 'y']);
  assert.deepEqual(pieces('«¿Qué?» $5+', { type: 'punctuation', behavior: 'removed' }).map((p) => p[0]), ['Qué', ' ', '5']);
  assert.deepEqual(pieces('naïve café 東京 a_b ١٢ 😀!', { type: 'whitespace' }).map((p) => p[0]),
    ['naïve', 'café', '東京', 'a_b', '١٢', '😀!']);
});

const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
function wordpieceJson(preTokenizer, words) {
  const vocab = { '[UNK]': 0 };
  words.forEach((w, i) => { vocab[w] = i + 1; });
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: [special(0, '[UNK]')], normalizer: null,
    pre_tokenizer: preTokenizer, post_processor: null, decoder: null,
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

for (const ak of await backends()) {
  test(`${ak.backend}: a tokenizer.json with Whitespace, Digits, Punctuation, Split and CharDelimiterSplit encodes with their pieces and offsets`, async () => {
    const json = wordpieceJson({ type: 'Sequence', pretokenizers: [
      { type: 'Whitespace' }, { type: 'Digits', individual_digits: true }, { type: 'Punctuation', behavior: 'Isolated' }] },
    ['Hey', 'friend', '1', '2', '3', '!', '?']);
    const tok = await ak.Tokenizer.fromJSON(json);
    try {
      const e = tok.encode('Hey 123 friend!?');
      assert.deepEqual(e.tokens, ['Hey', '1', '2', '3', 'friend', '!', '?']);
      assert.deepEqual(e.offsets, [[0, 3], [4, 5], [5, 6], [6, 7], [8, 14], [14, 15], [15, 16]]);
    } finally {
      tok.dispose();
    }
    // Split's behaviours and invert are read from the file; a behaviour that does not exist is refused by path.
    const merged = await ak.Tokenizer.fromJSON(wordpieceJson(
      { type: 'Split', pattern: { String: '-' }, behavior: 'MergedWithNext', invert: false }, ['the', '-final', '-', '-countdown']));
    try {
      assert.deepEqual(merged.encode('the-final--countdown').tokens, ['the', '-final', '-', '-countdown']);
    } finally {
      merged.dispose();
    }
    // CharDelimiterSplit: the pieces between the delimiters (char_delimiter_split.rs: Removed).
    const delimited = await ak.Tokenizer.fromJSON(wordpieceJson({ type: 'CharDelimiterSplit', delimiter: '_' }, ['Hello', 'world', 'again', 'é']));
    try {
      const e = delimited.encode('Hello_world__again_é_');
      assert.deepEqual(e.tokens, ['Hello', 'world', 'again', 'é']);
      assert.deepEqual(e.offsets, [[0, 5], [6, 11], [13, 18], [19, 20]]);
    } finally {
      delimited.dispose();
    }
    await assert.rejects(ak.Tokenizer.fromJSON(wordpieceJson({ type: 'CharDelimiterSplit', delimiter: '__' }, ['a'])),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'pre_tokenizer.delimiter');
    await assert.rejects(ak.Tokenizer.fromJSON(wordpieceJson({ type: 'Punctuation', behavior: 'Sideways' }, ['a'])),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'pre_tokenizer.behavior' && /Sideways.*MergedWithNext/.test(e.message));
    await assert.rejects(ak.Tokenizer.fromJSON(wordpieceJson({ type: 'Digits', individual_digits: 'yes' }, ['a'])),
      (e) => e.argument === 'pre_tokenizer.individual_digits');
  });
}

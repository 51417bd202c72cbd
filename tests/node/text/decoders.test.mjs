// tokenizer.json decoders (ByteLevel, WordPiece, Metaspace, ByteFallback, Fuse, Strip, Replace,
// BPEDecoder, Sequence): Hugging Face tokenizers' Rust unit-test vectors, then whole files decoded
// by attnkit and by transformers.js (@huggingface/tokenizers) where the two libraries agree, and
// a file without a decoder (the tokens joined by spaces). transformers' clean-up of the whole text
// is the option cleanUpTokenizationSpaces.
import test from 'node:test';
import assert from 'node:assert/strict';
import { backends } from '../helpers.mjs';
import { decodeChain } from '../../../web/src/text/decoders.js';

test('the decoders on the Rust unit tests\' vectors', () => {
  assert.equal(decodeChain(['##uelo', 'Ara', '##új', '##o', 'No', '##guera'], [{ type: 'wordPiece', prefix: '##', cleanup: false }]),
    '##uelo Araújo Noguera');
  const fallback = (t) => decodeChain(t, [{ type: 'byteFallback' }, { type: 'fuse' }]);
  assert.equal(fallback(['Hey', 'friend!']), 'Heyfriend!');
  assert.equal(fallback(['<0x61>']), 'a');
  assert.equal(fallback(['<0xE5>']), '\uFFFD');
  assert.equal(fallback(['<0xE5>', '<0x8f>']), '\uFFFD\uFFFD');
  assert.equal(fallback(['<0xE5>', '<0x8f>', '<0xab>']), '叫');
  assert.equal(fallback(['<0xE5>', '<0x8f>', '<0xab>', 'a']), '叫a');
  assert.equal(fallback(['<0xE5>', '<0x8f>', 'a']), '\uFFFD\uFFFDa');
  const strip = (content, start, stop, t) => decodeChain(t, [{ type: 'strip', content, start, stop }, { type: 'fuse' }]);
  assert.equal(strip('H', 1, 0, ['Hey', ' friend!', 'HHH']), 'ey friend!HH');
  assert.equal(strip('y', 0, 1, ['Hey', ' friend!']), 'He friend!');
  assert.equal(decodeChain(['My</w>', 'na', 'me</w>', 'is</w>', 'John'], [{ type: 'bpe', suffix: '</w>' }]), 'My name is John');
  const meta = (scheme) => decodeChain(['▁Hey', '▁friend', '!', '▁▁x'], [{ type: 'metaspace', replacement: '▁', prependScheme: scheme }]);
  assert.equal(meta('always'), 'Hey friend!  x');
  assert.equal(meta('never'), ' Hey friend!  x');
  // ByteLevel: an added token (characters outside the byte alphabet) goes in as its UTF-8.
  assert.equal(decodeChain(['Hello', 'Ġw', 'orld', '<|end|>', 'Ċ'], [{ type: 'byteLevel' }]), 'Hello world<|end|>\n');
});

const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
function file(decoder, tokens, model = 'WordPiece') {
  const vocab = {};
  tokens.forEach((t, i) => { vocab[t] = i; });
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: [special(0, '[UNK]')], normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' }, post_processor: null, decoder,
    model: model === 'WordPiece' ? { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab }
      : { type: 'BPE', dropout: null, unk_token: '[UNK]', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: [] },
  };
}
const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');

for (const ak of await backends()) {
  test(`${ak.backend}: files decode as transformers.js decodes them`, async () => {
    const cases = [
      [{ type: 'WordPiece', prefix: '##', cleanup: true }, ['[UNK]', 'the', 'cat', '##s', "'", 's', '.', 'do', 'not', ',', 'n\'t']],
      [{ type: 'BPEDecoder', suffix: '</w>' }, ['[UNK]', 'my</w>', 'na', 'me</w>', 'is</w>', 'jo', 'hn</w>']],
      [{ type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 }] }, ['[UNK]', '▁Hey', '▁fri', 'end', '<0xE5>', '<0x8F>', '<0xAB>', '!', '▁▁x']],
      [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }, ['[UNK]', '▁Hey', '▁fri', 'end', '!']],
      [{ type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true }, ['[UNK]', 'Hello', 'Ġw', 'orld', 'Ċ', 'Ã©']],
    ];
    for (const [decoder, tokens] of cases) {
      const json = file(decoder, tokens);
      const ours = await ak.Tokenizer.fromJSON(json);
      const hf = new HfTokenizer(json, {});
      try {
        const ids = Array.from({ length: tokens.length - 1 }, (_, i) => i + 1);
        for (const seq of [ids, ids.slice().reverse(), ids.slice(2), [ids[0]]]) {
          // transformers' clean_up_tokenization_spaces is decode's cleanUpTokenizationSpaces (off by default).
          for (const clean of [false, true]) {
            assert.equal(ours.decode(seq, { cleanUpTokenizationSpaces: clean }), hf.decode(seq, { clean_up_tokenization_spaces: clean }),
              `${decoder.type} ${JSON.stringify(seq.map((i) => tokens[i]))} clean ${clean}`);
          }
        }
      } finally {
        ours.dispose();
      }
    }
  });

  test(`${ak.backend}: no decoder joins the tokens with spaces; unsupported decoders are refused by path`, async () => {
    const tok = await ak.Tokenizer.fromJSON(file(null, ['[UNK]', 'un', '##able']));
    try {
      assert.equal(tok.decode([1, 2]), 'un ##able');
    } finally {
      tok.dispose();
    }
    await assert.rejects(ak.Tokenizer.fromJSON(file({ type: 'CTC' }, ['[UNK]'])),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'decoder.type' && /CTC.*BPEDecoder/.test(e.message));
    await assert.rejects(ak.Tokenizer.fromJSON(file({ type: 'Sequence', decoders: [{ type: 'Strip', content: 'ab', start: 1, stop: 0 }] }, ['[UNK]'])),
      (e) => e.argument === 'decoder.decoders[0].content');
    await assert.rejects(ak.Tokenizer.fromJSON(file({ type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, ['[UNK]'])),
      (e) => e.argument === 'decoder.pattern');
  });
}

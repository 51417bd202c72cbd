// text-generation: a chat rendered with the model's chat template by @huggingface/jinja and encoded
// by its tokenizer to the ids tests/golden/pipelines.py built from the template and the BPE by
// hand, continued greedily as PyTorch continues them; streaming; strings with and without the prompt.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Template } from '@huggingface/jinja';
import { FIXTURES, ak, golden } from './helpers.mjs';

const g = golden.chat;
const CHAT = path.join(FIXTURES, g.model);

test('a chat: the template rendered by @huggingface/jinja, the tokenizer\'s ids, the greedy answer PyTorch gives', async () => {
  const config = JSON.parse(fs.readFileSync(path.join(CHAT, 'tokenizer_config.json'), 'utf8'));
  const rendered = new Template(config.chat_template).render({ messages: g.messages, add_generation_prompt: true, eos_token: config.eos_token });
  assert.equal(rendered, g.rendered);
  const chat = await ak.pipeline('text-generation', CHAT);
  try {
    assert.deepEqual(Array.from(chat.tokenizer.encode(rendered, { addSpecialTokens: false }).inputIds.data), g.promptIds);
    const steps = [];
    let streamed = '';
    const out = await chat(g.messages, {
      maxNewTokens: g.newTokens,
      onToken: (e) => {
        steps.push(e.tokenIds[0]);
        streamed += e.text;
      },
    });
    assert.deepEqual(steps, g.generatedIds);
    assert.deepEqual(out, [{ generated_text: [...g.messages, { role: 'assistant', content: g.content }] }]);
    assert.equal(streamed, g.content);
    // The messages are not changed; a list of chats gives a list of results.
    assert.equal(g.messages.length, 2);
    const both = await chat([g.messages, g.messages], { maxNewTokens: 3 });
    assert.equal(both.length, 2);
    assert.deepEqual(both[0], both[1]);
    assert.equal(both[0][0].generated_text.at(-1).content, chat.tokenizer.decode(g.generatedIds.slice(0, 3), { skipSpecialTokens: true }));
    // A template given by the call, and one that fails, are named.
    const plain = await chat(g.messages, { maxNewTokens: 2, chatTemplate: '{% for m in messages %}{{ m.content }}{% endfor %}' });
    assert.equal(plain[0].generated_text.length, 3);
    await assert.rejects(chat(g.messages, { chatTemplate: '{% for m in messages %}{{ m.content }' }),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'chat_template' && /the chat template failed/.test(e.message));
  } finally {
    chat.dispose();
  }
});

test('a prompt: the full text by default, only the new text with returnFullText: false; a list gives a list', async () => {
  const gen = await ak.pipeline('text-generation', path.join(FIXTURES, 'repos/gpt2'), { maxNewTokens: 5 });
  try {
    const direct = await gen.model.generateText(gen.tokenizer, 'the cat', { maxNewTokens: 5 });
    assert.deepEqual(await gen('the cat'), [{ generated_text: `the cat${direct.text}` }]);
    assert.deepEqual(await gen('the cat', { returnFullText: false }), [{ generated_text: direct.text }]);
    const many = await gen(['the cat', 'hello world is'], { maxNewTokens: 3, returnFullText: false });
    const each = await gen.model.generateText(gen.tokenizer, ['the cat', 'hello world is'], { maxNewTokens: 3 });
    assert.deepEqual(many, each.text.map((t) => [{ generated_text: t }]));
    // Sampling options pass through to generate, checked there.
    await assert.rejects(gen('the cat', { topK: 3 }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /doSample/.test(e.message));
    const a = await gen('the cat', { doSample: true, seed: 7, temperature: 0.8 });
    assert.deepEqual(await gen('the cat', { doSample: true, seed: 7, temperature: 0.8 }), a);
    // No chat template in this tokenizer's files.
    await assert.rejects(gen([{ role: 'user', content: 'the cat' }]),
      (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.argument === 'chatTemplate' && /no chat template/.test(e.message));
  } finally {
    gen.dispose();
  }
});

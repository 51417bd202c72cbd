// text-generation: a causal LM continues a prompt, or answers a chat rendered with the model's
// chat template, shaped as transformers.js's TextGenerationPipeline returns it: [{generated_text}]
// per input, the text (the prompt and the continuation with returnFullText, the default for
// strings) or, for a chat, the messages with the assistant's answer appended. Generation is
// model.generateText's (greedy unless doSample; onToken streams the new text), at most 256 new
// tokens unless maxNewTokens says otherwise (fewer when the model's positions run out first).
import { boolean, describe } from '../runtime/args.js';
import { GENERATE_OPTIONS } from '../models/generate.js';
import { bad } from './common.js';
import { isChat, pickTemplate, renderChat } from './chat_template.js';

const GENERATION = GENERATE_OPTIONS.filter((k) => !['tokenizer', 'attentionMask', 'outputLogits', 'outputScores', 'outputProbabilities'].includes(k));

export const textGeneration = {
  options: [...GENERATION, 'returnFullText', 'addSpecialTokens', 'chatTemplate', 'tools', 'documents'],
  defaults: {},
  check(fn, o) {
    if (o.returnFullText !== undefined) boolean(fn, 'returnFullText', o.returnFullText);
    if (o.addSpecialTokens !== undefined) boolean(fn, 'addSpecialTokens', o.addSpecialTokens);
    if (o.tools !== undefined && !Array.isArray(o.tools)) throw bad(fn, 'tools', `tools must be a list of tool descriptions, got ${describe(o.tools)}`);
    if (o.documents !== undefined && !Array.isArray(o.documents)) throw bad(fn, 'documents', `documents must be a list, got ${describe(o.documents)}`);
  },
  create(ctx, fn) {
    const { model } = ctx;
    if (model.spec.head || !model.spec.layer.causal) {
      throw bad(fn, 'source', `text-generation needs a causal language model (*ForCausalLM, GPT-2, LLaMA, ...), got ${model.spec.architecture ? `a ${model.spec.architecture}` : `a ${model.spec.family} model`}`);
    }
    model._checkHead(fn, 'generate');
  },
  /**
   * A prompt, a chat ([{role, content}, ...]), or a list of either -> [{generated_text}] per input
   * (a list of those for a list).
   */
  async run(ctx, fn, o, inputs) {
    const { model, tokenizer } = ctx;
    const chats = isChat(inputs) ? [inputs] : Array.isArray(inputs) && inputs.length > 0 && inputs.every(isChat) ? inputs : null;
    const batched = chats ? !isChat(inputs) : Array.isArray(inputs);
    let prompts;
    if (chats) {
      const template = pickTemplate(fn, ctx.chatTemplate, o.chatTemplate, o.tools);
      prompts = chats.map((messages) => renderChat(fn, template, tokenizer, messages, { tools: o.tools, documents: o.documents }));
    } else {
      prompts = batched ? inputs : [inputs];
      if (prompts.length === 0) throw bad(fn, 'texts', 'the list of inputs is empty');
      prompts.forEach((p, i) => {
        if (typeof p !== 'string') {
          throw bad(fn, batched ? `texts[${i}]` : 'texts', `an input must be a string, a chat (a list of {role, content}) or a list of either, got ${describe(p)}`);
        }
      });
    }
    // A chat's template writes the special tokens itself.
    const addSpecialTokens = chats ? false : o.addSpecialTokens ?? true;
    const promptIds = prompts.map((p) => Array.from(tokenizer.encode(p, { addSpecialTokens }).inputIds.data));
    const longest = Math.max(...promptIds.map((ids) => ids.length));
    const gen = Object.fromEntries(GENERATION.filter((k) => k !== 'onToken' && o[k] !== undefined).map((k) => [k, o[k]]));
    const generated = prompts.map(() => []);
    const done = new Uint8Array(prompts.length);
    await model.generateText(tokenizer, batched ? prompts : prompts[0], {
      ...gen, addSpecialTokens, maxNewTokens: o.maxNewTokens ?? Math.max(1, Math.min(256, model.contextSize - longest)),
      onToken: (event) => {
        event.tokenIds.forEach((id, b) => {
          if (done[b]) return;
          generated[b].push(id);
          if (event.finished[b]) done[b] = 1;
        });
        return o.onToken?.(event);
      },
    });
    const results = prompts.map((prompt, b) => {
      const skip = { skipSpecialTokens: true };
      const full = ctx.decode([...promptIds[b], ...generated[b]], skip);
      const before = ctx.decode(promptIds[b], skip);
      const added = full.startsWith(before) ? full.slice(before.length) : ctx.decode(generated[b], skip);
      if (chats) return [{ generated_text: [...chats[b], { role: 'assistant', content: added }] }];
      return [{ generated_text: o.returnFullText === false ? added : prompt + added }];
    });
    return batched ? results : results[0];
  },
};

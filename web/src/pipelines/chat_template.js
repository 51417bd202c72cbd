// Chat templates: a model's Jinja template (tokenizer_config.json's chat_template, or the
// chat_template.jinja / chat_template.json file newer saves write) rendered with Hugging Face's own
// Jinja implementation (@huggingface/jinja, the one transformers.js uses), as transformers'
// apply_chat_template renders it: messages, add_generation_prompt, tools, documents and the
// tokenizer's special tokens as variables.
// By path, not by package name: the unbundled source runs in pages and workers without an import
// map (npm start serves node_modules); scripts/bundle.mjs bundles it into web/dist/attnkit.mjs.
import { Template } from '../../../node_modules/@huggingface/jinja/dist/index.js';
import { AttnkitError } from '../runtime/errors.js';
import { bad } from './common.js';

const SPECIAL = ['bos', 'eos', 'unk', 'sep', 'pad', 'cls', 'mask'];

/**
 * The chat template of a folder's files: a string, or {name: template} when the model has several
 * (tokenizer_config.json's list of {name, template}), or null. `read(name)` -> the file's text or null.
 */
export async function readChatTemplate(fn, read, tokenizerConfig) {
  const jinja = await read('chat_template.jinja');
  if (jinja !== null) return jinja;
  const json = await read('chat_template.json');
  let t = tokenizerConfig?.chat_template;
  if (json !== null) {
    try {
      t = JSON.parse(json).chat_template;
    } catch (e) {
      throw bad(fn, 'chat_template.json', `chat_template.json is not valid JSON (${e.message})`);
    }
  }
  if (t === undefined || t === null) return null;
  if (typeof t === 'string') return t;
  if (Array.isArray(t) && t.every((x) => typeof x?.name === 'string' && typeof x?.template === 'string')) {
    return Object.fromEntries(t.map((x) => [x.name, x.template]));
  }
  throw bad(fn, 'chat_template', 'chat_template must be a string or a list of {name, template}');
}

/** transformers' get_chat_template: the template given (a template or one of the model's names), the model's, its 'tool_use' or 'default'. */
export function pickTemplate(fn, own, given, tools) {
  if (own && typeof own === 'object') {
    if (typeof given === 'string' && Object.hasOwn(own, given)) return own[given];
    if (given === undefined) {
      if (tools !== undefined && Object.hasOwn(own, 'tool_use')) return own.tool_use;
      if (Object.hasOwn(own, 'default')) return own.default;
      throw bad(fn, 'chatTemplate', `this model has several chat templates and none is 'default': pass chatTemplate, one of ${Object.keys(own).sort().join(', ')}`);
    }
  }
  if (given !== undefined) {
    if (typeof given !== 'string') throw bad(fn, 'chatTemplate', 'chatTemplate must be a Jinja template (a string) or the name of one of the model\'s');
    return given;
  }
  if (typeof own === 'string') return own;
  throw bad(fn, 'chatTemplate', 'the tokenizer has no chat template (tokenizer_config.json chat_template, chat_template.jinja): ' +
    'pass chatTemplate, or a string prompt');
}

const compiled = new Map();

/** A conversation rendered with a template; the tokenizer's special tokens are its variables too. */
export function renderChat(fn, template, tokenizer, messages, { addGenerationPrompt = true, tools, documents } = {}) {
  let t = compiled.get(template);
  try {
    if (!t) {
      t = new Template(template);
      if (compiled.size > 16) compiled.clear();
      compiled.set(template, t);
    }
    const vars = { messages, add_generation_prompt: addGenerationPrompt };
    if (tools !== undefined) vars.tools = tools;
    if (documents !== undefined) vars.documents = documents;
    for (const k of SPECIAL) if (tokenizer[`${k}Token`]) vars[`${k}_token`] = tokenizer[`${k}Token`];
    return t.render(vars);
  } catch (e) {
    throw new AttnkitError(`${fn}: the chat template failed: ${e?.message ?? e}`, { code: 'ERR_INVALID_ARGUMENT', argument: 'chat_template', cause: e });
  }
}

/** A chat: a non-empty list of {role, content} messages. */
export const isChat = (x) => Array.isArray(x) && x.length > 0 &&
  x.every((m) => m !== null && typeof m === 'object' && !Array.isArray(m) && typeof m.role === 'string' && 'content' in m);

// fill-mask: a masked-LM head's best tokens for the mask token, after Hugging Face's
// FillMaskPipeline: softmax over the vocabulary at each mask, the topK tokens as {score, token,
// token_str, sequence} (the sequence decoded with the token in place, special tokens skipped when
// the text has one mask). A text with several masks gives one list per mask.
import { bad, encodeBatch, softmax, textsInput, topKOption } from './common.js';

export const fillMask = {
  options: ['topK'],
  defaults: { topK: 5 },
  check(fn, o) {
    topKOption(fn, o.topK);
  },
  create(ctx, fn) {
    const { model, tokenizer } = ctx;
    if (model.spec.head || !model._family.mlm) {
      throw bad(fn, 'source', `fill-mask needs a masked language model (*ForMaskedLM), got ${model.spec.architecture ? `a ${model.spec.architecture}` : `a ${model.spec.family} model`}`);
    }
    model._checkHead(fn, 'outputLogits');
    if (tokenizer.maskTokenId === null) {
      throw bad(fn, 'mask_token', 'the tokenizer names no mask token (tokenizer_config.json / special_tokens_map.json mask_token)');
    }
  },
  /** texts -> per text, its topK fillings (a list per mask when a text has several). */
  run(ctx, fn, o, texts) {
    const { texts: list, batched } = textsInput(fn, 'texts', texts);
    const { model, tokenizer } = ctx;
    const enc = encodeBatch(ctx, list);
    const logits = model.forward(enc, { outputLogits: true }).logits;
    const [, L, V] = logits.dims;
    const mask = tokenizer.maskTokenId, pad = tokenizer.padTokenId;
    const results = list.map((_, b) => {
      const ids = Array.from(enc.inputIds.data.subarray(b * L, (b + 1) * L)).filter((id, i) => enc.attentionMask.data[b * L + i] === 1);
      const at = ids.flatMap((id, i) => (id === mask ? [i] : []));
      if (at.length === 0) {
        throw bad(fn, batched ? `texts[${b}]` : 'texts', `no mask token (${tokenizer.maskToken}) in ${batched ? `texts[${b}]` : 'the text'}`);
      }
      const single = at.length === 1;
      const perMask = at.map((i) => {
        const probs = softmax(logits.data.subarray((b * L + i) * V, (b * L + i + 1) * V));
        const order = Array.from(probs, (_, k) => k).sort((x, y) => probs[y] - probs[x] || x - y).slice(0, Math.min(o.topK, V));
        return order.map((token) => {
          const filled = ids.slice();
          filled[i] = token;
          return {
            score: probs[token], token, token_str: ctx.decode([token]),
            sequence: ctx.decode(filled.filter((id) => id !== pad), { skipSpecialTokens: single }),
          };
        });
      });
      return single ? perMask[0] : perMask;
    });
    return batched ? results : results[0];
  },
};

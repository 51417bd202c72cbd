#!/usr/bin/python3
"""The task heads the decoder families and ModernBERT still lacked: tiny checkpoints and what PyTorch
computes on them. The base models are the other generators' forwards, imported (gqa_decoder.decoder for
Qwen2 and LLaMA, modernbert.modernbert_forward / head, gemma2.gemma2_forward); this file adds the heads,
written after current transformers (>= 4.54; see each MODELING below) in plain torch.

Checkpoints (tests/fixtures/families/<name>/ + <name>.json):
  qwen2-tokcls       Qwen2ForTokenClassification = GenericForTokenClassification (modeling_layers.py):
                     base `model.` (Qwen2Model), logits = score(last_hidden_state) on every token,
                     `score` Linear(hidden, num_labels) WITH bias; 5 labels.
  qwen2-qa           Qwen2ForQuestionAnswering = GenericForQuestionAnswering with base_model_prefix
                     "transformer" (kept for BC): base `transformer.` (transformer.embed_tokens.weight,
                     transformer.layers.N..., transformer.norm.weight), qa_outputs Linear(hidden, 2) with
                     bias on every token, split into start / end logits [B, L].
  llama-qa           LlamaForQuestionAnswering: the same (base `transformer.`, qa_outputs with bias).
  modernbert-tokcls  ModernBertForTokenClassification: base `model.`, logits =
                     classifier(head.norm(gelu(head.dense(last_hidden_state)))) on every token (head.dense
                     without bias as classifier_bias is false, head.norm a LayerNorm without bias as
                     norm_bias is false, classifier WITH bias); 5 labels.
  modernbert-qa      ModernBertForQuestionAnswering (transformers PR #35566, not in 4.48): the same head,
                     then `classifier` (not qa_outputs) Linear(hidden, num_labels = 2) with bias, split
                     into start / end logits.
  gemma2-seqcls      Gemma2ForSequenceClassification = GemmaForSequenceClassification =
                     LlamaForSequenceClassification = GenericForSequenceClassification: base `model.`,
                     score Linear(hidden, num_labels) WITHOUT bias on the last hidden state (after
                     model.norm), then the row's rightmost token != pad_token_id. No soft-capping: the
                     final_logit_softcapping is applied by Gemma2ForCausalLM only (the fixture's logits
                     exceed the cap, so a loader that capped them would miss).

Run: /usr/bin/python3 tests/golden/families/task_heads.py"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import F, IDS, MASK, additive_mask, f32list, i32list, rnd, save, torch, write_case  # noqa: E402
from bert_heads import NER, SENTIMENT, labels_config  # noqa: E402
from gqa_decoder import check_forward, decoder  # noqa: E402
import gemma2  # noqa: E402
import modernbert  # noqa: E402
import qwen2  # noqa: E402

GENERIC = ("src/transformers/modeling_layers.py (GenericForSequenceClassification / GenericForTokenClassification / "
           "GenericForQuestionAnswering, main at commit 00029cfa0ed780d1ddb6e5d199bd92e86c5791a2, >= 4.54)")
MODELING_QWEN2 = (qwen2.MODELING + "; " + GENERIC + "; modeling_qwen2.py: Qwen2ForTokenClassification(GenericFor"
                  "TokenClassification), Qwen2ForQuestionAnswering(GenericForQuestionAnswering) with base_model_prefix "
                  "'transformer' (4.48: self.transformer = Qwen2Model, the same names)")
MODELING_LLAMA = ("transformers src/transformers/models/llama/modeling_llama.py (check_model_inputs era, >= 4.54; "
                  "same numbers as 4.48): LlamaRMSNorm, LlamaAttention eager (GQA, rotate-half RoPE, default "
                  "rope_type), LlamaMLP (SiLU-gated, mlp_bias false); LlamaForQuestionAnswering(GenericForQuestion"
                  "Answering) with base_model_prefix 'transformer' (4.48: self.transformer = LlamaModel, the same "
                  "names); " + GENERIC)
MODELING_MODERNBERT = (modernbert.MODELING + "; ModernBertForTokenClassification and ModernBertForQuestionAnswering "
                       "(self.model, self.head = ModernBertPredictionHead, self.drop, self.classifier) in the current "
                       "modeling_modernbert.py; ModernBertForQuestionAnswering from PR #35566 (not in 4.48)")
MODELING_GEMMA2 = (gemma2.MODELING + "; Gemma2ForSequenceClassification(GemmaForSequenceClassification) -> "
                   "LlamaForSequenceClassification -> " + GENERIC)
QA_LABELS = ["LABEL_0", "LABEL_1"]  # num_labels 2: PretrainedConfig's default labels


def sorted_config(cfg, arch, labels, **extra):
    return dict(sorted({**cfg, "architectures": [arch], **labels_config(labels), **extra}.items()))


def prefixed(t, old, new):
    return {(new + k[len(old):] if k.startswith(old) else k): v for k, v in t.items()}


def positions():
    L = IDS.shape[1]
    return torch.arange(L)[None].expand(IDS.shape[0], L)


def finite(*ts):
    for t in ts:
        assert torch.isfinite(t).all()


def base_fields(ids, hidden, attns):
    return {"dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(MASK),
            "hiddenStates": [f32list(h) for h in hidden], "attentions": [f32list(a) for a in attns]}


def head_fields(arch, labels, base, head):
    return {"architecture": arch, "numLabels": len(labels), "labels": labels, "basePrefix": base, "headTensors": head}


# ------------------------------------------------------------------------------------ Qwen2 / LLaMA
def qwen2_tokcls():
    seed = 320
    cfg = qwen2.config("Qwen2ForTokenClassification")
    cfg = sorted_config(cfg, "Qwen2ForTokenClassification", NER, pad_token_id=0)
    g = torch.Generator().manual_seed(seed)
    t = qwen2.backbone(g)
    t["score.weight"], t["score.bias"] = rnd(g, len(NER), qwen2.D, sd=0.5), rnd(g, len(NER), sd=0.1)
    w = save("qwen2-tokcls", cfg, t)
    with torch.no_grad():
        hidden, attns = decoder(w, cfg, IDS, MASK, positions())
        logits = F.linear(hidden[-1], w["score.weight"], w["score.bias"])  # [B, L, 5], every token (dropout: eval)
    check_forward(hidden, attns, MASK)
    finite(logits)
    write_case("qwen2-tokcls", {"family": "qwen2", "modeling": MODELING_QWEN2, "seed": seed,
                                **head_fields("Qwen2ForTokenClassification", NER, "model.", ["score.weight", "score.bias"]),
                                **base_fields(IDS, hidden, attns), "logits": {"tokenClassification": f32list(logits)}})


def decoder_qa(name, family, arch, cfg, t, seed, modeling):
    """GenericForQuestionAnswering over a `transformer.`-prefixed base: qa_outputs on every token."""
    g = torch.Generator().manual_seed(seed + 1)
    t = prefixed(t, "model.", "transformer.")
    t["qa_outputs.weight"], t["qa_outputs.bias"] = rnd(g, 2, cfg["hidden_size"], sd=0.5), rnd(g, 2, sd=0.1)
    w = save(name, cfg, t)
    assert not any(k.startswith("model.") for k in w)
    with torch.no_grad():
        hidden, attns = decoder(prefixed(w, "transformer.", "model."), cfg, IDS, MASK, positions())
        logits = F.linear(hidden[-1], w["qa_outputs.weight"], w["qa_outputs.bias"])  # [B, L, 2]
    start, end = (x.squeeze(-1) for x in logits.split(1, dim=-1))
    check_forward(hidden, attns, MASK)
    finite(start, end)
    write_case(name, {"family": family, "modeling": modeling, "seed": seed,
                      **head_fields(arch, QA_LABELS, "transformer.", ["qa_outputs.weight", "qa_outputs.bias"]),
                      **base_fields(IDS, hidden, attns), "startLogits": f32list(start), "endLogits": f32list(end)})


def qwen2_qa():
    seed = 330
    cfg = sorted_config(qwen2.config("Qwen2ForQuestionAnswering"), "Qwen2ForQuestionAnswering", QA_LABELS)
    decoder_qa("qwen2-qa", "qwen2", "Qwen2ForQuestionAnswering", cfg, qwen2.backbone(torch.Generator().manual_seed(seed)),
               seed, MODELING_QWEN2)


def llama_config(arch):
    # The key set of meta-llama/Llama-3.2-1B's config.json without its llama3 rope_scaling (null, as
    # TinyLlama's), sizes shrunk to qwen2.py's; no q/k/v/o or MLP biases.
    return {"architectures": [arch], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1,
            "eos_token_id": 2, "head_dim": qwen2.HD, "hidden_act": "silu", "hidden_size": qwen2.D,
            "initializer_range": 0.02, "intermediate_size": qwen2.FF, "max_position_embeddings": qwen2.P,
            "mlp_bias": False, "model_type": "llama", "num_attention_heads": qwen2.H,
            "num_hidden_layers": qwen2.LAYERS, "num_key_value_heads": qwen2.G, "pretraining_tp": 1,
            "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 500000.0, "tie_word_embeddings": True,
            "torch_dtype": "float32", "transformers_version": "4.45.0.dev0", "use_cache": True,
            "vocab_size": qwen2.V}


def llama_qa():
    seed = 340
    cfg = sorted_config(llama_config("LlamaForQuestionAnswering"), "LlamaForQuestionAnswering", QA_LABELS)
    # Qwen2's backbone without its q/k/v biases is LLaMA's (the same tensor names, the same shapes).
    t = {k: v for k, v in qwen2.backbone(torch.Generator().manual_seed(seed)).items() if not k.endswith(".bias")}
    decoder_qa("llama-qa", "llama", "LlamaForQuestionAnswering", cfg, t, seed, MODELING_LLAMA)


# ------------------------------------------------------------------------------------ ModernBERT
def modernbert_base(g, cfg):
    """ModernBertModel's tensors (`model.` prefix) in modernbert.py's shapes and scales."""
    V, D, Fd = cfg["vocab_size"], cfg["hidden_size"], cfg["intermediate_size"]
    t = {"model.embeddings.tok_embeddings.weight": rnd(g, V, D, sd=0.5), "model.embeddings.norm.weight": 1 + rnd(g, D, sd=0.1)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        if i:
            t[p + "attn_norm.weight"] = 1 + rnd(g, D, sd=0.1)  # layer 0: Identity, no tensor
        t[p + "attn.Wqkv.weight"] = rnd(g, 3 * D, D, sd=0.2)
        t[p + "attn.Wo.weight"] = rnd(g, D, D)
        t[p + "mlp_norm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "mlp.Wi.weight"] = rnd(g, 2 * Fd, D)
        t[p + "mlp.Wo.weight"] = rnd(g, D, Fd)
    t["model.final_norm.weight"] = 1 + rnd(g, D, sd=0.1)
    t["head.dense.weight"], t["head.norm.weight"] = rnd(g, D, D, sd=0.3), 1 + rnd(g, D, sd=0.1)
    return t


def modernbert_heads():
    ids = IDS.masked_fill(MASK == 0, modernbert.PAD)  # the config's pad_token_id in the padded positions
    for name, arch, labels, seed in [("modernbert-tokcls", "ModernBertForTokenClassification", NER, 360),
                                     ("modernbert-qa", "ModernBertForQuestionAnswering", QA_LABELS, 370)]:
        cfg = sorted_config(modernbert.config(arch), arch, labels)
        assert not cfg["classifier_bias"] and not cfg["norm_bias"]
        g = torch.Generator().manual_seed(seed)
        t = modernbert_base(g, cfg)
        t["classifier.weight"], t["classifier.bias"] = rnd(g, len(labels), cfg["hidden_size"], sd=0.5), rnd(g, len(labels), sd=0.1)
        w = save(name, cfg, t)
        with torch.no_grad():
            hidden, attns, last = modernbert.modernbert_forward(w, cfg, ids, MASK)
            # head on every token (no pooling), dropout the identity, classifier with bias
            logits = modernbert.head(w, cfg, last) @ w["classifier.weight"].T + w["classifier.bias"]
        finite(*hidden, *attns, last, logits)
        for i, a in enumerate(attns):
            vis = additive_mask(MASK, False, local=None if modernbert.is_global(cfg, i) else cfg["local_attention"]) == 0
            assert (a.sum(-1) - 1).abs().max() < 1e-5 and float(a.masked_fill(vis, 0).abs().max()) == 0.0
        case = {"family": "modernbert", "modeling": MODELING_MODERNBERT, "seed": seed,
                **head_fields(arch, labels, "model.", ["head.dense.weight", "head.norm.weight", "classifier.weight",
                                                       "classifier.bias"]),
                **base_fields(ids, hidden, attns),
                "positionIds": "arange(L) for every row (eager path; the padded positions are computed too)",
                "globalLayers": [i for i in range(cfg["num_hidden_layers"]) if modernbert.is_global(cfg, i)],
                "hiddenStatesLastIsBeforeFinalNorm": True, "lastHiddenState": f32list(last)}
        if arch.endswith("QuestionAnswering"):
            start, end = (x.squeeze(-1) for x in logits.split(1, dim=-1))
            case.update({"startLogits": f32list(start), "endLogits": f32list(end)})
        else:
            case["logits"] = {"tokenClassification": f32list(logits)}
        write_case(name, case)


# ------------------------------------------------------------------------------------ Gemma 2
def gemma2_seqcls():
    arch = "Gemma2ForSequenceClassification"
    cfg = sorted_config(gemma2.config(), arch, SENTIMENT)
    assert cfg["pad_token_id"] == 0
    L = IDS.shape[1]
    for seed in range(380, 480):
        t = gemma2.weights(cfg, seed)
        t["score.weight"] = rnd(torch.Generator().manual_seed(seed + 1000), len(SENTIMENT), cfg["hidden_size"], sd=1.0)
        w = {k: v.float() for k, v in t.items()}
        with torch.no_grad():
            hidden, attns, _, pre_s, _ = gemma2.gemma2_forward(w, cfg, IDS, MASK, torch.arange(L))
            scores = F.linear(hidden[-1], w["score.weight"])  # [B, L, 3] after model.norm, no bias, no soft-cap
        last = (torch.arange(L, dtype=torch.int32) * (IDS != cfg["pad_token_id"]).int()).argmax(-1)
        pooled = scores[torch.arange(IDS.shape[0]), last]
        if pre_s > 1.5 * gemma2.CAP_ATTN and float(pooled.abs().max()) > 1.5 * gemma2.CAP_FINAL:
            break
        print("gemma2-seqcls: seed", seed, "rejected: max |score| before cap", pre_s, "max |logit|",
              float(pooled.abs().max()))
    else:
        raise SystemExit("no seed passed")
    finite(*hidden, *attns, pooled)
    for i, a in enumerate(attns):
        vis = additive_mask(MASK, True, window=cfg["sliding_window"] if gemma2.is_sliding(cfg, i) else None) == 0
        assert (a.sum(-1) - 1).abs().max() < 1e-5 and float(a.masked_fill(vis, 0).abs().max()) == 0.0
    save("gemma2-seqcls", cfg, t)
    write_case("gemma2-seqcls", {
        "family": "gemma2", "modeling": MODELING_GEMMA2, "seed": seed,
        **head_fields(arch, SENTIMENT, "model.", ["score.weight"]), **base_fields(IDS, hidden, attns),
        "positionIds": "arange(L) (no position_ids passed, right padding)",
        "slidingLayers": [i for i in range(cfg["num_hidden_layers"]) if gemma2.is_sliding(cfg, i)],
        "maxAbsScoreBeforeCap": pre_s, "hiddenStatesLastIsAfterFinalNorm": True,
        "finalLogitSoftcappingApplied": False, "pooledIndex": i32list(last),
        "logits": {"sequenceClassification": f32list(pooled)}})


if __name__ == "__main__":
    qwen2_tokcls()
    qwen2_qa()
    llama_qa()
    modernbert_heads()
    gemma2_seqcls()

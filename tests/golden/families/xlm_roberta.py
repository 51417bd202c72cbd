#!/usr/bin/python3
"""XLM-RoBERTa with its heads: XLMRobertaForMaskedLM, ...ForSequenceClassification,
...ForTokenClassification and ...ForQuestionAnswering, tiny and random (a fixed torch.Generator
seed per checkpoint).

XLM-RoBERTa is RoBERTa's architecture (current transformers builds modular_xlm_roberta.py from
roberta's classes): BERT's encoder (bert_heads.bert_like_forward) with type_vocab_size 1, eps 1e-5,
and position ids counted past the padding id (create_position_ids_from_input_ids):
pos = cumsum(ids != pad) * (ids != pad) + pad, so real tokens sit at pad+1, pad+2, ... and padding
at `pad` itself. Every head class builds the base with add_pooling_layer=False (no pooler tensors).
Dropout is the identity (eval).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: E402,F401,F403
from bert_heads import (D, FF, HEADS, LAYERS, NER, P, SENTIMENT, V, bert_like_forward, bert_like_tensors,  # noqa: E402
                        check, labels_config, layer_norm_params, lin, linear, norm, strip)

MODELING = ("transformers src/transformers/models/xlm_roberta/modular_xlm_roberta.py -> roberta/modular_roberta.py "
            "(RobertaEmbeddings, RobertaLMHead, RobertaClassificationHead, ...ForTokenClassification, "
            "...ForQuestionAnswering; main branch, >= v4.48 semantics) over BERT's encoder as in v4.48 modeling_bert.py")
PAD = 1


def config(arch, extra):
    cfg = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "classifier_dropout": None,
           "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": D,
           "initializer_range": 0.02, "intermediate_size": FF, "layer_norm_eps": 1e-05, "max_position_embeddings": P,
           "model_type": "xlm-roberta", "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "output_past": True,
           "pad_token_id": PAD, "position_embedding_type": "absolute", "torch_dtype": "float32",
           "transformers_version": "4.48.0", "type_vocab_size": 1, "use_cache": True, "vocab_size": V}
    cfg.update(extra)
    return dict(sorted(cfg.items()))


def xlm_roberta(name, arch, seed, head):
    g = torch.Generator().manual_seed(seed)
    t = {"roberta." + k: v for k, v in bert_like_tensors(g, 1, pooler=False).items()}
    if head == "mlm":
        # RobertaLMHead: dense, gelu, layer_norm, decoder (tied to the word table, not stored) + lm_head.bias.
        extra, n = {}, None
        linear(g, t, "lm_head.dense", D, D)
        layer_norm_params(g, t, "lm_head.layer_norm", D)
        t["lm_head.bias"] = rnd(g, V)
    elif head == "seqcls":
        # RobertaClassificationHead: out_proj(tanh(dense(h[:, 0]))).
        extra, n = labels_config(SENTIMENT), 3
        linear(g, t, "classifier.dense", D, D)
        linear(g, t, "classifier.out_proj", n, D)
    elif head == "tokcls":
        extra, n = labels_config(NER), 5
        linear(g, t, "classifier", n, D)
    else:  # QA; this one writes the default 2-label map out explicitly (bert-qa / distilbert-qa omit it)
        extra, n = labels_config(["LABEL_0", "LABEL_1"]), 2
        linear(g, t, "qa_outputs", n, D)
    cfg = config(arch, extra)
    w = save(name, cfg, t)
    mask = MASK
    ids = torch.where(mask.bool(), IDS, torch.full_like(IDS, PAD))
    real = ids.ne(PAD).int()
    pos = torch.cumsum(real, dim=1) * real + PAD
    types = torch.zeros_like(ids)
    hidden, attentions = bert_like_forward(strip(w, "roberta."), cfg, ids, types, pos, mask)
    h = hidden[-1]
    case = {"family": "xlm-roberta", "modeling": MODELING, "architecture": arch, "numLabels": n,
            "dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask),
            "positionIds": i32list(pos),
            "hiddenStates": [f32list(x) for x in hidden], "attentions": [f32list(a) for a in attentions]}
    if head == "mlm":
        x = norm(w, "lm_head.layer_norm", F.gelu(lin(w, "lm_head.dense", h)), cfg["layer_norm_eps"])
        logits = F.linear(x, w["roberta.embeddings.word_embeddings.weight"], w["lm_head.bias"])
        case["logits"] = {"maskedLM": f32list(logits)}
        outs = [logits]
    elif head == "seqcls":
        logits = lin(w, "classifier.out_proj", torch.tanh(lin(w, "classifier.dense", h[:, 0])))
        case.update({"labels": SENTIMENT, "logits": {"sequenceClassification": f32list(logits)}})
        outs = [logits]
    elif head == "tokcls":
        logits = lin(w, "classifier", h)
        case.update({"labels": NER, "logits": {"tokenClassification": f32list(logits)}})
        outs = [logits]
    else:
        logits = lin(w, "qa_outputs", h)
        start, end = logits[..., 0], logits[..., 1]
        case.update({"startLogits": f32list(start), "endLogits": f32list(end)})
        outs = [start, end]
    check(hidden, attentions, mask, outs)
    write_case(name, case)


def main():
    xlm_roberta("xlm-roberta-mlm", "XLMRobertaForMaskedLM", 201, "mlm")
    xlm_roberta("xlm-roberta-seqcls", "XLMRobertaForSequenceClassification", 202, "seqcls")
    xlm_roberta("xlm-roberta-tokcls", "XLMRobertaForTokenClassification", 203, "tokcls")
    xlm_roberta("xlm-roberta-qa", "XLMRobertaForQuestionAnswering", 204, "qa")


if __name__ == "__main__":
    main()

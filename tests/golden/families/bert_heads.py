#!/usr/bin/python3
"""BERT with its task heads: BertForSequenceClassification, BertForTokenClassification and
BertForQuestionAnswering, tiny and random (a fixed torch.Generator seed per checkpoint).

Written after transformers v4.48 src/transformers/models/bert/modeling_bert.py (BertEmbeddings,
BertSelfAttention on the eager path, BertSelfOutput, BertIntermediate, BertOutput, BertPooler and the
three heads); the same semantics hold in later versions (RoBERTa / XLM-RoBERTa reuse these modules:
see xlm_roberta.py, which imports the encoder below). Dropout is the identity (eval).

Checkpoints (tests/fixtures/families/<name>/ + <name>.json):
  bert-seqcls  BertModel with its pooler, classifier over tanh(pooler.dense(h[:, 0])), 3 labels
  bert-tokcls  BertModel(add_pooling_layer=False), classifier over every token, 5 labels
  bert-qa      BertModel(add_pooling_layer=False), qa_outputs [2, hidden] -> start / end logits
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: E402,F401,F403

MODELING_BERT = ("transformers v4.48 src/transformers/models/bert/modeling_bert.py (eager attention: "
                 "scores = q k^T / sqrt(head_dim) + (1 - mask) * finfo.min)")
V, D, LAYERS, HEADS, FF, P = 64, 32, 2, 4, 64, 40
TYPES = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 0, 0]])

SENTIMENT = ["negative", "neutral", "positive"]
NER = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


# ------------------------------------------------------------------------------------ weights
def linear(g, t, name, n_out, n_in, sd=0.2, bias_sd=0.05):
    t[name + ".weight"], t[name + ".bias"] = rnd(g, n_out, n_in, sd=sd), rnd(g, n_out, sd=bias_sd)


def layer_norm_params(g, t, name, n):
    t[name + ".weight"], t[name + ".bias"] = 1 + rnd(g, n), rnd(g, n, sd=0.1)


def bert_like_tensors(g, type_vocab, pooler):
    """BertModel's (and RobertaModel's) tensors, names without the model prefix."""
    t = {"embeddings.word_embeddings.weight": rnd(g, V, D, sd=0.5),
         "embeddings.position_embeddings.weight": rnd(g, P, D, sd=0.3),
         "embeddings.token_type_embeddings.weight": rnd(g, type_vocab, D, sd=0.3)}
    layer_norm_params(g, t, "embeddings.LayerNorm", D)
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for m in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]:
            linear(g, t, p + m, D, D)
        layer_norm_params(g, t, p + "attention.output.LayerNorm", D)
        linear(g, t, p + "intermediate.dense", FF, D)
        linear(g, t, p + "output.dense", D, FF)
        layer_norm_params(g, t, p + "output.LayerNorm", D)
    if pooler:
        linear(g, t, "pooler.dense", D, D)
    return t


# ------------------------------------------------------------------------------------ forward
def lin(w, name, x):
    return F.linear(x, w[name + ".weight"], w[name + ".bias"])


def norm(w, name, x, eps):
    return F.layer_norm(x, x.shape[-1:], w[name + ".weight"], w[name + ".bias"], eps)


def bert_like_forward(w, cfg, ids, types, pos, mask):
    """BertModel / RobertaModel forward over stored tensors `w` (no prefix): the hidden states
    (embeddings output, then each layer's output) and each layer's attention probabilities."""
    B, L = ids.shape
    H, hd, eps = cfg["num_attention_heads"], cfg["hidden_size"] // cfg["num_attention_heads"], cfg["layer_norm_eps"]
    act = {"gelu": F.gelu}[cfg["hidden_act"]]
    # BertEmbeddings: (word + token type) + absolute position, LayerNorm.
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.token_type_embeddings.weight"][types]
    x = x + w["embeddings.position_embeddings.weight"][pos]
    x = norm(w, "embeddings.LayerNorm", x, eps)
    # get_extended_attention_mask: (1 - mask) * finfo.min over the keys, [B, 1, 1, L] -> [B, 1, L, L].
    add = additive_mask(mask, causal=False)
    hidden, attentions = [x], []
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q, k, v = (lin(w, p + "attention.self." + n, x).view(B, L, H, hd).transpose(1, 2)
                   for n in ["query", "key", "value"])
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + add
        probs = torch.softmax(scores, dim=-1)
        attentions.append(probs)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, H * hd)
        x = norm(w, p + "attention.output.LayerNorm", lin(w, p + "attention.output.dense", ctx) + x, eps)
        f = act(lin(w, p + "intermediate.dense", x))
        x = norm(w, p + "output.LayerNorm", lin(w, p + "output.dense", f) + x, eps)
        hidden.append(x)
    return hidden, attentions


def strip(w, prefix):
    return {k[len(prefix):]: v for k, v in w.items() if k.startswith(prefix)}


def labels_config(names):
    return {"id2label": {str(i): n for i, n in enumerate(names)}, "label2id": {n: i for i, n in enumerate(names)}}


def check(hidden, attentions, mask, outputs):
    """No NaN / inf anywhere; every attention row a distribution with nothing on masked keys."""
    for t in list(hidden) + list(attentions) + list(outputs):
        assert torch.isfinite(t).all()
    for a in attentions:
        assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)
        assert (a.masked_select(~mask[:, None, None, :].bool().expand_as(a)) == 0).all()


# ------------------------------------------------------------------------------------ BERT
def bert_config(arch, extra):
    cfg = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "classifier_dropout": None,
           "gradient_checkpointing": False, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": D}
    cfg.update(extra)
    cfg.update({"initializer_range": 0.02, "intermediate_size": FF, "layer_norm_eps": 1e-12,
                "max_position_embeddings": P, "model_type": "bert", "num_attention_heads": HEADS,
                "num_hidden_layers": LAYERS, "pad_token_id": 0, "position_embedding_type": "absolute",
                "torch_dtype": "float32", "transformers_version": "4.48.0", "type_vocab_size": 2,
                "use_cache": True, "vocab_size": V})
    return dict(sorted(cfg.items()))


def bert(name, arch, seed, head):
    g = torch.Generator().manual_seed(seed)
    pooler = head == "seqcls"  # BertForTokenClassification / ForQuestionAnswering: add_pooling_layer=False
    t = {"bert." + k: v for k, v in bert_like_tensors(g, 2, pooler).items()}
    if head == "seqcls":
        extra, n = {**labels_config(SENTIMENT), "problem_type": "single_label_classification"}, 3
        linear(g, t, "classifier", n, D)
    elif head == "tokcls":
        extra, n = labels_config(NER), 5
        linear(g, t, "classifier", n, D)
    else:  # extractive QA: num_labels 2 (the default, so no id2label in the file, as HF saves it)
        extra, n = {}, 2
        linear(g, t, "qa_outputs", n, D)
    cfg = bert_config(arch, extra)
    w = save(name, cfg, t)
    ids, mask = IDS, MASK
    pos = torch.arange(ids.shape[1]).expand_as(ids)
    hidden, attentions = bert_like_forward(strip(w, "bert."), cfg, ids, TYPES, pos, mask)
    h = hidden[-1]
    case = {"family": "bert", "modeling": MODELING_BERT, "architecture": arch, "numLabels": n, "dims": list(ids.shape),
            "inputIds": i32list(ids), "attentionMask": i32list(mask), "tokenTypeIds": i32list(TYPES),
            "hiddenStates": [f32list(x) for x in hidden], "attentions": [f32list(a) for a in attentions]}
    if head == "seqcls":
        pooled = torch.tanh(lin(w, "bert.pooler.dense", h[:, 0]))  # BertPooler: first token
        logits = lin(w, "classifier", pooled)
        case.update({"labels": SENTIMENT, "pooler": f32list(pooled),
                     "logits": {"sequenceClassification": f32list(logits)}})
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
    bert("bert-seqcls", "BertForSequenceClassification", 101, "seqcls")
    bert("bert-tokcls", "BertForTokenClassification", 102, "tokcls")
    bert("bert-qa", "BertForQuestionAnswering", 103, "qa")


if __name__ == "__main__":
    main()

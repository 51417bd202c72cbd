#!/usr/bin/python3
"""DistilBERT with its heads: DistilBertForMaskedLM, ...ForSequenceClassification,
...ForTokenClassification and ...ForQuestionAnswering, tiny and random (a fixed torch.Generator
seed per checkpoint), plus one bad checkpoint for the loader's error path.

Written after transformers' src/transformers/models/distilbert/modeling_distilbert.py (eager
MultiHeadSelfAttention; the same in v4.48 and the 4.5x file with DistilBertSdpaAttention):
  Embeddings     word[ids] + position[0..L-1] (learned; sinusoidal_pos_embds false), no token types,
                 LayerNorm eps 1e-12 (hard-coded, no config key)
  attention      q = q_lin(x) / sqrt(head_dim); scores = q k^T; keys with mask == 0 filled with
                 finfo(float32).min (masked_fill, not added); softmax; out_lin
  block          post-LN: sa_layer_norm(attn + x); output_layer_norm(lin2(act(lin1(.))) + .), eps 1e-12
  MLM            vocab_projector(vocab_layer_norm(act(vocab_transform(h)))), act = config.activation,
                 vocab_projector.weight tied to the word table (not stored), its bias stored
  seq-cls        classifier(relu(pre_classifier(h[:, 0])))
  token-cls      classifier(h) on every token
  QA             qa_outputs(h) [.., 2] -> start = [.., 0], end = [.., 1]
Dropout is the identity (eval).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: E402,F401,F403
from bert_heads import NER, SENTIMENT, check, labels_config, layer_norm_params, lin, linear, norm  # noqa: E402

MODELING = ("transformers src/transformers/models/distilbert/modeling_distilbert.py, v4.48 eager path "
            "(Embeddings, MultiHeadSelfAttention, TransformerBlock, DistilBertFor* heads; unchanged in 4.5x)")
V, D, LAYERS, HEADS, FF, P = 64, 32, 2, 4, 64, 40
EPS = 1e-12


def config(arch, extra):
    # distilbert-base-uncased's config.json keys (+ torch_dtype, which newer saves add), shrunk.
    cfg = {"activation": "gelu", "architectures": [arch], "attention_dropout": 0.1, "dim": D, "dropout": 0.1,
           "hidden_dim": FF, "initializer_range": 0.02, "max_position_embeddings": P, "model_type": "distilbert",
           "n_heads": HEADS, "n_layers": LAYERS, "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
           "sinusoidal_pos_embds": False, "tie_weights_": True, "torch_dtype": "float32",
           "transformers_version": "4.48.0", "vocab_size": V}
    cfg.update(extra)
    return dict(sorted(cfg.items()))


def base_tensors(g):
    t = {"embeddings.word_embeddings.weight": rnd(g, V, D, sd=0.5),
         "embeddings.position_embeddings.weight": rnd(g, P, D, sd=0.3)}
    layer_norm_params(g, t, "embeddings.LayerNorm", D)
    for i in range(LAYERS):
        p = f"transformer.layer.{i}."
        for m in ["q_lin", "k_lin", "v_lin", "out_lin"]:
            linear(g, t, p + "attention." + m, D, D)
        layer_norm_params(g, t, p + "sa_layer_norm", D)
        linear(g, t, p + "ffn.lin1", FF, D)
        linear(g, t, p + "ffn.lin2", D, FF)
        layer_norm_params(g, t, p + "output_layer_norm", D)
    return {"distilbert." + k: v for k, v in t.items()}


def forward(w, cfg, ids, mask):
    B, L = ids.shape
    H, hd = cfg["n_heads"], cfg["dim"] // cfg["n_heads"]
    act = {"gelu": F.gelu, "relu": F.relu}[cfg["activation"]]
    b = "distilbert."
    pos = torch.arange(L).expand(B, L)
    x = w[b + "embeddings.word_embeddings.weight"][ids] + w[b + "embeddings.position_embeddings.weight"][pos]
    x = norm(w, b + "embeddings.LayerNorm", x, EPS)
    masked = (mask == 0).view(B, 1, 1, L)
    hidden, attentions = [x], []
    for i in range(LAYERS):
        p = b + f"transformer.layer.{i}."
        q, k, v = (lin(w, p + "attention." + n, x).view(B, L, H, hd).transpose(1, 2) for n in ["q_lin", "k_lin", "v_lin"])
        q = q / math.sqrt(hd)
        scores = (q @ k.transpose(2, 3)).masked_fill(masked.expand(B, H, L, L), torch.finfo(torch.float32).min)
        probs = torch.softmax(scores, dim=-1)
        attentions.append(probs)
        ctx = (probs @ v).transpose(1, 2).reshape(B, L, H * hd)
        sa = norm(w, p + "sa_layer_norm", lin(w, p + "attention.out_lin", ctx) + x, EPS)
        f = lin(w, p + "ffn.lin2", act(lin(w, p + "ffn.lin1", sa)))
        x = norm(w, p + "output_layer_norm", f + sa, EPS)
        hidden.append(x)
    return hidden, attentions


def head_tensors(g, t, head, n):
    if head == "mlm":
        linear(g, t, "vocab_transform", D, D)
        layer_norm_params(g, t, "vocab_layer_norm", D)
        t["vocab_projector.bias"] = rnd(g, V)
    elif head == "seqcls":
        linear(g, t, "pre_classifier", D, D)
        linear(g, t, "classifier", n, D)
    elif head == "tokcls":
        linear(g, t, "classifier", n, D)
    else:
        linear(g, t, "qa_outputs", n, D)


def distilbert(name, arch, seed, head):
    g = torch.Generator().manual_seed(seed)
    t = base_tensors(g)
    if head == "mlm":
        extra, n = {}, None
    elif head == "seqcls":
        extra, n = labels_config(SENTIMENT), 3
    elif head == "tokcls":
        extra, n = labels_config(NER), 5
    else:  # QA: the default 2-label map, which HF leaves out of config.json (distilbert-base-cased-distilled-squad)
        extra, n = {}, 2
    head_tensors(g, t, head, n)
    cfg = config(arch, extra)
    w = save(name, cfg, t)
    ids, mask = IDS, MASK  # pad id 0 in the padded positions already
    hidden, attentions = forward(w, cfg, ids, mask)
    h = hidden[-1]
    act = {"gelu": F.gelu, "relu": F.relu}[cfg["activation"]]
    case = {"family": "distilbert", "modeling": MODELING, "architecture": arch, "numLabels": n,
            "dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask),
            "hiddenStates": [f32list(x) for x in hidden], "attentions": [f32list(a) for a in attentions]}
    if head == "mlm":
        x = norm(w, "vocab_layer_norm", act(lin(w, "vocab_transform", h)), EPS)
        logits = F.linear(x, w["distilbert.embeddings.word_embeddings.weight"], w["vocab_projector.bias"])
        case["logits"] = {"maskedLM": f32list(logits)}
        outs = [logits]
    elif head == "seqcls":
        logits = lin(w, "classifier", F.relu(lin(w, "pre_classifier", h[:, 0])))
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


def bad_cases():
    """Checkpoints the loader must refuse with a coded error, listed in families/bad/cases.json."""
    # distilbert-seqcls's tensors (same seed: a classifier of 3 rows) under a config whose id2label
    # has 2 entries. transformers builds classifier [2, dim] from id2label and from_pretrained fails
    # with a size mismatch on classifier.weight / classifier.bias.
    name = "bad/distilbert-labels-mismatch"
    g = torch.Generator().manual_seed(302)
    t = base_tensors(g)
    head_tensors(g, t, "seqcls", 3)
    save(name, config("DistilBertForSequenceClassification", labels_config(["NEGATIVE", "POSITIVE"])), t)
    cases = {"generator": "tests/golden/families/" + os.path.basename(sys.argv[0]), "cases": [
        {"name": "distilbert-labels-mismatch", "dir": "families/" + name,
         "architecture": "DistilBertForSequenceClassification",
         "problem": "config.json's id2label / label2id have 2 entries; classifier.weight is [3, 32] and "
                    "classifier.bias [3]",
         "tensor": "classifier.weight", "configLabels": 2, "tensorRows": 3,
         "expectCode": "ERR_SHAPE_MISMATCH"}]}
    path = os.path.join(OUT, "bad", "cases.json")
    with open(path, "w") as f:
        json.dump(cases, f, indent=2)
        f.write("\n")
    print("wrote", path, os.path.getsize(path), "bytes")


def main():
    distilbert("distilbert-mlm", "DistilBertForMaskedLM", 301, "mlm")
    distilbert("distilbert-seqcls", "DistilBertForSequenceClassification", 302, "seqcls")
    distilbert("distilbert-tokcls", "DistilBertForTokenClassification", 303, "tokcls")
    distilbert("distilbert-qa", "DistilBertForQuestionAnswering", 304, "qa")
    bad_cases()


if __name__ == "__main__":
    main()

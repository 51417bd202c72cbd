#!/usr/bin/python3
"""Token-classification and extractive-QA heads of GPT-2, BLOOM and GPT-NeoX: tiny random checkpoints
and what PyTorch computes on them. The base models are the existing forwards, imported
(gen_fixtures.gpt2_forward, bloom.forward, gpt_neox.forward); this file adds the heads, written after
the current transformers modeling files (see each MODELING below). Dropout is the identity (eval).

Checkpoints (tests/fixtures/families/<name>/ + <name>.json), inputs IDS / MASK (right padding):
  gpt2-tokcls      GPT2ForTokenClassification: base `transformer.` (GPT2Model, gpt2-tiny's sizes),
                   logits = classifier(last_hidden_state) on every token, `classifier`
                   Linear(hidden, 5) WITH bias (dropout before it); 5 labels.
  gpt2-qa          GPT2ForQuestionAnswering: base `transformer.`, qa_outputs Linear(hidden, 2) WITH bias
                   on every token, split into start / end logits [B, L].
  bloom-tokcls     BloomForTokenClassification: base `transformer.` (BloomModel, the `bloom` fixture's
                   sizes), `classifier` Linear(hidden, 5) WITH bias; 5 labels.
  bloom-qa         BloomForQuestionAnswering: base `transformer.`, qa_outputs Linear(hidden, 2) WITH bias.
  gpt-neox-tokcls  GPTNeoXForTokenClassification: base `gpt_neox.` (GPTNeoXModel, the `gpt-neox`
                   fixture's sizes: rotary_pct 0.25, parallel residual), `classifier` Linear(hidden, 5)
                   WITH bias; no embed_out; 5 labels.
  gpt-neox-qa      GPTNeoXForQuestionAnswering: base `gpt_neox.`, qa_outputs Linear(hidden, 2) WITH bias.
In every case the head reads last_hidden_state, i.e. after the final norm (ln_f / final_layer_norm),
the last entry of hiddenStates.

Run: /usr/bin/python3 tests/golden/families/decoder_heads.py"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import F, IDS, MASK, additive_mask, f32list, i32list, rnd, save, torch, write_case  # noqa: E402
from bert_heads import NER, labels_config  # noqa: E402
import bloom  # noqa: E402
import gpt_neox  # noqa: E402
from gen_fixtures import gpt2_forward  # noqa: E402  (tests/golden is on sys.path via common)

QA_LABELS = ["LABEL_0", "LABEL_1"]  # num_labels 2: PretrainedConfig's default labels
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

MODELING_GPT2 = (
    "transformers src/transformers/models/gpt2/modeling_gpt2.py (read at commits c44b2d9976e8eafbdcb89cb2710141b2bc9b138f "
    "and 0010f60284ab4b9d14b7df9c6525b1a2ad44e640, the heads identical): GPT2ForTokenClassification: self.transformer = "
    "GPT2Model, self.dropout = Dropout(classifier_dropout or hidden_dropout or 0.1), self.classifier = "
    "nn.Linear(config.hidden_size, config.num_labels) (bias), logits = classifier(dropout(last_hidden_state)); "
    "GPT2ForQuestionAnswering: self.transformer = GPT2Model, self.qa_outputs = nn.Linear(config.hidden_size, 2) (bias, no "
    "dropout), start, end = logits.split(1, -1) squeezed. Base forward: tests/golden/gen_fixtures.py gpt2_forward "
    "(Conv1D [in, out], pre-LN, gelu_new, ln_f on the last state, position_ids arange(L))")
MODELING_BLOOM = (
    bloom.MODELING + "; BloomForTokenClassification: self.transformer = BloomModel, self.dropout = Dropout(classifier_"
    "dropout or hidden_dropout or 0.1), self.classifier = nn.Linear(config.hidden_size, config.num_labels) (bias); "
    "BloomForQuestionAnswering: self.transformer = BloomModel, self.qa_outputs = nn.Linear(config.hidden_size, 2) (bias, "
    "no dropout), start, end = logits.split(1, -1) squeezed (same file and commit)")
MODELING_NEOX = (
    "transformers src/transformers/models/gpt_neox/modeling_gpt_neox.py at commit 00dcc6dda6f6d8e69541a6b51f97986a80242367: "
    "GPTNeoXForTokenClassification: self.gpt_neox = GPTNeoXModel, self.dropout = Dropout(config.classifier_dropout), "
    "self.classifier = nn.Linear(config.hidden_size, config.num_labels) (bias); GPTNeoXForQuestionAnswering: self.gpt_neox "
    "= GPTNeoXModel, self.qa_outputs = nn.Linear(config.hidden_size, 2) (bias, no dropout), start, end = "
    "logits.split(1, -1) squeezed. Base: " + gpt_neox.MODELING)


def sorted_config(cfg, arch, labels):
    return dict(sorted({**cfg, "architectures": [arch], **labels_config(labels)}.items()))


def positions():
    L = IDS.shape[1]
    return torch.arange(L)[None].expand(IDS.shape[0], L)


def check(hidden, attns, outs):
    for t in list(hidden) + list(attns) + list(outs):
        assert torch.isfinite(t).all()
    ok = additive_mask(MASK, causal=True) == 0
    for a in attns:
        assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)
        assert float(a.masked_fill(ok, 0).abs().max()) == 0.0


def head(g, t, kind, D):
    """Adds the head's tensors; returns (head name, labels)."""
    name, labels = ("classifier", NER) if kind == "tokcls" else ("qa_outputs", QA_LABELS)
    t[name + ".weight"], t[name + ".bias"] = rnd(g, len(labels), D, sd=0.5), rnd(g, len(labels), sd=0.1)
    return name, labels


def emit(name, family, arch, modeling, seed, base, w, hidden, attns, head_name, labels):
    logits = F.linear(hidden[-1], w[head_name + ".weight"], w[head_name + ".bias"])  # every token; dropout: eval
    case = {"family": family, "modeling": modeling, "seed": seed, "architecture": arch, "numLabels": len(labels),
            "labels": labels, "basePrefix": base, "headTensors": [head_name + ".weight", head_name + ".bias"],
            "dims": list(IDS.shape), "inputIds": i32list(IDS), "attentionMask": i32list(MASK),
            "hiddenStates": [f32list(h) for h in hidden], "hiddenStatesLastIsAfterFinalNorm": True,
            "attentions": [f32list(a) for a in attns]}
    if head_name == "classifier":
        outs = [logits]
        case["logits"] = {"tokenClassification": f32list(logits)}  # [B, L, 5]
    else:
        start, end = (x.squeeze(-1) for x in logits.split(1, dim=-1))
        outs = [start, end]
        case.update({"startLogits": f32list(start), "endLogits": f32list(end)})  # [B, L] each
    check(hidden, attns, outs)
    write_case(name, case)


def strip(w, prefix):
    return {k[len(prefix):]: v for k, v in w.items() if k.startswith(prefix)}


# ------------------------------------------------------------------------------------ GPT-2
def gpt2_config():
    with open(os.path.join(ROOT, "tests", "fixtures", "models", "gpt2-tiny", "config.json")) as f:
        return json.load(f)


def gpt2_tensors(g, cfg):
    """GPT2Model's tensors (gpt2-tiny's sizes and scales), Conv1D weights [in, out], no prefix. No attn.bias
    buffers (current transformers neither saves nor needs them)."""
    V, D, P = cfg["vocab_size"], cfg["n_embd"], cfg["n_positions"]
    t = {"wte.weight": rnd(g, V, D, sd=0.5), "wpe.weight": rnd(g, P, D, sd=0.3)}

    def ln(name):
        t[name + ".weight"], t[name + ".bias"] = 1 + rnd(g, D, sd=0.1), rnd(g, D, sd=0.1)

    def conv(name, n_in, n_out):
        t[name + ".weight"], t[name + ".bias"] = rnd(g, n_in, n_out), rnd(g, n_out, sd=0.05)

    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        ln(p + "ln_1")
        conv(p + "attn.c_attn", D, 3 * D)
        conv(p + "attn.c_proj", D, D)
        ln(p + "ln_2")
        conv(p + "mlp.c_fc", D, 4 * D)
        conv(p + "mlp.c_proj", 4 * D, D)
    ln("ln_f")
    return t


def gpt2(name, arch, kind, seed):
    g = torch.Generator().manual_seed(seed)
    base = gpt2_config()
    t = {"transformer." + k: v for k, v in gpt2_tensors(g, base).items()}
    head_name, labels = head(g, t, kind, base["n_embd"])
    w = save(name, sorted_config(base, arch, labels), t)
    hidden, attns = gpt2_forward(strip(w, "transformer."), base, IDS, MASK, positions())
    emit(name, "gpt2", arch, MODELING_GPT2, seed, "transformer.", w, hidden, attns, head_name, labels)


# ------------------------------------------------------------------------------------ BLOOM
def bloom_head(name, arch, kind, seed):
    hidden_size, heads = 32, 4  # the `bloom` fixture's sizes
    g = torch.Generator().manual_seed(seed)
    base = bloom.config(hidden_size, heads)
    t = {"transformer." + k: v for k, v in bloom.tensors(g, hidden_size).items()}
    head_name, labels = head(g, t, kind, hidden_size)
    w = save(name, sorted_config(base, arch, labels), t)
    hidden, attns, _, _ = bloom.forward(strip(w, "transformer."), base, IDS, MASK)
    emit(name, "bloom", arch, MODELING_BLOOM, seed, "transformer.", w, hidden, attns, head_name, labels)


# ------------------------------------------------------------------------------------ GPT-NeoX
def neox_head(name, arch, kind, seed):
    g = torch.Generator().manual_seed(seed)
    base = gpt_neox.config(0.25, True)  # the `gpt-neox` fixture's settings
    t = gpt_neox.tensors(g)
    del t["embed_out.weight"]  # the task models have no LM head
    head_name, labels = head(g, t, kind, gpt_neox.D)
    w = save(name, sorted_config(base, arch, labels), t)
    assert not any(k.startswith("embed_out") for k in w)
    # gpt_neox.forward also computes embed_out logits; give it zeros and drop them.
    hidden, attns, _ = gpt_neox.forward({**w, "embed_out.weight": torch.zeros(gpt_neox.V, gpt_neox.D)}, base, IDS,
                                        MASK, positions())
    emit(name, "gpt_neox", arch, MODELING_NEOX, seed, "gpt_neox.", w, hidden, attns, head_name, labels)


def main():
    torch.set_grad_enabled(False)
    gpt2("gpt2-tokcls", "GPT2ForTokenClassification", "tokcls", 510)
    gpt2("gpt2-qa", "GPT2ForQuestionAnswering", "qa", 520)
    bloom_head("bloom-tokcls", "BloomForTokenClassification", "tokcls", 530)
    bloom_head("bloom-qa", "BloomForQuestionAnswering", "qa", 540)
    neox_head("gpt-neox-tokcls", "GPTNeoXForTokenClassification", "tokcls", 550)
    neox_head("gpt-neox-qa", "GPTNeoXForQuestionAnswering", "qa", 560)


if __name__ == "__main__":
    main()

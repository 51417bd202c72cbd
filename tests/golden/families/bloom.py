#!/usr/bin/python3
"""BLOOM (BloomForCausalLM), tiny and random (a fixed torch.Generator seed per checkpoint, the first
seed from SEEDS whose greedy runs never hinge on a near-tie, never emit the eos id and do not settle
on one repeated token).

Written after transformers src/transformers/models/bloom/modeling_bloom.py at commit
9d97831a1cbb420edac062c2e8454ce9ac1c4b79 (GradientCheckpointingLayer / DynamicCache(config=...) era,
>= 4.54; 4.48's file computes the same numbers: the mask is additive finfo.min, no layer_number
scaling since 4.2x). Eager attention, dropout the identity (eval).

  BloomModel: x = word_embeddings_layernorm(word_embeddings(ids)); no position ids at all;
  alibi [B, heads, 1, L_k] = slope_h * ((cumsum(mask) - 1) * mask)[b, j]  (the key's index among the
      row's unmasked tokens, 0 on masked keys; the same for every query row);
  block:  h = input_layernorm(x); residual = h if apply_residual_connection_post_layernorm else x
          y = residual + dense(attention(h))
          h2 = post_attention_layernorm(y); residual = h2 if apply_residual... else y
          x = residual + dense_4h_to_h(bloom_gelu(dense_h_to_4h(h2)))
  attention: qkv = query_key_value(h) viewed [B, L, heads, 3, head_dim]: rows h*3*hd + [0, hd) are head
          h's query, + [hd, 2hd) its key, + [2hd, 3hd) its value; scores = alibi + (q k^T) / sqrt(hd)
          (baddbmm, beta 1, alpha 1/sqrt(hd)), + the causal/padding mask (0 or finfo.min), softmax in
          float32, times v, dense.
  bloom_gelu(x) = x * 0.5 * (1 + tanh(0.79788456 * x * (1 + 0.044715 * x * x)))  (eval path)
  MLP width is 4 * hidden_size (no intermediate_size key; n_inner is ignored).
  ln_f after the last block; lm_head tied to word_embeddings (no lm_head.weight in the file).
  hidden_states: word_embeddings_layernorm output, each block's input, then ln_f(x).

Slopes (build_alibi_tensor): p = 2 ** floor(log2(n)); slopes = (2 ** (-8 / p)) ** [1..p];
if p != n: extra = (2 ** (-4 / p)) ** [1, 3, 5, ...] taking min(p, n - p) of them, appended.

Checkpoints (tests/fixtures/families/<name>/ + <name>.json):
  bloom         4 heads (power of two), hidden 32; tensor names as BloomForCausalLM.save_pretrained
                writes them: transformer.* (lm_head.weight left out, tied)
  bloom-6heads  6 heads (the non-power-of-two slope rule), hidden 48; tensor names without the
                transformer. prefix, as bigscience/bloom-560m's files have them (h.0..., ln_f...)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: E402,F401,F403

MODELING = ("transformers src/transformers/models/bloom/modeling_bloom.py at commit "
            "9d97831a1cbb420edac062c2e8454ce9ac1c4b79 (>= 4.54; 4.48 computes the same numbers): "
            "build_alibi_tensor, BloomAttention._reshape, bloom_gelu_forward, BloomModel._update_causal_mask")
V, LAYERS = 64, 2
GREEDY_IDS = torch.tensor([[5, 17, 33, 9, 41], [0, 0, 12, 48, 7]])
GREEDY_MASK = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])
SINGLE_IDS = torch.tensor([[3, 22, 45, 8, 19, 30]])
NEW = 32
MIN_MARGIN = 1e-3
MIN_DISTINCT = 6  # distinct tokens among each row's 32 new ones: no seed that settles on one token
SEEDS = range(800, 1400)


def config(hidden, heads):
    """bigscience/bloom-560m's config.json key set, sizes shrunk."""
    return {
        "apply_residual_connection_post_layernorm": False,
        "architectures": ["BloomForCausalLM"],
        "attention_dropout": 0.0,
        "attention_softmax_in_fp32": True,
        "bias_dropout_fusion": True,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_dropout": 0.0,
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "masked_softmax_fusion": True,
        "model_type": "bloom",
        "n_head": heads,
        "n_inner": None,
        "n_layer": LAYERS,
        "offset_alibi": 100,
        "pad_token_id": 3,
        "pretraining_tp": 1,
        "skip_bias_add": True,
        "skip_bias_add_qkv": False,
        "slow_but_exact": False,
        "transformers_version": "4.27.0.dev0",
        "unk_token_id": 0,
        "use_cache": True,
        "vocab_size": V,
    }


def tensors(g, D):
    """Scales chosen so that the layers, not the (tied) embedding, decide the next token: a small
    word_embeddings_layernorm weight, sharp attention."""
    t = {"word_embeddings.weight": rnd(g, V, D, sd=0.6)}

    def ln(name, scale=1.0):
        t[name + ".weight"], t[name + ".bias"] = scale * (1 + rnd(g, D, sd=0.1)), rnd(g, D, sd=0.1)

    def lin(name, n_out, n_in, sd):
        t[name + ".weight"], t[name + ".bias"] = rnd(g, n_out, n_in, sd=sd), rnd(g, n_out, sd=0.05)

    ln("word_embeddings_layernorm", 0.3)
    for i in range(LAYERS):
        p = f"h.{i}."
        ln(p + "input_layernorm")
        lin(p + "self_attention.query_key_value", 3 * D, D, 0.8)
        lin(p + "self_attention.dense", D, D, 0.4)
        ln(p + "post_attention_layernorm")
        lin(p + "mlp.dense_h_to_4h", 4 * D, D, 0.25)
        lin(p + "mlp.dense_4h_to_h", D, 4 * D, 0.2)
    ln("ln_f")
    return t


# ------------------------------------------------------------------------------------ forward
def alibi_slopes(n):
    p = 2 ** math.floor(math.log2(n))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(p) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + p, dtype=torch.int32))
    if p != n:
        extra = torch.tensor(2 ** (-(2 ** -(math.log2(2 * p) - 3))), dtype=torch.float32)
        m = min(p, n - p)
        slopes = torch.cat([slopes, torch.pow(extra, torch.arange(1, 1 + 2 * m, 2, dtype=torch.int32))])
    return slopes


def bloom_gelu(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def forward(w, cfg, ids, mask):
    """BloomForCausalLM over tensors named without the transformer. prefix -> (hidden, attentions,
    logits, alibi [B, H, 1, L])."""
    B, L = ids.shape
    D, H = cfg["hidden_size"], cfg["n_head"]
    hd, eps = D // H, cfg["layer_norm_epsilon"]
    post = cfg["apply_residual_connection_post_layernorm"]

    def ln(name, x):
        return F.layer_norm(x, x.shape[-1:], w[name + ".weight"], w[name + ".bias"], eps)

    def lin(name, x):
        return F.linear(x, w[name + ".weight"], w[name + ".bias"])

    alibi = alibi_slopes(H)[None, :, None, None] * ((mask.cumsum(-1) - 1) * mask)[:, None, None, :].float()
    add = additive_mask(mask, causal=True)
    x = ln("word_embeddings_layernorm", w["word_embeddings.weight"][ids])
    hidden, attns = [], []
    for i in range(cfg["n_layer"]):
        hidden.append(x)
        p = f"h.{i}."
        h = ln(p + "input_layernorm", x)
        res = h if post else x
        qkv = lin(p + "self_attention.query_key_value", h).view(B, L, H, 3, hd)
        q, k, v = (qkv[..., j, :].transpose(1, 2) for j in range(3))
        a = torch.softmax(alibi + torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(hd)) + add, dim=-1,
                          dtype=torch.float32)
        attns.append(a)
        y = res + lin(p + "self_attention.dense", torch.matmul(a, v).transpose(1, 2).reshape(B, L, D))
        h2 = ln(p + "post_attention_layernorm", y)
        res = h2 if post else y
        x = res + lin(p + "mlp.dense_4h_to_h", bloom_gelu(lin(p + "mlp.dense_h_to_4h", h2)))
    x = ln("ln_f", x)
    hidden.append(x)
    return hidden, attns, F.linear(x, w["word_embeddings.weight"]), alibi


# ------------------------------------------------------------------------------------ cases
def run_greedy(w, cfg, ids, mask):
    margins = []

    def step(i, m, _pos):  # BLOOM takes no position ids: alibi comes from the mask
        logits = forward(w, cfg, i, m)[2]
        top = logits[:, -1].topk(2, dim=-1).values
        margins.append(float((top[:, 0] - top[:, 1]).min()))
        return logits
    return greedy(step, ids, mask, NEW), min(margins)


def greedy_case(ids, mask, seq, margin):
    return {"dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask), "newTokens": NEW,
            "sequences": i32list(seq), "minMargin": margin}


def sanity(hidden, attns, logits, mask):
    for t in hidden + attns + [logits]:
        assert torch.isfinite(t).all()
    ok = additive_mask(mask, causal=True) == 0
    for a in attns:
        assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)
        assert float(a.masked_fill(ok, 0).abs().max()) == 0.0


def build(name, hidden, heads, prefixed):
    cfg = config(hidden, heads)
    for seed in SEEDS:
        w = tensors(torch.Generator().manual_seed(seed), hidden)
        seq, m1 = run_greedy(w, cfg, GREEDY_IDS, GREEDY_MASK)
        seq1, m2 = run_greedy(w, cfg, SINGLE_IDS, torch.ones_like(SINGLE_IDS))
        new_tokens = torch.cat([seq[:, -NEW:].reshape(-1), seq1[:, -NEW:].reshape(-1)])
        varied = all(len(set(r[-NEW:].tolist())) >= MIN_DISTINCT for r in list(seq) + list(seq1))
        if min(m1, m2) >= MIN_MARGIN and varied and not (new_tokens == cfg["eos_token_id"]).any():
            break
    else:
        raise SystemExit(name + ": no seed without a near-tie")
    t = tensors(torch.Generator().manual_seed(seed), hidden)
    stored = save(name, cfg, {("transformer." + k if prefixed else k): v for k, v in t.items()})
    w = {(k[len("transformer."):] if prefixed else k): v for k, v in stored.items()}
    hs, attns, logits, alibi = forward(w, cfg, IDS, MASK)
    sanity(hs, attns, logits, MASK)
    _, _, _, galibi = forward(w, cfg, GREEDY_IDS, GREEDY_MASK)
    write_case(name, {
        "family": "bloom", "architecture": "BloomForCausalLM", "modeling": MODELING, "seed": seed,
        "tensorPrefix": "transformer." if prefixed else "",
        "alibiSlopes": f32list(alibi_slopes(heads)),
        "dims": list(IDS.shape), "inputIds": i32list(IDS), "attentionMask": i32list(MASK),
        "alibi": {"dims": list(alibi.shape), "values": f32list(alibi)},
        "hiddenStates": [f32list(h) for h in hs], "hiddenStatesLastIsAfterFinalNorm": True,
        "attentions": [f32list(a) for a in attns],
        "logits": {"causalLM": f32list(logits)},
        "greedy": {**greedy_case(GREEDY_IDS, GREEDY_MASK, seq, m1),
                   "promptAlibi": {"dims": list(galibi.shape), "values": f32list(galibi)}},
        "greedySingle": greedy_case(SINGLE_IDS, torch.ones_like(SINGLE_IDS), seq1, m2),
        "greedyNote": "no-cache full-prefix greedy; no position ids: each step's alibi comes from the whole "
                      "(left-padded) mask, key position = cumsum(mask) - 1, 0 at padding. No new token is the eos "
                      "id, so generate(max_new_tokens=32, do_sample=False), cached or not, gives these sequences",
    })


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    build("bloom", 32, 4, True)
    build("bloom-6heads", 48, 6, False)

"""ModernBERT (ModernBertForMaskedLM, ModernBertForSequenceClassification): tiny checkpoints and what
PyTorch computes on them, written out after transformers' models/modernbert/modeling_modernbert.py
(see MODELING below; the eager attention path) in plain torch.

What the forward does, in the file's order:
  x = LayerNorm_nobias(tok_embeddings[ids]; embeddings.norm)                 (hidden_states[0])
  per layer i (global when i % global_attn_every_n_layers == 0, else local):
    x = x + Wo(attention(attn_norm(x)))     attn_norm is Identity in layer 0 (no tensor), a LayerNorm after
    x = x + mlp.Wo(gelu(in) * gate)         where [in | gate] = mlp.Wi(mlp_norm(x)) split in halves, in first
  hidden_states = [embeddings, layer 0 out, ..., layer n-1 out]: the last entry is BEFORE final_norm;
  last_hidden_state = final_norm(layer n-1 out).
  Attention: qkv = Wqkv(h) viewed [B, L, 3, H, hd] (rows of Wqkv: q heads, then k heads, then v heads);
  RoPE (rotate_half, whole head_dim, positions arange(L)) with theta global_rope_theta on global layers and
  local_rope_theta on local ones; scores = q @ k.T * head_dim ** -0.5 + mask; softmax in float32.
  Masks: global layers the padding mask only (bidirectional); local layers also |i - j| <= local_attention // 2.
  Masked LM: logits = decoder(head.norm(gelu(head.dense(last_hidden_state)))), decoder.weight tied to
  model.embeddings.tok_embeddings.weight (not stored), decoder.bias stored.
  Sequence classification (classifier_pooling "mean", the Hub checkpoints' value; the class default is
  "cls" = last_hidden_state[:, 0]): pooled = sum(last_hidden_state * mask) / sum(mask) over the sequence,
  logits = classifier(head.norm(gelu(head.dense(pooled)))), classifier with bias.
All LayerNorms have no bias (norm_bias false), eps norm_eps.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import F, IDS, MASK, additive_mask, f32list, i32list, rnd, save, torch, write_case  # noqa: E402
from fixtures.ops import apply_rope  # noqa: E402

MODELING = ("transformers src/transformers/models/modernbert/modeling_modernbert.py at commit "
            "000c33fdfde12e1ffafbfcdb3c926df5727a00b6 (current generation: ModernBertRotaryEmbedding per layer type "
            "from rope_parameters, layer_types from global_attn_every_n_layers; configuration_modernbert.py maps "
            "global_rope_theta -> rope_parameters['full_attention'], local_rope_theta -> ['sliding_attention']), "
            "checked against the 4.48-era file at commit 1ae3d1e0c46618caf8bbe15c404293d0d1f8b8ee (per-layer "
            "ModernBertRotaryEmbedding with global_rope_theta / local_rope_theta): the same eager_attention_forward, "
            "_update_attention_mask and hidden_states order, the same numbers")
PAD = 4


def ln(x, w, eps):
    return F.layer_norm(x, x.shape[-1:], w, None, eps)


def is_global(cfg, i):
    return i % cfg["global_attn_every_n_layers"] == 0


def modernbert_forward(w, cfg, ids, mask):
    """ModernBertModel (eager) -> hidden states (num_layers + 1, the last before final_norm),
    attention weights per layer, last_hidden_state (after final_norm)."""
    B, L = ids.shape
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    hd, eps = D // H, cfg["norm_eps"]
    pos = torch.arange(L)
    x = ln(w["model.embeddings.tok_embeddings.weight"][ids], w["model.embeddings.norm.weight"], eps)
    glob, local = additive_mask(mask, False), additive_mask(mask, False, local=cfg["local_attention"])
    hidden, attns = [], []
    for i in range(cfg["num_hidden_layers"]):
        hidden.append(x)
        p = f"model.layers.{i}."
        h = x if i == 0 else ln(x, w[p + "attn_norm.weight"], eps)
        qkv = (h @ w[p + "attn.Wqkv.weight"].T).view(B, L, 3, H, hd).transpose(3, 1)  # [B, H, 3, L, hd]
        q, k, v = qkv.unbind(dim=2)
        theta = cfg["global_rope_theta"] if is_global(cfg, i) else cfg["local_rope_theta"]
        q, _ = apply_rope(q, pos, hd, theta, "half", {})
        k, _ = apply_rope(k, pos, hd, theta, "half", {})
        s = torch.matmul(q, k.transpose(2, 3)) * hd ** -0.5
        a = torch.softmax(s + (glob if is_global(cfg, i) else local), dim=-1, dtype=torch.float32)
        o = torch.matmul(a, v).transpose(1, 2).reshape(B, L, D)
        x = x + o @ w[p + "attn.Wo.weight"].T
        inp, gate = (ln(x, w[p + "mlp_norm.weight"], eps) @ w[p + "mlp.Wi.weight"].T).chunk(2, dim=-1)
        x = x + (F.gelu(inp) * gate) @ w[p + "mlp.Wo.weight"].T
        attns.append(a)
    hidden.append(x)
    return hidden, attns, ln(x, w["model.final_norm.weight"], eps)


def head(w, cfg, x):
    """ModernBertPredictionHead: norm(act(dense(x))), classifier_activation gelu (exact erf)."""
    return ln(F.gelu(x @ w["head.dense.weight"].T), w["head.norm.weight"], cfg["norm_eps"])


def config(arch):
    # The key set of answerdotai/ModernBERT-base's config.json, sizes shrunk; ids as the Hub orders them
    # (cls = bos, sep = eos, pad next).
    c = {"architectures": [arch], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 2,
         "classifier_activation": "gelu", "classifier_bias": False, "classifier_dropout": 0.0,
         "classifier_pooling": "mean", "cls_token_id": 2, "decoder_bias": True, "deterministic_flash_attn": False,
         "embedding_dropout": 0.0, "eos_token_id": 3, "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
         "gradient_checkpointing": False, "hidden_activation": "gelu", "hidden_size": 32,
         "initializer_cutoff_factor": 2.0, "initializer_range": 0.02, "intermediate_size": 64, "layer_norm_eps": 1e-05,
         "local_attention": 4, "local_rope_theta": 10000.0, "max_position_embeddings": 64, "mlp_bias": False,
         "mlp_dropout": 0.0, "model_type": "modernbert", "norm_bias": False, "norm_eps": 1e-05,
         "num_attention_heads": 4, "num_hidden_layers": 4, "pad_token_id": PAD, "position_embedding_type": "absolute",
         "sep_token_id": 3, "sparse_pred_ignore_index": -100, "sparse_prediction": False, "torch_dtype": "float32",
         "transformers_version": "4.47.0.dev0", "vocab_size": 64}
    if arch == "ModernBertForSequenceClassification":
        c["id2label"] = {str(i): f"LABEL_{i}" for i in range(3)}
        c["label2id"] = {f"LABEL_{i}": i for i in range(3)}
    return dict(sorted(c.items()))


def main():
    g = torch.Generator().manual_seed(36)
    cfg = config("ModernBertForMaskedLM")
    V, D, Fd = cfg["vocab_size"], cfg["hidden_size"], cfg["intermediate_size"]
    base = {"model.embeddings.tok_embeddings.weight": rnd(g, V, D, sd=0.5),
            "model.embeddings.norm.weight": 1 + rnd(g, D, sd=0.1)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        if i:
            base[p + "attn_norm.weight"] = 1 + rnd(g, D, sd=0.1)
        base[p + "attn.Wqkv.weight"] = rnd(g, 3 * D, D, sd=0.2)
        base[p + "attn.Wo.weight"] = rnd(g, D, D)
        base[p + "mlp_norm.weight"] = 1 + rnd(g, D, sd=0.1)
        base[p + "mlp.Wi.weight"] = rnd(g, 2 * Fd, D)
        base[p + "mlp.Wo.weight"] = rnd(g, D, Fd)
    base["model.final_norm.weight"] = 1 + rnd(g, D, sd=0.1)
    mlm = {**base, "head.dense.weight": rnd(g, D, D, sd=0.3), "head.norm.weight": 1 + rnd(g, D, sd=0.1),
           "decoder.bias": rnd(g, V, sd=0.1)}  # no decoder.weight: tied (tie_word_embeddings default true)
    cls = {**base, "head.dense.weight": rnd(g, D, D, sd=0.3), "head.norm.weight": 1 + rnd(g, D, sd=0.1),
           "classifier.weight": rnd(g, 3, D, sd=0.5), "classifier.bias": rnd(g, 3, sd=0.1)}

    ids = IDS.masked_fill(MASK == 0, PAD)  # the config's pad_token_id in the padded positions
    w = save("modernbert", cfg, mlm)
    with torch.no_grad():
        hidden, attns, last = modernbert_forward(w, cfg, ids, MASK)
        logits = head(w, cfg, last) @ w["model.embeddings.tok_embeddings.weight"].T + w["decoder.bias"]
    for x in hidden + attns + [last, logits]:
        assert torch.isfinite(x).all()
    for i, a in enumerate(attns):
        vis = additive_mask(MASK, False, local=None if is_global(cfg, i) else cfg["local_attention"]) == 0
        assert (a.sum(-1) - 1).abs().max() < 1e-5 and float(a.masked_fill(vis, 0).abs().max()) == 0.0
    common = {"modeling": MODELING, "dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(MASK),
              "positionIds": "arange(L) for every row (eager path; the padded positions are computed too)",
              "globalLayers": [i for i in range(cfg["num_hidden_layers"]) if is_global(cfg, i)],
              "hiddenStates": [f32list(h) for h in hidden], "hiddenStatesLastIsBeforeFinalNorm": True,
              "lastHiddenState": f32list(last), "attentions": [f32list(a) for a in attns]}
    write_case("modernbert", {"family": "modernbert", "architecture": "ModernBertForMaskedLM", **common,
                              "logits": {"maskedLM": f32list(logits)}})

    ccfg = config("ModernBertForSequenceClassification")
    w = save("modernbert-seqcls", ccfg, cls)
    with torch.no_grad():
        hidden2, attns2, last2 = modernbert_forward(w, ccfg, ids, MASK)
        m = MASK[..., None].float()
        pooled = (last2 * m).sum(dim=1) / MASK.sum(dim=1, keepdim=True)
        clogits = head(w, ccfg, pooled) @ w["classifier.weight"].T + w["classifier.bias"]
    assert torch.equal(last2, last) and torch.isfinite(clogits).all()
    write_case("modernbert-seqcls", {"family": "modernbert", "architecture": "ModernBertForSequenceClassification",
                                     **common, "classifierPooling": ccfg["classifier_pooling"],
                                     "pooled": f32list(pooled), "logits": {"sequenceClassification": f32list(clogits)}})


if __name__ == "__main__":
    main()

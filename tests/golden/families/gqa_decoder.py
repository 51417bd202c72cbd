"""The pre-norm RoPE decoder that Qwen2, Qwen3 and Mistral share (tests/golden/families/qwen2.py,
qwen3.py, mistral.py), written out in plain torch after transformers' modeling_qwen2.py,
modeling_qwen3.py and modular_mistral.py (the check_model_inputs era, >= 4.54; 4.48 computes the
same numbers): embed_tokens -> layers of [RMSNorm -> GQA self-attention with rotate-half RoPE
(optional q/k/v bias, optional per-head q_norm/k_norm before RoPE, optional sliding window) ->
residual -> RMSNorm -> SiLU-gated MLP -> residual] -> final RMSNorm -> lm_head / score.

Also the checks every family's case passes before it is written (no NaN, attention rows summing to
1 over the visible keys, greedy top-2 margins well above float32 noise, no EOS among the greedy
tokens, so transformers' generate would not have stopped early)."""
from common import F, additive_mask, f32list, greedy, i32list, torch  # noqa: F401

from fixtures.ops import apply_rope

# Greedy prompts every family uses: a left-padded batch (lengths 5 and 3, pad id 0) and one
# unpadded prompt of length 6. None of them holds an EOS id of the families' configs.
GREEDY_IDS = torch.tensor([[5, 17, 33, 9, 41], [0, 0, 12, 48, 7]])
GREEDY_MASK = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])
SINGLE_IDS = torch.tensor([[3, 22, 45, 8, 19, 30]])
SINGLE_MASK = torch.ones(1, 6, dtype=torch.long)
NEW_TOKENS = 32
MIN_MARGIN = 1e-3


def rms(x, w, eps):
    """Qwen2RMSNorm / Qwen3RMSNorm / MistralRMSNorm in float32: w * (x * rsqrt(mean(x^2) + eps))."""
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def head_dim(cfg):
    # Qwen3Attention: getattr(config, "head_dim", hidden // heads) with Qwen3Config's default 128;
    # Mistral: config.head_dim or hidden // heads; Qwen2 has no head_dim key.
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def decoder(w, cfg, ids, mask, pos, qk_norm=False, window=None):
    """The base model (Qwen2Model / Qwen3Model / MistralModel) with eager attention ->
    (hidden states as output_hidden_states returns them: the embeddings, each layer's output, the
    last one replaced by its final-norm output; num_layers + 1 in all), [per-layer softmax weights]."""
    B, L = ids.shape
    D, H, G = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, eps, theta = head_dim(cfg), cfg["rms_norm_eps"], cfg["rope_theta"]
    scaling = hd ** -0.5
    add = additive_mask(mask, True, window=window)
    x = w["model.embed_tokens.weight"][ids]
    hidden, attns = [x], []

    def lin(z, name):
        return F.linear(z, w[name + ".weight"], w.get(name + ".bias"))

    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms(x, w[p + "input_layernorm.weight"], eps)
        q = lin(h, p + "self_attn.q_proj").view(B, L, H, hd)
        k = lin(h, p + "self_attn.k_proj").view(B, L, G, hd)
        v = lin(h, p + "self_attn.v_proj").view(B, L, G, hd)
        if qk_norm:  # Qwen3: RMSNorm over head_dim of each head, before the transpose and RoPE
            q = rms(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q, _ = apply_rope(q, pos, hd, theta, "half", {})
        k, _ = apply_rope(k, pos, hd, theta, "half", {})
        k, v = k.repeat_interleave(H // G, dim=1), v.repeat_interleave(H // G, dim=1)  # repeat_kv
        a = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * scaling + add, dim=-1, dtype=torch.float32)
        attns.append(a)
        o = torch.matmul(a, v).transpose(1, 2).reshape(B, L, H * hd)
        x = x + lin(o, p + "self_attn.o_proj")
        h = rms(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + lin(F.silu(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
        hidden.append(x)
    hidden[-1] = rms(x, w["model.norm.weight"], eps)
    return hidden, attns


def lm_head(w, cfg):
    return w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else w["lm_head.weight"]


def check_forward(hidden, attns, mask, window=None):
    for t in hidden + attns:
        assert torch.isfinite(t).all()
    ok = additive_mask(mask, True, window=window) == 0
    for a in attns:
        assert (a.masked_fill(ok, 0) == 0).all(), "weight on a masked key"
        assert torch.allclose(a.sum(-1), torch.ones(()), atol=1e-5)


def run_greedy(w, cfg, ids, mask, qk_norm=False, window=None):
    """common.greedy on the causal LM -> (case dict, smallest top-2 margin, generated tokens)."""
    margins = []

    def step(i, m, pos):
        logits = F.linear(decoder(w, cfg, i, m, pos, qk_norm, window)[0][-1], lm_head(w, cfg))
        top = logits[:, -1].topk(2, dim=-1).values
        margins.append(float((top[:, 0] - top[:, 1]).min()))
        return logits

    with torch.no_grad():
        seq = greedy(step, ids, mask, NEW_TOKENS)
    case = {"dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask),
            "newTokens": NEW_TOKENS, "sequences": i32list(seq), "minMargin": min(margins)}
    return case, min(margins), seq[:, ids.shape[1]:]


def eos_ids(cfg):
    e = cfg.get("eos_token_id")
    return set(e if isinstance(e, list) else [] if e is None else [e])


def causal_case(w, cfg, qk_norm=False, window=None):
    """Forward on IDS/MASK (positions 0..L-1, as a plain forward without position_ids) plus the two
    greedy runs -> (case fields, ok) where ok says every greedy margin >= MIN_MARGIN and no EOS was
    generated."""
    from common import IDS, MASK
    L = IDS.shape[1]
    pos = torch.arange(L)[None].expand(IDS.shape[0], L)
    with torch.no_grad():
        hidden, attns = decoder(w, cfg, IDS, MASK, pos, qk_norm, window)
        logits = F.linear(hidden[-1], lm_head(w, cfg))
    check_forward(hidden, attns, MASK, window)
    g, m1, t1 = run_greedy(w, cfg, GREEDY_IDS, GREEDY_MASK, qk_norm, window)
    s, m2, t2 = run_greedy(w, cfg, SINGLE_IDS, SINGLE_MASK, qk_norm, window)
    eos = eos_ids(cfg)
    ok = min(m1, m2) >= MIN_MARGIN and not any(int(t) in eos for t in torch.cat([t1.reshape(-1), t2.reshape(-1)]))
    fields = {"dims": list(IDS.shape), "inputIds": i32list(IDS), "attentionMask": i32list(MASK),
              "hiddenStates": [f32list(h) for h in hidden], "attentions": [f32list(a) for a in attns],
              "logits": {"causalLM": f32list(logits)}, "greedy": g, "greedySingle": s}
    return fields, ok, min(m1, m2)

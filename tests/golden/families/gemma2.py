"""Gemma 2 (Gemma2ForCausalLM): a tiny checkpoint and what PyTorch computes on it, written out after
transformers' models/gemma2/modeling_gemma2.py (see MODELING below) in plain torch.

What the forward does, in the file's order:
  x = embed_tokens[ids] * torch.tensor(sqrt(hidden_size), dtype=float32)   (hidden_states[0])
  per layer i (sliding when i is even: layer_types absent -> "sliding_attention" iff (i + 1) % 2,
  the old spelling `not bool(layer_idx % 2)`):
    h = input_layernorm(x); a = attention(h); x = x + post_attention_layernorm(a)
    h = pre_feedforward_layernorm(x); m = down(gelu_tanh(gate(h)) * up(h)); x = x + post_feedforward_layernorm(m)
  norm(x) is the last hidden state (hidden_states[-1] is after the final norm); logits = norm(x) @ embed_tokens.T,
  then final soft-capping tanh(logits / c) * c with c = final_logit_softcapping.
  Gemma2RMSNorm: x32 = x.float(); x32 * rsqrt(mean(x32^2) + eps) * (1 + weight.float()), cast back.
  Attention: scores = (q @ k.T) * query_pre_attn_scalar ** -0.5, then tanh(scores / c) * c with
  c = attn_logit_softcapping, then + the additive mask (causal; sliding layers also i - j < sliding_window),
  softmax in float32. GQA: kv head g serves query heads g * (H / G) ... (g + 1) * (H / G) - 1 (repeat_kv).
  RoPE: rotate_half layout over the whole head_dim, theta rope_theta, positions arange(L) for a plain forward.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import F, IDS, MASK, additive_mask, f32list, greedy, i32list, rnd, save, torch, write_case  # noqa: E402
from fixtures.ops import apply_rope  # noqa: E402

MODELING = ("transformers src/transformers/models/gemma2/modeling_gemma2.py at commit "
            "9a80143ca26066ee3266749a57c7b3850d8843be (4.49/4.50 generation: Gemma2Attention.sliding_window when "
            "`not bool(layer_idx % 2)`, eager_attention_forward with softcap, Gemma2Model appending hidden_states "
            "before each layer and norm(x) last), checked against the current modular_gemma2.py (layer_types default "
            "'sliding_attention' if (i + 1) % 2, masking_utils sliding_window_overlay kv_idx > q_idx - sliding_window, "
            "check_model_inputs replacing hidden_states[-1] with last_hidden_state): the same numbers")
CAP_ATTN, CAP_FINAL = 5.0, 3.0
EOS = [1, 63]


def rms1p(x, w, eps):
    """Gemma2RMSNorm: normalised in float32, times (1 + weight) in float32, cast back."""
    x32 = x.float()
    out = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return (out * (1.0 + w.float())).type_as(x)


def heads(t, B, L, n, hd):
    return t.view(B, L, n, hd).transpose(1, 2)


def is_sliding(cfg, i):
    types = cfg.get("layer_types")
    return types[i] == "sliding_attention" if types else bool((i + 1) % 2)


def gemma2_forward(w, cfg, ids, mask, pos):
    """-> hidden states (num_layers + 1, the last after model.norm), attention weights per layer,
    soft-capped logits, and the largest |score| / |logit| before their caps (to show the caps bite)."""
    B, L = ids.shape
    D, H, G, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    emb = w["model.embed_tokens.weight"]
    x = emb[ids] * torch.tensor(D ** 0.5, dtype=torch.float32)
    masks = {False: additive_mask(mask, True), True: additive_mask(mask, True, window=cfg["sliding_window"])}
    hidden, attns, pre_scores = [x], [], 0.0
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms1p(x, w[p + "input_layernorm.weight"], eps)
        q = heads(h @ w[p + "self_attn.q_proj.weight"].T, B, L, H, hd)
        k = heads(h @ w[p + "self_attn.k_proj.weight"].T, B, L, G, hd)
        v = heads(h @ w[p + "self_attn.v_proj.weight"].T, B, L, G, hd)
        q, _ = apply_rope(q, pos, hd, theta, "half", {})
        k, _ = apply_rope(k, pos, hd, theta, "half", {})
        k, v = k.repeat_interleave(H // G, dim=1), v.repeat_interleave(H // G, dim=1)
        s = torch.matmul(q, k.transpose(2, 3)) * cfg["query_pre_attn_scalar"] ** -0.5
        c = cfg["attn_logit_softcapping"]
        add = masks[is_sliding(cfg, i)]
        pre_scores = max(pre_scores, float(s.masked_fill(add != 0, 0).abs().max()))  # over visible keys
        s = torch.tanh(s / c) * c
        a = torch.softmax(s + add, dim=-1, dtype=torch.float32)
        o = torch.matmul(a, v).transpose(1, 2).reshape(B, L, H * hd) @ w[p + "self_attn.o_proj.weight"].T
        x = x + rms1p(o, w[p + "post_attention_layernorm.weight"], eps)
        h = rms1p(x, w[p + "pre_feedforward_layernorm.weight"], eps)
        m = F.gelu(h @ w[p + "mlp.gate_proj.weight"].T, approximate="tanh") * (h @ w[p + "mlp.up_proj.weight"].T)
        x = x + rms1p(m @ w[p + "mlp.down_proj.weight"].T, w[p + "post_feedforward_layernorm.weight"], eps)
        attns.append(a)
        hidden.append(x)
    hidden[-1] = rms1p(x, w["model.norm.weight"], eps)
    logits = hidden[-1] @ emb.T  # tied: lm_head.weight is model.embed_tokens.weight
    c = cfg["final_logit_softcapping"]
    return hidden, attns, torch.tanh(logits / c) * c, pre_scores, float(logits.abs().max())


def config():
    # The key set of google/gemma-2-2b-it's config.json, sizes shrunk.
    V, D, Lyr, H, G, hd, Fd = 64, 32, 4, 4, 2, 16, 64
    return {"architectures": ["Gemma2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "attn_logit_softcapping": CAP_ATTN, "bos_token_id": 2, "cache_implementation": "hybrid",
            "eos_token_id": EOS, "final_logit_softcapping": CAP_FINAL, "head_dim": hd,
            "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": D,
            "initializer_range": 0.02, "intermediate_size": Fd,
            "max_position_embeddings": 64, "model_type": "gemma2", "num_attention_heads": H, "num_hidden_layers": Lyr,
            "num_key_value_heads": G, "pad_token_id": 0, "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-06,
            "rope_theta": 10000.0, "sliding_window": 4, "torch_dtype": "float32", "transformers_version": "4.42.4",
            "use_cache": True, "vocab_size": V}


def weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    V, D, H, G, hd, Fd = (cfg[k] for k in ["vocab_size", "hidden_size", "num_attention_heads", "num_key_value_heads",
                                            "head_dim", "intermediate_size"])
    t = {"model.embed_tokens.weight": rnd(g, V, D, sd=0.3)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = rnd(g, D)  # stored as weight, applied as (1 + weight)
        t[p + "self_attn.q_proj.weight"] = rnd(g, H * hd, D, sd=0.35)
        t[p + "self_attn.k_proj.weight"] = rnd(g, G * hd, D, sd=0.35)
        t[p + "self_attn.v_proj.weight"] = rnd(g, G * hd, D)
        t[p + "self_attn.o_proj.weight"] = rnd(g, D, H * hd)
        # The post-norms scale what each sub-layer adds (effective gain 1 + weight, about 3 here), so the
        # random model's next token is not simply its last input token (tied embeddings favour that).
        t[p + "post_attention_layernorm.weight"] = 2.0 + rnd(g, D)
        t[p + "pre_feedforward_layernorm.weight"] = rnd(g, D)
        t[p + "mlp.gate_proj.weight"] = rnd(g, Fd, D)
        t[p + "mlp.up_proj.weight"] = rnd(g, Fd, D)
        t[p + "mlp.down_proj.weight"] = rnd(g, D, Fd)
        t[p + "post_feedforward_layernorm.weight"] = 2.0 + rnd(g, D)
    t["model.norm.weight"] = rnd(g, D)
    return t  # no lm_head.weight: tie_word_embeddings (default true), as the Hub checkpoints are saved


def run_greedy(w, cfg, prompts, new):
    """common.greedy over the left-padded prompts (pad 0), recording the top-2 margin of every step's
    last-position (soft-capped) logits."""
    L = max(len(p) for p in prompts)
    ids = torch.tensor([[0] * (L - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (L - len(p)) + [1] * len(p) for p in prompts])
    margins = []

    def step(i, m, pos):
        logits = gemma2_forward(w, cfg, i, m, pos)[2]
        top = logits[:, -1].topk(2, dim=-1).values
        margins.append(float((top[:, 0] - top[:, 1]).min()))
        return logits

    seq = greedy(step, ids, mask, new)
    case = {"dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask), "newTokens": new,
            "sequences": i32list(seq), "minMargin": min(margins)}
    return case, min(margins), seq[:, L:]


def main():
    cfg = config()
    for seed in range(35, 135):
        t = weights(cfg, seed)
        w = {k: v.float() for k, v in t.items()}
        with torch.no_grad():
            hidden, attns, logits, pre_s, pre_l = gemma2_forward(w, cfg, IDS, MASK, torch.arange(IDS.shape[1]))
            batch, m1, gen1 = run_greedy(w, cfg, [[2, 17, 33, 5, 60], [2, 50, 12]], 32)
            single, m2, gen2 = run_greedy(w, cfg, [[2, 17, 33, 5, 60, 41]], 32)
        # generate() would stop a row at an eos id; none is generated, so its output is common.greedy's.
        eos_free = not any(int(x) in EOS for x in torch.cat([gen1.flatten(), gen2.flatten()]))
        varied = min(len(set(r.tolist())) for r in list(gen1) + list(gen2)) >= 6
        if min(m1, m2) >= 1e-3 and pre_s > 1.5 * CAP_ATTN and pre_l > 1.5 * CAP_FINAL and eos_free and varied:
            break
        print("seed", seed, "rejected: margins", m1, m2, "pre-cap", pre_s, pre_l, "eos-free", eos_free,
              "varied", varied)
    else:
        raise SystemExit("no seed passed")
    # Sanity: finite, each attention row a distribution over its visible keys only.
    for x in hidden + attns + [logits]:
        assert torch.isfinite(x).all()
    for i, a in enumerate(attns):
        vis = additive_mask(MASK, True, window=cfg["sliding_window"] if is_sliding(cfg, i) else None) == 0
        assert (a.sum(-1) - 1).abs().max() < 1e-5 and float(a.masked_fill(vis, 0).abs().max()) == 0.0
    assert float(logits.abs().max()) < CAP_FINAL
    w = save("gemma2", cfg, t)
    print("seed", seed, "max |score| before cap", pre_s, "max |logit| before cap", pre_l, "margins", m1, m2)
    write_case("gemma2", {
        "family": "gemma2", "modeling": MODELING, "architecture": "Gemma2ForCausalLM", "seed": seed,
        "dims": list(IDS.shape), "inputIds": i32list(IDS), "attentionMask": i32list(MASK),
        "positionIds": "arange(L) (no position_ids passed, right padding)",
        "slidingLayers": [i for i in range(cfg["num_hidden_layers"]) if is_sliding(cfg, i)],
        "maxAbsScoreBeforeCap": pre_s, "maxAbsLogitBeforeCap": pre_l,
        "hiddenStates": [f32list(h) for h in hidden], "hiddenStatesLastIsAfterFinalNorm": True,
        "attentions": [f32list(a) for a in attns], "logits": {"causalLM": f32list(logits)},
        "greedy": batch, "greedySingle": single})


if __name__ == "__main__":
    main()

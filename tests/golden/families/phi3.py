#!/usr/bin/python3
"""Phi-3 (Phi3ForCausalLM) with LongRoPE, tiny and random (a fixed torch.Generator seed per checkpoint,
the first seed from SEEDS whose greedy runs never hinge on a near-tie and never emit the eos id).

Written after transformers src/transformers/models/phi3/modeling_phi3.py at commit
43c2b4816a6507cb08a18b402c6b053453651daf (the 4.48 generation: Phi3RotaryEmbedding with
_longrope_frequency_update, _prepare_4d_causal_attention_mask_with_cache_position,
Phi3ForCausalLM.prepare_inputs_for_generation), checked against the current modular_phi3.py (commit
06053b84c14d72e9789fbf27844a75aa89b3ded7: partial rotary in apply_rotary_pos_emb, PhiRotaryEmbedding,
the same cache-dropping prepare_inputs_for_generation) and modeling_rope_utils.py
(_compute_longrope_parameters, longrope_frequency_update). Eager attention, dropout the identity.

  Phi3Model: x = embed_tokens(ids) (no scaling);
  layer: x = x + o_proj(attention(input_layernorm(x)));  x = x + mlp(post_attention_layernorm(x))
  RMSNorm: weight * x * rsqrt(mean(x^2) + rms_norm_eps)
  attention: qkv = qkv_proj(h); rows [0, H*hd) are the query (head h = rows h*hd..h*hd+hd-1), the next
      G*hd rows the key (kv head g = rows H*hd + g*hd ...), the last G*hd rows the value; RoPE 'half'
      layout (rotate_half) on the first rd = int(hd * partial_rotary_factor) dims (1.0 when absent);
      query head h reads kv head h // (H / G) (repeat_kv); softmax(q k^T * hd^-0.5 + mask) v; o_proj.
  mlp: gate_up_proj rows [0, I) = gate, [I, 2I) = up (chunk(2) on the output); down_proj(up * silu(gate)).
  norm after the last layer; logits = lm_head(x) (tie_word_embeddings false: lm_head.weight in the file;
      true: embed_tokens.weight).
  hidden_states: the embeddings, each layer's input, then norm(x).

LongRoPE (rope_scaling {"type": "longrope", "short_factor", "long_factor"}, each rd/2 long):
  inv_freq[i] = 1 / (ext[i] * rope_theta ** (2i / rd)), ext = long_factor if seq_len > 
      original_max_position_embeddings else short_factor;
  seq_len = max(position_ids) + 1 over the whole forward call (the whole batch, every row): one choice per
      call, not per row, not per position;
  cos/sin are multiplied by attention_factor = sqrt(1 + ln(factor) / ln(original_max_position_embeddings)),
      factor = max_position_embeddings / original_max_position_embeddings (1.0 if factor <= 1), with short
      and long factors alike (rope_scaling "attention_factor" overrides it when present; "factor" absent).

Checkpoints (tests/fixtures/families/<name>/ + <name>.json):
  phi3          Phi-3.5-mini layout: 4 query heads, 2 kv heads, head_dim 8, full rotary, untied
  phi3-partial  Phi-4-mini style: partial_rotary_factor 0.75 (6 of 8 dims rotate, 3 factors each),
                tie_word_embeddings true (no lm_head.weight in the file); needs transformers >= 4.50
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: E402,F401,F403

MODELING = ("transformers src/transformers/models/phi3/modeling_phi3.py at commit "
            "43c2b4816a6507cb08a18b402c6b053453651daf (4.48), checked against modular_phi3.py at commit "
            "06053b84c14d72e9789fbf27844a75aa89b3ded7 (partial rotary, PhiRotaryEmbedding) and "
            "modeling_rope_utils.py _compute_longrope_parameters / longrope_frequency_update")
V, D, LAYERS, HEADS, KV, FF, MAXPOS, ORIG = 64, 32, 2, 4, 2, 64, 64, 16
HD = D // HEADS
GREEDY_IDS = torch.tensor([[5, 17, 33, 9, 41], [0, 0, 12, 48, 7]])
GREEDY_MASK = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])
SINGLE_IDS = torch.tensor([[3, 22, 45, 8, 19, 30]])
NEW = 32
MIN_MARGIN = 1e-3
MIN_DISTINCT = 6
SEEDS = range(900, 1500)
FACTORS = {  # rd / 2 each
    4: {"short_factor": [1.0, 1.05, 1.2, 1.6], "long_factor": [1.1, 2.5, 6.0, 14.0]},
    3: {"short_factor": [1.0, 1.1, 1.4], "long_factor": [1.3, 4.0, 11.0]},
}


def config(partial):
    """microsoft/Phi-3.5-mini-instruct's config.json key set, sizes shrunk (max_position_embeddings /
    original_max_position_embeddings 64 / 16 instead of 131072 / 4096; sliding_window 128, twice the
    max as there, so it never masks anything)."""
    rd = int(HD * (0.75 if partial else 1.0))
    cfg = {
        "architectures": ["Phi3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "auto_map": {"AutoConfig": "configuration_phi3.Phi3Config",
                     "AutoModelForCausalLM": "modeling_phi3.Phi3ForCausalLM"},
        "bos_token_id": 1,
        "embd_pdrop": 0.0,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": D,
        "initializer_range": 0.02,
        "intermediate_size": FF,
        "max_position_embeddings": MAXPOS,
        "model_type": "phi3",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV,
        "original_max_position_embeddings": ORIG,
        "pad_token_id": 0,
        "resid_pdrop": 0.0,
        "rms_norm_eps": 1e-05,
        "rope_scaling": {**FACTORS[rd // 2], "type": "longrope"},
        "rope_theta": 10000.0,
        "sliding_window": 2 * MAXPOS,
        "tie_word_embeddings": bool(partial),
        "torch_dtype": "float32",
        "transformers_version": "4.43.3",
        "use_cache": True,
        "vocab_size": V,
    }
    if partial:
        cfg["partial_rotary_factor"] = 0.75
    return cfg


def tensors(g, tied):
    t = {"model.embed_tokens.weight": rnd(g, V, D, sd=0.6)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "self_attn.qkv_proj.weight"] = rnd(g, (HEADS + 2 * KV) * HD, D, sd=0.45)
        t[p + "self_attn.o_proj.weight"] = rnd(g, D, HEADS * HD, sd=0.3)
        t[p + "post_attention_layernorm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "mlp.gate_up_proj.weight"] = rnd(g, 2 * FF, D, sd=0.3)
        t[p + "mlp.down_proj.weight"] = rnd(g, D, FF, sd=0.25)
    t["model.norm.weight"] = 1 + rnd(g, D, sd=0.1)
    if not tied:
        t["lm_head.weight"] = rnd(g, V, D, sd=0.5)
    return t


# ------------------------------------------------------------------------------------ forward
def rope_params(cfg):
    """(rd, inv_freq short, inv_freq long, attention_factor) as _compute_longrope_parameters."""
    rd = int((cfg["hidden_size"] // cfg["num_attention_heads"]) * cfg.get("partial_rotary_factor", 1.0))
    rs, orig = cfg["rope_scaling"], cfg["original_max_position_embeddings"]
    factor = cfg["max_position_embeddings"] / orig
    att = rs.get("attention_factor")
    if att is None:
        att = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
    shape = torch.arange(0, rd, 2, dtype=torch.int64).float() / rd

    def inv(ext):
        return 1.0 / (torch.tensor(ext, dtype=torch.float32) * cfg["rope_theta"] ** shape)
    return rd, inv(rs["short_factor"]), inv(rs["long_factor"]), att


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rms(x, wt, eps):
    return wt * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def forward(w, cfg, ids, pos, add, past=None):
    """Phi3ForCausalLM on `ids` [B, Lq] at positions `pos` [B, Lq] with the additive mask `add`
    [B, 1, Lq or 1, Lk], after the cached keys/values `past` (a list of (k, v) per layer, or None).
    Returns (hidden states, attentions, logits, cache, which factors)."""
    B, L = ids.shape
    H, G, eps = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["rms_norm_eps"]
    hd = cfg["hidden_size"] // H
    rd, inv_short, inv_long, att = rope_params(cfg)
    long = int(pos.max()) + 1 > cfg["original_max_position_embeddings"]
    freqs = pos.float()[..., None] * (inv_long if long else inv_short)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * att)[:, None], (emb.sin() * att)[:, None]

    def rope(t):
        return torch.cat((t[..., :rd] * cos + rotate_half(t[..., :rd]) * sin, t[..., rd:]), dim=-1)

    x = w["model.embed_tokens.weight"][ids]
    hidden, attns, cache = [], [], []
    for i in range(cfg["num_hidden_layers"]):
        hidden.append(x)
        p = f"model.layers.{i}."
        h = rms(x, w[p + "input_layernorm.weight"], eps)
        qkv = F.linear(h, w[p + "self_attn.qkv_proj.weight"])
        q = qkv[..., :H * hd].view(B, L, H, hd).transpose(1, 2)
        k = qkv[..., H * hd:(H + G) * hd].view(B, L, G, hd).transpose(1, 2)
        v = qkv[..., (H + G) * hd:].view(B, L, G, hd).transpose(1, 2)
        q, k = rope(q), rope(k)
        if past is not None:
            k, v = torch.cat((past[i][0], k), dim=2), torch.cat((past[i][1], v), dim=2)
        cache.append((k, v))
        kr, vr = k.repeat_interleave(H // G, dim=1), v.repeat_interleave(H // G, dim=1)
        a = torch.softmax(torch.matmul(q, kr.transpose(2, 3)) * hd ** -0.5 + add, dim=-1, dtype=torch.float32)
        attns.append(a)
        x = x + F.linear(torch.matmul(a, vr).transpose(1, 2).reshape(B, L, H * hd), w[p + "self_attn.o_proj.weight"])
        h = rms(x, w[p + "post_attention_layernorm.weight"], eps)
        gate, up = F.linear(h, w[p + "mlp.gate_up_proj.weight"]).chunk(2, dim=-1)
        x = x + F.linear(up * F.silu(gate), w[p + "mlp.down_proj.weight"])
    x = rms(x, w["model.norm.weight"], eps)
    hidden.append(x)
    head = w["model.embed_tokens.weight" if cfg["tie_word_embeddings"] else "lm_head.weight"]
    return hidden, attns, F.linear(x, head), cache, "long" if long else "short"


def mask_for(cfg, mask, q_len=None, past=0):
    return additive_mask(mask, causal=True, window=cfg["sliding_window"], q_len=q_len, past=past)


# ------------------------------------------------------------------------------------ greedy
def run_greedy(w, cfg, ids, mask):
    """No-cache full-prefix greedy (common.greedy) -> (sequences, min top-2 margin, factors per step)."""
    margins, used = [], []

    def step(i, m, pos):
        _, _, logits, _, which = forward(w, cfg, i, pos, mask_for(cfg, m))
        used.append(which)
        top = logits[:, -1].topk(2, dim=-1).values
        margins.append(float((top[:, 0] - top[:, 1]).min()))
        return logits
    return greedy(step, ids, mask, NEW), min(margins), used


def run_cached(w, cfg, ids, mask, quirk):
    """generate(max_new_tokens=NEW, do_sample=False) with a DynamicCache as transformers runs it for Phi3:
    prefill, then one token a step with position_ids = cumsum(mask) - 1 sliced to the new token, factors
    chosen per call by max(position_ids) + 1. Phi3ForCausalLM.prepare_inputs_for_generation drops the
    cache when input_ids.shape[1] >= original_max + 1 while cache_position[0] <= original_max (once: the
    step whose input reaches original_max + 1 tokens) and the whole sequence runs again, long factors.
    In that re-run generate still passes cache_position = [L - 1] (one entry, the cache having been
    dropped after generate computed it), and the 4D mask is built from it: with `quirk`, every query row
    gets the last row's mask (each token sees every unpadded key, the future included), which is what
    the eager path (and sdpa whenever the mask is materialized, e.g. with padding) computes; without it,
    the causal mask (what flash attention / sdpa's is_causal computes)."""
    orig = cfg["original_max_position_embeddings"]
    seq, m, cache = ids, mask, None
    margins, steps = [], []
    for t in range(NEW):
        L = seq.shape[1]
        pos = (m.cumsum(-1) - 1).masked_fill(m == 0, 1)
        if cache is not None and L >= orig + 1 and L - 1 <= orig:
            cache = None
            add = mask_for(cfg, m, q_len=1, past=L - 1) if quirk else mask_for(cfg, m)
            _, _, logits, cache, which = forward(w, cfg, seq, pos, add)
            steps.append(f"re-prefill {L} ({which})")
        elif cache is None:
            _, _, logits, cache, which = forward(w, cfg, seq, pos, mask_for(cfg, m))
            steps.append(f"prefill {L} ({which})")
        else:
            _, _, logits, cache, which = forward(w, cfg, seq[:, -1:], pos[:, -1:], mask_for(cfg, m, q_len=1, past=L - 1),
                                                 past=cache)
            steps.append(f"decode {L} ({which})")
        top = logits[:, -1].topk(2, dim=-1).values
        margins.append(float((top[:, 0] - top[:, 1]).min()))
        seq = torch.cat([seq, logits[:, -1].argmax(-1)[:, None]], 1)
        m = torch.cat([m, torch.ones_like(m[:, :1])], 1)
    return seq, min(margins), steps


def greedy_case(ids, mask, seq, margin, extra=None):
    return {"dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask), "newTokens": NEW,
            "sequences": i32list(seq), "minMargin": margin, **(extra or {})}


def factor_runs(used, start_len):
    """['short' x n, 'long' x m] -> 'total lengths a..b: short; c..d: long'."""
    out, i = [], 0
    while i < len(used):
        j = i
        while j + 1 < len(used) and used[j + 1] == used[i]:
            j += 1
        out.append(f"input length {start_len + i}..{start_len + j}: {used[i]}")
        i = j + 1
    return "; ".join(out)


# ------------------------------------------------------------------------------------ cases
def sanity(hidden, attns, logits, add):
    for t in hidden + attns + [logits]:
        assert torch.isfinite(t).all()
    for a in attns:
        assert torch.allclose(a.sum(-1), torch.ones(a.shape[:-1]), atol=1e-5)
        # nothing on masked keys, in every row with a visible key (a left-padded row's padding queries see
        # none: their softmax over all-finfo.min scores is uniform, as in transformers' eager path)
        seen = (add == 0).any(-1, keepdim=True)
        assert float(a.masked_fill((add == 0) | ~seen, 0).abs().max()) == 0.0


def length_case(w, cfg, ids, mask):
    pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    add = mask_for(cfg, mask)
    hidden, attns, logits, _, which = forward(w, cfg, ids, pos, add)
    sanity(hidden, attns, logits, add)
    return {"dims": list(ids.shape), "inputIds": i32list(ids), "attentionMask": i32list(mask),
            "positionIds": i32list(pos), "factors": which, "logits": f32list(logits)}


def build(name, partial):
    cfg = config(partial)
    tied = cfg["tie_word_embeddings"]
    single_mask = torch.ones_like(SINGLE_IDS)
    for seed in SEEDS:
        w = tensors(torch.Generator().manual_seed(seed), tied)
        seq, m1, _ = run_greedy(w, cfg, GREEDY_IDS, GREEDY_MASK)
        seq1, m2, _ = run_greedy(w, cfg, SINGLE_IDS, single_mask)
        cq, m3, _ = run_cached(w, cfg, GREEDY_IDS, GREEDY_MASK, True)
        cq1, m4, _ = run_cached(w, cfg, SINGLE_IDS, single_mask, True)
        new = torch.cat([s[:, -NEW:].reshape(-1) for s in (seq, seq1, cq, cq1)])
        varied = all(len(set(r[-NEW:].tolist())) >= MIN_DISTINCT for r in list(seq) + list(seq1))
        if min(m1, m2, m3, m4) >= MIN_MARGIN and varied and not (new == cfg["eos_token_id"]).any():
            break
    else:
        raise SystemExit(name + ": no seed without a near-tie")
    w = save(name, cfg, tensors(torch.Generator().manual_seed(seed), tied))
    seq, m1, used = run_greedy(w, cfg, GREEDY_IDS, GREEDY_MASK)
    seq1, m2, used1 = run_greedy(w, cfg, SINGLE_IDS, single_mask)
    cq, m3, steps = run_cached(w, cfg, GREEDY_IDS, GREEDY_MASK, True)
    cq1, m4, steps1 = run_cached(w, cfg, SINGLE_IDS, single_mask, True)
    # The cached path without the re-prefill's mask quirk is the no-cache rule again (checks run_cached).
    cc, _, _ = run_cached(w, cfg, GREEDY_IDS, GREEDY_MASK, False)
    cc1, _, _ = run_cached(w, cfg, SINGLE_IDS, single_mask, False)
    assert torch.equal(cc, seq) and torch.equal(cc1, seq1)

    pos = torch.arange(IDS.shape[1]).expand_as(IDS)  # no position_ids passed: cache_position = arange(L)
    add = mask_for(cfg, MASK)
    hidden, attns, logits, _, which = forward(w, cfg, IDS, pos, add)
    assert which == "short"
    sanity(hidden, attns, logits, add)
    rd, inv_short, inv_long, att = rope_params(cfg)
    g = torch.Generator().manual_seed(5)
    long_ids = torch.randint(1, V, (2, ORIG + 1), generator=g)
    long_ids[1, :3] = 0
    long_mask = torch.ones_like(long_ids)
    long_mask[1, :3] = 0
    write_case(name, {
        "family": "phi3", "architecture": "Phi3ForCausalLM", "modeling": MODELING, "seed": seed,
        "rope": {"rotaryDims": rd, "invFreqShort": f32list(inv_short), "invFreqLong": f32list(inv_long),
                 "attentionFactor": att, "originalMaxPositionEmbeddings": ORIG,
                 "rule": "long factors iff max(position_ids) + 1 > original_max_position_embeddings, one choice "
                         "for the whole forward call (all rows); cos and sin times attentionFactor either way"},
        "dims": list(IDS.shape), "inputIds": i32list(IDS), "attentionMask": i32list(MASK),
        "positionIds": i32list(pos), "positionIdsNote": "arange(L): no position_ids passed (right padding)",
        "factors": which,
        "hiddenStates": [f32list(h) for h in hidden], "hiddenStatesLastIsAfterFinalNorm": True,
        "attentions": [f32list(a) for a in attns],
        "logits": {"causalLM": f32list(logits)},
        "ropeLengths": {
            "note": "logits [B, L, V] of single forward calls at the short/long boundary, position_ids = "
                    "cumsum(mask) - 1 (1 at padding); 'batch17' row 1 has 14 real tokens (its own max position "
                    "13) yet takes the long factors because row 0 reaches position 16",
            "single16": length_case(w, cfg, long_ids[:1, :ORIG], long_mask[:1, :ORIG]),
            "single17": length_case(w, cfg, long_ids[:1], long_mask[:1]),
            "batch17": length_case(w, cfg, long_ids, long_mask),
        },
        "greedy": greedy_case(GREEDY_IDS, GREEDY_MASK, seq, m1, {"factorsByStep": factor_runs(used, 5)}),
        "greedySingle": greedy_case(SINGLE_IDS, single_mask, seq1, m2, {"factorsByStep": factor_runs(used1, 6)}),
        "greedyCachedRule": greedy_case(GREEDY_IDS, GREEDY_MASK, cq, m3, {"steps": steps,
                                        "sameAsGreedy": bool(torch.equal(cq, seq))}),
        "greedySingleCachedRule": greedy_case(SINGLE_IDS, single_mask, cq1, m4, {"steps": steps1,
                                              "sameAsGreedy": bool(torch.equal(cq1, seq1))}),
        "greedyNote": "greedy / greedySingle: no-cache full-prefix greedy (each step one forward over the whole "
                      "sequence, position_ids = cumsum(mask) - 1, 1 at padding, factors by that call's max "
                      "position). It equals cached generate when the cache is dropped and the whole sequence "
                      "re-run causally at the switch (what Phi3ForCausalLM.prepare_inputs_for_generation means "
                      "to do). *CachedRule: generate with a DynamicCache as the eager path runs it, the re-prefill "
                      "at input length original_max + 1 masked from cache_position [L - 1] (every query sees "
                      "every unpadded key): see run_cached. No new token is the eos id.",
    })


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    build("phi3", False)
    build("phi3-partial", True)

#!/usr/bin/python3
"""Qwen2 checkpoints: `qwen2` (Qwen2ForCausalLM, tied embeddings as Qwen/Qwen2.5-0.5B-Instruct) and
`qwen2-seqcls` (Qwen2ForSequenceClassification: `score` on every position, then the row's last
token that is not pad_token_id). Forward after transformers' models/qwen2/modeling_qwen2.py and
modeling_layers.py (GenericForSequenceClassification); see gqa_decoder.py.

Run: /usr/bin/python3 tests/golden/families/qwen2.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import F, IDS, MASK, f32list, i32list, rnd, save, torch, write_case  # noqa: E402
from gqa_decoder import causal_case, check_forward, decoder  # noqa: E402

MODELING = ("transformers src/transformers/models/qwen2/modeling_qwen2.py (check_model_inputs era, >= 4.54; "
            "same numbers as 4.48), configuration_qwen2.py (sliding_window -> None unless use_sliding_window)")
V, D, LAYERS, H, G, FF, P = 64, 32, 3, 4, 2, 48, 64
HD = D // H


def config(arch, **extra):
    # Key set of Qwen/Qwen2.5-0.5B-Instruct's config.json, sizes shrunk. sliding_window 4 and
    # max_window_layers 1 are inert because use_sliding_window is false (a loader that applied them
    # anyway would see layers 1 and 2 windowed to 4 keys and miss the fixture).
    return {"architectures": [arch], "attention_dropout": 0.0, "bos_token_id": 61, "eos_token_id": 63,
            "hidden_act": "silu", "hidden_size": D, "initializer_range": 0.02, "intermediate_size": FF,
            "max_position_embeddings": P, "max_window_layers": 1, "model_type": "qwen2", "num_attention_heads": H,
            "num_hidden_layers": LAYERS, "num_key_value_heads": G, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
            "sliding_window": 4, "tie_word_embeddings": True, "torch_dtype": "float32",
            "transformers_version": "4.43.1", "use_cache": True, "use_sliding_window": False, "vocab_size": V, **extra}


def backbone(g):
    t = {"model.embed_tokens.weight": rnd(g, V, D, sd=0.6)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "self_attn.q_proj.weight"], t[p + "self_attn.q_proj.bias"] = rnd(g, H * HD, D), rnd(g, H * HD)
        t[p + "self_attn.k_proj.weight"], t[p + "self_attn.k_proj.bias"] = rnd(g, G * HD, D), rnd(g, G * HD)
        t[p + "self_attn.v_proj.weight"], t[p + "self_attn.v_proj.bias"] = rnd(g, G * HD, D), rnd(g, G * HD)
        t[p + "self_attn.o_proj.weight"] = rnd(g, D, H * HD)
        t[p + "post_attention_layernorm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = rnd(g, FF, D), rnd(g, FF, D)
        t[p + "mlp.down_proj.weight"] = rnd(g, D, FF)
    t["model.norm.weight"] = 1 + rnd(g, D, sd=0.1)
    return t


def causal():
    cfg = config("Qwen2ForCausalLM")
    for seed in range(200, 300):
        w = save("qwen2", cfg, backbone(torch.Generator().manual_seed(seed)))  # tied: no lm_head.weight
        fields, ok, margin = causal_case(w, cfg)
        if ok:
            break
        print("qwen2: seed", seed, "rejected (margin", margin, ")")
    assert ok
    write_case("qwen2", {"family": "qwen2", "architecture": "Qwen2ForCausalLM", "modeling": MODELING, "seed": seed,
                         **fields})


def seqcls():
    labels = ["negative", "neutral", "positive"]
    cfg = config("Qwen2ForSequenceClassification", id2label={str(i): l for i, l in enumerate(labels)},
                 label2id={l: i for i, l in enumerate(labels)}, pad_token_id=0)
    g = torch.Generator().manual_seed(310)
    t = backbone(g)
    t["score.weight"] = rnd(g, len(labels), D, sd=0.5)
    w = save("qwen2-seqcls", cfg, t)
    L = IDS.shape[1]
    pos = torch.arange(L)[None].expand(IDS.shape[0], L)
    with torch.no_grad():
        hidden, attns = decoder(w, cfg, IDS, MASK, pos)
        scores = F.linear(hidden[-1], w["score.weight"])  # [B, L, num_labels], every position
    check_forward(hidden, attns, MASK)
    # GenericForSequenceClassification: the rightmost token != pad_token_id (input_ids, not the mask)
    non_pad = (IDS != cfg["pad_token_id"]).int()
    last = (torch.arange(L, dtype=torch.int32) * non_pad).argmax(-1)
    pooled = scores[torch.arange(IDS.shape[0]), last]
    write_case("qwen2-seqcls", {"family": "qwen2", "architecture": "Qwen2ForSequenceClassification",
                                "modeling": MODELING + "; src/transformers/modeling_layers.py "
                                "GenericForSequenceClassification", "seed": 310, "numLabels": len(labels),
                                "dims": list(IDS.shape), "inputIds": i32list(IDS), "attentionMask": i32list(MASK),
                                "hiddenStates": [f32list(h) for h in hidden], "attentions": [f32list(a) for a in attns],
                                "pooledIndex": i32list(last), "logits": {"sequenceClassification": f32list(pooled)}})


if __name__ == "__main__":
    causal()
    seqcls()

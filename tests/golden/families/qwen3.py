#!/usr/bin/python3
"""The `qwen3` checkpoint (Qwen3ForCausalLM): per-head q_norm / k_norm (RMSNorm over head_dim, eps
rms_norm_eps) on the projections before RoPE, no q/k/v/o bias (attention_bias false), an explicit
head_dim (16) unequal to hidden_size / num_attention_heads (8), untied lm_head.weight. Forward after
transformers' models/qwen3/modeling_qwen3.py; see gqa_decoder.py.

Run: /usr/bin/python3 tests/golden/families/qwen3.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import rnd, save, torch, write_case  # noqa: E402
from gqa_decoder import causal_case  # noqa: E402

MODELING = ("transformers src/transformers/models/qwen3/modeling_qwen3.py (check_model_inputs era, >= 4.54; "
            "Qwen3 first shipped in 4.51, same numbers), configuration_qwen3.py")
V, D, LAYERS, H, G, HD, FF, P = 64, 32, 3, 4, 2, 16, 48, 64

# Key set of Qwen/Qwen3-0.6B's config.json, sizes shrunk; tie_word_embeddings false (as Qwen3-8B)
# so the file holds lm_head.weight.
CONFIG = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
          "bos_token_id": 61, "eos_token_id": 63, "head_dim": HD, "hidden_act": "silu", "hidden_size": D,
          "initializer_range": 0.02, "intermediate_size": FF, "max_position_embeddings": P,
          "max_window_layers": LAYERS, "model_type": "qwen3", "num_attention_heads": H, "num_hidden_layers": LAYERS,
          "num_key_value_heads": G, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000,
          "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "float32",
          "transformers_version": "4.51.0", "use_cache": True, "use_sliding_window": False, "vocab_size": V}


def weights(g):
    t = {"model.embed_tokens.weight": rnd(g, V, D, sd=0.6)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "self_attn.q_proj.weight"] = rnd(g, H * HD, D)
        t[p + "self_attn.k_proj.weight"] = rnd(g, G * HD, D)
        t[p + "self_attn.v_proj.weight"] = rnd(g, G * HD, D)
        t[p + "self_attn.o_proj.weight"] = rnd(g, D, H * HD)
        t[p + "self_attn.q_norm.weight"] = 1 + rnd(g, HD, sd=0.3)
        t[p + "self_attn.k_norm.weight"] = 1 + rnd(g, HD, sd=0.3)
        t[p + "post_attention_layernorm.weight"] = 1 + rnd(g, D, sd=0.1)
        t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = rnd(g, FF, D), rnd(g, FF, D)
        t[p + "mlp.down_proj.weight"] = rnd(g, D, FF)
    t["model.norm.weight"] = 1 + rnd(g, D, sd=0.1)
    t["lm_head.weight"] = rnd(g, V, D, sd=0.5)
    return t


def main():
    for seed in range(400, 500):
        w = save("qwen3", CONFIG, weights(torch.Generator().manual_seed(seed)))
        fields, ok, margin = causal_case(w, CONFIG, qk_norm=True)
        if ok:
            break
        print("qwen3: seed", seed, "rejected (margin", margin, ")")
    assert ok
    write_case("qwen3", {"family": "qwen3", "architecture": "Qwen3ForCausalLM", "modeling": MODELING, "seed": seed,
                         **fields})


if __name__ == "__main__":
    main()

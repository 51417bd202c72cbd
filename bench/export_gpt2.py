#!/usr/bin/python3
"""The generation benchmark's model: a 4-layer, 256-wide GPT-2 (4 heads, GPT-2's 50257-token
vocabulary and 1024 positions, random weights from a fixed seed), written as Hugging Face writes it
(config.json + model.safetensors, for attnkit) and exported by torch.onnx with past key/values (for
onnxruntime-web): inputs input_ids [batch, S], position_ids [batch, S] and per layer past_key_i /
past_value_i [batch, heads, P, head_dim]; outputs the last position's logits [batch, vocab] and
present_key_i / present_value_i [batch, heads, P + S, head_dim]. The module below is GPT-2's math
(pre-LN, gelu_new, Conv1D weights [in, out], tied head) with the cache concatenated per layer.

Usage: /usr/bin/python3 bench/export_gpt2.py [out_dir]   (default bench/models/gpt2-bench)"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
from gen_fixtures import write_safetensors  # noqa: E402

V, D, LAYERS, H, P = 50257, 256, 4, 4, 1024
HD = D // H


class Gpt2Step(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = {k: torch.nn.Parameter(v, requires_grad=False) for k, v in w.items()}
        for i, (k, v) in enumerate(self.w.items()):
            self.register_parameter(f"p{i}", v)

    def forward(self, input_ids, position_ids, *past):
        F = torch.nn.functional
        w = self.w
        B, S = input_ids.shape
        x = w["wte.weight"][input_ids] + w["wpe.weight"][position_ids]
        Pl = past[0].shape[2]
        # Causal over the cache: query i (at Pl + i) sees keys j <= Pl + i.
        q_pos = torch.arange(S)[:, None] + Pl
        k_pos = torch.arange(S + Pl)[None, :]
        bias = torch.zeros(S, S + Pl).masked_fill(k_pos > q_pos, float("-inf"))
        presents = []
        for i in range(LAYERS):
            p = f"h.{i}."
            ln = lambda z, n: F.layer_norm(z, (D,), w[p + n + ".weight"], w[p + n + ".bias"], 1e-5)  # noqa: E731
            h = ln(x, "ln_1")
            qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
            q, k, v = (t.view(B, S, H, HD).transpose(1, 2) for t in qkv.split(D, dim=2))
            k = torch.cat([past[2 * i], k], dim=2)
            v = torch.cat([past[2 * i + 1], v], dim=2)
            presents += [k, v]
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(HD) + bias, dim=-1) @ v
            x = x + a.transpose(1, 2).reshape(B, S, D) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            h = ln(x, "ln_2")
            f = F.gelu(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
            x = x + f @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        x = F.layer_norm(x[:, -1], (D,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
        return (x @ w["wte.weight"].T, *presents)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "gpt2-bench")
    os.makedirs(out, exist_ok=True)
    g = torch.Generator().manual_seed(5)
    rnd = lambda *s, sd=0.02: sd * torch.randn(*s, generator=g)  # noqa: E731
    w = {"wte.weight": rnd(V, D, sd=0.1), "wpe.weight": rnd(P, D, sd=0.05)}
    for i in range(LAYERS):
        p = f"h.{i}."
        for n in ["ln_1", "ln_2"]:
            w[p + n + ".weight"], w[p + n + ".bias"] = 1 + rnd(D, sd=0.1), rnd(D)
        w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"] = rnd(D, 3 * D, sd=0.08), rnd(3 * D)
        w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"] = rnd(D, D, sd=0.08), rnd(D)
        w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"] = rnd(D, 4 * D, sd=0.08), rnd(4 * D)
        w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"] = rnd(4 * D, D, sd=0.04), rnd(D)
    w["ln_f.weight"], w["ln_f.bias"] = 1 + rnd(D, sd=0.1), rnd(D)
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_embd": D, "n_layer": LAYERS,
              "n_head": H, "n_positions": P, "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-5, "bos_token_id": 50256, "eos_token_id": 50256}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), w, {"format": "pt"})
    m = Gpt2Step(w).eval()
    ids = torch.tensor([[5, 7, 9]])
    past = [torch.zeros(1, H, 0, HD) for _ in range(2 * LAYERS)]
    names = [f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
    presents = [f"present_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
    axes = {"input_ids": {0: "batch", 1: "S"}, "position_ids": {0: "batch", 1: "S"}, "logits": {0: "batch"}}
    axes.update({n: {0: "batch", 2: "P"} for n in names})
    axes.update({n: {0: "batch", 2: "T"} for n in presents})
    with torch.no_grad():
        torch.onnx.export(m, (ids, torch.arange(3)[None], *past), os.path.join(out, "model.onnx"),
                          input_names=["input_ids", "position_ids", *names], output_names=["logits", *presents],
                          dynamic_axes=axes, opset_version=14, do_constant_folding=True)
    print("wrote", out)


if __name__ == "__main__":
    main()

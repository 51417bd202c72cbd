#!/usr/bin/python3
"""Golden fixtures for attnkit's tests, computed by real PyTorch.

Run with Debian's python (it has torch after `apt-get install python3-torch`):

    /usr/bin/python3 tests/golden/gen_fixtures.py

Writes tests/fixtures/*.json. The fixtures are committed, so tests and CI never need torch.
Every float is a float32 value written as the shortest decimal that round-trips it.
"""
import json
import math
import os
import sys

import torch

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def f32list(t):
    return [float(x) for x in t.detach().to(torch.float32).reshape(-1).tolist()]


def write(name, obj):
    path = os.path.normpath(os.path.join(OUT, name))
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path, os.path.getsize(path), "bytes")


# ------------------------------------------------------------------------------------ positional
def annotated_pe(max_len, d_model, base=10000.0):
    """The Annotated Transformer's PositionalEncoding table, as written there (base generalised)."""
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(base) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe, div_term


def split_pe(max_len, d_model, base=10000.0):
    """The same angles in RoFormer / GPT-J order: cat(sin, cos) along the feature axis."""
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(base) / d_model))
    angles = position * div_term
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1), div_term


def positional():
    cases = []
    specs = [
        # (length, dim, base, offset, layout)
        (1, 2, 10000.0, 0, "interleaved"),
        (7, 6, 10000.0, 0, "interleaved"),
        (50, 16, 10000.0, 0, "interleaved"),
        (17, 10, 10000.0, 0, "split"),
        (3, 2, 100.0, 0, "split"),
        (5, 512, 10000.0, 1000, "interleaved"),
        (65, 130, 500000.0, 4000, "split"),
        (4, 64, 10000.0, 65532, "interleaved"),
        (100, 128, 10000.0, 0, "interleaved"),  # the demo page's default view
        (100, 128, 10000.0, 0, "split"),
    ]
    for length, dim, base, offset, layout in specs:
        fn = annotated_pe if layout == "interleaved" else split_pe
        table, div_term = fn(offset + length, dim, base)
        cases.append({
            "length": length, "dim": dim, "base": base, "offset": offset, "layout": layout,
            "frequencies": f32list(div_term),
            "data": f32list(table[offset:offset + length]),
        })
    write("positional.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                              "cases": cases})


# ------------------------------------------------------------------------------------- embedding
def i32list(t):
    return [int(x) for x in t.reshape(-1).tolist()]


class LlamaRMSNorm(torch.nn.Module):
    """Hugging Face's LlamaRMSNorm forward, written out."""

    def __init__(self, dim, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(dim) * 0.1 + 1)
        self.eps = eps

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def embedding():
    g = torch.Generator().manual_seed(1)
    lookups = []
    for vocab, dim, n, scale, padding_idx in [(11, 1, 5, None, None), (37, 17, 9, "sqrt", 0),
                                               (50, 64, 33, 2.5, 3), (7, 771, 4, None, None)]:
        emb = torch.nn.Embedding(vocab, dim, padding_idx=padding_idx)
        with torch.no_grad():
            emb.weight.copy_(torch.randn(vocab, dim, generator=g))
        ids = torch.randint(0, vocab, (n,), generator=g)
        if padding_idx is not None:
            ids[1] = padding_idx
        s = math.sqrt(dim) if scale == "sqrt" else (scale or 1.0)
        out = emb(ids) * s  # the Annotated Transformer's Embeddings: lut(x) * sqrt(d_model)
        lookups.append({"vocab": vocab, "dim": dim, "scale": scale, "paddingIdx": padding_idx,
                        "table": f32list(emb.weight), "ids": i32list(ids), "out": f32list(out)})

    renorms = []
    for vocab, dim, n, max_norm, norm_type in [(13, 8, 10, 1.0, 2.0), (9, 5, 6, 0.5, 1.0),
                                               (20, 33, 15, 2.0, 3.0), (6, 4, 6, 0.7, float("inf"))]:
        emb = torch.nn.Embedding(vocab, dim, max_norm=max_norm, norm_type=norm_type)
        with torch.no_grad():
            emb.weight.copy_(torch.randn(vocab, dim, generator=g))
        before = emb.weight.detach().clone()
        ids = torch.randint(0, vocab, (n,), generator=g)
        out = emb(ids)  # renormalises the referenced rows of emb.weight in place
        renorms.append({"vocab": vocab, "dim": dim, "maxNorm": max_norm,
                        "normType": "Infinity" if math.isinf(norm_type) else norm_type,
                        "table": f32list(before), "ids": i32list(ids), "out": f32list(out),
                        "tableAfter": f32list(emb.weight)})

    one_hots = []
    for n, depth in [(1, 1), (5, 3), (17, 7), (4, 65)]:
        ids = torch.randint(0, depth, (n,), generator=g)
        one_hots.append({"depth": depth, "ids": i32list(ids),
                         "out": f32list(torch.nn.functional.one_hot(ids, depth).float())})

    norms = []
    for rows, dim, offset, eps in [(1, 1, 0.0, 1e-5), (3, 3, 0.0, 1e-5), (4, 4, 0.0, 1e-12), (2, 5, 0.0, 1e-5),
                                   (5, 7, 0.0, 1e-6), (3, 17, 1000.0, 1e-5), (2, 63, 0.0, 1e-5),
                                   (2, 65, -300.0, 1e-12), (3, 771, 1e4, 1e-5), (2, 768, 0.0, 1e-12)]:
        x = torch.randn(rows, dim, generator=g) + offset
        ln = torch.nn.LayerNorm(dim, eps=eps)
        with torch.no_grad():
            ln.weight.copy_(torch.randn(dim, generator=g) * 0.2 + 1)
            ln.bias.copy_(torch.randn(dim, generator=g) * 0.1)
        rms = LlamaRMSNorm(dim, eps)
        with torch.no_grad():
            rms.weight.copy_(torch.randn(dim, generator=g) * 0.2 + 1)
        norms.append({"rows": rows, "dim": dim, "eps": eps, "x": f32list(x),
                      "gamma": f32list(ln.weight), "beta": f32list(ln.bias), "layerNorm": f32list(ln(x)),
                      "layerNormPlain": f32list(torch.nn.functional.layer_norm(x, (dim,), eps=eps)),
                      "rmsWeight": f32list(rms.weight), "rmsNorm": f32list(rms(x))})

    # Position ids, with the formulas of Hugging Face transformers written out in torch.
    positions = []
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1]])
    for past in (0, 2):
        pos = mask.long().cumsum(-1) - 1          # GPT-2 / LLaMA generation with left padding
        pos.masked_fill_(mask == 0, 1)
        positions.append({"kind": "mask", "batch": 3, "length": 6 - past, "past": past,
                          "mask": i32list(mask), "out": i32list(pos[:, past:])})
    ids = torch.tensor([[0, 31414, 232, 2, 1, 1], [0, 100, 2, 1, 1, 1]])
    for past in (0, 3):                            # RoBERTa: create_position_ids_from_input_ids
        padding_idx = 1
        m = ids.ne(padding_idx).int()
        incremental = (torch.cumsum(m, dim=1).type_as(m) + past) * m
        positions.append({"kind": "ids", "batch": 2, "length": 6, "past": past, "paddingIdx": padding_idx,
                          "ids": i32list(ids), "out": i32list(incremental.long() + padding_idx)})
    for past in (0, 5):
        positions.append({"kind": "arange", "batch": 2, "length": 4, "past": past,
                          "out": i32list(torch.arange(past, past + 4).expand(2, 4))})

    write("embedding.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                             "lookups": lookups, "renorms": renorms, "oneHot": one_hots, "norms": norms,
                             "positionIds": positions})


if __name__ == "__main__":
    which = sys.argv[1:] or ["positional", "embedding"]
    for name in which:
        globals()[name]()

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


if __name__ == "__main__":
    which = sys.argv[1:] or ["positional"]
    for name in which:
        globals()[name]()

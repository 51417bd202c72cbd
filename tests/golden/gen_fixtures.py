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

# ------------------------------------------------------------------------------------ embeddings
class BertStyleEmbeddings(torch.nn.Module):
    """Hugging Face's BertEmbeddings forward (absolute positions), written out in PyTorch, with the
    options the attnkit Embeddings module has: a word scale, learned / sinusoidal / no positions,
    optional token types, LayerNorm / RMSNorm / none. Dropout is omitted (inference)."""

    def __init__(self, g, vocab, dim, max_pos, type_vocab, positional, scale, norm, eps, padding_idx,
                 layout="interleaved"):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(vocab, dim, padding_idx=padding_idx)
        with torch.no_grad():
            self.word_embeddings.weight.copy_(torch.randn(vocab, dim, generator=g))
            if padding_idx is not None:
                self.word_embeddings.weight[padding_idx].zero_()  # what PyTorch's init does
        self.positional = positional
        if positional == "learned":
            self.position_embeddings = torch.nn.Embedding(max_pos, dim)
            with torch.no_grad():
                self.position_embeddings.weight.copy_(torch.randn(max_pos, dim, generator=g) * 0.5)
        elif positional == "sinusoidal":
            pe = (annotated_pe if layout == "interleaved" else split_pe)(max_pos, dim)[0]
            self.register_buffer("pe", pe)
        self.token_type_embeddings = None
        if type_vocab:
            self.token_type_embeddings = torch.nn.Embedding(type_vocab, dim)
            with torch.no_grad():
                self.token_type_embeddings.weight.copy_(torch.randn(type_vocab, dim, generator=g) * 0.5)
        self.scale = scale
        self.norm = None
        if norm == "layernorm":
            self.norm = torch.nn.LayerNorm(dim, eps=eps)
            with torch.no_grad():
                self.norm.weight.copy_(torch.randn(dim, generator=g) * 0.2 + 1)
                self.norm.bias.copy_(torch.randn(dim, generator=g) * 0.1)
        elif norm == "rmsnorm":
            self.norm = LlamaRMSNorm(dim, eps)
            with torch.no_grad():
                self.norm.weight.copy_(torch.randn(dim, generator=g) * 0.2 + 1)

    def forward(self, input_ids, token_type_ids=None, position_ids=None, past=0):
        seq_length = input_ids.shape[1]
        if position_ids is None:
            position_ids = torch.arange(past, seq_length + past).unsqueeze(0)
        if token_type_ids is None and self.token_type_embeddings is not None:
            token_type_ids = torch.zeros_like(input_ids)  # BERT's registered all-zeros buffer
        x = self.word_embeddings(input_ids) * self.scale
        if self.token_type_embeddings is not None:
            x = x + self.token_type_embeddings(token_type_ids)
        if self.positional == "learned":
            x = x + self.position_embeddings(position_ids)
        elif self.positional == "sinusoidal":
            x = x + self.pe[position_ids]
        return self.norm(x) if self.norm is not None else x


def embeddings():
    g = torch.Generator().manual_seed(3)
    cases = []
    specs = [
        # name, config, batch, length, past, token types?, positions ("arange" | "mask" | "explicit")
        ("bert", dict(vocabSize=50, dim=17, maxPositions=20, typeVocabSize=2, positional="learned",
                      scale=1, norm="layernorm", eps=1e-12, paddingIdx=0), 2, 7, 0, True, "arange"),
        ("bert-L1-past", dict(vocabSize=30, dim=64, maxPositions=16, typeVocabSize=3, positional="learned",
                              scale=1, norm="layernorm", eps=1e-12, paddingIdx=0), 1, 1, 5, True, "arange"),
        ("bert-odd-wide", dict(vocabSize=40, dim=771, maxPositions=8, typeVocabSize=2, positional="learned",
                               scale=1, norm="layernorm", eps=1e-12, paddingIdx=0), 1, 3, 0, False, "arange"),
        ("annotated-transformer", dict(vocabSize=25, dim=16, maxPositions=64, typeVocabSize=0,
                                       positional="sinusoidal", scale="sqrt", norm="none", eps=1e-5,
                                       paddingIdx=None), 3, 9, 0, False, "arange"),
        ("sinusoidal-split-ln", dict(vocabSize=25, dim=10, maxPositions=40, typeVocabSize=0,
                                     positional="sinusoidal", layout="split", scale=2.5, norm="layernorm",
                                     eps=1e-5, paddingIdx=None), 2, 5, 4, False, "arange"),
        ("gpt2-left-padding", dict(vocabSize=60, dim=24, maxPositions=32, typeVocabSize=0, positional="learned",
                                   scale=1, norm="none", eps=1e-5, paddingIdx=None), 2, 6, 0, False, "mask"),
        ("roberta-explicit-positions", dict(vocabSize=50, dim=33, maxPositions=20, typeVocabSize=1,
                                            positional="learned", scale=1, norm="layernorm", eps=1e-5,
                                            paddingIdx=1), 2, 5, 0, True, "explicit"),
        ("rmsnorm-no-positions", dict(vocabSize=20, dim=65, maxPositions=1, typeVocabSize=0, positional="none",
                                      scale="sqrt", norm="rmsnorm", eps=1e-6, paddingIdx=None), 2, 4, 0, False,
         "arange"),
    ]
    for name, cfg, batch, length, past, with_types, pos_kind in specs:
        dim = cfg["dim"]
        scale = math.sqrt(dim) if cfg["scale"] == "sqrt" else float(cfg["scale"])
        m = BertStyleEmbeddings(g, cfg["vocabSize"], dim, cfg["maxPositions"], cfg["typeVocabSize"],
                                cfg["positional"], scale, cfg["norm"], cfg["eps"], cfg["paddingIdx"],
                                cfg.get("layout", "interleaved"))
        ids = torch.randint(0, cfg["vocabSize"], (batch, length), generator=g)
        case = {"name": name, "config": cfg, "batch": batch, "length": length, "past": past}
        types = None
        if with_types:
            types = torch.randint(0, cfg["typeVocabSize"], (batch, length), generator=g)
            case["tokenTypeIds"] = i32list(types)
        position_ids = None
        if pos_kind == "mask":
            # Left padding, as in batched GPT-2 generation; positions as Hugging Face derives them.
            mask = torch.ones(batch, past + length, dtype=torch.long)
            mask[0, :2] = 0
            position_ids = mask.cumsum(-1) - 1
            position_ids.masked_fill_(mask == 0, 1)
            position_ids = position_ids[:, past:]
            case["attentionMask"] = i32list(mask)
        elif pos_kind == "explicit":
            ids[0, -2:] = cfg["paddingIdx"]  # right padding
            mk = ids.ne(cfg["paddingIdx"]).int()
            position_ids = (torch.cumsum(mk, dim=1).type_as(mk) * mk).long() + cfg["paddingIdx"]
            case["positionIds"] = i32list(position_ids)
        case["inputIds"] = i32list(ids)
        with torch.no_grad():
            out = m(ids, types, position_ids, past)
        w = {"word": f32list(m.word_embeddings.weight)}
        if cfg["positional"] == "learned":
            w["position"] = f32list(m.position_embeddings.weight)
        if m.token_type_embeddings is not None:
            w["tokenType"] = f32list(m.token_type_embeddings.weight)
        if cfg["norm"] == "layernorm":
            w["normWeight"] = f32list(m.norm.weight)
            w["normBias"] = f32list(m.norm.bias)
        elif cfg["norm"] == "rmsnorm":
            w["normWeight"] = f32list(m.norm.weight)
        case["weights"] = w
        case["out"] = f32list(out)
        cases.append(case)
    write("embeddings.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                              "cases": cases})


if __name__ == "__main__":
    which = sys.argv[1:] or ["positional", "embedding", "embeddings"]
    for name in which:
        globals()[name]()

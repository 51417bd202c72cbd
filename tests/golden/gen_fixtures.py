#!/usr/bin/python3
"""Golden fixtures for attnkit's tests, computed by real PyTorch.

Run with Debian's python (it has torch after `bash scripts/setup.sh --goldens`):

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



# ------------------------------------------------------------------------------------- attention
def alibi_slopes_bloom(n):
    """Hugging Face BLOOM's build_alibi_tensor slopes (the ALiBi paper's rule), in float32."""
    closest = 2 ** math.floor(math.log2(n))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != n:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        remaining = min(closest, n - closest)
        powers = torch.arange(1, 1 + 2 * remaining, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, powers)], dim=0)
    return slopes


def explicit_attention(q, k, v, additive, scale):
    """softmax(q k^T * scale + additive) v per head, GQA by repeating k/v heads (HF repeat_kv).
    Rows whose keys are all masked come out as zeros (attnkit's documented choice; torch gives NaN)."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-1, -2) * scale + additive
    weights = torch.softmax(scores, dim=-1)
    dead = torch.isinf(scores).all(dim=-1, keepdim=True) & (scores < 0).all(dim=-1, keepdim=True)
    weights = torch.where(dead, torch.zeros_like(weights), weights)
    return weights @ v, weights


def attention():
    g = torch.Generator().manual_seed(4)
    cases = []
    specs = [
        # name, B, H, Hkv, Lq, Lk, d, dv, causal, mask ("none" | "padding" | "bool4" | "additive2" | "dead-row"),
        # alibi, scale (None = 1/sqrt(d))
        ("tiny", 1, 1, 1, 1, 1, 1, 1, False, "none", False, None),
        ("mha-odd", 2, 3, 3, 5, 7, 5, 5, False, "none", False, None),
        ("gqa-causal", 1, 6, 2, 7, 7, 8, 8, True, "none", False, None),
        ("mqa-cache-causal", 1, 5, 1, 3, 10, 16, 16, True, "none", False, None),
        ("padding-mask", 2, 2, 2, 6, 6, 4, 3, False, "padding", False, None),
        ("pad-and-causal", 2, 3, 3, 6, 6, 7, 7, True, "padding", False, None),
        ("bool-full-shape", 2, 2, 1, 4, 5, 6, 6, False, "bool4", False, None),
        ("additive-broadcast", 1, 3, 3, 5, 9, 4, 4, False, "additive2", False, 0.3),
        ("fully-masked-row", 1, 2, 2, 4, 4, 3, 3, False, "dead-row", False, None),
        ("alibi-5-heads-causal", 1, 5, 5, 9, 9, 3, 3, True, "none", True, None),
        ("alibi-bidirectional-cache", 2, 3, 3, 4, 6, 8, 8, False, "padding", True, None),
        ("query-longer-than-keys-causal", 1, 2, 2, 6, 4, 4, 4, True, "none", False, None),
        ("multi-tile-causal", 1, 2, 1, 150, 300, 16, 12, True, "none", True, None),
    ]
    for name, B, H, Hkv, Lq, Lk, d, dv, causal, mask_kind, alibi, scale in specs:
        q = torch.randn(B, H, Lq, d, generator=g)
        k = torch.randn(B, Hkv, Lk, d, generator=g)
        v = torch.randn(B, Hkv, Lk, dv, generator=g)
        sc = 1 / math.sqrt(d) if scale is None else scale
        additive = torch.zeros(1, 1, Lq, Lk)
        case = {"name": name, "dims": [B, H, Hkv, Lq, Lk, d, dv], "causal": causal, "alibi": alibi,
                "q": f32list(q), "k": f32list(k), "v": f32list(v)}
        if scale is not None:
            case["scale"] = scale
        if mask_kind == "padding":
            lengths = [Lk - 2 * b for b in range(B)]
            keep = torch.tensor([[1 if j < n else 0 for j in range(Lk)] for n in lengths], dtype=torch.bool)
            case["mask"] = {"type": "bool", "dims": [B, 1, 1, Lk], "data": i32list(keep.int())}
            additive = additive + torch.zeros(B, 1, 1, Lk).masked_fill(~keep.view(B, 1, 1, Lk), float("-inf"))
        elif mask_kind == "bool4":
            keep = torch.rand(B, H, Lq, Lk, generator=g) > 0.3
            keep[..., 0] = True
            case["mask"] = {"type": "bool", "dims": [B, H, Lq, Lk], "data": i32list(keep.int())}
            additive = additive + torch.zeros(B, H, Lq, Lk).masked_fill(~keep, float("-inf"))
        elif mask_kind == "additive2":
            m = torch.randn(Lq, Lk, generator=g)
            m[1, 3] = float("-inf")
            # JSON has no -Infinity: null stands for it in fixture masks.
            case["mask"] = {"type": "float32", "dims": [Lq, Lk],
                            "data": [None if math.isinf(x) else float(x) for x in m.reshape(-1).tolist()]}
            additive = additive + m
        elif mask_kind == "dead-row":
            keep = torch.ones(1, 1, Lq, Lk, dtype=torch.bool)
            keep[0, 0, 2, :] = False
            case["mask"] = {"type": "bool", "dims": [1, 1, Lq, Lk], "data": i32list(keep.int())}
            additive = additive + torch.zeros(1, 1, Lq, Lk).masked_fill(~keep, float("-inf"))
        if causal:  # bottom-right aligned: query i sees keys j <= (Lk - Lq) + i
            tril = torch.ones(Lq, Lk, dtype=torch.bool).tril(diagonal=Lk - Lq)
            additive = additive + torch.zeros(Lq, Lk).masked_fill(~tril, float("-inf"))
        if alibi:  # BLOOM's form: slope * key position (softmax ignores the per-row constant)
            slopes = alibi_slopes_bloom(H)
            additive = additive + slopes.view(1, H, 1, 1) * torch.arange(Lk, dtype=torch.float32).view(1, 1, 1, Lk)
        out, weights = explicit_attention(q, k, v, additive, sc)
        case["out"] = f32list(out)
        if Lq * Lk * H * B <= 4096:
            case["weights"] = f32list(weights)
        cases.append(case)

    masks = {
        "padding": {"ids": [[5, 6, 0, 0], [7, 0, 3, 0]], "padId": 0,
                    "out": i32list(torch.tensor([[5, 6, 0, 0], [7, 0, 3, 0]]).ne(0).int())},
        "causal": [{"q": lq, "k": lk, "out": i32list(torch.ones(lq, lk).tril(diagonal=lk - lq).int())}
                   for lq, lk in [(1, 1), (4, 4), (3, 7), (5, 2)]],
    }
    slopes = {str(n): f32list(alibi_slopes_bloom(n)) for n in [1, 2, 3, 5, 6, 8, 12, 16, 24, 33]}
    write("attention.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                             "cases": cases, "masks": masks, "alibiSlopes": slopes})


# ---------------------------------------------------------------------------------------- rotary
def hf_inv_freq(dim, base, scaling, seq_len):
    """Hugging Face modeling_rope_utils inverse frequencies and attention factor, written out."""
    def default(b):
        return 1.0 / (b ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    kind = scaling.get("type", "none")
    if kind == "none":
        return default(base), 1.0
    factor = scaling["factor"]
    if kind == "linear":
        return default(base) / factor, 1.0
    if kind == "dynamic":
        mpe = scaling["originalMaxPositions"]
        if seq_len > mpe:
            base = base * ((factor * seq_len / mpe) - (factor - 1)) ** (dim / (dim - 2))
        return default(base), 1.0
    if kind == "llama3":
        inv = default(base)
        low, high, old = scaling["lowFreqFactor"], scaling["highFreqFactor"], scaling["originalMaxPositions"]
        low_wl, high_wl = old / low, old / high
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    if kind == "yarn":
        orig = scaling["originalMaxPositions"]
        mscale, mscale_all = scaling.get("mscale"), scaling.get("mscaleAllDim")

        def get_mscale(s, m=1):
            return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0
        att = scaling.get("attentionFactor")
        if att is None:
            att = get_mscale(factor, mscale) / get_mscale(factor, mscale_all) if mscale and mscale_all \
                else get_mscale(factor)
        beta_fast, beta_slow = scaling.get("betaFast", 32), scaling.get("betaSlow", 1)

        def corr(rot):
            return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))
        lo, hi = corr(beta_fast), corr(beta_slow)
        if scaling.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, dim - 1)
        if lo == hi:
            hi += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - lo) / (hi - lo), 0, 1)
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        ef = 1 - ramp
        return inter * (1 - ef) + extra * ef, float(att)
    raise ValueError(kind)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, positions, rd, base, layout, scaling):
    """LLaMA's apply_rotary_pos_emb ('half') or GPT-J's ('interleaved'), partial rotary as NeoX."""
    seq_len = int(positions.max()) + 1
    inv, att = hf_inv_freq(rd, base, scaling, seq_len)
    freqs = positions.float()[..., None] * inv  # [..., L, rd/2], float32 as HF's matmul
    if layout == "half":
        emb = torch.cat((freqs, freqs), dim=-1)
        rot = rotate_half
    else:
        emb = freqs.repeat_interleave(2, dim=-1)
        rot = rotate_every_two
    cos, sin = emb.cos() * att, emb.sin() * att
    if positions.dim() == 2:  # [B, L] -> broadcast over heads
        cos, sin = cos[:, None], sin[:, None]
    xr, xp = x[..., :rd], x[..., rd:]
    return torch.cat((xr * cos + rot(xr) * sin, xp), dim=-1), inv


def rotary():
    g = torch.Generator().manual_seed(5)
    cases = []
    specs = [
        # name, B, H, L, d, rd, base, layout, scaling, positions ("offset:N" | "batch")
        ("llama-half", 1, 2, 5, 8, 8, 10000.0, "half", {}, "offset:0"),
        ("gptj-interleaved-partial", 2, 1, 4, 10, 6, 10000.0, "interleaved", {}, "offset:3"),
        ("neox-half-partial-odd", 1, 3, 3, 13, 4, 10000.0, "half", {}, "offset:7"),
        ("per-batch-positions", 2, 2, 4, 16, 16, 500000.0, "half", {}, "batch"),
        ("linear", 1, 1, 6, 8, 8, 10000.0, "half", {"type": "linear", "factor": 4.0}, "offset:2"),
        ("dynamic-short", 1, 1, 4, 8, 8, 10000.0, "half", {"type": "dynamic", "factor": 2.0,
                                                            "originalMaxPositions": 16}, "offset:0"),
        ("dynamic-long", 1, 1, 5, 8, 8, 10000.0, "half", {"type": "dynamic", "factor": 2.0,
                                                           "originalMaxPositions": 16}, "offset:40"),
        ("yarn", 1, 2, 5, 32, 32, 10000.0, "half", {"type": "yarn", "factor": 4.0,
                                                     "originalMaxPositions": 64}, "offset:100"),
        ("yarn-mscale", 1, 1, 3, 16, 16, 10000.0, "interleaved",
         {"type": "yarn", "factor": 8.0, "originalMaxPositions": 32, "mscale": 0.707, "mscaleAllDim": 1.0,
          "betaFast": 16.0, "betaSlow": 2.0}, "offset:50"),
        ("llama3", 1, 2, 4, 64, 64, 500000.0, "half", {"type": "llama3", "factor": 8.0, "lowFreqFactor": 1.0,
                                                        "highFreqFactor": 4.0, "originalMaxPositions": 64},
         "offset:20"),
    ]
    for name, B, H, L, d, rd, base, layout, scaling, pos in specs:
        x = torch.randn(B, H, L, d, generator=g)
        if pos == "batch":
            positions = torch.tensor([[0, 1, 2, 3], [1, 1, 2, 9]])[:B, :L]
        else:
            positions = torch.arange(L) + int(pos.split(":")[1])
        out, inv = apply_rope(x, positions, rd, base, layout, scaling)
        cases.append({"name": name, "dims": [B, H, L, d], "rotaryDim": rd, "base": base, "layout": layout,
                      "scaling": scaling, "positions": i32list(positions), "perBatch": positions.dim() == 2,
                      "x": f32list(x), "out": f32list(out), "invFreq": f32list(inv)})
    write("rotary.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                          "cases": cases})

# ------------------------------------------------------------------------- linear, MultiHeadAttention
def state(module_or_dict):
    items = module_or_dict.items() if isinstance(module_or_dict, dict) else module_or_dict.state_dict().items()
    return {k: f32list(v) for k, v in items}


def modules():
    g = torch.Generator().manual_seed(6)
    torch.manual_seed(6)
    linear = []
    for rows, n_in, n_out, bias in [(1, 1, 1, True), (3, 5, 7, True), (4, 17, 3, False), (5, 63, 65, True),
                                    (7, 771, 9, True), (2, 64, 128, False)]:
        lin = torch.nn.Linear(n_in, n_out, bias=bias)
        x = torch.randn(rows, n_in, generator=g)
        # GPT-2's Conv1D: weight [in, out], y = addmm(bias, x, weight).
        w_io = torch.randn(n_in, n_out, generator=g)
        b_io = torch.randn(n_out, generator=g) if bias else torch.zeros(n_out)
        linear.append({"rows": rows, "in": n_in, "out": n_out, "bias": bias, "x": f32list(x),
                       "weight": f32list(lin.weight), "b": f32list(lin.bias) if bias else None,
                       "y": f32list(lin(x)),
                       "conv1dWeight": f32list(w_io), "conv1dBias": f32list(b_io) if bias else None,
                       "conv1dY": f32list(torch.addmm(b_io, x, w_io))})

    mha = []
    # 1. nn.MultiheadAttention self-attention with a key padding mask (PyTorch: True = ignore).
    m = torch.nn.MultiheadAttention(12, 3, batch_first=True)
    x = torch.randn(2, 5, 12, generator=g)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    out, w = m(x, x, x, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
    mha.append({"name": "torch-self-padding", "config": {"dim": 12, "numHeads": 3}, "query": f32list(x),
                "dims": [2, 5, 12], "keyPaddingMask": i32list((~pad).int()), "weights": state(m),
                "out": f32list(out), "attnWeights": f32list(w)})
    # 2. Cross-attention with kdim/vdim and an additive attention mask.
    m = torch.nn.MultiheadAttention(10, 5, kdim=6, vdim=7, batch_first=True)
    q = torch.randn(2, 3, 10, generator=g)
    k = torch.randn(2, 4, 6, generator=g)
    v = torch.randn(2, 4, 7, generator=g)
    add = torch.randn(3, 4, generator=g)
    out, w = m(q, k, v, attn_mask=add, need_weights=True, average_attn_weights=False)
    mha.append({"name": "torch-cross-kdim-vdim", "config": {"dim": 10, "numHeads": 5, "kdim": 6, "vdim": 7},
                "query": f32list(q), "key": f32list(k), "value": f32list(v), "dims": [2, 3, 10], "kvLength": 4,
                "additiveMask": f32list(add), "weights": state(m), "out": f32list(out), "attnWeights": f32list(w)})
    # 3. Causal self-attention without biases (PyTorch's bool attn_mask: True = may not attend).
    m = torch.nn.MultiheadAttention(8, 2, bias=False, batch_first=True)
    x = torch.randn(1, 6, 8, generator=g)
    causal = torch.ones(6, 6, dtype=torch.bool).triu(1)
    out, w = m(x, x, x, attn_mask=causal, need_weights=True, average_attn_weights=False)
    mha.append({"name": "torch-causal-no-bias", "config": {"dim": 8, "numHeads": 2, "bias": False},
                "causal": True, "query": f32list(x), "dims": [1, 6, 8], "weights": state(m),
                "out": f32list(out), "attnWeights": f32list(w)})

    # 4. LLaMA attention (HF LlamaAttention written out): GQA, RoPE 'half', no biases, causal.
    def llama(x, wq, wk, wv, wo, H, G, hd, base):
        B, L, _ = x.shape
        qh = (x @ wq.T).view(B, L, H, hd).transpose(1, 2)
        kh = (x @ wk.T).view(B, L, G, hd).transpose(1, 2)
        vh = (x @ wv.T).view(B, L, G, hd).transpose(1, 2)
        pos = torch.arange(L)
        qh, _ = apply_rope(qh, pos, hd, base, "half", {})
        kh, _ = apply_rope(kh, pos, hd, base, "half", {})
        tril = torch.ones(L, L, dtype=torch.bool).tril()
        additive = torch.zeros(L, L).masked_fill(~tril, float("-inf"))
        o, w = explicit_attention(qh, kh, vh, additive, 1 / math.sqrt(hd))
        return o.transpose(1, 2).reshape(B, L, H * hd) @ wo.T, w
    dim, H, G, hd = 16, 4, 2, 4
    wq, wk = torch.randn(H * hd, dim, generator=g) * 0.3, torch.randn(G * hd, dim, generator=g) * 0.3
    wv, wo = torch.randn(G * hd, dim, generator=g) * 0.3, torch.randn(dim, H * hd, generator=g) * 0.3
    x = torch.randn(2, 7, dim, generator=g)
    out, w = llama(x, wq, wk, wv, wo, H, G, hd, 10000.0)
    mha.append({"name": "llama-gqa-rope-causal",
                "config": {"dim": dim, "numHeads": H, "numKvHeads": G, "bias": False, "positional": "rotary",
                           "rotary": {"base": 10000.0, "layout": "half"}},
                "causal": True, "query": f32list(x), "dims": [2, 7, dim],
                "weights": state({"q_proj.weight": wq, "k_proj.weight": wk, "v_proj.weight": wv,
                                  "o_proj.weight": wo}),
                "out": f32list(out), "attnWeights": f32list(w)})

    # 5. ALiBi (BLOOM's bias form) with biases, causal, 5 heads.
    dim, H = 10, 5
    m = torch.nn.MultiheadAttention(dim, H, batch_first=True)
    x = torch.randn(1, 6, dim, generator=g)
    sd = m.state_dict()
    Wq, Wk, Wv = sd["in_proj_weight"].chunk(3)
    bq, bk, bv = sd["in_proj_bias"].chunk(3)
    hd = dim // H
    qh = (x @ Wq.T + bq).view(1, 6, H, hd).transpose(1, 2)
    kh = (x @ Wk.T + bk).view(1, 6, H, hd).transpose(1, 2)
    vh = (x @ Wv.T + bv).view(1, 6, H, hd).transpose(1, 2)
    tril = torch.ones(6, 6, dtype=torch.bool).tril()
    additive = torch.zeros(6, 6).masked_fill(~tril, float("-inf")) + \
        alibi_slopes_bloom(H).view(1, H, 1, 1) * torch.arange(6, dtype=torch.float32).view(1, 1, 1, 6)
    o, w = explicit_attention(qh, kh, vh, additive, 1 / math.sqrt(hd))
    out = o.transpose(1, 2).reshape(1, 6, dim) @ sd["out_proj.weight"].T + sd["out_proj.bias"]
    mha.append({"name": "alibi-bloom-causal", "config": {"dim": dim, "numHeads": H, "positional": "alibi"},
                "causal": True, "query": f32list(x), "dims": [1, 6, dim], "weights": state(m),
                "out": f32list(out), "attnWeights": f32list(w)})
    # Activations on a sweep that includes the tails.
    xs = torch.cat([torch.linspace(-12, 12, 241), torch.randn(59, generator=g) * 3])
    F = torch.nn.functional
    activations = {"x": f32list(xs), "relu": f32list(F.relu(xs)), "gelu": f32list(F.gelu(xs)),
                   "gelu_tanh": f32list(F.gelu(xs, approximate="tanh")), "silu": f32list(F.silu(xs))}

    # Encoder layers. PyTorch's fast path is off with grad enabled, so this is the reference math.
    layers = []
    def encoder_case(name, layer, config, x, mask=None, causal=False, sd=None, out=None):
        if out is None:
            kpm = None if mask is None else ~mask.bool()
            src_mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1) if causal else None
            out = layer(x, src_mask=src_mask, src_key_padding_mask=kpm)
        case = {"name": name, "config": config, "dims": list(x.shape), "x": f32list(x), "causal": causal,
                "weights": state(sd if sd is not None else layer), "out": f32list(out)}
        if mask is not None:
            case["attentionMask"] = i32list(mask)
        layers.append(case)
    post = torch.nn.TransformerEncoderLayer(16, 4, 40, dropout=0.0, activation="gelu", batch_first=True,
                                            layer_norm_eps=1e-12)
    post.eval()
    for p_ in post.parameters():  # non-trivial norm parameters
        p_.data += 0.1 * torch.randn(p_.shape, generator=g)
    x = torch.randn(2, 5, 16, generator=g)
    encoder_case("torch-post-gelu-padding", post,
                 {"dim": 16, "numHeads": 4, "ffnDim": 40, "activation": "gelu", "normPlacement": "post", "eps": 1e-12},
                 x, mask=torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]))
    pre = torch.nn.TransformerEncoderLayer(12, 3, 20, dropout=0.0, activation="relu", batch_first=True,
                                           norm_first=True)
    pre.eval()
    for p_ in pre.parameters():
        p_.data += 0.1 * torch.randn(p_.shape, generator=g)
    x = torch.randn(1, 7, 12, generator=g)
    encoder_case("torch-pre-relu-causal", pre,
                 {"dim": 12, "numHeads": 3, "ffnDim": 20, "activation": "relu", "normPlacement": "pre"},
                 x, causal=True)

    # Sandwich norm with tanh-GELU, and pre-RMSNorm without biases, written out.
    g2 = torch.Generator().manual_seed(7)
    def sandwich_with_input():
        D, H, Fd = 10, 2, 24
        torch.manual_seed(7)
        attn = torch.nn.MultiheadAttention(D, H, batch_first=True)
        l1, l2 = torch.nn.Linear(D, Fd), torch.nn.Linear(Fd, D)
        norms = [torch.nn.LayerNorm(D) for _ in range(4)]
        for n in norms:
            n.weight.data += 0.2 * torch.randn(D, generator=g2)
            n.bias.data += 0.2 * torch.randn(D, generator=g2)
        x = torch.randn(2, 4, D, generator=g2)
        h = norms[0](x)
        y = x + norms[2](attn(h, h, h, need_weights=False)[0])
        y = y + norms[3](l2(F.gelu(l1(norms[1](y)), approximate="tanh")))
        sd = {**{"self_attn." + k: v for k, v in attn.state_dict().items()},
              **{f"linear1.{k}": v for k, v in l1.state_dict().items()},
              **{f"linear2.{k}": v for k, v in l2.state_dict().items()}}
        for i, n in enumerate(norms):
            sd[f"norm{i + 1}.weight"], sd[f"norm{i + 1}.bias"] = n.weight, n.bias
        return x, sd, y
    x, sd, y = sandwich_with_input()
    encoder_case("sandwich-gelu-tanh", None,
                 {"dim": 10, "numHeads": 2, "ffnDim": 24, "activation": "gelu_tanh", "normPlacement": "sandwich"},
                 x, sd=sd, out=y)

    def rms(x, w, eps=1e-6):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
    D, H, Fd = 8, 2, 16
    attn = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True)
    l1, l2 = torch.nn.Linear(D, Fd, bias=False), torch.nn.Linear(Fd, D, bias=False)
    w1, w2 = 1 + 0.2 * torch.randn(D, generator=g), 1 + 0.2 * torch.randn(D, generator=g)
    x = torch.randn(1, 6, D, generator=g)
    h = rms(x, w1)
    y = x + attn(h, h, h, need_weights=False)[0]
    y = y + l2(F.gelu(l1(rms(y, w2))))
    sd = {**{"self_attn." + k: v for k, v in attn.state_dict().items()}, "linear1.weight": l1.weight,
          "linear2.weight": l2.weight, "norm1.weight": w1, "norm2.weight": w2}
    encoder_case("pre-rmsnorm-no-bias", None,
                 {"dim": D, "numHeads": H, "ffnDim": Fd, "activation": "gelu", "normPlacement": "pre",
                  "norm": "rmsnorm", "eps": 1e-6, "bias": False, "ffnBias": False}, x, sd=sd, out=y)

    # GPT-2's block (HF GPT2Block written out): pre-LN, Conv1D weights [in, out], gelu_new, causal.
    D, H, Fd = 12, 3, 48
    c_attn, c_attn_b = 0.3 * torch.randn(D, 3 * D, generator=g), 0.1 * torch.randn(3 * D, generator=g)
    c_proj, c_proj_b = 0.3 * torch.randn(D, D, generator=g), 0.1 * torch.randn(D, generator=g)
    c_fc, c_fc_b = 0.3 * torch.randn(D, Fd, generator=g), 0.1 * torch.randn(Fd, generator=g)
    m_proj, m_proj_b = 0.3 * torch.randn(Fd, D, generator=g), 0.1 * torch.randn(D, generator=g)
    ln = [torch.nn.LayerNorm(D) for _ in range(2)]
    for n in ln:
        n.weight.data += 0.2 * torch.randn(D, generator=g)
        n.bias.data += 0.2 * torch.randn(D, generator=g)
    x = torch.randn(2, 5, D, generator=g)
    h = ln[0](x)
    qkv = torch.addmm(c_attn_b, h.reshape(-1, D), c_attn).view(2, 5, 3 * D)
    qh, kh, vh = (t.view(2, 5, H, D // H).transpose(1, 2) for t in qkv.split(D, dim=2))
    tril = torch.ones(5, 5, dtype=torch.bool).tril()
    o, _ = explicit_attention(qh, kh, vh, torch.zeros(5, 5).masked_fill(~tril, float("-inf")), 1 / math.sqrt(D // H))
    y = x + torch.addmm(c_proj_b, o.transpose(1, 2).reshape(-1, D), c_proj).view(2, 5, D)
    f = F.gelu(torch.addmm(c_fc_b, ln[1](y).reshape(-1, D), c_fc), approximate="tanh")
    y = y + torch.addmm(m_proj_b, f, m_proj).view(2, 5, D)
    sd = {"self_attn.in_proj_weight": c_attn, "self_attn.in_proj_bias": c_attn_b, "self_attn.out_proj.weight": c_proj,
          "self_attn.out_proj.bias": c_proj_b, "linear1.weight": c_fc, "linear1.bias": c_fc_b,
          "linear2.weight": m_proj, "linear2.bias": m_proj_b, "norm1.weight": ln[0].weight,
          "norm1.bias": ln[0].bias, "norm2.weight": ln[1].weight, "norm2.bias": ln[1].bias}
    encoder_case("gpt2-block-conv1d", None,
                 {"dim": D, "numHeads": H, "ffnDim": Fd, "activation": "gelu_tanh", "normPlacement": "pre",
                  "weightLayout": "inOut"}, x, causal=True, sd=sd, out=y)

    # LLaMA's decoder layer (HF LlamaDecoderLayer written out): RMSNorm, GQA + RoPE, gated SiLU MLP.
    D, H, G, hd, Fd = 16, 4, 2, 4, 24
    wq, wk = 0.3 * torch.randn(H * hd, D, generator=g), 0.3 * torch.randn(G * hd, D, generator=g)
    wv, wo = 0.3 * torch.randn(G * hd, D, generator=g), 0.3 * torch.randn(D, H * hd, generator=g)
    gate, up, down = (0.3 * torch.randn(Fd, D, generator=g), 0.3 * torch.randn(Fd, D, generator=g),
                      0.3 * torch.randn(D, Fd, generator=g))
    n1, n2 = 1 + 0.2 * torch.randn(D, generator=g), 1 + 0.2 * torch.randn(D, generator=g)
    x = torch.randn(2, 6, D, generator=g)
    a, _ = llama(rms(x, n1, 1e-5), wq, wk, wv, wo, H, G, hd, 500000.0)
    y = x + a
    h = rms(y, n2, 1e-5)
    y = y + (F.silu(h @ gate.T) * (h @ up.T)) @ down.T
    sd = {"self_attn.q_proj.weight": wq, "self_attn.k_proj.weight": wk, "self_attn.v_proj.weight": wv,
          "self_attn.o_proj.weight": wo, "gate.weight": gate, "linear1.weight": up, "linear2.weight": down,
          "norm1.weight": n1, "norm2.weight": n2}
    encoder_case("llama-layer-gated-silu", None,
                 {"dim": D, "numHeads": H, "numKvHeads": G, "ffnDim": Fd, "activation": "silu", "ffnGated": True,
                  "normPlacement": "pre", "norm": "rmsnorm", "eps": 1e-5, "bias": False, "ffnBias": False,
                  "positional": "rotary", "rotary": {"base": 500000.0, "layout": "half"}}, x, causal=True, sd=sd, out=y)

    # Decoder layers: torch.nn.TransformerDecoderLayer, post and pre, with a causal target mask and
    # a memory key padding mask.
    decoders = []
    for name, first, act, Dm in [("torch-decoder-post-relu", False, "relu", 12), ("torch-decoder-pre-gelu", True, "gelu", 8)]:
        dec = torch.nn.TransformerDecoderLayer(Dm, 2, 20, dropout=0.0, activation=act, batch_first=True,
                                               norm_first=first)
        dec.eval()
        for p_ in dec.parameters():
            p_.data += 0.1 * torch.randn(p_.shape, generator=g)
        x = torch.randn(2, 4, Dm, generator=g)
        mem = torch.randn(2, 6, Dm, generator=g)
        mem_mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
        tgt_mask = torch.ones(4, 4, dtype=torch.bool).triu(1)
        out = dec(x, mem, tgt_mask=tgt_mask, memory_key_padding_mask=~mem_mask.bool())
        decoders.append({"name": name, "config": {"dim": Dm, "numHeads": 2, "ffnDim": 20, "activation": act,
                                                  "normPlacement": "pre" if first else "post"},
                         "dims": [2, 4, Dm], "memoryDims": [2, 6, Dm], "x": f32list(x), "memory": f32list(mem),
                         "memoryMask": i32list(mem_mask), "causal": True, "weights": state(dec), "out": f32list(out)})
    write("modules.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                           "linear": linear, "mha": mha, "activations": activations, "encoderLayers": layers,
                           "decoderLayers": decoders})


# ---------------------------------------------------------------------------------- safetensors
ST_NAMES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
            torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
            torch.bool: "BOOL"}


def write_safetensors(path, tensors, metadata):
    """The format from its definition: 8-byte little-endian header length, JSON header padded
    with spaces to 8 bytes, then the data."""
    import struct
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        # numpy has no bfloat16: its bits go out as int16; every other dtype as numpy writes it
        raw = t.contiguous().view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 \
            else t.contiguous().numpy().tobytes()
        header[name] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    print("wrote", path, os.path.getsize(path), "bytes")
    return header


def safetensors():
    """A .safetensors file written by hand from the format's definition (8-byte little-endian
    header length, JSON header, data), with F32, F16 and BF16 tensors; the expected float32
    values are torch's own conversions."""
    import struct
    g = torch.Generator().manual_seed(8)
    special = torch.tensor([0.0, -0.0, 1.0, -2.5, 65504.0, 6.1e-5, 5.96e-8, 3.0e-7, float("inf"), float("-inf"),
                            1e-3, 3.14159])
    tensors = {
        "embeddings.word": torch.randn(3, 4, generator=g),
        "half.values": torch.cat([special, torch.randn(5, generator=g)]).to(torch.float16),
        "bf16.values": torch.cat([special[:10], torch.randn(6, generator=g) * 100]).to(torch.bfloat16),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(7.5),
    }
    names = ST_NAMES
    path = os.path.normpath(os.path.join(OUT, "small.safetensors"))
    header = write_safetensors(path, tensors, {"format": "pt", "note": "attnkit fixture"})
    write("safetensors.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                               "file": "small.safetensors", "metadata": header["__metadata__"],
                               "tensors": {k: {"dtype": names[t.dtype], "shape": list(t.shape),
                                               # JSON has no infinities: they are written as strings
                                               "values": [x if not math.isinf(x) else ("Infinity" if x > 0 else "-Infinity")
                                                          for x in f32list(t.float())]}
                                           for k, t in tensors.items()}})


def safetensors_dtypes():
    """Every dtype torch can write to .safetensors, in one file: the loader returns floating-point
    tensors as float32 (torch's own conversion is the expected value) and integer ones as they are."""
    tensors = {
        "f64": torch.tensor([1.0, -2.5, 1e-300, 1e300, 3.141592653589793], dtype=torch.float64),
        "i64": torch.tensor([0, 1, -1, 2**53 + 1, -(2**62), 2**63 - 1], dtype=torch.int64),
        "embeddings.position_ids": torch.arange(6, dtype=torch.int64).unsqueeze(0),
        "i32": torch.tensor([[0, -7], [2**31 - 1, -(2**31)]], dtype=torch.int32),
        "i16": torch.tensor([-32768, 32767, 5], dtype=torch.int16),
        "i8": torch.tensor([-128, 127, -1], dtype=torch.int8),
        "u8": torch.tensor([0, 255, 17], dtype=torch.uint8),
        "mask": torch.tensor([[True, False, True]]),
        "f16": torch.tensor([1.5, -0.0], dtype=torch.float16),
    }
    path = os.path.normpath(os.path.join(OUT, "dtypes.safetensors"))
    write_safetensors(path, tensors, {"format": "pt"})
    expected = {}
    for k, t in tensors.items():
        if t.is_floating_point():
            values = [x if math.isfinite(x) else ("Infinity" if x > 0 else "-Infinity") for x in f32list(t.float())]
        else:
            values = [str(int(x)) for x in t.reshape(-1).tolist()]  # as strings: int64 exceeds a double
        expected[k] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "values": values}
    write("safetensors_dtypes.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                                      "file": "dtypes.safetensors", "tensors": expected})


# ---------------------------------------------------------------------------------------- models
def layer_norm(x, sd, prefix, eps):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], sd[prefix + ".weight"], sd[prefix + ".bias"], eps)


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def heads(t, B, L, n, hd):
    return t.view(B, L, n, hd).transpose(1, 2)


def softmax_attention(q, k, v, additive, hd):
    w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd) + additive, dim=-1)
    return w @ v, w


def hf_mask(mask, causal):
    """transformers' extended attention mask: (1 - mask) * finfo.min, plus the causal part."""
    B, L = mask.shape
    add = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
    if causal:
        tri = torch.ones(L, L, dtype=torch.bool).tril()
        add = add + torch.zeros(L, L).masked_fill(~tri, torch.finfo(torch.float32).min)
        add = add.clamp(min=torch.finfo(torch.float32).min)
    return add


def gpt2_forward(w, cfg, ids, mask, pos):
    """GPT2Model as transformers writes it (Conv1D weights [in, out], pre-LN, gelu_new, ln_f on the
    last state) -> (hidden states: after the embeddings, each layer, and ln_f; attention weights)."""
    F = torch.nn.functional
    B, L = ids.shape
    D, H = cfg["n_embd"], cfg["n_head"]
    hd = D // H
    x = w["wte.weight"][ids] + w["wpe.weight"][pos]
    hidden, attns = [], []
    add = hf_mask(mask, True)
    for i in range(cfg["n_layer"]):
        hidden.append(x)
        p = f"h.{i}."
        conv = lambda z, m: torch.addmm(w[p + m + ".bias"], z.reshape(-1, z.shape[-1]), w[p + m + ".weight"]).view(B, L, -1)  # noqa: E731
        h = layer_norm(x, w, p + "ln_1", 1e-5)
        q, k, v = (heads(z, B, L, H, hd) for z in conv(h, "attn.c_attn").split(D, dim=2))
        o, a = softmax_attention(q, k, v, add, hd)
        attns.append(a)
        x = x + conv(o.transpose(1, 2).reshape(B, L, D), "attn.c_proj")
        h = layer_norm(x, w, p + "ln_2", 1e-5)
        x = x + conv(F.gelu(conv(h, "mlp.c_fc"), approximate="tanh"), "mlp.c_proj")
    hidden.append(layer_norm(x, w, "ln_f", 1e-5))
    return hidden, attns


def llama_forward(w, cfg, ids, mask, pos):
    """LlamaModel as transformers writes it (RMSNorm, GQA, RoPE with the config's scaling, gated
    SiLU MLP), weights under their model.* names -> (hidden states, attention weights)."""
    F = torch.nn.functional
    B, L = ids.shape
    D, H, G = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, eps = D // H, cfg["rms_norm_eps"]
    scaling = cfg.get("rope_scaling")
    scaling = scaling and {"type": scaling["rope_type"], "factor": scaling["factor"]}
    x = w["model.embed_tokens.weight"][ids]
    hidden, attns = [], []
    add = hf_mask(mask, True)
    for i in range(cfg["num_hidden_layers"]):
        hidden.append(x)
        p = f"model.layers.{i}."
        h = rms(x, w[p + "input_layernorm.weight"], eps)
        q = heads(h @ w[p + "self_attn.q_proj.weight"].T, B, L, H, hd)
        k = heads(h @ w[p + "self_attn.k_proj.weight"].T, B, L, G, hd)
        v = heads(h @ w[p + "self_attn.v_proj.weight"].T, B, L, G, hd)
        q, _ = apply_rope(q, pos, hd, cfg["rope_theta"], "half", scaling)
        k, _ = apply_rope(k, pos, hd, cfg["rope_theta"], "half", scaling)
        k, v = k.repeat_interleave(H // G, dim=1), v.repeat_interleave(H // G, dim=1)
        o, a = softmax_attention(q, k, v, add, hd)
        attns.append(a)
        x = x + o.transpose(1, 2).reshape(B, L, D) @ w[p + "self_attn.o_proj.weight"].T
        h = rms(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + (F.silu(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)) @ \
            w[p + "mlp.down_proj.weight"].T
    hidden.append(rms(x, w["model.norm.weight"], eps))
    return hidden, attns


def models():
    """Tiny BERT, RoBERTa, GPT-2 and LLaMA checkpoints (random weights, fixed seed) written as
    Hugging Face writes them (config.json + model.safetensors, HF tensor names), and their
    forward passes written out from transformers' modeling code: hidden states after the
    embeddings and after each layer, and each layer's per-head attention weights."""
    g = torch.Generator().manual_seed(9)
    F = torch.nn.functional
    root = os.path.join(OUT, "models")

    def rnd(*shape, sd=0.2):
        return sd * torch.randn(*shape, generator=g)

    def ln_params(prefix, D, sd):
        sd[prefix + ".weight"], sd[prefix + ".bias"] = 1 + rnd(D), rnd(D, sd=0.1)

    def save(name, config, tensors, dtype=torch.float32):
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        write_safetensors(os.path.join(d, "model.safetensors"), {k: v.to(dtype) for k, v in tensors.items()},
                          {"format": "pt"})
        # The model runs on the stored values (F16 rounding included).
        return {k: v.to(dtype).float() for k, v in tensors.items()}

    cases = []
    ids = torch.tensor([[2, 17, 33, 5, 60, 41, 3], [2, 9, 12, 48, 3, 0, 0]])
    mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2])

    # --- BERT (BertModel; the file's names carry BertForMaskedLM's "bert." prefix and a cls head).
    def bert_like(name, model_type, pad, dtype, prefix):
        V, D, Lyr, H, Fd, P = 64, 32, 2, 4, 64, 40
        hd = D // H
        cfg = {"architectures": ["BertForMaskedLM" if model_type == "bert" else "RobertaModel"],
               "model_type": model_type, "vocab_size": V, "hidden_size": D, "num_hidden_layers": Lyr,
               "num_attention_heads": H, "intermediate_size": Fd, "hidden_act": "gelu",
               "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": P,
               "type_vocab_size": 2 if model_type == "bert" else 1, "initializer_range": 0.02,
               "layer_norm_eps": 1e-12 if model_type == "bert" else 1e-5, "pad_token_id": pad,
               "position_embedding_type": "absolute", "use_cache": True, "torch_dtype": "float32",
               "transformers_version": "4.44.0"}
        t = {"embeddings.word_embeddings.weight": rnd(V, D, sd=0.5),
             "embeddings.position_embeddings.weight": rnd(P, D, sd=0.3),
             "embeddings.token_type_embeddings.weight": rnd(cfg["type_vocab_size"], D, sd=0.3)}
        ln_params("embeddings.LayerNorm", D, t)
        for i in range(Lyr):
            p = f"encoder.layer.{i}."
            for m in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]:
                t[p + m + ".weight"], t[p + m + ".bias"] = rnd(D, D), rnd(D, sd=0.05)
            ln_params(p + "attention.output.LayerNorm", D, t)
            t[p + "intermediate.dense.weight"], t[p + "intermediate.dense.bias"] = rnd(Fd, D), rnd(Fd, sd=0.05)
            t[p + "output.dense.weight"], t[p + "output.dense.bias"] = rnd(D, Fd), rnd(D, sd=0.05)
            ln_params(p + "output.LayerNorm", D, t)
        t["pooler.dense.weight"], t["pooler.dense.bias"] = rnd(D, D), rnd(D)
        stored = {prefix + k: v for k, v in t.items()}
        if model_type == "bert":
            stored["cls.predictions.bias"] = rnd(V)
        # The masked-LM head (BertForMaskedLM's cls.predictions, RobertaForMaskedLM's lm_head; the
        # decoder is the word table, tied), drawn from its own generator so the rest is unchanged.
        hg = torch.Generator().manual_seed(31 if model_type == "bert" else 32)
        head = "cls.predictions.transform." if model_type == "bert" else "lm_head."
        norm = "LayerNorm" if model_type == "bert" else "layer_norm"
        stored[head + "dense.weight"] = 0.2 * torch.randn(D, D, generator=hg)
        stored[head + "dense.bias"] = 0.05 * torch.randn(D, generator=hg)
        stored[head + norm + ".weight"] = 1 + 0.2 * torch.randn(D, generator=hg)
        stored[head + norm + ".bias"] = 0.1 * torch.randn(D, generator=hg)
        if model_type == "roberta":
            stored["lm_head.bias"] = 0.2 * torch.randn(V, generator=hg)
        w = save(name, cfg, stored, dtype)
        w = {k[len(prefix):]: v for k, v in w.items() if k.startswith(prefix)}
        ids_ = ids if pad == 0 else torch.where(mask.bool(), ids, torch.full_like(ids, pad))
        types = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 0, 0]]) if model_type == "bert" \
            else torch.zeros_like(ids)
        if model_type == "roberta":  # create_position_ids_from_input_ids
            m_ = ids_.ne(pad).int()
            pos = (torch.cumsum(m_, dim=1) * m_) + pad
        else:
            pos = torch.arange(7).expand(2, 7)
        x = w["embeddings.word_embeddings.weight"][ids_] + w["embeddings.position_embeddings.weight"][pos] + \
            w["embeddings.token_type_embeddings.weight"][types]
        x = layer_norm(x, w, "embeddings.LayerNorm", cfg["layer_norm_eps"])
        hidden, attns = [x], []
        add = hf_mask(mask, False)
        for i in range(Lyr):
            p = f"encoder.layer.{i}."
            lin = lambda z, m: z @ w[p + m + ".weight"].T + w[p + m + ".bias"]  # noqa: E731
            q, k, v = (heads(lin(x, "attention.self." + n), 2, 7, H, hd) for n in ["query", "key", "value"])
            o, a = softmax_attention(q, k, v, add, hd)
            attns.append(a)
            o = o.transpose(1, 2).reshape(2, 7, D)
            x = layer_norm(lin(o, "attention.output.dense") + x, w, p + "attention.output.LayerNorm", cfg["layer_norm_eps"])
            f = F.gelu(lin(x, "intermediate.dense"))
            x = layer_norm(lin(f, "output.dense") + x, w, p + "output.LayerNorm", cfg["layer_norm_eps"])
            hidden.append(x)
        cases.append({"name": name, "dir": "models/" + name, "inputIds": i32list(ids_), "dims": [2, 7],
                      "attentionMask": i32list(mask), "tokenTypeIds": i32list(types) if model_type == "bert" else None,
                      "hiddenStates": [f32list(h) for h in hidden], "attentions": [f32list(a) for a in attns]})
    bert_like("bert-tiny", "bert", 0, torch.float32, "bert.")
    bert_like("roberta-tiny-f16", "roberta", 1, torch.float16, "")

    # --- GPT-2 (GPT2Model): Conv1D weights [in, out], pre-LN, gelu_new, ln_f on the last state.
    V, D, Lyr, H, P = 64, 24, 2, 3, 32
    hd = D // H
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_embd": D, "n_layer": Lyr,
           "n_head": H, "n_positions": P, "n_ctx": P, "n_inner": None, "activation_function": "gelu_new",
           "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
           "scale_attn_weights": True, "bos_token_id": 50256, "eos_token_id": 50256, "initializer_range": 0.02,
           "summary_type": "cls_index", "task_specific_params": {"text-generation": {"do_sample": True}}}
    t = {"wte.weight": rnd(V, D, sd=0.5), "wpe.weight": rnd(P, D, sd=0.3)}
    for i in range(Lyr):
        p = f"h.{i}."
        ln_params(p + "ln_1", D, t)
        t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"] = rnd(D, 3 * D), rnd(3 * D, sd=0.05)
        t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = rnd(D, D), rnd(D, sd=0.05)
        ln_params(p + "ln_2", D, t)
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = rnd(D, 4 * D), rnd(4 * D, sd=0.05)
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = rnd(4 * D, D), rnd(D, sd=0.05)
        t[p + "attn.bias"] = torch.ones(P, P).tril().view(1, 1, P, P)  # old checkpoints store the causal mask
    ln_params("ln_f", D, t)
    w = save("gpt2-tiny", cfg, t)
    hidden, attns = gpt2_forward(w, cfg, ids, mask, torch.arange(7))
    x = hidden[-1]
    # GPT2LMHeadModel's head is the word table (tied): logits = ln_f(x) @ wte.T.
    cases.append({"name": "gpt2-tiny", "dir": "models/gpt2-tiny", "inputIds": i32list(ids), "dims": [2, 7],
                  "attentionMask": i32list(mask), "hiddenStates": [f32list(h) for h in hidden],
                  "attentions": [f32list(a) for a in attns], "logits": f32list(x @ w["wte.weight"].T)})

    # --- LLaMA (LlamaModel): RMSNorm, GQA, RoPE with linear scaling (new spelling), gated SiLU MLP.
    V, D, Lyr, H, G, Fd = 64, 32, 2, 4, 2, 48
    hd = D // H
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": V, "hidden_size": D,
           "num_hidden_layers": Lyr, "num_attention_heads": H, "num_key_value_heads": G, "intermediate_size": Fd,
           "hidden_act": "silu", "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
           "rope_scaling": {"rope_type": "linear", "factor": 2.0}, "attention_bias": False, "mlp_bias": False,
           "attention_dropout": 0.0, "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
           "pretraining_tp": 1, "torch_dtype": "bfloat16"}
    t = {"model.embed_tokens.weight": rnd(V, D, sd=0.5)}
    for i in range(Lyr):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = 1 + rnd(D)
        t[p + "self_attn.q_proj.weight"], t[p + "self_attn.k_proj.weight"] = rnd(H * hd, D), rnd(G * hd, D)
        t[p + "self_attn.v_proj.weight"], t[p + "self_attn.o_proj.weight"] = rnd(G * hd, D), rnd(D, H * hd)
        t[p + "post_attention_layernorm.weight"] = 1 + rnd(D)
        t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = rnd(Fd, D), rnd(Fd, D)
        t[p + "mlp.down_proj.weight"] = rnd(D, Fd)
    t["model.norm.weight"] = 1 + rnd(D)
    t["lm_head.weight"] = rnd(V, D)
    w = save("llama-tiny-bf16", cfg, t, torch.bfloat16)
    hidden, attns = llama_forward(w, cfg, ids, mask, torch.arange(7))
    x = hidden[-1]
    # LlamaForCausalLM with tie_word_embeddings false: its own lm_head.weight.
    cases.append({"name": "llama-tiny-bf16", "dir": "models/llama-tiny-bf16", "inputIds": i32list(ids), "dims": [2, 7],
                  "attentionMask": i32list(mask), "hiddenStates": [f32list(h) for h in hidden],
                  "attentions": [f32list(a) for a in attns], "logits": f32list(x @ w["lm_head.weight"].T)})
    write("models.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__, "cases": cases})


def model_heads():
    """The heads over the base models' last hidden states (PyTorch's, from models.json): BERT's and
    RoBERTa's masked-LM logits (dense, gelu, LayerNorm, the tied word table, bias), BERT's pooler
    (tanh(dense(h[:, 0]))), and sentence embeddings pooled as sentence-transformers does: the mean
    over the attention mask (sum(h * m) / clamp(sum(m), 1e-9)), the first token, the last real
    token, each also L2-normalised (F.normalize)."""
    F = torch.nn.functional
    with open(os.path.join(OUT, "models.json")) as f:
        base = {c["name"]: c for c in json.load(f)["cases"]}
    cases = []
    for name, prefix, head, norm, bias in [("bert-tiny", "bert.", "cls.predictions.transform.", "LayerNorm", "cls.predictions.bias"),
                                           ("roberta-tiny-f16", "", "lm_head.", "layer_norm", "lm_head.bias"),
                                           ("gpt2-tiny", None, None, None, None)]:
        c = base[name]
        d = os.path.join(OUT, "models", name)
        w = {k: v.float() for k, v in read_safetensors(os.path.join(d, "model.safetensors")).items()}
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        B, L = c["dims"]
        h = torch.tensor(c["hiddenStates"][-1]).view(B, L, -1)
        mask = torch.tensor(c["attentionMask"]).view(B, L)
        m = mask[..., None].float()
        mean = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        last = h[torch.arange(B), mask.sum(1) - 1]
        out = {"name": name, "dir": c["dir"], "inputIds": c["inputIds"], "dims": c["dims"], "attentionMask": c["attentionMask"],
               "tokenTypeIds": c.get("tokenTypeIds"), "mean": f32list(mean), "cls": f32list(h[:, 0]), "last": f32list(last),
               "meanNormalized": f32list(F.normalize(mean, p=2, dim=1)), "clsNormalized": f32list(F.normalize(h[:, 0], p=2, dim=1))}
        if head:
            t = F.gelu(h @ w[head + "dense.weight"].T + w[head + "dense.bias"])
            t = F.layer_norm(t, t.shape[-1:], w[head + norm + ".weight"], w[head + norm + ".bias"], cfg["layer_norm_eps"])
            out["mlmLogits"] = f32list(t @ w[prefix + "embeddings.word_embeddings.weight"].T + w[bias])
            pooled = torch.tanh(h[:, 0] @ w[prefix + "pooler.dense.weight"].T + w[prefix + "pooler.dense.bias"])
            out["pooler"] = f32list(pooled)
            out["poolerNormalized"] = f32list(F.normalize(pooled, p=2, dim=1))
        cases.append(out)
    write("heads.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__, "cases": cases})


def generation():
    """Greedy decoding as a PyTorch loop that re-runs the whole sequence each step (no cache), for
    a GPT-2 checkpoint with room for 32 new tokens (models/gpt2-gen, written here) and the LLaMA
    one of models(): a single prompt and a left-padded batch, whose positions are cumsum(mask) - 1
    (padding at 1) and whose mask grows by 1 per step, as transformers' generate does. Each
    step's margin between the two largest logits is kept well above float32 noise."""
    g = torch.Generator().manual_seed(21)
    root = os.path.join(OUT, "models")

    def rnd(*shape, sd=0.2):
        return sd * torch.randn(*shape, generator=g)

    V, D, Lyr, H, P = 96, 32, 2, 4, 64
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_embd": D, "n_layer": Lyr,
           "n_head": H, "n_positions": P, "n_inner": None, "activation_function": "gelu_new",
           "layer_norm_epsilon": 1e-5, "bos_token_id": 95, "eos_token_id": 95}
    t = {"wte.weight": rnd(V, D, sd=0.7), "wpe.weight": rnd(P, D, sd=0.3)}
    for i in range(Lyr):
        p = f"h.{i}."
        for n in ["ln_1", "ln_2"]:
            t[p + n + ".weight"], t[p + n + ".bias"] = 1 + rnd(D), rnd(D, sd=0.1)
        t[p + "attn.c_attn.weight"], t[p + "attn.c_attn.bias"] = rnd(D, 3 * D, sd=0.3), rnd(3 * D, sd=0.05)
        t[p + "attn.c_proj.weight"], t[p + "attn.c_proj.bias"] = rnd(D, D), rnd(D, sd=0.05)
        t[p + "mlp.c_fc.weight"], t[p + "mlp.c_fc.bias"] = rnd(D, 4 * D), rnd(4 * D, sd=0.05)
        t[p + "mlp.c_proj.weight"], t[p + "mlp.c_proj.bias"] = rnd(4 * D, D), rnd(D, sd=0.05)
    t["ln_f.weight"], t["ln_f.bias"] = 1 + rnd(D), rnd(D, sd=0.1)
    d = os.path.join(root, "gpt2-gen")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    write_safetensors(os.path.join(d, "model.safetensors"), t, {"format": "pt"})
    models_ = {"gpt2-gen": (gpt2_forward, t, cfg, lambda x: x @ t["wte.weight"].T)}
    ld = os.path.join(root, "llama-tiny-bf16")
    lw = {k: v.float() for k, v in read_safetensors(os.path.join(ld, "model.safetensors")).items()}
    with open(os.path.join(ld, "config.json")) as f:
        lcfg = json.load(f)
    models_["llama-tiny-bf16"] = (llama_forward, lw, lcfg, lambda x: x @ lw["lm_head.weight"].T)

    def greedy(name, prompts, new, pad):
        forward, w, c, head = models_[name]
        L = max(len(p) for p in prompts)
        ids = torch.tensor([[pad] * (L - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (L - len(p)) + [1] * len(p) for p in prompts])
        prompt_ids, prompt_mask = ids.clone(), mask.clone()
        margins, step_logits = [], []
        for step in range(new):
            pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
            with torch.no_grad():
                logits = head(forward(w, c, ids, mask, pos)[0][-1][:, -1])
            top = logits.topk(2, dim=-1).values
            margins.append(float((top[:, 0] - top[:, 1]).min()))
            if step in (0, new - 1):
                step_logits.append(f32list(logits))
            nxt = logits.argmax(-1)
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            mask = torch.cat([mask, torch.ones(len(prompts), 1, dtype=mask.dtype)], dim=1)
        assert min(margins) > 5e-4, (name, min(margins))  # attnkit and torch differ by ~1e-5
        return {"model": name, "dir": "models/" + name, "inputIds": i32list(prompt_ids), "attentionMask": i32list(prompt_mask),
                "dims": list(prompt_ids.shape), "maxNewTokens": new, "sequences": i32list(ids),
                "firstLogits": step_logits[0], "lastLogits": step_logits[1], "minMargin": min(margins)}

    cases = [greedy("gpt2-gen", [[7, 3, 88, 41, 12]], 32, 95),
             greedy("gpt2-gen", [[7, 3, 88, 41, 12, 60, 2], [54, 9, 30]], 32, 95),
             greedy("llama-tiny-bf16", [[1, 17, 33, 5, 60, 41]], 32, 0),
             greedy("llama-tiny-bf16", [[1, 17, 33, 5, 60, 41, 26], [1, 50, 12]], 32, 0)]
    write("generation.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__, "cases": cases})


def read_safetensors(path):
    """The tensors of a .safetensors file (the reader the format's definition implies)."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    dtypes = {v: k for k, v in ST_NAMES.items()}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + end])
        dt = dtypes[e["dtype"]]
        t = torch.frombuffer(raw, dtype=torch.int16).view(dt) if dt == torch.bfloat16 else torch.frombuffer(raw, dtype=dt)
        out[name] = t.reshape(e["shape"]).clone()
    return out


def repo_folders():
    """Folders shaped like the Hugging Face repositories users download (bert-base-uncased, gpt2),
    around the tiny checkpoints of models(): BERT with tokenizer.json ("padding": null), vocab.txt,
    tokenizer_config.json, special_tokens_map.json and the I64 embeddings.position_ids buffer older
    checkpoints carry; GPT-2 sharded into two files with model.safetensors.index.json, and its
    vocab.json + merges.txt, tokenizer.json and a left-padding tokenizer_config.json. The forward
    passes are those of models.json (the same weights)."""
    src, dst = os.path.join(OUT, "models"), os.path.join(OUT, "repos")

    def dump(folder, name, obj):
        with open(os.path.join(folder, name), "w") as f:
            json.dump(obj, f, indent=2, ensure_ascii=False)
            f.write("\n")

    def start(repo, model):
        """The repo's folder, with the tiny model's config.json copied in; its config and tensors."""
        d = os.path.join(dst, repo)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(src, model, "config.json")) as f:
            config = json.load(f)
        dump(d, "config.json", config)
        return d, config, read_safetensors(os.path.join(src, model, "model.safetensors"))

    # --- BERT
    d, config, tensors = start("bert", "bert-tiny")
    tensors["bert.embeddings.position_ids"] = torch.arange(config["max_position_embeddings"], dtype=torch.int64)[None]
    write_safetensors(os.path.join(d, "model.safetensors"), tensors, {"format": "pt"})
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "un", "##aff", "##able", "play", "##ing", "##s",
             "hello", "world", ",", ".", "!", "?", "'", "is", "was", "it", "and", "to", "of", "in", "##ed", "##ly"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words
    vocab += [f"[unused{i}]" for i in range(config["vocab_size"] - len(vocab))]
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    special = lambda t, i: {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}
    dump(d, "tokenizer.json", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [special(t, i) for i, t in enumerate(vocab[:5])],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                                    {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                           "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                              "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(vocab)}}})
    dump(d, "tokenizer_config.json", {"do_lower_case": True, "model_max_length": config["max_position_embeddings"],
                                      "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                                      "sep_token": "[SEP]", "mask_token": "[MASK]", "tokenizer_class": "BertTokenizer"})
    dump(d, "special_tokens_map.json", {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                                        "sep_token": "[SEP]", "mask_token": "[MASK]"})

    # --- GPT-2, sharded
    d, config, tensors = start("gpt2", "gpt2-tiny")
    names = list(tensors)
    shards = [names[: len(names) // 2], names[len(names) // 2:]]
    weight_map, total = {}, 0
    for i, part in enumerate(shards):
        fname = f"model-0000{i + 1}-of-00002.safetensors"
        write_safetensors(os.path.join(d, fname), {k: tensors[k] for k in part}, {"format": "pt"})
        for k in part:
            weight_map[k] = fname
            total += tensors[k].numel() * 4
    dump(d, "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})
    # A byte-level BPE of the model's 64 ids: 'Ġ' (space) and letters, and merges that build words.
    chars = list("Ġabcdefghilmnorstuwy.,!T")
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ġ", "c"), ("a", "t"), ("Ġc", "at"), ("Ġ", "s"), ("Ġs", "at"),
              ("o", "n"), ("Ġ", "on"), ("Ġ", "m"), ("Ġm", "at"), ("l", "l"), ("e", "ll"), ("he", "ll"), ("hell", "o"),
              ("T", "he"), ("Ġ", "w"), ("o", "r"), ("Ġw", "or"), ("l", "d"), ("Ġwor", "ld"), ("i", "s"), ("Ġ", "is")]
    vocab = chars + [a + b for a, b in merges]
    vocab += [f"<unused{i}>" for i in range(config["vocab_size"] - 1 - len(vocab))] + ["<|endoftext|>"]
    assert len(vocab) == config["vocab_size"]
    ids = {t: i for i, t in enumerate(vocab)}
    dump(d, "vocab.json", ids)
    with open(os.path.join(d, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n" + "\n".join(f"{a} {b}" for a, b in merges) + "\n")
    eot = len(vocab) - 1
    dump(d, "tokenizer.json", {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{**special("<|endoftext|>", eot), "normalized": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": ids,
                  "merges": [f"{a} {b}" for a, b in merges]}})
    dump(d, "tokenizer_config.json", {"model_max_length": config["n_positions"], "padding_side": "left",
                                      "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                                      "unk_token": "<|endoftext|>", "pad_token": "<|endoftext|>",
                                      "tokenizer_class": "GPT2Tokenizer"})
    dump(d, "special_tokens_map.json", {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                                        "unk_token": "<|endoftext|>"})


# -------------------------------------------------------------------------------- special values
def special_list(t):
    """Floats with NaN and the infinities as the strings "nan", "inf", "-inf" (JSON has no such numbers)."""
    out = []
    for x in t.detach().to(torch.float32).reshape(-1).tolist():
        out.append("nan" if math.isnan(x) else "inf" if x == math.inf else "-inf" if x == -math.inf else float(x))
    return out


def special_values():
    """NaN, +-inf, +-3e38, subnormals, finfo.min masks and zero eps through attention, the
    activations, the norms and linear, as PyTorch computes them (nn.MultiheadAttention's order: q is
    scaled first, masks are an additive 0 / -inf bias). A row whose scores are all -inf is zeros,
    attnkit's one documented difference (torch gives NaN there)."""
    F = torch.nn.functional
    nan, inf, big, tiny = float("nan"), float("inf"), 3e38, 1e-40
    fmin = torch.finfo(torch.float32).min
    g = torch.Generator().manual_seed(11)
    L, d = 4, 3

    def rnd(*shape):
        return torch.randn(*shape, generator=g)

    def attn(q, k, v, bias):
        scale = 1 / math.sqrt(d)
        scores = (q * scale) @ k.transpose(-1, -2) + bias
        w = torch.softmax(scores, dim=-1)
        dead = (scores == -inf).all(dim=-1, keepdim=True)
        w = torch.where(dead, torch.zeros_like(w), w)
        return w @ v, w

    causal = torch.triu(torch.full((L, L), -inf), diagonal=1)
    att = []

    def case(name, q=None, k=None, v=None, mask=None, is_causal=False):
        q = rnd(1, 1, L, d) if q is None else q
        k = rnd(1, 1, L, d) if k is None else k
        v = rnd(1, 1, L, d) if v is None else v
        bias = torch.zeros(L, L) if mask is None else mask.clone()
        if is_causal:
            bias = bias + causal
        out, w = attn(q, k, v, bias)
        att.append({"name": name, "dims": [1, 1, L, d], "q": special_list(q), "k": special_list(k), "v": special_list(v),
                    "mask": None if mask is None else special_list(mask), "causal": is_causal,
                    "out": special_list(out), "weights": special_list(w)})

    def with_value(t, index, value):
        t = t.clone()
        t.view(-1)[index] = value
        return t

    case("NaN in a key", k=with_value(rnd(1, 1, L, d), 4, nan))
    case("NaN in a future key, causal", k=with_value(rnd(1, 1, L, d), 3 * d, nan), is_causal=True)
    case("+inf in a query", q=with_value(rnd(1, 1, L, d), 2, inf))
    case("-inf in a key", k=with_value(rnd(1, 1, L, d), 1, -inf))
    case("q.k overflows", q=torch.full((1, 1, L, d), big), k=torch.full((1, 1, L, d), big))
    case("NaN additive mask", mask=with_value(torch.zeros(L, L), 5, nan))
    case("+inf additive mask", mask=with_value(torch.zeros(L, L), 6, inf))
    case("finfo.min mask row", mask=torch.zeros(L, L).index_fill_(0, torch.tensor([1]), fmin))
    case("finfo.min padding", mask=torch.zeros(L, L).index_fill_(1, torch.tensor([3]), fmin))
    case("finfo.min everywhere, causal", mask=torch.full((L, L), fmin), is_causal=True)
    case("NaN in a value behind the causal limit", v=with_value(rnd(1, 1, L, d), 3 * d + 1, nan), is_causal=True)
    case("+inf in a value", v=with_value(rnd(1, 1, L, d), 2, inf))
    case("subnormal queries and keys", q=torch.full((1, 1, L, d), tiny), k=torch.full((1, 1, L, d), tiny))
    case("a row fully masked with -inf", mask=torch.zeros(L, L).index_fill_(0, torch.tensor([2]), -inf))
    case("3e38 values", v=torch.full((1, 1, L, d), big))

    xs = torch.tensor([nan, inf, -inf, big, -big, tiny, -tiny, 0.0, -0.0, 88.0, -88.0, 1.0, -1.0, 20.0, -20.0])
    acts = [{"kind": "relu", "out": special_list(F.relu(xs))},
            {"kind": "gelu", "out": special_list(F.gelu(xs))},
            {"kind": "gelu_tanh", "out": special_list(F.gelu(xs, approximate="tanh"))},
            {"kind": "silu", "out": special_list(F.silu(xs))}]

    rows = torch.tensor([[big, -big, 1.0, 2.0], [big, big, big, big], [nan, 1.0, 2.0, 3.0], [inf, 1.0, 2.0, 3.0],
                         [-inf, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [tiny, -tiny, tiny, 0.0], [1e20, -1e20, 3.0, 4.0]])
    norms = []
    for eps in (1e-5, 0.0):
        norms.append({"kind": "layerNorm", "eps": eps, "x": special_list(rows), "dims": list(rows.shape),
                      "out": special_list(F.layer_norm(rows, (4,), eps=eps))})
        variance = rows.pow(2).mean(-1, keepdim=True)
        norms.append({"kind": "rmsNorm", "eps": eps, "x": special_list(rows), "dims": list(rows.shape),
                      "out": special_list(rows * torch.rsqrt(variance + eps))})

    x = torch.tensor([[nan, 1.0, 2.0], [inf, 1.0, 0.0], [1.0, -inf, 2.0], [1.0, 2.0, 3.0]])
    w = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]])
    wi = torch.tensor([[inf, 1.0, 1.0], [1.0, 1.0, 1.0]])
    lin = [{"x": special_list(x), "w": special_list(w), "dims": [4, 3, 2], "out": special_list(F.linear(x, w))},
           {"x": special_list(x[3:]), "w": special_list(wi), "dims": [1, 3, 2], "out": special_list(F.linear(x[3:], wi))}]

    write("special_values.json", {"generator": "tests/golden/gen_fixtures.py", "torch": torch.__version__,
                                  "attention": att, "activations": {"x": special_list(xs), "cases": acts},
                                  "norms": norms, "linear": lin})


if __name__ == "__main__":
    which = sys.argv[1:] or ["positional", "embedding", "embeddings", "attention", "rotary", "modules", "safetensors",
                                "safetensors_dtypes", "models", "model_heads", "generation", "repo_folders", "special_values"]
    for name in which:
        globals()[name]()

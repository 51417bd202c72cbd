#!/usr/bin/python3
"""GGUF fixtures, written from the format's specification (ggml's docs/gguf.md, gguf.h): there is
no `gguf` Python package here, so the writer, the tensor layout of llama.cpp's converter and ggml's
reference quantisers are re-implemented below in numpy.

    /usr/bin/python3 tests/golden/gen_gguf.py           # writes the fixtures and the fuzz seeds
    /usr/bin/python3 tests/golden/gen_gguf.py --check-quantisers DRIVER
        # compares the quantisers with ggml's own quantize_row_*_ref, built as DRIVER (a program that
        # reads float32 from stdin and writes the blocks of kind argv[1]: 0 Q8_0, 1 Q4_0, 2 Q4_K)

Writes tests/fixtures/gguf/:
- llama-{f32,f16,bf16,q8_0,q4_0,q4_k}.gguf: one tiny llama-architecture model (random weights
  from a fixed seed, in Hugging Face's LlamaForCausalLM layout), converted as llama.cpp's
  convert_hf_to_gguf.py converts one: its tensor names (token_embd.weight, blk.0.attn_q.weight, ...,
  output_norm.weight, output.weight), dims in ggml order (ne[0] = the row), q_proj and k_proj rows
  permuted for ggml's rotary (LlamaModel.permute: within each head, rows j and j + head_dim / 2 of
  Hugging Face's rotate_half layout become rows 2j and 2j + 1), 1-D tensors in F32 and the 2-D ones
  in the file's type. Q4_K needs rows of 256: ffn_down (its rows are the 256 of
  intermediate_size) is Q4_K and the other matrices, with rows of 32, fall back to Q4_0
  (llama-quantize falls back to Q5_0 there, a type attnkit does not read). The llama.* keys and a
  SentencePiece-style vocabulary (tokenizer.ggml.model "llama": <unk> <s> </s>, 256 byte tokens
  <0x00>..<0xFF>, then BPE pieces with scores) as the converter writes them.
- gpt2-f16.gguf: a tiny gpt2-architecture model (GPT2LMHeadModel's Conv1D weights transposed, the
  tied head written again as output.weight, position_embd in F32) with a byte-level BPE
  vocabulary (tokenizer.ggml.model "gpt2", tokens, token_type, merges).
- qwen2-f32.gguf: a tiny qwen2-architecture model (Qwen2ForCausalLM: q/k/v biases, tied
  embeddings so no output.weight, rope_theta 1e6; q/k not permuted, as Qwen2Model converts) with
  GPT-2's byte-level BPE plus Qwen's control tokens and tokenizer.ggml.pre "qwen2".
- all-types.gguf: one metadata key of each value type, an array of each, an empty array, and a
  tensor of each type attnkit reads, with general.alignment 64.
- gguf.json: what each file holds (metadata values, tensor types, dims, offsets, sizes, an FNV-1a
  hash of each tensor's bytes and of its float32 dequantisation, its first values) and the model
  hyperparameters with the references (the float32 model's; for each llama file, the same forward
  with its weights as stored, dequantised: `asStored`), for tests/native/formats/test_gguf.cpp,
  tests/node/formats/gguf.test.mjs and tests/node/models/gguf_models.test.mjs.

And tests/fuzz/seeds/gguf/: small valid files of each tensor type, truncated ones, hostile counts.
Deterministic: re-running reproduces the committed files.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fixtures", "gguf")
SEEDS = os.path.join(ROOT, "tests", "fuzz", "seeds", "gguf")

f32 = np.float32

# ---------------------------------------------------------------------------------- the format

# Metadata value types (gguf_type).
U8, I8, U16, I16, U32, I32, F32V, BOOL, STR, ARR, U64, I64, F64 = range(13)
VALUE_NAMES = ["u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"]
NP_OF = {U8: "<u1", I8: "<i1", U16: "<u2", I16: "<i2", U32: "<u4", I32: "<i4", F32V: "<f4", BOOL: "<u1",
         U64: "<u8", I64: "<i8", F64: "<f8"}

# ggml types read by attnkit: number, block elements, block bytes.
GGML = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144),
        "BF16": (30, 1, 2)}


def pack_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def pack_value(t, v):
    if t == STR:
        return pack_string(v)
    if t == ARR:
        et, items = v
        head = struct.pack("<IQ", et, len(items))
        if et == STR:
            return head + b"".join(pack_string(x) for x in items)
        return head + np.asarray(items, dtype=NP_OF[et]).tobytes()
    return np.asarray([v], dtype=NP_OF[t]).tobytes()


def pad_to(n, alignment):
    return (alignment - n % alignment) % alignment


def gguf_bytes(kvs, tensors, alignment=32, version=3):
    """kvs: [(key, type, value)]; tensors: [(name, ggml type name, ne, raw bytes)]. As gguf-py's
    GGUFWriter writes: header, pairs, tensor infos (offsets packed in order, each padded), padding
    to the alignment, the data (each tensor padded with zeros to the alignment)."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)))
    for key, t, v in kvs:
        out += pack_string(key) + struct.pack("<I", t) + pack_value(t, v)
    offset = 0
    for name, gtype, ne, raw in tensors:
        out += pack_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
        out += struct.pack("<IQ", GGML[gtype][0], offset)
        offset += len(raw) + pad_to(len(raw), alignment)
    out += bytes(pad_to(len(out), alignment))
    for _, _, _, raw in tensors:
        out += raw + bytes(pad_to(len(raw), alignment))
    return bytes(out)


# ------------------------------------------------------------------------------ the quantisers
# ggml's reference quantisers (ggml/src/ggml-quants.c: quantize_row_q8_0_ref, quantize_row_q4_0_ref,
# quantize_row_q4_K_ref with make_qkx2_quants and nearest_int), re-implemented in float32 numpy
# with each operation in ggml's order and rounding (no fused multiply-add, sums left to right), so
# that the blocks are bit-exact. Rows are vectorised; each block's own sums run element by element.


def fp16_bits(x):
    # numpy rounds to nearest even, overflowing to inf: ggml's GGML_FP32_TO_FP16.
    return np.asarray(x, dtype=f32).astype(np.float16).view(np.uint16)


def fp16_value(bits):
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(f32)


def round_away(v):
    # C's roundf (halves away from zero), exact: a float32 is exact in float64.
    v = v.astype(np.float64)
    return (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int64)


def nearest_int(v):
    # ggml's nearest_int: adds 1.5 * 2^23 in float, i.e. round half to even (|v| < 2^22).
    return np.rint(v.astype(f32)).astype(np.int64)


def safe_inverse(d):
    with np.errstate(divide="ignore"):
        return np.where(d != 0, f32(1) / np.where(d != 0, d, f32(1)), f32(0)).astype(f32)


def quantize_q8_0(x):
    x = np.asarray(x, dtype=f32).reshape(-1, 32)
    amax = np.abs(x).max(axis=1)
    d = (amax / f32(127)).astype(f32)
    q = round_away((x * safe_inverse(d)[:, None]).astype(f32)).astype(np.int8)
    out = np.zeros((len(x), 34), np.uint8)
    out[:, 0:2] = fp16_bits(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def quantize_q4_0(x):
    x = np.asarray(x, dtype=f32).reshape(-1, 32)
    first = np.argmax(np.abs(x), axis=1)  # the first of the largest magnitudes (ggml's strict >)
    mx = x[np.arange(len(x)), first]
    d = (mx / f32(-8)).astype(f32)
    v = ((x * safe_inverse(d)[:, None]).astype(f32) + f32(8.5)).astype(f32)
    q = np.minimum(15, np.trunc(v).astype(np.int64)).astype(np.uint8)
    out = np.zeros((len(x), 18), np.uint8)
    out[:, 0:2] = fp16_bits(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def make_qkx2_quants(x, w, nmax=15, rmin=f32(-1.0), rdelta=f32(0.1), nstep=20):
    """ggml's make_qkx2_quants over rows of 32 (use_mad false): returns (scale, -min, L)."""
    r = len(x)
    mn, mx = x[:, 0].copy(), x[:, 0].copy()
    sum_w = w[:, 0].copy()
    sum_x = (sum_w * x[:, 0]).astype(f32)
    for i in range(1, 32):
        mn = np.where(x[:, i] < mn, x[:, i], mn)
        mx = np.where(x[:, i] > mx, x[:, i], mx)
        sum_w = (sum_w + w[:, i]).astype(f32)
        sum_x = (sum_x + (w[:, i] * x[:, i]).astype(f32)).astype(f32)
    mn = np.where(mn > 0, f32(0), mn).astype(f32)
    flat = mx == mn
    span = np.where(flat, f32(1), (mx - mn).astype(f32))
    iscale = (f32(nmax) / span).astype(f32)
    scale = (f32(1) / iscale).astype(f32)
    L = np.clip(nearest_int((iscale[:, None] * (x - mn[:, None]).astype(f32)).astype(f32)), 0, nmax)
    best = np.zeros(r, f32)
    for i in range(32):
        diff = (((scale * L[:, i].astype(f32)).astype(f32) + mn).astype(f32) - x[:, i]).astype(f32)
        best = (best + (w[:, i] * (diff * diff).astype(f32)).astype(f32)).astype(f32)
    for step in range(nstep + 1):
        # (ggml divides by max - min with `min` as the search has moved it so far)
        span = np.where(flat, f32(1), (mx - mn).astype(f32))
        iscale = ((((rmin + (rdelta * f32(step)).astype(f32)).astype(f32)) + f32(nmax)).astype(f32) / span).astype(f32)
        Laux = np.clip(nearest_int((iscale[:, None] * (x - mn[:, None]).astype(f32)).astype(f32)), 0, nmax)
        sum_l = np.zeros(r, f32)
        sum_l2 = np.zeros(r, f32)
        sum_xl = np.zeros(r, f32)
        for i in range(32):
            wl = (w[:, i] * Laux[:, i].astype(f32)).astype(f32)
            sum_l = (sum_l + wl).astype(f32)
            sum_l2 = (sum_l2 + (wl * Laux[:, i].astype(f32)).astype(f32)).astype(f32)
            sum_xl = (sum_xl + (wl * x[:, i]).astype(f32)).astype(f32)
        D = ((sum_w * sum_l2).astype(f32) - (sum_l * sum_l).astype(f32)).astype(f32)
        ok = D > 0
        Dz = np.where(ok, D, f32(1))
        this_scale = (((sum_w * sum_xl).astype(f32) - (sum_x * sum_l).astype(f32)).astype(f32) / Dz).astype(f32)
        this_min = (((sum_l2 * sum_x).astype(f32) - (sum_l * sum_xl).astype(f32)).astype(f32) / Dz).astype(f32)
        positive = this_min > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            this_scale = np.where(positive, (sum_xl / sum_l2).astype(f32), this_scale).astype(f32)
        this_min = np.where(positive, f32(0), this_min).astype(f32)
        mad = np.zeros(r, f32)
        for i in range(32):
            diff = (((this_scale * Laux[:, i].astype(f32)).astype(f32) + this_min).astype(f32) - x[:, i]).astype(f32)
            mad = (mad + (w[:, i] * (diff * diff).astype(f32)).astype(f32)).astype(f32)
        better = ok & ~flat & (mad < best)
        L = np.where(better[:, None], Laux, L)
        best = np.where(better, mad, best)
        scale = np.where(better, this_scale, scale)
        mn = np.where(better, this_min, mn)
    L = np.where(flat[:, None], 0, L)
    scale = np.where(flat, f32(0), scale).astype(f32)
    return scale, (-mn).astype(f32), L


def quantize_q4_k(x):
    x = np.asarray(x, dtype=f32).reshape(-1, 8, 32)
    nb = len(x)
    sub = x.reshape(-1, 32)
    sum_x2 = np.zeros(len(sub), f32)
    for l in range(32):
        sum_x2 = (sum_x2 + (sub[:, l] * sub[:, l]).astype(f32)).astype(f32)
    av_x = np.sqrt((sum_x2 / f32(32)).astype(f32)).astype(f32)
    weights = (av_x[:, None] + np.abs(sub)).astype(f32)
    scales, mins, L = make_qkx2_quants(sub, weights)
    scales, mins, L = scales.reshape(nb, 8), mins.reshape(nb, 8), L.reshape(nb, 8, 32)
    max_scale = np.zeros(nb, f32)
    max_min = np.zeros(nb, f32)
    for j in range(8):  # ggml's `if (scale > max_scale)` chains, from 0
        max_scale = np.where(scales[:, j] > max_scale, scales[:, j], max_scale)
        max_min = np.where(mins[:, j] > max_min, mins[:, j], max_min)
    with np.errstate(divide="ignore"):
        inv_scale = np.where(max_scale > 0, (f32(63) / np.where(max_scale > 0, max_scale, f32(1))).astype(f32), f32(0))
        inv_min = np.where(max_min > 0, (f32(63) / np.where(max_min > 0, max_min, f32(1))).astype(f32), f32(0))
    ls = np.minimum(63, nearest_int((inv_scale[:, None] * scales).astype(f32)) & 0xFF)  # (uint8_t) then MIN
    lm = np.minimum(63, nearest_int((inv_min[:, None] * mins).astype(f32)) & 0xFF)
    packed = np.zeros((nb, 12), np.int64)
    for j in range(4):
        packed[:, j] = ls[:, j]
        packed[:, j + 4] = lm[:, j]
    for j in range(4, 8):
        packed[:, j + 4] = (ls[:, j] & 0xF) | ((lm[:, j] & 0xF) << 4)
        packed[:, j - 4] |= (ls[:, j] >> 4) << 6
        packed[:, j] |= (lm[:, j] >> 4) << 6
    d_bits = fp16_bits((max_scale / f32(63)).astype(f32))
    dmin_bits = fp16_bits((max_min / f32(63)).astype(f32))
    d, dmin = fp16_value(d_bits), fp16_value(dmin_bits)
    for j in range(8):
        sc, m = scale_min(packed, j)
        dj = (d * sc.astype(f32)).astype(f32)
        dm = (dmin * m.astype(f32)).astype(f32)
        nonzero = dj != 0
        dz = np.where(nonzero, dj, f32(1))
        l = np.clip(nearest_int(((x[:, j, :] + dm[:, None]).astype(f32) / dz[:, None]).astype(f32)), 0, 15)
        L[:, j, :] = np.where(nonzero[:, None], l, L[:, j, :])  # `if (!d) continue;` keeps make_qkx2's L
    out = np.zeros((nb, 144), np.uint8)
    out[:, 0:2] = d_bits.view(np.uint8).reshape(-1, 2)
    out[:, 2:4] = dmin_bits.view(np.uint8).reshape(-1, 2)
    out[:, 4:16] = packed.astype(np.uint8)
    flat = L.reshape(nb, 256)
    for k, j in enumerate(range(0, 256, 64)):
        out[:, 16 + 32 * k:16 + 32 * (k + 1)] = (flat[:, j:j + 32] | (flat[:, j + 32:j + 64] << 4)).astype(np.uint8)
    return out.tobytes()


def scale_min(packed, j):
    """ggml's get_scale_min_k4 over the rows of `packed` (uint8 values as int64)."""
    q = packed
    if j < 4:
        return q[:, j] & 63, q[:, j + 4] & 63
    return (q[:, j + 4] & 0xF) | ((q[:, j - 4] >> 6) << 4), (q[:, j + 4] >> 4) | ((q[:, j] >> 6) << 4)


def to_bf16(x):
    # Round to nearest even on the bits; a NaN stays a (quiet) NaN.
    b = np.asarray(x, dtype=f32).view(np.uint32).astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), r).astype("<u2").tobytes()


def encode(x, gtype):
    x = np.ascontiguousarray(x, dtype=f32)
    if gtype == "F32":
        return x.astype("<f4").tobytes()
    if gtype == "F16":
        return x.astype("<f2").tobytes()
    if gtype == "BF16":
        return to_bf16(x)
    return {"Q8_0": quantize_q8_0, "Q4_0": quantize_q4_0, "Q4_K": quantize_q4_k}[gtype](x)


# ------------------------------------------------------------------------------ dequantisation
# ggml's dequantize_row_* in float32 numpy: what a reader must produce, bit for bit.

def dequantize(raw, gtype, n):
    b = np.frombuffer(raw, np.uint8)
    if gtype == "F32":
        return np.frombuffer(raw, "<f4").astype(f32)
    if gtype == "F16":
        return np.frombuffer(raw, "<f2").astype(f32)
    if gtype == "BF16":
        return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(f32)
    if gtype == "Q8_0":
        blocks = b.reshape(-1, 34)
        d = fp16_value(blocks[:, 0:2].copy().view("<u2").ravel())
        return (blocks[:, 2:].view(np.int8).astype(f32) * d[:, None]).astype(f32).ravel()
    if gtype == "Q4_0":
        blocks = b.reshape(-1, 18)
        d = fp16_value(blocks[:, 0:2].copy().view("<u2").ravel())
        qs = blocks[:, 2:].astype(np.int64)
        q = np.concatenate([(qs & 0xF) - 8, (qs >> 4) - 8], axis=1).astype(f32)
        return (q * d[:, None]).astype(f32).ravel()
    blocks = b.reshape(-1, 144)
    d = fp16_value(blocks[:, 0:2].copy().view("<u2").ravel())
    dmin = fp16_value(blocks[:, 2:4].copy().view("<u2").ravel())
    packed = blocks[:, 4:16].astype(np.int64)
    qs = blocks[:, 16:].astype(np.int64)
    out = np.zeros((len(blocks), 256), f32)
    for j in range(8):
        sc, m = scale_min(packed, j)
        scale = (d * sc.astype(f32)).astype(f32)
        mn = (dmin * m.astype(f32)).astype(f32)
        pair = qs[:, 32 * (j // 2):32 * (j // 2) + 32]
        q = (pair & 0xF) if j % 2 == 0 else (pair >> 4)
        out[:, 32 * j:32 * j + 32] = ((scale[:, None] * q.astype(f32)).astype(f32) - mn[:, None]).astype(f32)
    return out.ravel()


def fnv1a(data):
    h = 0x811C9DC5
    for byte in bytes(data):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "%08x" % h


def fnv1a_fast(data):
    # The same hash, vectorised in chunks is not possible (it is sequential): plain loop over a
    # memoryview is fast enough for these sizes.
    return fnv1a(data)


# ------------------------------------------------------------------------------ the tokenizers

CORPUS = """the quick brown fox jumps over the lazy dog . she sells sea shells by the sea shore .
in the beginning there was the word and the word was good . the rain in spain stays mainly in the plain .
to be or not to be that is the question . all that glitters is not gold . a stitch in time saves nine .
the early bird catches the worm . where there is a will there is a way . hello world and hello again ."""


def train_bpe(words, merges_wanted):
    """Classic BPE over words given as lists of symbols: the most frequent adjacent pair, ties by
    first appearance; returns the merges in order."""
    vocab = {}
    for w in words:
        key = tuple(w)
        vocab[key] = vocab.get(key, 0) + 1
    merges = []
    for _ in range(merges_wanted):
        counts, first = {}, {}
        for k, (w, n) in enumerate(vocab.items()):
            for i in range(len(w) - 1):
                p = (w[i], w[i + 1])
                counts[p] = counts.get(p, 0) + n
                first.setdefault(p, (k, i))
        if not counts:
            break
        best = max(counts, key=lambda p: (counts[p], -first[p][0], -first[p][1]))
        merges.append(best)
        merged = {}
        for w, n in vocab.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + n
        vocab = merged
    return merges


def llama_vocab():
    """tokenizer.ggml.* of a SentencePiece BPE model as convert_hf_to_gguf's _set_vocab_sentencepiece
    writes it: <unk> (UNKNOWN), <s> </s> (CONTROL), <0x00>..<0xFF> (BYTE), then the pieces (NORMAL)
    by score: merged pieces first (score -rank), single characters last."""
    words = ["\u2581" + w for w in CORPUS.split() if w != "."]
    chars = []
    for w in words:
        for c in w:
            if c not in chars:
                chars.append(c)
    merges = train_bpe([list(w) for w in words], 24)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    scores = [0.0] * len(tokens)
    types = [2, 3, 3] + [6] * 256
    for rank, (a, b) in enumerate(merges):
        tokens.append(a + b)
        scores.append(-float(rank))
        types.append(1)
    for k, c in enumerate(sorted(chars, key=lambda c: (c != "\u2581", c))):
        tokens.append(c)
        scores.append(-float(len(merges) + k))
        types.append(1)
    return tokens, scores, types


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, [chr(c) for c in cs]


def gpt2_vocab():
    """GPT-2's byte-level BPE as _set_vocab_gpt2 writes it: the 256 byte characters in GPT-2's
    order, the merged tokens, <|endoftext|> (CONTROL) last; merges as "a b"."""
    bs, cs = bytes_to_unicode()
    byte_char = dict(zip(bs, cs))
    words = []
    for k, w in enumerate(CORPUS.split()):
        text = (" " if k else "") + w
        words.append([byte_char[b] for b in text.encode("utf-8")])
    merges = train_bpe(words, 30)
    tokens = list(cs) + [a + b for a, b in merges] + ["<|endoftext|>"]
    types = [1] * (len(tokens) - 1) + [3]
    return tokens, types, ["%s %s" % m for m in merges]


# ------------------------------------------------------------------------------ the models

LLAMA = dict(vocab_size=None, hidden_size=32, intermediate_size=256, num_hidden_layers=1, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=128, rms_norm_eps=1e-5, rope_theta=10000.0)
GPT2 = dict(vocab_size=None, n_embd=32, n_head=4, n_layer=2, n_ctx=64, n_positions=64, layer_norm_epsilon=1e-5)
QWEN2 = dict(vocab_size=None, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=1000000.0)


def permute(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute (q_proj with num_attention_heads, k_proj with
    num_key_value_heads): rotate_half's halves interleaved, per head."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama_state(vocab_size):
    cfg = dict(LLAMA, vocab_size=vocab_size)
    g = torch.Generator().manual_seed(36)
    h, ff = cfg["hidden_size"], cfg["intermediate_size"]
    hd = h // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * hd

    def normal(*shape, std=0.08):
        return (torch.randn(*shape, generator=g) * std).float()

    sd = {"model.embed_tokens.weight": normal(vocab_size, h, std=0.5)}
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        sd[p + "input_layernorm.weight"] = 1 + normal(h, std=0.1)
        sd[p + "self_attn.q_proj.weight"] = normal(h, h, std=0.2)
        sd[p + "self_attn.k_proj.weight"] = normal(kv, h, std=0.2)
        sd[p + "self_attn.v_proj.weight"] = normal(kv, h, std=0.2)
        sd[p + "self_attn.o_proj.weight"] = normal(h, h, std=0.2)
        sd[p + "post_attention_layernorm.weight"] = 1 + normal(h, std=0.1)
        sd[p + "mlp.gate_proj.weight"] = normal(ff, h, std=0.2)
        sd[p + "mlp.up_proj.weight"] = normal(ff, h, std=0.2)
        sd[p + "mlp.down_proj.weight"] = normal(h, ff, std=0.08)
    sd["model.norm.weight"] = 1 + normal(h, std=0.1)
    sd["lm_head.weight"] = normal(vocab_size, h, std=0.3)
    return cfg, sd


def llama_tensors(cfg, sd):
    """(gguf name, float32 array in PyTorch's row-major layout) in the converter's naming."""
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    out = [("token_embd.weight", sd["model.embed_tokens.weight"])]
    for i in range(cfg["num_hidden_layers"]):
        for hf, gg in names.items():
            w = sd["model.layers.%d.%s.weight" % (i, hf)]
            if hf == "self_attn.q_proj":
                w = permute(w, cfg["num_attention_heads"])
            if hf == "self_attn.k_proj":
                w = permute(w, cfg["num_key_value_heads"])
            out.append(("blk.%d.%s.weight" % (i, gg), w))
    out.append(("output_norm.weight", sd["model.norm.weight"]))
    out.append(("output.weight", sd["lm_head.weight"]))
    return [(n, w.numpy().astype(f32)) for n, w in out]


def qwen2_vocab():
    """Qwen2's form of byte-level BPE (_set_vocab_qwen): GPT-2's tokens and merges here, then
    <|endoftext|>, <|im_start|> and <|im_end|> (CONTROL)."""
    tokens, types, merges = gpt2_vocab()
    tokens = tokens[:-1] + ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    types = types[:-1] + [3, 3, 3]
    return tokens, types, merges


def qwen2_state(vocab_size):
    cfg = dict(QWEN2, vocab_size=vocab_size)
    g = torch.Generator().manual_seed(22)
    h, ff = cfg["hidden_size"], cfg["intermediate_size"]
    hd = h // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * hd

    def normal(*shape, std=0.2):
        return (torch.randn(*shape, generator=g) * std).float()

    sd = {"model.embed_tokens.weight": normal(vocab_size, h, std=0.6)}
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        sd[p + "input_layernorm.weight"] = 1 + normal(h, std=0.1)
        sd[p + "self_attn.q_proj.weight"], sd[p + "self_attn.q_proj.bias"] = normal(h, h), normal(h, std=0.3)
        sd[p + "self_attn.k_proj.weight"], sd[p + "self_attn.k_proj.bias"] = normal(kv, h), normal(kv, std=0.3)
        sd[p + "self_attn.v_proj.weight"], sd[p + "self_attn.v_proj.bias"] = normal(kv, h), normal(kv, std=0.3)
        sd[p + "self_attn.o_proj.weight"] = normal(h, h)
        sd[p + "post_attention_layernorm.weight"] = 1 + normal(h, std=0.1)
        sd[p + "mlp.gate_proj.weight"] = normal(ff, h)
        sd[p + "mlp.up_proj.weight"] = normal(ff, h)
        sd[p + "mlp.down_proj.weight"] = normal(h, ff, std=0.1)
    sd["model.norm.weight"] = 1 + normal(h, std=0.1)
    return cfg, sd


def qwen2_tensors(cfg, sd):
    """Qwen2Model's conversion: LLaMA's names, q/k/v biases, no permutation, no output.weight (tied)."""
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    out = [("token_embd.weight", sd["model.embed_tokens.weight"])]
    for i in range(cfg["num_hidden_layers"]):
        for hf, gg in names.items():
            out.append(("blk.%d.%s.weight" % (i, gg), sd["model.layers.%d.%s.weight" % (i, hf)]))
            if hf in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
                out.append(("blk.%d.%s.bias" % (i, gg), sd["model.layers.%d.%s.bias" % (i, hf)]))
    out.append(("output_norm.weight", sd["model.norm.weight"]))
    return [(n, w.numpy().astype(f32)) for n, w in out]


QWEN2_TEMPLATE = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
                  "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def qwen2_file():
    tokens, types, merges = qwen2_vocab()
    cfg, sd = qwen2_state(len(tokens))
    eot, im_end = tokens.index("<|endoftext|>"), tokens.index("<|im_end|>")
    kvs = [
        ("general.architecture", STR, "qwen2"),
        ("general.type", STR, "model"),
        ("general.name", STR, "attnkit tiny qwen2"),
        ("qwen2.block_count", U32, cfg["num_hidden_layers"]),
        ("qwen2.context_length", U32, cfg["max_position_embeddings"]),
        ("qwen2.embedding_length", U32, cfg["hidden_size"]),
        ("qwen2.feed_forward_length", U32, cfg["intermediate_size"]),
        ("qwen2.attention.head_count", U32, cfg["num_attention_heads"]),
        ("qwen2.attention.head_count_kv", U32, cfg["num_key_value_heads"]),
        ("qwen2.rope.freq_base", F32V, cfg["rope_theta"]),
        ("qwen2.attention.layer_norm_rms_epsilon", F32V, cfg["rms_norm_eps"]),
        ("general.file_type", U32, FILE_TYPE_NUMBER["F32"]),
        ("tokenizer.ggml.model", STR, "gpt2"),
        ("tokenizer.ggml.pre", STR, "qwen2"),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.merges", ARR, (STR, merges)),
        ("tokenizer.ggml.eos_token_id", U32, im_end),
        ("tokenizer.ggml.padding_token_id", U32, eot),
        ("tokenizer.ggml.bos_token_id", U32, eot),
        ("tokenizer.ggml.add_bos_token", BOOL, False),
        ("tokenizer.chat_template", STR, QWEN2_TEMPLATE),
        ("general.quantization_version", U32, 2),
    ]
    tensors = [(n, w, stored_type(n, w, "F32")) for n, w in qwen2_tensors(cfg, sd)]
    return cfg, kvs, tensors


def gpt2_state(vocab_size):
    cfg = dict(GPT2, vocab_size=vocab_size)
    g = torch.Generator().manual_seed(2)
    h = cfg["n_embd"]

    def normal(*shape, std=0.1):
        return (torch.randn(*shape, generator=g) * std).float()

    sd = {"transformer.wte.weight": normal(vocab_size, h, std=0.5), "transformer.wpe.weight": normal(cfg["n_positions"], h)}
    for i in range(cfg["n_layer"]):
        p = "transformer.h.%d." % i
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = 1 + normal(h), normal(h)
        sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"] = normal(h, 3 * h, std=0.2), normal(3 * h)
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = normal(h, h, std=0.2), normal(h)
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = 1 + normal(h), normal(h)
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = normal(h, 4 * h, std=0.2), normal(4 * h)
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = normal(4 * h, h, std=0.1), normal(h)
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = 1 + normal(h), normal(h)
    return cfg, sd


def gpt2_tensors(cfg, sd):
    """GPT2Model.modify_tensors: Conv1D weights ([in, out]) transposed, the head duplicated from wte."""
    names = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output", "ln_2": "ffn_norm",
             "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
    out = [("token_embd.weight", sd["transformer.wte.weight"]), ("position_embd.weight", sd["transformer.wpe.weight"])]
    for i in range(cfg["n_layer"]):
        for hf, gg in names.items():
            w = sd["transformer.h.%d.%s.weight" % (i, hf)]
            if hf.endswith(("c_attn", "c_proj", "c_fc")):
                w = w.t()
            out.append(("blk.%d.%s.weight" % (i, gg), w))
            out.append(("blk.%d.%s.bias" % (i, gg), sd["transformer.h.%d.%s.bias" % (i, hf)]))
    out.append(("output_norm.weight", sd["transformer.ln_f.weight"]))
    out.append(("output_norm.bias", sd["transformer.ln_f.bias"]))
    out.append(("output.weight", sd["transformer.wte.weight"]))
    return [(n, w.contiguous().numpy().astype(f32)) for n, w in out]


def stored_type(name, w, file_type):
    """The converter's choice: 1-D tensors, norms and position_embd in F32; the file's type
    otherwise (Q4_K where rows allow it, else Q4_0)."""
    if w.ndim <= 1 or name.endswith("_norm.weight") or name.startswith("position_embd"):
        return "F32"
    if file_type == "Q4_K" and w.shape[-1] % 256 != 0:
        return "Q4_0"
    return file_type


FILE_TYPE_NUMBER = {"F32": 0, "F16": 1, "Q4_0": 2, "Q8_0": 7, "Q4_K": 14, "BF16": 32}  # LlamaFileType


def llama_file(file_type):
    tokens, scores, types = llama_vocab()
    cfg, sd = llama_state(len(tokens))
    hd = cfg["hidden_size"] // cfg["num_attention_heads"]
    kvs = [
        ("general.architecture", STR, "llama"),
        ("general.type", STR, "model"),
        ("general.name", STR, "attnkit tiny llama"),
        ("llama.vocab_size", U32, cfg["vocab_size"]),
        ("llama.context_length", U32, cfg["max_position_embeddings"]),
        ("llama.embedding_length", U32, cfg["hidden_size"]),
        ("llama.block_count", U32, cfg["num_hidden_layers"]),
        ("llama.feed_forward_length", U32, cfg["intermediate_size"]),
        ("llama.rope.dimension_count", U32, hd),
        ("llama.attention.head_count", U32, cfg["num_attention_heads"]),
        ("llama.attention.head_count_kv", U32, cfg["num_key_value_heads"]),
        ("llama.rope.freq_base", F32V, cfg["rope_theta"]),
        ("llama.attention.layer_norm_rms_epsilon", F32V, cfg["rms_norm_eps"]),
        ("general.file_type", U32, FILE_TYPE_NUMBER[file_type]),
        ("tokenizer.ggml.model", STR, "llama"),
        ("tokenizer.ggml.pre", STR, "default"),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.scores", ARR, (F32V, scores)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
        ("tokenizer.ggml.unknown_token_id", U32, 0),
        ("tokenizer.ggml.add_bos_token", BOOL, True),
        ("tokenizer.ggml.add_eos_token", BOOL, False),
        ("general.quantization_version", U32, 2),
    ]
    tensors = [(n, w, stored_type(n, w, file_type)) for n, w in llama_tensors(cfg, sd)]
    return cfg, kvs, tensors


def gpt2_file():
    tokens, types, merges = gpt2_vocab()
    cfg, sd = gpt2_state(len(tokens))
    eot = len(tokens) - 1
    kvs = [
        ("general.architecture", STR, "gpt2"),
        ("general.type", STR, "model"),
        ("general.name", STR, "attnkit tiny gpt2"),
        ("gpt2.block_count", U32, cfg["n_layer"]),
        ("gpt2.context_length", U32, cfg["n_ctx"]),
        ("gpt2.embedding_length", U32, cfg["n_embd"]),
        ("gpt2.feed_forward_length", U32, 4 * cfg["n_embd"]),
        ("gpt2.attention.head_count", U32, cfg["n_head"]),
        ("gpt2.attention.layer_norm_epsilon", F32V, cfg["layer_norm_epsilon"]),
        ("general.file_type", U32, FILE_TYPE_NUMBER["F16"]),
        ("tokenizer.ggml.model", STR, "gpt2"),
        ("tokenizer.ggml.pre", STR, "gpt-2"),
        ("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        ("tokenizer.ggml.token_type", ARR, (I32, types)),
        ("tokenizer.ggml.merges", ARR, (STR, merges)),
        ("tokenizer.ggml.bos_token_id", U32, eot),
        ("tokenizer.ggml.eos_token_id", U32, eot),
        ("general.quantization_version", U32, 2),
    ]
    tensors = [(n, w, stored_type(n, w, "F16")) for n, w in gpt2_tensors(cfg, sd)]
    return cfg, kvs, tensors


def all_types_file():
    rng = np.random.RandomState(7)
    kvs = [
        ("general.architecture", STR, "attnkit-test"),
        ("general.alignment", U32, 64),
        ("test.u8", U8, 200), ("test.i8", I8, -100), ("test.u16", U16, 60000), ("test.i16", I16, -30000),
        ("test.u32", U32, 4000000000), ("test.i32", I32, -2000000000), ("test.f32", F32V, 0.1),
        ("test.bool", BOOL, True), ("test.string", STR, "caf\u00e9 \u6771\u4eac \U0001F600"),
        ("test.u64", U64, 18446744073709551615), ("test.i64", I64, -9223372036854775808), ("test.f64", F64, 0.1),
        ("test.array.u8", ARR, (U8, [0, 1, 255])), ("test.array.i8", ARR, (I8, [-128, 0, 127])),
        ("test.array.u16", ARR, (U16, [0, 65535])), ("test.array.i16", ARR, (I16, [-32768, 32767])),
        ("test.array.u32", ARR, (U32, [0, 4294967295])), ("test.array.i32", ARR, (I32, [-2147483648, 2147483647])),
        ("test.array.f32", ARR, (F32V, [0.5, -1.25, 3.4e38])), ("test.array.bool", ARR, (BOOL, [True, False, True])),
        ("test.array.string", ARR, (STR, ["", "a", "\u2581b\u00e9", "<0x0A>"])),
        ("test.array.u64", ARR, (U64, [0, 18446744073709551615])),
        ("test.array.i64", ARR, (I64, [-9223372036854775808, 9223372036854775807])),
        ("test.array.f64", ARR, (F64, [0.1, -2.5])), ("test.array.empty", ARR, (I32, [])),
    ]
    tensors = []
    for k, gtype in enumerate(["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K"]):
        cols = 256 if gtype == "Q4_K" else 64
        w = (rng.standard_normal((2, cols)) * (k + 1)).astype(f32)
        tensors.append(("t.%s" % gtype.lower(), w, gtype))
    tensors.append(("t.vector", (rng.standard_normal(5)).astype(f32), "F32"))
    tensors.append(("t.empty", np.zeros((0, 32), f32), "Q8_0"))
    return kvs, tensors


# ------------------------------------------------------------------------------ references
# The tiny models' forward passes in their Hugging Face layout (LlamaForCausalLM: RMSNorm, rotary by
# rotate_half, grouped-query attention, SwiGLU; GPT2LMHeadModel: Conv1D, gelu_new, tied head),
# written after transformers' modeling files in plain torch: greedy tokens and the last position's
# logits of a prompt, for a model loader to match. llama.cpp (node-llama-cpp 3.21.1) gives the same
# greedy tokens from llama-f32.gguf, llama-f16.gguf, llama-bf16.gguf, llama-q8_0.gguf and
# gpt2-f16.gguf, which shows the q/k permutation undone by its rotary as the converter intends.

LLAMA_PROMPT = [261, 283, 300, 304, 292, 286, 294, 266, 301, 298, 306, 297, 283, 289, 298, 307]
GPT2_PROMPT = [83, 256, 282, 72, 66, 74, 264, 81, 78, 86, 77, 220, 69, 78, 87]
QWEN2_PROMPT = GPT2_PROMPT


def llama_forward(cfg, sd, ids):
    h_, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = h_ // nh
    n = len(ids)

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + cfg["rms_norm_eps"]) * w

    def rope(x):
        inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd))
        f = torch.outer(torch.arange(n).float(), inv)
        cos, sin = torch.cat([f, f], -1).cos(), torch.cat([f, f], -1).sin()
        return x * cos + torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1) * sin

    def linear(x, p):  # (Qwen2's q/k/v have biases)
        y = x @ sd[p + ".weight"].T
        return y + sd[p + ".bias"] if p + ".bias" in sd else y

    x = sd["model.embed_tokens.weight"][ids]
    causal = torch.triu(torch.full((n, n), float("-inf")), 1)
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = rms(x, sd[p + "input_layernorm.weight"])
        q = linear(h, p + "self_attn.q_proj").view(n, nh, hd).transpose(0, 1)
        k = linear(h, p + "self_attn.k_proj").view(n, nkv, hd).transpose(0, 1)
        v = linear(h, p + "self_attn.v_proj").view(n, nkv, hd).transpose(0, 1)
        q, k = rope(q), rope(k).repeat_interleave(nh // nkv, 0)
        v = v.repeat_interleave(nh // nkv, 0)
        a = ((q @ k.transpose(1, 2) / hd ** 0.5 + causal).softmax(-1) @ v).transpose(0, 1).reshape(n, h_)
        x = x + a @ sd[p + "self_attn.o_proj.weight"].T
        h = rms(x, sd[p + "post_attention_layernorm.weight"])
        gate = torch.nn.functional.silu(h @ sd[p + "mlp.gate_proj.weight"].T)
        x = x + (gate * (h @ sd[p + "mlp.up_proj.weight"].T)) @ sd[p + "mlp.down_proj.weight"].T
    return rms(x, sd["model.norm.weight"]) @ sd.get("lm_head.weight", sd["model.embed_tokens.weight"]).T


def gpt2_forward(cfg, sd, ids):
    h_, nh = cfg["n_embd"], cfg["n_head"]
    hd = h_ // nh
    n = len(ids)

    def ln(x, p):
        return torch.nn.functional.layer_norm(x, (h_,), sd[p + ".weight"], sd[p + ".bias"], cfg["layer_norm_epsilon"])

    def gelu_new(x):
        return 0.5 * x * (1 + torch.tanh((2 / np.pi) ** 0.5 * (x + 0.044715 * x ** 3)))

    x = sd["transformer.wte.weight"][ids] + sd["transformer.wpe.weight"][:n]
    causal = torch.triu(torch.full((n, n), float("-inf")), 1)
    for i in range(cfg["n_layer"]):
        p = "transformer.h.%d." % i
        qkv = ln(x, p + "ln_1") @ sd[p + "attn.c_attn.weight"] + sd[p + "attn.c_attn.bias"]
        q, k, v = [t.view(n, nh, hd).transpose(0, 1) for t in qkv.split(h_, -1)]
        a = ((q @ k.transpose(1, 2) / hd ** 0.5 + causal).softmax(-1) @ v).transpose(0, 1).reshape(n, h_)
        x = x + a @ sd[p + "attn.c_proj.weight"] + sd[p + "attn.c_proj.bias"]
        m = gelu_new(ln(x, p + "ln_2") @ sd[p + "mlp.c_fc.weight"] + sd[p + "mlp.c_fc.bias"])
        x = x + m @ sd[p + "mlp.c_proj.weight"] + sd[p + "mlp.c_proj.bias"]
    return ln(x, "transformer.ln_f") @ sd["transformer.wte.weight"].T


def reference(forward, cfg, sd, prompt, steps=8):
    out = []
    with torch.no_grad():
        last = forward(cfg, sd, torch.tensor(prompt))[-1]
        for _ in range(steps):
            out.append(int(forward(cfg, sd, torch.tensor(prompt + out))[-1].argmax()))
    return {"prompt": prompt, "greedy": out, "lastLogits": [float(v) for v in last]}


# ------------------------------------------------------------------------------ output

def typed_json(t, v):
    if t == ARR:
        et, items = v
        return {"type": "array", "element": VALUE_NAMES[et], "value": [typed_json(et, x)["value"] for x in items]}
    if t in (U64, I64):
        return {"type": VALUE_NAMES[t], "value": str(v)}
    if t == F32V:
        return {"type": "f32", "value": float(f32(v))}
    return {"type": VALUE_NAMES[t], "value": v}


def write(name, kvs, tensors, alignment=32, extra=None):
    encoded = []
    for n, w, gtype in tensors:
        ne = list(reversed(w.shape))  # ggml order: ne[0] = the row
        encoded.append((n, gtype, ne, encode(w, gtype), w))
    data = gguf_bytes(kvs, [(n, g, ne, raw) for n, g, ne, raw, _ in encoded], alignment)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    record = {"bytes": len(data), "alignment": alignment, "metadata": {k: typed_json(t, v) for k, t, v in kvs},
              "keys": [k for k, _, _ in kvs], "tensors": {}}
    header_end = len(data) - sum(len(raw) + pad_to(len(raw), alignment) for _, _, _, raw, _ in encoded)
    offset = header_end
    for n, gtype, ne, raw, w in encoded:
        values = dequantize(raw, gtype, w.size)
        record["tensors"][n] = {
            "type": gtype, "ne": ne, "dims": list(w.shape), "offset": offset, "size": len(raw),
            "fnv": fnv1a(raw), "fnvFloat32": fnv1a(values.astype("<f4").tobytes()),
            "head": [float(v) for v in values[:8]],
            "maxError": float(np.max(np.abs(values - w.ravel()))) if w.size else 0.0,
            "maxAbs": float(np.max(np.abs(w))) if w.size else 0.0,
        }
        offset += len(raw) + pad_to(len(raw), alignment)
    if extra:
        record.update(extra)
    print("%-22s %7d bytes, %d tensors: %s" % (name, len(data), len(tensors),
                                               ", ".join(sorted({g for _, g, _, _, _ in encoded}))))
    return data, record


def seeds(llama_q8):
    """Small inputs for fuzz_gguf: valid files of each tensor type, truncated ones, hostile counts."""
    os.makedirs(SEEDS, exist_ok=True)
    rng = np.random.RandomState(3)
    base = [("general.architecture", STR, "llama"), ("tokenizer.ggml.tokens", ARR, (STR, ["<unk>", "\u2581a", "b"])),
            ("tokenizer.ggml.scores", ARR, (F32V, [0.0, -1.0, -2.0]))]
    files = {}
    for gtype in ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K"]:
        cols = 256 if gtype == "Q4_K" else 32
        w = rng.standard_normal((2 if gtype != "Q4_K" else 1, cols)).astype(f32)
        files["%s.gguf" % gtype.lower()] = gguf_bytes(base, [("blk.0.attn_q.weight", gtype, [cols, len(w)], encode(w, gtype)),
                                                             ("output_norm.weight", "F32", [4], encode(np.ones(4, f32), "F32"))])
    kvs, tensors = all_types_file()
    small = [(n, g, list(reversed(w.shape)), encode(w, g)) for n, w, g in tensors if g in ("F32", "Q8_0")]
    files["all-types.gguf"] = gguf_bytes(kvs, small, alignment=64)
    files["v2.gguf"] = gguf_bytes(base, [("a", "F32", [2], encode(np.ones(2, f32), "F32"))], version=2)
    files["no-tensors.gguf"] = gguf_bytes(base, [])
    good = files["q8_0.gguf"]
    files["truncated-kv.gguf"] = good[:40]
    files["truncated-info.gguf"] = good[:len(good) // 2]
    files["truncated-data.gguf"] = good[:-40]
    files["huge-tensor-count.gguf"] = b"GGUF" + struct.pack("<IQQ", 3, 2 ** 64 - 1, 0)
    files["huge-kv-count.gguf"] = b"GGUF" + struct.pack("<IQQ", 3, 0, 2 ** 63) + bytes(16)
    files["huge-array.gguf"] = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pack_string("k") + struct.pack("<IIQ", ARR, U32, 2 ** 62)
    files["huge-string.gguf"] = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pack_string("k") + struct.pack("<IQ", STR, 2 ** 64 - 1)
    files["huge-dims.gguf"] = gguf_bytes([], [("a", "F32", [2 ** 40, 2 ** 40], b"")])
    files["nested-array.gguf"] = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pack_string("k") + struct.pack("<IIIQ", ARR, ARR, U8, 1)
    # The head of a real fixture: a prefix of header and tokenizer arrays.
    files["llama-q8_0-head.gguf"] = llama_q8[:6000]
    for name, data in files.items():
        with open(os.path.join(SEEDS, name), "wb") as f:
            f.write(data)
    print("seeds: %d files in %s" % (len(files), os.path.relpath(SEEDS, ROOT)))


def check_quantisers(driver):
    """The numpy quantisers against ggml's quantize_row_*_ref (built as `driver`), bit for bit, on
    Gaussian rows of several scales, rows with outliers, constant and all-zero blocks, ties."""
    rng = np.random.RandomState(11)
    cases = [rng.standard_normal(256 * 64) * s for s in (1e-4, 0.02, 1, 300)]
    cases.append(np.concatenate([rng.standard_normal(256 * 4), np.zeros(256), np.full(256, 0.5), np.full(256, -3.0)]))
    spiky = rng.standard_normal(256 * 16)
    spiky[::37] *= 50
    cases.append(spiky)
    cases.append(np.round(rng.standard_normal(256 * 16) * 4) / 4)  # many ties
    cases.append(np.abs(rng.standard_normal(256 * 16)) + 1)  # all positive (mins of 0)
    for k, kind in enumerate(["Q8_0", "Q4_0", "Q4_K"]):
        for i, x in enumerate(cases):
            x = x.astype(f32)
            ref = subprocess.run([driver, str(k)], input=x.tobytes(), capture_output=True, check=True).stdout
            mine = encode(x, kind)
            same = ref == mine
            print("%s case %d: %s" % (kind, i, "bit-exact" if same else "DIFFERENT"))
            if not same:
                a, b = np.frombuffer(ref, np.uint8), np.frombuffer(mine, np.uint8)
                bad = np.nonzero(a != b)[0]
                print("  %d bytes differ, first at %d" % (len(bad), bad[0]))
                sys.exit(1)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check-quantisers":
        check_quantisers(sys.argv[2])
        return
    os.makedirs(OUT, exist_ok=True)
    record = {"files": {}}
    blobs = {}
    for file_type in ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K"]:
        cfg, kvs, tensors = llama_file(file_type)
        name = "llama-%s.gguf" % file_type.lower()
        blobs[name], record["files"][name] = write(name, kvs, tensors)
    record["llama"] = dict(cfg, head_dim=cfg["hidden_size"] // cfg["num_attention_heads"], qk_permuted=True)
    record["llama"]["reference"] = reference(llama_forward, cfg, llama_state(cfg["vocab_size"])[1], LLAMA_PROMPT)
    # The same forward with each file's weights as stored (quantised and dequantised by ggml's
    # rules): what a reader that dequantises at load must compute, to float32 rounding.
    record["llama"]["asStored"] = {}
    for file_type in ["F16", "BF16", "Q8_0", "Q4_0", "Q4_K"]:
        sd = {k: torch.from_numpy(dequantize(encode(w.numpy(), stored_type("w", w.numpy(), file_type)),
                                             stored_type("w", w.numpy(), file_type), w.numel()).reshape(tuple(w.shape)).copy())
              for k, w in llama_state(cfg["vocab_size"])[1].items()}
        record["llama"]["asStored"]["llama-%s.gguf" % file_type.lower()] = reference(llama_forward, cfg, sd, LLAMA_PROMPT)
    cfg, kvs, tensors = gpt2_file()
    _, record["files"]["gpt2-f16.gguf"] = write("gpt2-f16.gguf", kvs, tensors)
    record["gpt2"] = dict(cfg, reference=reference(gpt2_forward, cfg, gpt2_state(cfg["vocab_size"])[1], GPT2_PROMPT))
    cfg, kvs, tensors = qwen2_file()
    _, record["files"]["qwen2-f32.gguf"] = write("qwen2-f32.gguf", kvs, tensors)
    record["qwen2"] = dict(cfg, reference=reference(llama_forward, cfg, qwen2_state(cfg["vocab_size"])[1], QWEN2_PROMPT))
    kvs, tensors = all_types_file()
    _, record["files"]["all-types.gguf"] = write("all-types.gguf", kvs, tensors, alignment=64)
    with open(os.path.join(OUT, "gguf.json"), "w") as f:
        json.dump(record, f, indent=1, ensure_ascii=False)
        f.write("\n")
    seeds(blobs["llama-q8_0.gguf"])


if __name__ == "__main__":
    main()

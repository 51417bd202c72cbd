"""What the family generators (tests/golden/families/<family>.py) share.

Each generator writes, per checkpoint `name`:
  tests/fixtures/families/<name>/config.json        (keys copied from a real Hub config of the family)
  tests/fixtures/families/<name>/model.safetensors  (float32, Hugging Face tensor names)
  tests/fixtures/families/<name>.json               (what PyTorch computed; see `case` below)
Run: /usr/bin/python3 tests/golden/families/<family>.py  (or tests/golden/gen_families.py for all).
No transformers here: each forward is written after the family's modeling_*.py (file and version
named in the case's "modeling" field), in plain torch.
"""
import json
import math
import os
import sys

import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from fixtures.common import f32list, i32list  # noqa: E402
from fixtures.formats import write_safetensors  # noqa: E402

OUT = os.path.normpath(os.path.join(HERE, "..", "..", "fixtures", "families"))
F = torch.nn.functional
NEG = torch.finfo(torch.float32).min

# The inputs every case uses unless it says otherwise: batch 2, length 7, the second row padded on
# the right (hidden states and attentions are compared on these), ids below 64.
IDS = torch.tensor([[2, 17, 33, 5, 60, 41, 3], [2, 9, 12, 48, 3, 0, 0]])
MASK = torch.tensor([[1] * 7, [1] * 5 + [0] * 2])


def rnd(g, *shape, sd=0.2):
    return sd * torch.randn(*shape, generator=g)


def save(name, config, tensors):
    """Writes the folder; returns the tensors as the model will read them (float32)."""
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    t = {k: v.detach().to(torch.float32).contiguous() for k, v in tensors.items()}
    write_safetensors(os.path.join(d, "model.safetensors"), t, {"format": "pt"})
    return t


def additive_mask(mask, causal, window=None, q_len=None, past=0, local=None):
    """[B, 1, Lq, Lk] additive mask as current transformers (>= 4.48) builds it for eager attention:
    key j visible to query i when mask[b, j] and (not causal or j <= i) and (no window or i - j < window)
    -- a sliding window of w covers w keys including the query itself -- and, for a bidirectional
    local window (ModernBERT's local_attention), |i - j| <= local // 2. Masked entries are finfo.min."""
    B, Lk = mask.shape
    Lq = q_len if q_len is not None else Lk - past
    i = torch.arange(Lq)[:, None] + past
    j = torch.arange(Lk)[None, :]
    ok = mask[:, None, None, :].bool().expand(B, 1, Lq, Lk)
    if causal:
        ok = ok & (j <= i)
    if window is not None:
        ok = ok & ((i - j) < window)
    if local is not None:
        ok = ok & ((i - j).abs() <= local // 2)
    return torch.zeros(B, 1, Lq, Lk).masked_fill(~ok, NEG)


def write_case(name, case):
    """case: {"family", "modeling", "dims", "inputIds", "attentionMask", ["tokenTypeIds"],
    "hiddenStates": [num_layers + 1 float lists, Hugging Face's output_hidden_states order],
    "attentions": [num_layers float lists [B, heads, L, L]],
    ["logits": {head name: float list}], ["startLogits", "endLogits"],
    ["greedy": {"dims": [B, L], "inputIds", "attentionMask" (left-padded), "newTokens": n,
                "sequences": [B * (L + n)] ints}]}"""
    os.makedirs(OUT, exist_ok=True)
    case = {"generator": "tests/golden/families/" + os.path.basename(sys.argv[0]), "torch": torch.__version__,
            "name": name, "dir": "families/" + name, **case}
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump(case, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path, os.path.getsize(path), "bytes")


def greedy(step, ids, mask, new):
    """Greedy decoding as transformers' generate does it for a left-padded batch, by re-running the
    whole prefix each step (no cache): step(ids, mask, position_ids) -> logits [B, L, V];
    position_ids = cumsum(mask) - 1 with 1 at padding. Returns the sequences [B, L + new]."""
    for _ in range(new):
        pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
        nxt = step(ids, mask, pos)[:, -1].argmax(-1)
        ids = torch.cat([ids, nxt[:, None]], 1)
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
    return ids


__all__ = ["F", "IDS", "MASK", "NEG", "OUT", "additive_mask", "f32list", "greedy", "i32list", "math", "rnd", "save",
           "torch", "write_case"]

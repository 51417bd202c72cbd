#!/usr/bin/python3
"""Golden fixtures for attnkit's tests, computed by real PyTorch.

Run with Debian's python (it has torch after `bash scripts/setup.sh --goldens`):

    /usr/bin/python3 tests/golden/gen_fixtures.py

Writes tests/fixtures/*.json. The fixtures are committed, so tests and CI never need torch.
Every float is a float32 value written as the shortest decimal that round-trips it.

Arguments name sections (default: all, in the order of SECTIONS). This file has the models'
sections (models, model_heads, generation, repo_folders); the others are in fixtures/: ops.py
(positional, embedding, attention, rotary, special_values), nn.py (embeddings, modules) and
formats.py (safetensors, safetensors_dtypes); fixtures/common.py has what they share.
"""
import json
import math
import os
import sys

import torch

sys.dont_write_bytecode = True  # no __pycache__ beside the sources in tests/golden/fixtures/

from fixtures.common import OUT, f32list, i32list, write  # noqa: E402
from fixtures.formats import read_safetensors, safetensors, safetensors_dtypes, write_safetensors  # noqa: E402
from fixtures.nn import embeddings, modules  # noqa: E402
from fixtures.ops import apply_rope, attention, embedding, positional, rotary, special_values  # noqa: E402

torch.manual_seed(0)


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


SECTIONS = [positional, embedding, embeddings, attention, rotary, modules, safetensors, safetensors_dtypes, models,
            model_heads, generation, repo_folders, special_values]

if __name__ == "__main__":
    by_name = {f.__name__: f for f in SECTIONS}
    for name in sys.argv[1:] or list(by_name):
        by_name[name]()

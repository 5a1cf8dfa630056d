"""Writes nn/tests/nn/functional_cells_and_attention_golden.rs: torch's functional recurrent steps (torch.lstm_cell,
gru_cell, rnn_tanh_cell, rnn_relu_cell) and F.multi_head_attention_forward (packed and separate
projections, bool and float masks, bias_k/bias_v, add_zero_attn, static_k/static_v, is_causal,
unbatched inputs, weights averaged or per head): outputs and the gradients of
sum_k (out_k * cot_k).sum() for every float input, in float64.

Run with a torch install: python nn/tests/make_functional_cells_and_attention_golden.py
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, rust_str, tensor_lit, tlist, write_golden  # noqa: E402

torch.manual_seed(32)
DT = torch.float64
cases = []


def rnd(*shape, scale=0.5):
    return (torch.randn(*shape, dtype=DT) * scale)


def add_case(name, inputs, fn, flags=None):
    """inputs: ordered (name, tensor); float tensors not named *_bool / static masks get grads."""
    leaves = {}
    for k, v in inputs:
        if v.dtype == DT and not k.startswith("attn_") and not k.startswith("kpm_"):
            v = v.clone().requires_grad_(True)
        leaves[k] = v
    outs = fn(leaves)
    outs = [o for o in outs if o is not None]
    cots = [torch.randn(o.shape, dtype=DT) for o in outs]
    loss = sum((o * c).sum() for o, c in zip(outs, cots))
    loss.backward()
    grads = [(k, v.grad if v.grad is not None else torch.zeros_like(v))
             for k, v in leaves.items() if v.dtype == DT and v.requires_grad]
    cases.append((name, inputs, outs, cots, grads, flags or {}))


# ---- recurrent cells ----
N, I, H = 3, 4, 5
for bias in (True, False):
    sfx = "" if bias else "_nobias"
    x, h, c = rnd(N, I, scale=1.0), rnd(N, H, scale=1.0), rnd(N, H, scale=1.0)
    for kind, gates in [("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)]:
        inputs = [("input", x), ("hx", h)] + ([("cx", c)] if kind == "lstm" else [])
        inputs += [("w_ih", rnd(gates * H, I)), ("w_hh", rnd(gates * H, H))]
        if bias:
            inputs += [("b_ih", rnd(gates * H)), ("b_hh", rnd(gates * H))]

        def fn(t, kind=kind):
            b = (t.get("b_ih"), t.get("b_hh"))
            if kind == "lstm":
                return list(torch.lstm_cell(t["input"], (t["hx"], t["cx"]), t["w_ih"], t["w_hh"], *b))
            f = {"gru": torch.gru_cell, "rnn_tanh": torch.rnn_tanh_cell, "rnn_relu": torch.rnn_relu_cell}[kind]
            return [f(t["input"], t["hx"], t["w_ih"], t["w_hh"], *b)]

        add_case(kind + sfx, inputs, fn)


# ---- multi_head_attention_forward ----
def mha_case(name, L=3, S=4, N=2, E=4, heads=2, kdim=None, vdim=None, sep=False, bias=True, bias_kv=False,
             zero_attn=False, kpm=None, attn=None, need_weights=True, average=True, unbatched=False,
             static=False, is_causal=False, training=True, dropout=0.0, self_attn=False):
    kdim = kdim or E
    vdim = vdim or E
    if unbatched:
        q = rnd(L, E, scale=1.0)
        k = q if self_attn else rnd(S, kdim, scale=1.0)
        v = q if self_attn else rnd(S, vdim, scale=1.0)
    else:
        q = rnd(L, N, E, scale=1.0)
        k = q if self_attn else rnd(S, N, kdim, scale=1.0)
        v = q if self_attn else rnd(S, N, vdim, scale=1.0)
    inputs = [("query", q)]
    if not self_attn:
        inputs += [("key", k), ("value", v)]
    if sep:
        inputs += [("q_proj_weight", rnd(E, E)), ("k_proj_weight", rnd(E, kdim)), ("v_proj_weight", rnd(E, vdim))]
    else:
        inputs += [("in_proj_weight", rnd(3 * E, E))]
    if bias:
        inputs += [("in_proj_bias", rnd(3 * E))]
    if bias_kv:
        inputs += [("bias_k", rnd(1, 1, E)), ("bias_v", rnd(1, 1, E))]
    inputs += [("out_proj_weight", rnd(E, E))]
    if bias:
        inputs += [("out_proj_bias", rnd(E))]
    nb = 1 if unbatched else N
    if static:
        inputs += [("static_k", rnd(nb * heads, S, E // heads)), ("static_v", rnd(nb * heads, S, E // heads))]
    if kpm is not None:
        inputs += [(f"kpm_{'bool' if kpm.dtype == torch.bool else 'float'}", kpm)]
    if attn is not None:
        inputs += [(f"attn_{'bool' if attn.dtype == torch.bool else 'float'}", attn)]
    flags = {"num_heads": heads, "add_zero_attn": zero_attn, "dropout_p": dropout, "training": training,
             "need_weights": need_weights, "average_attn_weights": average, "use_separate_proj_weight": sep,
             "is_causal": is_causal, "self_attn": self_attn}

    def fn(t):
        query = t["query"]
        key = query if self_attn else t["key"]
        value = query if self_attn else t["value"]
        kp = t.get("kpm_bool", t.get("kpm_float"))
        am = t.get("attn_bool", t.get("attn_float"))
        out, w = F.multi_head_attention_forward(
            query, key, value, E, heads, t.get("in_proj_weight"), t.get("in_proj_bias"), t.get("bias_k"),
            t.get("bias_v"), zero_attn, dropout, t["out_proj_weight"], t.get("out_proj_bias"), training=training,
            key_padding_mask=kp, need_weights=need_weights, attn_mask=am, use_separate_proj_weight=sep,
            q_proj_weight=t.get("q_proj_weight"), k_proj_weight=t.get("k_proj_weight"),
            v_proj_weight=t.get("v_proj_weight"), static_k=t.get("static_k"), static_v=t.get("static_v"),
            average_attn_weights=average, is_causal=is_causal)
        return [out, w]

    add_case(name, inputs, fn, flags)


L, S, N = 3, 4, 2
kpm_bool = torch.tensor([[False, False, True, False], [False, True, True, False]])
attn_bool = torch.tensor([[False, True, False, False], [False, False, False, True], [True, False, False, False]])
attn_float = rnd(L, S, scale=1.0)
causal = torch.triu(torch.full((L, L), float("-inf"), dtype=DT), 1)
mha_case("mha_basic")
mha_case("mha_self", self_attn=True, S=L)
mha_case("mha_per_head", average=False)
mha_case("mha_no_bias", bias=False)
mha_case("mha_sep_kvdim", sep=True, kdim=3, vdim=5)
mha_case("mha_kpm_bool", kpm=kpm_bool)
mha_case("mha_kpm_float", kpm=rnd(N, S, scale=1.0))
mha_case("mha_attn_bool", attn=attn_bool)
mha_case("mha_attn_float_3d", attn=rnd(N * 2, L, S, scale=1.0))
mha_case("mha_both_masks", kpm=kpm_bool, attn=attn_float)
mha_case("mha_bias_kv", bias_kv=True, kpm=kpm_bool, attn=attn_bool)
mha_case("mha_zero_attn", zero_attn=True, kpm=kpm_bool, attn=attn_float)
mha_case("mha_bias_kv_zero_attn", bias_kv=True, zero_attn=True, average=False)
mha_case("mha_static", static=True, kpm=kpm_bool)
mha_case("mha_unbatched", unbatched=True, kpm=torch.tensor([False, True, False, False]), attn=attn_float)
mha_case("mha_unbatched_3d_mask", unbatched=True, attn=rnd(2, L, S, scale=1.0), average=False)
mha_case("mha_no_weights", need_weights=False, kpm=kpm_bool, attn=attn_float)
mha_case("mha_no_weights_unbatched", need_weights=False, unbatched=True)
mha_case("mha_causal_no_weights", need_weights=False, is_causal=True, attn=causal, S=L)
mha_case("mha_causal_weights", is_causal=True, attn=causal, S=L)
mha_case("mha_eval_dropout", training=False, dropout=0.5, heads=1)
mha_case("mha_four_heads", E=8, heads=4, bias_kv=True, kpm=kpm_bool)

lines = [generated_header("make_functional_cells_and_attention_golden.py"), ""]
lines.append("const CASES: &[Case] = &[")
for name, inputs, outs, cots, grads, flags in cases:
    ins = "&[" + ", ".join(f"({rust_str(k)}, {tensor_lit(v)})" for k, v in inputs) + "]"
    fl = "&[" + ", ".join(f"({rust_str(k)}, {lit(float(v))})" for k, v in flags.items()) + "]"
    gr = "&[" + ", ".join(f"({rust_str(k)}, {tensor_lit(v)})" for k, v in grads) + "]"
    lines.append(f"    Case {{ name: {rust_str(name)}, inputs: {ins}, flags: {fl}, outs: {tlist(outs)}, "
                 f"cots: {tlist(cots)}, grads: {gr} }},")
lines.append("];")
print(write_golden("functional_cells_and_attention_golden.rs", lines))

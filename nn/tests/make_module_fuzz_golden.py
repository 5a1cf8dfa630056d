"""Writes nn/tests/nn/module_fuzz_golden.rs: a randomized (fixed-seed) parity sweep of torch's nn
modules (recurrent layers and cells, MultiheadAttention, the Transformer layers, convolutions,
the normalisations, embeddings, Bilinear, PReLU, Upsample, AdaptiveLogSoftmaxWithLoss), replayed
by nn/tests/nn/module_fuzz.rs.

Each case builds a module with random options, re-draws every parameter and buffer from a seeded
generator (dyadic values, exact in float64), and records: the module and its options (a
`k=v;k=v` string the replay parses), torch's state dict (keys in order, shapes, values), the
inputs (float ones differentiated; integer and boolean ones as whole floats), torch's outputs, one
random cotangent per output, the gradients of `sum_k (out_k * cot_k).sum()` w.r.t. the float
inputs and every parameter (by state-dict key; zeros where torch leaves it unset), and the state
dict after the forward passes (running statistics, `num_batches_tracked`, renormalised embedding
rows). Normalisation layers with running statistics run once in training mode then once in eval
mode (two outputs); every other module runs in eval mode (dropout 0). When torch raises (at
construction or in forward), the case records its message instead.

Run: /work/.refenv/bin/python nn/tests/make_module_fuzz_golden.py
"""

import os
import random
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, rust_str, tensor_lit, write_golden  # noqa: E402

SEED = 3333
rng = random.Random(SEED)
GEN = torch.Generator().manual_seed(SEED)
DT = torch.float64
torch.set_default_dtype(DT)


def dy(shape, scale=1.0, lo=None):
    """Dyadic random values (multiples of 1/256)."""
    x = torch.randn(shape, generator=GEN, dtype=DT) * scale
    if lo is not None:
        x = x.abs() + lo
    return (x * 256).round().div(256)


def fmt(v):
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(fmt(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def redraw(m):
    """Re-draws every parameter and float buffer (running variances positive, counters small)."""
    with torch.no_grad():
        for k, p in m.named_parameters():
            p.copy_(dy(p.shape, 0.5))
        for k, b in m.named_buffers():
            if b.dtype == torch.int64:
                b.fill_(rng.randint(0, 4))
            elif k.endswith("running_var"):
                b.copy_(dy(b.shape, 0.5, lo=0.25))
            else:
                b.copy_(dy(b.shape, 0.5))


def bool_mask(shape, keep_first=True):
    """A random boolean mask (true = masked), the last dim's first entry never masked."""
    m = torch.rand(shape, generator=GEN) < 0.3
    if keep_first:
        m[..., 0] = False
    return m


def float_mask(shape):
    return dy(shape, 1.0)


def mask(kind, shape):
    if kind == "bool":
        return bool_mask(shape)
    if kind == "float":
        return float_mask(shape)
    return None


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


# ---------------------------------------------------------------------------------------------
# Case generators: each returns (module_name, params dict, build, floats, aux, run, two_phase).
# `build()` makes the module; `floats` are the differentiated inputs, `aux` the others
# (name -> (tensor, kind) with kind "int", "bool" or "float"); `run(m, inputs)` returns outputs.
# ---------------------------------------------------------------------------------------------


def gen_rnn():
    mode = rng.choice(["LSTM", "GRU", "RNN"])
    I, H = rng.randint(1, 4), rng.randint(1, 4)
    L = rng.choice([1, 1, 2, 3])
    bias, bf, bi = rng.random() < 0.8, rng.random() < 0.5, rng.random() < 0.5
    proj = rng.choice([0, 0, 1, 2, 3]) if mode == "LSTM" else (1 if rng.random() < 0.05 else 0)
    nl = rng.choice(["tanh", "relu"]) if mode == "RNN" else "tanh"
    hx, unb = rng.random() < 0.6, rng.random() < 0.25
    T, N = rng.randint(1, 4), rng.randint(1, 3)
    D = 2 if bi else 1
    P = dict(mode=mode, I=I, H=H, L=L, bias=bias, bf=bf, bi=bi, proj=proj, nl=nl, hx=hx, unb=unb)

    def build():
        kw = dict(num_layers=L, bias=bias, batch_first=bf, dropout=0.0, bidirectional=bi)
        if mode == "LSTM":
            return nn.LSTM(I, H, proj_size=proj, **kw)
        if mode == "GRU":
            return nn.GRU(I, H, proj_size=proj, **kw) if proj else nn.GRU(I, H, **kw)
        return nn.RNN(I, H, nonlinearity=nl, proj_size=proj, **kw) if proj else nn.RNN(I, H, nonlinearity=nl, **kw)

    if unb:
        x = dy((T, I))
    else:
        x = dy((N, T, I)) if bf else dy((T, N, I))
    floats = {"x": x}
    hr = proj if proj else H
    if hx:
        hs = (L * D, hr) if unb else (L * D, N, hr)
        floats["h0"] = dy(hs, 0.5)
        if mode == "LSTM":
            cs = (L * D, H) if unb else (L * D, N, H)
            floats["c0"] = dy(cs, 0.5)

    def run(m, f, a):
        if mode == "LSTM":
            out, (h, c) = m(f["x"], (f["h0"], f["c0"]) if hx else None)
            return [out, h, c]
        out, h = m(f["x"], f["h0"] if hx else None)
        return [out, h]

    return mode, P, build, floats, {}, run, False


def gen_cell():
    mode = rng.choice(["LSTMCell", "GRUCell", "RNNCell"])
    I, H = rng.randint(1, 4), rng.randint(1, 4)
    bias = rng.random() < 0.8
    nl = rng.choice(["tanh", "relu"]) if mode == "RNNCell" else "tanh"
    hx, unb = rng.random() < 0.6, rng.random() < 0.25
    N = rng.randint(1, 3)
    P = dict(mode=mode, I=I, H=H, bias=bias, nl=nl, hx=hx, unb=unb)

    def build():
        if mode == "LSTMCell":
            return nn.LSTMCell(I, H, bias=bias)
        if mode == "GRUCell":
            return nn.GRUCell(I, H, bias=bias)
        return nn.RNNCell(I, H, bias=bias, nonlinearity=nl)

    floats = {"x": dy((I,) if unb else (N, I))}
    if hx:
        floats["h0"] = dy((H,) if unb else (N, H), 0.5)
        if mode == "LSTMCell":
            floats["c0"] = dy((H,) if unb else (N, H), 0.5)

    def run(m, f, a):
        if mode == "LSTMCell":
            h, c = m(f["x"], (f["h0"], f["c0"]) if hx else None)
            return [h, c]
        return [m(f["x"], f["h0"] if hx else None)]

    return mode, P, build, floats, {}, run, False


def gen_mha():
    E = rng.choice([2, 4, 6, 8])
    nh = rng.choice([h for h in (1, 2, 3, 4) if E % h == 0]) if rng.random() < 0.85 else rng.choice([3, 4])
    kdim = rng.choice([None, None, 3, 5])
    vdim = rng.choice([None, None, 2, 4])
    bias, bkv, zattn = rng.random() < 0.8, rng.random() < 0.3, rng.random() < 0.3
    bf, unb = rng.random() < 0.5, rng.random() < 0.2
    kpm = rng.choice(["none", "none", "bool", "float"])
    am = rng.choice(["none", "none", "bool2", "float2", "bool3", "float3"])
    nw, avg = rng.random() < 0.7, rng.random() < 0.5
    L, S, N = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3)
    P = dict(E=E, nh=nh, kdim=kdim, vdim=vdim, bias=bias, bkv=bkv, zattn=zattn, bf=bf, unb=unb, kpm=kpm, am=am,
             nw=nw, avg=avg)
    kd, vd = kdim or E, vdim or E

    def shp(Lq, d):
        if unb:
            return (Lq, d)
        return (N, Lq, d) if bf else (Lq, N, d)

    floats = {"query": dy(shp(L, E)), "key": dy(shp(S, kd)), "value": dy(shp(S, vd))}
    aux = {}
    if kpm != "none":
        aux["key_padding_mask"] = (mask(kpm, (S,) if unb else (N, S)), kpm)
    if am != "none":
        shape = (L, S) if am.endswith("2") else ((nh if unb else N * nh), L, S)
        aux["attn_mask"] = (mask(am[:-1], shape), am[:-1])

    def build():
        return nn.MultiheadAttention(E, nh, dropout=0.0, bias=bias, add_bias_kv=bkv, add_zero_attn=zattn,
                                     kdim=kdim, vdim=vdim, batch_first=bf)

    def run(m, f, a):
        out, w = m(f["query"], f["key"], f["value"], key_padding_mask=a.get("key_padding_mask"),
                   need_weights=nw, attn_mask=a.get("attn_mask"), average_attn_weights=avg)
        return [out] + ([w] if nw else [])

    return "MultiheadAttention", P, build, floats, aux, run, False


def layer_opts():
    return dict(
        d=rng.choice([4, 6, 8]), nh=rng.choice([1, 2, 2, 4]), ff=rng.randint(2, 8), nf=rng.random() < 0.5,
        act=rng.choice(["relu", "gelu"]), bf=rng.random() < 0.5, eps=rng.choice([1e-5, 1e-3, 0.5]),
        bias=rng.random() < 0.8)


def gen_enc():
    P = layer_opts()
    unb = rng.random() < 0.15
    P["unb"] = unb
    P["sm"] = rng.choice(["none", "bool", "float", "causal"])
    P["kpm"] = rng.choice(["none", "bool", "float"])
    L, N = rng.randint(1, 4), rng.randint(1, 3)
    d = P["d"]
    src = dy((L, d) if unb else ((N, L, d) if P["bf"] else (L, N, d)))
    aux = {}
    if P["sm"] == "causal":
        aux["src_mask"] = (causal(L), "float")
    elif P["sm"] != "none":
        aux["src_mask"] = (mask(P["sm"], (L, L)), P["sm"])
    if P["kpm"] != "none":
        aux["src_key_padding_mask"] = (mask(P["kpm"], (L,) if unb else (N, L)), P["kpm"])

    def build():
        return nn.TransformerEncoderLayer(d, P["nh"], dim_feedforward=P["ff"], dropout=0.0, activation=P["act"],
                                          layer_norm_eps=P["eps"], batch_first=P["bf"], norm_first=P["nf"],
                                          bias=P["bias"])

    def run(m, f, a):
        return [m(f["src"], src_mask=a.get("src_mask"), src_key_padding_mask=a.get("src_key_padding_mask"))]

    return "TransformerEncoderLayer", P, build, {"src": src}, aux, run, False


def gen_dec():
    P = layer_opts()
    P["tm"] = rng.choice(["none", "bool", "float", "causal"])
    P["mm"] = rng.choice(["none", "none", "bool", "float"])
    P["tkpm"] = rng.choice(["none", "bool", "float"])
    P["mkpm"] = rng.choice(["none", "bool", "float"])
    T, S, N = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3)
    d = P["d"]

    def shp(n):
        return (N, n, d) if P["bf"] else (n, N, d)

    aux = {}
    if P["tm"] == "causal":
        aux["tgt_mask"] = (causal(T), "float")
    elif P["tm"] != "none":
        aux["tgt_mask"] = (mask(P["tm"], (T, T)), P["tm"])
    if P["mm"] != "none":
        aux["memory_mask"] = (mask(P["mm"], (T, S)), P["mm"])
    if P["tkpm"] != "none":
        aux["tgt_key_padding_mask"] = (mask(P["tkpm"], (N, T)), P["tkpm"])
    if P["mkpm"] != "none":
        aux["memory_key_padding_mask"] = (mask(P["mkpm"], (N, S)), P["mkpm"])

    def build():
        return nn.TransformerDecoderLayer(d, P["nh"], dim_feedforward=P["ff"], dropout=0.0, activation=P["act"],
                                          layer_norm_eps=P["eps"], batch_first=P["bf"], norm_first=P["nf"],
                                          bias=P["bias"])

    def run(m, f, a):
        return [m(f["tgt"], f["memory"], **{k: v for k, v in a.items()})]

    return "TransformerDecoderLayer", P, build, {"tgt": dy(shp(T)), "memory": dy(shp(S))}, aux, run, False


def gen_transformer():
    P = layer_opts()
    P["ne"], P["nd"] = rng.randint(1, 2), rng.randint(1, 2)
    P["causal"] = rng.random() < 0.5
    P["skpm"] = rng.random() < 0.3
    S, T, N = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2)
    d = P["d"]

    def shp(n):
        return (N, n, d) if P["bf"] else (n, N, d)

    aux = {}
    if P["causal"]:
        aux["tgt_mask"] = (causal(T), "float")
    if P["skpm"]:
        aux["src_key_padding_mask"] = (bool_mask((N, S)), "bool")
        aux["memory_key_padding_mask"] = (aux["src_key_padding_mask"][0].clone(), "bool")

    def build():
        return nn.Transformer(d_model=d, nhead=P["nh"], num_encoder_layers=P["ne"], num_decoder_layers=P["nd"],
                              dim_feedforward=P["ff"], dropout=0.0, activation=P["act"], layer_norm_eps=P["eps"],
                              batch_first=P["bf"], norm_first=P["nf"], bias=P["bias"])

    def run(m, f, a):
        return [m(f["src"], f["tgt"], **a)]

    return "Transformer", P, build, {"src": dy(shp(S)), "tgt": dy(shp(T))}, aux, run, False


def gen_conv():
    nd = rng.choice([1, 2, 3])
    g = rng.choice([1, 1, 2])
    cin, cout = g * rng.randint(1, 2), g * rng.randint(1, 3)
    k = [rng.randint(1, 3) for _ in range(nd)]
    stride = [rng.choice([1, 1, 2]) for _ in range(nd)]
    dil = [rng.choice([1, 1, 2]) for _ in range(nd)]
    pad = rng.choice(["int", "int", "same", "valid"])
    padv = [rng.randint(0, 2) for _ in range(nd)]
    pm = rng.choice(["zeros", "reflect", "replicate", "circular"])
    bias = rng.random() < 0.7
    N = rng.randint(1, 2)
    sp = [rng.randint(3, 6) for _ in range(nd)]
    unb = rng.random() < 0.15
    P = dict(nd=nd, cin=cin, cout=cout, k=k, stride=stride, dil=dil, pad=pad, padv=padv, pm=pm, bias=bias, g=g, unb=unb)
    cls = [nn.Conv1d, nn.Conv2d, nn.Conv3d][nd - 1]

    def build():
        p = padv if pad == "int" else pad
        return cls(cin, cout, k, stride=stride, padding=p, dilation=dil, groups=g, bias=bias, padding_mode=pm)

    x = dy(([cin] if unb else [N, cin]) + sp)
    return f"Conv{nd}d", P, build, {"x": x}, {}, lambda m, f, a: [m(f["x"])], False


def gen_convt():
    nd = rng.choice([1, 2])
    g = rng.choice([1, 1, 2])
    cin, cout = g * rng.randint(1, 2), g * rng.randint(1, 3)
    k = [rng.randint(1, 3) for _ in range(nd)]
    stride = [rng.choice([1, 2, 3]) for _ in range(nd)]
    dil = [rng.choice([1, 1, 2]) for _ in range(nd)]
    padv = [rng.randint(0, 1) for _ in range(nd)]
    op = [rng.randint(0, 1) for _ in range(nd)]
    bias = rng.random() < 0.7
    N = rng.randint(1, 2)
    sp = [rng.randint(2, 4) for _ in range(nd)]
    P = dict(nd=nd, cin=cin, cout=cout, k=k, stride=stride, dil=dil, padv=padv, op=op, bias=bias, g=g)
    cls = [nn.ConvTranspose1d, nn.ConvTranspose2d][nd - 1]

    def build():
        return cls(cin, cout, k, stride=stride, padding=padv, output_padding=op, groups=g, bias=bias, dilation=dil)

    x = dy([N, cin] + sp)
    return f"ConvTranspose{nd}d", P, build, {"x": x}, {}, lambda m, f, a: [m(f["x"])], False


def gen_bn():
    nd = rng.choice([1, 2])
    C = rng.randint(1, 4)
    eps = rng.choice([1e-5, 1e-3, 0.1])
    mom = rng.choice([0.1, 0.3, None])
    affine, track = rng.random() < 0.7, rng.random() < 0.7
    N = rng.randint(2, 3)
    if nd == 1:
        shape = [N, C] if rng.random() < 0.5 else [N, C, rng.randint(1, 3)]
    else:
        shape = [N, C, rng.randint(1, 3), rng.randint(1, 3)]
    P = dict(nd=nd, C=C, eps=eps, mom=mom, affine=affine, track=track)
    cls = [nn.BatchNorm1d, nn.BatchNorm2d][nd - 1]

    def build():
        return cls(C, eps=eps, momentum=mom, affine=affine, track_running_stats=track)

    return f"BatchNorm{nd}d", P, build, {"x": dy(shape)}, {}, lambda m, f, a: [m(f["x"])], True


def gen_in():
    nd = rng.choice([1, 2])
    C = rng.randint(1, 4)
    eps = rng.choice([1e-5, 1e-3, 0.1])
    mom = rng.choice([0.1, 0.3, None])
    affine, track = rng.random() < 0.5, rng.random() < 0.5
    bias = rng.random() < 0.8
    unb = rng.random() < 0.2
    N = rng.randint(1, 3)
    sp = [rng.randint(2, 4) for _ in range(nd)]
    P = dict(nd=nd, C=C, eps=eps, mom=mom, affine=affine, track=track, bias=bias)
    cls = [nn.InstanceNorm1d, nn.InstanceNorm2d][nd - 1]

    def build():
        return cls(C, eps=eps, momentum=mom, affine=affine, track_running_stats=track, bias=bias)

    x = dy(([C] if unb else [N, C]) + sp)
    return f"InstanceNorm{nd}d", P, build, {"x": x}, {}, lambda m, f, a: [m(f["x"])], True


def gen_gn():
    G = rng.choice([1, 2, 3])
    C = G * rng.randint(1, 3) if rng.random() < 0.9 else G * 2 + 1
    eps = rng.choice([1e-5, 0.1])
    affine, bias = rng.random() < 0.7, rng.random() < 0.8
    shape = [rng.randint(1, 3), C] + [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    P = dict(G=G, C=C, eps=eps, affine=affine, bias=bias)
    return "GroupNorm", P, lambda: nn.GroupNorm(G, C, eps=eps, affine=affine, bias=bias), {"x": dy(shape)}, {}, \
        lambda m, f, a: [m(f["x"])], False


def gen_ln():
    ns = [rng.randint(1, 4) for _ in range(rng.randint(1, 2))]
    eps = rng.choice([1e-5, 0.1])
    ea, bias = rng.random() < 0.7, rng.random() < 0.7
    shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))] + ns
    P = dict(ns=ns, eps=eps, ea=ea, bias=bias)
    return "LayerNorm", P, lambda: nn.LayerNorm(ns, eps=eps, elementwise_affine=ea, bias=bias), {"x": dy(shape)}, {}, \
        lambda m, f, a: [m(f["x"])], False


def gen_rms():
    ns = [rng.randint(1, 4) for _ in range(rng.randint(1, 2))]
    eps = rng.choice([None, 1e-5, 0.1])
    ea = rng.random() < 0.7
    shape = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))] + ns
    P = dict(ns=ns, eps=eps, ea=ea)
    return "RMSNorm", P, lambda: nn.RMSNorm(ns, eps=eps, elementwise_affine=ea), {"x": dy(shape)}, {}, \
        lambda m, f, a: [m(f["x"])], False


def gen_emb():
    num, dim = rng.randint(2, 6), rng.randint(1, 4)
    pidx = rng.choice([None, None, 0, 1, -1])
    mn = rng.choice([None, None, 0.5, 1.0])
    nt = rng.choice([2.0, 1.0, 3.0])
    sgf = rng.random() < 0.4
    shape = [rng.randint(1, 5)] + ([rng.randint(1, 3)] if rng.random() < 0.5 else [])
    idx = torch.randint(0, num, shape, generator=GEN)
    P = dict(num=num, dim=dim, pidx=pidx, mn=mn, nt=nt, sgf=sgf)

    def build():
        return nn.Embedding(num, dim, padding_idx=pidx, max_norm=mn, norm_type=nt, scale_grad_by_freq=sgf)

    return "Embedding", P, build, {}, {"input": (idx, "int")}, lambda m, f, a: [m(a["input"])], False


def gen_bag():
    num, dim = rng.randint(2, 6), rng.randint(1, 4)
    mode = rng.choice(["sum", "mean", "max"])
    pidx = rng.choice([None, None, 0, 1])
    mn = rng.choice([None, None, 1.0])
    ilo = rng.random() < 0.3
    two_d = rng.random() < 0.4
    psw = mode == "sum" and rng.random() < 0.5
    P = dict(num=num, dim=dim, mode=mode, pidx=pidx, mn=mn, ilo=ilo, two_d=two_d, psw=psw)
    aux = {}
    if two_d:
        B, n = rng.randint(1, 3), rng.randint(1, 3)
        idx = torch.randint(0, num, (B, n), generator=GEN)
        P["ilo"] = ilo = False
    else:
        n = rng.randint(1, 6)
        idx = torch.randint(0, num, (n,), generator=GEN)
        nb = rng.randint(1, 3)
        offs = sorted([0] + [rng.randint(0, n) for _ in range(nb - 1)])
        if ilo:
            offs.append(n)
        aux["offsets"] = (torch.tensor(offs), "int")
    aux["input"] = (idx, "int")
    floats = {"per_sample_weights": dy(idx.shape)} if psw else {}

    def build():
        return nn.EmbeddingBag(num, dim, max_norm=mn, mode=mode, include_last_offset=ilo, padding_idx=pidx)

    def run(m, f, a):
        return [m(a["input"], a.get("offsets"), per_sample_weights=f.get("per_sample_weights"))]

    return "EmbeddingBag", P, build, floats, aux, run, False


def gen_bil():
    i1, i2, o = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
    bias = rng.random() < 0.7
    lead = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    P = dict(i1=i1, i2=i2, o=o, bias=bias)
    return "Bilinear", P, lambda: nn.Bilinear(i1, i2, o, bias=bias), \
        {"x1": dy(lead + [i1]), "x2": dy(lead + [i2])}, {}, lambda m, f, a: [m(f["x1"], f["x2"])], False


def gen_prelu():
    C = rng.randint(1, 4)
    npar = rng.choice([1, C, C, 3])
    init = rng.choice([0.25, 0.5])
    shape = [rng.randint(1, 2), C] + [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.15:
        shape = [rng.randint(1, 4)]
    P = dict(npar=npar, init=init)
    return "PReLU", P, lambda: nn.PReLU(npar, init), {"x": dy(shape)}, {}, lambda m, f, a: [m(f["x"])], False


def gen_up():
    mode = rng.choice(["nearest", "linear", "bilinear", "bicubic", "trilinear", "nearest-exact"])
    nd = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode, rng.randint(1, 3))
    ac = None if mode.startswith("nearest") else rng.choice([None, True, False])
    use_size = rng.random() < 0.5
    size = [rng.randint(1, 5) for _ in range(nd)] if use_size else None
    sf = None if use_size else tuple(rng.choice([0.5, 1.5, 2.0, 3.0]) for _ in range(nd))
    shape = [1, rng.randint(1, 2)] + [rng.randint(2, 4) for _ in range(nd)]
    P = dict(mode=mode, ac=ac, size=size, sf=sf)
    return "Upsample", P, lambda: nn.Upsample(size=size, scale_factor=sf, mode=mode, align_corners=ac), \
        {"x": dy(shape)}, {}, lambda m, f, a: [m(f["x"])], False


def gen_asm():
    inf = rng.randint(2, 6)
    ncls = rng.randint(3, 8)
    k = rng.randint(1, min(3, ncls - 1))
    cut = sorted(rng.sample(range(1, ncls), k))
    if rng.random() < 0.1:
        cut = cut + [ncls]
    dv = rng.choice([2.0, 4.0, 1.5])
    hb = rng.random() < 0.5
    N = rng.randint(1, 4)
    tgt = torch.randint(0, ncls, (N,), generator=GEN)
    P = dict(inf=inf, ncls=ncls, cut=cut, dv=dv, hb=hb)

    def run(m, f, a):
        out, loss = m(f["x"], a["target"])
        return [out, loss, m.log_prob(f["x"])]

    return "AdaptiveLogSoftmaxWithLoss", P, \
        lambda: nn.AdaptiveLogSoftmaxWithLoss(inf, ncls, cut, div_value=dv, head_bias=hb), \
        {"x": dy((N, inf))}, {"target": (tgt, "int")}, run, False


GENS = [
    (gen_rnn, 26), (gen_cell, 10), (gen_mha, 22), (gen_enc, 10), (gen_dec, 8), (gen_transformer, 4),
    (gen_conv, 12), (gen_convt, 6), (gen_bn, 10), (gen_in, 8), (gen_gn, 5), (gen_ln, 6), (gen_rms, 5),
    (gen_emb, 8), (gen_bag, 8), (gen_bil, 4), (gen_prelu, 5), (gen_up, 8), (gen_asm, 5),
]


def named(pairs):
    return "&[" + ", ".join(f"({rust_str(k)}, {tensor_lit(v)})" for k, v in pairs) + "]"


def state(m):
    return [(k, v.detach().clone()) for k, v in m.state_dict().items()]


def make(cid, g):
    name, P, build, floats, aux, run, two_phase = g()
    params = ";".join(f"{k}={fmt(v)}" for k, v in P.items())
    f = {k: v.clone().requires_grad_(True) for k, v in floats.items()}
    a = {k: v for k, (v, _) in aux.items()}
    ints = [(k, v) for k, (v, kind) in aux.items() if kind in ("int", "bool")]
    fl_aux = [(k, v) for k, (v, kind) in aux.items() if kind == "float"]
    head = (f"    Case {{ id: {cid}, module: {rust_str(name)}, params: {rust_str(params)}, "
            f"floats: {named(floats.items())}, ints: {named(ints)}, masks: {named(fl_aux)}, ")
    sd, err = [], None
    try:
        torch.manual_seed(SEED + cid)
        m = build()
        redraw(m)
        sd = state(m)
        if two_phase:
            m.train()
            o1 = run(m, f, a)
            m.eval()
            outs = o1 + run(m, f, a)
        else:
            m.eval()
            outs = run(m, f, a)
    except Exception as e:  # torch raised: the replay must fail too
        err = str(e).split("\n")[0]
    if err is not None:
        return head + (f"state: {named(sd)}, outs: &[], cots: &[], input_grads: &[], param_grads: &[], "
                       f"after: &[], err: Some({rust_str(err)}) }},")
    cots = [dy(o.shape) for o in outs]
    sum((o * c).sum() for o, c in zip(outs, cots)).backward()
    pg = []
    params_by_name = dict(m.named_parameters())
    for k, _ in sd:
        if k in params_by_name:
            p = params_by_name[k]
            pg.append((k, p.grad if p.grad is not None else torch.zeros_like(p)))
    ig = [(k, v.grad if v.grad is not None else torch.zeros_like(v)) for k, v in f.items()]
    tl = "&[" + ", ".join(tensor_lit(o) for o in outs) + "]"
    cl = "&[" + ", ".join(tensor_lit(c) for c in cots) + "]"
    return head + (f"state: {named(sd)}, outs: {tl}, cots: {cl}, input_grads: {named(ig)}, "
                   f"param_grads: {named(pg)}, after: {named(state(m))}, err: None }},")


lines = [generated_header("make_module_fuzz_golden.py"), "const CASES: &[Case] = &["]
cid = 0
for g, n in GENS:
    for _ in range(n):
        line = make(cid, g)
        lines.append(line)
        cid += 1
lines.append("];")
path = write_golden("module_fuzz_golden.rs", lines)
print(path, cid, "cases", os.path.getsize(path), "bytes")
print(sum(1 for ln in lines if "err: Some" in ln), "torch errors")
for ln in lines:
    if "err: Some" in ln:
        print("  ", ln[ln.index("module:"):ln.index(", floats")], ln[ln.index("err: Some"):][:150])

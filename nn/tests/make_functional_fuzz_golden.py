"""Writes nn/tests/nn/functional_fuzz_golden.rs: a randomized (fixed-seed) parity sweep of torch's
nn.functional and conv layers, replayed by nn/tests/nn/functional_fuzz.rs.

Each case records its op, its parameters (a `k=v;k=v` string the replay parses), its inputs
(float ones in the case's dtype, integer and boolean ones as whole floats), torch's outputs, one
random cotangent per float output, and the gradients of `sum_k (out_k * cot_k).sum()` w.r.t. the
differentiated inputs (zeros where torch leaves a gradient unset); or, when torch raises, its
message. Inputs are dyadic (multiples of 1/1024) so that they are exact in float32 and short in
the file. An input listed in `tr=` is stored transposed (its last two dims swapped): the op sees
`stored.transpose(-1, -2)`, a non-contiguous view, and the gradient is the stored leaf's.

Run: /work/.refenv/bin/python nn/tests/make_functional_fuzz_golden.py
"""

import os
import math
import random
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, rust_str, tensor_lit, write_golden  # noqa: E402

SEED = 3300
rng = random.Random(SEED)
torch.manual_seed(SEED)
GEN = torch.Generator().manual_seed(SEED)


def dy(shape, dtype, scale=1.0, lo=None):
    """Dyadic random values (multiples of 1/1024), exact in float32."""
    x = torch.randn(shape, generator=GEN, dtype=torch.float64) * scale
    if lo is not None:
        x = x.abs() + lo
    return (x * 1024).round().div(1024).to(dtype)


def distinct(shape, dtype):
    """Distinct dyadic values (no ties, so that max picks are unambiguous)."""
    n = 1
    for d in shape:
        n *= d
    perm = torch.randperm(n, generator=GEN).to(torch.float64)
    return ((perm - n / 2) / 16.0).reshape(shape).to(dtype)


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


CASES = []


def case(op, params, dtype, floats, ints=(), grads=(), tr=(), run=None):
    """Runs `run(env)` on the inputs and records the case.

    floats: (name, tensor) in the case dtype; ints: (name, tensor) integer/bool; grads: names of
    floats to differentiate; tr: names of floats stored transposed.
    """
    params = dict(params)
    if tr:
        params["tr"] = list(tr)
    leaves = {}
    env = {}
    for k, t in floats:
        leaf = t.detach().clone().requires_grad_(k in grads)
        leaves[k] = leaf
        env[k] = leaf.transpose(-1, -2) if k in tr else leaf
    for k, t in ints:
        env[k] = t
    rec = {
        "id": len(CASES),
        "op": op,
        "params": ";".join(f"{k}={fmt(v)}" for k, v in params.items()),
        "f32": dtype == torch.float32,
        "floats": [(k, t) for k, t in floats],
        "ints": [(k, t) for k, t in ints],
        "outs": [],
        "cots": [],
        "grads": [],
        "err": None,
    }
    try:
        outs = run(env)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        loss = None
        cots = []
        for o in outs:
            if o.dtype.is_floating_point and o.requires_grad:
                c = dy(o.shape, o.dtype)
                cots.append(c)
                term = (o * c).sum()
                loss = term if loss is None else loss + term
        gl = []
        if loss is not None and grads:
            gs = torch.autograd.grad(loss, [leaves[k] for k in grads], allow_unused=True)
            for k, g in zip(grads, gs):
                gl.append((k, torch.zeros_like(leaves[k]) if g is None else g))
        rec["outs"] = [o.detach() for o in outs]
        rec["cots"] = cots
        rec["grads"] = gl
    except Exception as e:  # torch raised: the replay must fail too
        msg = str(e).split("\n")[0]
        rec["err"] = msg[:300]
        rec["outs"], rec["cots"], rec["grads"] = [], [], []
    CASES.append(rec)


def pick(xs):
    return rng.choice(xs)


def dt():
    return pick([torch.float32, torch.float64])


RED = ["none", "sum", "mean"]


# ---- convolutions -------------------------------------------------------------------------------
def gen_conv(nd):
    dtype = dt()
    g = pick([1, 1, 2, 3])
    cin = g * pick([1, 2])
    cout = g * pick([1, 2])
    k = [pick([1, 2, 3]) for _ in range(nd)]
    sp = {1: [pick([5, 6, 7, 8])], 2: [pick([4, 5, 6]), pick([4, 5, 7])], 3: [pick([3, 4]), pick([3, 4, 5]), 4]}[nd]
    n = pick([1, 2])
    stride = [pick([1, 1, 2, 3]) for _ in range(nd)]
    dil = [pick([1, 1, 2]) for _ in range(nd)]
    pmode = pick(["zeros", "zeros", "reflect", "replicate", "circular"])
    padding = pick(["same", "valid", "list", "list", "int"])
    if padding == "list":
        padding = [pick([0, 1, 2]) for _ in range(nd)]
    elif padding == "int":
        padding = [pick([0, 1])]
    if padding == "same" and rng.random() < 0.7:
        stride = [1] * nd
    bias = rng.random() < 0.7
    x = dy([n, cin] + sp, dtype)
    w = dy([cout, cin // g] + k, dtype, 0.5)
    b = dy([cout], dtype)
    tr = ["x"] if nd >= 2 and rng.random() < 0.3 else []
    if tr:
        x = x.transpose(-1, -2).contiguous()
    floats = [("x", x), ("w", w)] + ([("b", b)] if bias else [])
    grads = [f for f, _ in floats]
    params = dict(nd=nd, stride=stride, padding=padding, dilation=dil, groups=g, padding_mode=pmode, bias=bias,
                  cin=cin, cout=cout, kernel=k)

    def run(e):
        pad = padding if isinstance(padding, str) else (padding * nd if len(padding) == 1 else padding)
        f = [None, F.conv1d, F.conv2d, F.conv3d][nd]
        return f(e["x"], e["w"], e.get("b"), stride, pad, dil, g)

    def run_mod(e):
        cls = [None, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d][nd]
        pad = padding if isinstance(padding, str) else (padding * nd if len(padding) == 1 else padding)
        m = cls(cin, cout, k, stride=stride, padding=pad, dilation=dil, groups=g, bias=bias, padding_mode=pmode,
                dtype=dtype)
        del m.weight  # the case's leaves instead of the parameters
        m.weight = e["w"]
        if bias:
            del m.bias
            m.bias = e["b"]
        return m(e["x"])

    case("conv" if pmode == "zeros" else "conv_module", params, dtype, floats, grads=grads, tr=tr,
         run=run if pmode == "zeros" else run_mod)


def gen_conv_t(nd):
    dtype = dt()
    g = pick([1, 1, 2])
    cin = g * pick([1, 2])
    cout = g * pick([1, 2])
    k = [pick([1, 2, 3]) for _ in range(nd)]
    sp = {1: [pick([3, 4, 5])], 2: [pick([2, 3, 4]), pick([3, 4])], 3: [2, pick([2, 3]), 3]}[nd]
    n = pick([1, 2])
    stride = [pick([1, 2, 3]) for _ in range(nd)]
    dil = [pick([1, 1, 2]) for _ in range(nd)]
    padding = [pick([0, 0, 1, 2]) for _ in range(nd)]
    outpad = [rng.randint(0, max(stride[d], dil[d]) - 1) if rng.random() < 0.85 else pick([1, 2]) for d in range(nd)]
    bias = rng.random() < 0.7
    x = dy([n, cin] + sp, dtype)
    w = dy([cin, cout // g] + k, dtype, 0.5)
    b = dy([cout], dtype)
    floats = [("x", x), ("w", w)] + ([("b", b)] if bias else [])
    params = dict(nd=nd, stride=stride, padding=padding, output_padding=outpad, groups=g, dilation=dil, bias=bias)

    def run(e):
        f = [None, F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd]
        out = f(e["x"], e["w"], e.get("b"), stride, padding, outpad, g, dil)
        if 0 in out.shape[2:]:
            # torch's float32 3-d kernel returns an empty tensor where its float64 one (and every
            # 1-d/2-d kernel) refuses the size: the golden holds the refusal.
            raise RuntimeError("Output size is too small")
        return out

    case("conv_transpose", params, dtype, floats, grads=[f for f, _ in floats], run=run)


# ---- pooling ------------------------------------------------------------------------------------
def spatial(nd, lo=3, hi=7):
    return [rng.randint(lo, hi) for _ in range(nd)] if nd < 3 else [rng.randint(2, 5) for _ in range(3)]


def gen_max_pool(nd):
    dtype = dt()
    batched = rng.random() < 0.8
    shape = ([pick([1, 2])] if batched else []) + [pick([1, 2, 3])] + spatial(nd)
    k = [pick([1, 2, 3]) for _ in range(nd)]
    stride = None if rng.random() < 0.3 else [pick([1, 2, 3]) for _ in range(nd)]
    pad = [pick([0, 0, 1]) for _ in range(nd)]
    dil = [pick([1, 1, 2]) for _ in range(nd)]
    ceil = rng.random() < 0.5
    ri = rng.random() < 0.5
    x = distinct(shape, dtype)
    params = dict(nd=nd, kernel=k, stride=stride, padding=pad, dilation=dil, ceil_mode=ceil, return_indices=ri)

    def run(e):
        f = [None, F.max_pool1d, F.max_pool2d, F.max_pool3d][nd]
        r = f(e["x"], k, stride, pad, dil, ceil_mode=ceil, return_indices=ri)
        return list(r) if ri else r

    case("max_pool", params, dtype, [("x", x)], grads=["x"], run=run)


def gen_avg_pool(nd):
    dtype = dt()
    batched = rng.random() < 0.8
    shape = ([pick([1, 2])] if batched else []) + [pick([1, 2, 3])] + spatial(nd)
    k = [pick([1, 2, 3]) for _ in range(nd)]
    stride = None if rng.random() < 0.3 else [pick([1, 2, 3]) for _ in range(nd)]
    pad = [pick([0, 0, 1]) for _ in range(nd)]
    ceil = rng.random() < 0.5
    cip = rng.random() < 0.5
    dov = None if nd == 1 or rng.random() < 0.6 else pick([1, 2, 5])
    x = dy(shape, dtype)
    params = dict(nd=nd, kernel=k, stride=stride, padding=pad, ceil_mode=ceil, count_include_pad=cip,
                  divisor_override=dov)

    def run(e):
        if nd == 1:
            return F.avg_pool1d(e["x"], k, stride, pad, ceil, cip)
        f = F.avg_pool2d if nd == 2 else F.avg_pool3d
        return f(e["x"], k, stride, pad, ceil, cip, dov)

    case("avg_pool", params, dtype, [("x", x)], grads=["x"], run=run)


def gen_adaptive(nd, kind):
    dtype = dt()
    batched = rng.random() < 0.8
    sp = spatial(nd, 3, 9)
    shape = ([pick([1, 2])] if batched else []) + [pick([1, 2])] + sp
    out = [rng.randint(1, s + 1) for s in sp]
    ri = kind == "max" and rng.random() < 0.5
    x = distinct(shape, dtype) if kind == "max" else dy(shape, dtype)
    params = dict(nd=nd, output_size=out, return_indices=ri)

    def run(e):
        if kind == "avg":
            f = [None, F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d][nd]
            return f(e["x"], out)
        f = [None, F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d][nd]
        r = f(e["x"], out, ri)
        return list(r) if ri else r

    case(f"adaptive_{kind}_pool", params, dtype, [("x", x)], grads=["x"], run=run)


def gen_lp_pool(nd):
    dtype = dt()
    shape = [pick([1, 2]), pick([1, 2])] + spatial(nd)
    k = [pick([1, 2, 3]) for _ in range(nd)]
    stride = None if rng.random() < 0.4 else [pick([1, 2]) for _ in range(nd)]
    p = pick([1.0, 2.0, 3.0])
    ceil = rng.random() < 0.4
    x = dy(shape, dtype, lo=0.1) if p != 2.0 else dy(shape, dtype)
    params = dict(nd=nd, norm_type=p, kernel=k, stride=stride, ceil_mode=ceil)

    def run(e):
        f = [None, F.lp_pool1d, F.lp_pool2d, F.lp_pool3d][nd]
        if nd == 1:  # torch's lp_pool1d takes ints
            return f(e["x"], p, k[0], stride[0] if stride else None, ceil)
        return f(e["x"], p, k, stride, ceil)

    case("lp_pool", params, dtype, [("x", x)], grads=["x"], run=run)


# ---- interpolate --------------------------------------------------------------------------------
def gen_interp():
    dtype = dt()
    mode = pick(["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area", "bilinear",
                 "bicubic"])
    nd = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}.get(mode, pick([1, 2, 3]))
    sp = [rng.randint(2, 6) for _ in range(nd)]
    shape = [pick([1, 2]), pick([1, 2])] + sp
    use_size = rng.random() < 0.5
    size = sf = None
    if use_size:
        size = [rng.randint(1, 9) for _ in range(nd)]
    else:
        sf = [pick([0.5, 0.6, 1.5, 1.7, 2.0, 2.3, 3.0]) for _ in range(nd)] if rng.random() < 0.7 else [
            pick([0.75, 1.3, 2.0, 2.5])]
    ac = None
    if mode in ("linear", "bilinear", "bicubic", "trilinear") and rng.random() < 0.7:
        ac = rng.random() < 0.5
    rsf = None
    if sf is not None and rng.random() < 0.4:
        rsf = rng.random() < 0.7
    aa = mode in ("bilinear", "bicubic") and rng.random() < 0.35
    x = dy(shape, dtype)
    tr = ["x"] if nd == 2 and rng.random() < 0.25 else []
    if tr:
        x = x.transpose(-1, -2).contiguous()
    params = dict(mode=mode, size=size, scale_factor=sf, align_corners=ac, recompute_scale_factor=rsf, antialias=aa)

    def interp(t):
        return F.interpolate(t, size=size, scale_factor=sf[0] if sf and len(sf) == 1 else sf, mode=mode, align_corners=ac,
                             recompute_scale_factor=rsf, antialias=aa)

    def run(e):
        out = interp(e["x"])
        if not mode.startswith("nearest"):
            return out
        # torch 2.15's nearest backward ignores a scale factor whose output size equals the
        # input's (the gradient passes through unchanged, though the forward read other
        # elements); the golden holds the derivative of the forward instead: each output reads
        # one input element, found by interpolating the elements' own positions.
        sp_in = e["x"].shape[2:]
        pos = torch.arange(math.prod(sp_in), dtype=torch.float64).reshape(1, 1, *sp_in)
        src = interp(pos).round().long().flatten()
        gathered = e["x"].reshape(*e["x"].shape[:2], -1)[..., src].reshape(out.shape)
        assert torch.equal(gathered.detach(), out.detach())
        return gathered

    case("interpolate", params, dtype, [("x", x)], grads=["x"], tr=tr, run=run)


# ---- pad ----------------------------------------------------------------------------------------
def gen_pad():
    dtype = dt()
    mode = pick(["constant", "constant", "reflect", "replicate", "circular"])
    npd = pick([1, 2, 3])
    rank = npd + pick([1, 2]) if mode != "constant" else pick([1, 2, 3, 4])
    if mode == "constant":
        npd = rng.randint(1, rank)
    shape = [rng.randint(2, 5) for _ in range(rank)]
    pads = []
    for _ in range(npd):
        pads += [rng.randint(-1, 3), rng.randint(-1, 3)]
    value = pick([None, 0.5, -2.0]) if mode == "constant" else None
    x = dy(shape, dtype)
    params = dict(pad=pads, mode=mode, value=value)

    def run(e):
        return F.pad(e["x"], pads, mode, value)

    case("pad", params, dtype, [("x", x)], grads=["x"], run=run)


# ---- normalisation ------------------------------------------------------------------------------
def gen_layer_norm():
    dtype = dt()
    shape = [pick([1, 2, 3])] + [rng.randint(1, 5) for _ in range(pick([1, 2, 3]))]
    nsh = shape[len(shape) - rng.randint(1, len(shape)):]
    aff = pick(["both", "weight", "none"])
    eps = pick([1e-5, 1e-3])
    floats = [("x", dy(shape, dtype))]
    if aff in ("both", "weight"):
        floats.append(("w", dy(nsh, dtype)))
    if aff == "both":
        floats.append(("b", dy(nsh, dtype)))
    params = dict(normalized_shape=nsh, eps=eps)
    case("layer_norm", params, dtype, floats, grads=[k for k, _ in floats],
         run=lambda e: F.layer_norm(e["x"], nsh, e.get("w"), e.get("b"), eps))


def gen_rms_norm():
    dtype = dt()
    shape = [pick([1, 2, 3])] + [rng.randint(1, 5) for _ in range(pick([1, 2]))]
    nsh = shape[len(shape) - rng.randint(1, len(shape)):]
    eps = pick([None, 1e-5, 1e-2])
    floats = [("x", dy(shape, dtype))]
    if rng.random() < 0.6:
        floats.append(("w", dy(nsh, dtype)))
    params = dict(normalized_shape=nsh, eps=eps)
    case("rms_norm", params, dtype, floats, grads=[k for k, _ in floats],
         run=lambda e: F.rms_norm(e["x"], nsh, e.get("w"), eps))


def gen_group_norm():
    dtype = dt()
    G = pick([1, 2, 3])
    C = G * pick([1, 2]) if rng.random() < 0.9 else G * 2 + 1
    shape = [pick([1, 2]), C] + [rng.randint(1, 4) for _ in range(pick([0, 1, 2]))]
    eps = pick([1e-5, 1e-3])
    floats = [("x", dy(shape, dtype))]
    if rng.random() < 0.7:
        floats += [("w", dy([C], dtype)), ("b", dy([C], dtype))]
    params = dict(num_groups=G, eps=eps)
    case("group_norm", params, dtype, floats, grads=[k for k, _ in floats],
         run=lambda e: F.group_norm(e["x"], G, e.get("w"), e.get("b"), eps))


def gen_batch_norm():
    dtype = dt()
    C = pick([1, 2, 3])
    shape = [pick([1, 2, 3]), C] + [rng.randint(1, 4) for _ in range(pick([0, 1, 2]))]
    training = rng.random() < 0.6
    stats = (not training) or rng.random() < 0.6
    mom = pick([0.1, 0.3])
    eps = pick([1e-5, 1e-3])
    floats = [("x", dy(shape, dtype))]
    if rng.random() < 0.7:
        floats += [("w", dy([C], dtype)), ("b", dy([C], dtype))]
    grads = [k for k, _ in floats]
    if stats:
        floats += [("rm", dy([C], dtype)), ("rv", dy([C], dtype, lo=0.5))]
    params = dict(training=training, momentum=mom, eps=eps)

    def run(e):
        rm = e.get("rm")
        rv = e.get("rv")
        rm = rm.detach().clone() if rm is not None else None
        rv = rv.detach().clone() if rv is not None else None
        y = F.batch_norm(e["x"], rm, rv, e.get("w"), e.get("b"), training, mom, eps)
        return [y] + ([rm, rv] if rm is not None else [])

    case("batch_norm", params, dtype, floats, grads=grads, run=run)


def gen_instance_norm():
    dtype = dt()
    C = pick([1, 2, 3])
    shape = [pick([1, 2]), C] + [rng.randint(2, 4) for _ in range(pick([1, 2]))]
    use_input_stats = rng.random() < 0.8
    stats = rng.random() < 0.5 or not use_input_stats
    mom = 0.1
    eps = 1e-5
    floats = [("x", dy(shape, dtype))]
    if rng.random() < 0.6:
        floats += [("w", dy([C], dtype)), ("b", dy([C], dtype))]
    grads = [k for k, _ in floats]
    if stats:
        floats += [("rm", dy([C], dtype)), ("rv", dy([C], dtype, lo=0.5))]
    params = dict(use_input_stats=use_input_stats, momentum=mom, eps=eps)

    def run(e):
        rm = e.get("rm")
        rv = e.get("rv")
        rm = rm.detach().clone() if rm is not None else None
        rv = rv.detach().clone() if rv is not None else None
        y = F.instance_norm(e["x"], rm, rv, e.get("w"), e.get("b"), use_input_stats, mom, eps)
        return [y] + ([rm, rv] if rm is not None else [])

    case("instance_norm", params, dtype, floats, grads=grads, run=run)


def gen_lrn():
    dtype = dt()
    shape = [pick([1, 2]), rng.randint(1, 6)] + [rng.randint(1, 4) for _ in range(pick([1, 2]))]
    size = pick([1, 2, 3, 5])
    alpha, beta, k = pick([1e-4, 0.1]), pick([0.75, 0.5]), pick([1.0, 2.0])
    params = dict(size=size, alpha=alpha, beta=beta, k=k)
    case("local_response_norm", params, dtype, [("x", dy(shape, dtype))], grads=["x"],
         run=lambda e: F.local_response_norm(e["x"], size, alpha, beta, k))


def gen_softmax():
    dtype = dt()
    shape = [rng.randint(1, 4) for _ in range(pick([1, 2, 3]))]
    dim = rng.randint(-len(shape), len(shape) - 1)
    log = rng.random() < 0.5
    tr = ["x"] if len(shape) >= 2 and rng.random() < 0.3 else []
    x = dy(shape, dtype, 2.0)
    if tr:
        x = x.transpose(-1, -2).contiguous()
    params = dict(dim=dim)
    case("log_softmax" if log else "softmax", params, dtype, [("x", x)], grads=["x"], tr=tr,
         run=lambda e: (F.log_softmax if log else F.softmax)(e["x"], dim))


# ---- embeddings ---------------------------------------------------------------------------------
def gen_embedding():
    dtype = dt()
    num, dim = rng.randint(3, 7), rng.randint(1, 4)
    idx = torch.randint(0, num, [rng.randint(1, 3), rng.randint(1, 4)], generator=GEN)
    pidx = pick([None, None, 0, 1, -1])
    max_norm = pick([None, None, 1.0, 0.5])
    norm_type = pick([2.0, 1.0]) if max_norm else 2.0
    w = dy([num, dim], dtype)
    params = dict(padding_idx=pidx, max_norm=max_norm, norm_type=norm_type)

    def run(e):
        y = F.embedding(e["idx"], e["w"], pidx, max_norm, norm_type)
        return [y, e["w"].detach().clone()] if max_norm else y

    case("embedding", params, dtype, [("w", w)], ints=[("idx", idx)], grads=["w"], run=run)


def gen_embedding_bag():
    dtype = dt()
    num, dim = rng.randint(3, 7), rng.randint(1, 4)
    mode = pick(["sum", "mean", "max"])
    two_d = rng.random() < 0.4
    pidx = pick([None, None, 0, 2])
    psw = mode == "sum" and rng.random() < 0.5
    ilo = rng.random() < 0.3 and not two_d
    if two_d:
        inp = torch.randint(0, num, [rng.randint(1, 3), rng.randint(1, 4)], generator=GEN)
        offsets = None
    else:
        L = rng.randint(1, 8)
        inp = torch.randint(0, num, [L], generator=GEN)
        cuts = sorted(rng.randint(0, L) for _ in range(rng.randint(0, 3)))
        offsets = torch.tensor([0] + cuts + ([L] if ilo else []), dtype=torch.int64)
    w = dy([num, dim], dtype)
    floats = [("w", w)]
    if psw:
        floats.append(("psw", dy(list(inp.shape), dtype)))
    ints = [("input", inp)] + ([("offsets", offsets)] if offsets is not None else [])
    params = dict(mode=mode, padding_idx=pidx, include_last_offset=ilo)
    case("embedding_bag", params, dtype, floats, ints=ints, grads=[k for k, _ in floats],
         run=lambda e: F.embedding_bag(e["input"], e["w"], e.get("offsets"), None, 2.0, False, mode, False,
                                       e.get("psw"), ilo, pidx))


def gen_one_hot():
    n = rng.randint(0, 6)
    idx = torch.randint(0, 5, [n], generator=GEN)
    nc = pick([-1, 5, 7, 3])
    case("one_hot", dict(num_classes=nc), torch.float64, [], ints=[("idx", idx)],
         run=lambda e: F.one_hot(e["idx"], nc))


def gen_pixel():
    dtype = dt()
    r = pick([1, 2, 3])
    if rng.random() < 0.5:
        shape = [pick([1, 2]), r * r * pick([1, 2]), rng.randint(1, 3), rng.randint(1, 3)]
        if rng.random() < 0.1:
            shape[1] += 1
        case("pixel_shuffle", dict(factor=r), dtype, [("x", dy(shape, dtype))], grads=["x"],
             run=lambda e: F.pixel_shuffle(e["x"], r))
    else:
        shape = [pick([1, 2]), pick([1, 2]), r * rng.randint(1, 3), r * rng.randint(1, 3)]
        case("pixel_unshuffle", dict(factor=r), dtype, [("x", dy(shape, dtype))], grads=["x"],
             run=lambda e: F.pixel_unshuffle(e["x"], r))


def gen_unfold_fold():
    dtype = dt()
    k = [pick([1, 2, 3]), pick([1, 2])]
    dil = [pick([1, 2]), 1]
    pad = [pick([0, 1]), pick([0, 1])]
    st = [pick([1, 2]), pick([1, 2, 3])]
    C = pick([1, 2])
    if rng.random() < 0.5:
        shape = [pick([1, 2]), C, rng.randint(3, 6), rng.randint(3, 6)]
        params = dict(kernel=k, dilation=dil, padding=pad, stride=st)
        case("unfold", params, dtype, [("x", dy(shape, dtype))], grads=["x"],
             run=lambda e: F.unfold(e["x"], k, dil, pad, st))
    else:
        out = [rng.randint(3, 6), rng.randint(3, 6)]
        L = 1
        for d in range(2):
            L *= (out[d] + 2 * pad[d] - dil[d] * (k[d] - 1) - 1) // st[d] + 1
        if rng.random() < 0.1:
            L += 1
        shape = [pick([1, 2]), C * k[0] * k[1], max(L, 1)]
        params = dict(output_size=out, kernel=k, dilation=dil, padding=pad, stride=st)
        case("fold", params, dtype, [("x", dy(shape, dtype))], grads=["x"],
             run=lambda e: F.fold(e["x"], out, k, dil, pad, st))


def gen_grid_sample():
    dtype = dt()
    five = rng.random() < 0.3
    mode = pick(["bilinear", "nearest", "bicubic"])
    pm = pick(["zeros", "border", "reflection"])
    ac = rng.random() < 0.5
    N, C = pick([1, 2]), pick([1, 2])
    if five:
        shape = [N, C, rng.randint(2, 4), rng.randint(2, 4), rng.randint(2, 4)]
        grid = dy([N, rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3), 3], dtype, 0.7)
    else:
        shape = [N, C, rng.randint(2, 5), rng.randint(2, 5)]
        grid = dy([N, rng.randint(1, 4), rng.randint(1, 4), 2], dtype, 0.7)
    params = dict(mode=mode, padding_mode=pm, align_corners=ac)
    case("grid_sample", params, dtype, [("x", dy(shape, dtype)), ("grid", grid)], grads=["x", "grid"],
         run=lambda e: F.grid_sample(e["x"], e["grid"], mode, pm, ac))


def gen_affine_grid():
    dtype = dt()
    ac = rng.random() < 0.5
    N = pick([1, 2])
    if rng.random() < 0.6:
        size = [N, pick([1, 3]), rng.randint(1, 4), rng.randint(1, 4)]
        theta = dy([N, 2, 3], dtype)
    else:
        size = [N, 1, rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)]
        theta = dy([N, 3, 4], dtype)
    params = dict(size=size, align_corners=ac)
    case("affine_grid", params, dtype, [("theta", theta)], grads=["theta"],
         run=lambda e: F.affine_grid(e["theta"], size, ac))


def gen_sdpa():
    dtype = dt()
    B = pick([1, 2])
    Hq = pick([1, 2, 4])
    gqa = rng.random() < 0.3
    Hk = Hq // pick([1, 2]) if gqa and Hq > 1 else Hq
    L, S, E, Ev = rng.randint(1, 4), rng.randint(1, 5), pick([2, 3, 4]), pick([2, 3])
    q = dy([B, Hq, L, E], dtype)
    k = dy([B, Hk, S, E], dtype)
    v = dy([B, Hk, S, Ev], dtype)
    mk = pick(["none", "none", "bool", "float"])
    causal = mk == "none" and rng.random() < 0.4
    scale = pick([None, None, 0.3])
    floats = [("q", q), ("k", k), ("v", v)]
    ints = []
    if mk == "float":
        floats.append(("mask", dy([L, S], dtype)))
    elif mk == "bool":
        m = torch.rand([L, S], generator=GEN) < 0.6
        m[:, 0] = True
        ints.append(("mask", m.to(torch.int64)))
    params = dict(mask=mk, is_causal=causal, scale=scale, enable_gqa=gqa)
    grads = ["q", "k", "v"] + (["mask"] if mk == "float" else [])

    def run(e):
        m = e.get("mask")
        if mk == "bool":
            m = m.bool()
        return F.scaled_dot_product_attention(e["q"], e["k"], e["v"], m, 0.0, causal, scale=scale, enable_gqa=gqa)

    case("sdpa", params, dtype, floats, ints=ints, grads=grads, run=run)


def gen_distance():
    dtype = dt()
    which = pick(["cosine_similarity", "pairwise_distance", "cdist"])
    if which == "cosine_similarity":
        shape = [rng.randint(1, 4), rng.randint(1, 5)] + ([rng.randint(1, 3)] if rng.random() < 0.4 else [])
        dim = rng.randint(-len(shape), len(shape) - 1)
        s2 = list(shape)
        if rng.random() < 0.3:
            s2[0] = 1
        eps = pick([1e-8, 1e-3])
        params = dict(dim=dim, eps=eps)
        case(which, params, dtype, [("x1", dy(shape, dtype)), ("x2", dy(s2, dtype))], grads=["x1", "x2"],
             run=lambda e: F.cosine_similarity(e["x1"], e["x2"], dim, eps))
    elif which == "pairwise_distance":
        shape = [rng.randint(1, 4), rng.randint(1, 5)]
        p = pick([1.0, 2.0, 3.0])
        eps = pick([1e-6, 1e-2])
        keep = rng.random() < 0.4
        params = dict(p=p, eps=eps, keepdim=keep)
        case(which, params, dtype, [("x1", dy(shape, dtype)), ("x2", dy(shape, dtype))], grads=["x1", "x2"],
             run=lambda e: F.pairwise_distance(e["x1"], e["x2"], p, eps, keep))
    else:
        B = [pick([1, 2])] if rng.random() < 0.5 else []
        P, R, M = rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 4)
        p = pick([1.0, 2.0, 3.0, 0.5])
        params = dict(p=p)
        case(which, params, dtype, [("x1", dy(B + [P, M], dtype)), ("x2", dy(B + [R, M], dtype))],
             grads=["x1", "x2"], run=lambda e: torch.cdist(e["x1"], e["x2"], p))


# ---- losses -------------------------------------------------------------------------------------
def gen_cross_entropy(nll=False):
    dtype = dt()
    N, C = rng.randint(1, 4), rng.randint(2, 5)
    extra = [rng.randint(1, 3)] if rng.random() < 0.3 else []
    probs = (not nll) and rng.random() < 0.35
    x = dy([N, C] + extra, dtype)
    red = pick(RED)
    ii = pick([-100, -100, 0, 1])
    ls = 0.0 if nll else pick([0.0, 0.0, 0.1, 0.3])
    floats = [("x", x)]
    ints = []
    if probs:
        t = torch.softmax(dy([N, C] + extra, torch.float64), 1).mul(1024).round().div(1024).to(dtype)
        floats.append(("target", t))
    else:
        ints.append(("target", torch.randint(0, C, [N] + extra, generator=GEN)))
    if rng.random() < 0.4:
        floats.append(("weight", dy([C], dtype, lo=0.2)))
    params = dict(ignore_index=ii, reduction=red, label_smoothing=ls, probs=probs)
    if nll:
        case("nll_loss", params, dtype, floats, ints=ints, grads=["x"],
             run=lambda e: F.nll_loss(e["x"], e["target"], e.get("weight"), ignore_index=ii, reduction=red))
    else:
        case("cross_entropy", params, dtype, floats, ints=ints, grads=["x"],
             run=lambda e: F.cross_entropy(e["x"], e["target"], e.get("weight"), ignore_index=ii, reduction=red,
                                           label_smoothing=ls))


def gen_bce():
    dtype = dt()
    shape = [rng.randint(1, 4), rng.randint(1, 4)]
    logits = rng.random() < 0.5
    red = pick(RED)
    t = torch.randint(0, 5, shape, generator=GEN).to(dtype) / 4
    floats = [("x", dy(shape, dtype) if logits else torch.sigmoid(dy(shape, torch.float64)).mul(1024).round()
               .clamp(1, 1023).div(1024).to(dtype)), ("target", t)]
    if rng.random() < 0.4:
        floats.append(("weight", dy([shape[1]], dtype, lo=0.2)))
    pw = logits and rng.random() < 0.5
    if pw:
        floats.append(("pos_weight", dy([shape[1]], dtype, lo=0.2)))
    params = dict(reduction=red)
    if logits:
        case("bce_with_logits", params, dtype, floats, grads=["x", "target"],
             run=lambda e: F.binary_cross_entropy_with_logits(e["x"], e["target"], e.get("weight"), reduction=red,
                                                              pos_weight=e.get("pos_weight")))
    else:
        case("bce", params, dtype, floats, grads=["x"],
             run=lambda e: F.binary_cross_entropy(e["x"], e["target"], e.get("weight"), reduction=red))


def gen_pointwise_loss():
    dtype = dt()
    which = pick(["kl_div", "huber", "smooth_l1", "mse", "l1", "poisson_nll", "gaussian_nll", "soft_margin"])
    shape = [rng.randint(1, 4), rng.randint(1, 4)]
    red = pick(RED)
    x = dy(shape, dtype)
    if which == "kl_div":
        lt = rng.random() < 0.5
        red = pick(RED + ["batchmean"])
        t = dy(shape, dtype) if lt else dy(shape, dtype, 0.3, lo=0.0)
        params = dict(reduction=red, log_target=lt)
        case(which, params, dtype, [("x", x), ("target", t)], grads=["x", "target"],
             run=lambda e: F.kl_div(e["x"], e["target"], reduction=red, log_target=lt))
    elif which in ("huber", "smooth_l1"):
        beta = pick([0.5, 1.0, 2.0, 0.0]) if which == "smooth_l1" else pick([0.5, 1.0, 2.0])
        params = dict(reduction=red, beta=beta)
        f = (lambda e: F.huber_loss(e["x"], e["target"], red, beta)) if which == "huber" else (
            lambda e: F.smooth_l1_loss(e["x"], e["target"], reduction=red, beta=beta))
        case(which, params, dtype, [("x", x), ("target", dy(shape, dtype))], grads=["x", "target"], run=f)
    elif which in ("mse", "l1"):
        params = dict(reduction=red)
        f = F.mse_loss if which == "mse" else F.l1_loss
        case(which, params, dtype, [("x", x), ("target", dy(shape, dtype))], grads=["x", "target"],
             run=lambda e: f(e["x"], e["target"], reduction=red))
    elif which == "poisson_nll":
        li = rng.random() < 0.5
        full = rng.random() < 0.5
        xin = x if li else dy(shape, dtype, lo=0.1)
        t = torch.randint(0, 4, shape, generator=GEN).to(dtype)
        params = dict(log_input=li, full=full, reduction=red)
        case(which, params, dtype, [("x", xin), ("target", t)], grads=["x"],
             run=lambda e: F.poisson_nll_loss(e["x"], e["target"], li, full, reduction=red))
    elif which == "gaussian_nll":
        full = rng.random() < 0.5
        vs = pick(["full", "last1", "nolast"])
        vshape = shape if vs == "full" else (shape[:-1] + [1] if vs == "last1" else shape[:-1])
        params = dict(full=full, reduction=red, eps=1e-6)
        case(which, params, dtype, [("x", x), ("target", dy(shape, dtype)), ("var", dy(vshape, dtype, lo=0.1))],
             grads=["x", "var"], run=lambda e: F.gaussian_nll_loss(e["x"], e["target"], e["var"], full, 1e-6, red))
    else:
        t = torch.randint(0, 2, shape, generator=GEN).to(dtype) * 2 - 1
        params = dict(reduction=red)
        case(which, params, dtype, [("x", x), ("target", t)], grads=["x"],
             run=lambda e: F.soft_margin_loss(e["x"], e["target"], reduction=red))


def gen_margin_losses():
    dtype = dt()
    which = pick(["margin_ranking", "triplet", "cosine_embedding", "hinge_embedding", "multilabel_margin",
                  "multi_margin", "multilabel_soft_margin"])
    red = pick(RED)
    N, D = rng.randint(1, 4), rng.randint(1, 5)
    sgn = lambda shape: torch.randint(0, 2, shape, generator=GEN).to(dtype) * 2 - 1  # noqa: E731
    if which == "margin_ranking":
        m = pick([0.0, 0.5])
        params = dict(margin=m, reduction=red)
        case(which, params, dtype, [("x1", dy([N], dtype)), ("x2", dy([N], dtype)), ("y", sgn([N]))],
             grads=["x1", "x2"], run=lambda e: F.margin_ranking_loss(e["x1"], e["x2"], e["y"], m, reduction=red))
    elif which == "triplet":
        m, p, sw = pick([1.0, 0.5]), pick([1.0, 2.0, 3.0]), rng.random() < 0.4
        params = dict(margin=m, p=p, eps=1e-6, swap=sw, reduction=red)
        case(which, params, dtype, [("a", dy([N, D], dtype)), ("p", dy([N, D], dtype)), ("n", dy([N, D], dtype))],
             grads=["a", "p", "n"],
             run=lambda e: F.triplet_margin_loss(e["a"], e["p"], e["n"], m, p, 1e-6, sw, reduction=red))
    elif which == "cosine_embedding":
        m = pick([0.0, 0.3, -0.2])
        params = dict(margin=m, reduction=red)
        case(which, params, dtype, [("x1", dy([N, D], dtype)), ("x2", dy([N, D], dtype)), ("y", sgn([N]))],
             grads=["x1", "x2"], run=lambda e: F.cosine_embedding_loss(e["x1"], e["x2"], e["y"], m, reduction=red))
    elif which == "hinge_embedding":
        m = pick([1.0, 0.5])
        params = dict(margin=m, reduction=red)
        case(which, params, dtype, [("x", dy([N, D], dtype)), ("y", sgn([N, D]))], grads=["x"],
             run=lambda e: F.hinge_embedding_loss(e["x"], e["y"], m, reduction=red))
    elif which == "multilabel_margin":
        t = torch.full([N, D], -1, dtype=torch.int64)
        for i in range(N):
            kk = rng.randint(0, D)
            t[i, :kk] = torch.randperm(D, generator=GEN)[:kk]
        params = dict(reduction=red)
        case(which, params, dtype, [("x", dy([N, D], dtype))], ints=[("target", t)], grads=["x"],
             run=lambda e: F.multilabel_margin_loss(e["x"], e["target"], reduction=red))
    elif which == "multi_margin":
        p, m = pick([1, 2]), pick([1.0, 0.5])
        floats = [("x", dy([N, D], dtype))]
        if rng.random() < 0.4:
            floats.append(("weight", dy([D], dtype, lo=0.2)))
        params = dict(p=p, margin=m, reduction=red)
        case(which, params, dtype, floats, ints=[("target", torch.randint(0, D, [N], generator=GEN))], grads=["x"],
             run=lambda e: F.multi_margin_loss(e["x"], e["target"], p, m, e.get("weight"), reduction=red))
    else:
        floats = [("x", dy([N, D], dtype)), ("target", torch.randint(0, 2, [N, D], generator=GEN).to(dtype))]
        if rng.random() < 0.4:
            floats.append(("weight", dy([D], dtype, lo=0.2)))
        params = dict(reduction=red)
        case(which, params, dtype, floats, grads=["x"],
             run=lambda e: F.multilabel_soft_margin_loss(e["x"], e["target"], e.get("weight"), reduction=red))


def gen_ctc():
    dtype = dt()
    T, N, C = rng.randint(3, 7), rng.randint(1, 3), rng.randint(2, 5)
    blank = pick([0, C - 1])
    lp = torch.log_softmax(dy([T, N, C], torch.float64), 2).to(dtype)
    S = rng.randint(1, 3)
    tl = torch.tensor([rng.randint(0, S) for _ in range(N)], dtype=torch.int64)
    labels = [c for c in range(C) if c != blank]
    tg = torch.tensor([[pick(labels) for _ in range(S)] for _ in range(N)], dtype=torch.int64)
    il = torch.tensor([rng.randint(max(1, T - 2), T) for _ in range(N)], dtype=torch.int64)
    red = pick(["none", "sum", "mean"])
    zi = rng.random() < 0.5
    params = dict(blank=blank, reduction=red, zero_infinity=zi)
    case("ctc_loss", params, dtype, [("lp", lp)], ints=[("targets", tg), ("il", il), ("tl", tl)], grads=["lp"],
         run=lambda e: F.ctc_loss(e["lp"], e["targets"], e["il"], e["tl"], blank, red, zi))


GENS = (
    [lambda nd=nd: gen_conv(nd) for nd in (1, 2, 3)] * 5
    + [lambda nd=nd: gen_conv_t(nd) for nd in (1, 2, 3)] * 3
    + [lambda nd=nd: gen_max_pool(nd) for nd in (1, 2, 3)] * 3
    + [lambda nd=nd: gen_avg_pool(nd) for nd in (1, 2, 3)] * 3
    + [lambda nd=nd, k=k: gen_adaptive(nd, k) for nd in (1, 2, 3) for k in ("avg", "max")] * 2
    + [lambda nd=nd: gen_lp_pool(nd) for nd in (1, 2, 3)]
    + [gen_interp] * 14
    + [gen_pad] * 8
    + [gen_layer_norm, gen_rms_norm, gen_group_norm, gen_batch_norm, gen_batch_norm, gen_instance_norm, gen_lrn] * 2
    + [gen_softmax] * 3
    + [gen_embedding] * 3
    + [gen_embedding_bag] * 4
    + [gen_one_hot, gen_pixel, gen_pixel, gen_unfold_fold, gen_unfold_fold]
    + [gen_grid_sample] * 5
    + [gen_affine_grid] * 2
    + [gen_sdpa] * 5
    + [gen_distance] * 4
    + [gen_cross_entropy] * 5
    + [lambda: gen_cross_entropy(True)] * 2
    + [gen_bce] * 3
    + [gen_pointwise_loss] * 7
    + [gen_margin_losses] * 6
    + [gen_ctc] * 3
)


def main():
    n_cases = int(os.environ.get("NNFUZZ_CASES", "300"))
    while len(CASES) < n_cases:
        rng.choice(GENS)()
    lines = [generated_header("make_functional_fuzz_golden.py", f"seed {SEED}, float32 and float64, CPU"), ""]
    lines.append("/// The randomized cases (see functional_fuzz.rs).")
    lines.append("const CASES: &[Case] = &[")
    for c in CASES:
        fl = ", ".join(f'("{k}", {tensor_lit(t)})' for k, t in c["floats"])
        it = ", ".join(f'("{k}", {tensor_lit(t)})' for k, t in c["ints"])
        outs = ", ".join(tensor_lit(o) for o in c["outs"])
        cots = ", ".join(tensor_lit(o) for o in c["cots"])
        gr = ", ".join(f'("{k}", {tensor_lit(t)})' for k, t in c["grads"])
        err = "None" if c["err"] is None else f"Some({rust_str(c['err'])})"
        lines.append(
            f'    Case {{ id: {c["id"]}, op: "{c["op"]}", params: {rust_str(c["params"])}, f32: '
            f'{"true" if c["f32"] else "false"}, floats: &[{fl}], ints: &[{it}], outs: &[{outs}], cots: &[{cots}], '
            f"grads: &[{gr}], err: {err} }},"
        )
    lines.append("];")
    path = write_golden("functional_fuzz_golden.rs", lines)
    n_err = sum(1 for c in CASES if c["err"] is not None)
    ops = {}
    for c in CASES:
        ops[c["op"]] = ops.get(c["op"], 0) + 1
    print(f"wrote {path}: {len(CASES)} cases ({n_err} torch errors), {os.path.getsize(path)} bytes")
    print(sorted(ops.items()))


if __name__ == "__main__":
    main()

"""Writes autograd/tests/grad_fuzz/golden.rs: a seeded randomized differential test of the analytic
gradients of ~120 differentiable tensor ops against torch, replayed by autograd/tests/grad_fuzz.rs.

Each case records its inputs (dtype, base shape, base values, the layout ops that make the input
non-contiguous: `t a,b` transpose, `p perm` permute, `s dim,start,end,step` slice, `e sizes`
expand; whether it requires grad, and whether the leaf is the contiguous base the layout is applied
to (`of_base`) or the non-contiguous view itself, detached), the op's arguments as `key=value`
pairs, torch's outputs, the upstream gradients of the selected outputs, torch's
`torch.autograd.grad(..., allow_unused=True)` of every input requiring grad (None where torch gives
None), and for some float64 cases the second-order gradients of `sum_i (first_i * v_i).sum()`.
Where torch raises (forward or backward) the message is recorded instead.

Inputs avoid the points where the gradient is not defined: all values of a case have distinct
absolute values (no ties for max/sort/maximum/clamp), none is near the kinks of abs/relu/... and
tie-sensitive ops get no expanded inputs.

Run with a torch install: /work/.refenv/bin/python autograd/tests/make_grad_fuzz_golden.py
"""
import math
import os
import random

import torch

OUT = os.path.join(os.path.dirname(__file__), "grad_fuzz", "golden.rs")
SEED = 34
ROUNDS = 3  # cases per op (the op list is cycled in a shuffled order)
rng = random.Random(SEED)
torch.manual_seed(SEED)

DT = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "bool": torch.bool}
NAME = {v: k for k, v in DT.items()}
MAXN = 60


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


# ----------------------------------------------------------------------------------------------
# Values: per case, every float value has a distinct absolute value and keeps away from `avoid`.

class Ctx:
    def __init__(self):
        self.used = set()
        self.dt = "f64"
        self.notie = False


C = Ctx()


def fval(dom=None, avoid=(0.0,)):
    for _ in range(1000):
        if dom is None:
            v = round(rng.gauss(0, 1.2), 3)
        else:
            lo, hi = dom
            v = round(rng.uniform(lo, hi), 3)
        if abs(v) in C.used:
            continue
        if any(abs(v - a) < 0.02 for a in avoid):
            continue
        C.used.add(abs(v))
        return v
    raise RuntimeError("no value")


class In:
    def __init__(self, dt, base, vals, layout, ops, grad=False, of_base=False):
        self.dt, self.base, self.vals, self.layout, self.ops = dt, base, vals, layout, ops
        self.grad, self.of_base = grad, of_base
        self.leaf = None


def rand_shape(max_rank=3, allow_empty=True, min_rank=0, maxn=24):
    for _ in range(100):
        r = rng.choice([0, 1, 1, 2, 2, 2, 3, 3])
        r = max(min(r, max_rank), min_rank)
        shape = []
        for _ in range(r):
            k = rng.random()
            if allow_empty and k < 0.05:
                shape.append(0)
            elif k < 0.25:
                shape.append(1)
            else:
                shape.append(rng.randint(2, 4))
        if numel(shape) <= maxn:
            return shape
    return [2] * min_rank


def layout_for(shape, allow_expand=True):
    """Layout ops making a tensor of `shape` from a contiguous base, and that base's shape."""
    rank = len(shape)
    if rng.random() >= 0.4:
        return list(shape), []
    kinds = []
    if rank >= 2:
        kinds.append("t")
    if rank >= 3:
        kinds.append("p")
    if rank >= 1:
        kinds.append("s")
        if allow_expand and not C.notie and any(s != 1 for s in shape):
            kinds.append("e")
    if not kinds:
        return list(shape), []
    kind = rng.choice(kinds)
    base = list(shape)
    ops = []
    if kind == "t":
        a, b = rng.sample(range(rank), 2)
        base[a], base[b] = base[b], base[a]
        ops.append(("t", [a, b]))
    elif kind == "p":
        perm = list(range(rank))
        while perm == list(range(rank)):
            rng.shuffle(perm)
        base = [0] * rank
        for i in range(rank):
            base[perm[i]] = shape[i]
        ops.append(("p", perm))
    elif kind == "s":
        d = rng.randrange(rank)
        step = rng.choice([1, 2, 3])
        start = rng.randint(0, 2)
        n = shape[d]
        end = start + (n - 1) * step + 1 if n > 0 else start
        base[d] = end + rng.randint(0, 1)
        ops.append(("s", [d, start, end, step]))
        if numel(base) > MAXN:
            return list(shape), []
    else:
        base = [1 if (s != 0 and rng.random() < 0.6) else s for s in shape]
        if base == list(shape):
            i = next(i for i, s in enumerate(shape) if s != 1)
            base[i] = 1
        if rank > 1 and base[0] == 1 and rng.random() < 0.5:
            base = base[1:]
        ops.append(("e", list(shape)))
    return base, ops


def apply_layout(t, ops):
    for op, a in ops:
        if op == "t":
            t = t.transpose(a[0], a[1])
        elif op == "p":
            t = t.permute(a)
        elif op == "s":
            idx = [slice(None)] * t.dim()
            idx[a[0]] = slice(a[1], a[2], a[3])
            t = t[tuple(idx)]
        elif op == "e":
            t = t.expand(a)
    return t


def fin(shape, dom=None, avoid=(0.0,), vals=None, contiguous=False, expand=True, grad=None):
    """A float input of logical `shape` in the case's dtype."""
    if contiguous or vals is not None:
        base, ops = list(shape), []
    else:
        base, ops = layout_for(shape, expand)
    if vals is None:
        vals = [fval(dom, avoid) for _ in range(numel(base))]
    assert len(vals) == numel(base)
    layout = "|".join(f"{op} " + ",".join(str(x) for x in a) for op, a in ops)
    i = In(C.dt, base, vals, layout, ops, of_base=bool(ops) and rng.random() < 0.5)
    i.want_grad = grad
    return i


def iin(shape, vals):
    assert len(vals) == numel(shape)
    return In("i64", list(shape), [float(v) for v in vals], "", [])


def bin_(shape, vals=None):
    if vals is None:
        vals = [float(rng.random() < 0.5) for _ in range(numel(shape))]
    return In("bool", list(shape), vals, "", [])


def bcast_pair(max_rank=3, maxn=24):
    s = rand_shape(max_rank, maxn=maxn)
    if rng.random() < 0.4:
        return s, list(s)
    o = [x if rng.random() < 0.6 else 1 for x in s]
    if o and rng.random() < 0.3:
        o = o[rng.randint(0, len(o)):]
    if rng.random() < 0.04 and s and any(x > 1 for x in s):
        # incompatible: torch raises
        o = [x + 1 if x > 1 else x for x in s]
    return (s, o) if rng.random() < 0.5 else (o, s)


def rdim(rank, bad=0.03):
    if rng.random() < bad:
        return rank + 1
    if rank == 0:
        return rng.choice([0, -1])
    d = rng.randrange(rank)
    return d - rank if rng.random() < 0.3 else d


def rdims(rank):
    if rank == 0:
        return rng.choice([[], [0], [-1]])
    k = rng.randint(0, rank)
    return sorted(rng.sample(range(rank), k))


def fmt_args(a):
    out = []
    for k, v in a.items():
        if isinstance(v, (list, tuple)):
            v = ",".join(str(int(x)) for x in v)
        elif isinstance(v, bool):
            v = "1" if v else "0"
        elif v is None:
            v = "none"
        elif isinstance(v, float):
            v = repr(v)
        out.append(f"{k}={v}")
    return ";".join(out)


# ----------------------------------------------------------------------------------------------
# Op generators: each returns (inputs, args, fn(*torch tensors) -> list of outputs).
# Options: NOTIE ops get no expanded inputs.

OPS = {}
NOTIE = set()


def op(name, notie=False, acc=False):
    def deco(f):
        OPS[name] = f
        if notie:
            NOTIE.add(name)
        return f
    return deco


POS = (0.2, 3.0)
UNIT = (-0.9, 0.9)
UNARY = {
    "exp": (torch.exp, None, (0.0,)),
    "log": (torch.log, POS, ()),
    "sqrt": (torch.sqrt, POS, ()),
    "rsqrt": (torch.rsqrt, POS, ()),
    "sin": (torch.sin, None, ()),
    "cos": (torch.cos, None, ()),
    "tan": (torch.tan, (-1.2, 1.2), ()),
    "tanh": (torch.tanh, None, ()),
    "sigmoid": (torch.sigmoid, None, ()),
    "erf": (torch.erf, None, ()),
    "erfinv": (torch.erfinv, UNIT, ()),
    "atan": (torch.atan, None, ()),
    "asin": (torch.asin, UNIT, ()),
    "acos": (torch.acos, UNIT, ()),
    "sinh": (torch.sinh, None, ()),
    "cosh": (torch.cosh, None, ()),
    "asinh": (torch.asinh, None, ()),
    "acosh": (torch.acosh, (1.1, 3.0), ()),
    "atanh": (torch.atanh, UNIT, ()),
    "expm1": (torch.expm1, None, ()),
    "log1p": (torch.log1p, (-0.8, 3.0), ()),
    "reciprocal": (torch.reciprocal, None, (0.0, 0.2, -0.2)),
    "abs": (torch.abs, None, (0.0,)),
    "neg": (torch.neg, None, ()),
    "square": (torch.square, None, ()),
    "relu": (torch.relu, None, (0.0,)),
    "mish": (torch.nn.functional.mish, None, ()),
    "silu": (torch.nn.functional.silu, None, ()),
    "selu": (torch.selu, None, (0.0,)),
    "hardswish": (torch.nn.functional.hardswish, (-4.0, 4.0), (-3.0, 3.0)),
    "hardsigmoid": (torch.nn.functional.hardsigmoid, (-4.0, 4.0), (-3.0, 3.0)),
    "relu6": (torch.nn.functional.relu6, (-2.0, 7.5), (0.0, 6.0)),
    "exp2": (torch.exp2, None, ()),
    "log2": (torch.log2, POS, ()),
    "log10": (torch.log10, POS, ()),
    "sinc": (torch.sinc, None, (0.0,)),
}


def make_unary(name):
    fn, dom, avoid = UNARY[name]

    def gen():
        return [fin(rand_shape(), dom, avoid)], {}, lambda x: [fn(x)]
    return gen


for _n in UNARY:
    OPS[_n] = make_unary(_n)


@op("logit")
def _():
    eps = rng.choice([None, 0.05, 0.2])
    x = fin(rand_shape(), (0.03, 0.97), (0.05, 0.95, 0.2, 0.8))
    if eps is None:
        x = fin(rand_shape(), (0.06, 0.94), ())
    return [x], {"eps": eps}, lambda x: [torch.logit(x, eps=eps)]


@op("pow_scalar")
def _():
    e = rng.choice([2.0, 3.0, -1.0, 0.5, 1.5, -2.5, 0.0, 1.0])
    dom = None if e in (2.0, 3.0, -1.0, 0.0, 1.0) else POS
    x = fin(rand_shape(), dom, (0.0,))
    return [x], {"e": e}, lambda x: [torch.pow(x, e)]


@op("pow_tensor")
def _():
    sa, sb = bcast_pair()
    return [fin(sa, POS, (1.0,)), fin(sb, (-2.0, 2.5))], {}, lambda x, y: [torch.pow(x, y)]


@op("softplus")
def _():
    beta = rng.choice([1.0, 2.0, 0.5])
    thr = rng.choice([20.0, 1.0, 2.0])
    avoid = (thr / beta,)
    return [fin(rand_shape(), (-3.0, 3.0), avoid)], {"beta": beta, "threshold": thr}, \
        lambda x: [torch.nn.functional.softplus(x, beta, thr)]


@op("gelu")
def _():
    ap = rng.choice(["none", "tanh"])
    return [fin(rand_shape())], {"approximate": ap}, lambda x: [torch.nn.functional.gelu(x, approximate=ap)]


@op("elu")
def _():
    a = rng.choice([1.0, 0.5, 2.0])
    return [fin(rand_shape())], {"alpha": a}, lambda x: [torch.nn.functional.elu(x, a)]


@op("celu")
def _():
    a = rng.choice([1.0, 0.5, 2.0])
    return [fin(rand_shape())], {"alpha": a}, lambda x: [torch.celu(x, a)]


@op("leaky_relu")
def _():
    s = rng.choice([0.01, 0.2, -0.5])
    return [fin(rand_shape())], {"slope": s}, lambda x: [torch.nn.functional.leaky_relu(x, s)]


@op("hardtanh")
def _():
    lo, hi = rng.choice([(-1.0, 1.0), (-0.5, 2.0), (0.0, 0.5)])
    return [fin(rand_shape(), (-2.5, 2.5), (lo, hi))], {"lo": lo, "hi": hi}, \
        lambda x: [torch.nn.functional.hardtanh(x, lo, hi)]


# --- binary -------------------------------------------------------------------------------------

BINARY = {
    "add": (torch.add, None, None),
    "sub": (torch.sub, None, None),
    "mul": (torch.mul, None, None),
    "div": (torch.div, None, "nz"),
    "atan2": (torch.atan2, None, None),
    "hypot": (torch.hypot, None, None),
    "maximum": (torch.maximum, None, None),
    "minimum": (torch.minimum, None, None),
    "fmod": (torch.fmod, None, "nz"),
    "remainder": (torch.remainder, None, "nz"),
    "xlogy": (torch.xlogy, None, "pos"),
    "xlog1py": (torch.special.xlog1py, None, "pos"),
    "copysign": (torch.copysign, None, None),
    "logaddexp": (torch.logaddexp, None, None),
    "float_power": (torch.float_power, POS, None),
}
SCALAR_OK = {"add", "sub", "mul", "div", "fmod", "remainder", "atan2", "maximum", "xlogy", "copysign", "pow"}


def make_binary(name):
    fn, dom, kind = BINARY[name]

    def gen():
        sa, sb = bcast_pair()
        a = fin(sa, dom)
        if name in ("add", "sub", "mul", "div", "fmod", "remainder") and rng.random() < 0.2:
            s = rng.choice([2.5, -0.75, 3.0, -2.0])
            return [a], {"scalar": s}, lambda x: [fn(x, s)]
        bdom = {"nz": None, "pos": POS, None: dom}[kind]
        avoid = (0.0, 0.3, -0.3) if kind == "nz" else (0.0,)
        if kind == "nz":
            b = fin(sb, bdom, avoid)
            b.vals = [v if abs(v) >= 0.3 else math.copysign(abs(v) + 0.31, v) for v in b.vals]
        else:
            b = fin(sb, bdom, avoid)
        return [a, b], {}, lambda x, y: [fn(x, y)]
    return gen


for _n in BINARY:
    OPS[_n] = make_binary(_n)
NOTIE.update({"maximum", "minimum"})


@op("lerp")
def _():
    sa, sb = bcast_pair()
    a, b = fin(sa), fin(sb)
    if rng.random() < 0.5:
        w = rng.choice([0.25, 0.5, 0.75, 1.5, -0.5])
        return [a, b], {"w": w}, lambda x, y: [torch.lerp(x, y, w)]
    c = fin(rng.choice([sa, sb, []]), (-0.5, 1.5))
    return [a, b, c], {}, lambda x, y, z: [torch.lerp(x, y, z)]


@op("where")
def _():
    sa, sb = bcast_pair()
    c = bin_(sa)
    return [c, fin(sb), fin(rng.choice([sa, sb]))], {}, lambda c, x, y: [torch.where(c, x, y)]


@op("clamp", notie=True)
def _():
    s = rand_shape()
    mode = rng.choice(["tt", "tt", "tn", "nt", "ss"])
    ins = [fin(s, (-2.0, 2.0))]
    args = {"mode": mode}
    if mode == "ss":
        lo, hi = rng.choice([(-1.0, 1.0), (-0.5, 0.5), (0.2, 1.5)])
        args.update({"lo": lo, "hi": hi})
        ins[0] = fin(s, (-2.0, 2.0), (lo, hi), contiguous=True)
        return ins, args, lambda x: [torch.clamp(x, lo, hi)]
    for ch, dom in zip(mode, [(-1.5, -0.05), (0.05, 1.5)]):
        if ch == "t":
            bs = list(s[rng.randint(0, len(s)):]) if s else []
            ins.append(fin(bs, dom))

    def f(x, *b):
        it = iter(b)
        lo = next(it) if mode[0] == "t" else None
        hi = next(it) if mode[1] == "t" else None
        return [torch.clamp(x, lo, hi)]
    return ins, args, f


# --- reductions ---------------------------------------------------------------------------------

@op("sum")
def _():
    s = rand_shape()
    dims, keep = rdims(len(s)), rng.random() < 0.5
    if not dims:
        return [fin(s)], {"dims": [], "keepdim": False}, lambda x: [x.sum()]
    return [fin(s)], {"dims": dims, "keepdim": keep}, lambda x: [x.sum(dims, keepdim=keep)]


@op("mean")
def _():
    s = rand_shape()
    dims, keep = rdims(len(s)), rng.random() < 0.5
    if not dims:
        return [fin(s)], {"dims": [], "keepdim": False}, lambda x: [x.mean()]
    return [fin(s)], {"dims": dims, "keepdim": keep}, lambda x: [x.mean(dims, keepdim=keep)]


@op("prod")
def _():
    s = rand_shape(maxn=12)
    x = fin(s, (-1.6, 1.6), (0.0,))
    x.vals = [v if abs(v) > 0.3 else math.copysign(abs(v) + 0.5, v) for v in x.vals]
    if rng.random() < 0.3:
        return [x], {"dim": "none", "keepdim": False}, lambda x: [x.prod()]
    d, keep = rdim(len(s)), rng.random() < 0.5
    return [x], {"dim": d, "keepdim": keep}, lambda x: [x.prod(d, keepdim=keep)]


@op("std")
def _():
    s = rand_shape()
    dims, keep, c = rdims(len(s)), rng.random() < 0.5, rng.choice([0.0, 1.0, 2.0])
    n = numel([s[d] for d in dims]) if dims and s else numel(s)
    if n <= c:
        c = 0.0
    return [fin(s)], {"dims": dims, "correction": c, "keepdim": keep}, \
        lambda x: [torch.std(x, dims if dims else None, correction=c, keepdim=keep)]


@op("var")
def _():
    s = rand_shape()
    dims, keep, c = rdims(len(s)), rng.random() < 0.5, rng.choice([0.0, 1.0, 2.0])
    n = numel([s[d] for d in dims]) if dims and s else numel(s)
    if n <= c:
        c = 0.0
    return [fin(s)], {"dims": dims, "correction": c, "keepdim": keep}, \
        lambda x: [torch.var(x, dims if dims else None, correction=c, keepdim=keep)]


@op("norm", notie=True)
def _():
    s = rand_shape()
    dims, keep, p = rdims(len(s)), rng.random() < 0.5, rng.choice([1.0, 2.0, 3.0, float("inf"), 0.5])
    return [fin(s)], {"p": p, "dims": dims, "keepdim": keep}, \
        lambda x: [torch.linalg.vector_norm(x, p, dims if dims else None, keep)]


@op("logsumexp")
def _():
    s = rand_shape()
    dims, keep = rdims(len(s)), rng.random() < 0.5
    if not dims:
        dims = [rdim(len(s), 0.0)]
    return [fin(s)], {"dims": dims, "keepdim": keep}, lambda x: [torch.logsumexp(x, dims, keep)]


@op("amax", notie=True)
def _():
    s = rand_shape()
    dims, keep = rdims(len(s)), rng.random() < 0.5
    return [fin(s)], {"dims": dims, "keepdim": keep}, lambda x: [torch.amax(x, dims, keep)]


@op("amin", notie=True)
def _():
    s = rand_shape()
    dims, keep = rdims(len(s)), rng.random() < 0.5
    return [fin(s)], {"dims": dims, "keepdim": keep}, lambda x: [torch.amin(x, dims, keep)]


@op("max_all", notie=True)
def _():
    return [fin(rand_shape(allow_empty=False))], {}, lambda x: [x.max()]


@op("min_all", notie=True)
def _():
    return [fin(rand_shape(allow_empty=False))], {}, lambda x: [x.min()]


def dim_op(name, fn):
    def gen():
        s = rand_shape()
        d, keep = rdim(len(s)), rng.random() < 0.5
        return [fin(s)], {"dim": d, "keepdim": keep}, lambda x: [fn(x, d, keep)]
    OPS[name] = gen
    NOTIE.add(name)


dim_op("max_dim", lambda x, d, k: torch.max(x, d, k).values)
dim_op("min_dim", lambda x, d, k: torch.min(x, d, k).values)
dim_op("median", lambda x, d, k: torch.median(x, d, k).values)


@op("median_all", notie=True)
def _():
    return [fin(rand_shape(allow_empty=False))], {}, lambda x: [x.median()]


def cum_op(name, fn, dom=None):
    def gen():
        s = rand_shape(maxn=16 if name == "cumprod" else 24)
        d = rdim(len(s))
        return [fin(s, dom)], {"dim": d}, lambda x: [fn(x, d)]
    OPS[name] = gen


cum_op("cumsum", torch.cumsum)
cum_op("cumprod", torch.cumprod, (-1.8, 1.8))
cum_op("logcumsumexp", torch.logcumsumexp)
cum_op("softmax", torch.softmax)
cum_op("log_softmax", torch.log_softmax)


@op("kthvalue", notie=True)
def _():
    s = rand_shape()
    d, keep = rdim(len(s)), rng.random() < 0.5
    n = s[d] if s and -len(s) <= d < len(s) else 1
    k = rng.randint(1, max(n, 1)) if rng.random() > 0.05 else n + 1
    return [fin(s)], {"k": k, "dim": d, "keepdim": keep}, lambda x: [torch.kthvalue(x, k, d, keep).values]


@op("topk", notie=True)
def _():
    s = rand_shape()
    d, largest = rdim(len(s)), rng.random() < 0.5
    n = s[d] if s and -len(s) <= d < len(s) else 1
    k = rng.randint(0, n) if rng.random() > 0.05 else n + 1
    return [fin(s)], {"k": k, "dim": d, "largest": largest}, lambda x: [torch.topk(x, k, d, largest, True).values]


@op("sort", notie=True)
def _():
    s = rand_shape()
    d, desc = rdim(len(s)), rng.random() < 0.5
    return [fin(s)], {"dim": d, "descending": desc}, lambda x: [torch.sort(x, d, desc).values]


# --- shape / view ops ---------------------------------------------------------------------------

@op("permute")
def _():
    s = rand_shape()
    perm = list(range(len(s)))
    rng.shuffle(perm)
    return [fin(s)], {"perm": perm}, lambda x: [x.permute(perm)]


@op("transpose")
def _():
    s = rand_shape(min_rank=1)
    a, b = rdim(len(s)), rdim(len(s), 0.0)
    return [fin(s)], {"d0": a, "d1": b}, lambda x: [x.transpose(a, b)]


@op("reshape")
def _():
    s = rand_shape()
    n = numel(s)
    opts = [[n], [-1], [1, n], [n, 1]] + ([[2, n // 2], [-1, 2]] if n % 2 == 0 and n > 0 else [])
    if n == 0:
        opts += [[0, 3], [2, 0, 1]]
    shp = rng.choice(opts)
    return [fin(s)], {"shape": shp}, lambda x: [x.reshape(shp)]


@op("expand")
def _():
    s = rand_shape(maxn=8)
    tgt = [rng.choice([2, 3]) if d == 1 else d for d in s]
    if rng.random() < 0.5:
        tgt = [2] + tgt
    if rng.random() < 0.3 and tgt:
        tgt[-1] = -1
    return [fin(s)], {"sizes": tgt}, lambda x: [x.expand(tgt)]


@op("narrow")
def _():
    s = rand_shape(min_rank=1)
    d = rdim(len(s), 0.0)
    n = s[d]
    st = rng.randint(0, n)
    ln = rng.randint(0, n - st)
    return [fin(s)], {"dim": d, "start": st, "len": ln}, lambda x: [x.narrow(d, st, ln)]


@op("slice")
def _():
    s = rand_shape(min_rank=1)
    d = rdim(len(s), 0.0)
    n = s[d]
    st = rng.randint(0, n)
    en = rng.randint(st, n)
    step = rng.choice([1, 2, 3])
    idx = [slice(None)] * len(s)
    idx[d % len(s)] = slice(st, en, step)
    return [fin(s)], {"dim": d, "start": st, "end": en, "step": step}, lambda x: [x[tuple(idx)]]


@op("unfold")
def _():
    s = rand_shape(min_rank=1)
    d = rdim(len(s), 0.0)
    size = rng.randint(0, s[d])
    step = rng.randint(1, 3)
    return [fin(s)], {"dim": d, "size": size, "step": step}, lambda x: [x.unfold(d, size, step)]


@op("flip")
def _():
    s = rand_shape()
    dims = rdims(len(s)) if s else []
    return [fin(s)], {"dims": dims}, lambda x: [x.flip(dims)]


@op("roll")
def _():
    s = rand_shape(min_rank=1)
    k = rng.randint(1, len(s))
    dims = rng.sample(range(len(s)), k)
    shifts = [rng.randint(-5, 5) for _ in dims]
    return [fin(s)], {"shifts": shifts, "dims": dims}, lambda x: [x.roll(shifts, dims)]


@op("repeat")
def _():
    s = rand_shape(maxn=6)
    reps = [rng.randint(1, 2) for _ in s] + ([rng.randint(1, 3)] if rng.random() < 0.5 else [])
    if rng.random() < 0.2 and reps:
        reps[0] = 0
    return [fin(s)], {"reps": reps}, lambda x: [x.repeat(reps)]


@op("tile")
def _():
    s = rand_shape(maxn=6)
    reps = [rng.randint(1, 2) for _ in range(rng.randint(0, len(s) + 1))]
    return [fin(s)], {"reps": reps}, lambda x: [x.tile(reps)]


@op("repeat_interleave")
def _():
    s = rand_shape(maxn=12)
    r = rng.randint(0, 3)
    d = rdim(len(s), 0.0) if rng.random() < 0.7 else None
    return [fin(s)], {"repeats": r, "dim": d}, lambda x: [x.repeat_interleave(r, d)]


@op("cat")
def _():
    s = rand_shape(min_rank=1, maxn=12)
    d = rdim(len(s), 0.0)
    ins = []
    for _ in range(rng.randint(1, 3)):
        t = list(s)
        t[d] = rng.randint(0, 3)
        ins.append(fin(t))
    return ins, {"dim": d}, lambda *xs: [torch.cat(xs, d)]


@op("stack")
def _():
    s = rand_shape(maxn=12)
    d = rng.randint(-len(s) - 1, len(s))
    ins = [fin(s) for _ in range(rng.randint(1, 3))]
    return ins, {"dim": d}, lambda *xs: [torch.stack(xs, d)]


@op("split")
def _():
    s = rand_shape(min_rank=1)
    d = rdim(len(s), 0.0)
    size = rng.randint(1, 3)
    return [fin(s)], {"size": size, "dim": d}, lambda x: list(torch.split(x, size, d))


@op("split_with_sizes")
def _():
    s = rand_shape(min_rank=1)
    d = rdim(len(s), 0.0)
    n, sizes = s[d], []
    while sum(sizes) < n:
        sizes.append(rng.randint(0 if rng.random() < 0.2 else 1, n - sum(sizes)))
    if rng.random() < 0.05:
        sizes.append(1)
    return [fin(s)], {"sizes": sizes, "dim": d}, lambda x: list(torch.split(x, sizes, d))


@op("chunk")
def _():
    s = rand_shape(min_rank=1)
    d = rdim(len(s), 0.0)
    k = rng.randint(1, 4)
    return [fin(s)], {"chunks": k, "dim": d}, lambda x: list(torch.chunk(x, k, d))


@op("unbind")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    return [fin(s)], {"dim": d}, lambda x: list(torch.unbind(x, d))


@op("diagonal")
def _():
    s = rand_shape(min_rank=2)
    d1 = rdim(len(s), 0.0)
    d2 = rdim(len(s), 0.0)
    while len(s) > 1 and d2 % len(s) == d1 % len(s):
        d2 = rdim(len(s), 0.0)
    off = rng.randint(-2, 2)
    return [fin(s)], {"offset": off, "d1": d1, "d2": d2}, lambda x: [torch.diagonal(x, off, d1, d2)]


@op("tril")
def _():
    k = rng.randint(-2, 2)
    return [fin(rand_shape(min_rank=2))], {"k": k}, lambda x: [torch.tril(x, k)]


@op("triu")
def _():
    k = rng.randint(-2, 2)
    return [fin(rand_shape(min_rank=2))], {"k": k}, lambda x: [torch.triu(x, k)]


@op("squeeze")
def _():
    s = rand_shape()
    if rng.random() < 0.5:
        return [fin(s)], {"dims": "all"}, lambda x: [x.squeeze()]
    dims = rdims(len(s))
    return [fin(s)], {"dims": dims}, lambda x: [x.squeeze(tuple(dims))]


@op("unsqueeze")
def _():
    s = rand_shape()
    d = rng.randint(-len(s) - 1, len(s))
    return [fin(s)], {"dim": d}, lambda x: [x.unsqueeze(d)]


@op("movedim")
def _():
    s = rand_shape(min_rank=1)
    k = rng.randint(1, len(s))
    src = rng.sample(range(len(s)), k)
    dst = rng.sample(range(len(s)), k)
    return [fin(s)], {"src": src, "dst": dst}, lambda x: [torch.movedim(x, src, dst)]


@op("flatten")
def _():
    s = rand_shape()
    a = rdim(len(s), 0.0)
    b = rdim(len(s), 0.0)
    if len(s) > 0 and a % len(s) > b % len(s):
        a, b = b, a
    return [fin(s)], {"start": a, "end": b}, lambda x: [x.flatten(a, b)]


@op("as_strided")
def _():
    n = rng.randint(4, 12)
    size = rng.choice([[2, 2], [3], [2, 3], [2, 1, 2]])
    stride = [rng.randint(0, 3) for _ in size]
    off = rng.randint(0, 2)
    need = off + sum((a - 1) * b for a, b in zip(size, stride)) + 1
    n = max(n, need)
    x = fin([n], contiguous=True)
    return [x], {"size": size, "stride": stride, "offset": off}, \
        lambda x: [torch.as_strided(x, size, stride, off)]


# --- indexing -----------------------------------------------------------------------------------

def rand_index(n, shape, unique_dim=None):
    """Random int64 indices in [0, n) of `shape`; unique along `unique_dim` if given."""
    vals = [0] * numel(shape)
    if unique_dim is None:
        return [rng.randrange(n) if n else 0 for _ in vals]
    t = torch.zeros(shape, dtype=torch.int64)
    tm = t.movedim(unique_dim, -1).contiguous()
    flat = tm.reshape(-1, shape[unique_dim]) if shape[unique_dim] else tm.reshape(0, 0)
    for r in range(flat.shape[0]):
        flat[r] = torch.tensor(rng.sample(range(n), shape[unique_dim]))
    return tm.movedim(-1, unique_dim).contiguous().flatten().tolist()


@op("gather")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    isz = [rng.randint(1, x) for x in s]
    isz[d] = rng.randint(0, 4)
    return [fin(s), iin(isz, rand_index(s[d], isz))], {"dim": d}, lambda x, i: [torch.gather(x, d, i)]


@op("take_along_dim")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    isz = [rng.choice([1, x]) for x in s]
    isz[d] = rng.randint(1, 4)
    return [fin(s), iin(isz, rand_index(s[d], isz))], {"dim": d}, lambda x, i: [torch.take_along_dim(x, i, d)]


def scatter_setup(unique):
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    isz = [rng.randint(1, x) for x in s]
    isz[d] = rng.randint(0, s[d]) if unique else rng.randint(0, 4)
    # src has the index's shape: torch's backward refuses a larger src (its gradient would be
    # gathered at the index's shape)
    return s, d, isz, list(isz)


@op("scatter")
def _():
    s, d, isz, ssz = scatter_setup(True)
    idx = iin(isz, rand_index(s[d], isz, unique_dim=d))
    return [fin(s), idx, fin(ssz)], {"dim": d}, lambda x, i, y: [torch.scatter(x, d, i, y)]


@op("scatter_add")
def _():
    s, d, isz, ssz = scatter_setup(False)
    idx = iin(isz, rand_index(s[d], isz))
    return [fin(s), idx, fin(ssz)], {"dim": d}, lambda x, i, y: [torch.scatter_add(x, d, i, y)]


@op("scatter_reduce", notie=True)
def _():
    s, d, isz, ssz = scatter_setup(False)
    red = rng.choice(["sum", "mean", "amax", "amin", "prod"])
    inc = rng.random() < 0.5
    idx = iin(isz, rand_index(s[d], isz))
    dom = (-1.6, 1.6) if red == "prod" else None
    xs = [fin(s, dom, (0.0, 0.3, -0.3)), idx, fin(ssz, dom, (0.0, 0.3, -0.3))]
    return xs, {"dim": d, "reduce": red, "include_self": inc}, \
        lambda x, i, y: [torch.scatter_reduce(x, d, i, y, red, include_self=inc)]


@op("index_select")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    k = rng.randint(0, 4)
    return [fin(s), iin([k], rand_index(s[d], [k]))], {"dim": d}, lambda x, i: [torch.index_select(x, d, i)]


@op("index_add")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    k = rng.randint(0, 4)
    ssz = list(s)
    ssz[d] = k
    alpha = rng.choice([1.0, 2.0, -0.5])
    return [fin(s), iin([k], rand_index(s[d], [k])), fin(ssz)], {"dim": d, "alpha": alpha}, \
        lambda x, i, y: [torch.index_add(x, d, i, y, alpha=alpha)]


@op("index_copy")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    k = rng.randint(0, s[d])
    ssz = list(s)
    ssz[d] = k
    return [fin(s), iin([k], rng.sample(range(s[d]), k)), fin(ssz)], {"dim": d}, \
        lambda x, i, y: [torch.index_copy(x, d, i, y)]


@op("index_fill")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    d = rdim(len(s), 0.0)
    k = rng.randint(0, 3)
    v = rng.choice([0.5, -2.0])
    return [fin(s), iin([k], rand_index(s[d], [k]))], {"dim": d, "value": v}, \
        lambda x, i: [torch.index_fill(x, d, i, v)]


@op("index_put")
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    nidx = rng.randint(1, min(2, len(s)))
    acc = rng.random() < 0.5
    k = rng.randint(0, 4)
    if not acc:
        # distinct positions
        cand = [tuple(rng.randrange(s[j]) for j in range(nidx)) for _ in range(k)]
        pos = list(dict.fromkeys(cand))
        k = len(pos)
    else:
        pos = [tuple(rng.randrange(s[j]) for j in range(nidx)) for _ in range(k)]
    idx = [iin([k], [p[j] for p in pos]) for j in range(nidx)]
    vs = [k] + s[nidx:]
    if rng.random() < 0.3 and len(vs) > 1:
        vs = vs[1:]
    vals = fin(vs)

    def f(x, *r):
        return [torch.index_put(x, tuple(r[:nidx]), r[nidx], accumulate=acc)]
    return [fin(s)] + idx + [vals], {"nidx": nidx, "accumulate": acc}, f


@op("masked_fill")
def _():
    sa, sb = bcast_pair()
    v = rng.choice([0.5, -3.0])
    if numel(sb) > numel(sa):
        sa, sb = sb, sa
    return [fin(sa), bin_(sb)], {"value": v}, lambda x, m: [x.masked_fill(m, v)]


@op("masked_select")
def _():
    sa, sb = bcast_pair()
    return [fin(sa), bin_(sb)], {}, lambda x, m: [torch.masked_select(x, m)]


@op("masked_scatter")
def _():
    s = rand_shape()
    ms = s[rng.randint(0, len(s)):] if s else []
    m = bin_(ms)
    return [fin(s), m, fin([numel(s) + rng.randint(0, 2)])], {}, lambda x, m, y: [x.masked_scatter(m, y)]


@op("take")
def _():
    s = rand_shape(allow_empty=False)
    isz = rand_shape(maxn=8, allow_empty=True)
    return [fin(s), iin(isz, rand_index(numel(s), isz))], {}, lambda x, i: [torch.take(x, i)]


# --- linalg -------------------------------------------------------------------------------------

@op("mm", acc=True)
def _():
    n, k, m = rng.randint(0, 4), rng.randint(0, 4), rng.randint(0, 4)
    k2 = k if rng.random() > 0.05 else k + 1
    return [fin([n, k]), fin([k2, m])], {}, lambda a, b: [torch.mm(a, b)]


@op("bmm", acc=True)
def _():
    b, n, k, m = rng.randint(0, 3), rng.randint(1, 3), rng.randint(0, 3), rng.randint(1, 3)
    return [fin([b, n, k]), fin([b, k, m])], {}, lambda a, c: [torch.bmm(a, c)]


@op("matmul", acc=True)
def _():
    k = rng.randint(1, 3)
    kind = rng.choice(["vv", "mv", "vm", "mm", "bb", "bm", "mb"])
    n, m = rng.randint(1, 3), rng.randint(1, 3)
    bt = [rng.choice([1, 2])] if rng.random() < 0.5 else [2, 1]
    bt2 = [x if rng.random() < 0.5 else 1 for x in bt]
    sa = {"v": [k], "m": [n, k], "b": bt + [n, k]}[kind[0]]
    sb = {"v": [k], "m": [k, m], "b": bt2 + [k, m]}[kind[1]]
    return [fin(sa), fin(sb)], {}, lambda a, b: [torch.matmul(a, b)]


@op("addmm", acc=True)
def _():
    n, k, m = rng.randint(1, 3), rng.randint(0, 3), rng.randint(1, 3)
    beta, alpha = rng.choice([1.0, 0.5, 0.0]), rng.choice([1.0, -2.0])
    sc = rng.choice([[n, m], [m], [1, m], []])
    return [fin(sc), fin([n, k]), fin([k, m])], {"beta": beta, "alpha": alpha}, \
        lambda c, a, b: [torch.addmm(c, a, b, beta=beta, alpha=alpha)]


@op("baddbmm", acc=True)
def _():
    b, n, k, m = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
    beta, alpha = rng.choice([1.0, 0.5, 0.0]), rng.choice([1.0, -2.0])
    sc = rng.choice([[b, n, m], [n, m], [m]])
    return [fin(sc), fin([b, n, k]), fin([b, k, m])], {"beta": beta, "alpha": alpha}, \
        lambda c, a, d: [torch.baddbmm(c, a, d, beta=beta, alpha=alpha)]


EINSUM = [
    ("ij,jk->ik", [["i", "j"], ["j", "k"]]),
    ("ij,ij->i", [["i", "j"], ["i", "j"]]),
    ("bij,bjk->bik", [["b", "i", "j"], ["b", "j", "k"]]),
    ("i,j->ij", [["i"], ["j"]]),
    ("ii->i", [["i", "i"]]),
    ("ij->ji", [["i", "j"]]),
    ("ij,jk,kl->il", [["i", "j"], ["j", "k"], ["k", "l"]]),
    ("...ij,...jk->...ik", [["b", "i", "j"], ["j", "k"]]),
    ("ijk->", [["i", "j", "k"]]),
]


@op("einsum", acc=True)
def _():
    eq, specs = rng.choice(EINSUM)
    sizes = {c: rng.randint(1, 3) for c in "ijklb"}
    ins = [fin([sizes[c] for c in sp]) for sp in specs]
    return ins, {"eq": eq}, lambda *xs: [torch.einsum(eq, *xs)]


@op("outer")
def _():
    return [fin([rng.randint(0, 4)]), fin([rng.randint(1, 4)])], {}, lambda a, b: [torch.outer(a, b)]


@op("dot", acc=True)
def _():
    n = rng.randint(0, 5)
    return [fin([n]), fin([n if rng.random() > 0.05 else n + 1])], {}, lambda a, b: [torch.dot(a, b)]


@op("tensordot", acc=True)
def _():
    k = rng.randint(0, 2)
    sa = [rng.randint(1, 3) for _ in range(rng.randint(k, 3))]
    sb = sa[len(sa) - k:] + [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    return [fin(sa), fin(sb)], {"dims": k}, lambda a, b: [torch.tensordot(a, b, k)]


@op("kron")
def _():
    sa = [rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
    sb = [rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
    return [fin(sa), fin(sb)], {}, lambda a, b: [torch.kron(a, b)]


def wellcond(batch, n):
    """A well-conditioned matrix (random plus 3I): base values."""
    vals = []
    for _ in range(numel(batch)):
        for i in range(n):
            for j in range(n):
                v = fval((-0.9, 0.9))
                vals.append(round(v + (3.0 if i == j else 0.0), 3))
    return vals


def spd(batch, n):
    out = []
    for _ in range(numel(batch)):
        m = torch.tensor([[fval((-1, 1)) for _ in range(n)] for _ in range(n)], dtype=torch.float64)
        a = m @ m.T + n * torch.eye(n, dtype=torch.float64)
        a = torch.round(a * 1000) / 1000
        out += a.flatten().tolist()
    return out


@op("det", acc=True)
def _():
    b, n = rng.choice([[], [2]]), rng.randint(1, 4)
    return [fin(b + [n, n], vals=wellcond(b, n))], {}, lambda a: [torch.linalg.det(a)]


@op("inverse", acc=True)
def _():
    b, n = rng.choice([[], [2]]), rng.randint(1, 4)
    return [fin(b + [n, n], vals=wellcond(b, n))], {}, lambda a: [torch.linalg.inv(a)]


@op("solve", acc=True)
def _():
    b, n = rng.choice([[], [2]]), rng.randint(1, 4)
    rhs = rng.choice([b + [n, rng.randint(1, 3)], [n, 2], [n]] if not b else [b + [n, 2], [n, 1]])
    return [fin(b + [n, n], vals=wellcond(b, n)), fin(rhs)], {}, lambda a, y: [torch.linalg.solve(a, y)]


@op("cholesky", acc=True)
def _():
    b, n = rng.choice([[], [2]]), rng.randint(1, 4)
    up = rng.random() < 0.3
    return [fin(b + [n, n], vals=spd(b, n))], {"upper": up}, lambda a: [torch.linalg.cholesky(a, upper=up)]


@op("qr", acc=True)
def _():
    n = rng.randint(1, 4)
    m = rng.randint(n, 4)
    mode = rng.choice(["reduced", "reduced", "reduced", "complete", "r"])
    if mode == "complete":
        m = n
    b = rng.choice([[], [2]])
    return [fin(b + [m, n])], {"mode": mode}, lambda a: list(torch.linalg.qr(a, mode))


@op("trace")
def _():
    return [fin([rng.randint(1, 4), rng.randint(1, 4)])], {}, lambda a: [torch.trace(a)]


@op("cross")
def _():
    s = rand_shape(maxn=8)
    d = rng.randrange(len(s) + 1)
    s = s[:d] + [3] + s[d:]
    return [fin(s), fin(s)], {"dim": d}, lambda a, b: [torch.linalg.cross(a, b, dim=d)]


# --- nn-ish ---------------------------------------------------------------------------------------

@op("layer_norm", acc=True)
def _():
    s = rand_shape(min_rank=1, allow_empty=False)
    k = rng.randint(1, len(s))
    ns = s[len(s) - k:]
    aff = rng.choice(["none", "w", "wb"])
    ins = [fin(s)]
    if aff != "none":
        ins.append(fin(ns))
    if aff == "wb":
        ins.append(fin(ns))
    eps = 1e-5

    def f(x, *wb):
        w = wb[0] if wb else None
        bb = wb[1] if len(wb) > 1 else None
        return [torch.nn.functional.layer_norm(x, ns, w, bb, eps)]
    return ins, {"ns": ns, "affine": aff}, f


@op("group_norm", acc=True)
def _():
    g = rng.randint(1, 2)
    c = g * rng.randint(1, 2)
    s = [rng.randint(1, 2), c] + [rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
    aff = rng.random() < 0.6
    ins = [fin(s)] + ([fin([c]), fin([c])] if aff else [])

    def f(x, *wb):
        return [torch.nn.functional.group_norm(x, g, wb[0] if wb else None, wb[1] if wb else None, 1e-5)]
    return ins, {"groups": g, "affine": aff}, f


@op("conv1d", acc=True)
def _():
    groups = rng.choice([1, 1, 2])
    cin, cout = groups * rng.randint(1, 2), groups * rng.randint(1, 2)
    k, L = rng.randint(1, 3), rng.randint(3, 6)
    stride, pad, dil = rng.randint(1, 2), rng.randint(0, 1), rng.randint(1, 2)
    bias = rng.random() < 0.5
    ins = [fin([rng.randint(1, 2), cin, L]), fin([cout, cin // groups, k])] + ([fin([cout])] if bias else [])

    def f(x, w, *b):
        return [torch.nn.functional.conv1d(x, w, b[0] if b else None, stride, pad, dil, groups)]
    return ins, {"stride": stride, "padding": pad, "dilation": dil, "groups": groups, "bias": bias}, f


@op("conv2d", acc=True)
def _():
    groups = rng.choice([1, 1, 2])
    cin, cout = groups, groups * rng.randint(1, 2)
    k = rng.randint(1, 2)
    H, W = rng.randint(2, 4), rng.randint(2, 4)
    stride, pad, dil = rng.randint(1, 2), rng.randint(0, 1), 1
    bias = rng.random() < 0.5
    ins = [fin([1, cin, H, W]), fin([cout, cin // groups, k, k])] + ([fin([cout])] if bias else [])

    def f(x, w, *b):
        return [torch.nn.functional.conv2d(x, w, b[0] if b else None, stride, pad, dil, groups)]
    return ins, {"stride": stride, "padding": pad, "dilation": dil, "groups": groups, "bias": bias}, f


@op("linear", acc=True)
def _():
    s = rand_shape(maxn=12)
    if not s:
        s = [rng.randint(1, 3)]
    o = rng.randint(1, 3)
    bias = rng.random() < 0.5
    ins = [fin(s), fin([o, s[-1]])] + ([fin([o])] if bias else [])
    return ins, {"bias": bias}, lambda x, w, *b: [torch.nn.functional.linear(x, w, b[0] if b else None)]


@op("embedding", acc=True)
def _():
    v, d = rng.randint(2, 5), rng.randint(1, 3)
    isz = rand_shape(maxn=8)
    pidx = rng.choice([None, 0, -1])
    return [iin(isz, rand_index(v, isz)), fin([v, d])], {"padding_idx": pidx}, \
        lambda i, w: [torch.nn.functional.embedding(i, w, pidx)]


@op("pad")
def _():
    mode = rng.choice(["constant", "constant", "reflect", "replicate", "circular"])
    if mode == "constant":
        s = rand_shape(min_rank=1)
        n = rng.randint(1, len(s))
        pads = []
        for j in range(n):
            sz = s[len(s) - 1 - j]
            pads += [rng.randint(-min(1, sz), 2), rng.randint(0, 2)]
        v = rng.choice([0.0, 1.5])
        return [fin(s)], {"pad": pads, "mode": mode, "value": v}, \
            lambda x: [torch.nn.functional.pad(x, pads, mode, v)]
    nd = rng.randint(1, 2)
    s = [rng.randint(1, 2)] * rng.randint(1, 2) + [rng.randint(2, 4) for _ in range(nd)]
    pads = []
    for j in range(nd):
        sz = s[len(s) - 1 - j]
        lim = sz - 1 if mode == "reflect" else sz
        pads += [rng.randint(0, lim), rng.randint(0, lim)]
    return [fin(s)], {"pad": pads, "mode": mode, "value": None}, \
        lambda x: [torch.nn.functional.pad(x, pads, mode)]


@op("cdist", acc=True)
def _():
    m = rng.randint(1, 3)
    b = rng.choice([[], [2]])
    p = rng.choice([1.0, 2.0, 3.0])
    return [fin(b + [rng.randint(1, 3), m]), fin(b + [rng.randint(1, 3), m])], {"p": p}, \
        lambda a, c: [torch.cdist(a, c, p, compute_mode="donot_use_mm_for_euclid_dist")]


ACC = {"sum", "mean", "prod", "std", "var", "norm", "logsumexp", "cumsum", "cumprod", "logcumsumexp",
       "scatter_add", "scatter_reduce", "index_add", "index_put", "softmax", "log_softmax", "repeat",
       "tile", "expand", "repeat_interleave", "as_strided", "unfold", "mm", "bmm", "matmul", "addmm",
       "baddbmm", "einsum", "outer", "dot", "tensordot", "kron", "det", "inverse", "solve", "cholesky",
       "qr", "trace", "cross", "layer_norm", "group_norm", "conv1d", "conv2d", "linear", "embedding",
       "cdist", "pad", "float_power", "lerp", "take", "gather", "take_along_dim", "index_select"}


# ----------------------------------------------------------------------------------------------

def lit(v, f32=False):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = ("%.9g" % v) if f32 else repr(v)
    if "e" in r and "." not in r.split("e")[0]:
        m, e = r.split("e")
        r = m + ".0e" + e
    return r if ("." in r or "e" in r or "inf" in r) else r + ".0"


def g_lit(t):
    if t is None:
        return "None"
    t = t.detach()
    if t._is_zerotensor():
        t = torch.zeros(t.shape, dtype=t.dtype)
    f32 = t.dtype == torch.float32
    shape = ", ".join(str(s) for s in t.shape)
    vals = ", ".join(lit(v, f32) for v in t.double().flatten().tolist())
    return f"(&[{shape}], &[{vals}])"


def rvals(shape):
    return [round(rng.gauss(0, 1), 3) for _ in range(numel(shape))]


def build(i):
    t = torch.tensor(i.vals, dtype=torch.float64).reshape(i.base)
    if i.dt == "bool":
        t = t != 0
    else:
        t = t.to(DT[i.dt])
    if i.dt not in ("f32", "f64"):
        return t
    if i.grad and i.of_base:
        t.requires_grad_(True)
        i.leaf = t
        return apply_layout(t, i.ops)
    t = apply_layout(t, i.ops).detach()
    if i.grad:
        t.requires_grad_(True)
        i.leaf = t
    return t


def short_err(e):
    msg = str(e).strip().split("\n")[0]
    return msg[:300]


def valid(name, ins, args, fn):
    """False where the sampled point is a discontinuity of the op (fmod/remainder at x/y integer)."""
    if name not in ("fmod", "remainder"):
        return True
    xs = [build_plain(i) for i in ins]
    y = xs[1] if len(xs) > 1 else torch.tensor(float(args["scalar"]), dtype=torch.float64)
    try:
        q = xs[0].double() / y.double()
    except RuntimeError:
        return True
    return bool(((q - q.round()).abs() > 1e-3).all())


def build_plain(i):
    t = torch.tensor(i.vals, dtype=torch.float64).reshape(i.base)
    return apply_layout(t, i.ops)


def run_case(cid, name):
    C.dt = "f32" if rng.random() < 0.2 else "f64"
    C.notie = name in NOTIE
    for _ in range(50):
        C.used = set()
        ins, args, fn = OPS[name]()
        if valid(name, ins, args, fn):
            break
    floats = [i for i in ins if i.dt in ("f32", "f64")]
    for i in floats:
        i.grad = rng.random() < 0.6
    if floats and not any(i.grad for i in floats):
        rng.choice(floats).grad = True
    for i in ins:
        if i.dt in ("f32", "f64") and not i.ops:
            i.of_base = False
    second = C.dt == "f64" and rng.random() < 0.25
    case = {"id": cid, "op": name, "args": fmt_args(args), "ins": ins, "error": None, "outs": [],
            "sel": [], "ups": [], "grads": [], "vs": [], "second": None, "dt": C.dt}
    xs = [build(i) for i in ins]
    leaves = [i.leaf for i in ins if i.grad]
    try:
        outs = fn(*xs)
    except Exception as e:  # noqa: BLE001
        case["error"] = "forward: " + short_err(e)
        return case
    case["outs"] = outs
    sel = list(range(len(outs)))
    if len(outs) > 1:
        sel = sorted(rng.sample(sel, rng.randint(1, len(sel))))
    case["sel"] = sel
    ups = []
    for k in sel:
        ups.append(torch.tensor(rvals(list(outs[k].shape)), dtype=torch.float64).reshape(outs[k].shape)
                   .to(outs[k].dtype))
    case["ups"] = ups
    try:
        grads = torch.autograd.grad([outs[k] for k in sel], leaves, ups, allow_unused=True,
                                    create_graph=second)
    except Exception as e:  # noqa: BLE001
        case["error"] = "backward: " + short_err(e)
        case["outs"] = []
        return case
    case["grads"] = list(grads)
    if second:
        vs = [torch.tensor(rvals(list(l.shape)), dtype=torch.float64).reshape(l.shape) for l in leaves]
        case["vs"] = vs
        terms = [(g * v).sum() for g, v in zip(grads, vs) if g is not None and g.requires_grad]
        if not terms:
            case["second"] = [None] * len(leaves)
        else:
            s = terms[0]
            for t in terms[1:]:
                s = s + t
            try:
                case["second"] = list(torch.autograd.grad(s, leaves, allow_unused=True))
            except Exception as e:  # noqa: BLE001
                case["second"] = None
                case["vs"] = []
                case["second_error"] = short_err(e)
    return case


def in_lit(i):
    base = ", ".join(str(s) for s in i.base)
    vals = ", ".join(lit(v) for v in i.vals)
    return (f'In {{ dtype: "{i.dt}", base: &[{base}], vals: &[{vals}], layout: "{i.layout}", '
            f'grad: {"true" if i.grad else "false"}, of_base: {"true" if i.of_base else "false"} }}')


def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def main():
    names = list(OPS)
    order = []
    for _ in range(ROUNDS):
        r = list(names)
        rng.shuffle(r)
        order += r
    cases = []
    for cid, name in enumerate(order):
        cases.append(run_case(cid, name))
    lines = [
        "//! Generated by autograd/tests/make_grad_fuzz_golden.py from torch "
        f"{torch.__version__}; do not edit.",
        "",
        "#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]",
        "",
        "/// A tensor literal: shape and row-major values.",
        "pub type G = (&'static [usize], &'static [f64]);",
        "",
        "/// One input of a case.",
        "pub struct In {",
        "    /// `f64`, `f32`, `i64` or `bool`.",
        "    pub dtype: &'static str,",
        "    /// The contiguous base tensor's shape.",
        "    pub base: &'static [usize],",
        "    /// The base's row-major values.",
        "    pub vals: &'static [f64],",
        "    /// The layout ops applied to the base, `|`-separated (`t a,b`, `p perm`, `s d,start,end,step`,",
        "    /// `e sizes`).",
        "    pub layout: &'static str,",
        "    /// Whether the input requires grad.",
        "    pub grad: bool,",
        "    /// Whether the leaf is the base (the layout ops are recorded) rather than the detached view.",
        "    pub of_base: bool,",
        "}",
        "",
        "/// One case: an op on its inputs, and what torch computed.",
        "pub struct Case {",
        "    /// The case's index.",
        "    pub id: usize,",
        "    /// The op's name (as the replay's `run` reads it).",
        "    pub op: &'static str,",
        "    /// The op's arguments, `key=value` pairs separated by `;`.",
        "    pub args: &'static str,",
        "    /// The inputs.",
        "    pub inputs: &'static [In],",
        "    /// torch's error (`forward: ...` or `backward: ...`), where it raised.",
        "    pub error: Option<&'static str>,",
        "    /// torch's outputs (all of them) and their dtype.",
        "    pub outputs: &'static [G],",
        "    /// The dtype of the outputs (`f32` or `f64`).",
        "    pub out_dtype: &'static str,",
        "    /// The outputs differentiated (indices into `outputs`).",
        "    pub sel: &'static [usize],",
        "    /// The upstream gradients of the selected outputs.",
        "    pub ups: &'static [G],",
        "    /// The gradients of the inputs requiring grad, in order (None where torch gives None).",
        "    pub grads: &'static [Option<G>],",
        "    /// Second order: one `v_i` per input requiring grad (empty when not a second-order case).",
        "    pub vs: &'static [G],",
        "    /// Second order: the gradients of `sum_i (first_i * v_i).sum()` over the first-order",
        "    /// gradients that require grad.",
        "    pub second: Option<&'static [Option<G>]>,",
        "}",
        "",
        "/// The ops whose results sum many terms: their tolerance scales with the tensor's magnitude.",
        "pub const ACCUMULATING: &[&str] = &[" + ", ".join(f'"{n}"' for n in sorted(ACC)) + "];",
        "",
        "/// The cases.",
        "pub const CASES: &[Case] = &[",
    ]
    errors = 0
    seconds = 0
    for c in cases:
        if c["error"]:
            errors += 1
        if c["second"] is not None:
            seconds += 1
        outs = c["outs"]
        odt = NAME[outs[0].dtype] if outs else ("f32" if c["dt"] == "f32" else "f64")
        lines += [
            "    Case {",
            f"        id: {c['id']},",
            f'        op: "{c["op"]}",',
            f'        args: "{esc(c["args"])}",',
            "        inputs: &[" + ", ".join(in_lit(i) for i in c["ins"]) + "],",
            "        error: " + (f'Some("{esc(c["error"])}")' if c["error"] else "None") + ",",
            "        outputs: &[" + ", ".join(g_lit(o) for o in outs) + "],",
            f'        out_dtype: "{odt}",',
            "        sel: &[" + ", ".join(str(k) for k in c["sel"]) + "],",
            "        ups: &[" + ", ".join(g_lit(u) for u in c["ups"]) + "],",
            "        grads: &[" + ", ".join(("Some(" + g_lit(g) + ")") if g is not None else "None"
                                          for g in c["grads"]) + "],",
            "        vs: &[" + ", ".join(g_lit(v) for v in c["vs"]) + "],",
            "        second: " + ("None" if c["second"] is None else
                                  "Some(&[" + ", ".join(("Some(" + g_lit(g) + ")") if g is not None else "None"
                                                        for g in c["second"]) + "])") + ",",
            "    },",
        ]
    lines.append("];")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote", OUT, len(cases), "cases,", errors, "torch errors,", seconds, "second-order,", len(names), "ops")
    big = [(c["id"], c["op"]) for c in cases for o in c["outs"] if o.numel() > MAXN]
    if big:
        print("large outputs:", big)
    serr = [(c["id"], c["op"], c.get("second_error")) for c in cases if c.get("second_error")]
    for s in serr:
        print("second-order error:", s)
    for c in cases:
        if c["error"]:
            print("torch error:", c["id"], c["op"], c["args"], c["error"][:120])


if __name__ == "__main__":
    main()

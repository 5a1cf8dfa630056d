"""Writes tensor/tests/cpu/op_fuzz_golden.rs: a seeded random fuzz of ~80 tensor ops against torch.

Each case records its inputs (dtype, base shape, base values, then the layout ops that make the
input non-contiguous: `t a,b` transpose, `s dim,start,end,step` slice, `e sizes` expand,
`p perm` permute), the op's arguments as `key=value` pairs, and torch's outputs (or None where
torch raised). The replay test is tensor/tests/cpu/op_fuzz.rs.

Run with a torch install: python tensor/tests/make_op_fuzz_golden.py
"""
import math
import os
import random

import torch

OUT = os.path.join(os.path.dirname(__file__), "cpu", "op_fuzz_golden.rs")
SEED = 33
N_CASES = 700
rng = random.Random(SEED)
torch.manual_seed(SEED)

DT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
      "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8, "i8": torch.int8, "bool": torch.bool,
      "i16": torch.int16}
NAME = {v: k for k, v in DT.items()}
FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["i32", "i64", "u8", "i8"]
ALL = FLOATS + INTS + ["bool"]
SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e4, -1e4, 1e-4, 65504.0, 1e30, -3e38, 1e-40]


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = repr(v)
    return r if ("." in r or "e" in r) else r + ".0"


def rand_val(dt, special):
    if dt in FLOATS:
        if special and rng.random() < 0.18:
            return rng.choice(SPECIAL)
        k = rng.random()
        if k < 0.15:
            return float(rng.randint(-3, 3))
        return round(rng.gauss(0, 2) * 16) / 16
    if dt == "bool":
        return float(rng.random() < 0.5)
    lo, hi = {"u8": (0, 255), "i8": (-128, 127), "i32": (-1000, 1000), "i64": (-1000, 1000), "i16": (-300, 300)}[dt]
    if rng.random() < 0.6:
        lo, hi = max(lo, -9), min(hi, 9)
    if dt in ("i32", "i64") and rng.random() < 0.04:
        return float(rng.choice([2 ** 31 - 1, -2 ** 31]))
    return float(rng.randint(lo, hi))


def rand_shape(max_rank=3, allow_empty=True):
    r = rng.choice([0, 1, 1, 2, 2, 2, 3, 3][: max_rank * 2 + 2])
    shape = []
    for _ in range(r):
        k = rng.random()
        if allow_empty and k < 0.05:
            shape.append(0)
        elif k < 0.25:
            shape.append(1)
        else:
            shape.append(rng.randint(2, 4))
    return shape


class In:
    def __init__(self, dt, base, vals, layout, t):
        self.dt, self.base, self.vals, self.layout, self.t = dt, base, vals, layout, t


def make_input(dt, shape, special=True, vals=None, layout=None, contiguous=False):
    """A tensor of logical `shape`, possibly built as a non-contiguous view."""
    rank = len(shape)
    kind = "c" if contiguous else (layout or rng.choice(["c", "c", "t", "s", "e", "p"]))
    ops = []
    base = list(shape)
    if kind == "t" and rank >= 2:
        a, b = rng.sample(range(rank), 2)
        base[a], base[b] = base[b], base[a]
        ops.append(("t", [a, b]))
    elif kind == "p" and rank >= 3:
        perm = list(range(rank))
        rng.shuffle(perm)
        inv = [perm.index(i) for i in range(rank)]
        base = [shape[inv[i]] for i in range(rank)]
        # x.permute(perm) has dims base[perm[i]] == shape[i]
        base = [0] * rank
        for i in range(rank):
            base[perm[i]] = shape[i]
        ops.append(("p", perm))
    elif kind == "s" and rank >= 1:
        d = rng.randrange(rank)
        step = rng.choice([1, 2, 3])
        start = rng.randint(0, 2)
        n = shape[d]
        end = start + (n - 1) * step + 1 if n > 0 else start
        base[d] = end + rng.randint(0, 2)
        ops.append(("s", [d, start, end, step]))
    elif kind == "e" and rank >= 1 and vals is None:
        base = [1 if (s != 0 and rng.random() < 0.5) else s for s in shape]
        lead = rng.randint(0, min(1, rank - 1)) if rank > 1 and base[0] == 1 else 0
        base = base[lead:]
        if base != list(shape):
            ops.append(("e", list(shape)))
    n = 1
    for s in base:
        n *= s
    if vals is None:
        vals = [rand_val(dt, special) for _ in range(n)]
    else:
        assert len(vals) == n, (len(vals), n, base, shape)
    t = torch.tensor(vals, dtype=torch.float64).reshape(base)
    t = t.to(DT[dt]) if dt != "bool" else (t != 0)
    bvals = t.double().flatten().tolist()
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
    assert list(t.shape) == list(shape), (t.shape, shape, ops)
    layout = "|".join(f"{op} " + ",".join(str(x) for x in a) for op, a in ops)
    return In(dt, base, bvals, layout, t)


def bcast_pair(max_rank=3):
    s = rand_shape(max_rank)
    k = rng.random()
    if k < 0.4:
        return s, list(s)
    o = [x if rng.random() < 0.6 else 1 for x in s]
    if o and rng.random() < 0.3:
        o = o[rng.randint(0, len(o)):]
    if rng.random() < 0.5:
        return s, o
    return o, s


def pick(ok, wild=0.08):
    return rng.choice(ALL) if rng.random() < wild else rng.choice(ok)


def dims_of(rank, allow_none=True):
    if rank == 0:
        return rng.choice([[], [0], [-1]])
    k = rng.randint(1 if not allow_none else 0, rank)
    return sorted(rng.sample(range(rank), k)) if rng.random() < 0.8 else [-1]


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
# op generators: each returns (inputs, args, fn(torch inputs) -> tensor or list of tensors)

BINARY = {
    "add": (torch.add, ALL), "sub": (torch.sub, FLOATS + INTS), "mul": (torch.mul, ALL),
    "div": (torch.div, FLOATS + INTS), "pow": (torch.pow, FLOATS + INTS), "fmod": (torch.fmod, FLOATS + INTS),
    "remainder": (torch.remainder, FLOATS + INTS), "floor_divide": (torch.floor_divide, FLOATS + INTS),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), FLOATS + INTS),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), FLOATS + INTS),
    "atan2": (torch.atan2, FLOATS + INTS), "hypot": (torch.hypot, FLOATS), "copysign": (torch.copysign, FLOATS + INTS),
    "maximum": (torch.maximum, ALL), "minimum": (torch.minimum, ALL), "fmax": (torch.fmax, FLOATS + INTS),
    "fmin": (torch.fmin, FLOATS + INTS), "eq": (torch.eq, ALL), "ne": (torch.ne, ALL), "lt": (torch.lt, ALL),
    "le": (torch.le, ALL), "gt": (torch.gt, ALL), "ge": (torch.ge, ALL),
    "bitwise_and": (torch.bitwise_and, INTS + ["bool"]), "bitwise_or": (torch.bitwise_or, INTS + ["bool"]),
    "bitwise_xor": (torch.bitwise_xor, INTS + ["bool"]),
    "bitwise_left_shift": (torch.bitwise_left_shift, INTS), "bitwise_right_shift": (torch.bitwise_right_shift, INTS),
}
SCALAR_OK = {"add", "sub", "mul", "div", "pow", "fmod", "remainder", "floor_divide", "eq", "ne", "lt", "le", "gt",
             "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
             "div_trunc", "div_floor", "copysign"}


def gen_binary(op):
    fn, ok = BINARY[op]
    da = pick(ok)
    db = da if rng.random() < 0.65 else pick(ok)
    sa, sb = bcast_pair()
    a = make_input(da, sa)
    args = {}
    if op in SCALAR_OK and rng.random() < 0.2:
        if da in FLOATS and rng.random() < 0.7:
            s = rng.choice([2.5, -0.5, 0.0, 3.0, -2.0, float("inf")])
            args = {"scalar": s, "kind": "f"}
        else:
            s = rng.choice([2, -3, 0, 1, 7]) if "shift" not in op else rng.choice([0, 1, 3, 9, 40])
            args = {"scalar": float(s), "kind": "i"}
        sv = s if args["kind"] == "f" else int(s)
        return [a], args, lambda x: fn(x, sv)
    if "shift" in op:
        n = 1
        for x in sb:
            n *= x
        vals = [float(rng.choice([0, 1, 2, 3, 7, 8, 15, 31, 33, 63, 64, 70])) for _ in range(n)]
        b = make_input(db, sb, vals=[min(v, 127) for v in vals], contiguous=True)
    else:
        b = make_input(db, sb)
    return [a, b], args, lambda x, y: fn(x, y)


UNARY = {
    "abs": torch.abs, "neg": torch.neg, "sign": torch.sign, "floor": torch.floor, "ceil": torch.ceil,
    "trunc": torch.trunc, "frac": torch.frac, "round": torch.round, "sqrt": torch.sqrt, "exp": torch.exp,
    "log": torch.log, "sigmoid": torch.sigmoid, "reciprocal": torch.reciprocal, "expm1": torch.expm1,
    "log1p": torch.log1p, "sin": torch.sin, "isnan": torch.isnan, "bitwise_not": torch.bitwise_not,
}


def gen_unary(op):
    ok = INTS + ["bool"] if op == "bitwise_not" else ALL
    a = make_input(pick(ok), rand_shape())
    return [a], {}, lambda x: UNARY[op](x)


def gen_round_decimals(op):
    a = make_input(pick(FLOATS), rand_shape())
    d = rng.choice([-2, -1, 0, 1, 2, 3])
    return [a], {"decimals": d}, lambda x: torch.round(x, decimals=d)


def gen_nan_to_num(op):
    a = make_input(pick(FLOATS + INTS), rand_shape())
    args = {"nan": rng.choice([None, 0.0, 7.5]), "posinf": rng.choice([None, 100.0, 1e5]),
            "neginf": rng.choice([None, -100.0, -1e5])}
    return [a], args, lambda x: torch.nan_to_num(x, nan=args["nan"] if args["nan"] is not None else 0.0,
                                                 posinf=args["posinf"], neginf=args["neginf"])


def gen_logit(op):
    dt = pick(FLOATS + INTS)
    shape = rand_shape()
    n = 1
    for x in shape:
        n *= x
    if dt in FLOATS:
        vals = [rand_val(dt, True) if rng.random() < 0.3 else round(rng.random() * 64) / 64 for _ in range(n)]
        a = make_input(dt, shape, vals=vals, contiguous=True)
    else:
        a = make_input(dt, shape)
    eps = rng.choice([None, 0.0, 0.1, 1e-6])
    return [a], {"eps": eps}, lambda x: torch.logit(x, eps=eps)


def gen_lerp(op):
    dt = pick(FLOATS)
    sa, sb = bcast_pair()
    a, b = make_input(dt, sa), make_input(dt if rng.random() < 0.9 else pick(FLOATS), sb)
    if rng.random() < 0.5:
        w = rng.choice([0.0, 0.25, 0.5, 1.0, 1.5, -0.5])
        return [a, b], {"w": w}, lambda x, y: torch.lerp(x, y, w)
    c = make_input(dt, rng.choice([sa, sb, [] if True else sa]))
    return [a, b, c], {}, lambda x, y, z: torch.lerp(x, y, z)


def gen_clamp(op):
    dt = pick(FLOATS + INTS)
    s = rand_shape()
    a = make_input(dt, s)
    mode = rng.choice(["tt", "tn", "nt", "ss", "sn"])
    ins = [a]
    args = {"mode": mode}
    if mode in ("tt", "tn", "nt"):
        for ch in mode:
            if ch == "t":
                bs = list(s[rng.randint(0, len(s)):]) if s else []
                ins.append(make_input(dt if rng.random() < 0.85 else pick(FLOATS + INTS), bs, special=False))

        def f(x, *b):
            it = iter(b)
            lo = next(it) if mode[0] == "t" else None
            hi = next(it) if mode[1] == "t" else None
            return torch.clamp(x, lo, hi)
        return ins, args, f
    lo = rng.choice([-1.5, 0.0, -2.0, 1.0])
    hi = None if mode == "sn" else rng.choice([0.5, 2.0, -3.0])
    if dt in INTS:
        lo = float(int(lo))
        hi = None if hi is None else float(int(hi))
    args.update({"lo": lo, "hi": hi})
    lo_v = int(lo) if dt in INTS else lo
    hi_v = None if hi is None else (int(hi) if dt in INTS else hi)
    return ins, args, lambda x: torch.clamp(x, lo_v, hi_v)


def gen_where(op):
    sa, sb = bcast_pair()
    c = make_input("bool", sa)
    d = pick(ALL)
    a = make_input(d, sb)
    b = make_input(d if rng.random() < 0.8 else pick(ALL), sb)
    return [c, a, b], {}, lambda c, x, y: torch.where(c, x, y)


CAST_SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 300.0, -1.0, -129.5, 255.9, 1e10, -1e10, 2.5, -2.5,
                3.5, 65504.0, 70000.0, 4e9, -3e9, 1e-8, 0.5, 128.0, 2147483647.0, -2147483648.0, 1e19, 9.3e18]


def gen_cast(op):
    src = rng.choice(ALL + ["i16"])
    dst = rng.choice(ALL + ["i16"])
    s = rand_shape(allow_empty=False)
    n = 1
    for x in s:
        n *= x
    if src in FLOATS and rng.random() < 0.8:
        vals = [rng.choice(CAST_SPECIAL) if rng.random() < 0.7 else rand_val(src, False) for _ in range(n)]
        a = make_input(src, s, vals=vals, layout="c")
    else:
        a = make_input(src, s)
    return [a], {"to": dst}, lambda x: x.to(DT[dst])


def red_input(ok, special_p=True):
    return make_input(pick(ok), rand_shape(), special=special_p and rng.random() < 0.4)


def gen_reduce(op):
    if op in ("sum", "prod", "amax", "amin", "count_nonzero", "all_dim", "any_dim"):
        a = red_input(ALL)
    else:
        a = red_input(FLOATS + INTS)
    r = a.t.dim()
    dims = dims_of(r)
    keep = rng.random() < 0.4
    args = {"dims": dims, "keepdim": keep}
    if op == "sum":
        f = (lambda x: torch.sum(x, dim=dims, keepdim=keep)) if dims else (lambda x: torch.sum(x))
    elif op == "prod":
        d = dims[0] if dims else None
        args = {"dims": [d] if d is not None else [], "keepdim": keep}
        f = (lambda x: torch.prod(x, dim=d, keepdim=keep)) if d is not None else (lambda x: torch.prod(x))
    elif op == "mean":
        f = (lambda x: torch.mean(x, dim=dims, keepdim=keep)) if dims else (lambda x: torch.mean(x))
    elif op in ("std", "var"):
        c = rng.choice([0, 1, 2, 0.5])
        args["correction"] = float(c)
        g = getattr(torch, op)
        f = lambda x: g(x, dim=dims if dims else None, correction=c, keepdim=keep)
    elif op == "norm":
        p = rng.choice([1.0, 2.0, 3.0, 0.0, float("inf"), float("-inf"), 0.5])
        args["p"] = p
        f = lambda x: torch.linalg.vector_norm(x, ord=p, dim=dims if dims else None, keepdim=keep)
    elif op == "logsumexp":
        # torch 2.15's logsumexp(dim=()) fails inside ("output with shape [] doesn't match the
        # broadcast shape [1, 1]"); empty dims reduce everything, as sum's do, so ask for that.
        f = lambda x: torch.logsumexp(x, dim=dims if dims else tuple(range(x.dim())), keepdim=keep)
    elif op in ("amax", "amin"):
        g = getattr(torch, op)
        f = lambda x: g(x, dim=dims, keepdim=keep)
    elif op == "count_nonzero":
        args = {"dims": dims}
        f = lambda x: torch.count_nonzero(x, dim=dims) if dims else torch.count_nonzero(x)
    elif op in ("all_dim", "any_dim"):
        g = torch.all if op == "all_dim" else torch.any
        f = (lambda x: g(x, dim=dims, keepdim=keep)) if dims else (lambda x: g(x))
    return [a], args, f


def gen_reduce_all(op):
    a = red_input(ALL)
    g = {"max_all": torch.max, "min_all": torch.min, "all": torch.all, "any": torch.any}[op]
    return [a], {}, lambda x: g(x)


def gen_dim_pair(op):
    ok = FLOATS + INTS
    if op in ("max_dim", "min_dim", "cummax", "cummin"):
        ok = ALL
    a = red_input(ok)
    # small value range makes ties and duplicates likely
    if rng.random() < 0.5 and a.dt in FLOATS + INTS:
        a = make_input(a.dt, list(a.t.shape), vals=[float(rng.randint(-2, 2)) if rng.random() < 0.85 else
                                                    rng.choice(SPECIAL[:4]) if a.dt in FLOATS else 1.0
                                                    for _ in range(int(a.t.numel()))], layout="c")
    r = a.t.dim()
    d = rng.randrange(-max(r, 1), max(r, 1))
    keep = rng.random() < 0.4
    args = {"dim": d, "keepdim": keep}
    if op in ("max_dim", "min_dim", "median", "mode", "nanmedian"):
        g = {"max_dim": torch.max, "min_dim": torch.min, "median": torch.median, "mode": torch.mode,
             "nanmedian": torch.nanmedian}[op]
        f = lambda x: list(g(x, d, keepdim=keep))
    elif op in ("argmax", "argmin"):
        if rng.random() < 0.3:
            args = {"dim": None, "keepdim": keep}
            g = getattr(torch, op)
            f = lambda x: g(x, dim=None, keepdim=keep)
        else:
            g = getattr(torch, op)
            f = lambda x: g(x, dim=d, keepdim=keep)
    elif op in ("cumsum", "cumprod"):
        dt = rng.choice([None, None, "f64", "i64", "f32"])
        args = {"dim": d, "dtype": dt}
        g = getattr(torch, op)
        f = lambda x: g(x, d, dtype=DT[dt] if dt else None)
    elif op in ("cummax", "cummin"):
        args = {"dim": d}
        g = getattr(torch, op)
        f = lambda x: list(g(x, d))
    elif op == "logcumsumexp":
        args = {"dim": d}
        f = lambda x: torch.logcumsumexp(x, d)
    return [a], args, f


def gen_quantile(op):
    a = red_input(["f32", "f64", "f32", "f16"])
    r = a.t.dim()
    d = rng.choice([None] + list(range(-r, r)) if r else [None, 0])
    keep = rng.random() < 0.4
    q = rng.choice([0.0, 0.25, 0.5, 0.9, 1.0, 0.333])
    interp = rng.choice(["linear", "lower", "higher", "midpoint", "nearest"])
    args = {"q": q, "dim": d, "keepdim": keep, "interp": interp}
    g = torch.quantile if op == "quantile" else torch.nanquantile
    return [a], args, lambda x: g(x, q, dim=d, keepdim=keep, interpolation=interp)


def rand_index(n, shape, unique_dim=None):
    """Random int64 indices in [0, n) (valid unless n == 0)."""
    numel = 1
    for s in shape:
        numel *= s
    if n == 0:
        return [0.0] * numel
    return [float(rng.randrange(n)) for _ in range(numel)]


def idx_input(vals, shape, dt="i64"):
    return make_input(dt, shape, vals=vals, layout="c")


def gen_index(op):
    dt = pick(ALL)
    s = rand_shape(allow_empty=False)
    if not s:
        s = rng.choice([[], [3]])
    a = make_input(dt, s)
    r = len(s)
    d = rng.randrange(-max(r, 1), max(r, 1))
    dd = d % max(r, 1)
    size = s[dd] if r else 1
    args = {"dim": d}
    if op in ("gather", "take_along_dim"):
        ishape = [rng.randint(1, x) if x > 0 else 0 for x in s] if r else []
        if op == "take_along_dim":
            ishape = [x if rng.random() < 0.7 else 1 for x in s] if r else []
            ishape[dd:dd + 1] = [rng.randint(1, 4)] if r else []
        else:
            if r:
                ishape[dd] = rng.randint(1, 4)
        idx = idx_input(rand_index(size, ishape), ishape)
        if op == "gather":
            return [a, idx], args, lambda x, i: torch.gather(x, d, i)
        return [a, idx], args, lambda x, i: torch.take_along_dim(x, i, dim=d)
    if op in ("scatter", "scatter_add", "scatter_reduce"):
        ishape = [rng.randint(1, x) if x > 0 else 0 for x in s] if r else []
        if op == "scatter" and r:
            # unique positions along dim for each line (duplicate writes are unordered)
            ishape[dd] = rng.randint(1, size)
            other = [x for i, x in enumerate(ishape) if i != dd]
            m = 1
            for x in other:
                m *= x
            idx = torch.stack([torch.randperm(size)[: ishape[dd]] for _ in range(m)])  # (m, k)
            perm_shape = other + [ishape[dd]]
            idx_t = idx.reshape(perm_shape).movedim(-1, dd).contiguous()
            vals = idx_t.double().flatten().tolist()
        else:
            vals = rand_index(size, ishape)
        idx = idx_input(vals, ishape)
        sshape = [x + rng.randint(0, 1) for x in ishape]
        src = make_input(dt if rng.random() < 0.9 else pick(ALL), sshape)
        if op == "scatter":
            return [a, idx, src], args, lambda x, i, v: torch.scatter(x, d, i, v)
        if op == "scatter_add":
            return [a, idx, src], args, lambda x, i, v: torch.scatter_add(x, d, i, v)
        red = rng.choice(["sum", "prod", "mean", "amax", "amin"])
        inc = rng.random() < 0.5
        args.update({"reduce": red, "include_self": inc})
        return [a, idx, src], args, lambda x, i, v: torch.scatter_reduce(x, d, i, v, red, include_self=inc)
    if op in ("index_select", "index_add", "index_copy", "index_fill"):
        k = rng.randint(0, 4)
        if op == "index_copy":
            k = min(k, size)
            vals = [float(v) for v in rng.sample(range(size), k)]
        else:
            vals = rand_index(size, [k])
        idx = idx_input(vals, [k] if (k != 1 or rng.random() < 0.7) else [], rng.choice(["i64", "i64", "i32"]))
        if op == "index_select":
            return [a, idx], args, lambda x, i: torch.index_select(x, d, i)
        if op == "index_fill":
            v = rng.choice([2.0, -1.0, 0.0]) if dt != "bool" else 1.0
            args["value"] = v
            return [a, idx], args, lambda x, i: x.index_fill(d, i, v)
        sshape = list(s)
        if r:
            sshape[dd] = len(idx.t.flatten()) if idx.t.dim() else 1
        src = make_input(dt, sshape)
        if op == "index_copy":
            return [a, idx, src], args, lambda x, i, v: x.index_copy(d, i, v)
        alpha = rng.choice([1.0, 2.0]) if dt in FLOATS or dt in INTS else 1.0
        if dt in INTS:
            alpha = float(int(alpha))
        args["alpha"] = alpha
        al = int(alpha) if dt not in FLOATS else alpha
        return [a, idx, src], args, lambda x, i, v: x.index_add(d, i, v, alpha=al)
    if op == "index_put":
        acc = rng.random() < 0.5
        k = rng.randint(1, 4)
        nidx = rng.randint(1, max(r, 1)) if r else 1
        if not r:
            a = make_input(dt, [3])
            s, r = [3], 1
            nidx = 1
        idxs = []
        if acc:
            for j in range(nidx):
                idxs.append(idx_input(rand_index(s[j], [k]), [k]))
        else:
            import itertools
            combos = list(itertools.product(*[range(s[j]) for j in range(nidx)]))
            pickc = rng.sample(combos, min(k, len(combos)))
            for j in range(nidx):
                idxs.append(idx_input([float(c[j]) for c in pickc], [len(pickc)]))
        vshape = [len(idxs[0].vals)] + s[nidx:]
        if rng.random() < 0.3:
            vshape = s[nidx:]
        v = make_input(dt, vshape)
        args = {"nidx": nidx, "accumulate": acc}
        return [a] + idxs + [v], args, lambda x, *rest: x.index_put(tuple(rest[:-1]), rest[-1], accumulate=acc)
    if op in ("masked_fill", "masked_select"):
        ms = list(s[rng.randint(0, r):]) if r else []
        m = make_input("bool", ms)
        if op == "masked_select":
            return [a, m], {}, lambda x, mm: torch.masked_select(x, mm)
        v = rng.choice([3.0, -1.5, 0.0, float("nan")]) if dt in FLOATS else rng.choice([1.0, 0.0, 5.0])
        args = {"value": v}
        vv = v if dt in FLOATS else int(v)
        return [a, m], args, lambda x, mm: x.masked_fill(mm, vv)
    if op == "nonzero":
        return [a], {}, lambda x: torch.nonzero(x)
    if op == "take":
        n = a.t.numel()
        idx = idx_input([float(rng.randrange(-n, n)) for _ in range(4)], [2, 2])
        return [a, idx], {}, lambda x, i: torch.take(x, i)


def gen_shape(op):
    dt = pick(ALL)
    s = rand_shape()
    r = len(s)
    a = make_input(dt, s)
    if op in ("cat", "stack"):
        d = rng.randrange(-(r + (op == "stack")), r + (op == "stack")) if r or op == "stack" else 0
        ins = [a]
        for _ in range(rng.randint(1, 2)):
            s2 = list(s)
            if op == "cat" and r:
                s2[d % r] = rng.randint(0, 3)
            ins.append(make_input(dt if rng.random() < 0.8 else pick(ALL), s2))
        g = torch.cat if op == "cat" else torch.stack
        return ins, {"dim": d}, lambda *xs: g(list(xs), d)
    if r == 0 and op not in ("tile", "repeat_interleave", "flip", "roll"):
        a = make_input(dt, [3, 2])
        s, r = [3, 2], 2
    d = rng.randrange(-r, r) if r else 0
    if op == "split":
        sz = rng.randint(1, 3)
        return [a], {"size": sz, "dim": d}, lambda x: list(torch.split(x, sz, d))
    if op == "tensor_split":
        k = rng.randint(1, 4)
        return [a], {"sections": k, "dim": d}, lambda x: list(torch.tensor_split(x, k, d))
    if op == "repeat_interleave":
        rep = rng.randint(0, 3)
        dd = None if (r == 0 or rng.random() < 0.3) else d
        return [a], {"repeats": rep, "dim": dd}, lambda x: torch.repeat_interleave(x, rep, dim=dd)
    if op == "tile":
        reps = [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
        return [a], {"reps": reps}, lambda x: torch.tile(x, reps)
    if op == "flip":
        dims = sorted(rng.sample(range(r), rng.randint(0, r))) if r else []
        return [a], {"dims": dims}, lambda x: torch.flip(x, dims)
    if op == "roll":
        sh = rng.randint(-5, 5)
        dims = [d] if r and rng.random() < 0.7 else []
        return [a], {"shift": sh, "dims": dims}, lambda x: torch.roll(x, sh, dims) if dims else torch.roll(x, sh)
    if op == "rot90":
        k = rng.randint(-2, 5)
        d1, d2 = rng.sample(range(r), 2) if r >= 2 else (0, 1)
        return [a], {"k": k, "dims": [d1, d2]}, lambda x: torch.rot90(x, k, [d1, d2])
    if op in ("tril", "triu"):
        k = rng.randint(-2, 2)
        g = getattr(torch, op)
        return [a], {"k": k}, lambda x: g(x, k)
    if op == "diagonal":
        off = rng.randint(-2, 2)
        d1, d2 = rng.sample(range(r), 2) if r >= 2 else (0, 0)
        return [a], {"offset": off, "d1": d1, "d2": d2}, lambda x: torch.diagonal(x, off, d1, d2)
    if op == "unfold":
        size = rng.randint(0, 3)
        step = rng.randint(1, 2)
        return [a], {"dim": d, "size": size, "step": step}, lambda x: x.unfold(d, size, step)


def gen_sort(op):
    dt = pick(FLOATS + INTS + ["bool"] if op in ("sort", "argsort", "unique") else FLOATS + INTS)
    s = rand_shape()
    r = len(s)
    a = make_input(dt, s)
    if rng.random() < 0.6 and dt in FLOATS + INTS:
        n = len(a.vals)
        vals = [float(rng.randint(0, 3)) if rng.random() < 0.85 else (rng.choice(SPECIAL[:4]) if dt in FLOATS else 5.0)
                for _ in range(n)]
        a = make_input(dt, s, vals=vals if a.layout == "" else None, layout="c") if not a.layout else a
    d = rng.randrange(-r, r) if r else rng.choice([0, -1])
    if op in ("sort", "argsort"):
        desc = rng.random() < 0.5
        if op == "sort":
            return [a], {"dim": d, "descending": desc}, lambda x: list(torch.sort(x, dim=d, descending=desc, stable=True))
        return [a], {"dim": d, "descending": desc}, lambda x: torch.argsort(x, dim=d, descending=desc, stable=True)
    if op == "msort":
        return [a], {}, lambda x: torch.msort(x)
    if op == "topk":
        n = s[d % r] if r else 1
        k = rng.randint(0, n)
        lg = rng.random() < 0.6
        return [a], {"k": k, "dim": d, "largest": lg}, lambda x: list(torch.topk(x, k, d, largest=lg, sorted=True))
    if op == "kthvalue":
        n = s[d % r] if r else 1
        k = rng.randint(1, max(n, 1))
        keep = rng.random() < 0.4
        return [a], {"k": k, "dim": d, "keepdim": keep}, lambda x: list(torch.kthvalue(x, k, d, keepdim=keep))
    if op == "unique":
        inv, cnt = rng.random() < 0.5, rng.random() < 0.5

        def f(x):
            out = torch.unique(x, sorted=True, return_inverse=inv, return_counts=cnt)
            return list(out) if isinstance(out, tuple) else out
        return [a], {"inverse": inv, "counts": cnt}, f
    if op == "unique_dim":
        inv, cnt = rng.random() < 0.5, rng.random() < 0.5

        def f(x):
            out = torch.unique(x, sorted=True, return_inverse=inv, return_counts=cnt, dim=d)
            return list(out) if isinstance(out, tuple) else out
        return [a], {"dim": d, "inverse": inv, "counts": cnt}, f


def gen_search(op):
    dt = pick(["f32", "f64", "i64", "i32", "f16"])
    if op == "searchsorted":
        rows = rng.choice([[], [2], [1]])
        n = rng.randint(0, 6)
        use_sorter = rng.random() < 0.3
        vals = sorted(float(rng.randint(-4, 4)) for _ in range(n * (rows[0] if rows else 1)))
        seq = torch.tensor(vals, dtype=torch.float64).reshape(rows + [n]).sort(-1).values.flatten().tolist()
        if use_sorter:
            seq_t = torch.tensor(seq, dtype=torch.float64).reshape(rows + [n])
            perm = torch.stack([torch.randperm(n) for _ in range(rows[0] if rows else 1)]).reshape(rows + [n])
            unsorted = torch.empty_like(seq_t)
            unsorted.scatter_(-1, perm, seq_t)
            seq = unsorted.flatten().tolist()
            sorter = perm.double().flatten().tolist()
        a = make_input(dt, rows + [n], vals=seq, layout="c")
        vshape = rows + [rng.randint(0, 4)] if rows else rng.choice([[], [3], [2, 2]])
        v = make_input(dt if rng.random() < 0.8 else pick(["f32", "f64", "i64"]), vshape, special=rng.random() < 0.3)
        right = rng.random() < 0.5
        ins = [a, v]
        if use_sorter:
            ins.append(idx_input(sorter, rows + [n]))
            return ins, {"right": right}, lambda s_, x, so: torch.searchsorted(s_, x, right=right, sorter=so)
        return ins, {"right": right}, lambda s_, x: torch.searchsorted(s_, x, right=right)
    if op == "bucketize":
        n = rng.randint(0, 6)
        b = make_input(dt, [n], vals=sorted(float(rng.randint(-4, 4)) for _ in range(n)), layout="c")
        v = make_input(dt, rand_shape(), special=rng.random() < 0.3)
        right, i32 = rng.random() < 0.5, rng.random() < 0.3
        return [v, b], {"right": right, "out_int32": i32}, \
            lambda x, bb: torch.bucketize(x, bb, out_int32=i32, right=right)
    if op == "histc":
        a = make_input(pick(FLOATS), rand_shape(), special=rng.random() < 0.3)
        bins = rng.randint(1, 6)
        lo, hi = rng.choice([(0.0, 0.0), (-2.0, 2.0), (-1.0, 3.0), (1.0, 1.0)])
        return [a], {"bins": bins, "min": lo, "max": hi}, lambda x: torch.histc(x, bins, lo, hi)
    if op == "bincount":
        n = rng.randint(0, 8)
        a = make_input(pick(["i64", "i32", "u8", "i8"]), [n], vals=[float(rng.randint(0, 5)) for _ in range(n)],
                       layout="c")
        ml = rng.choice([0, 0, 3, 8])
        if rng.random() < 0.5:
            w = make_input(pick(["f32", "f64", "i64", "f16"]), [n], special=False)
            return [a, w], {"minlength": ml}, lambda x, ww: torch.bincount(x, ww, ml)
        return [a], {"minlength": ml}, lambda x: torch.bincount(x, minlength=ml)


GENS = {}
for k in BINARY:
    GENS[k] = gen_binary
for k in UNARY:
    GENS[k] = gen_unary
GENS.update({"round_decimals": gen_round_decimals, "nan_to_num": gen_nan_to_num, "logit": gen_logit,
             "lerp": gen_lerp, "clamp": gen_clamp, "where": gen_where, "to_dtype": gen_cast})
for k in ["sum", "prod", "mean", "std", "var", "norm", "logsumexp", "amax", "amin", "count_nonzero", "all_dim",
          "any_dim"]:
    GENS[k] = gen_reduce
for k in ["max_all", "min_all", "all", "any"]:
    GENS[k] = gen_reduce_all
for k in ["max_dim", "min_dim", "median", "mode", "nanmedian", "argmax", "argmin", "cumsum", "cumprod", "cummax",
          "cummin", "logcumsumexp"]:
    GENS[k] = gen_dim_pair
GENS.update({"quantile": gen_quantile, "nanquantile": gen_quantile})
for k in ["gather", "take_along_dim", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
          "index_copy", "index_fill", "index_put", "masked_fill", "masked_select", "nonzero", "take"]:
    GENS[k] = gen_index
for k in ["cat", "stack", "split", "tensor_split", "repeat_interleave", "tile", "flip", "roll", "rot90", "tril",
          "triu", "diagonal", "unfold"]:
    GENS[k] = gen_shape
for k in ["sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_dim"]:
    GENS[k] = gen_sort
for k in ["searchsorted", "bucketize", "histc", "bincount"]:
    GENS[k] = gen_search

WEIGHT = {"to_dtype": 14}


def main():
    ops = sorted(GENS)
    bag = []
    for o in ops:
        bag += [o] * WEIGHT.get(o, 1)
    cases = []
    cid = 0
    errors = 0
    # every op at least three times, then random picks
    order = [o for o in ops for _ in range(3)]
    while len(order) < N_CASES:
        order.append(rng.choice(bag))
    for op in order:
        while True:
            ins, args, fn = GENS[op](op)
            try:
                out = fn(*[i.t for i in ins])
                outs = out if isinstance(out, list) else [out]
                outs = [o.contiguous() for o in outs]
            except TypeError:  # a Python binding refusal, not an op's behaviour: draw again
                continue
            except Exception:  # torch raised: the replay requires an error
                outs = None
                errors += 1
            break
        scale = 0.0
        for i in ins:
            if i.dt in FLOATS or i.dt in INTS:
                fin = [abs(v) for v in i.vals if math.isfinite(v)]
                scale = max([scale] + fin)
        cases.append((cid, op, fmt_args(args), ins, outs, scale))
        cid += 1

    L = ["//! Generated by tensor/tests/make_op_fuzz_golden.py from torch " + torch.__version__
         + f" (seed {SEED}); do not edit.", "",
         "#![allow(clippy::approx_constant, clippy::excessive_precision)]", "",
         "/// One input: dtype, base shape, base values (row-major, in f64), layout ops to apply.",
         "pub struct In {",
         "    /// The dtype's short name (`f32`, `i64`, `bool`, ...).",
         "    pub dtype: &'static str,",
         "    /// The contiguous tensor's shape before the layout ops.",
         "    pub base: &'static [usize],",
         "    /// The contiguous tensor's values.",
         "    pub vals: &'static [f64],",
         "    /// `|`-separated `t a,b` / `p perm` / `s dim,start,end,step` / `e sizes` ops.",
         "    pub layout: &'static str,",
         "}", "",
         "/// One torch output: dtype, shape, values (row-major, in f64).",
         "pub struct Out {",
         "    /// The dtype's short name.",
         "    pub dtype: &'static str,",
         "    /// The shape.",
         "    pub shape: &'static [usize],",
         "    /// The values.",
         "    pub vals: &'static [f64],",
         "}", "",
         "/// One fuzz case.",
         "pub struct Case {",
         "    /// Case number.",
         "    pub id: usize,",
         "    /// The op's name in the replay's table.",
         "    pub op: &'static str,",
         "    /// `key=value` pairs separated by `;` (lists comma-separated, `none` for None).",
         "    pub args: &'static str,",
         "    /// The inputs.",
         "    pub inputs: &'static [In],",
         "    /// torch's outputs, or `None` where torch raised.",
         "    pub outputs: Option<&'static [Out]>,",
         "    /// The largest finite |input| (reductions scale their absolute tolerance with it).",
         "    pub scale: f64,",
         "}", "",
         "/// The cases.",
         "pub const CASES: &[Case] = &["]

    def arr_u(xs):
        return "&[" + ", ".join(str(int(x)) for x in xs) + "]"

    def arr_f(xs):
        return "&[" + ", ".join(lit(x) for x in xs) + "]"

    for cid, op, args, ins, outs, scale in cases:
        L.append("    Case {")
        L.append(f"        id: {cid},")
        L.append(f'        op: "{op}",')
        L.append(f'        args: "{args}",')
        L.append("        inputs: &[")
        for i in ins:
            L.append(f'            In {{ dtype: "{i.dt}", base: {arr_u(i.base)}, vals: {arr_f(i.vals)}, '
                     f'layout: "{i.layout}" }},')
        L.append("        ],")
        if outs is None:
            L.append("        outputs: None,")
        else:
            L.append("        outputs: Some(&[")
            for o in outs:
                L.append(f'            Out {{ dtype: "{NAME[o.dtype]}", shape: {arr_u(o.shape)}, '
                         f'vals: {arr_f(o.double().flatten().tolist())} }},')
            L.append("        ]),")
        L.append(f"        scale: {lit(scale)},")
        L.append("    },")
    L.append("];")
    L.append("")
    with open(OUT, "w") as fh:
        fh.write("\n".join(L))
    print("wrote", OUT, len(cases), "cases,", errors, "torch errors,", len(ops), "ops")


if __name__ == "__main__":
    main()

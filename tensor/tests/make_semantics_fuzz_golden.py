"""Writes tensor/tests/cpu/semantics_fuzz_golden.rs: a seeded random test of tensor *semantics* against torch.

Areas (those op_fuzz does not cover): getitem with random index expressions (ints, stepped and
out-of-range slices, None, Ellipsis, int64 index tensors that broadcast, full and partial bool masks,
0-d masks) and whether the result is a view; setitem (`index_put_`, scalar or broadcast tensor values,
accumulate) and writes through basic-index views; type promotion of binary ops between every pair of
dtypes, with numbers and 0-d tensors; in-place ops' cast and broadcast refusals; reductions' dtype
defaults and `dtype=` arguments.

Inputs are encoded as in make_op_fuzz_golden.py (dtype, base shape, base values, then layout ops
`t a,b` / `s dim,start,end,step` / `e sizes` / `p perm` that make them non-contiguous). An index
expression is a `|`-separated list of entries: `i:K` integer, `s:START,STOP,STEP` slice (`_` for an
omitted part), `n` None, `e` Ellipsis, `t:K` the case's input K (an index tensor or a mask).

Run with a torch install: python tensor/tests/make_semantics_fuzz_golden.py
"""
import math
import os
import random

import torch

OUT = os.path.join(os.path.dirname(__file__), "cpu", "semantics_fuzz_golden.rs")
SEED = 34
rng = random.Random(SEED)
torch.manual_seed(SEED)

DT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
      "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8, "i8": torch.int8, "bool": torch.bool,
      "i16": torch.int16}
NAME = {v: k for k, v in DT.items()}
FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["i32", "i64", "u8", "i8", "i16"]
ALL = ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"]


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = repr(v)
    return r if ("." in r or "e" in r) else r + ".0"


def rust_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def rand_val(dt):
    if dt in FLOATS:
        if rng.random() < 0.05:
            return rng.choice([float("nan"), float("inf"), float("-inf"), -0.0])
        return rng.randint(-16, 16) / 4
    if dt == "bool":
        return float(rng.random() < 0.5)
    if dt == "u8":
        return float(rng.randint(0, 9))
    return float(rng.randint(-6, 6))


def rand_shape(max_rank=3, allow_empty=True, min_rank=0):
    r = rng.randint(min_rank, max_rank)
    shape = []
    for _ in range(r):
        k = rng.random()
        if allow_empty and k < 0.04:
            shape.append(0)
        elif k < 0.2:
            shape.append(1)
        else:
            shape.append(rng.randint(2, 4))
    return shape


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class In:
    def __init__(self, dt, base, vals, layout, t):
        self.dt, self.base, self.vals, self.layout, self.t = dt, base, vals, layout, t


def make_input(dt, shape, vals=None, layout=None, writable=False):
    """A tensor of logical `shape`, possibly built as a non-contiguous view (never an expanded one
    when `writable`)."""
    rank = len(shape)
    kinds = ["c", "c", "t", "s", "p"] + ([] if writable else ["e"])
    kind = layout or rng.choice(kinds)
    ops = []
    base = list(shape)
    if kind == "t" and rank >= 2:
        a, b = rng.sample(range(rank), 2)
        base[a], base[b] = base[b], base[a]
        ops.append(("t", [a, b]))
    elif kind == "p" and rank >= 3:
        perm = list(range(rank))
        rng.shuffle(perm)
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
        if base != list(shape):
            ops.append(("e", list(shape)))
    if vals is None:
        vals = [rand_val(dt) for _ in range(numel(base))]
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
# index expressions


def rand_index_expr(shape, ins, basic_only=False, adv_only=False):
    """A random index expression for a tensor of `shape`: (encoded entries, python entries).
    Index tensors and masks are appended to `ins` (the case's inputs)."""
    r = len(shape)
    enc, py = [], []
    # how many of self's dims the entries consume (sometimes one too many: an IndexError)
    k = rng.randint(0, r)
    if r and rng.random() < 0.5:
        k = r
    if rng.random() < 0.03:
        k = r + 1
    bshape = rand_shape(2, allow_empty=False, min_rank=1) if rng.random() < 0.6 else [rng.randint(1, 3)]
    d = 0
    n_adv = 0
    while d < k:
        size = shape[d] if d < r else 3
        kinds = ["int", "slice", "slice"]
        if not basic_only:
            kinds += ["tensor", "tensor", "mask"]
        if adv_only:
            kinds = ["tensor", "tensor", "tensor", "mask", "full"]
        kind = rng.choice(kinds)
        if kind == "int":
            i = rng.randint(-size, size - 1) if size else 0
            if rng.random() < 0.06:
                i = rng.choice([size, -size - 1])
            enc.append(f"i:{i}")
            py.append(i)
            d += 1
        elif kind in ("slice", "full"):
            if kind == "full":
                a = b = None
                st = None
            else:
                a = rng.choice([None, None, 0, 1, 2, -1, -2, -7, 9])
                b = rng.choice([None, None, 1, 2, 3, -1, -2, 100, -100])
                st = rng.choice([None, None, 1, 2, 3])
                if rng.random() < 0.02:
                    st = 0
            enc.append("s:" + ",".join("_" if x is None else str(x) for x in (a, b, st)))
            py.append(slice(a, b, st))
            d += 1
        elif kind == "tensor":
            n_adv += 1
            if rng.random() < 0.15:
                ishape = []
            else:
                ishape = [x if rng.random() < 0.7 else 1 for x in bshape]
                ishape = ishape[rng.randint(0, len(ishape) - 1):]
            lo, hi = (-size, size - 1) if size else (0, 0)
            vals = [float(rng.randint(lo, hi)) for _ in range(numel(ishape))]
            if vals and rng.random() < 0.05:
                vals[rng.randrange(len(vals))] = float(rng.choice([size, -size - 1]))
            dt = "i32" if rng.random() < 0.1 else "i64"
            lay = "t" if len(ishape) >= 2 and rng.random() < 0.3 else "c"
            # a transposed index tensor: its values are a permutation of the same valid values
            inp = make_input(dt, ishape, vals=vals, layout=lay)
            enc.append(f"t:{len(ins)}")
            ins.append(inp)
            py.append(inp.t)
            d += 1
        else:  # mask
            n_adv += 1
            if rng.random() < 0.12:
                m = make_input("bool", [], layout="c")
                enc.append(f"t:{len(ins)}")
                ins.append(m)
                py.append(m.t)
                continue
            m_rank = rng.randint(1, max(1, min(2, k - d)))
            mshape = [shape[d + j] if d + j < r else 2 for j in range(m_rank)]
            if rng.random() < 0.05 and mshape:
                mshape[0] += 1  # a shape mismatch
            vals = [float(rng.random() < 0.5) for _ in range(numel(mshape))]
            m = make_input("bool", mshape, vals=vals, layout="c")
            enc.append(f"t:{len(ins)}")
            ins.append(m)
            py.append(m.t)
            d += m_rank
    # None and Ellipsis at random positions
    extras = []
    if rng.random() < 0.35 and not adv_only:
        extras.append("n")
    if rng.random() < 0.3 and not adv_only:
        extras.append("n")
    if rng.random() < 0.35 and not adv_only:
        extras.append("e")
        if rng.random() < 0.05:
            extras.append("e")
    for x in extras:
        pos = rng.randint(0, len(enc))
        enc.insert(pos, x)
        py.insert(pos, None if x == "n" else Ellipsis)
    return "|".join(enc), tuple(py)


def decode(enc, ts):
    """The Python index tuple an encoded expression stands for (as the replay parses it)."""
    out = []
    for e in enc.split("|") if enc else []:
        kind, _, rest = e.partition(":")
        if kind == "i":
            out.append(int(rest))
        elif kind == "s":
            a, b, c = (None if v == "_" else int(v) for v in rest.split(","))
            out.append(slice(a, b, c))
        elif kind == "n":
            out.append(None)
        elif kind == "e":
            out.append(Ellipsis)
        else:
            out.append(ts[int(rest)])
    return tuple(out)


def rand_like_shape(shape):
    """A shape that broadcasts to `shape` (sometimes with leading unit dims, sometimes not)."""
    s = [x if rng.random() < 0.6 else 1 for x in shape]
    s = s[rng.randint(0, len(s)):] if s and rng.random() < 0.4 else s
    if rng.random() < 0.15:
        s = [1] + s
    if rng.random() < 0.05:
        s = s + [2]
    return s


def scalar_for(dt):
    """A Python number for a tensor of `dt`, and its kind."""
    k = rng.random()
    if dt == "bool" or k < 0.1:
        return (rng.random() < 0.5), "b"
    if dt in FLOATS and k < 0.8:
        return rng.choice([2.5, -0.5, 1.25, -3.0]), "f"
    if dt == "u8":
        return rng.choice([0, 3, 7, 255]), "i"
    return rng.choice([-2, 0, 3, 7]), "i"


# ----------------------------------------------------------------------------------------------
# generators: each returns (inputs, args, index, fn(torch inputs) -> tensor or list, view-check)


def gen_getitem():
    dt = rng.choice(ALL)
    x = make_input(dt, rand_shape(4))
    ins = [x]
    enc, py = rand_index_expr(list(x.t.shape), ins)

    def f(*ts):
        return ts[0][decode(enc, ts)]
    return ins, {}, enc, f, True


def setitem_value(dt, target_shape, advanced):
    """A value for `x[...] = value`: a number or a tensor broadcastable to `target_shape`."""
    if rng.random() < 0.4:
        v, kind = scalar_for(dt)
        return None, {"value": float(v), "kind": kind}, v
    vdt = dt
    if not advanced and rng.random() < 0.5:
        vdt = rng.choice(ALL)
    elif advanced and rng.random() < 0.08:
        vdt = rng.choice(ALL)
    vin = make_input(vdt, rand_like_shape(target_shape) if target_shape is not None else [2])
    return vin, {}, None


def gen_setitem():
    dt = rng.choice(ALL)
    x = make_input(dt, rand_shape(4), writable=True)
    ins = [x]
    enc, py = rand_index_expr(list(x.t.shape), ins)
    n_idx = len(ins)

    def entries(ts):
        return tuple(ts[int(e[2:])] if e.startswith("t:") else p for e, p in zip(enc.split("|"), py)) \
            if enc else ()
    tensors = [ins[int(e[2:])] for e in (enc.split("|") if enc else []) if e.startswith("t:")]
    advanced = any(i.t.dim() > 0 or i.dt == "bool" for i in tensors)
    try:
        target = list(x.t[entries([i.t for i in ins])].shape)
        # duplicate positions with differing values are unordered writes: use a number then
        pos = torch.arange(x.t.numel()).reshape(x.t.shape)[entries([i.t for i in ins])]
        dup = pos.numel() != pos.unique().numel()
    except Exception:
        target, dup = None, False
    vin, args, v = setitem_value(dt, target, advanced)
    if dup and vin is not None:
        v, kind = scalar_for(dt)
        vin, args = None, {"value": float(v), "kind": kind}
    if vin is not None:
        ins.append(vin)
    args["nidx"] = n_idx

    def f(*ts):
        y = ts[0]
        y[decode(enc, ts)] = ts[n_idx] if vin is not None else v
        return y
    return ins, args, enc, f, False


def gen_setitem_acc():
    dt = rng.choice(["f32", "f64", "i64", "i32", "i16", "u8", "i8", "f16", "bf16"])
    x = make_input(dt, rand_shape(3, min_rank=1), writable=True)
    ins = [x]
    enc, py = rand_index_expr(list(x.t.shape), ins, adv_only=True)
    while "t:" not in enc:  # index_put_ needs at least one index tensor
        ins = [x]
        enc, py = rand_index_expr(list(x.t.shape), ins, adv_only=True)
    n_idx = len(ins)
    es = enc.split("|") if enc else []
    try:
        target = list(torch.zeros(x.t.shape)[tuple(
            ins[int(e[2:])].t if e.startswith("t:") else slice(None) for e in es)].shape)
    except Exception:
        target = None
    if rng.random() < 0.3:
        v, kind = scalar_for(dt)
        if dt not in FLOATS and kind == "f":
            v, kind = 2, "i"
        vin, args = None, {"value": float(v), "kind": kind}
    else:
        vin = make_input(dt if rng.random() < 0.92 else rng.choice(ALL),
                         rand_like_shape(target) if target is not None else [2])
        args = {}
        ins.append(vin)
    args["nidx"] = n_idx

    def f(*ts):
        y = ts[0]
        idx = tuple(None if isinstance(e, slice) else e for e in decode(enc, ts))
        val = ts[n_idx] if vin is not None else torch.tensor(v, dtype=y.dtype)
        y.index_put_(idx, val, accumulate=True)
        return y
    return ins, args, enc, f, False


def gen_view_write():
    dt = rng.choice(ALL)
    x = make_input(dt, rand_shape(4, min_rank=1), writable=True)
    ins = [x]
    enc, py = rand_index_expr(list(x.t.shape), ins, basic_only=True)
    mode = rng.choice(["fill", "add"]) if dt != "bool" else "fill"
    v, kind = scalar_for(dt)
    if mode == "add" and dt not in FLOATS and kind == "f":
        v, kind = 1, "i"
    if mode == "add" and kind == "b":
        v, kind = 2, "i"
    if dt == "u8" and kind == "i":
        v = abs(v) % 200

    def f(xt):
        view = xt[decode(enc, [xt])]
        if mode == "fill":
            view.fill_(v)
        else:
            view.add_(v)
        return xt
    return ins, {"mode": mode, "value": float(v), "kind": kind}, enc, f, False


BIN_OPS = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow", "maximum", "eq", "lt",
           "bitwise_and"]
TORCH_BIN = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "true_divide": torch.true_divide,
             "floor_divide": torch.floor_divide, "remainder": torch.remainder, "pow": torch.pow,
             "maximum": torch.maximum, "eq": torch.eq, "lt": torch.lt, "bitwise_and": torch.bitwise_and}


def operand_input(op, dt, shape, divisor):
    vals = None
    n = numel(shape)
    if divisor and op in ("floor_divide", "remainder", "div", "true_divide") and dt not in FLOATS:
        vals = [float(rng.choice([1, 2, 3] if dt in ("u8", "bool") else [-3, -2, -1, 1, 2, 3])) for _ in range(n)]
        if dt == "bool":
            vals = [1.0] * n
    if divisor and op == "pow":
        vals = [float(rng.randint(0, 3)) for _ in range(n)] if dt != "bool" else None
        if dt in FLOATS and rng.random() < 0.3:
            vals = [rng.choice([-1.0, 0.5, 2.0]) for _ in range(n)]
        if dt in ("i8", "i16", "i32", "i64") and rng.random() < 0.1:
            vals = [-1.0] * n
    if vals is not None:
        return make_input(dt, shape, vals=vals, layout="c")
    return make_input(dt, shape)


def shape_pair():
    mode = rng.choice(["nn", "n0", "0n", "00", "nn"])
    s = rand_shape(3, min_rank=1)
    if mode == "nn":
        o = [x if rng.random() < 0.7 else 1 for x in s]
        o = o[rng.randint(0, len(o)):] if rng.random() < 0.3 else o
        return (s, o) if rng.random() < 0.5 else (o, s)
    if mode == "n0":
        return s, []
    if mode == "0n":
        return [], s
    return [], []


def gen_binary():
    op = rng.choice(BIN_OPS + ["where"])
    da, db = rng.choice(ALL), rng.choice(ALL)
    sa, sb = shape_pair()
    if op == "where":
        c = make_input("bool", rng.choice([sa, sb, []]))
        ins = [c]
        args = {}
        ops = []
        for slot, (d_, s_) in zip("xy", [(da, sa), (db, sb)]):
            if rng.random() < 0.3:
                v, kind = scalar_for(d_)
                args[slot] = float(v)
                args[slot + "kind"] = kind
                ops.append(("s", v))
            else:
                ops.append(("t", len(ins)))
                ins.append(make_input(d_, s_))

        def f(*ts):
            vals = [ts[k] if t == "t" else k for t, k in ops]
            return torch.where(ts[0], vals[0], vals[1])
        return ins, args, "", f, False
    a = operand_input(op, da, sa, False)
    if rng.random() < 0.3:
        v, kind = scalar_for(db)
        if op in ("floor_divide", "remainder") and v == 0:
            v = 3
        if op == "pow" and kind == "i":
            v = rng.choice([0, 2, 3, -1])
        return [a], {"op": op, "scalar": float(v), "kind": kind}, "", lambda x: TORCH_BIN[op](x, v), False
    b = operand_input(op, db, sb, True)
    return [a, b], {"op": op}, "", lambda x, y: TORCH_BIN[op](x, y), False


INPLACE = ["add_", "sub_", "mul_", "div_", "true_divide_", "floor_divide_", "remainder_", "pow_", "bitwise_and_",
           "lt_"]


def gen_inplace():
    op = rng.choice(INPLACE)
    ds, do = rng.choice(ALL), rng.choice(ALL)
    s = rand_shape(3)
    x = make_input(ds, s, writable=True)
    base_op = op[:-1]
    if rng.random() < 0.3:
        v, kind = scalar_for(do)
        if base_op in ("floor_divide", "remainder") and v == 0:
            v = 3
        if base_op == "pow" and kind == "i":
            v = rng.choice([0, 2, 3])
        return [x], {"op": op, "scalar": float(v), "kind": kind}, "", \
            lambda t: (getattr(t, op)(v), t)[1], False
    k = rng.random()
    if k < 0.2:
        o = [2] + s  # self would have to grow
    elif k < 0.3 and s and 1 in s:
        o = [3 if x_ == 1 else x_ for x_ in s]
    elif k < 0.45:
        o = []
    else:
        o = rand_like_shape(s) if s else []
        o = o if len(o) <= len(s) or rng.random() < 0.3 else o[1:]
    y = operand_input(base_op, do, o, True)
    return [x, y], {"op": op}, "", lambda t, u: (getattr(t, op)(u), t)[1], False


def gen_reduce():
    op = rng.choice(["sum", "sum", "prod", "mean", "cumsum", "cumprod"])
    dt = rng.choice(INTS + ["bool", "bool"] + (FLOATS[:2] if rng.random() < 0.2 else []))
    s = rand_shape(3)
    x = make_input(dt, s)
    r = len(s)
    out_dt = rng.choice([None, None, None] + ALL)
    keep = rng.random() < 0.4
    tdt = DT[out_dt] if out_dt else None
    if op in ("cumsum", "cumprod"):
        d = rng.randrange(-r, r) if r else rng.choice([0, -1])
        g = getattr(torch, op)
        return [x], {"op": op, "dim": d, "dtype": out_dt}, "", lambda t: g(t, d, dtype=tdt), False
    if op == "prod":
        d = rng.randrange(-r, r) if r and rng.random() < 0.6 else None
        args = {"op": op, "dims": [d] if d is not None else [], "keepdim": keep and d is not None, "dtype": out_dt}
        if d is None:
            return [x], args, "", lambda t: torch.prod(t, dtype=tdt), False
        return [x], args, "", lambda t: torch.prod(t, d, keepdim=keep, dtype=tdt), False
    dims = sorted(rng.sample(range(r), rng.randint(0, r))) if r else []
    args = {"op": op, "dims": dims, "keepdim": keep and bool(dims), "dtype": out_dt}
    g = getattr(torch, op)
    if not dims:
        return [x], args, "", lambda t: g(t, dtype=tdt), False
    return [x], args, "", lambda t: g(t, dims, keepdim=keep, dtype=tdt), False


GENS = [("getitem", gen_getitem, 150), ("setitem", gen_setitem, 100), ("setitem_acc", gen_setitem_acc, 35),
        ("view_write", gen_view_write, 35), ("binary", gen_binary, 130), ("inplace", gen_inplace, 60),
        ("reduce", gen_reduce, 45)]


def main():
    cases = []
    errors = 0
    for name, gen, count in GENS:
        for _ in range(count):
            while True:
                ins, args, index, fn, check_view = gen()
                # writes go to a fresh copy of the built inputs (the recorded base values stay as built)
                ts = [rebuild(i) for i in ins]
                err = ""
                shares = -1
                try:
                    out = fn(*ts)
                    outs = [out.contiguous()]
                    if check_view:
                        shares = 1 if out._is_view() else 0
                except TypeError:
                    continue
                except Exception as e:  # torch raised: the replay requires an error
                    if "INTERNAL ASSERT" in str(e) or "setStorage" in str(e):
                        continue  # a torch bug, not a behaviour to copy: draw again
                    outs = None
                    err = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    errors += 1
                break
            scale = 0.0
            for i in ins:
                fin = [abs(v) for v in i.vals if math.isfinite(v)]
                scale = max([scale] + fin)
            cases.append((len(cases), name, fmt_args(args), index, ins, outs, err, shares, scale))

    L = ["//! Generated by tensor/tests/make_semantics_fuzz_golden.py from torch " + torch.__version__
         + f" (seed {SEED}); do not edit.", "",
         "#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]", "",
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
         "/// One case.",
         "pub struct Case {",
         "    /// Case number.",
         "    pub id: usize,",
         "    /// The case's kind (`getitem`, `setitem`, `setitem_acc`, `view_write`, `binary`, `inplace`, `reduce`).",
         "    pub kind: &'static str,",
         "    /// `key=value` pairs separated by `;` (lists comma-separated, `none` for None).",
         "    pub args: &'static str,",
         "    /// The index expression: `|`-separated `i:K`, `s:START,STOP,STEP` (`_` omitted), `n`, `e`, `t:INPUT`.",
         "    pub index: &'static str,",
         "    /// The inputs.",
         "    pub inputs: &'static [In],",
         "    /// torch's output (for writes: the written tensor), or `None` where torch raised.",
         "    pub outputs: Option<&'static [Out]>,",
         "    /// torch's error (`Type: message`) where it raised, else empty.",
         "    pub error: &'static str,",
         "    /// getitem: 1 when torch's result is a view of the input, 0 when a copy; -1 elsewhere.",
         "    pub view: i8,",
         "    /// The largest finite |input| (accumulating results scale their absolute tolerance with it).",
         "    pub scale: f64,",
         "}", "",
         "/// The cases.",
         "pub const CASES: &[Case] = &["]

    def arr_u(xs):
        return "&[" + ", ".join(str(int(x)) for x in xs) + "]"

    def arr_f(xs):
        return "&[" + ", ".join(lit(x) for x in xs) + "]"

    for cid, kind, args, index, ins, outs, err, shares, scale in cases:
        L.append("    Case {")
        L.append(f"        id: {cid},")
        L.append(f'        kind: "{kind}",')
        L.append(f'        args: "{args}",')
        L.append(f'        index: "{index}",')
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
        L.append(f"        error: {rust_str(err)},")
        L.append(f"        view: {shares},")
        L.append(f"        scale: {lit(scale)},")
        L.append("    },")
    L.append("];")
    L.append("")
    with open(OUT, "w") as fh:
        fh.write("\n".join(L))
    print("wrote", OUT, len(cases), "cases,", errors, "torch errors")


def rebuild(i):
    """The input rebuilt from its recorded encoding (a fresh storage, so writes do not leak between
    the generator's attempts)."""
    t = torch.tensor(i.vals, dtype=torch.float64).reshape(i.base)
    t = t.to(DT[i.dt]) if i.dt != "bool" else (t != 0)
    for op in i.layout.split("|"):
        if not op:
            continue
        kind, rest = op[0], op[1:].strip()
        a = [int(v) for v in rest.split(",") if v != ""]
        if kind == "t":
            t = t.transpose(a[0], a[1])
        elif kind == "p":
            t = t.permute(a)
        elif kind == "s":
            idx = [slice(None)] * t.dim()
            idx[a[0]] = slice(a[1], a[2], a[3])
            t = t[tuple(idx)]
        elif kind == "e":
            t = t.expand(a)
    return t


if __name__ == "__main__":
    main()

"""Writes tensor/tests/cpu/print_fuzz_golden.rs: a seeded random fuzz (seed 34) of torch's
repr(tensor) over dtypes (bool, u8, i8, i16, i32, i64, f16, bf16, f32, f64), shapes of rank 0-4
(empty and size-1 dims included), awkward values (1e-8 next to 1e8, integer-valued floats, -0.0,
NaN, +-inf, values that round differently at 4 decimals, integer extremes), summarised tensors
(> threshold elements), non-contiguous inputs (transposed, permuted, step-sliced), autograd
suffixes (requires_grad=True, grad_fn=<...>) and print-option variations.

Values are stored as a short pattern repeated cyclically over the base tensor, so large
summarised tensors stay small in the golden file.

Run with a torch install: python tensor/tests/make_print_fuzz_golden.py (then formats the
output with rustfmt when it is on PATH).
"""
import math
import os
import random
import shutil
import subprocess

import torch

SEED = 34
N_CASES = 300
torch.set_default_dtype(torch.float32)
OUT = os.path.join(os.path.dirname(__file__), "cpu", "print_fuzz_golden.rs")
DTYPES = {
    "bool": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
    "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
}
FLOATS = ["f16", "bf16", "f32", "f64"]
INT_RANGE = {"u8": (0, 255), "i8": (-128, 127), "i16": (-32768, 32767), "i32": (-2**31, 2**31 - 1),
             "i64": (-2**63, 2**63 - 1)}
DEFAULT_OPTS = (4, 1000, 3, 80, None)

rng = random.Random(SEED)


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


def rand_shape(rank, allow_empty=True):
    dims = []
    for _ in range(rank):
        r = rng.random()
        if allow_empty and r < 0.06:
            dims.append(0)
        elif r < 0.25:
            dims.append(1)
        else:
            dims.append(rng.randint(2, 6))
    return dims


def float_pattern(kind, n):
    out = []
    for _ in range(n):
        if kind == "small":
            v = rng.uniform(-10, 10)
        elif kind == "unit":
            v = rng.uniform(0, 1)
        elif kind == "intval":
            v = float(rng.randint(-1000, 1000))
        elif kind == "bigint":
            v = float(rng.randint(-10**9, 10**9))
        elif kind == "sci":
            v = rng.choice([1e-8, -1e-8, 1e8, -1e8, 3.25e-8, 2.5e8, 1.0, 0.5, 123.456])
        elif kind == "tiny":
            v = rng.choice([1, -1]) * 10 ** rng.uniform(-6, -2)
        elif kind == "large":
            v = rng.choice([1, -1]) * 10 ** rng.uniform(4, 9)
        elif kind == "special":
            v = rng.choice([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.5, -2.25, 1e-3, 7.0])
        elif kind == "round":
            v = rng.choice([0.12345, 2.00005, 0.99995, -0.00005, 1.23455, 9.99995, 0.5, 0.25, 1e-4, 5e-5])
        elif kind == "zeros":
            v = rng.choice([0.0, -0.0])
        elif kind == "nonfinite":
            v = rng.choice([float("nan"), float("inf"), float("-inf")])
        else:  # "wide": everything mixed
            v = rng.choice([1e-8, 1e8, -3.5, 0.1, float("nan"), 1e3, -1e-4, 65504.0, 1e20])
        out.append(v)
    return out


def int_pattern(dt, kind, n):
    lo, hi = INT_RANGE[dt]
    out = []
    for _ in range(n):
        if kind == "small":
            v = rng.randint(max(lo, -10), min(hi, 10))
        elif kind == "extreme":
            v = rng.choice([lo, hi, 0, lo + 1, hi - 1, 1])
        else:
            v = rng.randint(lo, hi)
        out.append(v)
    return out


def layout_for(shape):
    """Random base shape plus layout ops producing a non-contiguous tensor of some shape."""
    ops = []
    rank = len(shape)
    base = list(shape)
    cur = list(shape)
    r = rng.random()
    if rank >= 2 and r < 0.35:
        a, b = rng.sample(range(rank), 2)
        ops.append(f"t {a},{b}")
        cur[a], cur[b] = cur[b], cur[a]
    elif rank >= 3 and r < 0.5:
        perm = list(range(rank))
        rng.shuffle(perm)
        ops.append("p " + ",".join(map(str, perm)))
        cur = [cur[p] for p in perm]
    if rank >= 1 and rng.random() < 0.5:
        d = rng.randrange(rank)
        if cur[d] >= 2:
            step = rng.choice([2, 3])
            start = rng.randint(0, 1)
            end = cur[d]
            ops.append(f"s {d},{start},{end},{step}")
            cur[d] = len(range(start, end, step))
    return base, ops, cur


def apply_layout(t, ops):
    for op in ops:
        kind, rest = op.split(" ")
        n = [int(x) for x in rest.split(",")]
        if kind == "t":
            t = t.transpose(n[0], n[1])
        elif kind == "p":
            t = t.permute(*n)
        else:
            idx = [slice(None)] * t.dim()
            idx[n[0]] = slice(n[1], n[2], n[3])
            t = t[tuple(idx)]
    return t


def rand_opts():
    if rng.random() < 0.6:
        return DEFAULT_OPTS
    p, th, e, lw, sci = DEFAULT_OPTS
    if rng.random() < 0.5:
        p = rng.choice([0, 1, 2, 3, 6, 8])
    if rng.random() < 0.4:
        th = rng.choice([3, 5, 10, 50, 100000])
    if rng.random() < 0.4:
        e = rng.choice([0, 1, 2, 5])
    if rng.random() < 0.4:
        lw = rng.choice([20, 40, 60, 120])
    if rng.random() < 0.4:
        sci = rng.choice([True, False])
    return (p, th, e, lw, sci)


cases = []
for cid in range(N_CASES):
    dt = rng.choice(list(DTYPES))
    is_float = dt in FLOATS
    big = rng.random() < 0.12
    if big:
        rank = rng.randint(1, 4)
        # > 1000 elements: the default threshold summarises.
        while True:
            shape = [rng.randint(2, 40) for _ in range(rank)]
            if rank == 1:
                shape = [rng.randint(1001, 3000)]
            n = math.prod(shape)
            if 1000 < n <= 20000:
                break
    else:
        rank = rng.choice([0, 1, 1, 2, 2, 3, 4])
        shape = rand_shape(rank)
    if rng.random() < 0.4 and not big:
        base, ops, shape = layout_for(shape)
    elif big and rng.random() < 0.3 and rank >= 2:
        base, ops, shape = list(shape), [f"t 0,{rank - 1}"], list(shape)
        shape[0], shape[-1] = shape[-1], shape[0]
    else:
        base, ops = list(shape), []
    numel = math.prod(base)
    plen = max(1, min(numel, rng.choice([numel, numel, 7, 13]) if numel <= 64 else rng.choice([5, 11, 17, 64])))
    if numel == 0:
        plen = 0
    if is_float:
        kind = rng.choice(["small", "unit", "intval", "bigint", "sci", "tiny", "large", "special", "round",
                           "zeros", "nonfinite", "wide", "small", "round", "special"])
        pattern = float_pattern(kind, plen)
    elif dt == "bool":
        kind = "bool"
        pattern = [rng.randint(0, 1) for _ in range(plen)]
    else:
        kind = rng.choice(["small", "extreme", "any"])
        pattern = int_pattern(dt, kind, plen)
    grad, op = "", ""
    if is_float and rng.random() < 0.45:
        grad = "rg"
        if rng.random() < 0.5:
            op = rng.choice(["add", "mul", "neg"])
    opts = rand_opts()

    flat = [pattern[i % plen] for i in range(numel)] if numel else []
    if is_float:
        base_t = torch.tensor(flat, dtype=torch.float64).to(DTYPES[dt]).reshape(base)
        stored = base_t.double().reshape(-1)[:plen].tolist()
    else:
        base_t = torch.tensor(flat, dtype=torch.int64).to(DTYPES[dt]).reshape(base)
        stored = [int(v) for v in pattern]
    if grad:
        base_t.requires_grad_(True)
    t = apply_layout(base_t, ops)
    if op == "add":
        t = t + 1.0
    elif op == "mul":
        t = t * 2.0
    elif op == "neg":
        t = -t
    torch.set_printoptions(profile="default")
    torch.set_printoptions(precision=opts[0], threshold=opts[1], edgeitems=opts[2], linewidth=opts[3],
                           sci_mode=opts[4])
    text = repr(t)
    torch.set_printoptions(profile="default")
    torch.set_printoptions(sci_mode=None)
    cases.append(dict(id=cid, dtype=dt, kind=kind, base=base, stored=stored, is_float=is_float,
                      layout="|".join(ops), grad=grad, op=op, opts=opts, repr=text))


def opt_bool(b):
    return "None" if b is None else f"Some({str(b).lower()})"


lines = [
    "//! Generated by tensor/tests/make_print_fuzz_golden.py from torch " + torch.__version__
    + f" (seed {SEED}); do not edit.",
    "",
    "#![allow(clippy::approx_constant, clippy::excessive_precision)]",
    "",
    "/// One printing case.",
    "pub struct Case {",
    "    /// Case number.",
    "    pub id: usize,",
    "    /// The dtype's short name (`f32`, `i64`, `bool`, ...).",
    "    pub dtype: &'static str,",
    "    /// What kind of values the pattern holds (for the failure message).",
    "    pub kind: &'static str,",
    "    /// The contiguous base tensor's shape, before the layout ops.",
    "    pub base: &'static [usize],",
    "    /// Float pattern (float dtypes): the base's row-major values are this, repeated cyclically.",
    "    pub vals: &'static [f64],",
    "    /// Integer pattern (integer and bool dtypes), repeated the same way.",
    "    pub ints: &'static [i64],",
    "    /// `|`-separated `t a,b` / `p perm` / `s dim,start,end,step` ops applied to the base.",
    "    pub layout: &'static str,",
    "    /// `rg` when the base requires grad (set before the layout ops), else empty.",
    "    pub grad: &'static str,",
    "    /// An op applied last: `add` (+ 1.0), `mul` (* 2.0), `neg`, or empty.",
    "    pub op: &'static str,",
    "    /// Print options: (precision, threshold, edgeitems, linewidth, sci_mode).",
    "    pub opts: (usize, usize, usize, usize, Option<bool>),",
    "    /// torch's repr of the tensor.",
    "    pub repr: &'static str,",
    "}",
    "",
    "/// The cases.",
    "pub const CASES: &[Case] = &[",
]
for c in cases:
    vals = ", ".join(lit(v) for v in c["stored"]) if c["is_float"] else ""
    ints = ", ".join(str(v) for v in c["stored"]) if not c["is_float"] else ""
    p, th, e, lw, sci = c["opts"]
    lines += [
        "    Case {",
        f"        id: {c['id']},",
        f"        dtype: \"{c['dtype']}\",",
        f"        kind: \"{c['kind']}\",",
        f"        base: &[{', '.join(map(str, c['base']))}],",
        f"        vals: &[{vals}],",
        f"        ints: &[{ints}],",
        f"        layout: \"{c['layout']}\",",
        f"        grad: \"{c['grad']}\",",
        f"        op: \"{c['op']}\",",
        f"        opts: ({p}, {th}, {e}, {lw}, {opt_bool(sci)}),",
        f"        repr: {rust_str(c['repr'])},",
        "    },",
    ]
lines += ["];", ""]
with open(OUT, "w") as f:
    f.write("\n".join(lines))
if shutil.which("rustfmt"):
    cfg = os.path.join(os.path.dirname(__file__), "..", "..", "rustfmt.toml")
    subprocess.run(["rustfmt", "--edition", "2021", "--config-path", cfg, OUT], check=True)
print("wrote", OUT, len(cases), "cases")

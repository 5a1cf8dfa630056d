#!/usr/bin/env python3
"""Generates tests/golden/math.safetensors: torch reference results for the elementwise math and
activation ops (checked by tensor/tests/cpu/golden_math.rs).

Run from the repository root with the reference environment:

    /work/.refenv/bin/python tests/golden/make_golden_math.py

It reuses make_golden.py's conventions and helpers (value generators, `add_case`, the deterministic
safetensors writer, the `in<i>_view` views and `error: true` cases). Case metadata fields:

* "kind": unary | binary | clamp | lerp | softmax | glu | pow_scalar_base | cast
* "op": oxtorch's method name
* "args": op parameters (unary ops), e.g. {"eps": 1e-6}, {"decimals": 2}, {"approximate": "tanh"};
  float parameters that are not finite are written as the strings "nan", "inf", "-inf"
* "scalar": {"v": value, "t": "int" | "float" | "bool"} for a Python-number operand (binary ops, the
  lerp weight, the base of pow_scalar_base)
* "min" / "max" (clamp): absent for None, {"tensor": i} for input i, or a scalar as above
* "dim" / "dtype" (softmax, log_softmax, glu): the dim and the optional dtype argument (null = None)
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as g  # noqa: E402

from make_golden import ALL, DTYPES, FLOATS, INTS, add_case, cast, general, nonzero  # noqa: E402

RNG = np.random.default_rng(20260529)
NAN, INF = math.nan, math.inf

# Special float values (16 of them: a 4x4 tensor).
SPECIAL = [NAN, INF, -INF, -0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 1.5, 1e-3, -1e-20, 20.0, -25.0, 100.0, 1e5]


def index_error_as_runtime(fn):
    """torch raises IndexError for a bad dim; make_golden's `add_case` records RuntimeError-likes."""
    def run(*args):
        try:
            return fn(*args)
        except IndexError as e:
            raise RuntimeError(str(e)) from e
    return run


def uniform(lo, hi, shape, dt, decimals=3):
    return cast(np.round(RNG.uniform(lo, hi, shape), decimals), dt)


def fnum(v):
    """A float parameter for the JSON metadata (non-finite values as strings)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def scalar_meta(v):
    t = "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"
    return {"v": fnum(v), "t": t}


# ---------------------------------------------------------------------------------------------------
# unary math

# op -> (torch function, input generator for float dtypes)
UNARY = {
    "sign": (torch.sign, None),
    "exp2": (torch.exp2, None),
    "expm1": (torch.expm1, None),
    "log2": (torch.log2, lambda s, d: uniform(-0.5, 8, s, d)),
    "log10": (torch.log10, lambda s, d: uniform(-0.5, 8, s, d)),
    "log1p": (torch.log1p, lambda s, d: uniform(-1.2, 3, s, d)),
    "tan": (torch.tan, None),
    "asin": (torch.asin, lambda s, d: uniform(-1.2, 1.2, s, d)),
    "acos": (torch.acos, lambda s, d: uniform(-1.2, 1.2, s, d)),
    "atan": (torch.atan, None),
    "sinh": (torch.sinh, None),
    "cosh": (torch.cosh, None),
    "asinh": (torch.asinh, None),
    "acosh": (torch.acosh, lambda s, d: uniform(0.5, 6, s, d)),
    "atanh": (torch.atanh, lambda s, d: uniform(-1.1, 1.1, s, d)),
    "erf": (torch.erf, None),
    "erfc": (torch.erfc, lambda s, d: uniform(-3, 8, s, d)),
    "erfinv": (torch.erfinv, lambda s, d: uniform(-1, 1, s, d, 4)),
    "reciprocal": (torch.reciprocal, None),
    "frac": (torch.frac, None),
    "isinf": (torch.isinf, None),
    "isposinf": (torch.isposinf, None),
    "isneginf": (torch.isneginf, None),
    "isfinite": (torch.isfinite, None),
    "nan_to_num": (torch.nan_to_num, None),
    "logical_not": (torch.logical_not, None),
}

# Parameterised unary ops: (op, args, torch function, float input generator)
PARAM_UNARY = [
    ("logit", {"eps": None}, lambda x: torch.logit(x), lambda s, d: uniform(-0.2, 1.2, s, d)),
    ("logit", {"eps": 1e-6}, lambda x: torch.logit(x, 1e-6), lambda s, d: uniform(-0.2, 1.2, s, d)),
    ("logit", {"eps": 0.25}, lambda x: torch.logit(x, 0.25), lambda s, d: uniform(-0.2, 1.2, s, d)),
    ("logit", {"eps": -1.0}, lambda x: torch.logit(x, -1.0), lambda s, d: uniform(-0.2, 1.2, s, d)),
    ("round", {"decimals": 0}, lambda x: torch.round(x, decimals=0), None),
    ("round", {"decimals": 2}, lambda x: torch.round(x, decimals=2), lambda s, d: uniform(-30, 30, s, d, 5)),
    ("round", {"decimals": 1}, lambda x: torch.round(x, decimals=1), lambda s, d: uniform(-30, 30, s, d, 3)),
    ("round", {"decimals": -1}, lambda x: torch.round(x, decimals=-1), lambda s, d: uniform(-300, 300, s, d)),
    ("nan_to_num", {"nan": 1.5, "posinf": 7.0, "neginf": -9.0},
     lambda x: torch.nan_to_num(x, 1.5, 7.0, -9.0), None),
    ("nan_to_num", {"posinf": 1e10}, lambda x: torch.nan_to_num(x, posinf=1e10), None),
]

ACTIVATIONS = [
    ("relu6", {}, F.relu6),
    ("hardtanh", {"min_val": -1.0, "max_val": 1.0}, F.hardtanh),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, lambda x: F.hardtanh(x, -0.5, 2.0)),
    ("leaky_relu", {"negative_slope": 0.01}, F.leaky_relu),
    ("leaky_relu", {"negative_slope": 0.2}, lambda x: F.leaky_relu(x, 0.2)),
    ("leaky_relu", {"negative_slope": -1.5}, lambda x: F.leaky_relu(x, -1.5)),
    ("elu", {"alpha": 1.0}, F.elu),
    ("elu", {"alpha": 0.5}, lambda x: F.elu(x, 0.5)),
    ("selu", {}, F.selu),
    ("celu", {"alpha": 1.0}, F.celu),
    ("celu", {"alpha": 2.0}, lambda x: F.celu(x, 2.0)),
    ("gelu", {"approximate": "none"}, F.gelu),
    ("gelu", {"approximate": "tanh"}, lambda x: F.gelu(x, approximate="tanh")),
    ("silu", {}, F.silu),
    ("mish", {}, F.mish),
    ("softplus", {"beta": 1.0, "threshold": 20.0}, F.softplus),
    ("softplus", {"beta": 2.0, "threshold": 1.0}, lambda x: F.softplus(x, 2.0, 1.0)),
    ("softplus", {"beta": 0.5, "threshold": 5.0}, lambda x: F.softplus(x, 0.5, 5.0)),
    ("hardsigmoid", {}, F.hardsigmoid),
    ("hardswish", {}, F.hardswish),
    ("sigmoid", {}, torch.sigmoid),
    ("relu", {}, torch.relu),
]


def unary_case(name, op, args, fn, x, view=None):
    meta = {"kind": "unary", "op": op, "args": {k: fnum(v) for k, v in args.items()}}
    if view:
        meta["in0_view"] = view
    add_case(name, meta, [x], fn)


def unary_cases():
    table = [(op, {}, fn, gen) for op, (fn, gen) in UNARY.items()] + PARAM_UNARY
    table += [(op, args, fn, lambda s, d: uniform(-6, 6, s, d, 2)) for op, args, fn in ACTIVATIONS]
    seen = {}
    for op, args, fn, gen in table:
        tag = op + "".join(f"/{k}={v}" for k, v in args.items())
        seen[tag] = seen.get(tag, 0) + 1
        for dt in ALL:
            x = gen([3, 4], dt) if gen and dt in FLOATS else general([3, 4], dt)
            unary_case(f"unary/{tag}/{dt}", op, args, fn, x)
        for dt in FLOATS:
            sp = SPECIAL
            if op == "gelu" and args["approximate"] == "none":
                # torch's vectorised f32/bf16 erf gives gelu(+inf) = NaN; oxtorch gives +inf (as torch
                # does for f16 and f64).
                sp = [1e4 if v == INF else v for v in SPECIAL]
            unary_case(f"unary/{tag}/{dt}/special", op, args, fn, cast(sp, dt).reshape(4, 4))
        # Non-contiguous, 0-d and empty inputs.
        unary_case(f"unary/{tag}/f32/transpose", op, args, fn, general([4, 3], "f32"), "transpose")
        unary_case(f"unary/{tag}/f64/step", op, args, fn, general([3, 8], "f64"), "step")
        unary_case(f"unary/{tag}/f32/0d", op, args, fn, cast(0.75, "f32"))
        unary_case(f"unary/{tag}/f16/empty", op, args, fn, cast(np.zeros([0, 3]), "f16"))
    # Larger inputs for the vectorised activation kernels.
    x = uniform(-10, 10, [16, 200], "f32")
    for op, args, fn in ACTIVATIONS:
        if op in ("gelu", "silu", "sigmoid", "softplus", "mish", "elu"):
            tag = op + "".join(f"/{k}={v}" for k, v in args.items())
            unary_case(f"unary/{tag}/f32/16x200", op, args, fn, x)
    # Accuracy of the erf family over wide ranges, in f64 and f32.
    for dt in ("f32", "f64"):
        wide = cast(np.concatenate([np.linspace(-6, 6, 61), [-30, 27.5, 30, 1e-10, -1e-300]]), dt)
        for op in ("erf", "erfc"):
            unary_case(f"unary/{op}/{dt}/wide", op, {}, UNARY[op][0], wide)
        edge = [-1.0, 1.0, 0.0, -0.0, 1e-12, 0.999, -0.9999, 0.5, 1.0 - 2.0 ** -20, 1.0000001, -2.0, NAN]
        y = cast(np.concatenate([np.linspace(-0.995, 0.995, 41), edge]), dt)
        unary_case(f"unary/erfinv/{dt}/wide", "erfinv", {}, torch.erfinv, y)
    y = cast([1.0 - 1e-15, -(1.0 - 1e-12), 1e-300, 1.0 - 2.0 ** -52, 0.84375, 0.25], "f64")
    unary_case("unary/erfinv/f64/near_one", "erfinv", {}, torch.erfinv, y)
    big = cast([88.0, -88.0, 700.0, -745.0, 1e-8, -1e-8, 0.1, 3.0], "f64")
    for op in ("expm1", "sinh", "cosh", "exp2", "log1p", "asinh"):
        unary_case(f"unary/{op}/f64/range", op, {}, UNARY[op][0], big)
    # Bad arguments.
    add_case("unary/gelu/bad_approximate", {"kind": "unary", "op": "gelu", "args": {"approximate": "erf"}},
             [general([3], "f32")], lambda x: F.gelu(x, approximate="erf"))
    add_case("unary/hardtanh/min_gt_max", {"kind": "unary", "op": "hardtanh",
                                            "args": {"min_val": 2.0, "max_val": 1.0}},
             [general([3], "f32")], lambda x: F.hardtanh(x, 2.0, 1.0))
    add_case("unary/celu/alpha0", {"kind": "unary", "op": "celu", "args": {"alpha": 0.0}},
             [general([3], "f32")], lambda x: F.celu(x, 0.0))
    add_case("unary/round/f32/decimals=40", {"kind": "unary", "op": "round", "args": {"decimals": 40}},
             [general([3], "f32")], lambda x: torch.round(x, decimals=40))
    add_case("unary/hardtanh/i64/fractional_bounds",
             {"kind": "unary", "op": "hardtanh", "args": {"min_val": -1.5, "max_val": 2.5}},
             [general([3, 4], "i64")], lambda x: F.hardtanh(x, -1.5, 2.5))
    add_case("unary/round/i64/decimals", {"kind": "unary", "op": "round", "args": {"decimals": 1}},
             [general([3], "i64")], lambda x: torch.round(x, decimals=1))


# ---------------------------------------------------------------------------------------------------
# binary math

BINARY = {
    "atan2": torch.atan2,
    "fmod": torch.fmod,
    "hypot": torch.hypot,
    "copysign": torch.copysign,
    "bitwise_left_shift": torch.bitwise_left_shift,
    "bitwise_right_shift": torch.bitwise_right_shift,
    "pow": torch.pow,
    "floor_divide": torch.floor_divide,
    "remainder": torch.remainder,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}
DIVISION = ("fmod", "floor_divide", "remainder")
SHIFTS = ("bitwise_left_shift", "bitwise_right_shift")


def shift_amounts(shape, dt):
    if dt == "bool":
        return general(shape, dt)
    amounts = [0, 1, 3, 7, 2, 5] if dt in ("u8", "i8") else [-1, 0, 1, 3, 7, 8, 15, 31, 63, 64, 100]
    if dt in ("u8", "i8"):
        amounts += [8, 9, 100] if dt == "u8" else [-1, 8, 100]
    return cast(RNG.choice(amounts, shape), dt)


def binary_inputs(op, sa, da, sb, db):
    if op in DIVISION:
        return general(sa, da), nonzero(sb, db)
    if op in SHIFTS:
        a = cast(RNG.integers(-100, 101, sa), da) if da in INTS and da != "u8" else general(sa, da)
        return a, shift_amounts(sb, db)
    if op == "pow":
        return g.pow_base(sa, da), g.pow_exp(sb, db)
    return general(sa, da), general(sb, db)


MIXED = [("i32_f16", "i32", [3, 4], "f16", [3, 4]), ("u8_i8", "u8", [3, 1], "i8", [1, 4]),
         ("bool_i64", "bool", [3, 4], "i64", [4]), ("f32_f64", "f32", [3, 4], "f64", [3, 4]),
         ("i64_f32", "i64", [2, 3, 4], "f32", [4]), ("bf16_0d-f64", "bf16", [3, 4], "f64", []),
         ("0d-i64_i16", "i64", [], "i16", [3, 4]), ("f16_bf16", "f16", [3, 4], "bf16", [3, 4])]
SCALARS = [2, -1, 2.5, True, -0.0]
# The ops torch gives a Python-number overload (oxtorch accepts numbers for all of them).
SCALAR_OPS = ("fmod", "copysign", "bitwise_left_shift", "bitwise_right_shift", "pow", "floor_divide",
              "remainder")


def binary_cases():
    for op, fn in BINARY.items():
        for dt in ALL:
            a, b = binary_inputs(op, [3, 1], dt, [1, 4], dt)
            add_case(f"binary/{op}/{dt}/3x1_1x4", {"kind": "binary", "op": op}, [a, b], fn)
            a, b = binary_inputs(op, [2, 3], dt, [2, 3], dt)
            add_case(f"binary/{op}/{dt}/2x3", {"kind": "binary", "op": op}, [a, b], fn)
        for tag, da, sa, db, sb in MIXED:
            a, b = binary_inputs(op, sa, da, sb, db)
            add_case(f"binary/{op}/mixed/{tag}", {"kind": "binary", "op": op}, [a, b], fn)
        for s in SCALARS if op in SCALAR_OPS else []:
            if op in SHIFTS and isinstance(s, float):
                continue
            for dt in ("bool", "u8", "i32", "f16", "f32", "f64"):
                a = binary_inputs(op, [3, 4], dt, [1], dt)[0]
                meta = {"kind": "binary", "op": op, "scalar": scalar_meta(s)}
                add_case(f"binary/{op}/{dt}/scalar={s!r}", meta, [a], lambda x, fn=fn, s=s: fn(x, s))
        # Special values: every pair of a few floats.
        if op not in SHIFTS:
            sp = [NAN, INF, -INF, -0.0, 0.0, 1.0, -2.5, 7.0]
            for dt in FLOATS:
                a, b = cast(sp, dt).reshape(8, 1), cast(sp, dt).reshape(1, 8)
                add_case(f"binary/{op}/{dt}/special", {"kind": "binary", "op": op}, [a, b], fn)
        # Non-contiguous operands.
        a, b = binary_inputs(op, [4, 3], "f32", [3, 8], "f32")
        meta = {"kind": "binary", "op": op, "in0_view": "transpose", "in1_view": "step"}
        add_case(f"binary/{op}/f32/views", meta, [a, b], fn)
        a, b = binary_inputs(op, [4, 3], "i64", [3, 1], "i64")
        meta = {"kind": "binary", "op": op, "in0_view": "transpose", "in1_view": "expand"}
        add_case(f"binary/{op}/i64/views", meta, [a, b], fn)
        a, b = binary_inputs(op, [0, 4], "f32", [4], "f32")
        add_case(f"binary/{op}/f32/empty", {"kind": "binary", "op": op}, [a, b], fn)
    for op in ("fmod", "floor_divide", "remainder"):
        for dt in ("i32", "u8"):
            a, b = cast([3, 4, 5, 6], dt), cast([1, 2, 0, 3], dt)
            add_case(f"binary/{op}/{dt}/by_zero", {"kind": "binary", "op": op}, [a, b], BINARY[op])
    a, b = cast([-7, 7, -7, 7, -128, 5], "i8"), cast([2, -2, -2, 2, -1, 5], "i8")
    add_case("binary/fmod/i8/signs", {"kind": "binary", "op": "fmod"}, [a, b], torch.fmod)
    # pow: 0 ** 0, negative exponents, float ** negative, int rules.
    for dt in FLOATS:
        a = cast([0.0, 0.0, -0.0, 2.0, -2.0, -2.0, 0.5, 1.0, -8.0, INF, NAN, 1.0], dt)
        b = cast([0.0, -1.0, -1.0, -2.0, -3.0, 0.5, -0.5, NAN, 1.0 / 3.0, -1.0, 0.0, INF], dt)
        add_case(f"binary/pow/{dt}/edges", {"kind": "binary", "op": "pow"}, [a, b], torch.pow)
    for dt in ("i8", "i64", "u8"):
        a = cast([0, 0, 2, 1, 3, 5, 2, 7], dt)
        b = cast([0, 3, 7, 9, 4, 3, 10, 0], dt)
        add_case(f"binary/pow/{dt}/overflow", {"kind": "binary", "op": "pow"}, [a, b], torch.pow)
    for s in (-1, -2, 0, -1.5, 0.5):
        for dt in ("i32", "f32", "f64", "bf16"):
            a = cast([0.0, 1.0, -1.0, 2.0, 4.0, 0.5], dt)
            meta = {"kind": "binary", "op": "pow", "scalar": scalar_meta(s)}
            add_case(f"binary/pow/{dt}/scalar_exp={s!r}", meta, [a], lambda x, s=s: torch.pow(x, s))
    for base in (2, 2.5, 0, -1, True):
        for dt in ("i64", "u8", "f32", "f16", "bool"):
            e = cast([0, 1, 2, 3, -1, -2], dt) if dt not in ("bool", "u8") else general([6], dt)
            meta = {"kind": "pow_scalar_base", "op": "pow", "scalar": scalar_meta(base)}
            add_case(f"pow_scalar_base/{base!r}/{dt}", meta, [e], lambda x, b=base: torch.pow(b, x))


# ---------------------------------------------------------------------------------------------------
# clamp and lerp


def clamp_cases():
    def run(name, x, lo, hi, extra=()):
        inputs = [x, *extra]
        meta = {"kind": "clamp", "op": "clamp"}
        args = []
        for key, b in (("min", lo), ("max", hi)):
            if b is None:
                args.append(None)
            elif isinstance(b, torch.Tensor):
                meta[key] = {"tensor": len(inputs)}
                inputs.append(b)
                args.append("t")
            else:
                meta[key] = scalar_meta(b)
                args.append(b)

        def fn(x, *ts):
            it = iter(ts[len(extra):])
            lo_ = next(it) if args[0] == "t" else args[0]
            hi_ = next(it) if args[1] == "t" else args[1]
            return torch.clamp(x, lo_, hi_)

        add_case(name, meta, inputs, fn)

    for dt in ALL:
        x = general([3, 4], dt)
        run(f"clamp/{dt}/int", x, -1, 2)
        run(f"clamp/{dt}/float", x, -0.5, 1.5)
        run(f"clamp/{dt}/min_only", x, 1, None)
        run(f"clamp/{dt}/max_only", x, None, 0.5)
        run(f"clamp/{dt}/none", x, None, None)
        run(f"clamp/{dt}/min_gt_max", x, 2, -1)
        run(f"clamp/{dt}/bool", x, False, True)
        run(f"clamp/{dt}/tensors", x, general([4], dt), general([3, 1], dt))
        run(f"clamp/{dt}/tensor_min_f64", x, general([3, 4], "f64"), None)
        run(f"clamp/{dt}/tensor_max_0d-i64", x, None, cast(3, "i64"))
    for dt in FLOATS:
        x = cast(SPECIAL, dt).reshape(4, 4)
        run(f"clamp/{dt}/special", x, -1.0, 1.0)
        run(f"clamp/{dt}/nan_min", x, NAN, 1.0)
        run(f"clamp/{dt}/nan_max", x, None, NAN)
        lo = cast([NAN, 0.0, -INF, 1.0], dt)
        run(f"clamp/{dt}/nan_tensor_min", x, lo, None)
    run("clamp/f32/broadcast_out", general([4], "f32"), general([3, 1], "f32"), None)
    run("clamp/f32/transpose", general([4, 3], "f32").t(), -1, 1)
    run("clamp/i32/0d", cast(5, "i32"), 0, 3)
    run("clamp/f32/empty", cast(np.zeros([0, 2]), "f32"), 0, 1)


def lerp_cases():
    for dt in ALL:
        a, b = general([3, 4], dt), general([3, 4], dt)
        for w in (0.3, 0.7, 1.5, -0.5, 1):
            meta = {"kind": "lerp", "op": "lerp", "scalar": scalar_meta(w)}
            add_case(f"lerp/{dt}/w={w!r}", meta, [a, b], lambda a, b, w=w: torch.lerp(a, b, w))
        w = cast(np.round(RNG.uniform(-1, 2, [4]), 2), dt) if dt in FLOATS else general([4], dt)
        add_case(f"lerp/{dt}/tensor_weight", {"kind": "lerp", "op": "lerp"}, [a, b, w], torch.lerp)
    add_case("lerp/f32_f64/mismatch", {"kind": "lerp", "op": "lerp", "scalar": scalar_meta(0.5)},
             [general([3], "f32"), general([3], "f64")], lambda a, b: torch.lerp(a, b, 0.5))
    add_case("lerp/f32/weight_f64", {"kind": "lerp", "op": "lerp"},
             [general([3], "f32"), general([3], "f32"), general([3], "f64")], torch.lerp)
    add_case("lerp/f32/broadcast", {"kind": "lerp", "op": "lerp"},
             [general([3, 1], "f32"), general([4], "f32"), uniform(0, 1, [3, 4], "f32")], torch.lerp)
    sp = cast(SPECIAL, "f32")
    add_case("lerp/f32/special", {"kind": "lerp", "op": "lerp", "scalar": scalar_meta(0.25)},
             [sp, sp.flip(0)], lambda a, b: torch.lerp(a, b, 0.25))


# ---------------------------------------------------------------------------------------------------
# softmax, log_softmax, glu


def softmax_cases():
    fns = {"softmax": F.softmax, "log_softmax": F.log_softmax}
    for op, fn in fns.items():
        for dt in FLOATS:
            x = uniform(-4, 4, [2, 3, 4], dt, 2)
            for dim in (0, 1, 2, -1, -3):
                meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
                add_case(f"{op}/{dt}/d{dim}", meta, [x], lambda x, fn=fn, d=dim: fn(x, d))
            for to in ("f32", "f64"):
                for dim in (0, 2):
                    meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": to}
                    add_case(f"{op}/{dt}/d{dim}/dtype={to}", meta, [x],
                             lambda x, fn=fn, d=dim, to=to: fn(x, d, dtype=DTYPES[to]))
        for dt in ["bool"] + INTS:
            x = general([3, 4], dt)
            for dim in (0, 1):
                meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
                add_case(f"{op}/{dt}/d{dim}", meta, [x], lambda x, fn=fn, d=dim: fn(x, d))
                meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": "f32"}
                add_case(f"{op}/{dt}/d{dim}/dtype=f32", meta, [x],
                         lambda x, fn=fn, d=dim: fn(x, d, dtype=torch.float32))
        # Stability and special values.
        x = cast([[1000.0, 1001.0, 999.0, -1000.0], [-INF, 0.0, -INF, 1.0], [-INF, -INF, -INF, -INF],
                  [NAN, 1.0, 2.0, 3.0], [INF, 1.0, 2.0, 3.0], [-1e30, 1e30, 0.0, 5.0]], "f32")
        for dim in (0, 1):
            meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
            add_case(f"{op}/f32/special/d{dim}", meta, [x], lambda x, fn=fn, d=dim: fn(x, d))
        x = uniform(-3, 3, [6, 80], "f64")
        for dim in (0, 1):
            meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
            add_case(f"{op}/f64/6x80/d{dim}", meta, [x], lambda x, fn=fn, d=dim: fn(x, d))
        # Larger inputs: many rows per parallel task, long rows, long columns.
        for tag, dt, shape, dim in (("12x1030", "f16", [12, 1030], -1), ("1030x5", "f32", [1030, 5], 0),
                                    ("5x1030", "f32", [5, 1030], 1)):
            meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
            add_case(f"{op}/{dt}/{tag}/d{dim}", meta, [uniform(-8, 8, shape, dt)],
                     lambda x, fn=fn, d=dim: fn(x, d))
        for view in ("transpose", "step"):
            meta = {"kind": "softmax", "op": op, "dim": 1, "dtype": None, "in0_view": view}
            x = uniform(-3, 3, g.view_storage_shape([3, 4], view), "f32")
            add_case(f"{op}/f32/{view}", meta, [x], lambda x, fn=fn: fn(x, 1))
        for dim in (0, -1):
            meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
            add_case(f"{op}/f32/0d/d{dim}", meta, [cast(0.3, "f32")], lambda x, fn=fn, d=dim: fn(x, d))
        for dim in (0, 1):
            meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
            add_case(f"{op}/f32/empty/d{dim}", meta, [cast(np.zeros([0, 3]), "f32")],
                     lambda x, fn=fn, d=dim: fn(x, d))
        for dim in (2, -3):
            meta = {"kind": "softmax", "op": op, "dim": dim, "dtype": None}
            add_case(f"{op}/f32/bad_dim{dim}", meta, [general([3, 4], "f32")],
                     index_error_as_runtime(lambda x, fn=fn, d=dim: fn(x, d)))
    for dt in ALL:
        for dim in (0, 1, -1):
            meta = {"kind": "glu", "op": "glu", "dim": dim}
            add_case(f"glu/{dt}/d{dim}", meta, [general([4, 6], dt)], lambda x, d=dim: F.glu(x, d))
    add_case("glu/f32/odd", {"kind": "glu", "op": "glu", "dim": 1}, [general([4, 3], "f32")],
             lambda x: F.glu(x, 1))
    add_case("glu/f32/0d", {"kind": "glu", "op": "glu", "dim": 0}, [cast(1.0, "f32")],
             lambda x: F.glu(x, 0))
    add_case("glu/f32/transpose", {"kind": "glu", "op": "glu", "dim": 0, "in0_view": "transpose"},
             [general([4, 6], "f32")], lambda x: F.glu(x, 0))


# ---------------------------------------------------------------------------------------------------
# casts of special values

CAST_SPECIAL = [NAN, INF, -INF, 1e10, -1e10, 3e9, -3e9, 300.0, -300.0, 70000.0, 1e20, -0.0, 2.0 ** 63,
                -2.0 ** 63, 2.0 ** 31, 65504.0, 65520.0, 3.4e38, 1e-8, 255.9, -128.5, 1 + 2.0 ** -11 + 2.0 ** -40,
                1 + 2.0 ** -8 + 2.0 ** -40, 1e-45, 3.4e39]


def cast_cases():
    for src in FLOATS:
        x = cast(CAST_SPECIAL, src)
        for dst in ALL:
            add_case(f"cast/special/{src}/{dst}", {"kind": "cast", "op": "to_dtype", "dtype": dst}, [x],
                     lambda x, dst=dst: x.to(DTYPES[dst]))
    big = cast([2 ** 62 + 1, -(2 ** 62) - 3, 2 ** 31 + 1, 2 ** 24 + 1, 2 ** 53 + 1, -1, 255, 256], "i64")
    big[0], big[1] = 2 ** 62 + 1, -(2 ** 62) - 3
    big[4] = 2 ** 53 + 1
    for dst in ALL:
        add_case(f"cast/special/i64/{dst}", {"kind": "cast", "op": "to_dtype", "dtype": dst}, [big],
                 lambda x, dst=dst: x.to(DTYPES[dst]))


# ---------------------------------------------------------------------------------------------------
# special functions and composite pointwise ops (appended last: earlier cases keep their inputs)

SPECIAL_UNARY = [
    ("lgamma", {}, torch.lgamma, lambda s, d: uniform(-4.5, 12, s, d)),
    ("digamma", {}, torch.digamma, lambda s, d: uniform(-4.5, 12, s, d)),
    ("polygamma", {"n": 1}, lambda x: torch.polygamma(1, x), lambda s, d: uniform(-4.5, 12, s, d)),
    ("polygamma", {"n": 2}, lambda x: torch.polygamma(2, x), lambda s, d: uniform(-4.5, 12, s, d)),
    ("polygamma", {"n": 3}, lambda x: torch.polygamma(3, x), lambda s, d: uniform(0.1, 12, s, d)),
    ("sinc", {}, torch.sinc, None),
    ("signbit", {}, torch.signbit, None),
    ("entr", {}, torch.special.entr, lambda s, d: uniform(-0.5, 4, s, d)),
    ("ndtr", {}, torch.special.ndtr, None),
    ("mvlgamma", {"p": 3}, lambda x: torch.mvlgamma(x, 3), lambda s, d: uniform(1.2, 6, s, d)),
]

SPECIAL_BINARY = {
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "xlogy": torch.xlogy,
    "xlog1py": torch.special.xlog1py,
    "float_power": torch.float_power,
}


def special_cases():
    for op, args, fn, gen in SPECIAL_UNARY:
        tag = op + "".join(f"/{k}={v}" for k, v in args.items())
        for dt in ALL:
            if op == "mvlgamma" and dt not in FLOATS:
                continue
            x = gen([3, 4], dt) if gen and dt in FLOATS else general([3, 4], dt)
            unary_case(f"unary/{tag}/{dt}", op, args, fn, x)
        for dt in FLOATS:
            unary_case(f"unary/{tag}/{dt}/special", op, args, fn, cast(SPECIAL, dt).reshape(4, 4))
        unary_case(f"unary/{tag}/f32/transpose", op, args, fn, general([4, 3], "f32"), "transpose")
        unary_case(f"unary/{tag}/f16/empty", op, args, fn, cast(np.zeros([0, 3]), "f16"))
    # Poles, zeros of the gamma function's log, the negative axis, large arguments.
    edge = [0.0, -0.0, -1.0, -2.0, -2.5, -0.5, 1.0, 2.0, 0.5, 1e-8, 1e-300, 1e6, 1e17, 3e17, 171.5,
            2.5e305, -1e-8, -100.5, NAN, INF, -INF]
    for dt in ("f32", "f64"):
        y = cast(np.concatenate([np.linspace(-9.75, 30, 160), edge]), dt)
        for op, args, fn, _ in SPECIAL_UNARY[:5]:
            tag = op + "".join(f"/{k}={v}" for k, v in args.items())
            unary_case(f"unary/{tag}/{dt}/wide", op, args, fn, y)
    add_case("unary/polygamma/negative_n", {"kind": "unary", "op": "polygamma", "args": {"n": -1}},
             [general([3], "f32")], lambda x: torch.polygamma(-1, x))
    for op, fn in SPECIAL_BINARY.items():
        for dt in ALL:
            a, b = general([3, 1], dt), general([1, 4], dt)
            add_case(f"binary/{op}/{dt}/3x1_1x4", {"kind": "binary", "op": op}, [a, b], fn)
        for tag, da, sa, db, sb in MIXED:
            a, b = general(sa, da), general(sb, db)
            add_case(f"binary/{op}/mixed/{tag}", {"kind": "binary", "op": op}, [a, b], fn)
        sp = [NAN, INF, -INF, -0.0, 0.0, 1.0, -2.5, 7.0]
        for dt in FLOATS:
            a, b = cast(sp, dt).reshape(8, 1), cast(sp, dt).reshape(1, 8)
            add_case(f"binary/{op}/{dt}/special", {"kind": "binary", "op": op}, [a, b], fn)
        a, b = general([4, 3], "f32"), general([3, 8], "f32")
        meta = {"kind": "binary", "op": op, "in0_view": "transpose", "in1_view": "step"}
        add_case(f"binary/{op}/f32/views", meta, [a, b], fn)
    for op in ("xlogy", "float_power"):
        for s in (2, 2.5, -0.0):
            for dt in ("i32", "f16", "f32", "f64"):
                meta = {"kind": "binary", "op": op, "scalar": scalar_meta(s)}
                add_case(f"binary/{op}/{dt}/scalar={s!r}", meta, [general([3, 4], dt)],
                         lambda x, fn=SPECIAL_BINARY[op], s=s: fn(x, s))
    for dt in ALL:
        a, b = general([3, 4], dt), general([4], dt)
        add_case(f"binary/heaviside/{dt}", {"kind": "binary", "op": "heaviside"}, [a, b], torch.heaviside)
    for dt in FLOATS:
        a, b = cast(sp, dt), cast([0.5, -1, 2, NAN, 3, 4, 5, 6], dt)
        add_case(f"binary/heaviside/{dt}/special", {"kind": "binary", "op": "heaviside"}, [a, b],
                 torch.heaviside)
    add_case("binary/heaviside/mixed", {"kind": "binary", "op": "heaviside"},
             [general([3], "f32"), general([3], "f64")], torch.heaviside)
    for op, fn in (("addcmul", torch.addcmul), ("addcdiv", torch.addcdiv)):
        for dt in ("i64", "f16", "bf16", "f32", "f64"):
            for value in (1, 0.5, -2):
                ins = [general([3, 1], dt), general([1, 4], dt), nonzero([4], dt)]
                meta = {"kind": "addc", "op": op, "scalar": scalar_meta(value)}
                add_case(f"{op}/{dt}/value={value!r}", meta, ins, lambda *t, fn=fn, v=value: fn(*t, value=v))
        ins = [general([3, 4], "f16"), general([3, 4], "f32"), nonzero([3, 4], "f64")]
        meta = {"kind": "addc", "op": op, "scalar": scalar_meta(1.5)}
        add_case(f"{op}/mixed", meta, ins, lambda *t, fn=fn: fn(*t, value=1.5))
    for rtol, atol, equal_nan in ((1e-5, 1e-8, False), (0.1, 0.0, True), (0.0, 0.0, False), (-1.0, 0.0, False)):
        for dt in ALL:
            a = general([4, 4], dt) if dt not in FLOATS else cast(SPECIAL, dt).reshape(4, 4)
            b = a.clone() if dt == "bool" else torch.where(torch.arange(16).reshape(4, 4) % 3 == 0, a, a * 1.05 if dt in FLOATS else a + 1)
            meta = {"kind": "isclose", "op": "isclose", "args": {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}}
            add_case(f"isclose/{dt}/rtol={rtol}/atol={atol}/equal_nan={equal_nan}", meta, [a, b],
                     lambda a, b, r=rtol, t=atol, e=equal_nan: torch.isclose(a, b, r, t, e))
    add_case("isclose/mixed", {"kind": "isclose", "op": "isclose", "args": {"rtol": 1e-5, "atol": 1e-8}},
             [general([3], "f32"), general([3], "f64")], lambda a, b: torch.isclose(a, b))


def main():
    unary_cases()
    binary_cases()
    clamp_cases()
    lerp_cases()
    softmax_cases()
    cast_cases()
    special_cases()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "math.safetensors")
    g.save_deterministic(g.TENSORS, out, g.META)
    n_err = sum(1 for m in g.META.values() if '"error":true' in m)
    print(f"wrote {out}: {len(g.META)} cases ({n_err} error cases), {len(g.TENSORS)} tensors, "
          f"{os.path.getsize(out)} bytes")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()

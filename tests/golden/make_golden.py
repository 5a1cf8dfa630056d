#!/usr/bin/env python3
"""Generates tests/golden/ops.safetensors: torch reference results for oxtorch-tensor's golden test.

Run from the repository root with the reference environment:

    /work/.refenv/bin/python tests/golden/make_golden.py

The output is deterministic (seeded numpy generator, one torch thread). Layout of the file:

* for each case `<case>`: inputs `<case>.in0`, `<case>.in1`, ... stored contiguously in their real dtype,
  and the expected output `<case>.out` (plus `<case>.out1` for a second output such as indices);
* the safetensors `__metadata__` maps `<case>` to a JSON object describing how to run it:
    - "kind": unary | binary | scalar | where | reduce | maxmin_dim | arg | full | matmul | cast
    - "op": the op name (oxtorch's method name)
    - "n_in": number of stored inputs
    - "dims" / "keepdim" / "dim": reduction parameters ("dims": null = all dims, "dim": null = flattened)
    - "scalar" / "scalar_type": the Python number operand and its type (int, float or bool)
    - "scalar_pos": for `where`, which operand ("input" or "other") is the Python number
    - "dtype": the target dtype of a cast
    - "in<i>_view": a view the test applies to the stored input before the op (torch computed the
      expected output on the same view): "transpose" = `.transpose(0, 1)`, "step" = `[..., ::2]`
      (last dim, step 2), "expand" = `.expand(3, 4)` of a `[3, 1]` input
    - "error": true when torch raises for this op/dtype (there is no `.out`; oxtorch must return Err)
    - "dropped": for a cast, indices of CAST_VALUES left out because torch casts them inconsistently
      (out-of-range float->int casts are undefined behaviour in C++); none are dropped with torch 2.x
      on x86-64, where out-of-range values wrap through int64

The file is written by `save_deterministic` (not safetensors' writer, whose metadata order varies), so
regenerating it with the same torch gives identical bytes.
"""

import json
import math
import os

import numpy as np
import torch

torch.set_num_threads(1)
torch.manual_seed(0)
RNG = np.random.default_rng(20240531)

DTYPES = {
    "bool": torch.bool,
    "u8": torch.uint8,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "f64": torch.float64,
}
INTS = ["u8", "i8", "i16", "i32", "i64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
ALL = ["bool"] + INTS + FLOATS

TENSORS = {}
META = {}


def add_case(name, meta, inputs, fn):
    """Stores `inputs`, runs `fn(*views)` in torch and stores its output(s), or records an error."""
    assert name not in META, name
    meta = dict(meta)
    meta["n_in"] = len(inputs)
    views = []
    for i, x in enumerate(inputs):
        TENSORS[f"{name}.in{i}"] = x.contiguous().clone()
        views.append(apply_view(x, meta.get(f"in{i}_view")))
    try:
        out = fn(*views)
    except (RuntimeError, TypeError, NotImplementedError, ValueError, ZeroDivisionError):
        meta["error"] = True
        out = None
    if out is not None:
        outs = list(out) if isinstance(out, tuple) else [out]
        for i, o in enumerate(outs):
            assert isinstance(o, torch.Tensor), name
            TENSORS[f"{name}.out" if i == 0 else f"{name}.out{i}"] = o.contiguous().clone()
    META[name] = json.dumps(meta, separators=(",", ":"))


def apply_view(x, view):
    if view is None:
        return x
    if view == "transpose":
        return x.transpose(0, 1)
    if view == "step":
        return x[..., ::2]
    if view == "expand":
        return x.expand(3, 4)
    raise ValueError(view)


def view_storage_shape(shape, view):
    """The stored shape whose `view` has `shape`."""
    if view is None:
        return list(shape)
    if view == "transpose":
        return [shape[1], shape[0]] + list(shape[2:])
    if view == "step":
        return list(shape[:-1]) + [shape[-1] * 2]
    if view == "expand":
        return [shape[0], 1]
    raise ValueError(view)


def cast(values, dt):
    return torch.tensor(np.asarray(values, dtype=np.float64)).to(DTYPES[dt])


def general(shape, dt):
    """Mixed-sign values (ints in [-10, 10], u8 in [0, 20], floats with 2 decimals in [-3, 3])."""
    if dt == "bool":
        return torch.tensor(RNG.random(shape) < 0.5)
    if dt == "u8":
        return cast(RNG.integers(0, 21, shape), dt)
    if dt in INTS:
        return cast(RNG.integers(-10, 11, shape), dt)
    v = np.round(RNG.uniform(-3, 3, shape), 2)
    flat = v.reshape(-1)
    if flat.size >= 4:
        flat[RNG.integers(0, flat.size)] = 0.0
    return cast(v, dt)


def nonzero(shape, dt):
    """Divisor values: never zero (bool: all true)."""
    if dt == "bool":
        return torch.ones(shape, dtype=torch.bool)
    if dt == "u8":
        return cast(RNG.integers(1, 11, shape), dt)
    if dt in INTS:
        mag = RNG.integers(1, 11, shape)
        return cast(mag * RNG.choice([-1, 1], shape), dt)
    v = np.round(RNG.uniform(0.5, 3, shape), 2) * RNG.choice([-1, 1], shape)
    return cast(v, dt)


def pow_base(shape, dt):
    if dt == "bool":
        return general(shape, dt)
    if dt == "u8":
        return cast(RNG.integers(0, 6, shape), dt)
    if dt in INTS:
        return cast(RNG.integers(-4, 5, shape), dt)
    return general(shape, dt)


def pow_exp(shape, dt):
    if dt == "bool":
        return general(shape, dt)
    if dt in INTS:
        return cast(RNG.integers(0, 4, shape), dt)
    return cast(np.round(RNG.uniform(-2, 3, shape), 1), dt)


def small(shape, dt):
    """Values with many ties (for max/min/argmax/argmin) and small magnitude (for prod)."""
    if dt == "bool":
        return general(shape, dt)
    if dt == "u8":
        return cast(RNG.integers(0, 4, shape), dt)
    if dt in INTS:
        return cast(RNG.integers(-2, 3, shape), dt)
    return cast(RNG.choice([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.25, 1.5], shape), dt)


SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-3, 100.0]


# ---------------------------------------------------------------------------------------------------
# unary

UNARY = {
    "neg": torch.neg,
    "abs": torch.abs,
    "sign": torch.sign,
    "square": torch.square,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "sin": torch.sin,
    "cos": torch.cos,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "trunc": torch.trunc,
    "bitwise_not": torch.bitwise_not,
    "isnan": torch.isnan,
    "logical_not": torch.logical_not,
}


def unary_cases():
    for op, fn in UNARY.items():
        for dt in ALL:
            x = general([3, 4], dt)
            if op in ("log", "sqrt", "rsqrt") and dt in FLOATS:
                # Mostly positive inputs, but keep one negative and one zero.
                x = x.abs()
                x.view(-1)[0] = -x.view(-1)[0] - 1
            add_case(f"unary/{op}/{dt}", {"kind": "unary", "op": op}, [x], fn)
        for dt in FLOATS:
            x = cast(SPECIAL, dt).reshape(3, 4)
            add_case(f"unary/{op}/{dt}/special", {"kind": "unary", "op": op}, [x], fn)


# ---------------------------------------------------------------------------------------------------
# binary (tensor-tensor)

BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "pow": torch.pow,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "remainder": torch.remainder,
    "floor_divide": torch.floor_divide,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
}
DIVISION = ("div", "remainder", "floor_divide")


def binary_inputs(op, sa, da, sb, db):
    if op == "pow":
        return pow_base(sa, da), pow_exp(sb, db)
    if op in DIVISION:
        return general(sa, da), nonzero(sb, db)
    if op in ("eq", "ne", "le", "ge"):
        # Some equal elements, so equality matters.
        a = small(sa, da)
        return a, small(sb, db)
    return general(sa, da), general(sb, db)


BROADCASTS = [("3x1_1x4", [3, 1], [1, 4]), ("2x3x4_4", [2, 3, 4], [4])]

MIXED = [
    ("i32_f16", "i32", [3, 4], "f16", [3, 4]),
    ("u8_i8", "u8", [3, 4], "i8", [3, 4]),
    ("i8_u8", "i8", [3, 1], "u8", [1, 4]),
    ("bool_i64", "bool", [3, 4], "i64", [3, 4]),
    ("f16_bf16", "f16", [3, 4], "bf16", [4]),
    ("i64_f32", "i64", [3, 4], "f32", [3, 4]),
    ("u8_bool", "u8", [3, 4], "bool", [3, 4]),
    ("f32_f64", "f32", [3, 4], "f64", [3, 4]),
    ("i16_i32", "i16", [3, 4], "i32", [3, 4]),
    ("bool_f16", "bool", [3, 4], "f16", [3, 4]),
    ("f32_0d-f64", "f32", [3, 4], "f64", []),
    ("0d-f64_f32", "f64", [], "f32", [3, 4]),
    ("u8_0d-i64", "u8", [3, 4], "i64", []),
    ("0d-i64_u8", "i64", [], "u8", [3, 4]),
    ("i32_0d-f32", "i32", [3, 4], "f32", []),
    ("bf16_0d-f64", "bf16", [3, 4], "f64", []),
    ("i8_0d-i8", "i8", [3, 4], "i8", []),
    ("0d-f32_0d-i64", "f32", [], "i64", []),
]


def binary_cases():
    for op, fn in BINARY.items():
        for dt in ALL:
            for tag, sa, sb in BROADCASTS:
                a, b = binary_inputs(op, sa, dt, sb, dt)
                add_case(f"binary/{op}/{dt}/{tag}", {"kind": "binary", "op": op}, [a, b], fn)
        for tag, da, sa, db, sb in MIXED:
            a, b = binary_inputs(op, sa, da, sb, db)
            add_case(f"binary/{op}/mixed/{tag}", {"kind": "binary", "op": op}, [a, b], fn)
    # Integer division by zero raises in torch.
    for op in ("floor_divide", "remainder"):
        a = cast([3, -4, 5, 6], "i64")
        b = cast([1, 2, 0, 3], "i64")
        add_case(f"binary/{op}/i64/by_zero", {"kind": "binary", "op": op}, [a, b], BINARY[op])
    # Float division by zero gives inf/nan.
    for op in DIVISION:
        a = cast([3.0, -4.0, 0.0, 6.0], "f32")
        b = cast([0.0, 0.0, 0.0, -0.0], "f32")
        add_case(f"binary/{op}/f32/by_zero", {"kind": "binary", "op": op}, [a, b], BINARY[op])
    # Integer powers with negative exponents (0 unless the base is 1 or -1).
    a = cast([2, -2, 1, -1, 3, 0, 1, -1], "i32")
    b = cast([-1, -1, -3, -3, 0, 2, -2, -2], "i32")
    add_case("binary/pow/i32/neg_exp", {"kind": "binary", "op": "pow"}, [a, b], torch.pow)
    # NaN propagation of maximum/minimum and comparisons.
    for op in ("maximum", "minimum", "eq", "lt", "ne"):
        for dt in FLOATS:
            a = cast([math.nan, 1.0, math.nan, -math.inf, math.inf, 2.0], dt)
            b = cast([1.0, math.nan, math.nan, 0.0, math.inf, 2.0], dt)
            add_case(f"binary/{op}/{dt}/nan", {"kind": "binary", "op": op}, [a, b], BINARY[op])


# ---------------------------------------------------------------------------------------------------
# tensor-scalar

SCALAR_OPS = [
    ("add", 2),
    ("add", 2.5),
    ("add", True),
    ("add", 300),
    ("sub", 3),
    ("sub", True),
    ("sub", 0.25),
    ("mul", 2),
    ("mul", 2.5),
    ("mul", False),
    ("mul", 100),
    ("div", 3),
    ("div", 2.5),
    ("div", True),
    ("pow", 2),
    ("pow", 0.5),
    ("pow", 2.0),
    ("pow", -1),
    ("pow", 3),
    ("remainder", 3),
    ("remainder", 2.5),
    ("remainder", -3),
    ("floor_divide", 2),
    ("floor_divide", 1.5),
    ("floor_divide", -3),
    ("bitwise_and", 3),
    ("bitwise_or", True),
    ("bitwise_xor", 5),
    ("eq", 2),
    ("eq", 0.5),
    ("ne", 0),
    ("lt", 0.5),
    ("gt", -1),
    ("ge", True),
    ("le", 2.0),
]
SCALAR_FNS = {
    "add": lambda x, s: x + s,
    "sub": lambda x, s: x - s,
    "mul": lambda x, s: x * s,
    "div": lambda x, s: x / s,
    "pow": lambda x, s: x**s,
    "remainder": lambda x, s: x % s,
    "floor_divide": lambda x, s: x // s,
    "bitwise_and": lambda x, s: x & s,
    "bitwise_or": lambda x, s: x | s,
    "bitwise_xor": lambda x, s: x ^ s,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "gt": torch.gt,
    "ge": torch.ge,
    "le": torch.le,
}


def scalar_tag(s):
    if isinstance(s, bool):
        return "True" if s else "False"
    if isinstance(s, int):
        return f"int{s}"
    return f"float{s}"


def scalar_cases():
    for op, s in SCALAR_OPS:
        stype = type(s).__name__
        for dt in ALL:
            if op == "pow":
                x = pow_base([3, 4], dt)
            elif op in ("eq", "ne", "le", "ge"):
                x = small([3, 4], dt)
            else:
                x = general([3, 4], dt)
            meta = {"kind": "scalar", "op": op, "scalar": s, "scalar_type": stype}
            fn = SCALAR_FNS[op]
            add_case(f"scalar/{op}/{dt}/{scalar_tag(s)}", meta, [x], lambda x, fn=fn, s=s: fn(x, s))


# ---------------------------------------------------------------------------------------------------
# where


def where_cases():
    for dt in ALL:
        c = general([3, 4], "bool")
        args = [c, general([3, 4], dt), general([3, 4], dt)]
        add_case(f"where/{dt}", {"kind": "where", "op": "where"}, args, torch.where)
    mixed = [
        ("bcast_f32", [3, 1], "f32", [1, 4], "f32", [4]),
        ("i32_f16", [3, 4], "i32", [3, 4], "f16", [3, 4]),
        ("u8_i8", [3, 4], "u8", [3, 4], "i8", [4]),
        ("bool_i64", [4], "bool", [3, 4], "i64", [3, 1]),
        ("f16_bf16", [3, 4], "f16", [3, 4], "bf16", [3, 4]),
        ("i64_f32", [3, 4], "i64", [3, 4], "f32", [3, 4]),
        ("f32_0d-f64", [3, 4], "f32", [3, 4], "f64", []),
        ("0d-cond", [], "i16", [3, 4], "i16", [3, 4]),
    ]
    for tag, sc, da, sa, db, sb in mixed:
        args = [general(sc, "bool"), general(sa, da), general(sb, db)]
        add_case(f"where/mixed/{tag}", {"kind": "where", "op": "where"}, args, torch.where)
    scalars = [("f16", "other", 0.5), ("i32", "other", 2.5), ("u8", "other", 7), ("bool", "input", 3),
               ("i64", "input", True), ("bf16", "input", -1)]
    for dt, pos, s in scalars:
        c, x = general([3, 4], "bool"), general([3, 4], dt)
        meta = {"kind": "where", "op": "where", "scalar": s, "scalar_type": type(s).__name__}
        meta["scalar_pos"] = pos
        if pos == "other":
            fn = lambda c, x, s=s: torch.where(c, x, s)  # noqa: E731
        else:
            fn = lambda c, x, s=s: torch.where(c, s, x)  # noqa: E731
        add_case(f"where/scalar/{dt}/{pos}_{scalar_tag(s)}", meta, [c, x], fn)


# ---------------------------------------------------------------------------------------------------
# reductions

def prod_dims(x, dims, keepdim):
    """torch.prod takes one dim; oxtorch's takes several: reduce them one at a time, last first."""
    for d in sorted((d % x.dim() for d in dims), reverse=True):
        x = torch.prod(x, dim=d, keepdim=keepdim)
    return x


REDUCE = {
    "sum": lambda x, d, k: torch.sum(x) if d is None else torch.sum(x, dim=d, keepdim=k),
    "prod": lambda x, d, k: torch.prod(x) if d is None else prod_dims(x, d, k),
    "mean": lambda x, d, k: torch.mean(x) if d is None else torch.mean(x, dim=d, keepdim=k),
    "amax": lambda x, d, k: torch.amax(x) if d is None else torch.amax(x, dim=d, keepdim=k),
    "amin": lambda x, d, k: torch.amin(x) if d is None else torch.amin(x, dim=d, keepdim=k),
    "all": lambda x, d, k: torch.all(x) if d is None else torch.all(x, dim=d, keepdim=k),
    "any": lambda x, d, k: torch.any(x) if d is None else torch.any(x, dim=d, keepdim=k),
}
REDUCE_SHAPES = {
    "3x4": ([3, 4], [[0], [-1]]),
    "2x3x4": ([2, 3, 4], [[0], [-1], [0, 2]]),
}


def dims_tag(d):
    return "all" if d is None else "d" + "_".join(str(i) for i in d)


def reduce_cases():
    for op, fn in REDUCE.items():
        for dt in ALL:
            for stag, (shape, dim_lists) in REDUCE_SHAPES.items():
                variants = [(d, k) for d in dim_lists for k in (False, True)] + [(None, False)]
                for d, k in variants:
                    x = small(shape, dt) if op == "prod" else general(shape, dt)
                    if op in ("all", "any") and dt != "bool":
                        # Zeros are what matter here.
                        x = x * (torch.tensor(RNG.random(shape)) < 0.7).to(x.dtype)
                    meta = {"kind": "reduce", "op": op, "dims": d, "keepdim": k}
                    name = f"reduce/{op}/{dt}/{stag}/{dims_tag(d)}" + ("_keep" if k else "")
                    add_case(name, meta, [x], lambda x, fn=fn, d=d, k=k: fn(x, d, k))
        # NaN propagation.
        for dt in FLOATS:
            x = cast([[1.0, math.nan, 2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [math.inf, -math.inf, 1.0, 2.0]], dt)
            for d in ([-1], None):
                meta = {"kind": "reduce", "op": op, "dims": d, "keepdim": False}
                name = f"reduce/{op}/{dt}/nan/{dims_tag(d)}"
                add_case(name, meta, [x], lambda x, fn=fn, d=d: fn(x, d, False))
    for op, fn in (("max", torch.max), ("min", torch.min)):
        for dt in ALL:
            add_case(f"full/{op}/{dt}", {"kind": "full", "op": op}, [general([3, 4], dt)], fn)
        for dt in FLOATS:
            x = cast([[1.0, math.nan], [-1.0, 5.0]], dt)
            add_case(f"full/{op}/{dt}/nan", {"kind": "full", "op": op}, [x], fn)


def nan_input(dt):
    v = np.array(
        [[0.5, math.nan, 2.0, math.nan], [1.0, 1.0, -1.0, -1.0], [math.nan, 3.0, -2.0, 0.0]], dtype=np.float64
    )
    return cast(v, dt)


def maxmin_dim_cases():
    for op, fn in (("max_dim", torch.max), ("min_dim", torch.min)):
        for dt in ALL:
            for shape, dim, k in [([3, 4], 0, False), ([3, 4], 0, True), ([3, 4], -1, False),
                                  ([3, 4], -1, True), ([2, 3, 4], 1, False), ([2, 3, 4], 1, True)]:
                x = small(shape, dt)
                meta = {"kind": "maxmin_dim", "op": op, "dim": dim, "keepdim": k}
                name = f"maxmin/{op}/{dt}/{'x'.join(map(str, shape))}/d{dim}" + ("_keep" if k else "")
                add_case(name, meta, [x], lambda x, fn=fn, dim=dim, k=k: tuple(fn(x, dim=dim, keepdim=k)))
        for dt in FLOATS:
            for dim in (0, 1):
                meta = {"kind": "maxmin_dim", "op": op, "dim": dim, "keepdim": False}
                add_case(f"maxmin/{op}/{dt}/nan/d{dim}", meta, [nan_input(dt)],
                         lambda x, fn=fn, dim=dim: tuple(fn(x, dim=dim)))
    for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        for dt in ALL:
            for shape, dim, k in [([3, 4], None, False), ([3, 4], None, True), ([3, 4], 0, False),
                                  ([3, 4], 0, True), ([3, 4], -1, False), ([2, 3, 4], None, True),
                                  ([2, 3, 4], 2, False)]:
                x = small(shape, dt)
                meta = {"kind": "arg", "op": op, "dim": dim, "keepdim": k}
                dtag = "none" if dim is None else f"d{dim}"
                name = f"arg/{op}/{dt}/{'x'.join(map(str, shape))}/{dtag}" + ("_keep" if k else "")
                add_case(name, meta, [x], lambda x, fn=fn, dim=dim, k=k: fn(x, dim=dim, keepdim=k))
        for dt in FLOATS:
            for dim in (None, 1):
                meta = {"kind": "arg", "op": op, "dim": dim, "keepdim": False}
                dtag = "none" if dim is None else f"d{dim}"
                add_case(f"arg/{op}/{dt}/nan/{dtag}", meta, [nan_input(dt)],
                         lambda x, fn=fn, dim=dim: fn(x, dim=dim))


# ---------------------------------------------------------------------------------------------------
# matmul

MATMUL_SHAPES = [
    ("1d_1d", [4], [4]),
    ("2d_2d", [3, 4], [4, 5]),
    ("1d_2d", [4], [4, 5]),
    ("2d_1d", [3, 4], [4]),
    ("3d_3d", [2, 3, 4], [2, 4, 5]),
    ("bcast_4d_3d", [2, 1, 3, 4], [3, 4, 5]),
    ("3d_2d", [2, 3, 4], [4, 2]),
]


def matmul_cases():
    for dt in ["f32", "f64", "f16", "bf16", "i32", "i64"]:
        for tag, sa, sb in MATMUL_SHAPES:
            a, b = general(sa, dt), general(sb, dt)
            add_case(f"matmul/{dt}/{tag}", {"kind": "matmul", "op": "matmul"}, [a, b], torch.matmul)
        # A transposed (non-contiguous) left operand, and a transposed right operand.
        a, b = general([4, 3], dt), general([4, 5], dt)
        meta = {"kind": "matmul", "op": "matmul", "in0_view": "transpose"}
        add_case(f"matmul/{dt}/lhs_transposed", meta, [a, b], torch.matmul)
        a, b = general([3, 4], dt), general([5, 4], dt)
        meta = {"kind": "matmul", "op": "matmul", "in1_view": "transpose"}
        add_case(f"matmul/{dt}/rhs_transposed", meta, [a, b], torch.matmul)
    add_case("matmul/f32/shape_mismatch", {"kind": "matmul", "op": "matmul"},
             [general([3, 4], "f32"), general([5, 2], "f32")], torch.matmul)
    add_case("matmul/f32/1d_mismatch", {"kind": "matmul", "op": "matmul"},
             [general([3], "f32"), general([4], "f32")], torch.matmul)
    add_case("matmul/mixed/f32_f64", {"kind": "matmul", "op": "matmul"},
             [general([3, 4], "f32"), general([4, 2], "f64")], torch.matmul)
    add_case("matmul/f32/0d", {"kind": "matmul", "op": "matmul"},
             [general([], "f32"), general([4], "f32")], torch.matmul)


# ---------------------------------------------------------------------------------------------------
# casts

CAST_VALUES = [-2.7, -1.0, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7, 100.0, 255.0, 300.0]


def cast_consistent(x, dst):
    """Indices whose cast torch computes the same way on every path (out-of-range float->int casts are
    undefined behaviour in C++ and may depend on vectorisation)."""
    whole = x.to(dst)
    big = x.repeat(37).to(dst)[: x.numel()]
    keep = []
    for i in range(x.numel()):
        one = x[i : i + 1].to(dst)
        if whole[i] == one[0] and whole[i] == big[i]:
            keep.append(i)
    return keep


def cast_cases():
    for src in ALL:
        base = cast(CAST_VALUES, src)
        for dst in ALL:
            keep = cast_consistent(base, DTYPES[dst])
            x = base[keep]
            meta = {"kind": "cast", "op": "to_dtype", "dtype": dst}
            if len(keep) != base.numel():
                meta["dropped"] = [i for i in range(base.numel()) if i not in keep]
            add_case(f"cast/{src}/{dst}", meta, [x], lambda x, dst=dst: x.to(DTYPES[dst]))


# ---------------------------------------------------------------------------------------------------
# non-contiguous inputs


def view_cases():
    def inp(dt, view, gen=general):
        return gen(view_storage_shape([3, 4], view), dt)

    for op, dt, view in [("neg", "f32", "transpose"), ("exp", "f32", "step"), ("abs", "i32", "transpose"),
                         ("floor", "f16", "step"), ("sqrt", "f64", "transpose"),
                         ("bitwise_not", "i64", "step"), ("isnan", "bf16", "transpose"),
                         ("sigmoid", "f32", "expand"), ("logical_not", "u8", "transpose")]:
        meta = {"kind": "unary", "op": op, "in0_view": view}
        add_case(f"view/unary/{op}/{dt}/{view}", meta, [inp(dt, view)], UNARY[op])
    for op, da, va, db, vb in [("add", "f32", "transpose", "f32", "step"),
                               ("mul", "i32", "step", "i32", "transpose"),
                               ("sub", "f64", "transpose", "f64", "expand"),
                               ("maximum", "f16", "transpose", "f16", None),
                               ("eq", "i64", "step", "i64", "transpose"),
                               ("div", "bf16", "transpose", "f32", "step"),
                               ("remainder", "i16", "expand", "i16", "transpose"),
                               ("bitwise_xor", "u8", "transpose", "u8", "transpose")]:
        a = inp(da, va)
        b = inp(db, vb, nonzero if op in DIVISION else general)
        meta = {"kind": "binary", "op": op}
        if va:
            meta["in0_view"] = va
        if vb:
            meta["in1_view"] = vb
        add_case(f"view/binary/{op}/{da}_{va}/{db}_{vb}", meta, [a, b], BINARY[op])
    for op, dt, view, d, k in [("sum", "f32", "transpose", [0], False), ("sum", "i32", "step", None, False),
                               ("amax", "f64", "transpose", [-1], True), ("prod", "f32", "step", [1], False),
                               ("mean", "f64", "step", [0], True), ("all", "bool", "transpose", [1], False),
                               ("any", "u8", "transpose", [0], False), ("amin", "i8", "expand", [1], False)]:
        meta = {"kind": "reduce", "op": op, "dims": d, "keepdim": k, "in0_view": view}
        add_case(f"view/reduce/{op}/{dt}/{view}/{dims_tag(d)}", meta, [inp(dt, view, small)],
                 lambda x, fn=REDUCE[op], d=d, k=k: fn(x, d, k))
    for op, fn, dt, view, dim in [("max_dim", torch.max, "f32", "transpose", 0),
                                  ("min_dim", torch.min, "i64", "step", 1)]:
        meta = {"kind": "maxmin_dim", "op": op, "dim": dim, "keepdim": False, "in0_view": view}
        add_case(f"view/maxmin/{op}/{dt}/{view}", meta, [inp(dt, view, small)],
                 lambda x, fn=fn, dim=dim: tuple(fn(x, dim=dim)))
    for op, fn, dt, view, dim in [("argmax", torch.argmax, "i64", "step", None),
                                  ("argmin", torch.argmin, "f32", "transpose", 1)]:
        meta = {"kind": "arg", "op": op, "dim": dim, "keepdim": False, "in0_view": view}
        add_case(f"view/arg/{op}/{dt}/{view}", meta, [inp(dt, view, small)],
                 lambda x, fn=fn, dim=dim: fn(x, dim=dim))
    for src, dst, view in [("f32", "i32", "transpose"), ("f64", "f16", "step"), ("i64", "u8", "transpose")]:
        meta = {"kind": "cast", "op": "to_dtype", "dtype": dst, "in0_view": view}
        add_case(f"view/cast/{src}/{dst}/{view}", meta, [inp(src, view)],
                 lambda x, dst=dst: x.to(DTYPES[dst]))
    meta = {"kind": "where", "op": "where", "in0_view": "transpose", "in1_view": "step"}
    args = [inp("bool", "transpose"), inp("f32", "step"), inp("f32", None)]
    add_case("view/where/f32", meta, args, torch.where)


def large_cases():
    """A few bigger inputs, so that blocked, vectorised or parallel code paths run too."""
    pos = lambda shape, dt: cast(np.round(RNG.uniform(0, 1, shape), 3), dt)  # noqa: E731
    x = pos([48, 80], "f32")
    for d in ([0], None):
        meta = {"kind": "reduce", "op": "sum", "dims": d, "keepdim": False}
        add_case(f"large/sum/f32/48x80/{dims_tag(d)}", meta, [x.clone()],
                 lambda x, d=d: REDUCE["sum"](x, d, False))
    meta = {"kind": "reduce", "op": "sum", "dims": None, "keepdim": False}
    add_case("large/sum/f16/4096/all", meta, [pos([4096], "f16")], torch.sum)
    meta = {"kind": "reduce", "op": "mean", "dims": [-1], "keepdim": False}
    add_case("large/mean/bf16/4x512/d-1", meta, [pos([4, 512], "bf16")], lambda x: torch.mean(x, dim=-1))
    meta = {"kind": "reduce", "op": "sum", "dims": [0], "keepdim": False}
    add_case("large/sum/i32/48x80/d0", meta, [general([48, 80], "i32")], lambda x: torch.sum(x, dim=0))
    add_case("large/add/f32/48x80_80", {"kind": "binary", "op": "add"},
             [general([48, 80], "f32"), general([80], "f32")], torch.add)
    meta = {"kind": "maxmin_dim", "op": "max_dim", "dim": 1, "keepdim": False}
    add_case("large/max_dim/f32/48x80/d1", meta, [general([48, 80], "f32")], lambda x: tuple(torch.max(x, 1)))
    add_case("large/matmul/f32/33x65_65x17", {"kind": "matmul", "op": "matmul"},
             [general([33, 65], "f32"), general([65, 17], "f32")], torch.matmul)
    add_case("large/matmul/f64/2x17x65_65x9", {"kind": "matmul", "op": "matmul"},
             [general([2, 17, 65], "f64"), general([65, 9], "f64")], torch.matmul)
    add_case("large/cast/f32/f16", {"kind": "cast", "op": "to_dtype", "dtype": "f16"},
             [general([48, 80], "f32")], lambda x: x.to(torch.float16))


ST_DTYPES = {
    torch.bool: "BOOL",
    torch.uint8: "U8",
    torch.int8: "I8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float32: "F32",
    torch.float64: "F64",
}


def save_deterministic(tensors, path, metadata):
    """Writes a safetensors file byte-for-byte reproducibly (safetensors' own writer orders the metadata
    map by hash, which changes from run to run). Tensors are laid out widest dtype first, then by name,
    so every tensor stays aligned to its element size."""
    names = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header = {"__metadata__": dict(sorted(metadata.items()))}
    blobs, offset = [], 0
    for n in names:
        t = tensors[n].contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes()
        header[n] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape)}
        header[n]["data_offsets"] = [offset, offset + len(raw)]
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(len(head).to_bytes(8, "little"))
        f.write(head)
        for b in blobs:
            f.write(b)


def main():
    unary_cases()
    binary_cases()
    scalar_cases()
    where_cases()
    reduce_cases()
    maxmin_dim_cases()
    matmul_cases()
    cast_cases()
    view_cases()
    large_cases()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops.safetensors")
    save_deterministic(TENSORS, out, META)
    n_err = sum(1 for m in META.values() if json.loads(m).get("error"))
    print(f"wrote {out}: {len(META)} cases ({n_err} error cases), {len(TENSORS)} tensors, "
          f"{os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()

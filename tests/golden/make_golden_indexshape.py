#!/usr/bin/env python3
"""Generates tests/golden/indexshape.safetensors: torch reference results for the indexing and
shape-op family (tensor/tests/cpu/golden_indexshape.rs).

Run from the repository root with the reference environment:

    /work/.refenv/bin/python tests/golden/make_golden_indexshape.py

Conventions follow tests/golden/make_golden.py (its deterministic writer is reused): for each case
`<case>` the inputs `<case>.in0`, `<case>.in1`, ... (stored contiguously), the outputs `<case>.out`,
`<case>.out1`, ... and a JSON object under `<case>` in the metadata with

* "op": the oxtorch operation the test runs (see the match in golden_indexshape.rs),
* "args": the op's non-tensor arguments,
* "n_in" / "n_out": number of stored inputs / outputs,
* "in<i>_view": a view applied to input i before the op ("transpose" = `.transpose(0, 1)`,
  "step" = `[..., ::2]`),
* "error": true when torch raises (no outputs; oxtorch must return Err) and "msg", torch's message.
"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_golden import save_deterministic  # noqa: E402

torch.set_num_threads(1)
RNG = np.random.default_rng(20261129)

DTYPES = {
    "bool": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
    "i64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
    "f64": torch.float64,
}
INTS = ["u8", "i8", "i16", "i32", "i64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
ALL = ["bool"] + INTS + FLOATS

TENSORS = {}
META = {}


def apply_view(x, view):
    if view is None:
        return x
    if view == "transpose":
        return x.transpose(0, 1)
    if view == "step":
        return x[..., ::2]
    raise ValueError(view)


def stored_shape(shape, view):
    if view == "transpose":
        return [shape[1], shape[0]] + list(shape[2:])
    if view == "step":
        return list(shape[:-1]) + [shape[-1] * 2]
    return list(shape)


def add(name, op, args, inputs, fn, views=None):
    """Stores inputs, runs fn(*views) in torch and stores its output(s) or the error."""
    assert name not in META, name
    meta = {"op": op, "args": args, "n_in": len(inputs)}
    views = views or {}
    vs = []
    for i, x in enumerate(inputs):
        TENSORS[f"{name}.in{i}"] = x.contiguous().clone()
        if i in views:
            meta[f"in{i}_view"] = views[i]
        vs.append(apply_view(x, views.get(i)))
    try:
        out = fn(*vs)
    except (RuntimeError, TypeError, NotImplementedError, ValueError, IndexError) as e:
        meta["error"] = True
        meta["msg"] = str(e).split("\n")[0]
        out = None
    if out is not None:
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        meta["n_out"] = len(outs)
        for i, o in enumerate(outs):
            assert isinstance(o, torch.Tensor), name
            TENSORS[f"{name}.out" if i == 0 else f"{name}.out{i}"] = o.contiguous().clone()
    META[name] = json.dumps(meta, separators=(",", ":"), sort_keys=True)


def data(shape, dt, view=None):
    """Distinct-ish values of dtype dt, stored so that `view` of it has `shape`."""
    shape = stored_shape(shape, view)
    if dt == "bool":
        return torch.tensor(RNG.random(shape) < 0.5)
    if dt == "u8":
        return torch.tensor(RNG.integers(0, 100, shape)).to(torch.uint8)
    if dt in INTS:
        return torch.tensor(RNG.integers(-50, 51, shape)).to(DTYPES[dt])
    return torch.tensor(np.round(RNG.uniform(-4, 4, shape), 2)).to(DTYPES[dt])


def idx(values, dt=torch.int64):
    return torch.tensor(values, dtype=dt)


def rand_index(shape, high):
    return torch.tensor(RNG.integers(0, high, shape), dtype=torch.int64)


def gather_scatter_cases():
    for dt in ALL:
        x = data([3, 4], dt)
        add(f"gather_d1_{dt}", "gather", {"dim": 1}, [x, rand_index([3, 2], 4)], lambda a, i: a.gather(1, i))
        add(f"gather_dneg2_{dt}", "gather", {"dim": -2}, [x, rand_index([2, 4], 3)],
            lambda a, i: a.gather(-2, i))
        xt = data([4, 3], dt, "transpose")
        add(f"gather_view_{dt}", "gather", {"dim": 0}, [xt, rand_index([2, 3], 4)],
            lambda a, i: a.gather(0, i), {0: "transpose"})
        add(f"gather_0d_{dt}", "gather", {"dim": 0}, [data([], dt), idx(0)], lambda a, i: a.gather(0, i))
        add(f"gather_empty_{dt}", "gather", {"dim": 1}, [x, rand_index([3, 0], 4)],
            lambda a, i: a.gather(1, i))
        src = data([3, 4], dt)
        perm = torch.stack([torch.randperm(4, generator=torch.Generator().manual_seed(k)) for k in range(3)])
        add(f"scatter_src_{dt}", "scatter", {"dim": 1}, [x, perm[:, :3].contiguous(), src],
            lambda a, i, s: a.scatter(1, i, s))
        add(f"scatter_value_{dt}", "scatter_value", {"dim": 1, "value": 1},
            [x, perm[:, :2].contiguous()], lambda a, i: a.scatter(1, i, 1))
        add(f"scatter_add_{dt}", "scatter_add", {"dim": 0}, [x, rand_index([5, 4], 3), data([5, 4], dt)],
            lambda a, i, s: a.scatter_add(0, i, s))
        add(f"scatter_add_view_{dt}", "scatter_add", {"dim": -1},
            [data([4, 3], dt, "transpose"), rand_index([3, 5], 4), data([3, 5], dt)],
            lambda a, i, s: a.scatter_add(-1, i, s), {0: "transpose"})
        for red in ["sum", "prod", "mean", "amax", "amin"]:
            for inc in [True, False]:
                add(f"scatter_reduce_{red}_{inc}_{dt}", "scatter_reduce", {"dim": 1, "reduce": red,
                    "include_self": inc}, [data([2, 5], dt), rand_index([2, 6], 3), data([2, 6], dt)],
                    lambda a, i, s, red=red, inc=inc: a.scatter_reduce(1, i, s, red, include_self=inc))
    f = data([3, 4], "f32")
    add("gather_oob", "gather", {"dim": 1}, [f, idx([[4]])], lambda a, i: a.gather(1, i))
    add("gather_neg", "gather", {"dim": 1}, [f, idx([[-1]])], lambda a, i: a.gather(1, i))
    add("gather_rank", "gather", {"dim": 1}, [f, idx([1])], lambda a, i: a.gather(1, i))
    add("gather_big", "gather", {"dim": 1}, [f, idx([[1]] * 4)], lambda a, i: a.gather(1, i))
    add("gather_idx32", "gather", {"dim": 1}, [f, idx([[1, 0]], torch.int32)], lambda a, i: a.gather(1, i))
    add("gather_float_index", "gather", {"dim": 1}, [f, torch.ones(1, 1)], lambda a, i: a.gather(1, i))
    add("gather_dim", "gather", {"dim": 2}, [f, idx([[1]])], lambda a, i: a.gather(2, i))
    add("scatter_oob", "scatter", {"dim": 1}, [f, idx([[4]]), f], lambda a, i, s: a.scatter(1, i, s))
    add("scatter_dtype", "scatter", {"dim": 1}, [f, idx([[1]]), f.double()], lambda a, i, s: a.scatter(1, i, s))
    add("scatter_idx32", "scatter", {"dim": 1}, [f, idx([[1]], torch.int32), f],
        lambda a, i, s: a.scatter(1, i, s))
    add("scatter_src_small", "scatter", {"dim": 1}, [f, idx([[1, 2, 3, 0]] * 3), f[:, :2].contiguous()],
        lambda a, i, s: a.scatter(1, i, s))
    add("scatter_reduce_bad", "scatter_reduce", {"dim": 1, "reduce": "max", "include_self": True},
        [f, idx([[1]]), f], lambda a, i, s: a.scatter_reduce(1, i, s, "max"))
    nan = torch.tensor([[1.0, float("nan"), 3.0, -1.0]])
    for red in ["amax", "amin", "sum", "mean"]:
        add(f"scatter_reduce_nan_{red}", "scatter_reduce", {"dim": 1, "reduce": red, "include_self": True},
            [torch.zeros(1, 2), idx([[0, 0, 1, 1]]), nan], lambda a, i, s, red=red: a.scatter_reduce(1, i, s, red))


def index_dim_cases():
    for dt in ALL:
        x = data([3, 4], dt)
        add(f"index_select_d0_{dt}", "index_select", {"dim": 0}, [x, idx([2, 0, 2])],
            lambda a, i: a.index_select(0, i))
        add(f"index_select_dneg1_{dt}", "index_select", {"dim": -1}, [data([3, 4], dt, "step"),
            idx([3, 1], torch.int32)], lambda a, i: a.index_select(-1, i), {0: "step"})
        add(f"index_select_empty_{dt}", "index_select", {"dim": 1}, [x, idx([], torch.int64)],
            lambda a, i: a.index_select(1, i))
        add(f"index_select_0d_{dt}", "index_select", {"dim": 0}, [data([], dt), idx(0)],
            lambda a, i: a.index_select(0, i))
        alpha = 2 if dt in INTS else (True if dt == "bool" else 1.5)
        add(f"index_add_{dt}", "index_add", {"dim": 0, "alpha": alpha},
            [x, idx([2, 0, 2, 1]), data([4, 4], dt)], lambda a, i, s: a.index_add(0, i, s, alpha=alpha))
        add(f"index_add_a1_{dt}", "index_add", {"dim": 1, "alpha": 1},
            [data([4, 3], dt, "transpose"), idx([0, 0], torch.int32), data([3, 2], dt)],
            lambda a, i, s: a.index_add(1, i, s), {0: "transpose"})
        add(f"index_copy_{dt}", "index_copy", {"dim": 1}, [x, idx([3, 0]), data([3, 2], dt)],
            lambda a, i, s: a.index_copy(1, i, s))
        add(f"index_fill_{dt}", "index_fill", {"dim": 1, "value": 1}, [x, idx([-1, 1])],
            lambda a, i: a.index_fill(1, i, 1))
        add(f"take_{dt}", "take", {}, [x, idx([[0, -1], [5, 11]])], lambda a, i: a.take(i))
        add(f"take_view_{dt}", "take", {}, [data([4, 3], dt, "transpose"), idx([1, 7, -3])],
            lambda a, i: a.take(i), {0: "transpose"})
        add(f"take_along_{dt}", "take_along_dim", {"dim": 1}, [x, rand_index([3, 2], 4)],
            lambda a, i: torch.take_along_dim(a, i, 1))
        add(f"take_along_bcast_{dt}", "take_along_dim", {"dim": 0}, [x, idx([[2], [-1]])],
            lambda a, i: torch.take_along_dim(a, i, 0))
        add(f"take_along_none_{dt}", "take_along_dim", {"dim": None}, [x, idx([5, 0, -2])],
            lambda a, i: torch.take_along_dim(a, i))
    f = data([3, 4], "f32")
    add("index_select_oob", "index_select", {"dim": 1}, [f, idx([4])], lambda a, i: a.index_select(1, i))
    add("index_select_2d", "index_select", {"dim": 1}, [f, idx([[1]])], lambda a, i: a.index_select(1, i))
    add("index_select_idx16", "index_select", {"dim": 1}, [f, idx([1], torch.int16)],
        lambda a, i: a.index_select(1, i))
    add("index_add_oob", "index_add", {"dim": 1, "alpha": 1}, [f, idx([-1]), f[:, :1].contiguous()],
        lambda a, i, s: a.index_add(1, i, s))
    add("index_add_dtype", "index_add", {"dim": 1, "alpha": 1}, [f, idx([1]), f[:, :1].double()],
        lambda a, i, s: a.index_add(1, i, s))
    add("index_add_int_alpha", "index_add", {"dim": 1, "alpha": 1.5},
        [f.long(), idx([1]), f[:, :1].long()], lambda a, i, s: a.index_add(1, i, s, alpha=1.5))
    add("index_copy_oob", "index_copy", {"dim": 1}, [f, idx([4]), f[:, :1].contiguous()],
        lambda a, i, s: a.index_copy(1, i, s))
    add("index_copy_idx32", "index_copy", {"dim": 1}, [f, idx([1], torch.int32), f[:, :1].contiguous()],
        lambda a, i, s: a.index_copy(1, i, s))
    add("index_fill_oob", "index_fill", {"dim": 1, "value": 1}, [f, idx([4])], lambda a, i: a.index_fill(1, i, 1))
    add("index_fill_idx32", "index_fill", {"dim": 1, "value": 1}, [f, idx([1], torch.int32)],
        lambda a, i: a.index_fill(1, i, 1))
    add("index_fill_float", "index_fill", {"dim": 1, "value": 2.75}, [f, idx([0])],
        lambda a, i: a.index_fill(1, i, 2.75))
    add("index_copy_slice", "index_copy", {"dim": 1}, [f, idx([0]), torch.ones(4, 1)],
        lambda a, i, s: a.index_copy(1, i, s))
    add("index_copy_count", "index_copy", {"dim": 1}, [f, idx([0, 1]), torch.ones(3, 1)],
        lambda a, i, s: a.index_copy(1, i, s))
    add("index_add_count", "index_add", {"dim": 1, "alpha": 1}, [f, idx([0, 1]), torch.ones(3, 1)],
        lambda a, i, s: a.index_add(1, i, s))
    add("index_fill_2d", "index_fill", {"dim": 1, "value": 1}, [f, idx([[0]])], lambda a, i: a.index_fill(1, i, 1))
    add("scatter_value_big", "scatter_value", {"dim": 1, "value": 1}, [f, idx([[0]] * 4)],
        lambda a, i: a.scatter(1, i, 1))
    add("take_along_bcast_bad", "take_along_dim", {"dim": 1}, [f, idx([[0]] * 2)],
        lambda a, i: torch.take_along_dim(a, i, 1))
    add("take_oob", "take", {}, [f, idx([12])], lambda a, i: a.take(i))
    add("take_idx32", "take", {}, [f, idx([1], torch.int32)], lambda a, i: a.take(i))
    add("take_0d", "take", {}, [data([], "f32"), idx([0, 0])], lambda a, i: a.take(i))
    add("take_along_idx32", "take_along_dim", {"dim": 1}, [f, idx([[1]], torch.int32)],
        lambda a, i: torch.take_along_dim(a, i, 1))


def masked_cases():
    for dt in ALL:
        x = data([3, 4], dt)
        m = torch.tensor(RNG.random([3, 4]) < 0.5)
        val = True if dt == "bool" else (7 if dt in INTS else -2.5)
        add(f"masked_fill_{dt}", "masked_fill", {"value": val}, [x, m], lambda a, k: a.masked_fill(k, val))
        add(f"masked_fill_bcast_{dt}", "masked_fill", {"value": 1}, [data([4], dt), m],
            lambda a, k: a.masked_fill(k, 1))
        add(f"masked_fill_t0d_{dt}", "masked_fill_tensor", {}, [data([4, 3], dt, "transpose"), m, data([], dt)],
            lambda a, k, v: a.masked_fill(k, v), {0: "transpose"})
        add(f"masked_select_{dt}", "masked_select", {}, [x, m], lambda a, k: a.masked_select(k))
        add(f"masked_select_bcast_{dt}", "masked_select", {}, [data([4, 3], dt, "transpose"), m[0].contiguous()],
            lambda a, k: a.masked_select(k), {0: "transpose"})
        add(f"masked_scatter_{dt}", "masked_scatter", {}, [x, m, data([13], dt)],
            lambda a, k, s: a.masked_scatter(k, s))
        add(f"nonzero_{dt}", "nonzero", {}, [x], lambda a: a.nonzero())
        add(f"nonzero_3d_{dt}", "nonzero", {}, [data([2, 3, 2], dt, "transpose")], lambda a: a.nonzero(),
            {0: "transpose"})
        add(f"nonzero_tuple_{dt}", "nonzero_tuple", {}, [x], lambda a: a.nonzero(as_tuple=True))
        add(f"where1_{dt}", "where_nonzero", {}, [data([2, 3], dt)], lambda a: torch.where(a))
        add(f"nonzero_0d_{dt}", "nonzero", {}, [data([], dt)], lambda a: a.nonzero())
        add(f"nonzero_empty_{dt}", "nonzero", {}, [data([0, 3], dt)], lambda a: a.nonzero())
    nanx = torch.tensor([0.0, float("nan"), -0.0, float("inf")])
    add("nonzero_nan", "nonzero", {}, [nanx], lambda a: a.nonzero())
    f = data([3, 4], "f32")
    m = torch.tensor(RNG.random([3, 4]) < 0.5)
    add("masked_fill_nonbool", "masked_fill", {"value": 1}, [f, m.long()], lambda a, k: a.masked_fill(k, 1))
    add("masked_fill_1d_value", "masked_fill_tensor", {}, [f, m, torch.ones(1)], lambda a, k, v: a.masked_fill(k, v))
    add("masked_fill_float_on_int", "masked_fill", {"value": 2.75}, [f.long(), m],
        lambda a, k: a.masked_fill(k, 2.75))
    add("masked_fill_f64_value", "masked_fill_tensor", {}, [f, m, torch.tensor(2.5, dtype=torch.float64)],
        lambda a, k, v: a.masked_fill(k, v))
    add("masked_fill_shape", "masked_fill", {"value": 1}, [f, m[:2].contiguous()], lambda a, k: a.masked_fill(k, 1))
    add("masked_select_nonbool", "masked_select", {}, [f, m.long()], lambda a, k: a.masked_select(k))
    add("masked_scatter_nonbool", "masked_scatter", {}, [f, m.long(), torch.ones(12)],
        lambda a, k, s: a.masked_scatter(k, s))
    add("getitem_mask_int", "getitem", {"expr": [{"tensor": 0}, 1, {"tensor": 1}]},
        [torch.arange(60.0).reshape(3, 4, 5), torch.tensor([True, False, True]), idx([0, 4])],
        lambda a, m, i: a[m, 1, i])
    add("masked_scatter_small", "masked_scatter", {}, [f, torch.ones(3, 4, dtype=torch.bool), torch.ones(5)],
        lambda a, k, s: a.masked_scatter(k, s))
    add("masked_scatter_dtype", "masked_scatter", {}, [f, m, torch.ones(12, dtype=torch.float64)],
        lambda a, k, s: a.masked_scatter(k, s))
    add("masked_scatter_bcast", "masked_scatter", {}, [f, m[0].contiguous(), torch.arange(12.0)],
        lambda a, k, s: a.masked_scatter(k, s))


# Index expressions for getitem/setitem: entries are ints, ("s", start, stop, step), None, "...", or
# ("t", k) for stored index input k (inputs after the data).
EXPRS = {
    "int": [1],
    "negint": [-1, ("s", None, None, 2)],
    "slices": [("s", 1, None, 1), ("s", None, -1, 2)],
    "newaxis": [None, 0, ("s", None, None, 1), None],
    "ellipsis": ["...", 1],
    "ellipsis_mid": [0, "...", None],
    "adv1": [("t", 0)],
    "adv2_bcast": [("t", 0), ("t", 1)],
    "adv_split": [("t", 0), ("s", None, None, 1), ("t", 1)],
    "adv_mid": [("s", None, None, 1), ("t", 0)],
    "adv_mid_adjacent": [("s", None, None, 1), ("t", 0), ("t", 1)],
    "adv_int": [("t", 0), 1],
    "adv_neg": [("t", 2)],
    "mask": [("t", 3)],
    "mask_after": [("s", None, None, 1), ("t", 4)],
    "mask_full": [("t", 5)],
    "bool0d": [("t", 6)],
    "adv_newaxis": [None, ("t", 0), "...", ("t", 1)],
    "oob_int": [5],
    "oob_tensor": [("t", 7)],
    "too_many": [0, 0, 0, 0],
    "two_ellipsis": ["...", "..."],
    "bcast_fail": [("t", 0), ("t", 8)],
    "mask_shape": [("t", 9)],
    "float_index": [("t", 10)],
}


def index_inputs():
    """The index inputs EXPRS refers to, for a data tensor of shape [3, 4, 5]."""
    return [
        idx([[2, 0], [1, 1]]),                       # 0: [2, 2] into dim of size >= 3
        idx([3, -1]),                                # 1: [2]
        idx([-3, 2, -1]),                            # 2
        torch.tensor([True, False, True]),           # 3: dim 0 mask
        torch.tensor(RNG.random([4, 5]) < 0.5),      # 4: dims 1-2 mask
        torch.tensor(RNG.random([3, 4, 5]) < 0.5),   # 5: full mask
        torch.tensor(True),                          # 6
        idx([3]),                                    # 7: out of bounds for dim 0
        idx([0, 1, 2]),                              # 8: does not broadcast with [2, 2]
        torch.tensor([True, False]),                 # 9: wrong mask size
        torch.tensor([1.0]),                         # 10: float index
    ]


def to_py(expr, idxs):
    out = []
    for e in expr:
        if isinstance(e, tuple) and e[0] == "s":
            out.append(slice(e[1], e[2], e[3]))
        elif isinstance(e, tuple) and e[0] == "t":
            out.append(idxs[e[1]])
        elif e == "...":
            out.append(Ellipsis)
        else:
            out.append(e)
    return tuple(out)


def to_json(expr):
    out = []
    for e in expr:
        if isinstance(e, tuple) and e[0] == "s":
            out.append({"slice": [e[1], e[2], e[3]]})
        elif isinstance(e, tuple) and e[0] == "t":
            out.append({"tensor": e[1]})
        elif e == "...":
            out.append("...")
        else:
            out.append(e)
    return out


def indexing_cases():
    idxs = index_inputs()
    for name, expr in EXPRS.items():
        dts = ALL if name in ("adv2_bcast", "slices", "mask", "adv_split") else ["f32", "i64"]
        for dt in dts:
            x = data([3, 4, 5], dt)
            add(f"getitem_{name}_{dt}", "getitem", {"expr": to_json(expr)}, [x] + idxs,
                lambda a, *ii, expr=expr: a[to_py(expr, ii)])
            if name in ("oob_int", "too_many", "two_ellipsis"):
                continue
            v = data([5], dt)

            def setitem(a, v, *ii, expr=expr):
                a = a.clone()
                a[to_py(expr, ii)] = v
                return a
            add(f"setitem_{name}_{dt}", "setitem", {"expr": to_json(expr), "accumulate": False},
                [x, v] + idxs, setitem)
    for dt in ALL:
        x = data([3, 4], dt)
        v = data([3], dt)
        for acc in [False, True]:
            add(f"index_put_{acc}_{dt}", "index_put", {"accumulate": acc}, [x, idx([0, 2, 0]), idx([1, -1, 3]), v],
                lambda a, i, j, v, acc=acc: a.index_put((i, j), v, accumulate=acc))
            add(f"index_put_mask_{acc}_{dt}", "index_put", {"accumulate": acc},
                [x, torch.tensor([True, False, True]), v[:1].contiguous()],
                lambda a, m, v, acc=acc: a.index_put((m,), v, accumulate=acc))
    for dt in ["f32", "i64", "bool"]:
        x = data([3, 4], dt)
        add(f"getitem_i32_{dt}", "getitem", {"expr": [{"tensor": 0}, {"slice": [None, None, 2]}]},
            [x, idx([2, -3], torch.int32)], lambda a, i: a[i, ::2])
        add(f"getitem_u8mask_{dt}", "getitem", {"expr": [{"tensor": 0}]},
            [x, torch.tensor([1, 0, 1], dtype=torch.uint8)], lambda a, m: a[m])
        add(f"index_put_i32_{dt}", "index_put", {"accumulate": True},
            [x, idx([1, 1], torch.int32), data([4], dt)], lambda a, i, v: a.index_put((i,), v, accumulate=True))
    f = data([3, 4], "f32")
    add("index_put_dtype", "index_put", {"accumulate": False}, [f, idx([0]), torch.ones(1, dtype=torch.float64)],
        lambda a, i, v: a.index_put((i,), v))
    add("index_put_oob", "index_put", {"accumulate": True}, [f, idx([3]), torch.ones(1)],
        lambda a, i, v: a.index_put((i,), v, accumulate=True))
    add("index_put_shape", "index_put", {"accumulate": False}, [f, idx([0, 1]), torch.ones(3)],
        lambda a, i, v: a.index_put((i,), v))


def shape_cases():
    for dt in ALL:
        a, b = data([2, 3], dt), data([2, 2], dt)
        add(f"cat_d1_{dt}", "cat", {"dim": 1}, [a, b], lambda x, y: torch.cat([x, y], 1))
        add(f"cat_dneg2_{dt}", "cat", {"dim": -2}, [a, data([3, 2], dt, "transpose")],
            lambda x, y: torch.cat([x, y], -2), {1: "transpose"})
        add(f"cat_legacy_empty_{dt}", "cat", {"dim": 0}, [a, torch.empty(0, dtype=DTYPES[dt])],
            lambda x, y: torch.cat([x, y], 0))
        add(f"cat_zero_size_{dt}", "cat", {"dim": 0}, [a, data([0, 3], dt), a], lambda x, y, z: torch.cat([x, y, z]))
        for dt2 in ALL:
            add(f"cat_promote_{dt}_{dt2}", "cat", {"dim": 0}, [data([2], dt), data([3], dt2)],
                lambda x, y: torch.cat([x, y]))
        add(f"stack_{dt}", "stack", {"dim": 1}, [a, data([2, 3], dt)], lambda x, y: torch.stack([x, y], 1))
        add(f"stack_neg_{dt}", "stack", {"dim": -1}, [a, data([3, 2], dt, "transpose")],
            lambda x, y: torch.stack([x, y], -1), {1: "transpose"})
        add(f"hstack_{dt}", "hstack", {}, [a, b], lambda x, y: torch.hstack([x, y]))
        add(f"hstack_1d_{dt}", "hstack", {}, [data([2], dt), data([], dt)], lambda x, y: torch.hstack([x, y]))
        add(f"vstack_{dt}", "vstack", {}, [data([3], dt), a], lambda x, y: torch.vstack([x, y]))
        add(f"dstack_{dt}", "dstack", {}, [a, data([2, 3], dt)], lambda x, y: torch.dstack([x, y]))
        x = data([3, 7], dt)
        add(f"tensor_split_{dt}", "tensor_split", {"sections": 3, "dim": 1}, [x],
            lambda t: t.tensor_split(3, 1))
        add(f"tensor_split_idx_{dt}", "tensor_split_indices", {"indices": [1, 5, 3, 9, -2], "dim": -1}, [x],
            lambda t: t.tensor_split([1, 5, 3, 9, -2], -1))
        add(f"split_{dt}", "split", {"size": 3, "dim": 1}, [x], lambda t: t.split(3, 1))
        add(f"chunk_{dt}", "chunk", {"chunks": 3, "dim": 1}, [x], lambda t: t.chunk(3, 1))
        add(f"repeat_{dt}", "repeat", {"repeats": [2, 1, 3]}, [data([2, 3], dt, "transpose")],
            lambda t: t.repeat(2, 1, 3), {0: "transpose"})
        add(f"repeat_zero_{dt}", "repeat", {"repeats": [0, 2]}, [a], lambda t: t.repeat(0, 2))
        add(f"repeat_0d_{dt}", "repeat", {"repeats": [3]}, [data([], dt)], lambda t: t.repeat(3))
        add(f"tile_{dt}", "tile", {"dims": [2]}, [a], lambda t: t.tile((2,)))
        add(f"rinterleave_{dt}", "repeat_interleave", {"repeats": 2, "dim": 0}, [a],
            lambda t: t.repeat_interleave(2, dim=0))
        add(f"rinterleave_flat_{dt}", "repeat_interleave", {"repeats": 3, "dim": None}, [a],
            lambda t: t.repeat_interleave(3))
        add(f"rinterleave_t_{dt}", "repeat_interleave_tensor", {"dim": 1}, [a, idx([1, 0, 2])],
            lambda t, r: t.repeat_interleave(r, dim=1))
        add(f"flip_{dt}", "flip", {"dims": [0, -1]}, [data([3, 4], dt, "step")], lambda t: t.flip(0, -1),
            {0: "step"})
        add(f"flip_0d_{dt}", "flip", {"dims": [0]}, [data([], dt)], lambda t: t.flip(0))
        add(f"fliplr_{dt}", "fliplr", {}, [a], lambda t: t.fliplr())
        add(f"flipud_{dt}", "flipud", {}, [a], lambda t: t.flipud())
        add(f"roll_flat_{dt}", "roll", {"shifts": [4], "dims": []}, [a], lambda t: t.roll(4))
        add(f"roll_dims_{dt}", "roll", {"shifts": [1, -5], "dims": [0, 1]}, [data([3, 2], dt, "transpose")],
            lambda t: t.roll((1, -5), (0, 1)), {0: "transpose"})
        for k in [-1, 0, 1, 2, 3, 5]:
            add(f"rot90_{k}_{dt}", "rot90", {"k": k, "dims": [0, 1]}, [data([2, 3, 2], dt)],
                lambda t, k=k: t.rot90(k, (0, 1)))
        add(f"rot90_neg_{dt}", "rot90", {"k": 1, "dims": [-1, 0]}, [a], lambda t: t.rot90(1, (-1, 0)))
        for diag in [-1, 0, 2]:
            add(f"tril_{diag}_{dt}", "tril", {"diagonal": diag}, [data([2, 3, 4], dt)], lambda t, d=diag: t.tril(d))
            add(f"triu_{diag}_{dt}", "triu", {"diagonal": diag}, [data([4, 3], dt, "transpose")],
                lambda t, d=diag: t.triu(d), {0: "transpose"})
        val = 1 if dt != "bool" else 1
        add(f"pad_const_{dt}", "pad", {"pad": [1, 2, 0, 1], "mode": "constant", "value": val}, [a],
            lambda t: F.pad(t, (1, 2, 0, 1), value=val))
        add(f"pad_const_neg_{dt}", "pad", {"pad": [-1, 2], "mode": "constant", "value": None}, [a],
            lambda t: F.pad(t, (-1, 2)))
        for mode in ["reflect", "replicate", "circular"]:
            add(f"pad_{mode}_1d_{dt}", "pad", {"pad": [2, 1], "mode": mode, "value": None}, [data([2, 2, 4], dt)],
                lambda t, mode=mode: F.pad(t, (2, 1), mode=mode))
            add(f"pad_{mode}_2d_{dt}", "pad", {"pad": [1, 0, 2, 1], "mode": mode, "value": None},
                [data([1, 3, 4], dt)], lambda t, mode=mode: F.pad(t, (1, 0, 2, 1), mode=mode))
            add(f"pad_{mode}_3d_{dt}", "pad", {"pad": [1, 1, 0, 1, 1, 0], "mode": mode, "value": None},
                [data([1, 1, 2, 3, 3], dt)], lambda t, mode=mode: F.pad(t, (1, 1, 0, 1, 1, 0), mode=mode))
        add(f"unfold_{dt}", "unfold", {"dim": 1, "size": 3, "step": 2}, [data([2, 7], dt)],
            lambda t: t.unfold(1, 3, 2))
        add(f"unfold_view_{dt}", "unfold", {"dim": 0, "size": 2, "step": 1}, [data([4, 3], dt, "transpose")],
            lambda t: t.unfold(0, 2, 1), {0: "transpose"})
        add(f"unfold_0d_{dt}", "unfold", {"dim": 0, "size": 1, "step": 1}, [data([], dt)],
            lambda t: t.unfold(0, 1, 1))
        for ix in ["ij", "xy"]:
            add(f"meshgrid_{ix}_{dt}", "meshgrid", {"indexing": ix}, [data([2], dt), data([3], dt), data([], dt)],
                lambda *ts, ix=ix: torch.meshgrid(*ts, indexing=ix))
        add(f"broadcast_tensors_{dt}", "broadcast_tensors", {}, [data([2, 1], dt), data([3], dt)],
            lambda x, y: torch.broadcast_tensors(x, y))
        add(f"movedim_{dt}", "movedim", {"source": [0, -1], "destination": [2, 0]}, [data([2, 3, 4], dt)],
            lambda t: t.movedim((0, -1), (2, 0)))
    f = data([2, 3], "f32")
    errs = {
        "cat_empty_list": ("cat", {"dim": 0}, [], lambda: torch.cat([])),
        "cat_0d": ("cat", {"dim": 0}, [torch.tensor(1.0)], lambda x: torch.cat([x])),
        "cat_sizes": ("cat", {"dim": 1}, [f, torch.ones(3, 3)], lambda x, y: torch.cat([x, y], 1)),
        "cat_rank": ("cat", {"dim": 1}, [f, torch.ones(2, 3, 1)], lambda x, y: torch.cat([x, y], 1)),
        "cat_dim": ("cat", {"dim": 2}, [f], lambda x: torch.cat([x], 2)),
        "cat_zero_rows": ("cat", {"dim": 0}, [f, torch.ones(2, 0)], lambda x, y: torch.cat([x, y])),
        "stack_sizes": ("stack", {"dim": 0}, [f, torch.ones(3, 2)], lambda x, y: torch.stack([x, y])),
        "tensor_split_0": ("tensor_split", {"sections": 0, "dim": 0}, [f], lambda t: t.tensor_split(0)),
        "tensor_split_0d": ("tensor_split", {"sections": 2, "dim": 0}, [torch.tensor(1.0)],
                            lambda t: t.tensor_split(2)),
        "repeat_few": ("repeat", {"repeats": [2]}, [f], lambda t: t.repeat(2)),
        "repeat_neg": ("repeat", {"repeats": [2, -1]}, [f], lambda t: t.repeat(2, -1)),
        "rinterleave_neg": ("repeat_interleave", {"repeats": -1, "dim": 0}, [f],
                            lambda t: t.repeat_interleave(-1, dim=0)),
        "rinterleave_t_size": ("repeat_interleave_tensor", {"dim": 1}, [f, idx([1, 2])],
                               lambda t, r: t.repeat_interleave(r, dim=1)),
        "rinterleave_t_neg": ("repeat_interleave_tensor", {"dim": 1}, [f, idx([1, -2, 1])],
                              lambda t, r: t.repeat_interleave(r, dim=1)),
        "rinterleave_t_float": ("repeat_interleave_tensor", {"dim": 1}, [f, torch.ones(3)],
                                lambda t, r: t.repeat_interleave(r, dim=1)),
        "rinterleave_t_2d": ("repeat_interleave_tensor", {"dim": 1}, [f, idx([[1, 1, 1]])],
                             lambda t, r: t.repeat_interleave(r, dim=1)),
        "rinterleave_t_one": ("repeat_interleave_tensor", {"dim": None}, [f, idx([2])],
                              lambda t, r: t.repeat_interleave(r)),
        "rinterleave_self": ("repeat_interleave_self", {}, [idx([1, 2, 0, 3])], lambda r: torch.repeat_interleave(r)),
        "flip_dup": ("flip", {"dims": [0, -2]}, [f], lambda t: t.flip(0, -2)),
        "flip_dim": ("flip", {"dims": [2]}, [f], lambda t: t.flip(2)),
        "fliplr_1d": ("fliplr", {}, [torch.ones(3)], lambda t: t.fliplr()),
        "flipud_0d": ("flipud", {}, [torch.tensor(1.0)], lambda t: t.flipud()),
        "roll_align": ("roll", {"shifts": [1, 2], "dims": [0]}, [f], lambda t: t.roll((1, 2), (0,))),
        "roll_0d": ("roll", {"shifts": [1], "dims": []}, [torch.tensor(2.0)], lambda t: t.roll(1)),
        "roll_empty": ("roll", {"shifts": [1], "dims": [0]}, [torch.ones(0, 2)], lambda t: t.roll(1, 0)),
        "rot90_same": ("rot90", {"k": 1, "dims": [0, 0]}, [f], lambda t: t.rot90(1, (0, 0))),
        "rot90_1d": ("rot90", {"k": 1, "dims": [0, 1]}, [torch.ones(3)], lambda t: t.rot90(1, (0, 1))),
        "rot90_len": ("rot90", {"k": 1, "dims": [0]}, [f], lambda t: t.rot90(1, (0,))),
        "tril_1d": ("tril", {"diagonal": 0}, [torch.ones(3)], lambda t: t.tril()),
        "triu_empty": ("triu", {"diagonal": 0}, [torch.ones(0, 3)], lambda t: t.triu()),
        "pad_odd": ("pad", {"pad": [1], "mode": "constant", "value": None}, [f], lambda t: F.pad(t, (1,))),
        "pad_long": ("pad", {"pad": [1, 1, 1, 1, 1, 1], "mode": "constant", "value": None}, [f],
                     lambda t: F.pad(t, (1, 1, 1, 1, 1, 1))),
        "pad_const_float_int": ("pad", {"pad": [1, 1], "mode": "constant", "value": 2.7}, [f.long()],
                                lambda t: F.pad(t, (1, 1), value=2.7)),
        "pad_reflect_big": ("pad", {"pad": [3, 3], "mode": "reflect", "value": None}, [torch.ones(1, 1, 3)],
                            lambda t: F.pad(t, (3, 3), mode="reflect")),
        "pad_reflect_rank": ("pad", {"pad": [1, 1], "mode": "reflect", "value": None}, [torch.ones(3)],
                             lambda t: F.pad(t, (1, 1), mode="reflect")),
        "pad_replicate_rank": ("pad", {"pad": [1, 1, 1, 1], "mode": "replicate", "value": None},
                               [torch.ones(1, 3)], lambda t: F.pad(t, (1, 1, 1, 1), mode="replicate")),
        "pad_reflect_empty": ("pad", {"pad": [1, 1], "mode": "reflect", "value": None}, [torch.ones(1, 1, 0)],
                              lambda t: F.pad(t, (1, 1), mode="reflect")),
        "pad_reflect_batch0": ("pad", {"pad": [1, 1], "mode": "reflect", "value": None},
                               [torch.ones(0, 2, 3)], lambda t: F.pad(t, (1, 1), mode="reflect")),
        "pad_reflect_2d_big": ("pad", {"pad": [1, 1, 3, 1], "mode": "reflect", "value": None},
                               [torch.ones(1, 3, 3)], lambda t: F.pad(t, (1, 1, 3, 1), mode="reflect")),
        "pad_reflect_3d_big": ("pad", {"pad": [1, 1, 1, 1, 3, 1], "mode": "reflect", "value": None},
                               [torch.ones(1, 3, 3, 3)], lambda t: F.pad(t, (1, 1, 1, 1, 3, 1), mode="reflect")),
        "pad_circular_1d": ("pad", {"pad": [1, 1], "mode": "circular", "value": None}, [torch.ones(3)],
                            lambda t: F.pad(t, (1, 1), mode="circular")),
        "stack_dim": ("stack", {"dim": 3}, [f, f], lambda x, y: torch.stack([x, y], 3)),
        "tile_0d": ("tile", {"dims": [2, 3]}, [torch.tensor(2.0)], lambda t: t.tile((2, 3))),
        "flip_no_dims": ("flip", {"dims": []}, [f], lambda t: t.flip(())),
        "roll_two_shifts": ("roll", {"shifts": [1, 2], "dims": []}, [f], lambda t: t.roll((1, 2))),
        "rinterleave_self_i32": ("repeat_interleave_self", {}, [idx([1, 2], torch.int32)],
                                 lambda r: torch.repeat_interleave(r)),
        "pad_circular_crop_all": ("pad", {"pad": [-4, 1], "mode": "circular", "value": None},
                                  [torch.ones(1, 1, 3)], lambda t: F.pad(t, (-4, 1), mode="circular")),
        "pad_circular_wrap": ("pad", {"pad": [4, 1], "mode": "circular", "value": None}, [torch.ones(1, 1, 3)],
                              lambda t: F.pad(t, (4, 1), mode="circular")),
        "pad_reflect_neg": ("pad", {"pad": [-1, 1], "mode": "reflect", "value": None},
                            [torch.arange(5.0).reshape(1, 1, 5)], lambda t: F.pad(t, (-1, 1), mode="reflect")),
        "pad_circular_neg": ("pad", {"pad": [-1, 2], "mode": "circular", "value": None},
                             [torch.arange(5.0).reshape(1, 1, 5)], lambda t: F.pad(t, (-1, 2), mode="circular")),
        "unfold_big": ("unfold", {"dim": 0, "size": 8, "step": 1}, [torch.ones(7)], lambda t: t.unfold(0, 8, 1)),
        "unfold_step0": ("unfold", {"dim": 0, "size": 2, "step": 0}, [torch.ones(7)], lambda t: t.unfold(0, 2, 0)),
        "meshgrid_2d": ("meshgrid", {"indexing": "ij"}, [f, torch.ones(3)], lambda *ts: torch.meshgrid(*ts, indexing="ij")),
        "meshgrid_dtype": ("meshgrid", {"indexing": "ij"}, [torch.ones(2), idx([1])],
                           lambda *ts: torch.meshgrid(*ts, indexing="ij")),
        "broadcast_bad": ("broadcast_tensors", {}, [torch.ones(2, 1), torch.ones(2, 3), torch.ones(4)],
                          lambda *ts: torch.broadcast_tensors(*ts)),
        "movedim_dup": ("movedim", {"source": [0, 0], "destination": [1, 0]}, [f], lambda t: t.movedim((0, 0), (1, 0))),
        "movedim_len": ("movedim", {"source": [0, 1], "destination": [1]}, [f], lambda t: t.movedim((0, 1), (1,))),
    }
    for name, (op, args, inputs, fn) in errs.items():
        add(name, op, args, inputs, fn)


def edge_cases():
    """Empty and 0-d inputs, non-contiguous index tensors, for a few dtypes."""
    for dt in ["bool", "i64", "f32", "bf16"]:
        e = data([0, 3], dt)
        z = data([], dt)
        x = data([3, 4], dt)
        add(f"edge_flip_empty_{dt}", "flip", {"dims": [0, 1]}, [e], lambda t: t.flip(0, 1))
        add(f"edge_roll_empty_{dt}", "roll", {"shifts": [2], "dims": [1]}, [e], lambda t: t.roll(2, 1))
        add(f"edge_repeat_empty_{dt}", "repeat", {"repeats": [2, 2]}, [e], lambda t: t.repeat(2, 2))
        add(f"edge_tril_empty_{dt}", "tril", {"diagonal": 0}, [e], lambda t: t.tril())
        add(f"edge_rot90_empty_{dt}", "rot90", {"k": 1, "dims": [0, 1]}, [e], lambda t: t.rot90(1, (0, 1)))
        add(f"edge_pad_empty_{dt}", "pad", {"pad": [1, 1], "mode": "constant", "value": None}, [e],
            lambda t: F.pad(t, (1, 1)))
        add(f"edge_pad_circular_empty_batch_{dt}", "pad", {"pad": [1, 1], "mode": "circular", "value": None},
            [data([0, 2, 3], dt)], lambda t: F.pad(t, (1, 1), mode="circular"))
        add(f"edge_cat_empty_{dt}", "cat", {"dim": 1}, [e, data([0, 2], dt)], lambda a, b: torch.cat([a, b], 1))
        add(f"edge_stack_0d_{dt}", "stack", {"dim": 0}, [z, data([], dt)], lambda a, b: torch.stack([a, b]))
        add(f"edge_tensor_split_empty_{dt}", "tensor_split", {"sections": 2, "dim": 0}, [e],
            lambda t: t.tensor_split(2))
        add(f"edge_movedim_0d_{dt}", "movedim", {"source": [0], "destination": [-1]}, [z],
            lambda t: t.movedim(0, -1))
        add(f"edge_meshgrid_one_{dt}", "meshgrid", {"indexing": "xy"}, [data([3], dt)],
            lambda t: torch.meshgrid(t, indexing="xy"))
        add(f"edge_masked_fill_0d_{dt}", "masked_fill", {"value": 0}, [z, torch.tensor(True)],
            lambda t, m: t.masked_fill(m, 0))
        add(f"edge_masked_select_empty_{dt}", "masked_select", {}, [e, torch.zeros(0, 3, dtype=torch.bool)],
            lambda t, m: t.masked_select(m))
        add(f"edge_take_empty_{dt}", "take", {}, [x, idx([], torch.int64)], lambda t, i: t.take(i))
        add(f"edge_index_select_empty_self_{dt}", "index_select", {"dim": 0}, [e, idx([], torch.int64)],
            lambda t, i: t.index_select(0, i))
        add(f"edge_scatter_empty_{dt}", "scatter", {"dim": 0}, [x, idx([[]] * 3), data([3, 0], dt)],
            lambda t, i, s: t.scatter(0, i, s))
        add(f"edge_gather_index_view_{dt}", "gather", {"dim": 1}, [x, rand_index([2, 3], 4)],
            lambda t, i: t.gather(1, i), {1: "transpose"})
        add(f"edge_scatter_add_0d_{dt}", "scatter_add", {"dim": 0}, [z, idx(0), data([], dt)],
            lambda t, i, s: t.scatter_add(0, i, s))
        add(f"edge_index_fill_0d_{dt}", "index_fill", {"dim": 0, "value": 1}, [z, idx([0])],
            lambda t, i: t.index_fill(0, i, 1))
        add(f"edge_getitem_0d_{dt}", "getitem", {"expr": [None, "..."]}, [z], lambda t: t[None, ...])
        add(f"edge_getitem_0d_mask_{dt}", "getitem", {"expr": [{"tensor": 0}]}, [z, torch.tensor(False)],
            lambda t, m: t[m])
        add(f"edge_getitem_empty_slice_{dt}", "getitem", {"expr": [{"slice": [2, 1, 1]}]}, [x],
            lambda t: t[2:1])
        add(f"edge_unfold_size0_{dt}", "unfold", {"dim": 1, "size": 0, "step": 1}, [x], lambda t: t.unfold(1, 0, 1))
        add(f"edge_repeat_interleave_empty_{dt}", "repeat_interleave", {"repeats": 2, "dim": 0}, [e],
            lambda t: t.repeat_interleave(2, dim=0))


def main():
    edge_cases()
    gather_scatter_cases()
    index_dim_cases()
    masked_cases()
    indexing_cases()
    shape_cases()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "indexshape.safetensors")
    save_deterministic(TENSORS, out, META)
    n_err = sum(1 for m in META.values() if json.loads(m).get("error"))
    print(f"wrote {out}: {len(META)} cases ({n_err} error cases), {len(TENSORS)} tensors, "
          f"{os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()

"""Writes nn/tests/nn/nn_prune_golden.rs: torch's values for torch.nn.utils.prune in float64.

Each case prunes a Linear or Conv2d (or two Linears for global_unstructured) whose initial state
dict is written as `<case>.init.<key>`, then writes the pruned module's state dict
(`<case>.sd.<key>`, its keys in torch's order in `KEYS`), and, for the cases with an input
`<case>.x`, the forward output `<case>.out`, a random cotangent `<case>.cot` and the gradients of
`(out * cot).sum()` for every parameter (`<case>.grad.<name>`, names in `PARAMS`). Torch's error
messages are `MESSAGES`. nn/tests/nn/nn_prune.rs makes the same calls by case name.

The weights are random normals, so the importances (|w|, the channel norms) have no ties, except in
the `*_ties` cases, which check that our topk keeps torch's CPU choice among equal values.

Run: /work/.refenv/bin/python nn/tests/make_nn_prune_golden.py (from the repository root).
"""

import os
import sys

import torch
from torch import nn
from torch.nn.utils import prune

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, rust_str, write_golden  # noqa: E402

torch.manual_seed(2024)
DT = torch.float64
TENSORS = []
KEYS = []
PARAMS = []
MESSAGES = []


def put(name, t):
    t = t.detach()
    TENSORS.append((name, list(t.shape), [float(v) for v in t.reshape(-1).tolist()]))


def linear(i, o, bias=True):
    m = nn.Linear(i, o, bias=bias, dtype=DT)
    with torch.no_grad():
        m.weight.copy_(torch.randn(o, i, dtype=DT))
        if bias:
            m.bias.copy_(torch.randn(o, dtype=DT))
    return m


def conv():
    m = nn.Conv2d(2, 4, 3, dtype=DT)
    with torch.no_grad():
        m.weight.copy_(torch.randn(4, 2, 3, 3, dtype=DT))
        m.bias.copy_(torch.randn(4, dtype=DT))
    return m


def init(case, m):
    for k, v in m.state_dict().items():
        put(f"{case}.init.{k}", v)


def record(case, m, x=None):
    sd = m.state_dict()
    KEYS.append((case, list(sd.keys())))
    for k, v in sd.items():
        put(f"{case}.sd.{k}", v)
    if x is None:
        return
    PARAMS.append((case, [k for k, _ in m.named_parameters()]))
    put(f"{case}.x", x)
    m.zero_grad()  # each case's gradients alone (an earlier case of the same module ran backward too)
    out = m(x)
    cot = torch.randn(out.shape, dtype=DT)
    (out * cot).sum().backward()
    put(f"{case}.out", out)
    put(f"{case}.cot", cot)
    for k, p in m.named_parameters():
        put(f"{case}.grad.{k}", p.grad)


def lin_x():
    return torch.randn(3, 5, dtype=DT)


def conv_x():
    return torch.randn(2, 2, 5, 5, dtype=DT)


def err(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        MESSAGES.append((name, str(e)))
        return
    raise AssertionError(f"{name}: no error")


# --- one method on a fresh module ---------------------------------------------------------------
def single(case, make, xf, fn):
    m = make()
    init(case, m)
    fn(m)
    record(case, m, xf())


single("identity", lambda: linear(5, 4), lin_x, lambda m: prune.identity(m, "weight"))
single("l1_frac", lambda: linear(5, 4), lin_x, lambda m: prune.l1_unstructured(m, "weight", 0.3))
single("l1_count", lambda: linear(5, 4), lin_x, lambda m: prune.l1_unstructured(m, "weight", 7))
single("l1_half_even", lambda: linear(5, 4), lin_x, lambda m: prune.l1_unstructured(m, "weight", 0.125))
single("l1_all", lambda: linear(5, 4), lin_x, lambda m: prune.l1_unstructured(m, "weight", 1.0))
single("l1_bias", lambda: linear(5, 4), lin_x, lambda m: prune.l1_unstructured(m, "bias", 2))
single("l1_conv", conv, conv_x, lambda m: prune.l1_unstructured(m, "weight", 0.5))
single("ln_l2_dim0", lambda: linear(5, 4), lin_x, lambda m: prune.ln_structured(m, "weight", 0.5, 2, 0))
single("ln_l1_dim1", lambda: linear(5, 4), lin_x, lambda m: prune.ln_structured(m, "weight", 2, 1, -1))
single("ln_inf_conv", conv, conv_x, lambda m: prune.ln_structured(m, "weight", 0.25, float("inf"), 0))
single("ln_fro_conv_dim1", conv, conv_x, lambda m: prune.ln_structured(m, "weight", 1, "fro", 1))
single("ln_l1_conv_dim3", conv, conv_x, lambda m: prune.ln_structured(m, "weight", 0.34, 1, 3))
single("ln_zero", lambda: linear(5, 4), lin_x, lambda m: prune.ln_structured(m, "weight", 0.0, 2, 0))

# importance scores
imp_lin = torch.randn(4, 5, dtype=DT)
put("imp_lin", imp_lin)
single("l1_importance", lambda: linear(5, 4), lin_x,
       lambda m: prune.l1_unstructured(m, "weight", 0.45, importance_scores=imp_lin))
single("ln_importance", lambda: linear(5, 4), lin_x,
       lambda m: prune.ln_structured(m, "weight", 1, 2, 0, importance_scores=imp_lin))

# custom mask
custom = (torch.rand(4, 5) > 0.5).to(DT)
put("custom_mask", custom)
single("custom", lambda: linear(5, 4), lin_x, lambda m: prune.custom_from_mask(m, "weight", custom))

# ties in |w|: torch's topk picks among equal values (our topk keeps its CPU order)
def ties():
    m = linear(5, 4)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[1.0, -2.0, 1.0, 3.0, -1.0], [2.0, 1.0, -1.0, 2.0, 3.0],
                                     [-3.0, 1.0, 2.0, -2.0, 1.0], [1.0, 2.0, 3.0, -1.0, 2.0]], dtype=DT))
    return m


single("l1_ties", ties, lin_x, lambda m: prune.l1_unstructured(m, "weight", 0.3))
single("l1_ties_count", ties, lin_x, lambda m: prune.l1_unstructured(m, "weight", 11))


# --- iterative pruning (PruningContainer) -------------------------------------------------------
def iterative(case, make, xf, steps):
    m = make()
    init(case, m)
    for i, fn in enumerate(steps):
        fn(m)
        put(f"{case}.mask{i}", m.weight_mask)
    record(case, m, xf())


iterative("iter_l1_ln", lambda: linear(6, 5), lambda: torch.randn(3, 6, dtype=DT), [
    lambda m: prune.l1_unstructured(m, "weight", 0.3),
    lambda m: prune.ln_structured(m, "weight", 0.5, 2, 0),
    lambda m: prune.l1_unstructured(m, "weight", 0.25),
])
iterative("iter_ln_l1_conv", conv, conv_x, [
    lambda m: prune.ln_structured(m, "weight", 1, 1, 0),
    lambda m: prune.l1_unstructured(m, "weight", 10),
    lambda m: prune.ln_structured(m, "weight", 0.5, 2, 1),
    lambda m: prune.custom_from_mask(m, "weight", torch.ones(4, 2, 3, 3).index_fill(3, torch.tensor([1]), 0)),
])
iterative("iter_l1_ln_dim1", lambda: linear(6, 5), lambda: torch.randn(3, 6, dtype=DT), [
    lambda m: prune.l1_unstructured(m, "weight", 12),
    lambda m: prune.ln_structured(m, "weight", 2, float("-inf"), 1),
    lambda m: prune.identity(m, "weight"),
])

# --- two tensors of one module, and remove ------------------------------------------------------
m = conv()
init("two", m)
prune.l1_unstructured(m, "weight", 0.4)
prune.l1_unstructured(m, "bias", 1)
record("two", m, conv_x())
m.zero_grad()
prune.remove(m, "weight")
record("two_removed_weight", m, conv_x())
prune.l1_unstructured(m, "weight", 0.5)  # more than the zeros: no ties at the boundary
record("two_repruned", m, conv_x())

m = linear(5, 4)
init("remove", m)
prune.ln_structured(m, "weight", 0.5, 2, 0)
prune.remove(m, "weight")
record("remove", m, lin_x())

# --- global_unstructured ------------------------------------------------------------------------
a, b = linear(5, 4), linear(4, 3)
init("global.a", a)
init("global.b", b)
prune.global_unstructured([(a, "weight"), (b, "weight"), (b, "bias")], prune.L1Unstructured, amount=0.4)
record("global.a", a, lin_x())
record("global.b", b, torch.randn(3, 4, dtype=DT))

a, b = linear(5, 4), linear(4, 3)
init("global2.a", a)
init("global2.b", b)
prune.ln_structured(a, "weight", 1, 2, 0)
imp_b = torch.randn(3, 4, dtype=DT)
put("imp_b", imp_b)
prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, importance_scores={(b, "weight"): imp_b},
                          amount=11)
record("global2.a", a, lin_x())
record("global2.b", b, torch.randn(3, 4, dtype=DT))

# --- a torch state dict of a pruned model, loaded into ours -------------------------------------
m = linear(5, 4)
prune.l1_unstructured(m, "weight", 0.35)
with torch.no_grad():
    m.weight_orig.mul_(1.5)
record("load", m, lin_x())

# --- errors -------------------------------------------------------------------------------------
lin = linear(5, 4)
err("amount_negative_int", lambda: prune.l1_unstructured(linear(5, 4), "weight", -1))
err("amount_above_one", lambda: prune.l1_unstructured(linear(5, 4), "weight", 1.5))
err("amount_negative_float", lambda: prune.random_unstructured(linear(5, 4), "weight", -0.1))
err("amount_too_many", lambda: prune.l1_unstructured(linear(5, 4), "weight", 25))
err("amount_too_many_channels", lambda: prune.ln_structured(linear(5, 4), "weight", 5, 2, 0))
err("amount_nan", lambda: prune.l1_unstructured(linear(5, 4), "weight", float("nan")))
err("structured_1d", lambda: prune.ln_structured(linear(5, 4), "bias", 1, 2, 0))
err("structured_dim", lambda: prune.ln_structured(linear(5, 4), "weight", 1, 2, 2))
err("random_structured_1d", lambda: prune.random_structured(linear(5, 4), "bias", 1, -1))
err("remove_unpruned", lambda: prune.remove(linear(5, 4), "weight"))
err("no_attribute", lambda: prune.l1_unstructured(linear(5, 4), "foo", 1))
err("importance_shape",
    lambda: prune.l1_unstructured(linear(5, 4), "weight", 1, importance_scores=torch.randn(5, 4, dtype=DT)))
err("custom_shape", lambda: prune.custom_from_mask(linear(5, 4), "weight", torch.ones(5, 4)))
err("global_structured", lambda: prune.global_unstructured([(linear(5, 4), "weight")], prune.LnStructured,
                                                          amount=1, n=2, dim=0))
err("global_custom", lambda: prune.global_unstructured([(linear(5, 4), "weight")], prune.CustomFromMask,
                                                      mask=torch.ones(4, 5)))
err("global_amount", lambda: prune.global_unstructured([(linear(5, 4), "weight")], prune.L1Unstructured,
                                                      amount=21))


def iter_too_many():
    m = linear(5, 4)
    prune.l1_unstructured(m, "weight", 6)
    prune.l1_unstructured(m, "weight", 15)


err("iter_amount_too_many", iter_too_many)


def buffer_prune():
    m = nn.BatchNorm1d(3, dtype=DT)
    prune.identity(m, "running_mean")


err("prune_buffer", buffer_prune)

# a failed first prune leaves the module unpruned, its parameter re-registered last (torch's order)
m = linear(5, 4)
try:
    prune.l1_unstructured(m, "weight", 25)
except ValueError:
    pass
assert not prune.is_pruned(m)
KEYS.append(("failed", list(m.state_dict().keys())))


def lits(xs):
    return ", ".join(lit(v) for v in xs)


lines = [
    generated_header("make_nn_prune_golden.py"),
    "",
    "/// `(name, dims, row-major values)`: torch's tensors.",
    "#[allow(clippy::approx_constant, clippy::excessive_precision, clippy::unreadable_literal)]",
    "const TENSORS: &[(&str, &[usize], &[f64])] = &[",
]
for name, dims, data in TENSORS:
    lines.append(f'    ("{name}", &{dims}, &[{lits(data)}]),')
lines += ["];", "", "/// `(case, state-dict keys in torch's order)`.", "const KEYS: &[(&str, &[&str])] = &["]
for case, keys in KEYS:
    lines.append(f'    ("{case}", &[{", ".join(rust_str(k) for k in keys)}]),')
lines += ["];", "", "/// `(case, parameter names in torch's order)`.", "const PARAMS: &[(&str, &[&str])] = &["]
for case, keys in PARAMS:
    lines.append(f'    ("{case}", &[{", ".join(rust_str(k) for k in keys)}]),')
lines += ["];", "", "/// `(name, message)`: torch's error messages.", "const MESSAGES: &[(&str, &str)] = &["]
for name, msg in MESSAGES:
    lines.append(f"    ({rust_str(name)}, {rust_str(msg)}),")
lines.append("];")

path = write_golden("nn_prune_golden.rs", lines)
print(path, os.path.getsize(path), "bytes,", len(TENSORS), "tensors,", len(MESSAGES), "messages")

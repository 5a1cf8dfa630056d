"""Writes nn/tests/nn/module_hooks_golden.rs: PyTorch 2.15's values for the module-hook tests
(`nn/tests/nn/module_hooks.rs`): a float64 `Linear(3, 2)` with fixed weights run with forward
pre-hooks, forward hooks, full backward pre-hooks and full backward hooks that change what they
see, the loss `(out * c).sum()` with `c = 1, 2, 3, ...`; each case records the output, the
gradients of the input and parameters, and the gradients the backward hooks were given.

Cases:
- BASIC: pre-hook `x * 2`, forward hook `out + 1`, backward pre-hook `go * 0.5 + 0.1`, backward
  hook `gi * 3` (the input requires grad).
- CHAIN: three hooks of each kind, the third registered with `prepend=True` (so it runs first):
  pre-hooks `x - 1` (prepended), `x * 2`, `x + 0.5`; forward hooks `out * 0.5` (prepended),
  `out * 3`, `out - 1`; backward pre-hooks `go + 0.25` (prepended), `go * 2`, `go - 1`; backward
  hooks `gi * -0.5` (prepended), `gi * 3`, `gi + 1`. The recorded hook inputs are those the
  first-registered (not prepended) backward pre-hook and backward hook were given.
- NO_INPUT_GRAD: the input does not require grad: the backward pre-hook `go * 2` and the backward
  hook (given `grad_input = (None,)`) still run, from the output's gradient.

Run: /work/.refenv/bin/python nn/tests/make_module_hooks_golden.py
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, tensor_lit, write_golden  # noqa: E402

D = torch.float64
W = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], dtype=D)
B = torch.tensor([0.05, -0.07], dtype=D)
X = torch.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]], dtype=D)


def linear():
    m = nn.Linear(3, 2).to(D)
    with torch.no_grad():
        m.weight.copy_(W)
        m.bias.copy_(B)
    return m


def opt(t):
    return "None" if t is None else f"Some({tensor_lit(t)})"


def run(name, m, x_requires_grad, seen):
    x = X.clone().requires_grad_(x_requires_grad)
    out = m(x)
    cot = torch.arange(1, out.numel() + 1, dtype=D).reshape(out.shape)
    (out * cot).sum().backward()
    return [
        f"const {name}: HookCase = HookCase {{",
        f"    out: {tensor_lit(out)},",
        f"    x_grad: {opt(x.grad)},",
        f"    weight_grad: {tensor_lit(m.weight.grad)},",
        f"    bias_grad: {tensor_lit(m.bias.grad)},",
        f"    seen_pre_grad_output: {tensor_lit(seen['pre_go'])},",
        f"    seen_grad_input: {opt(seen['gi'])},",
        f"    seen_grad_output: {tensor_lit(seen['go'])},",
        "};",
    ]


lines = [generated_header("make_module_hooks_golden.py"), ""]
lines.append(f"const WEIGHT: T = {tensor_lit(W)};")
lines.append(f"const BIAS: T = {tensor_lit(B)};")
lines.append(f"const X: T = {tensor_lit(X)};")

# --- BASIC ------------------------------------------------------------------------------------
m = linear()
seen = {}
m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
m.register_forward_hook(lambda mod, args, out: out + 1)


def bpre(mod, go):
    seen["pre_go"] = go[0].detach().clone()
    return (go[0] * 0.5 + 0.1,)


def bhook(mod, gi, go):
    seen["gi"] = gi[0].detach().clone()
    seen["go"] = go[0].detach().clone()
    return (gi[0] * 3,)


m.register_full_backward_pre_hook(bpre)
m.register_full_backward_hook(bhook)
lines += run("BASIC", m, True, seen)

# --- CHAIN ------------------------------------------------------------------------------------
m = linear()
seen = {}
m.register_forward_pre_hook(lambda mod, args: args[0] * 2)
m.register_forward_pre_hook(lambda mod, args: args[0] + 0.5)
m.register_forward_pre_hook(lambda mod, args: args[0] - 1, prepend=True)
m.register_forward_hook(lambda mod, args, out: out * 3)
m.register_forward_hook(lambda mod, args, out: out - 1)
m.register_forward_hook(lambda mod, args, out: out * 0.5, prepend=True)


def bpre2(mod, go):
    seen["pre_go"] = go[0].detach().clone()
    return (go[0] * 2,)


def bhook2(mod, gi, go):
    seen["gi"] = gi[0].detach().clone()
    seen["go"] = go[0].detach().clone()
    return (gi[0] * 3,)


m.register_full_backward_pre_hook(bpre2)
m.register_full_backward_pre_hook(lambda mod, go: (go[0] - 1,))
m.register_full_backward_pre_hook(lambda mod, go: (go[0] + 0.25,), prepend=True)
m.register_full_backward_hook(bhook2)
m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * -0.5,), prepend=True)
lines += run("CHAIN", m, True, seen)

# --- NO_INPUT_GRAD ----------------------------------------------------------------------------
m = linear()
seen = {}


def bpre3(mod, go):
    seen["pre_go"] = go[0].detach().clone()
    return (go[0] * 2,)


def bhook3(mod, gi, go):
    seen["gi"] = gi[0]
    seen["go"] = go[0].detach().clone()
    return None


m.register_full_backward_pre_hook(bpre3)
m.register_full_backward_hook(bhook3)
lines += run("NO_INPUT_GRAD", m, False, seen)

print(write_golden("module_hooks_golden.rs", lines))

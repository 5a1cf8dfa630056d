"""Writes nn/tests/nn/muon_and_linear_cross_entropy_golden.rs: torch's results replayed by nn/tests/nn/muon_and_linear_cross_entropy.rs.

- Muon: 5 steps of given gradients on two parameters ([4, 3] tall, [3, 5] wide), float32 and
  float64, Nesterov on and off, each `adjust_lr_fn` (None, "original", "match_rms_adamw",
  "spectral_unclamped"): the parameters and momentum buffers after. The Newton–Schulz iteration runs
  in bfloat16 (torch's choice), so the replay compares the parameters within a tolerance derived
  here (`MUON_PARAM_TOL`, from the largest gap between torch's bfloat16 result and the same
  iteration in float64); the momentum buffers do not go through bfloat16 and are compared tightly.
- orthogonal: Linear layers with [4, 4], [3, 5] and [5, 3] weights (float64), each map (None,
  "matrix_exp", "cayley", "householder"), with and without the trivialization: the weight before,
  the state dict after registration, the parametrized weight, the output for an input, and the
  gradients of (out * ramp).sum() with respect to `original` and `bias`.
- linear_cross_entropy: outputs and gradients (of (out * ramp).sum()) for several options.

Run: /work/.refenv/bin/python nn/tests/make_muon_and_linear_cross_entropy_golden.py (from the repository root).
"""

import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.utils.parametrizations import orthogonal
from torch.optim import Muon

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, named, rust_str, tensor_lit, tlist, write_golden  # noqa: E402

lines = [generated_header("make_muon_and_linear_cross_entropy_golden.py", "float32/float64, CPU"), ""]

# ---------------------------------------------------------------- Muon
torch.manual_seed(0)
SHAPES = [(4, 3), (3, 5)]
INIT = [torch.randn(s, dtype=torch.float64) for s in SHAPES]
GRADS = [[torch.randn(s, dtype=torch.float64) for s in SHAPES] for _ in range(5)]
LR, WD, MOM = 0.02, 0.1, 0.9


def run_muon(dtype, nesterov, adjust, exact=False):
    ps = [t.to(dtype).clone().requires_grad_(True) for t in INIT]
    opt = Muon(ps, lr=LR, weight_decay=WD, momentum=MOM, nesterov=nesterov, adjust_lr_fn=adjust)
    for step in GRADS:
        for p, g in zip(ps, step):
            p.grad = g.to(dtype)
        if exact:
            import torch.optim._muon as mu

            orig = mu._zeropower_via_newtonschulz

            def f64_ns(grad, coeffs, steps, eps):
                a, b, c = coeffs
                x = grad.to(torch.float64)
                if grad.size(0) > grad.size(1):
                    x = x.T
                x = x / x.norm().clamp(min=eps)
                for _ in range(steps):
                    gm = x @ x.T
                    gu = torch.addmm(gm, gm, gm, beta=b, alpha=c)
                    x = torch.addmm(x, gu, x, beta=a)
                if grad.size(0) > grad.size(1):
                    x = x.T
                return x

            mu._zeropower_via_newtonschulz = f64_ns
            try:
                opt.step()
            finally:
                mu._zeropower_via_newtonschulz = orig
        else:
            opt.step()
    bufs = [opt.state[p]["momentum_buffer"] for p in ps]
    return [p.detach() for p in ps], bufs


lines.append(f"const MUON_INIT: &[T] = {tlist(INIT)};")
lines.append("const MUON_GRADS: &[&[T]] = &[" + ", ".join(tlist(s) for s in GRADS) + "];")
lines.append(f"const MUON_LR: f64 = {lit(LR)};")
lines.append(f"const MUON_WD: f64 = {lit(WD)};")
lines.append(f"const MUON_MOMENTUM: f64 = {lit(MOM)};")
lines.append("/// (dtype is f64, nesterov, adjust_lr_fn or \"\", params after, momentum buffers after)")
lines.append("const MUON_CASES: &[(bool, bool, &str, &[T], &[T])] = &[")
worst = 0.0
for dtype in (torch.float32, torch.float64):
    for nesterov in (True, False):
        for adjust in (None, "original", "match_rms_adamw", "spectral_unclamped"):
            ps, bufs = run_muon(dtype, nesterov, adjust)
            ex, _ = run_muon(torch.float64, nesterov, adjust, exact=True)
            for p, e in zip(ps, ex):
                worst = max(worst, (p.double() - e).abs().max().item())
            is64 = "true" if dtype == torch.float64 else "false"
            lines.append(
                f"    ({is64}, {'true' if nesterov else 'false'}, {rust_str(adjust or '')}, {tlist(ps)}, {tlist(bufs)}),"
            )
lines.append("];")
# the replay's tolerance on the parameters: twice the gap between bfloat16 and exact iterations
lines.append(f"const MUON_PARAM_TOL: f64 = {lit(2.0 * worst + 1e-6)};")


def err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return str(e)
    raise AssertionError("expected an error")


p2 = torch.zeros(3, 4, requires_grad=True)
errors = [
    ("lr", err(lambda: Muon([p2], lr=-1.0))),
    ("momentum", err(lambda: Muon([p2], momentum=-0.5))),
    ("weight_decay", err(lambda: Muon([p2], weight_decay=-2.0))),
    ("adjust", err(lambda: Muon([p2], adjust_lr_fn="foo"))),
    ("1d", err(lambda: Muon([torch.zeros(3, requires_grad=True)]))),
]


def ns100():
    o = Muon([p2], ns_steps=100)
    p2.grad = torch.ones(3, 4)
    o.step()


errors.append(("ns_steps", err(ns100)))
lines.append("const MUON_ERRORS: &[(&str, &str)] = &[")
for k, v in errors:
    lines.append(f"    ({rust_str(k)}, {rust_str(v)}),")
lines.append("];")

# ---------------------------------------------------------------- orthogonal
torch.set_default_dtype(torch.float64)
lines.append("")
lines.append("/// (shape [out, in], map or \"\", use_trivialization, weight before, bias, state dict after")
lines.append("/// registration, parametrized weight, input, output, grad of original, grad of bias)")
lines.append("const ORTH_CASES: &[((usize, usize), &str, bool, T, T, &[(&str, T)], T, T, T, T, T)] = &[")
for out_f, in_f in [(4, 4), (3, 5), (5, 3)]:
    for omap in (None, "matrix_exp", "cayley", "householder"):
        for triv in (True, False):
            torch.manual_seed(1)
            lin = torch.nn.Linear(in_f, out_f)
            w0 = lin.weight.detach().clone()
            b0 = lin.bias.detach().clone()
            m = orthogonal(lin, orthogonal_map=omap, use_trivialization=triv)
            sd = [(k, v.clone()) for k, v in m.state_dict().items()]
            weight = m.weight.detach().clone()
            x = torch.randn(2, in_f)
            out = m(x)
            ramp = torch.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
            (out * ramp).sum().backward()
            g_orig = m.parametrizations.weight.original.grad
            g_bias = m.bias.grad
            lines.append(
                f"    (({out_f}, {in_f}), {rust_str(omap or '')}, {'true' if triv else 'false'}, {tensor_lit(w0)},"
                f" {tensor_lit(b0)}, {named(sd)}, {tensor_lit(weight)}, {tensor_lit(x)}, {tensor_lit(out.detach())},"
                f" {tensor_lit(g_orig)}, {tensor_lit(g_bias)}),"
            )
lines.append("];")
lines.append("const ORTH_ERRORS: &[(&str, &str)] = &[")
lines.append(
    f"    (\"map\", {rust_str(err(lambda: orthogonal(torch.nn.Linear(3, 4), orthogonal_map='foo')))}),"
)
lines.append(f"    (\"1d\", {rust_str(err(lambda: orthogonal(torch.nn.Linear(3, 4), name='bias')))}),")
lines.append("];")

# ---------------------------------------------------------------- linear_cross_entropy
lines.append("")
lines.append("/// (name, input, linear_weight, target, linear_bias (empty dims: none), class weight (empty: none),")
lines.append("/// reduction, ignore_index (i64::MIN: None), label_smoothing, out, grads of input/weight/bias)")
lines.append(
    "const LCE_CASES: &[(&str, T, T, T, T, T, &str, i64, f64, T, T, T, T)] = &["
)
torch.manual_seed(2)
NONE = torch.zeros(0)


def lce_case(name, x, w, t, b=None, cw=None, reduction="mean", ignore_index=None, ls=0.0):
    x = x.clone().requires_grad_(True)
    w = w.clone().requires_grad_(True)
    b = None if b is None else b.clone().requires_grad_(True)
    out = F.linear_cross_entropy(
        x, w, t, linear_bias=b, weight=cw, reduction=reduction, ignore_index=ignore_index, label_smoothing=ls
    )
    ramp = torch.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    (out * ramp).sum().backward()
    ii = "i64::MIN" if ignore_index is None else str(ignore_index)
    lines.append(
        f"    ({rust_str(name)}, {tensor_lit(x.detach())}, {tensor_lit(w.detach())}, {tensor_lit(t)},"
        f" {tensor_lit(NONE if b is None else b.detach())}, {tensor_lit(NONE if cw is None else cw)},"
        f" {rust_str(reduction)}, {ii}, {lit(ls)}, {tensor_lit(out.detach())}, {tensor_lit(x.grad)},"
        f" {tensor_lit(w.grad)}, {tensor_lit(NONE if b is None else b.grad)}),"
    )


X = torch.randn(4, 3)
W = torch.randn(5, 3)
B = torch.randn(5)
T_IDX = torch.tensor([0, 4, 2, 1])
CW = torch.rand(5) + 0.5
lce_case("mean", X, W, T_IDX)
lce_case("sum_bias", X, W, T_IDX, b=B, reduction="sum")
lce_case("none_weight", X, W, T_IDX, b=B, cw=CW, reduction="none")
lce_case("ignore_smoothing", X, W, torch.tensor([0, 3, 3, 1]), b=B, cw=CW, ignore_index=3, ls=0.2)
lce_case("probabilities", X, W, torch.softmax(torch.randn(4, 5), -1), b=B, ls=0.1)
lce_case("unbatched", torch.randn(3), W, torch.tensor(2), b=B)
lce_case("k_dim", X, torch.randn(5, 2, 3), torch.randint(0, 5, (4, 2)), b=torch.randn(5, 2), reduction="mean")
lines.append("];")
x = torch.randn(2, 3)
w = torch.randn(4, 3)
t = torch.tensor([1, 2])
lce_errors = [
    ("rank3", err(lambda: F.linear_cross_entropy(torch.randn(2, 2, 3), w, t))),
    ("weight1d", err(lambda: F.linear_cross_entropy(x, torch.randn(4), t))),
    ("in_features", err(lambda: F.linear_cross_entropy(x, torch.randn(4, 5), t))),
    ("bias", err(lambda: F.linear_cross_entropy(x, w, t, linear_bias=torch.randn(3)))),
    ("unbatched_k", err(lambda: F.linear_cross_entropy(torch.randn(3), torch.randn(4, 2, 3), t))),
    ("prob_ignore", err(lambda: F.linear_cross_entropy(x, w, torch.rand(2, 4), ignore_index=1))),
    ("acc_policy", err(lambda: torch.nn.LinearCrossEntropyOptions(acc_policy="x"))),
    ("chunking_method", err(lambda: torch.nn.LinearCrossEntropyOptions(chunking_method="foo"))),
    ("batch_chunk_size", err(lambda: torch.nn.LinearCrossEntropyOptions(batch_chunk_size=0))),
    ("module_weight", err(lambda: torch.nn.LinearCrossEntropyLoss(3, 4, weight=torch.ones(3)))),
    ("module_smoothing", err(lambda: torch.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5))),
]
lines.append("const LCE_ERRORS: &[(&str, &str)] = &[")
for k, v in lce_errors:
    lines.append(f"    ({rust_str(k)}, {rust_str(v)}),")
lines.append("];")
m = torch.nn.LinearCrossEntropyLoss(
    3, 4, out_features=(2,), bias=True, options=torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
)
lines.append(f"const LCE_MODULE_REPR: &str = {rust_str(repr(m))};")
lines.append(f"const LCE_MODULE_KEYS: &[&str] = &[{', '.join(rust_str(k) for k in m.state_dict().keys())}];")
xm = torch.randn(3, 3)
tm = torch.randint(0, 4, (3, 2))
lines.append(f"const LCE_MODULE_SD: &[(&str, T)] = {named(list(m.state_dict().items()))};")
lines.append(f"const LCE_MODULE_IO: (T, T, T) = ({tensor_lit(xm)}, {tensor_lit(tm)}, {tensor_lit(m(xm, tm).detach())});")

print(write_golden("muon_and_linear_cross_entropy_golden.rs", lines), "muon worst gap", worst)

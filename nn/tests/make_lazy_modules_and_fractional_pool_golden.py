"""Writes nn/tests/nn/lazy_modules_and_fractional_pool_golden.rs: torch's values for fractional max pooling,
AdaptiveLogSoftmaxWithLoss, the lazy modules and torch.func.functional_call, in float64 (one
fractional-pooling case in float32, whose window starts torch computes in float32).

Each tensor is one line `("name", &[dims], &[values])` (Python's `repr` of a float reads back
to the same f64; integer tensors are written as floats); torch's error messages are
`("name", "text")`. nn/tests/nn/lazy_modules_and_fractional_pool.rs makes the same calls by name. Gradients are those
of `(out * cot).sum()` for a random cotangent `cot`, so that a gradient routed to the wrong
window or row shows.

Run: /work/.refenv/bin/python nn/tests/make_lazy_modules_and_fractional_pool_golden.py (from the repository root).
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(31)
DT = torch.float64
TENSORS = []
MESSAGES = []


def put(name, t):
    t = t.detach()
    TENSORS.append((name, list(t.shape), [float(v) for v in t.reshape(-1).tolist()]))


def err(name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        MESSAGES.append((name, str(e)))
        return
    raise AssertionError(f"{name}: no error")


# --- fractional max pooling ---------------------------------------------------------------------
def fmp(name, n, shape, kernel, size=None, ratio=None, dtype=DT):
    x = torch.randn(*shape, dtype=dtype, requires_grad=True)
    batch = 1 if len(shape) == n + 1 else shape[0]
    channels = shape[-n - 1]
    samples = torch.rand(batch, channels, n, dtype=dtype)
    f = F.fractional_max_pool2d if n == 2 else F.fractional_max_pool3d
    out, idx = f(x, kernel, output_size=size, output_ratio=ratio, return_indices=True, _random_samples=samples)
    cot = torch.randn(out.shape, dtype=dtype)
    (out * cot).sum().backward()
    for k, v in [("x", x), ("samples", samples), ("out", out), ("idx", idx), ("cot", cot), ("grad", x.grad)]:
        put(f"{name}.{k}", v)


fmp("fmp2d_size", 2, (2, 3, 7, 9), (2, 3), size=(4, 5))
fmp("fmp2d_ratio", 2, (2, 8, 6), 2, ratio=(0.5, 0.7))
fmp("fmp2d_f32", 2, (2, 2, 9, 10), 3, size=(5, 6), dtype=torch.float32)
fmp("fmp3d_size", 3, (2, 2, 5, 6, 7), (2, 2, 3), size=(3, 4, 3))
fmp("fmp3d_ratio", 3, (2, 6, 5, 6), 2, ratio=0.5)

x4 = torch.randn(1, 1, 7, 9)
s4 = torch.rand(1, 1, 2)
err("fmp2d_too_large", lambda: F.fractional_max_pool2d(x4, (2, 3), output_size=(7, 5), _random_samples=s4))
err("fmp2d_channels", lambda: F.fractional_max_pool2d(x4, 2, output_size=3, _random_samples=torch.rand(1, 2, 2)))
err("fmp2d_dtype", lambda: F.fractional_max_pool2d(x4, 2, output_size=3, _random_samples=s4.double()))
err("fmp2d_rank", lambda: F.fractional_max_pool2d(torch.randn(2, 2, 1, 7, 9), 2, output_size=3,
                                                  _random_samples=torch.rand(2, 2, 2)))
err("fmp2d_empty", lambda: F.fractional_max_pool2d(torch.randn(2, 1, 0, 4), 2, output_size=(1, 1)))
err("fmp2d_none", lambda: F.fractional_max_pool2d(x4, 2))
err("fmp3d_too_large", lambda: F.fractional_max_pool3d(torch.randn(1, 1, 4, 4, 4), 2, output_size=(3, 2, 2),
                                                       _random_samples=torch.rand(1, 1, 3)))
err("FractionalMaxPool2d_ratio", lambda: nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.5)))
err("FractionalMaxPool2d_none", lambda: nn.FractionalMaxPool2d(2))
err("FractionalMaxPool2d_both", lambda: nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5))

# --- AdaptiveLogSoftmaxWithLoss -----------------------------------------------------------------
for tag, head_bias in [("asm", False), ("asm_hb", True)]:
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12], div_value=2.0, head_bias=head_bias).double()
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(3.0)  # sharper distributions, so that predict takes each of its paths
    for k, v in m.state_dict().items():
        put(f"{tag}.sd.{k}", v)
    x = torch.randn(10, 8, dtype=DT, requires_grad=True)
    target = torch.tensor([0, 3, 7, 19, 12, 5, 4, 15, 11, 2])
    out, loss = m(x, target)
    cot = torch.randn(10, dtype=DT)
    ((out * cot).sum() + loss).backward()
    put(f"{tag}.x", x)
    put(f"{tag}.target", target)
    put(f"{tag}.out", out)
    put(f"{tag}.loss", loss)
    put(f"{tag}.cot", cot)
    put(f"{tag}.grad.x", x.grad)
    for k, p in m.named_parameters():
        put(f"{tag}.grad.{k}", p.grad)
    x.grad = None
    lp = m.log_prob(x)
    cot2 = torch.randn(lp.shape, dtype=DT)
    (lp * cot2).sum().backward()
    put(f"{tag}.log_prob", lp)
    put(f"{tag}.cot2", cot2)
    put(f"{tag}.log_prob_grad.x", x.grad)
    xp = torch.randn(12, 8, dtype=DT)
    put(f"{tag}.xp", xp)
    put(f"{tag}.predict", m.predict(xp))
    put(f"{tag}.predict_lp", m.log_prob(xp).argmax(1))
    o1, l1 = m(x[3].detach(), target[3])
    put(f"{tag}.out1", o1)
    put(f"{tag}.loss1", l1)

m = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 12], div_value=2.0)
err("asm_cutoffs_empty", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 20, []))
err("asm_cutoffs_order", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 20, [12, 5]))
err("asm_cutoffs_range", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 20]))
err("asm_target_range", lambda: m(torch.randn(3, 8), torch.tensor([0, 20, -1])))
err("asm_batch", lambda: m(torch.randn(3, 8), torch.tensor([0, 1])))
err("asm_input_rank", lambda: m(torch.randn(3, 8, 1), torch.tensor([0, 1, 2])))
err("asm_input_rank0", lambda: m(torch.randn(3, 8), torch.tensor(1)))
err("asm_target_rank", lambda: m(torch.randn(3, 8), torch.zeros(3, 1, dtype=torch.long)))


# --- lazy modules -------------------------------------------------------------------------------
def lazy(name, mod, x):
    put(f"{name}.x", x)
    out = mod(x)
    put(f"{name}.out", out)
    for k, v in mod.state_dict().items():
        put(f"{name}.sd.{k}", v)


torch.set_default_dtype(torch.float64)
lazy("lazy_linear", nn.LazyLinear(5), torch.randn(3, 4))
lazy("lazy_conv2d", nn.LazyConv2d(4, 3, padding=1), torch.randn(2, 3, 5, 5))
lazy("lazy_conv3d", nn.LazyConv3d(2, 2), torch.randn(1, 2, 3, 4, 4))
lazy("lazy_convt1d", nn.LazyConvTranspose1d(3, 2, stride=2), torch.randn(2, 4, 5))
lazy("lazy_bn1d", nn.LazyBatchNorm1d(), torch.randn(6, 4))
lazy("lazy_in2d", nn.LazyInstanceNorm2d(affine=True, track_running_stats=True), torch.randn(2, 3, 4, 4))
err("lazy_conv2d_rank", lambda: nn.LazyConv2d(4, 3)(torch.randn(3, 5)))
torch.set_default_dtype(torch.float32)

# --- functional_call ----------------------------------------------------------------------------
mlp = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).double()
for k, v in mlp.state_dict().items():
    put(f"fc.own.{k}", v)
params = {k: torch.randn(v.shape, dtype=DT, requires_grad=True) for k, v in mlp.named_parameters()}
for k, v in params.items():
    put(f"fc.p.{k}", v)
x = torch.randn(5, 4, dtype=DT, requires_grad=True)
out = functional_call(mlp, params, (x,))
cot = torch.randn(out.shape, dtype=DT)
(out * cot).sum().backward()
put("fc.x", x)
put("fc.out", out)
put("fc.cot", cot)
put("fc.grad.x", x.grad)
for k, v in params.items():
    put(f"fc.grad.{k}", v.grad)
partial = {k: params[k] for k in ["2.weight", "2.bias"]}
put("fc.out_partial", functional_call(mlp, partial, (x,)))
err("fc_strict_missing", lambda: functional_call(mlp, partial, (x,), strict=True))
err("fc_strict_unexpected", lambda: functional_call(mlp, {**params, "3.weight": x}, (x,), strict=True))


# --- writing ------------------------------------------------------------------------------------
def lit(v):
    if v != v:
        return "f64::NAN"
    if v in (float("inf"), float("-inf")):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = repr(v)
    return r if ("." in r or "e" in r) else r + ".0"


lines = [
    f"// @generated by nn/tests/make_lazy_modules_and_fractional_pool_golden.py from torch {torch.__version__} (CPU); do not edit.",
    "",
    "/// `(name, dims, row-major values)`: torch's tensors (integer ones written as floats).",
    "#[allow(clippy::approx_constant, clippy::excessive_precision, clippy::unreadable_literal)]",
    "const TENSORS: &[(&str, &[usize], &[f64])] = &[",
]
for name, dims, data in TENSORS:
    lines.append(f'    ("{name}", &{dims}, &[{", ".join(lit(v) for v in data)}]),')
lines.append("];")
lines.append("")
lines.append("/// `(name, message)`: torch's error messages.")
lines.append("const MESSAGES: &[(&str, &str)] = &[")
for name, msg in MESSAGES:
    esc = msg.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    lines.append(f'    ("{name}", "{esc}"),')
lines.append("];")

path = os.path.join(os.path.dirname(__file__), "nn", "lazy_modules_and_fractional_pool_golden.rs")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
print(path, os.path.getsize(path), "bytes,", len(TENSORS), "tensors,", len(MESSAGES), "messages")

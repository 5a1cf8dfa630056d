"""Writes nn/tests/nn/nn_tier3_golden.rs: torch's values and gradients, in float64, for
lp_pool1d/2d/3d, Softmax2d, UpsamplingNearest2d, UpsamplingBilinear2d, the in-place functional
activations (relu_, elu_, leaky_relu_, hardtanh_, selu_, celu_, threshold_, rrelu_ in evaluation),
nn.utils.get_total_norm and clip_grads_with_norm_, and nn.utils.fusion's fused weights.

As make_embedding_bag_shuffle_dropout_golden.py: each case gives its inputs, `out = op(...)` and, for the inputs
marked as differentiated, their gradients after `(out * c).sum().backward()` with
`c = 1, 2, 3, ...` over out's elements in row-major order. nn/tests/nn/nn_tier3.rs makes the same
calls by case name. The in-place cases apply the op to `input * 1` (a non-leaf), as torch refuses
an in-place op on a leaf that requires grad. The clip cases give each input as a gradient of a
parameter and `out` is the clipped gradients, flattened and concatenated. The fusion cases return
the fused weight (`*_w`) or bias (`*_b`).

Run: /work/.refenv/bin/python nn/tests/make_nn_tier3_golden.py (from the repository root).
"""

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(3)
DT = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


def pos(*shape):
    return torch.rand(*shape, dtype=DT) + 0.1


CASES = []


def case(name, inputs, grads, call):
    CASES.append((name, inputs, grads, call))


# --- lp_pool ---------------------------------------------------------------------------------------
X1 = randn(2, 3, 9)
case("lp1_p2_k3_s2", {"input": X1}, ["input"], lambda t: F.lp_pool1d(t["input"], 2, 3, 2))
case("lp1_p1p5_k2", {"input": pos(2, 3, 8)}, ["input"], lambda t: F.lp_pool1d(t["input"], 1.5, 2))
case("lp1_p2_k3_ceil", {"input": X1}, ["input"], lambda t: F.lp_pool1d(t["input"], 2, 3, 2, ceil_mode=True))
case("lp1_inf_k3", {"input": X1}, ["input"], lambda t: F.lp_pool1d(t["input"], float("inf"), 3))
X2 = randn(2, 2, 6, 7)
case("lp2_p2_k23_s12", {"input": X2}, ["input"], lambda t: F.lp_pool2d(t["input"], 2, (2, 3), (1, 2)))
case("lp2_p3_k2_pos", {"input": pos(1, 2, 4, 6)}, ["input"], lambda t: F.lp_pool2d(t["input"], 3, 2))
case("lp2_p2_k3_unbatched_ceil", {"input": randn(3, 5, 5)}, ["input"],
     lambda t: F.lp_pool2d(t["input"], 2, 3, 2, ceil_mode=True))
case("lp2_neginf_k2", {"input": X2}, ["input"], lambda t: F.lp_pool2d(t["input"], float("-inf"), 2))
case("lp3_p2_k2", {"input": randn(1, 2, 4, 4, 5)}, ["input"], lambda t: F.lp_pool3d(t["input"], 2, 2))
case("lp3_p1p5_k232_s1", {"input": pos(1, 1, 3, 4, 3)}, ["input"],
     lambda t: F.lp_pool3d(t["input"], 1.5, (2, 3, 2), 1))
case("lppool2d_module", {"input": X2}, ["input"], lambda t: nn.LPPool2d(2, (3, 2), stride=2)(t["input"]))

# --- Softmax2d and the Upsample aliases ------------------------------------------------------------
case("softmax2d_4d", {"input": randn(2, 3, 2, 2)}, ["input"], lambda t: nn.Softmax2d()(t["input"]))
case("softmax2d_3d", {"input": randn(4, 2, 3)}, ["input"], lambda t: nn.Softmax2d()(t["input"]))
XU = randn(1, 2, 3, 4)
case("up_nearest_scale2", {"input": XU}, ["input"], lambda t: nn.UpsamplingNearest2d(scale_factor=2)(t["input"]))
case("up_nearest_size57", {"input": XU}, ["input"], lambda t: nn.UpsamplingNearest2d(size=(5, 7))(t["input"]))
case("up_bilinear_scale2", {"input": XU}, ["input"], lambda t: nn.UpsamplingBilinear2d(scale_factor=2)(t["input"]))
case("up_bilinear_size53", {"input": XU}, ["input"], lambda t: nn.UpsamplingBilinear2d(size=(5, 3))(t["input"]))


# --- in-place functional activations ---------------------------------------------------------------
def inplace(op):
    def call(t):
        y = t["input"] * 1
        r = op(y)
        assert r is y
        return y
    return call


XA = randn(3, 5) * 2
case("relu_", {"input": XA}, ["input"], inplace(F.relu_))
case("elu_", {"input": XA}, ["input"], inplace(lambda y: F.elu_(y, 0.7)))
case("leaky_relu_", {"input": XA}, ["input"], inplace(lambda y: F.leaky_relu_(y, 0.2)))
case("hardtanh_", {"input": XA}, ["input"], inplace(lambda y: F.hardtanh_(y, -0.5, 0.8)))
case("selu_", {"input": XA}, ["input"], inplace(F.selu_))
case("celu_", {"input": XA}, ["input"], inplace(lambda y: F.celu_(y, 1.3)))
case("threshold_", {"input": XA}, ["input"], inplace(lambda y: F.threshold_(y, 0.1, -2.0)))
case("rrelu_eval", {"input": XA}, ["input"], inplace(lambda y: F.rrelu_(y, 0.1, 0.3, False)))

# --- get_total_norm (torch's records no history) and clip_grads_with_norm_ -------------------------
GA, GB = randn(3, 4), randn(5)
for tag, p in [("p2", 2.0), ("p1", 1.0), ("p3", 3.0), ("inf", float("inf"))]:
    case(f"total_norm_{tag}", {"a": GA, "b": GB}, [],
         lambda t, p=p: nn.utils.get_total_norm([t["a"], t["b"]], p))


def clip(max_norm, norm_type):
    def call(t):
        ps = [torch.zeros_like(t["a"], requires_grad=True), torch.zeros_like(t["b"], requires_grad=True)]
        for q, g in zip(ps, [t["a"], t["b"]]):
            q.grad = g.detach().clone()
        total = nn.utils.get_total_norm([q.grad for q in ps], norm_type)
        nn.utils.clip_grads_with_norm_(ps, max_norm, total)
        return torch.cat([q.grad.flatten() for q in ps])
    return call


case("clip_with_norm_1", {"a": GA, "b": GB}, [], clip(1.0, 2.0))
case("clip_with_norm_p1_2", {"a": GA, "b": GB}, [], clip(2.0, 1.0))
case("clip_with_norm_large", {"a": GA, "b": GB}, [], clip(100.0, 2.0))

# --- fusion ----------------------------------------------------------------------------------------
BN = {"bn_rm": randn(4), "bn_rv": pos(4) + 0.5, "bn_w": randn(4), "bn_b": randn(4)}
CONV = {"conv_w": randn(4, 3, 3, 3), "conv_b": randn(4), **BN}
EPS = 1e-3


def fuse_conv(part, bias=True, transpose=False):
    def call(t):
        w, b = nn.utils.fuse_conv_bn_weights(
            t["conv_w"], t["conv_b"] if bias else None, t["bn_rm"], t["bn_rv"], EPS, t["bn_w"], t["bn_b"],
            transpose)
        return (w if part == "w" else b).detach()
    return call


case("fuse_conv_w", CONV, [], fuse_conv("w"))
case("fuse_conv_b", CONV, [], fuse_conv("b"))
case("fuse_conv_nobias_b", CONV, [], fuse_conv("b", bias=False))
CONVT = {"conv_w": randn(3, 4, 2, 2), "conv_b": randn(4), **BN}
case("fuse_convt_w", CONVT, [], fuse_conv("w", transpose=True))
LIN = {"linear_w": randn(4, 6), "linear_b": randn(4), **BN}


def fuse_lin(part, bias=True):
    def call(t):
        w, b = nn.utils.fuse_linear_bn_weights(
            t["linear_w"], t["linear_b"] if bias else None, t["bn_rm"], t["bn_rv"], EPS, t["bn_w"], t["bn_b"])
        return (w if part == "w" else b).detach()
    return call


case("fuse_linear_w", LIN, [], fuse_lin("w"))
case("fuse_linear_b", LIN, [], fuse_lin("b"))
case("fuse_linear_nobias_b", LIN, [], fuse_lin("b", bias=False))

# The module forms: bn(conv(x)) in evaluation equals the fused conv's output (checked here against
# the fused module's, and written as the output of the Rust call).
def fused_conv_module(t):
    conv = nn.Conv2d(3, 4, 3, padding=1).double()
    bn = nn.BatchNorm2d(4, eps=EPS).double()
    with torch.no_grad():
        conv.weight.copy_(t["conv_w"]); conv.bias.copy_(t["conv_b"])
        bn.running_mean.copy_(t["bn_rm"]); bn.running_var.copy_(t["bn_rv"])
        bn.weight.copy_(t["bn_w"]); bn.bias.copy_(t["bn_b"])
    conv.eval(); bn.eval()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    want = bn(conv(t["x"]))
    got = fused(t["x"])
    assert torch.allclose(got, want, rtol=1e-12, atol=1e-12)
    return got.detach()


case("fuse_conv_eval_forward", {**CONV, "x": randn(2, 3, 5, 5)}, [], fused_conv_module)


lines = [
    generated_header("make_nn_tier3_golden.py"),
    "",
    "/// One golden case: its inputs, torch's output, and the gradients of `(out * c).sum()`",
    "/// (`c = 1, 2, 3, ...`) for the differentiated inputs.",
    "// (torch's values, some of which may happen to equal named constants)",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
for name, inputs, grads, call in CASES:
    for k, v in inputs.items():
        assert v.dtype == DT, (name, k)
    leaves = {k: v.detach().clone().requires_grad_(k in grads) for k, v in inputs.items()}
    out = call(leaves)
    if grads:
        c = torch.arange(1, out.numel() + 1, dtype=DT).reshape(out.shape)
        (out * c).sum().backward()
    lines.append("    Golden {")
    lines.append(f'        name: "{name}",')
    lines.append("        inputs: &[")
    for k, v in inputs.items():
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append(f"        out: {tensor_lit(out)},")
    lines.append("        grads: &[")
    for k in grads:
        g = leaves[k].grad
        if g is None:
            g = torch.zeros_like(leaves[k])
        lines.append(f'            ("{k}", {tensor_lit(g)}),')
    lines.append("        ],")
    lines.append("    },")
    shown = out.detach().flatten().tolist()
    print(f"{name:28s} {list(out.shape)} out[:3]={[round(v, 6) for v in shown[:3]]}")
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("nn_tier3_golden.rs", lines)
print(f"wrote {len(CASES)} cases to {path}")

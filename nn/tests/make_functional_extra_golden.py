"""Writes nn/tests/nn/functional_extra_golden.rs: torch's values and gradients for the functional ops
normalize, cosine_similarity, softmin, hardshrink, softshrink, tanhshrink, threshold, logsigmoid,
softsign, rrelu (eval), prelu, local_response_norm and instance_norm, in float64.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). Each case gives its
inputs, `out = op(...)` and, for the inputs marked as differentiated, their gradients after
`out.sum().backward()`. nn/tests/nn/functional_extra.rs makes the same calls by case name.

The inputs hold the points torch treats specially: the shrinks at exactly +-lambd and 0, threshold
at exactly the threshold, logsigmoid at 0 and at large |x|, softsign at 0, normalize's zero rows
and rows with 0 < norm < eps, a zero vector for cosine_similarity. Points where the gradient is
undefined and torch's choice is arbitrary (rrelu and prelu at 0, a p=1 norm at a zero element of a
row that is not clamped) are left out.

Run: /work/.refenv/bin/python nn/tests/make_functional_extra_golden.py (from the repository root).
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(0)
DT = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


def f64(values):
    return torch.tensor(values, dtype=DT)


# Each case: name -> (inputs {name: tensor}, names of differentiated inputs, call).
CASES = []


def case(name, inputs, grads, call):
    CASES.append((name, inputs, grads, call))


# --- normalize(input, p, dim, eps) -------------------------------------------------------------
# Row 1 is zero: out 0, gradient 1/eps (the clamped norm passes none).
n2 = randn(3, 4)
n2[1] = 0.0
n2[2, 1] = 0.0  # a zero element of an unclamped row: the 2-norm's gradient is defined there
case("normalize_p2_dim1", {"input": n2}, ["input"], lambda t: F.normalize(t["input"], 2.0, 1, 1e-12))
# eps = 0.5: row [0][1] has 0 < norm < eps, row [1][0] is zero, the others are above eps.
n2e = randn(2, 3, 3)
n2e[0, 1] = f64([0.1, -0.2, 0.05])
n2e[1, 0] = 0.0
case("normalize_p2_eps_dim_neg1", {"input": n2e}, ["input"], lambda t: F.normalize(t["input"], 2.0, -1, 0.5))
n1 = randn(3, 4)
n1[0] = 0.0
case("normalize_p1_dim1", {"input": n1}, ["input"], lambda t: F.normalize(t["input"], 1.0, 1, 1e-12))
n1e = randn(2, 3, 3)
n1e[1, 2] = f64([0.1, -0.15, 0.05])  # 1-norm 0.3 < eps
n1e[0, 0] = 0.0
case("normalize_p1_eps_dim_neg1", {"input": n1e}, ["input"], lambda t: F.normalize(t["input"], 1.0, -1, 0.5))
case("normalize_p3_dim0", {"input": randn(3, 2)}, ["input"], lambda t: F.normalize(t["input"], 3.0, 0, 1e-12))

# --- cosine_similarity(x1, x2, dim, eps) -------------------------------------------------------
# A zero vector: its norm is clamped to eps (torch clamps without autograd and the norm's own
# gradient at 0 is 0), so out is 0 and its gradient is x2 / (eps |x2|).
c1 = randn(3, 4)
c1[1] = 0.0
case("cosine_bcast_dim_neg1", {"x1": c1, "x2": randn(1, 4)}, ["x1", "x2"],
     lambda t: F.cosine_similarity(t["x1"], t["x2"], -1, 1e-8))
c0 = randn(3, 4)
c0[:, 2] = 0.0
case("cosine_bcast_dim0", {"x1": c0, "x2": randn(1, 4)}, ["x1", "x2"],
     lambda t: F.cosine_similarity(t["x1"], t["x2"], 0, 1e-8))
case("cosine_rank_bcast_dim1", {"x1": randn(2, 3, 4), "x2": randn(3, 1)}, ["x1", "x2"],
     lambda t: F.cosine_similarity(t["x1"], t["x2"], 1, 1e-8))

# --- softmin(input, dim) -----------------------------------------------------------------------
case("softmin_dim0", {"input": randn(3, 4)}, ["input"], lambda t: F.softmin(t["input"], 0))
sm = randn(2, 3, 4)
sm[1, 2] = f64([800.0, -800.0, 0.0, 1.0])  # stable: exp(800) overflows
case("softmin_dim_neg1", {"input": sm}, ["input"], lambda t: F.softmin(t["input"], -1))

# --- hardshrink / softshrink (lambd) -----------------------------------------------------------
# At exactly +-lambd the value is 0 and so is the gradient (torch: |x| <= lambd gives 0).
shrink_half = f64([[-1.5, -0.5, -0.3, 0.0], [0.3, 0.5, 0.7, 2.0]])
shrink_one = f64([[-3.0, -1.0, -0.999, 0.0, 0.25], [1.0, 1.001, 2.5, -0.25, 1.75]])
shrink_quarter = f64([-1.0, -0.25, -0.1, 0.0, 0.1, 0.25, 0.2500001, 4.0])
case("hardshrink_default", {"input": shrink_half}, ["input"], lambda t: F.hardshrink(t["input"], 0.5))
case("hardshrink_lambd1", {"input": shrink_one}, ["input"], lambda t: F.hardshrink(t["input"], 1.0))
case("hardshrink_lambd0_25", {"input": shrink_quarter}, ["input"], lambda t: F.hardshrink(t["input"], 0.25))
case("softshrink_default", {"input": shrink_half}, ["input"], lambda t: F.softshrink(t["input"], 0.5))
case("softshrink_lambd1", {"input": shrink_one}, ["input"], lambda t: F.softshrink(t["input"], 1.0))
case("softshrink_lambd0_25", {"input": shrink_quarter}, ["input"], lambda t: F.softshrink(t["input"], 0.25))

# --- tanhshrink, logsigmoid, softsign ----------------------------------------------------------
case("tanhshrink", {"input": f64([[-20.0, -3.0, -0.5, 0.0], [1e-4, 0.5, 3.0, 20.0]])}, ["input"],
     lambda t: F.tanhshrink(t["input"]))
# Large |x|: logsigmoid(-750) = -750 (a naive log(1 + exp(750)) overflows), logsigmoid(40) ~ -4e-18.
case("logsigmoid", {"input": f64([[-750.0, -40.0, -3.0, -0.5, 0.0], [0.5, 3.0, 40.0, 750.0, 1e-3]])},
     ["input"], lambda t: F.logsigmoid(t["input"]))
case("softsign", {"input": f64([[-100.0, -5.0, -1.0, -0.25], [0.0, 0.25, 1.0, 5.0]])}, ["input"],
     lambda t: F.softsign(t["input"]))

# --- threshold(input, threshold, value) --------------------------------------------------------
# At exactly the threshold: out = value, gradient 0 (torch keeps only x > threshold).
case("threshold_half_to_neg2", {"input": f64([[-1.0, 0.0, 0.5], [0.5000001, 0.49, 3.0]])}, ["input"],
     lambda t: F.threshold(t["input"], 0.5, -2.0))
case("threshold_neg1_to_0", {"input": f64([-3.0, -1.0, -0.999, 0.0, 2.0, -1.0])}, ["input"],
     lambda t: F.threshold(t["input"], -1.0, 0.0))

# --- rrelu(input, lower, upper, training=False): leaky_relu with slope (lower + upper) / 2 -------
rr = f64([[-2.0, -0.75, -1e-3, 0.5], [1.5, -4.0, 3.0, -0.1]])
case("rrelu_eval_default", {"input": rr}, ["input"],
     lambda t: F.rrelu(t["input"], 1.0 / 8.0, 1.0 / 3.0, False))
case("rrelu_eval_0_1_0_9", {"input": randn(2, 3, 2)}, ["input"],
     lambda t: F.rrelu(t["input"], 0.1, 0.9, False))

# --- prelu(input, weight): channel dim 1; a 1-element weight is shared --------------------------
case("prelu_1d_one_weight", {"input": randn(5), "weight": f64([0.25])}, ["input", "weight"],
     lambda t: F.prelu(t["input"], t["weight"]))
case("prelu_2d_one_weight", {"input": randn(3, 4), "weight": f64([-0.3])}, ["input", "weight"],
     lambda t: F.prelu(t["input"], t["weight"]))
case("prelu_2d_channel", {"input": randn(3, 4), "weight": f64([0.25, -0.5, 1.5, 0.0])}, ["input", "weight"],
     lambda t: F.prelu(t["input"], t["weight"]))
case("prelu_3d_channel", {"input": randn(2, 3, 4), "weight": f64([0.1, 0.2, -0.7])}, ["input", "weight"],
     lambda t: F.prelu(t["input"], t["weight"]))
case("prelu_4d_channel", {"input": randn(2, 3, 2, 2), "weight": f64([0.6, -0.2, 0.05])}, ["input", "weight"],
     lambda t: F.prelu(t["input"], t["weight"]))
case("prelu_4d_one_weight", {"input": randn(2, 3, 2, 2), "weight": f64([0.4])}, ["input", "weight"],
     lambda t: F.prelu(t["input"], t["weight"]))

# --- local_response_norm(input, size, alpha, beta, k) ------------------------------------------
# Windows over channels, zero-padded size // 2 before and (size - 1) // 2 after, averaged over size.
lrn3 = randn(2, 5, 3)
lrn4 = randn(1, 4, 3, 3)


def lrn(size, alpha, beta, k):
    return lambda t: F.local_response_norm(t["input"], size, alpha, beta, k)


case("lrn_3d_size3", {"input": lrn3}, ["input"], lrn(3, 0.9, 0.75, 1.0))
case("lrn_3d_size2", {"input": lrn3}, ["input"], lrn(2, 0.5, 0.6, 2.0))
case("lrn_3d_size3_defaults", {"input": lrn3}, ["input"], lrn(3, 1e-4, 0.75, 1.0))
case("lrn_4d_size3", {"input": lrn4}, ["input"], lrn(3, 0.9, 0.75, 1.0))
case("lrn_4d_size2", {"input": lrn4}, ["input"], lrn(2, 0.5, 0.6, 2.0))
# A window wider than the channels.
case("lrn_3d_size5_of_3", {"input": randn(2, 3, 2)}, ["input"], lrn(5, 0.7, 0.8, 1.5))

# --- instance_norm(input, None, None, weight, bias, use_input_stats=True, momentum, eps) -------
in3 = randn(2, 3, 5)
in4 = randn(2, 3, 2, 2)
aff = {"weight": f64([0.5, -1.25, 2.0]), "bias": f64([0.1, 0.0, -0.3])}
case("instance_norm_3d", {"input": in3}, ["input"],
     lambda t: F.instance_norm(t["input"], None, None, None, None, True, 0.1, 1e-5))
case("instance_norm_3d_affine", {"input": in3, **aff}, ["input", "weight", "bias"],
     lambda t: F.instance_norm(t["input"], None, None, t["weight"], t["bias"], True, 0.1, 1e-5))
case("instance_norm_4d", {"input": in4}, ["input"],
     lambda t: F.instance_norm(t["input"], None, None, None, None, True, 0.1, 1e-5))
case("instance_norm_4d_affine", {"input": in4, **aff}, ["input", "weight", "bias"],
     lambda t: F.instance_norm(t["input"], None, None, t["weight"], t["bias"], True, 0.1, 1e-5))
case("instance_norm_3d_weight_eps", {"input": in3, "weight": aff["weight"]}, ["input", "weight"],
     lambda t: F.instance_norm(t["input"], None, None, t["weight"], None, True, 0.1, 0.5))


lines = [
    generated_header("make_functional_extra_golden.py"),
    "",
    "/// One golden case: its inputs, torch's output, and the gradients of `out.sum()` for the",
    "/// differentiated inputs.",
    "// (torch's values, some of which happen to equal named constants such as ln 2)",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
for name, inputs, grads, call in CASES:
    assert all(v.dtype == DT for v in inputs.values()), name
    leaves = {k: v.detach().clone().requires_grad_(k in grads) for k, v in inputs.items()}
    out = call(leaves)
    out.sum().backward()
    lines.append("    Golden {")
    lines.append(f'        name: "{name}",')
    lines.append("        inputs: &[")
    for k, v in inputs.items():
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append(f"        out: {tensor_lit(out)},")
    lines.append("        grads: &[")
    for k in grads:
        lines.append(f'            ("{k}", {tensor_lit(leaves[k].grad)}),')
    lines.append("        ],")
    lines.append("    },")
    shown = out.detach().flatten().tolist()
    print(f"{name:32s} out[:4]={[round(v, 6) for v in shown[:4]]}")
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("functional_extra_golden.rs", lines)
print(f"wrote {len(CASES)} cases to {path}")

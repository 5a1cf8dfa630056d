"""Writes nn/tests/nn/loss_extra_golden.rs: torch's values and input gradients for the losses in
nn/src/loss/extra.rs (poisson_nll_loss, gaussian_nll_loss, triplet_margin_loss,
triplet_margin_with_distance_loss, hinge_embedding_loss, soft_margin_loss,
multilabel_soft_margin_loss, multi_margin_loss, multilabel_margin_loss), in float64.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). Each case gives its
inputs, `out = loss(...)` and, for the inputs marked as differentiated, their gradients after
`out.sum().backward()`. nn/tests/nn/losses_extra.rs makes the same calls by case name.

Run: /work/.refenv/bin/python nn/tests/make_loss_extra_golden.py (from the repository root).
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


def i64(values):
    return torch.tensor(values, dtype=torch.int64)


# Each case: name -> (inputs {name: tensor}, names of differentiated inputs, call).
CASES = []


def case(name, inputs, grads, call):
    CASES.append((name, inputs, grads, call))


# --- poisson_nll_loss(input, target, log_input, full, eps, reduction) --------------------------
log_rate = f64([[0.3, -1.2, 0.8], [1.5, -0.4, 0.0]])
counts = f64([[0.0, 1.0, 2.0], [3.0, 0.5, 5.0]])
counts_pos = f64([[0.25, 1.0, 2.0], [3.0, 0.5, 5.0]])
rate = f64([[0.7, 2.5, 0.0], [1.3, 4.0, 0.05]])
case("poisson_log_mean", {"input": log_rate, "target": counts}, ["input"],
     lambda t: F.poisson_nll_loss(t["input"], t["target"], True, False, eps=1e-8, reduction="mean"))
case("poisson_log_full_sum", {"input": log_rate, "target": counts_pos}, ["input", "target"],
     lambda t: F.poisson_nll_loss(t["input"], t["target"], True, True, eps=1e-8, reduction="sum"))
case("poisson_rate_none", {"input": rate, "target": counts}, ["input"],
     lambda t: F.poisson_nll_loss(t["input"], t["target"], False, False, eps=1e-8, reduction="none"))
case("poisson_rate_full_eps_mean", {"input": rate, "target": counts}, ["input"],
     lambda t: F.poisson_nll_loss(t["input"], t["target"], False, True, eps=0.1, reduction="mean"))

# --- gaussian_nll_loss(input, target, var, full, eps, reduction) -------------------------------
g_in, g_tg = randn(3, 2), randn(3, 2)
case("gaussian_hetero_mean",
     {"input": g_in, "target": g_tg, "var": f64([[0.5, 1e-8], [2.0, 0.3], [0.0, 1.7]])},
     ["input", "target", "var"],
     lambda t: F.gaussian_nll_loss(t["input"], t["target"], t["var"], full=False, eps=1e-6, reduction="mean"))
case("gaussian_short_var_full_sum", {"input": g_in, "target": g_tg, "var": f64([0.4, 1.1, 2.5])},
     ["input", "var"],
     lambda t: F.gaussian_nll_loss(t["input"], t["target"], t["var"], full=True, eps=1e-6, reduction="sum"))
case("gaussian_bcast_var_eps_none", {"input": g_in, "target": g_tg, "var": f64([[0.2], [0.9], [0.45]])},
     ["input", "var"],
     lambda t: F.gaussian_nll_loss(t["input"], t["target"], t["var"], full=False, eps=0.5, reduction="none"))
case("gaussian_scalar_var_mean", {"input": g_in, "target": g_tg}, ["input"],
     lambda t: F.gaussian_nll_loss(t["input"], t["target"], 0.7, full=True, eps=1e-6, reduction="mean"))

# --- triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction) ----------
a, p, n = randn(4, 3), randn(4, 3), randn(4, 3)
trip = {"anchor": a, "positive": p, "negative": n}
tg = ["anchor", "positive", "negative"]
case("triplet_default_mean", trip, tg,
     lambda t: F.triplet_margin_loss(t["anchor"], t["positive"], t["negative"], 1.0, 2.0, 1e-6, False, reduction="mean"))
case("triplet_p1_swap_sum", trip, tg,
     lambda t: F.triplet_margin_loss(t["anchor"], t["positive"], t["negative"], 0.5, 1.0, 1e-6, True, reduction="sum"))
case("triplet_p3_eps_none", trip, tg,
     lambda t: F.triplet_margin_loss(t["anchor"], t["positive"], t["negative"], 2.0, 3.0, 1e-3, False, reduction="none"))
case("triplet_unbatched_swap_mean", {"anchor": randn(5), "positive": randn(5), "negative": randn(5)}, tg,
     lambda t: F.triplet_margin_loss(t["anchor"], t["positive"], t["negative"], 3.0, 2.0, 1e-6, True, reduction="mean"))
# triplet_margin_with_distance_loss: torch's default distance, and a squared-L2 one.
case("triplet_distance_default_mean", trip, tg,
     lambda t: F.triplet_margin_with_distance_loss(t["anchor"], t["positive"], t["negative"], margin=1.0,
                                                   swap=False, reduction="mean"))
case("triplet_distance_sq_swap_none", trip, tg,
     lambda t: F.triplet_margin_with_distance_loss(
         t["anchor"], t["positive"], t["negative"], distance_function=lambda x, y: (x - y).pow(2).sum(-1),
         margin=1.5, swap=True, reduction="none"))

# --- hinge_embedding_loss(input, target, margin, reduction) -----------------------------------
h_in = f64([[0.3, -0.7, 1.9], [2.4, 0.05, -1.1]])
case("hinge_mean", {"input": h_in, "target": f64([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0]])}, ["input"],
     lambda t: F.hinge_embedding_loss(t["input"], t["target"], 1.0, reduction="mean"))
# A target that is neither 1 nor -1 gets both terms, as in torch.
case("hinge_margin_other_target_sum", {"input": h_in, "target": f64([[1.0, 0.0, -1.0], [-1.0, 2.0, 1.0]])},
     ["input"], lambda t: F.hinge_embedding_loss(t["input"], t["target"], 2.5, reduction="sum"))
case("hinge_none", {"input": h_in, "target": f64([-1.0, 1.0, -1.0])}, ["input"],
     lambda t: F.hinge_embedding_loss(t["input"], t["target"], 0.5, reduction="none"))

# --- soft_margin_loss(input, target, reduction) -----------------------------------------------
s_in, s_tg = randn(2, 3), f64([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])
for r in ["mean", "sum", "none"]:
    case(f"soft_margin_{r}", {"input": s_in, "target": s_tg}, ["input"],
         lambda t, r=r: F.soft_margin_loss(t["input"], t["target"], reduction=r))

# --- multilabel_soft_margin_loss(input, target, weight, reduction) -----------------------------
ms_in = randn(3, 4)
ms_in[1, 2] = 0.0  # logsigmoid's gradient at 0 is 1/2
ms_tg = f64([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
case("multilabel_soft_margin_mean", {"input": ms_in, "target": ms_tg}, ["input"],
     lambda t: F.multilabel_soft_margin_loss(t["input"], t["target"], None, reduction="mean"))
case("multilabel_soft_margin_weight_sum", {"input": ms_in, "target": ms_tg, "weight": f64([0.5, 2.0, 1.0, 0.25])},
     ["input"], lambda t: F.multilabel_soft_margin_loss(t["input"], t["target"], t["weight"], reduction="sum"))
case("multilabel_soft_margin_soft_none",
     {"input": ms_in, "target": f64([[0.2, 0.9, 0.5, 0.0], [1.0, 0.3, 0.7, 0.1], [0.6, 0.4, 0.8, 1.0]])},
     ["input", "target"],
     lambda t: F.multilabel_soft_margin_loss(t["input"], t["target"], None, reduction="none"))
case("multilabel_soft_margin_unbatched_mean", {"input": randn(4), "target": f64([0.0, 1.0, 1.0, 0.0])},
     ["input"], lambda t: F.multilabel_soft_margin_loss(t["input"], t["target"], None, reduction="mean"))

# --- multi_margin_loss(input, target, p, margin, weight, reduction) ----------------------------
mm_in, mm_tg = randn(3, 4), i64([2, 0, 3])
case("multi_margin_mean", {"input": mm_in, "target": mm_tg}, ["input"],
     lambda t: F.multi_margin_loss(t["input"], t["target"], 1, 1.0, None, reduction="mean"))
case("multi_margin_p2_weight_sum", {"input": mm_in, "target": mm_tg, "weight": f64([0.5, 2.0, 1.5, 0.75])},
     ["input"], lambda t: F.multi_margin_loss(t["input"], t["target"], 2, 0.7, t["weight"], reduction="sum"))
case("multi_margin_margin2_none", {"input": mm_in, "target": mm_tg}, ["input"],
     lambda t: F.multi_margin_loss(t["input"], t["target"], 1, 2.0, None, reduction="none"))
# Unbatched with a 0-d target: 'none' gives a 0-d loss.
case("multi_margin_unbatched_none", {"input": randn(4), "target": i64(1)}, ["input"],
     lambda t: F.multi_margin_loss(t["input"], t["target"], 1, 1.0, None, reduction="none"))

# --- multilabel_margin_loss(input, target, reduction) ------------------------------------------
# Targets end at the first -1 (the 1 after it is ignored); a repeated label counts twice.
ml_in = randn(3, 4)
ml_tg = i64([[3, 0, -1, 1], [1, 2, 3, 0], [2, 2, -1, -1]])
for r in ["mean", "sum", "none"]:
    case(f"multilabel_margin_{r}", {"input": ml_in, "target": ml_tg}, ["input"],
         lambda t, r=r: F.multilabel_margin_loss(t["input"], t["target"], reduction=r))
case("multilabel_margin_unbatched_none", {"input": randn(4), "target": i64([2, 0, -1, 3])}, ["input"],
     lambda t: F.multilabel_margin_loss(t["input"], t["target"], reduction="none"))


lines = [
    generated_header("make_loss_extra_golden.py"),
    "",
    "/// One golden case: its inputs (int64 for the integer targets), torch's output, and the",
    "/// gradients of `out.sum()` for the differentiated inputs.",
    "const GOLDEN: &[Golden] = &[",
]
for name, inputs, grads, call in CASES:
    leaves = {k: (v.detach().clone().requires_grad_(k in grads) if v.is_floating_point() else v.clone())
              for k, v in inputs.items()}
    out = call(leaves)
    out.sum().backward()
    lines.append("    Golden {")
    lines.append(f'        name: "{name}",')
    lines.append("        inputs: &[")
    for k, v in inputs.items():
        kind = "false" if v.is_floating_point() else "true"
        lines.append(f'            ("{k}", {kind}, {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append(f"        out: {tensor_lit(out)},")
    lines.append("        grads: &[")
    for k in grads:
        lines.append(f'            ("{k}", {tensor_lit(leaves[k].grad)}),')
    lines.append("        ],")
    lines.append("    },")
    shown = out.detach().flatten().tolist()
    print(f"{name:40s} out={shown if len(shown) > 1 else shown[0]!r}")
lines.append("];")

path = write_golden("loss_extra_golden.rs", lines)
print(f"wrote {len(CASES)} cases to {path}")

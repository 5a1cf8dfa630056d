"""Writes nn/tests/nn/embedding_bag_shuffle_dropout_golden.rs: torch's values and gradients for embedding_bag,
pixel_shuffle, pixel_unshuffle and channel_shuffle, in float64, and alpha dropout's constants.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). Each case gives its
inputs, `out = op(...)` and, for the inputs marked as differentiated, their gradients after
`(out * c).sum().backward()` with `c = 1, 2, 3, ...` over out's elements in row-major order (so a
gradient routed to the wrong bag, row or position shows; plain `out.sum()` would hide a
permutation). nn/tests/nn/embedding_bag_shuffle_dropout.rs makes the same calls by case name.

The inputs named `indices` and `offsets` are integer tensors (int64 in torch), written as floats.

embedding_bag's cases cover every mode with 1-D indices and offsets and with 2-D indices, empty
bags (in the middle, at the end, and an empty input), per_sample_weights (1-D and 2-D),
padding_idx (a bag of padding only, a negative padding_idx), include_last_offset (also with a last
offset short of the input's length: torch's CPU kernel runs the last bag to the end of the input
regardless), max_norm (whose in-place renormalisation of the rows looked up shows in the output),
scale_grad_by_freq, and 'max' with ties (equal values in different rows: torch's kernel keeps the
first in bag order, and the gradient goes to that row only).

ALPHA holds, for several p, what torch's alpha_dropout gives a float64 input of ones: the value of
a kept element, of a dropped one, and the gradient of a kept element (its scale `a`).

Run: /work/.refenv/bin/python nn/tests/make_embedding_bag_shuffle_dropout_golden.py (from the repository root).
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(0)
DT = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


def f64(values):
    return torch.tensor(values, dtype=DT)


def ints(values):
    return torch.tensor(values, dtype=torch.long)


# Each case: name -> (inputs {name: tensor}, names of differentiated inputs, call).
CASES = []


def case(name, inputs, grads, call):
    CASES.append((name, inputs, grads, call))


# --- embedding_bag(input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
#                   per_sample_weights, include_last_offset, padding_idx) ----------------------------
W = randn(10, 3)
# Bags [1, 2, 4], [], [5, 4, 3], [2, 9, 0, 7].
IDX1 = ints([1, 2, 4, 5, 4, 3, 2, 9, 0, 7])
OFF1 = ints([0, 3, 3, 6])
IDX2 = ints([[1, 2, 4, 5], [4, 3, 2, 9], [0, 7, 7, 1]])


def eb(mode, offsets=True, **kw):
    def call(t):
        return F.embedding_bag(
            t["indices"], t["weight"], t["offsets"] if offsets else None, mode=mode,
            per_sample_weights=t.get("psw"), **kw)
    return call


for mode in ["sum", "mean", "max"]:
    case(f"eb_{mode}_offsets", {"indices": IDX1, "offsets": OFF1, "weight": W}, ["weight"], eb(mode))
    case(f"eb_{mode}_2d", {"indices": IDX2, "weight": W}, ["weight"], eb(mode, offsets=False))
case("eb_sum_psw_offsets", {"indices": IDX1, "offsets": OFF1, "weight": W, "psw": randn(10)},
     ["weight", "psw"], eb("sum"))
case("eb_sum_psw_2d", {"indices": IDX2, "weight": W, "psw": randn(3, 4)}, ["weight", "psw"],
     eb("sum", offsets=False))

# padding_idx 2: bags [2, 2] (padding only), [5, 2, 1], [1, 3, 2], [0, 9].
IDXP = ints([2, 2, 5, 2, 1, 1, 3, 2, 0, 9])
OFFP = ints([0, 2, 5, 8])
for mode in ["sum", "mean", "max"]:
    case(f"eb_{mode}_pad", {"indices": IDXP, "offsets": OFFP, "weight": W}, ["weight"], eb(mode, padding_idx=2))
case("eb_mean_pad_neg", {"indices": IDXP, "offsets": OFFP, "weight": W}, ["weight"], eb("mean", padding_idx=-8))
case("eb_sum_psw_pad", {"indices": IDXP, "offsets": OFFP, "weight": W, "psw": randn(10)}, ["weight", "psw"],
     eb("sum", padding_idx=2))
case("eb_max_pad_2d", {"indices": ints([[2, 2, 2], [3, 2, 8], [2, 6, 6]]), "weight": W}, ["weight"],
     eb("max", offsets=False, padding_idx=2))

# include_last_offset: the same bags, the input's length as the last offset.
OFFL = ints([0, 3, 3, 6, 10])
for mode in ["sum", "mean", "max"]:
    case(f"eb_{mode}_last", {"indices": IDX1, "offsets": OFFL, "weight": W}, ["weight"],
         eb(mode, include_last_offset=True))
# A last offset short of the length: the last bag still runs to the end ([2, 9, 0, 7]).
case("eb_sum_last_short", {"indices": IDX1, "offsets": ints([0, 3, 3, 6, 8]), "weight": W}, ["weight"],
     eb("sum", include_last_offset=True))
case("eb_sum_last_short_psw", {"indices": IDX1, "offsets": ints([0, 3, 3, 6, 7]), "weight": W,
                               "psw": randn(10)}, ["weight", "psw"],
     eb("sum", include_last_offset=True))

# Empty bags: at the end, and an empty input (every bag empty).
case("eb_mean_trailing_empty", {"indices": IDX1, "offsets": ints([0, 3, 10, 10]), "weight": W}, ["weight"],
     eb("mean"))
case("eb_max_trailing_empty", {"indices": IDX1, "offsets": ints([0, 3, 10, 10]), "weight": W}, ["weight"],
     eb("max"))
EMPTY = torch.zeros(0, dtype=torch.long)
for mode in ["sum", "mean", "max"]:
    case(f"eb_{mode}_empty_input", {"indices": EMPTY, "offsets": ints([0, 0, 0]), "weight": W}, ["weight"],
         eb(mode))

# max_norm: the rows looked up are renormalised in place first (the inputs here are the rows
# before), so the output and the gradients are those of the renormalised rows.
WN = randn(10, 3) * 1.5
case("eb_mean_max_norm", {"indices": IDX1, "offsets": OFF1, "weight": WN}, ["weight"], eb("mean", max_norm=1.0))
case("eb_sum_max_norm_p1_2d", {"indices": IDX2, "weight": WN}, ["weight"],
     eb("sum", offsets=False, max_norm=1.5, norm_type=1.0))
case("eb_max_max_norm", {"indices": IDX1, "offsets": OFF1, "weight": WN}, ["weight"],
     eb("max", max_norm=0.8, norm_type=3.0))

# scale_grad_by_freq: each row's gradient divided by its count in the whole input.
IDXF = ints([0, 0, 0, 1, 2, 1, 0, 3, 3, 9])
OFFF = ints([0, 3, 7])
case("eb_sum_freq", {"indices": IDXF, "offsets": OFFF, "weight": W}, ["weight"], eb("sum", scale_grad_by_freq=True))
case("eb_mean_freq", {"indices": IDXF, "offsets": OFFF, "weight": W}, ["weight"], eb("mean", scale_grad_by_freq=True))
case("eb_sum_psw_freq_pad", {"indices": IDXF, "offsets": OFFF, "weight": W, "psw": randn(10)}, ["weight", "psw"],
     eb("sum", scale_grad_by_freq=True, padding_idx=0))

# 'max' with ties: rows 1, 4 and 6 share their first value, rows 3 and 5 are equal.
WT = randn(10, 3)
WT[[1, 4, 6], 0] = 3.0
WT[5] = WT[3]
case("eb_max_ties", {"indices": ints([4, 1, 6, 3, 5, 5, 3]), "offsets": ints([0, 3]), "weight": WT}, ["weight"],
     eb("max"))
case("eb_max_ties_repeat", {"indices": ints([[5, 3, 5, 3], [6, 6, 4, 1]]), "weight": WT}, ["weight"],
     eb("max", offsets=False))


# --- pixel_shuffle, pixel_unshuffle, channel_shuffle -------------------------------------------
def ps(r):
    return lambda t: F.pixel_shuffle(t["input"], r)


def pu(r):
    return lambda t: F.pixel_unshuffle(t["input"], r)


def cs(g):
    return lambda t: F.channel_shuffle(t["input"], g)


case("ps_4d_r2", {"input": randn(2, 8, 2, 3)}, ["input"], ps(2))
case("ps_3d_r2", {"input": randn(8, 2, 3)}, ["input"], ps(2))
case("ps_5d_r3", {"input": randn(2, 1, 9, 2, 2)}, ["input"], ps(3))
case("ps_r1", {"input": randn(1, 3, 2, 2)}, ["input"], ps(1))
case("pu_4d_r2", {"input": randn(2, 3, 4, 6)}, ["input"], pu(2))
case("pu_3d_r3", {"input": randn(2, 3, 6)}, ["input"], pu(3))
case("pu_5d_r2", {"input": randn(2, 2, 1, 4, 2)}, ["input"], pu(2))
case("cs_4d_g2", {"input": randn(2, 8, 2, 3)}, ["input"], cs(2))
case("cs_3d_g4", {"input": randn(2, 8, 3)}, ["input"], cs(4))
case("cs_5d_g3", {"input": randn(2, 6, 2, 2, 1)}, ["input"], cs(3))
case("cs_g1", {"input": randn(2, 4, 3)}, ["input"], cs(1))
case("cs_g_channels", {"input": randn(1, 6, 2)}, ["input"], cs(6))


lines = [
    generated_header("make_embedding_bag_shuffle_dropout_golden.py"),
    "",
    "/// One golden case: its inputs (`indices` and `offsets` are integers), torch's output, and the",
    "/// gradients of `(out * c).sum()` (`c = 1, 2, 3, ...`) for the differentiated inputs.",
    "// (torch's values, some of which may happen to equal named constants)",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
for name, inputs, grads, call in CASES:
    for k, v in inputs.items():
        assert v.dtype == (torch.long if k in ("indices", "offsets") else DT), (name, k)
    leaves = {k: v.detach().clone().requires_grad_(k in grads) for k, v in inputs.items()}
    out = call(leaves)
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
    print(f"{name:28s} out[:4]={[round(v, 6) for v in shown[:4]]}")
lines.append("];")

# --- alpha_dropout on ones: (p, kept value, dropped value, gradient of a kept element) ----------
lines.append("")
lines.append("/// torch's `alpha_dropout(ones, p, training=True)` in float64: `(p, the value of a kept element,")
lines.append("/// the value of a dropped one, the gradient of a kept element)`.")
lines.append("#[allow(clippy::approx_constant)]")
lines.append("const ALPHA: &[(f64, f64, f64, f64)] = &[")
for p in [0.1, 0.25, 0.5, 0.8]:
    x = torch.ones(4096, dtype=DT, requires_grad=True)
    y = F.alpha_dropout(x, p, True)
    y.sum().backward()
    kept = x.grad != 0
    assert kept.any() and (~kept).any(), p
    kv, dv, gv = y[kept].unique(), y[~kept].unique(), x.grad[kept].unique()
    assert kv.numel() == dv.numel() == gv.numel() == 1, p
    lines.append(f"    ({lit(p)}, {lit(kv.item())}, {lit(dv.item())}, {lit(gv.item())}),")
    fx = torch.ones(2, 3, 5, dtype=DT)
    fy = F.feature_alpha_dropout(fx, p, True)
    assert set(fy.unique().tolist()) <= {kv.item(), dv.item()}, p
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("embedding_bag_shuffle_dropout_golden.rs", lines)
print(f"wrote {len(CASES)} cases to {path}")

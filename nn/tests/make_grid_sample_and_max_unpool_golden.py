"""Writes nn/tests/nn/grid_sample_and_max_unpool_golden.rs: torch's values and gradients for grid_sample,
affine_grid and max_unpool1d/2d/3d, in float64.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). Each case gives its
inputs, `out = op(...)`, a random cotangent `cot` shaped like `out`, and, for the inputs marked as
differentiated, their gradients after `(out * cot).sum().backward()` (a random cotangent, so that a
gradient routed to the wrong tap, corner or position shows). nn/tests/nn/grid_sample_and_max_unpool.rs makes the
same calls by case name.

The inputs named `indices`, `size`, `kernel`, `stride`, `padding` and `osize` are integers (int64
tensors, or the integer arguments of the call), written as floats.

grid_sample's cases cover every mode x padding_mode x align_corners on a 4-D input (and on a 5-D
one: torch 2.15's CPU kernel has trilinear, nearest and tricubic), with grid points inside the
image, exactly on its corners and centre (where the border clip and the reflections meet their
bounds, whose gradients torch zeroes), on a half pixel (nearest's round-half-to-even) and far
outside (several reflections). affine_grid's cover 4-D and 5-D sizes, both align_corners, unit
spatial sizes, and an affine_grid -> grid_sample chain (a spatial transformer) differentiated
w.r.t. theta and the image. max_unpool's round trips pool `x` with max_pool{n}d(return_indices)
and unpool it (default and explicit output sizes, padding, overlapping windows, unbatched
inputs), differentiated w.r.t. `x`; one direct case has repeated indices.

Run: /work/.refenv/bin/python nn/tests/make_grid_sample_and_max_unpool_golden.py (from the repository root).
"""

import os
import sys
import warnings

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(0)
DT = torch.float64
INTS = ("indices", "size", "kernel", "stride", "padding", "osize")


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


def ints(values):
    return torch.tensor(values, dtype=torch.long)


# Each case: name -> (inputs {name: tensor}, names of differentiated inputs, call).
CASES = []


def case(name, inputs, grads, call):
    CASES.append((name, inputs, grads, call))


# --- grid_sample(input, grid, mode, padding_mode, align_corners) ------------------------------
MODES = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]

# 4-D: input [2, 2, 3, 4], grid [2, 3, 4, 2] (12 points per batch, (x, y) each).
IN2 = randn(2, 2, 3, 4)
G2 = torch.rand(2, 3, 4, 2, dtype=DT) * 3.4 - 1.7
SPECIAL2 = [
    (-1.0, -1.0),  # a corner: the clip's lower bound (align_corners) or half a pixel out
    (1.0, 1.0),  # the opposite corner
    (0.0, 0.0),  # the centre: x = 1.5 (a half pixel: nearest rounds to even), y = 1
    (-0.5, 1.0),  # x = 0.5 without align_corners (half pixel), y at the border
    (1.0, -1.0),
    (-3.7, 2.9),  # far outside: several reflections
    (4.3, -2.6),
    (-1.25, 0.5),
]
for i, (x, y) in enumerate(SPECIAL2):
    G2[0].view(-1, 2)[i] = torch.tensor([x, y], dtype=DT)

# 5-D: input [1, 2, 2, 3, 3], grid [1, 2, 2, 3, 3] (12 points, (x, y, z) each).
IN3 = randn(1, 2, 2, 3, 3)
G3 = torch.rand(1, 2, 2, 3, 3, dtype=DT) * 3.4 - 1.7
SPECIAL3 = [
    (-1.0, -1.0, -1.0),
    (1.0, 1.0, 1.0),
    (0.0, 0.0, 0.0),
    (-3.7, 2.9, 0.3),
    (0.2, -2.6, 3.1),
    (1.0, -0.4, -1.0),
]
for i, p in enumerate(SPECIAL3):
    G3[0].view(-1, 3)[i] = torch.tensor(p, dtype=DT)


def gs(mode, pad, ac):
    return lambda t: F.grid_sample(t["input"], t["grid"], mode=mode, padding_mode=pad, align_corners=ac)


for tag, inp, grid in [("gs2d", IN2, G2), ("gs3d", IN3, G3)]:
    for mode in MODES:
        for pad in PADS:
            for ac in (False, True):
                case(f"{tag}_{mode}_{pad}_ac{int(ac)}", {"input": inp, "grid": grid}, ["input", "grid"],
                     gs(mode, pad, ac))


# --- affine_grid(theta, size, align_corners) ----------------------------------------------------
def ag(ac):
    return lambda t: F.affine_grid(t["theta"], t["size"].tolist(), align_corners=ac)


TH2 = randn(2, 2, 3)
TH3 = randn(2, 3, 4)
for ac in (False, True):
    case(f"ag4d_ac{int(ac)}", {"theta": TH2, "size": ints([2, 3, 3, 4])}, ["theta"], ag(ac))
    case(f"ag5d_ac{int(ac)}", {"theta": TH3, "size": ints([2, 1, 2, 3, 2])}, ["theta"], ag(ac))
    # Unit spatial sizes: the single point is 0 (align_corners only warns of the empty span).
    case(f"ag4d_unit_ac{int(ac)}", {"theta": randn(1, 2, 3), "size": ints([1, 1, 1, 3])}, ["theta"], ag(ac))
    case(f"ag5d_unit_ac{int(ac)}", {"theta": randn(1, 3, 4), "size": ints([1, 2, 2, 1, 1])}, ["theta"], ag(ac))


def stn(ac):
    def call(t):
        g = F.affine_grid(t["theta"], t["size"].tolist(), align_corners=ac)
        return F.grid_sample(t["input"], g, mode="bilinear", padding_mode="zeros", align_corners=ac)
    return call


# A spatial transformer: near-identity maps (a rotation, a shift, a zoom) of a 3 x 4 image onto 4 x 5.
# (No grid point lands on a pixel's centre or the image's edge, where the gradient jumps and a last
# bit of rounding in the product would decide it.)
THS = torch.tensor([[[0.91, -0.27, 0.13], [0.23, 1.07, -0.19]], [[1.27, 0.03, 0.41], [0.11, 0.83, 0.29]]],
                   dtype=DT)
for ac in (False, True):
    case(f"stn_ac{int(ac)}", {"theta": THS, "input": randn(2, 2, 3, 4), "size": ints([2, 2, 4, 5])},
         ["theta", "input"], stn(ac))


# --- max_unpool{n}d(input, indices, kernel_size, stride, padding, output_size) ------------------
POOL = [None, F.max_pool1d, F.max_pool2d, F.max_pool3d]
UNPOOL = [None, F.max_unpool1d, F.max_unpool2d, F.max_unpool3d]


def mu(n):
    def call(t):
        # (torch's Python front end spreads a bare int over the dims, not a one-element list;
        # grid_sample_and_max_unpool.rs passes the lists as they are written, one value for all dims)
        k, s, p = (t[a].tolist() * (n if t[a].numel() == 1 else 1) for a in ("kernel", "stride", "padding"))
        osize = t["osize"].tolist() if "osize" in t else None
        if "indices" in t:
            o, i = t["input"], t["indices"]
        else:
            o, i = POOL[n](t["x"], k, s, p, return_indices=True)
        return UNPOOL[n](o, i, k, s, p, output_size=osize)
    return call


def rt(name, n, x, k, s, p, osize=None):
    inputs = {"x": x, "kernel": ints(k), "stride": ints(s), "padding": ints(p)}
    if osize is not None:
        inputs["osize"] = ints(osize)
    case(name, inputs, ["x"], mu(n))


rt("mu1d_k2", 1, randn(2, 3, 8), [2], [2], [0])
rt("mu1d_osize", 1, randn(1, 2, 9), [2], [2], [0], [9])
rt("mu1d_overlap", 1, randn(1, 2, 7), [3], [1], [0])
rt("mu1d_pad", 1, randn(1, 2, 7), [3], [2], [1])
rt("mu1d_unbatched", 1, randn(3, 6), [2], [2], [0])
rt("mu2d_k2", 2, randn(2, 2, 4, 4), [2], [2], [0])
rt("mu2d_osize", 2, randn(1, 2, 5, 5), [2], [2], [0], [5, 5])
rt("mu2d_osize_full", 2, randn(1, 2, 5, 5), [2], [2], [0], [1, 2, 5, 5])
rt("mu2d_pad", 2, randn(1, 2, 5, 5), [3], [2], [1])
rt("mu2d_overlap", 2, randn(1, 1, 4, 4), [2], [1], [0])
rt("mu2d_rect", 2, randn(1, 1, 4, 6), [2, 3], [2, 3], [0])
rt("mu2d_unbatched", 2, randn(2, 4, 6), [2], [2], [0])
rt("mu3d_k2", 3, randn(1, 2, 4, 4, 4), [2], [2], [0])
rt("mu3d_osize", 3, randn(1, 1, 5, 4, 5), [2], [2], [0], [1, 1, 5, 4, 5])
rt("mu3d_pad", 3, randn(1, 1, 5, 5, 5), [3], [2], [1])
rt("mu3d_unbatched", 3, randn(2, 4, 4, 2), [2, 2, 1], [2, 2, 1], [0])
# Repeated indices (equal values, so the scatter's write order does not matter): each input's
# gradient is the output's gradient at its index, both duplicates included.
case("mu1d_dup", {"input": torch.tensor([[[3.0, 3.0, 1.0, 5.0]]], dtype=DT), "indices": ints([[[0, 0, 2, 5]]]),
                  "kernel": ints([2]), "stride": ints([2]), "padding": ints([0])}, ["input"], mu(1))


lines = [
    generated_header("make_grid_sample_and_max_unpool_golden.py"),
    "",
    "/// One golden case: its inputs (`indices`, `size`, `kernel`, `stride`, `padding` and `osize` are",
    "/// integers), torch's output, the cotangent, and the gradients of `(out * cot).sum()` for the",
    "/// differentiated inputs.",
    "// (torch's values, some of which may happen to equal named constants)",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
warnings.simplefilter("ignore")  # affine_grid's warning about an empty span with align_corners
for name, inputs, grads, call in CASES:
    for k, v in inputs.items():
        assert v.dtype == (torch.long if k in INTS else DT), (name, k)
    leaves = {k: v.detach().clone().requires_grad_(k in grads) for k, v in inputs.items()}
    out = call(leaves)
    cot = randn(*out.shape)
    (out * cot).sum().backward()
    lines.append("    Golden {")
    lines.append(f'        name: "{name}",')
    lines.append("        inputs: &[")
    for k, v in inputs.items():
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append(f"        out: {tensor_lit(out)},")
    lines.append(f"        cot: {tensor_lit(cot)},")
    lines.append("        grads: &[")
    for k in grads:
        g = leaves[k].grad
        # torch returns a gradient (zeros for the grid in nearest mode), never none, here.
        assert g is not None, (name, k)
        lines.append(f'            ("{k}", {tensor_lit(g)}),')
    lines.append("        ],")
    lines.append("    },")
    shown = out.detach().flatten().tolist()
    print(f"{name:32s} out[:4]={[round(v, 6) for v in shown[:4]]}")
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("grid_sample_and_max_unpool_golden.rs", lines)
print(f"wrote {len(CASES)} cases to {path}")

"""Writes nn/tests/nn/nn_aa_embedding_golden.rs: torch's values (and float64 input gradients) for
`F.interpolate(..., antialias=True)` and the full `F.embedding(...)`, plus torch's error messages.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). nn/tests/nn/nn_aa_embedding.rs
makes the same calls from the arguments recorded with each case.

INTERP: antialiased `"bilinear"`, `"bicubic"` and `"lanczos"` on non-square `[N, C, H, W]` inputs:
downscaling by integer and fractional factors (by `size` and by `scale_factor`, whose `1 / factor`
is the scale torch uses), mixed up/down, one dim unchanged (left alone even with a factor other
than 1), a 1x1 output, upscaling, `align_corners` both, `recompute_scale_factor`. float64 cases
carry the input's gradient after `(out * c).sum().backward()` with `c = 1, 2, 3, ...` over out's
elements, and whether torch's antialiased output equals its plain interpolation (it does only for
bilinear upscaling without align_corners: the antialiased cubic uses a = -0.5, and the antialiased
kernels centre outputs at `scale * (i + 0.5)` even with align_corners). float32 cases are torch's
float32 outputs; uint8 cases torch's fixed-point outputs (channel counts 3 and 5, as torch's CPU
kernel takes one path for up to 4 channels and another beyond).

EMBED: `F.embedding(indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)`
in float64: the output, `weight`'s gradient after `(out * c).sum().backward()`, and `weight` after
the call (max_norm renormalises the rows looked up in place).

ERRORS: the message torch raises for each listed call.

Run: /work/.refenv/bin/python nn/tests/make_nn_aa_embedding_golden.py (from the repository root).
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import floats, generated_header, lit, rust_str, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(30)
DT = torch.float64


def opt(v, f):
    return "None" if v is None else f"Some({f(v)})"


def usizes(v):
    return "&[" + ", ".join(str(int(x)) for x in v) + "]"


def rbool(b):
    return "true" if b else "false"


def ramp(out):
    return torch.arange(1, out.numel() + 1, dtype=DT).reshape(out.shape)


# --- interpolate(antialias=True) -------------------------------------------------------------------
INTERP = []


def interp(name, shape, mode, dtype="f64", size=None, scale=None, align=None, recompute=None):
    INTERP.append((name, shape, mode, dtype, size, scale, align, recompute))


for mode in ["bilinear", "bicubic"]:
    m = {"bilinear": "bl", "bicubic": "bc"}[mode]
    for al in [False, True]:
        a = f"_al{int(al)}"
        # integer factors (2 and 4), by size
        interp(f"{m}_down_int{a}", [2, 1, 8, 12], mode, size=[4, 3], align=al)
        # fractional factors (2.25 and 13/6), by size
        interp(f"{m}_down_frac{a}", [1, 2, 9, 13], mode, size=[4, 6], align=al)
        # by scale_factor: the scale is 1 / factor (not in / out)
        interp(f"{m}_down_sf{a}", [1, 2, 9, 13], mode, scale=[0.45, 0.37], align=al)
        interp(f"{m}_down_sf1{a}", [1, 1, 10, 7], mode, scale=[0.3], align=al)
        # recompute_scale_factor: the size from the factor, the scale from the sizes
        interp(f"{m}_down_sf_recompute{a}", [1, 2, 9, 13], mode, scale=[0.45, 0.37], align=al, recompute=True)
        # up in H, down in W
        interp(f"{m}_mixed{a}", [1, 1, 7, 10], mode, size=[11, 4], align=al)
        # one dim unchanged despite a factor of 1.1: left alone
        interp(f"{m}_same_h{a}", [1, 2, 5, 8], mode, scale=[1.1, 0.5], align=al)
        # upscaling
        interp(f"{m}_up{a}", [1, 2, 4, 5], mode, size=[7, 9], align=al)
        interp(f"{m}_up_sf{a}", [1, 1, 4, 5], mode, scale=[1.7, 2.3], align=al)
        # float32
        interp(f"{m}_down_frac{a}_f32", [1, 2, 9, 13], mode, dtype="f32", size=[4, 6], align=al)
        interp(f"{m}_down_sf{a}_f32", [2, 1, 11, 8], mode, dtype="f32", scale=[0.4, 0.6], align=al)
        # uint8, both of torch's paths (<= 4 channels, > 4 channels)
        interp(f"{m}_down_frac{a}_u8c3", [1, 3, 17, 13], mode, dtype="u8", size=[5, 6], align=al)
        interp(f"{m}_down_sf{a}_u8c5", [1, 5, 12, 15], mode, dtype="u8", scale=[0.5, 0.37], align=al)
        interp(f"{m}_up{a}_u8c3", [1, 3, 5, 4], mode, dtype="u8", size=[9, 7], align=al)
    interp(f"{m}_out1_al1", [1, 2, 10, 9], mode, size=[1, 1], align=True)
    interp(f"{m}_out1_al0", [1, 2, 10, 9], mode, size=[1, 1], align=False)
    interp(f"{m}_identity", [1, 2, 4, 5], mode, size=[4, 5])
    interp(f"{m}_big_down", [1, 1, 24, 21], mode, size=[3, 5])
for dt in ["f64", "f32", "u8"]:
    interp(f"la_down_{dt}", [1, 3, 13, 11], "lanczos", dtype=dt, size=[5, 4])
interp("la_up", [1, 1, 5, 6], "lanczos", size=[9, 11])
interp("la_sf", [1, 2, 12, 9], "lanczos", scale=[0.4, 0.7], align=False)


def make_input(shape, dtype):
    if dtype == "u8":
        return torch.randint(0, 256, shape, dtype=torch.uint8)
    x = torch.randn(*shape, dtype=DT)
    return x.float() if dtype == "f32" else x


def call_interp(x, mode, size, scale, align, recompute, antialias=True):
    kw = {}
    if size is not None:
        kw["size"] = size[0] if len(size) == 1 else tuple(size)
    if scale is not None:
        kw["scale_factor"] = scale[0] if len(scale) == 1 else tuple(scale)
    return F.interpolate(x, mode=mode, align_corners=align, recompute_scale_factor=recompute,
                         antialias=antialias, **kw)


lines = [
    generated_header("make_nn_aa_embedding_golden.py", "CPU"),
    "",
    "// (torch's values, some of which may happen to equal named constants)",
    "#[allow(clippy::approx_constant)]",
    "const INTERP: &[Interp] = &[",
]
for name, shape, mode, dtype, size, scale, align, recompute in INTERP:
    x = make_input(shape, dtype)
    grad = None
    same = None
    if dtype == "f64":
        leaf = x.clone().requires_grad_(True)
        out = call_interp(leaf, mode, size, scale, align, recompute)
        (out * ramp(out)).sum().backward()
        grad = leaf.grad
        if mode != "lanczos":
            plain = call_interp(x, mode, size, scale, align, recompute, antialias=False)
            same = bool((plain - out.detach()).abs().max().item() < 1e-12)
    else:
        out = call_interp(x, mode, size, scale, align, recompute)
    lines.append("    Interp {")
    lines.append(f'        name: "{name}",')
    lines.append(f'        mode: "{mode}",')
    lines.append(f'        dtype: "{dtype}",')
    lines.append(f"        size: {opt(size, usizes)},")
    lines.append(f"        scale: {opt(scale, floats)},")
    lines.append(f"        align: {opt(align, rbool)},")
    lines.append(f"        recompute: {opt(recompute, rbool)},")
    lines.append(f"        input: {tensor_lit(x)},")
    lines.append(f"        out: {tensor_lit(out)},")
    lines.append(f"        grad: {opt(grad, tensor_lit)},")
    lines.append(f"        same_as_plain: {opt(same, rbool)},")
    lines.append("    },")
    print(f"{name:28s} {list(out.shape)} same_as_plain={same}")
lines.append("];")

# --- embedding ------------------------------------------------------------------------------------
EMBED = []


def embed(name, indices, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
          sparse=False):
    EMBED.append((name, indices, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse))


def ints(v):
    return torch.tensor(v, dtype=torch.long)


W = torch.randn(10, 4, dtype=DT)
WN = torch.randn(10, 4, dtype=DT) * 1.5
REP1 = ints([3, 1, 3, 3, 7, 1, 0, 9])
REP2 = ints([[2, 5, 2], [5, 5, 8], [0, 2, 9]])
embed("plain", REP1, W)
embed("pad", REP1, W, padding_idx=3)
embed("pad_neg", REP2, W, padding_idx=-5)
embed("freq", REP1, W, scale_grad_by_freq=True)
embed("freq_2d", REP2, W, scale_grad_by_freq=True)
embed("freq_pad", REP1, W, padding_idx=1, scale_grad_by_freq=True)
embed("freq_pad_2d", REP2, W, padding_idx=5, scale_grad_by_freq=True)
embed("max_norm", REP1, WN, max_norm=1.0)
embed("max_norm_p1_2d", REP2, WN, max_norm=2.0, norm_type=1.0)
embed("max_norm_p3", REP1, WN, max_norm=0.9, norm_type=3.0)
embed("max_norm_freq_pad", REP2, WN, padding_idx=2, max_norm=1.2, scale_grad_by_freq=True)
embed("sparse_pad", REP1, W, padding_idx=0, sparse=True)
embed("max_norm_sparse", REP1, WN, max_norm=1.0, sparse=True)
embed("scalar_index_freq", torch.tensor(4), W, scale_grad_by_freq=True)

lines += [
    "",
    "#[allow(clippy::approx_constant)]",
    "const EMBED: &[Embed] = &[",
]
for name, idx, w, padding_idx, max_norm, norm_type, freq, sparse in EMBED:
    leaf = w.clone().requires_grad_(True)
    out = F.embedding(idx, leaf, padding_idx, max_norm, norm_type, freq, sparse)
    (out * ramp(out)).sum().backward()
    g = leaf.grad
    if g.is_sparse:
        g = g.to_dense()
    lines.append("    Embed {")
    lines.append(f'        name: "{name}",')
    lines.append(f"        indices: {tensor_lit(idx)},")
    lines.append(f"        weight: {tensor_lit(w)},")
    lines.append(f"        padding_idx: {opt(padding_idx, str)},")
    lines.append(f"        max_norm: {opt(max_norm, lit)},")
    lines.append(f"        norm_type: {lit(norm_type)},")
    lines.append(f"        scale_grad_by_freq: {rbool(freq)},")
    lines.append(f"        sparse: {rbool(sparse)},")
    lines.append(f"        out: {tensor_lit(out)},")
    lines.append(f"        grad: {tensor_lit(g)},")
    lines.append(f"        weight_after: {tensor_lit(leaf.detach())},")
    lines.append("    },")
    print(f"{name:28s} out[:3]={[round(v, 5) for v in out.detach().flatten().tolist()[:3]]}")
lines.append("];")

# --- errors ---------------------------------------------------------------------------------------
ERRORS = []


def error(name, shape, dtype, mode, size=None, scale=None, align=None, recompute=None, antialias=True):
    ERRORS.append((name, shape, dtype, mode, size, scale, align, recompute, antialias))


error("aa_nearest", [1, 1, 4, 5], "f32", "nearest", size=[2, 2])
error("aa_area", [1, 1, 4, 5], "f32", "area", size=[2, 2])
error("aa_bilinear_3d", [1, 2, 5], "f32", "bilinear", size=[3])
error("aa_bicubic_5d", [1, 1, 4, 5, 3], "f32", "bicubic", size=[2, 2, 2])
error("aa_half", [1, 1, 4, 5], "f16", "bilinear", size=[2, 2])
error("aa_bf16", [1, 1, 4, 5], "bf16", "bicubic", size=[2, 2])
error("aa_long", [1, 1, 4, 5], "i64", "bicubic", size=[2, 2])
error("aa_size0", [1, 2, 4, 5], "f32", "bilinear", size=[0, 2])
error("aa_scale_to_0", [1, 2, 4, 5], "f32", "bicubic", scale=[0.1])
error("aa_no_channels", [1, 0, 4, 5], "f32", "bilinear", size=[3, 2])
error("aa_both_sizes", [1, 1, 4, 5], "f32", "bilinear", size=[2, 2], scale=[0.5])
error("aa_neither", [1, 1, 4, 5], "f32", "bilinear")
error("aa_align_nearest", [1, 1, 4, 5], "f32", "nearest", size=[2, 2], align=True)
error("recompute_with_size", [1, 1, 4, 5], "f32", "bilinear", size=[2, 2], recompute=True)
error("lanczos_align", [1, 1, 4, 5], "f32", "lanczos", size=[2, 2], align=True)
error("lanczos_plain", [1, 1, 4, 5], "f32", "lanczos", size=[2, 2], antialias=False)
error("lanczos_plain_3d", [1, 1, 5], "f32", "lanczos", size=[2], antialias=False)

TORCH_DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i64": torch.int64}
lines += ["", "const ERRORS: &[ErrCase] = &["]
for name, shape, dtype, mode, size, scale, align, recompute, antialias in ERRORS:
    x = torch.zeros(shape, dtype=TORCH_DT[dtype])
    try:
        call_interp(x, mode, size, scale, align, recompute, antialias)
        raise SystemExit(f"{name}: torch did not raise")
    except (RuntimeError, ValueError, NotImplementedError) as e:
        msg = str(e)
    lines.append("    ErrCase {")
    lines.append(f'        name: "{name}",')
    lines.append(f"        dims: {usizes(shape)},")
    lines.append(f'        dtype: "{dtype}",')
    lines.append(f'        mode: "{mode}",')
    lines.append(f"        size: {opt(size, usizes)},")
    lines.append(f"        scale: {opt(scale, floats)},")
    lines.append(f"        align: {opt(align, rbool)},")
    lines.append(f"        recompute: {opt(recompute, rbool)},")
    lines.append(f"        antialias: {rbool(antialias)},")
    lines.append(f"        msg: {rust_str(msg)},")
    lines.append("    },")
    print(f"{name:28s} {msg[:90]}")
lines.append("];")

# embedding's errors: (name, message); the calls are written out in the test.
EMB_ERRORS = []
w = torch.randn(10, 3, dtype=DT)
for name, f in [
    ("emb_pad_high", lambda: F.embedding(ints([1]), w, padding_idx=10)),
    ("emb_pad_low", lambda: F.embedding(ints([1]), w, padding_idx=-11)),
    ("emb_float_indices", lambda: F.embedding(torch.tensor([1.0]), w)),
    ("emb_float_indices_max_norm", lambda: F.embedding(torch.tensor([1.0]), w, max_norm=1.0)),
    ("emb_out_of_range", lambda: F.embedding(ints([10]), w)),
    ("emb_weight_1d", lambda: F.embedding(ints([1]), torch.randn(10, dtype=DT))),
]:
    try:
        f()
        raise SystemExit(f"{name}: torch did not raise")
    except (RuntimeError, AssertionError, IndexError) as e:
        EMB_ERRORS.append((name, str(e)))
ww = w.clone().requires_grad_(True)
try:
    F.embedding(ints([1, 1, 2]), ww, scale_grad_by_freq=True, sparse=True).sum().backward()
    raise SystemExit("sparse + scale_grad_by_freq: torch did not raise")
except RuntimeError as e:
    EMB_ERRORS.append(("emb_sparse_freq_backward", str(e)))
lines += ["", "const EMB_ERRORS: &[(&str, &str)] = &["]
for name, msg in EMB_ERRORS:
    lines.append(f'    ("{name}", {rust_str(msg)}),')
    print(f"{name:28s} {msg[:90]}")
lines.append("];")

names = [c[0] for c in INTERP] + [c[0] for c in EMBED] + [c[0] for c in ERRORS]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("nn_aa_embedding_golden.rs", lines)
print(f"wrote {len(INTERP)} interpolate, {len(EMBED)} embedding and {len(ERRORS) + len(EMB_ERRORS)} error "
      f"cases to {path}")

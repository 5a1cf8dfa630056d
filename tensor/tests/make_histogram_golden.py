"""Writes tensor/tests/cpu/histogram_golden.rs: torch's torch.histogram / torch.histogramdd
results (histogram and edges) for float32 and float64 inputs with elements on bin edges, weights,
density, custom (also unsorted) edges, empty input, a zero-width range and NaN, and for float16 and
bfloat16 inputs (which torch takes with a range or edge tensors only), as Rust literals.

Run with a torch install: python tensor/tests/make_histogram_golden.py
"""
import math
import os

import torch

OUT = os.path.join(os.path.dirname(__file__), "cpu", "histogram_golden.rs")
FULL = {"f32": torch.float32, "f64": torch.float64}
HALF = {"f16": torch.float16, "bf16": torch.bfloat16}
DTYPES = {**FULL, **HALF}


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    return repr(v) if "." in repr(v) or "e" in repr(v) else repr(v) + ".0"


def arr(vals):
    return "&[" + ", ".join(lit(v) for v in vals) + "]"


def arr_usize(vals):
    return "&[" + ", ".join(str(int(v)) for v in vals) + "]"


def arr_i64(vals):
    return "&[" + ", ".join(str(int(v)) for v in vals) + "]"


def grid(g, n, lo, hi, steps, dt):
    """n values on a grid of `steps` points over [lo, hi] (many exactly on or next to bin edges)."""
    k = torch.randint(0, steps + 1, (n,), generator=g).to(torch.float64)
    return (lo + k * (hi - lo) / steps).to(dt)


g = torch.Generator().manual_seed(31)
cases = []


def case(name, dn, x, dd, counts=None, edges=None, rng=None, weight=None, density=False):
    dt = DTYPES[dn]
    x = x.to(dt)
    kw = {"weight": weight.to(dt) if weight is not None else None, "density": density}
    if dd:
        if edges is not None:
            e_in = [e.to(dt) for e in edges]
            hist, out_edges = torch.histogramdd(x, e_in, **kw)
        else:
            hist, out_edges = torch.histogramdd(x, counts, range=rng, **kw)
        out_edges = list(out_edges)
    else:
        if edges is not None:
            e_in = [edges[0].to(dt)]
            hist, e = torch.histogram(x, e_in[0], **kw)
        else:
            hist, e = torch.histogram(x, counts[0], range=tuple(rng) if rng is not None else None, **kw)
        out_edges = [e]
    assert hist.dtype == dt
    cases.append(
        "    HistCase {\n"
        f'        name: "{name}",\n'
        f'        dtype: "{dn}",\n'
        f"        dd: {'true' if dd else 'false'},\n"
        f"        shape: {arr_usize(x.shape)},\n"
        f"        input: {arr(x.double().flatten().tolist())},\n"
        f"        counts: {arr_i64(counts or [])},\n"
        f"        edges_in: &[{', '.join(arr(e.to(dt).double().tolist()) for e in (edges or []))}],\n"
        f"        range: {arr(rng or [])},\n"
        f"        weight: {'None' if weight is None else 'Some(' + arr(weight.to(dt).double().flatten().tolist()) + ')'},\n"
        f"        density: {'true' if density else 'false'},\n"
        f"        hist_shape: {arr_usize(hist.shape)},\n"
        f"        hist: {arr(hist.double().flatten().tolist())},\n"
        f"        edges: &[{', '.join(arr(e.double().tolist()) for e in out_edges)}],\n"
        "    },"
    )


for dn, dt in FULL.items():
    # Elements on the grid of the edges (and of finer grids), data range and given ranges.
    x = grid(g, 150, -1.3, 2.1, 70, dt)
    for bins in (1, 7, 35):
        case(f"grid bins={bins}", dn, x, False, counts=[bins])
        case(f"grid range bins={bins}", dn, x, False, counts=[bins], rng=[-0.7, 1.9])
    case("tenths", dn, torch.linspace(0, 1, 11, dtype=dt).repeat(3), False, counts=[10])
    case("tenths range", dn, torch.arange(0, 11, dtype=torch.float64) / 10, False, counts=[10], rng=[0.0, 1.0])
    case("thirds", dn, torch.arange(-9, 10, dtype=torch.float64) / 3, False, counts=[6], rng=[-3.0, 3.0])
    case("odd range", dn, grid(g, 120, 0.1, 0.7, 60, dt), False, counts=[13], rng=[0.1, 0.7])
    # Weights and density.
    w = torch.rand(150, generator=g, dtype=torch.float64) * 4 - 1
    case("weighted", dn, x, False, counts=[9], weight=w)
    case("density", dn, x, False, counts=[9], density=True)
    case("weighted density", dn, x, False, counts=[9], weight=w, density=True)
    case("2-d input weighted", dn, x.reshape(10, 15), False, counts=[5], weight=w.reshape(10, 15), density=True)
    # NaN and infinities outside a given range are left out.
    special = torch.tensor([0.5, float("nan"), float("inf"), -float("inf"), 1.0, 0.0, 2.0, -0.0])
    case("nan and inf with range", dn, special, False, counts=[4], rng=[0.0, 1.0])
    # Zero-width ranges are widened by 0.5 each way; empty input spans [0, 1].
    case("all equal", dn, torch.full((5,), 3.25), False, counts=[4])
    case("range min == max", dn, torch.tensor([1.0, 2.0, 2.5, 3.0]), False, counts=[3], rng=[2.5, 2.5])
    case("empty", dn, torch.tensor([]), False, counts=[4])
    case("empty density", dn, torch.tensor([]), False, counts=[2], density=True)
    case("empty range", dn, torch.tensor([]), False, counts=[3], rng=[-2.0, 5.0])
    # Custom edges: uneven, repeated, elements on them, out of range, NaN; unsorted.
    e = torch.tensor([-1.0, -0.25, 0.0, 0.3, 0.3, 1.0, 2.0])
    xe = torch.tensor([-1.0, -0.25, 0.0, 0.3, 1.0, 2.0, 2.5, -1.5, float("nan"), 0.1, 0.31, 1.5, 0.2999999])
    case("custom edges", dn, xe, False, edges=[e])
    case("custom edges weighted density", dn, xe, False, edges=[e], weight=torch.arange(13.0) - 4, density=True)
    case("unsorted edges", dn, torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]), False,
         edges=[torch.tensor([0.0, 2.0, 1.0, 3.0])])
    case("single bin edges", dn, xe, False, edges=[torch.tensor([0.0, 1.0])])
    # histogramdd: counts, ranges, weights, density, edges.
    p = torch.stack([grid(g, 120, -1.0, 1.0, 40, dt), grid(g, 120, 0.0, 3.0, 30, dt)], 1)
    case("dd 2-d", dn, p, True, counts=[4, 6])
    case("dd 2-d range", dn, p, True, counts=[5, 3], rng=[-0.5, 0.5, 0.0, 3.0])
    # (weighted sums over at most 200 / N rows: torch splits longer inputs between threads)
    case("dd 2-d weighted density", dn, p[:90], True, counts=[3, 7], weight=w[:90], density=True)
    p3 = torch.stack([grid(g, 60, 0.0, 1.0, 10, dt), grid(g, 60, -2.0, 2.0, 8, dt), grid(g, 60, 5.0, 6.0, 5, dt)], 1)
    case("dd 3-d batched", dn, p3.reshape(3, 20, 3), True, counts=[2, 4, 3], weight=w[:60].reshape(3, 20))
    case("dd 3-d density", dn, p3, True, counts=[3, 3, 2], rng=[0.0, 1.0, -2.0, 2.0, 5.0, 5.0], density=True)
    case("dd edges", dn, p, True, edges=[torch.tensor([-1.0, -0.3, 0.0, 0.45, 1.0]), torch.tensor([0.0, 1.5, 3.0])])
    case("dd edges weighted density", dn, p[:90], True,
         edges=[torch.tensor([-0.5, 0.0, 0.5]), torch.tensor([0.3, 1.0, 2.0, 2.9])], weight=w[:90], density=True)
    case("dd nan row", dn, torch.tensor([[0.0, 1.0], [float("nan"), 0.5], [1.0, 0.0], [0.5, 0.5]]), True,
         counts=[2, 2], rng=[0.0, 1.0, 0.0, 1.0])
    case("dd empty", dn, torch.zeros(0, 2), True, counts=[2, 3])
    case("dd single column", dn, torch.tensor([[1.0], [2.0], [2.0], [4.0]]), True, counts=[3])

for dn, dt in HALF.items():
    # Given ranges (torch's half linspace edges: exact ones and rounded ones), elements on them.
    x = grid(g, 80, -1.3, 2.1, 70, dt)
    case("half range bins=4", dn, x, False, counts=[4], rng=[0.0, 1.0])
    for bins in (7, 35):
        case(f"half range bins={bins}", dn, x, False, counts=[bins], rng=[-0.7, 1.9])
    case("half tenths range", dn, torch.arange(0, 11, dtype=torch.float64) / 10, False, counts=[10], rng=[0.0, 1.0])
    case("half odd range", dn, grid(g, 60, 0.1, 0.7, 60, dt), False, counts=[13], rng=[0.1, 0.7])
    # Weights (summed in the half type) and density.
    w = torch.rand(80, generator=g, dtype=torch.float64) * 4 - 1
    case("half weighted", dn, x, False, counts=[9], rng=[-1.3, 2.1], weight=w)
    case("half density", dn, x, False, counts=[9], rng=[-1.3, 2.1], density=True)
    case("half weighted density", dn, x, False, counts=[9], rng=[-1.0, 2.0], weight=w, density=True)
    special = torch.tensor([0.5, float("nan"), float("inf"), -float("inf"), 1.0, 0.0, 2.0, -0.0])
    case("half nan and inf with range", dn, special, False, counts=[4], rng=[0.0, 1.0])
    case("half range min == max", dn, torch.tensor([1.0, 2.0, 2.5, 3.0]), False, counts=[3], rng=[2.5, 2.5])
    case("half empty", dn, torch.tensor([]), False, counts=[3])
    # Edge tensors.
    case("half edges", dn, torch.tensor([0.25, 0.5, 0.75, 1.0]), False, edges=[torch.tensor([0.0, 0.5, 1.0])])
    e = torch.tensor([-1.0, -0.25, 0.0, 0.3, 0.3, 1.0, 2.0])
    xe = torch.tensor([-1.0, -0.25, 0.0, 0.3, 1.0, 2.0, 2.5, -1.5, float("nan"), 0.1, 0.31, 1.5, 0.2999999])
    case("half custom edges", dn, xe, False, edges=[e])
    case("half custom edges weighted density", dn, xe, False, edges=[e], weight=torch.arange(13.0) / 3 - 1,
         density=True)
    case("half unsorted edges", dn, torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]), False,
         edges=[torch.tensor([0.0, 2.0, 1.0, 3.0])])
    # histogramdd with ranges and with edges.
    p = torch.stack([grid(g, 60, -1.0, 1.0, 40, dt), grid(g, 60, 0.0, 3.0, 30, dt)], 1)
    case("half dd range", dn, p, True, counts=[5, 3], rng=[-0.5, 0.5, 0.0, 3.0])
    case("half dd weighted density", dn, p, True, counts=[3, 7], rng=[-1.0, 1.0, 0.0, 3.0], weight=w[:60],
         density=True)
    case("half dd edges weighted density", dn, p, True,
         edges=[torch.tensor([-0.5, 0.0, 0.5]), torch.tensor([0.3, 1.0, 2.0, 2.9])], weight=w[:60], density=True)

lines = [
    "//! Generated by tensor/tests/make_histogram_golden.py from torch " + torch.__version__ + "; do not edit.",
    "",
    "/// One call of torch.histogram (`dd` false) or torch.histogramdd (`dd` true) and its results,",
    "/// all values in f64. Bins are `counts` (with `range` when not empty) or else `edges_in`.",
    "pub struct HistCase {",
    "    pub name: &'static str,",
    "    pub dtype: &'static str,",
    "    pub dd: bool,",
    "    pub shape: &'static [usize],",
    "    pub input: &'static [f64],",
    "    pub counts: &'static [i64],",
    "    pub edges_in: &'static [&'static [f64]],",
    "    pub range: &'static [f64],",
    "    pub weight: Option<&'static [f64]>,",
    "    pub density: bool,",
    "    pub hist_shape: &'static [usize],",
    "    pub hist: &'static [f64],",
    "    pub edges: &'static [&'static [f64]],",
    "}",
    "",
    "pub const CASES: &[HistCase] = &[",
] + cases + ["];", ""]
with open(OUT, "w") as f:
    f.write("\n".join(lines))
print("wrote", OUT, len(cases), "cases")

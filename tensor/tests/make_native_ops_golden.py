"""Writes tensor/tests/cpu/native_ops_golden.rs: torch's values and gradients (float64) for
torch.linalg.matrix_sqrth, torch.linalg.polar, torch.lobpcg (the exact extreme eigenpairs it
converges to), torch.native_layer_norm, torch.native_batch_norm (training with running stats,
evaluation), torch.native_group_norm, torch.constant_pad_nd and torch.convolution (plain, grouped,
transposed). Each case lists its inputs, torch's outputs, the cotangents and the gradients of
sum_k (out_k * cot_k).sum() for the inputs named in `grad`.

Run with a torch install: python tensor/tests/make_native_ops_golden.py
"""
import math
import os

import torch

torch.manual_seed(33)
DT = torch.float64
OUT = os.path.join(os.path.dirname(__file__), "cpu", "native_ops_golden.rs")


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    return repr(v)


def tl(t):
    t = torch.as_tensor(t).detach().double()
    dims = ", ".join(str(d) for d in t.shape)
    return f"G {{ dims: &[{dims}], data: &[{', '.join(lit(v) for v in t.flatten().tolist())}] }}"


def gl(ts):
    return "&[" + ", ".join(tl(t) for t in ts) + "]"


cases = []


def case(name, inputs, fn, grad, cot=True):
    """inputs: list of (key, tensor); grad: keys differentiated."""
    leaves = [(k, v.clone().requires_grad_(k in grad)) for k, v in inputs]
    outs = fn(dict(leaves))
    cots = [torch.randn(o.shape, dtype=DT) if (cot and o.requires_grad) else torch.zeros(o.shape, dtype=DT)
            for o in outs]
    loss = sum((o * c).sum() for o, c in zip(outs, cots) if o.requires_grad)
    grads = []
    if grad:
        loss.backward()
        grads = [v.grad for k, v in leaves if k in grad]
    keys = ", ".join(f'"{k}"' for k, _ in inputs)
    gkeys = ", ".join(f'"{k}"' for k, _ in inputs if k in grad)
    cases.append(
        f'    Case {{ name: "{name}", keys: &[{keys}], inputs: {gl([v for _, v in inputs])}, '
        f'outs: {gl(outs)}, cots: {gl(cots)}, grad_keys: &[{gkeys}], grads: {gl(grads)} }},'
    )


def sym(b):
    n = b.shape[-1]
    return b @ b.mT + n * torch.eye(n, dtype=DT)


# linalg.matrix_sqrth of A = B Bᵀ + n I (symmetric positive-definite; gradients through B).
case("matrix_sqrth_4", [("b", torch.randn(4, 4, dtype=DT))], lambda t: [torch.linalg.matrix_sqrth(sym(t["b"]))], ["b"])
case("matrix_sqrth_batch", [("b", torch.randn(2, 3, 3, dtype=DT))],
     lambda t: [torch.linalg.matrix_sqrth(sym(t["b"]))], ["b"])
# linalg.polar, square and tall, batched.
case("polar_square", [("a", torch.randn(3, 3, dtype=DT))], lambda t: list(torch.linalg.polar(t["a"])), ["a"])
case("polar_tall_batch", [("a", torch.randn(2, 5, 3, dtype=DT))], lambda t: list(torch.linalg.polar(t["a"])), ["a"])


# lobpcg: torch's iteration checked against the exact pairs, which are written (values; vectors
# with each column's sign made to put its largest-magnitude entry positive).
def lob(t, k, largest):
    a = sym(t["b"])
    e_torch, _ = torch.lobpcg(a.detach(), k=k, largest=largest)
    lam, v = torch.linalg.eigh(a)
    if largest:
        lam, v = lam.flip(-1)[..., :k], v.flip(-1)[..., :k]
    else:
        lam, v = lam[..., :k], v[..., :k]
    assert torch.allclose(e_torch, lam.detach(), rtol=1e-6, atol=1e-6), (e_torch, lam)
    idx = v.detach().abs().argmax(-2, keepdim=True)
    sign = torch.gather(v.detach(), -2, idx).sign()
    return [lam, (v * sign).detach()]


case("lobpcg_largest", [("b", torch.randn(9, 9, dtype=DT))], lambda t: lob(t, 2, True), ["b"])
case("lobpcg_smallest", [("b", torch.randn(10, 10, dtype=DT))], lambda t: lob(t, 3, False), ["b"])

# native_layer_norm
case("native_layer_norm", [("x", torch.randn(2, 3, 4, dtype=DT)), ("w", torch.randn(3, 4, dtype=DT)),
                           ("b", torch.randn(3, 4, dtype=DT))],
     lambda t: list(torch.native_layer_norm(t["x"], [3, 4], t["w"], t["b"], 1e-5)), ["x", "w", "b"])
case("native_layer_norm_noaffine", [("x", torch.randn(3, 5, dtype=DT))],
     lambda t: list(torch.native_layer_norm(t["x"], [5], None, None, 1e-3)), ["x"])


# native_batch_norm (training: running stats updated, written as extra outputs; evaluation)
def bn_train(t):
    rm, rv = t["rm"].detach().clone(), t["rv"].detach().clone()
    out = list(torch.native_batch_norm(t["x"], t["w"], t["b"], rm, rv, True, 0.2, 1e-5))
    return out + [rm, rv]


case("native_batch_norm_train", [("x", torch.randn(4, 3, 5, dtype=DT)), ("w", torch.randn(3, dtype=DT)),
                                 ("b", torch.randn(3, dtype=DT)), ("rm", torch.randn(3, dtype=DT)),
                                 ("rv", torch.rand(3, dtype=DT) + 0.5)], bn_train, ["x", "w", "b"])
case("native_batch_norm_eval", [("x", torch.randn(4, 3, dtype=DT)), ("w", torch.randn(3, dtype=DT)),
                                ("b", torch.randn(3, dtype=DT)), ("rm", torch.randn(3, dtype=DT)),
                                ("rv", torch.rand(3, dtype=DT) + 0.5)],
     lambda t: list(torch.native_batch_norm(t["x"], t["w"], t["b"], t["rm"], t["rv"], False, 0.1, 1e-5)),
     ["x", "w", "b"])
# native_group_norm
case("native_group_norm", [("x", torch.randn(2, 6, 5, dtype=DT)), ("w", torch.randn(6, dtype=DT)),
                           ("b", torch.randn(6, dtype=DT))],
     lambda t: list(torch.native_group_norm(t["x"], t["w"], t["b"], 2, 6, 5, 3, 1e-5)), ["x", "w", "b"])
case("native_group_norm_flat", [("x", torch.randn(2, 12, dtype=DT))],
     lambda t: list(torch.native_group_norm(t["x"], None, None, 2, 4, 3, 2, 1e-5)), ["x"])
# constant_pad_nd (negative pads crop)
case("constant_pad_nd", [("x", torch.randn(2, 3, 4, dtype=DT))],
     lambda t: [torch.constant_pad_nd(t["x"], [1, 2, -1, 1], 0.5)], ["x"])
# convolution
case("convolution_1d", [("x", torch.randn(2, 3, 7, dtype=DT)), ("w", torch.randn(4, 3, 3, dtype=DT)),
                        ("b", torch.randn(4, dtype=DT))],
     lambda t: [torch.convolution(t["x"], t["w"], t["b"], [2], [1], [1], False, [0], 1)], ["x", "w", "b"])
case("convolution_2d_groups", [("x", torch.randn(1, 4, 5, 6, dtype=DT)), ("w", torch.randn(6, 2, 2, 3, dtype=DT))],
     lambda t: [torch.convolution(t["x"], t["w"], None, [1, 2], [1, 0], [2, 1], False, [0, 0], 2)], ["x", "w"])
case("convolution_transposed_1d", [("x", torch.randn(2, 3, 5, dtype=DT)), ("w", torch.randn(3, 2, 3, dtype=DT)),
                                   ("b", torch.randn(2, dtype=DT))],
     lambda t: [torch.convolution(t["x"], t["w"], t["b"], [2], [1], [1], True, [1], 1)], ["x", "w", "b"])

lines = [
    f"//! Generated by tensor/tests/make_native_ops_golden.py from torch {torch.__version__}; do not edit.",
    "",
    "/// A tensor written out: dims and row-major float64 values.",
    "pub struct G {",
    "    pub dims: &'static [usize],",
    "    pub data: &'static [f64],",
    "}",
    "",
    "/// One case: named inputs, torch's outputs, the cotangents (zeros for outputs without grad) and",
    "/// the gradients of `sum_k (out_k * cot_k).sum()` for the inputs named in `grad_keys`.",
    "pub struct Case {",
    "    pub name: &'static str,",
    "    pub keys: &'static [&'static str],",
    "    pub inputs: &'static [G],",
    "    pub outs: &'static [G],",
    "    pub cots: &'static [G],",
    "    pub grad_keys: &'static [&'static str],",
    "    pub grads: &'static [G],",
    "}",
    "",
    "/// Every case, by name.",
    "pub const CASES: &[Case] = &[",
] + cases + ["];", ""]
with open(OUT, "w") as fh:
    fh.write("\n".join(lines))
print("wrote", OUT)

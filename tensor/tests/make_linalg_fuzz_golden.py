"""Writes tensor/tests/cpu/linalg_fuzz_golden.rs: a seeded random differential test of the
`torch.linalg` surface (and the matrix functions on Tensor) against torch.

Each case records its inputs (dtype, base shape, base values, then layout ops: `t a,b` transposes
the contiguous base, so a transposed input is a column-major matrix), the op's arguments as
`key=value` pairs, torch's outputs (or torch's error message), and for float64 cases with
differentiable outputs the gradients `torch.autograd.grad(outs[gidx], float inputs, upstream)`
with random upstream gradients (also recorded). The replay is tensor/tests/cpu/linalg_fuzz.rs.

Outputs that are unique only up to a gauge are compared through invariant functions, the same
in this script (`post_*`) and in the replay:
- qr: `Q @ R`, `Q^T Q` and `|R|` (R's rows are unique up to sign for a full-rank input);
- svd: `(U * S) @ Vh`, `S`, `U^T U` and `Vh Vh^T`;
- eigh: the eigenvalues, `(V * L) @ V^T` and `V^T V`;
- inv_ex / solve_ex / cholesky_ex of singular / non-SPD input: only `info` (the rest is
  LAPACK's partial work, not specified).
Gradients are taken only of these gauge-invariant outputs.

Run with a torch install: python tensor/tests/make_linalg_fuzz_golden.py
"""
import math
import os
import random

import torch

OUT = os.path.join(os.path.dirname(__file__), "cpu", "linalg_fuzz_golden.rs")
SEED = 34
N_CASES = 360
rng = random.Random(SEED)
torch.manual_seed(SEED)
DT = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "i32": torch.int32}
NAME = {v: k for k, v in DT.items()}
NAME[torch.bool] = "bool"


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = repr(v)
    return r if ("." in r or "e" in r) else r + ".0"


def gauss(*shape):
    return torch.tensor([rng.gauss(0, 1) for _ in range(math.prod(shape))], dtype=torch.float64).reshape(shape)


class In:
    def __init__(self, dt, base, vals, layout, t):
        self.dt, self.base, self.vals, self.layout, self.t = dt, base, vals, layout, t


def make_input(dt, x, layout=None):
    """`x` (float64, the logical values) as a `dt` input, transposed (column-major) at random."""
    x = x.double()
    r = x.dim()
    if layout is None:
        layout = "t" if (r >= 2 and rng.random() < 0.35) else "c"
    if layout == "t" and r >= 2:
        base = x.transpose(r - 2, r - 1).contiguous()
        ops = f"t {r - 2},{r - 1}"
    else:
        base, ops = x.contiguous(), ""
    t = base.to(DT[dt])
    vals = t.double().flatten().tolist()
    if ops:
        t = t.transpose(r - 2, r - 1)
    return In(dt, list(base.shape), vals, ops, t)


def batch_shape():
    return rng.choice([[], [], [], [2], [3], [0], [2, 1], [1, 2]])


def sq_n():
    return rng.choice([0, 1, 2, 3, 3, 4, 4, 5])


def well(batch, n):
    """Random square matrices with condition number below ~1e2."""
    while True:
        a = gauss(*batch, n, n)
        if n == 0 or a.numel() == 0 or torch.linalg.cond(a).max() < 1e2:
            return a


def singular(batch, n):
    """Exactly singular: a zero row or column (LU meets an exact zero pivot)."""
    a = well(batch, n)
    if n >= 1:
        j = rng.randrange(n)
        if rng.random() < 0.5:
            a[..., :, j] = 0.0
        else:
            a[..., j, :] = 0.0
    return a


def ill(batch, n, dt):
    """U diag(s) V^T with s from 1 down to 1e-9 (f64) / 1e-4 (f32)."""
    lo = 1e-9 if dt == "f64" else 1e-4
    q1 = torch.linalg.qr(gauss(*batch, n, n))[0]
    q2 = torch.linalg.qr(gauss(*batch, n, n))[0]
    s = torch.logspace(0, math.log10(lo), n, dtype=torch.float64) if n > 1 else torch.ones(n, dtype=torch.float64)
    return (q1 * s) @ q2.mT


def spd(batch, n):
    a = gauss(*batch, n, n)
    return a @ a.mT + n * torch.eye(n, dtype=torch.float64)


def sym(batch, n):
    a = gauss(*batch, n, n)
    return (a + a.mT) / 2


def square(batch, n, dt, kind=None):
    kind = kind or rng.choice(["well"] * 5 + ["sing", "sing", "ill"])
    if kind == "sing":
        return singular(batch, n), kind
    if kind == "ill":
        return ill(batch, n, dt), kind
    return well(batch, n), kind


def fdt():
    return rng.choice(["f32", "f64", "f64"])


def fmt_args(a):
    out = []
    for k, v in a.items():
        if isinstance(v, (list, tuple)):
            v = ",".join(str(int(x)) for x in v)
        elif isinstance(v, bool):
            v = "1" if v else "0"
        elif v is None:
            v = "none"
        elif isinstance(v, float):
            v = repr(v)
        out.append(f"{k}={v}")
    return ";".join(out)


# ---- gauge-invariant post-processing (mirrored in the replay) ----

def post_qr(q, r, mode):
    if mode == "r":
        return [r.abs()]
    return [q @ r, q.mT @ q, r.abs()]


def post_svd(u, s, vh):
    return [(u[..., :, : s.shape[-1]] * s.unsqueeze(-2)) @ vh[..., : s.shape[-1], :], s, u.mT @ u, vh @ vh.mT]


def post_eigh(l, v):
    return [l, (v * l.unsqueeze(-2)) @ v.mT, v.mT @ v]


# ---- case generators: (inputs, args, fn(*tensors) -> list of outputs, gidx, tol_cond) ----

def ordval(o):
    return {"inf": float("inf"), "-inf": float("-inf")}.get(o, o)


def g_det(op):
    dt = fdt()
    a, kind = square(batch_shape(), sq_n(), dt)
    x = make_input(dt, a)
    fns = {
        "det": lambda t: [torch.linalg.det(t)],
        "slogdet": lambda t: list(torch.linalg.slogdet(t)),
        "logdet": lambda t: [torch.logdet(t)],
        "Tensor.det": lambda t: [t.det()],
    }
    gidx = [1] if op == "slogdet" else [0]
    return [x], {}, fns[op], (gidx if kind == "well" else []), a


def g_inv(op):
    dt = fdt()
    a, kind = square(batch_shape(), sq_n(), dt)
    if rng.random() < 0.08:
        a = gauss(3, 2)  # not square
    x = make_input(dt, a)
    if op == "inv_ex":
        only_info = kind == "sing"
        return [x], {"only_info": only_info}, (lambda t: [torch.linalg.inv_ex(t)[1]] if only_info else
                                                list(torch.linalg.inv_ex(t))), [0] if kind == "well" else [], a
    fn = torch.linalg.inv if op == "inv" else (lambda t: t.inverse())
    return [x], {}, lambda t: [fn(t)], [0] if kind == "well" else [], a


def g_solve(op):
    dt = fdt()
    batch = batch_shape()
    n = sq_n()
    a, kind = square(batch, n, dt)
    left = rng.random() < 0.75
    k = rng.choice([1, 2, 3])
    vec = left and rng.random() < 0.3
    if vec:
        bshape = [n] if rng.random() < 0.5 else batch + [n]
    else:
        bb = batch if rng.random() < 0.7 else (batch[1:] if batch else [2])
        bshape = bb + ([n, k] if left else [k, n])
    b = gauss(*bshape)
    db = dt if rng.random() < 0.94 else ("f32" if dt == "f64" else "f64")
    x, y = make_input(dt, a), make_input(db, b)
    if op == "solve_ex":
        only_info = kind == "sing"
        return [x, y], {"left": left, "only_info": only_info}, (
            lambda s, t: [torch.linalg.solve_ex(s, t, left=left)[1]] if only_info else
            list(torch.linalg.solve_ex(s, t, left=left))), [0] if kind == "well" else [], a
    return [x, y], {"left": left}, lambda s, t: [torch.linalg.solve(s, t, left=left)], [0] if kind == "well" else [], a


def g_solve_triangular(op):
    dt = fdt()
    batch, n = batch_shape(), sq_n()
    upper, left, unit = rng.random() < 0.5, rng.random() < 0.7, rng.random() < 0.3
    a = gauss(*batch, n, n) + 3 * torch.eye(n, dtype=torch.float64)  # the other triangle is garbage, unused
    k = rng.choice([1, 2, 4])
    b = gauss(*batch, *([n, k] if left else [k, n]))
    x, y = make_input(dt, a), make_input(dt, b)
    return [x, y], {"upper": upper, "left": left, "unitriangular": unit}, (
        lambda s, t: [torch.linalg.solve_triangular(s, t, upper=upper, left=left, unitriangular=unit)]), [0], None


def g_lstsq(op):
    dt = fdt()
    batch = rng.choice([[], [], [2]])
    m, n = rng.choice([(4, 2), (5, 3), (3, 3), (2, 4), (6, 1), (0, 2), (3, 0)])
    driver = rng.choice(["gelsy", "gels", "gelsd", "gelss", None])
    deficient = driver in ("gelsd", "gelss") and min(m, n) >= 2 and rng.random() < 0.4
    a = gauss(*batch, m, n)
    if deficient:
        a[..., :, -1] = a[..., :, 0]
    k = rng.choice([1, 2])
    b = gauss(*batch, m, k)
    x, y = make_input(dt, a), make_input(dt, b)
    fn = lambda s, t: list(torch.linalg.lstsq(s, t, driver=driver))  # noqa: E731
    gidx = [0] if (not deficient and m >= n and driver != "gels") or (driver == "gels" and m >= n) else []
    return [x, y], {"driver": driver or "none"}, fn, gidx if m * n > 0 else [], (a if not deficient else None)


def g_cholesky(op):
    dt = fdt()
    batch, n = batch_shape(), sq_n()
    bad = n >= 1 and rng.random() < 0.2
    a = spd(batch, n)
    if bad:
        j = rng.randrange(n)
        a[..., j, j] = -1.0
    upper = rng.random() < 0.4
    x = make_input(dt, a)
    if op == "cholesky_ex":
        return [x], {"upper": upper, "only_info": bad}, (
            lambda t: [torch.linalg.cholesky_ex(t, upper=upper)[1]] if bad else
            list(torch.linalg.cholesky_ex(t, upper=upper))), [] if bad else [0], a
    return [x], {"upper": upper}, lambda t: [torch.linalg.cholesky(t, upper=upper)], [] if bad else [0], a


def g_qr(op):
    dt = fdt()
    batch = batch_shape()
    m, n = rng.choice([(3, 3), (4, 2), (2, 4), (5, 3), (1, 3), (0, 2), (4, 4)])
    mode = rng.choice(["reduced", "complete", "r"])
    a = gauss(*batch, m, n)
    x = make_input(dt, a)
    gidx = [] if mode == "r" else [0, 2]
    return [x], {"mode": mode}, lambda t: post_qr(*torch.linalg.qr(t, mode=mode), mode), gidx, None


def g_lu(op):
    dt = fdt()
    batch = batch_shape()
    m, n = rng.choice([(3, 3), (4, 2), (2, 4), (4, 4), (1, 1), (0, 0)])
    a = gauss(*batch, m, n)
    x = make_input(dt, a)
    if op == "lu":
        return [x], {}, lambda t: list(torch.linalg.lu(t)), [1, 2] if m == n else [], None
    if op == "lu_factor_ex":
        return [x], {}, lambda t: list(torch.linalg.lu_factor_ex(t)), [], None
    return [x], {}, lambda t: list(torch.linalg.lu_factor(t)), [0] if m == n else [], None


def g_lu_solve(op):
    dt = fdt()
    batch, n = batch_shape(), rng.choice([1, 2, 3, 4])
    left, adjoint = rng.random() < 0.7, rng.random() < 0.4
    a = well(batch, n)
    lu, piv = torch.linalg.lu_factor(a)
    k = rng.choice([1, 3])
    b = gauss(*batch, *([n, k] if left else [k, n]))
    x, p, y = make_input(dt, lu), make_input("i32", piv.double(), "c"), make_input(dt, b)
    return [x, p, y], {"left": left, "adjoint": adjoint}, (
        lambda s, q, t: [torch.linalg.lu_solve(s, q, t, left=left, adjoint=adjoint)]), [0], a


def g_lu_unpack(op):
    dt = fdt()
    batch = batch_shape()
    m, n = rng.choice([(3, 3), (4, 2), (2, 4)])
    lu, piv = torch.linalg.lu_factor(gauss(*batch, m, n))
    x, p = make_input(dt, lu), make_input("i32", piv.double(), "c")
    return [x, p], {}, lambda s, q: list(torch.lu_unpack(s, q)), [1, 2], None


def g_eigh(op):
    dt = fdt()
    batch, n = batch_shape(), sq_n()
    uplo = rng.choice(["L", "U"])
    a = sym(batch, n) if rng.random() < 0.6 else gauss(*batch, n, n)  # eigh reads one triangle
    x = make_input(dt, a)
    if op == "eigvalsh":
        return [x], {"uplo": uplo}, lambda t: [torch.linalg.eigvalsh(t, UPLO=uplo)], [0], None
    return [x], {"uplo": uplo}, lambda t: post_eigh(*torch.linalg.eigh(t, UPLO=uplo)), [0, 1], None


def g_svd(op):
    dt = fdt()
    batch = batch_shape()
    m, n = rng.choice([(3, 3), (4, 2), (2, 4), (5, 3), (1, 3), (0, 2), (4, 4)])
    a = gauss(*batch, m, n)
    if op == "svdvals":
        return [make_input(dt, a)], {}, lambda t: [torch.linalg.svdvals(t)], [0], None
    full = rng.random() < 0.3
    return [make_input(dt, a)], {"full_matrices": full}, (
        lambda t: post_svd(*torch.linalg.svd(t, full_matrices=full))), [0, 1], None


def g_pinv(op):
    dt = fdt()
    batch = batch_shape()
    herm = rng.random() < 0.3
    m, n = (3, 3) if herm else rng.choice([(3, 3), (4, 2), (2, 4), (4, 4), (0, 3)])
    a = gauss(*batch, m, n)
    deficient = min(m, n) >= 2 and rng.random() < 0.3
    if deficient:
        a[..., :, -1] = 0.0
    if herm:
        a = a @ a.mT if rng.random() < 0.5 else (a + a.mT) / 2
    atol = rng.choice([None, None, 0.1])
    rtol = rng.choice([None, None, 0.05])
    args = {"atol": atol, "rtol": rtol, "hermitian": herm}
    x = make_input(dt, a)
    if op == "matrix_rank":
        return [x], args, lambda t: [torch.linalg.matrix_rank(t, atol=atol, rtol=rtol, hermitian=herm)], [], None
    if op == "pinverse":
        rc = rng.choice([1e-15, 0.1])
        return [x], {"rcond": rc}, lambda t: [torch.pinverse(t, rcond=rc)], [], None
    gidx = [0] if not deficient and atol is None and rtol is None else []
    return [x], args, lambda t: [torch.linalg.pinv(t, atol=atol, rtol=rtol, hermitian=herm)], gidx, None


def g_matrix_norm(op):
    dt = fdt()
    ordn = rng.choice(["fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf", "3"])
    shape = batch_shape() + [rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4])]
    dim = rng.choice([[-2, -1], [-1, -2]] + ([[0, len(shape) - 1]] if len(shape) >= 3 else []))
    keep = rng.random() < 0.3
    odt = rng.choice([None, None, "f64"] + (["f32"] if dt == "f64" else []))
    a = gauss(*shape)
    o = ordn if ordn in ("fro", "nuc") else ordval(float(ordn) if ordn not in ("inf", "-inf") else ordn)
    args = {"ord": ordn, "dim": dim, "keepdim": keep, "dtype": odt or "none"}
    return [make_input(dt, a)], args, (
        lambda t: [torch.linalg.matrix_norm(t, ord=o, dim=tuple(dim), keepdim=keep,
                                            dtype=DT[odt] if odt else None)]), [0], None


def g_vector_norm(op):
    dt = rng.choice(["f32", "f64", "f64", "i64"])
    shape = batch_shape() + [rng.choice([1, 2, 3, 4])] * rng.choice([0, 1, 2])
    ordn = rng.choice(["2", "1", "inf", "-inf", "0", "3", "0.5", "-1"])
    r = len(shape)
    dim = None if rng.random() < 0.35 or r == 0 else sorted(rng.sample(range(r), rng.randint(1, r)))
    keep = rng.random() < 0.3
    odt = rng.choice([None, None, "f64"])
    a = gauss(*shape)
    if dt == "i64":
        a = a.mul(3).round()
    o = ordval(ordn) if ordn in ("inf", "-inf") else float(ordn)
    args = {"ord": ordn, "dim": dim if dim is not None else "none", "keepdim": keep, "dtype": odt or "none"}
    return [make_input(dt, a)], args, (
        lambda t: [torch.linalg.vector_norm(t, ord=o, dim=dim, keepdim=keep, dtype=DT[odt] if odt else None)]), (
        [0] if dt != "i64" and ordn != "0" else []), None


def g_norm(op):
    dt = fdt()
    r = rng.choice([1, 2, 2, 3])
    shape = [rng.choice([1, 2, 3, 4]) for _ in range(r)]
    ordn = rng.choice(["none", "fro", "nuc", "2", "1", "inf", "-1", "3"])
    dim = rng.choice([None, [0], [-1], [0, 1]] if r >= 2 else [None, [0]])
    keep = rng.random() < 0.3
    o = None if ordn == "none" else (ordn if ordn in ("fro", "nuc") else ordval(ordn) if "inf" in ordn else float(ordn))
    a = gauss(*shape)
    args = {"ord": ordn, "dim": dim if dim is not None else "none", "keepdim": keep}
    return [make_input(dt, a)], args, lambda t: [torch.linalg.norm(t, ord=o, dim=dim, keepdim=keep)], [0], None


def g_cond(op):
    dt = fdt()
    batch = batch_shape()
    p = rng.choice(["none", "2", "-2", "fro", "nuc", "1", "-1", "inf", "-inf", "3"])
    rect = p in ("none", "2", "-2") and rng.random() < 0.3
    if rect:
        a, kind = gauss(*batch, 4, 2), "well"
    else:
        a, kind = square(batch, sq_n(), dt)
    o = None if p == "none" else (p if p in ("fro", "nuc") else ordval(p) if "inf" in p else float(p))
    return [make_input(dt, a)], {"p": p}, lambda t: [torch.linalg.cond(t, p=o)], [0] if kind == "well" else [], (
        a if not rect else None)


def g_matrix_power(op):
    dt = fdt()
    batch, n = batch_shape(), sq_n()
    k = rng.randint(-3, 5)
    a, kind = square(batch, n, dt, "well" if rng.random() < 0.9 else "sing")
    a = a / max(1.0, float(a.abs().max()) if a.numel() else 1.0) * 1.5
    return [make_input(dt, a)], {"n": k}, lambda t: [torch.linalg.matrix_power(t, k)], [0] if kind == "well" else [], (
        a if k < 0 else None)


def g_matrix_exp(op):
    dt = fdt()
    batch, n = batch_shape(), sq_n()
    a = gauss(*batch, n, n) * rng.choice([0.1, 0.5, 1.0, 2.0])
    return [make_input(dt, a)], {}, lambda t: [torch.linalg.matrix_exp(t)], [0], None


def g_cross(op):
    dt = fdt()
    r = rng.choice([1, 2, 3])
    shape = [rng.choice([1, 2, 3]) for _ in range(r)]
    d = rng.randrange(r)
    shape[d] = 3
    s2 = [x if rng.random() < 0.7 else 1 for x in shape]
    s2[d] = 3
    if rng.random() < 0.06:
        s2[d] = 2
    dim = d - r if rng.random() < 0.5 else d
    return [make_input(dt, gauss(*shape)), make_input(dt, gauss(*s2))], {"dim": dim}, (
        lambda s, t: [torch.linalg.cross(s, t, dim=dim)]), [0], None


def g_vecdot(op):
    dt = fdt()
    shape = batch_shape() + [rng.choice([1, 2, 3, 4])]
    s2 = [x if rng.random() < 0.7 else 1 for x in shape]
    s2[-1] = shape[-1]
    dim = rng.choice([-1, len(shape) - 1])
    return [make_input(dt, gauss(*shape)), make_input(dt, gauss(*s2))], {"dim": dim}, (
        lambda s, t: [torch.linalg.vecdot(s, t, dim=dim)]), [0], None


def g_multi_dot(op):
    dt = fdt()
    k = rng.randint(2, 4)
    sizes = [rng.choice([1, 2, 3, 4]) for _ in range(k + 1)]
    shapes = [[sizes[i], sizes[i + 1]] for i in range(k)]
    if rng.random() < 0.3:
        shapes[0] = [sizes[1]]
    if rng.random() < 0.3:
        shapes[-1] = [sizes[-2]]
    ins = [make_input(dt, gauss(*s)) for s in shapes]
    return ins, {}, lambda *ts: [torch.linalg.multi_dot(list(ts))], [0], None


def g_householder(op):
    dt = fdt()
    batch = rng.choice([[], [2]])
    m, n = rng.choice([(3, 3), (4, 2), (5, 3), (3, 1)])
    k = rng.randint(1, n)
    a, tau = torch.geqrf(gauss(*batch, m, n))
    return [make_input(dt, a), make_input(dt, tau[..., :k], "c")], {}, (
        lambda s, t: [torch.linalg.householder_product(s, t)]), [0], None


def g_geqrf(op):
    dt = fdt()
    m, n = rng.choice([(3, 3), (4, 2), (2, 4)])
    return [make_input(dt, gauss(*batch_shape(), m, n))], {}, lambda t: list(torch.geqrf(t)), [], None


def g_tensorinv(op):
    dt = fdt()
    shape, ind = rng.choice([([2, 3, 6], 2), ([4, 2, 2], 1), ([2, 2, 2, 2], 2), ([6, 3, 2], 1), ([2, 3, 4], 1)])
    lead = math.prod(shape[:ind])
    a = well([], lead).reshape(shape) if lead == math.prod(shape[ind:]) else gauss(*shape)
    return [make_input(dt, a, "c")], {"ind": ind}, lambda t: [torch.linalg.tensorinv(t, ind=ind)], [0], None


def g_tensorsolve(op):
    dt = fdt()
    bshape, xshape, dims = rng.choice([([2, 3], [6], None), ([6], [2, 3], None), ([2, 2], [4], None),
                                       ([3, 2], [6], [0]), ([4], [2, 2], None)])
    n = math.prod(bshape)
    if dims is None:
        a = well([], n).reshape(bshape + xshape)
    else:
        a = well([], n).reshape(bshape + xshape).movedim(-1, 0).contiguous()  # torch moves dims[0] back
    b = gauss(*bshape)
    return [make_input(dt, a, "c"), make_input(dt, b, "c")], {"dims": dims if dims else "none"}, (
        lambda s, t: [torch.linalg.tensorsolve(s, t, dims=dims)]), [0], None


def g_diagonal(op):
    dt = fdt()
    shape = batch_shape() + [rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4])]
    r = len(shape)
    off = rng.randint(-2, 2)
    d1, d2 = rng.sample(range(-r, 0), 2) if r >= 2 else (-2, -1)
    return [make_input(dt, gauss(*shape))], {"offset": off, "dim1": d1, "dim2": d2}, (
        lambda t: [torch.linalg.diagonal(t, offset=off, dim1=d1, dim2=d2)]), [0], None


def g_vander(op):
    dt = rng.choice(["f32", "f64", "f64", "i64"])
    shape = rng.choice([[3], [4], [2, 3], [1], []])
    nn = rng.choice([None, None, 2, 4, 1])
    a = gauss(*shape)
    if dt == "i64":
        a = a.mul(2).round()
    return [make_input(dt, a, "c")], {"N": nn if nn is not None else "none"}, (
        lambda t: [torch.linalg.vander(t, N=nn)]), [0] if dt != "i64" else [], None


def g_cholesky_inverse(op):
    dt = fdt()
    batch, n = batch_shape(), rng.choice([1, 2, 3, 4])
    upper = rng.random() < 0.5
    lf = torch.linalg.cholesky(spd(batch, n), upper=upper)
    return [make_input(dt, lf)], {"upper": upper}, lambda t: [torch.cholesky_inverse(t, upper=upper)], [0], None


def g_cholesky_solve(op):
    dt = fdt()
    batch, n = batch_shape(), rng.choice([1, 2, 3, 4])
    upper = rng.random() < 0.5
    lf = torch.linalg.cholesky(spd(batch, n), upper=upper)
    b = gauss(*batch, n, rng.choice([1, 2]))
    return [make_input(dt, b), make_input(dt, lf)], {"upper": upper}, (
        lambda s, t: [torch.cholesky_solve(s, t, upper=upper)]), [0], None


def g_ldl(op):
    dt = fdt()
    batch, n = batch_shape(), rng.choice([1, 2, 3, 4])
    a = sym(batch, n)
    x = make_input(dt, a)
    if op == "ldl_solve":
        ld, piv = torch.linalg.ldl_factor(a.to(DT[dt]))
        b = gauss(*batch, n, 2)
        return [make_input(dt, ld.double()), make_input("i32", piv.double(), "c"), make_input(dt, b)], {}, (
            lambda s, q, t: [torch.linalg.ldl_solve(s, q, t)]), [], a
    return [x], {}, lambda t: list(torch.linalg.ldl_factor(t)), [], None


def g_bad(op):
    """Bad input: torch's error."""
    k = rng.randrange(8)
    if k == 0:
        return [make_input("i64", gauss(3, 3).round(), "c")], {"which": "inv"}, lambda t: [torch.linalg.inv(t)], [], None
    if k == 1:
        return [make_input("f64", gauss(3), "c")], {"which": "det"}, lambda t: [torch.linalg.det(t)], [], None
    if k == 2:
        return [make_input("f64", gauss(2, 3), "c")], {"which": "cholesky"}, (
            lambda t: [torch.linalg.cholesky(t)]), [], None
    if k == 3:
        return [make_input("f64", well([], 3), "c"), make_input("f64", gauss(4, 2), "c")], {"which": "solve"}, (
            lambda s, t: [torch.linalg.solve(s, t)]), [], None
    if k == 4:
        return [make_input("f64", gauss(2, 3), "c")], {"which": "eigh"}, lambda t: [torch.linalg.eigvalsh(t)], [], None
    if k == 5:
        return [make_input("f64", gauss(3, 3), "c")], {"which": "matrix_norm"}, (
            lambda t: [torch.linalg.matrix_norm(t, ord=3.0)]), [], None
    if k == 6:
        return [make_input("i64", gauss(3, 3).round(), "c")], {"which": "svd"}, lambda t: [torch.linalg.svdvals(t)], [], None
    return [make_input("f64", gauss(3, 2), "c"), make_input("f64", gauss(3, 2), "c")], {"which": "cross"}, (
        lambda s, t: [torch.linalg.cross(s, t)]), [], None


GENS = {
    "det": g_det, "slogdet": g_det, "logdet": g_det, "Tensor.det": g_det,
    "inv": g_inv, "inv_ex": g_inv, "Tensor.inverse": g_inv,
    "solve": g_solve, "solve_ex": g_solve, "solve_triangular": g_solve_triangular, "lstsq": g_lstsq,
    "cholesky": g_cholesky, "cholesky_ex": g_cholesky, "qr": g_qr,
    "lu": g_lu, "lu_factor": g_lu, "lu_factor_ex": g_lu, "lu_solve": g_lu_solve, "lu_unpack": g_lu_unpack,
    "eigh": g_eigh, "eigvalsh": g_eigh, "svd": g_svd, "svdvals": g_svd,
    "pinv": g_pinv, "matrix_rank": g_pinv, "pinverse": g_pinv,
    "matrix_norm": g_matrix_norm, "vector_norm": g_vector_norm, "norm": g_norm, "cond": g_cond,
    "matrix_power": g_matrix_power, "matrix_exp": g_matrix_exp, "cross": g_cross, "vecdot": g_vecdot,
    "multi_dot": g_multi_dot, "householder_product": g_householder, "geqrf": g_geqrf,
    "tensorinv": g_tensorinv, "tensorsolve": g_tensorsolve, "diagonal": g_diagonal, "vander": g_vander,
    "cholesky_inverse": g_cholesky_inverse, "cholesky_solve": g_cholesky_solve,
    "ldl_factor": g_ldl, "ldl_solve": g_ldl, "bad": g_bad,
}
OPS = list(GENS)
# The random tail draws the core solvers / decompositions / norms twice as often.
WEIGHTED = OPS + ["solve", "cond", "matrix_exp", "matrix_norm", "qr", "svd", "det", "inv", "eigh", "lstsq",
                  "cholesky", "lu", "matrix_rank", "solve_triangular", "norm", "vector_norm"]


def cond_of(a):
    if a is None or a.numel() == 0:
        return 1.0
    c = torch.linalg.cond(a.double()).max().item()
    return 1e300 if not math.isfinite(c) else c


def out_rec(t):
    return (NAME[t.dtype], list(t.shape), t.detach().double().flatten().tolist())


cases = []
for cid in range(N_CASES):
    op = OPS[cid % len(OPS)] if cid < 2 * len(OPS) else rng.choice(WEIGHTED)
    ins, args, fn, gidx, cmat = GENS[op](op)
    ts = [i.t for i in ins]
    err = None
    try:
        outs = fn(*ts)
    except Exception as e:  # torch raised: record the message
        outs, err = None, str(e).split("\n")[0]
    grads = None
    gouts = None
    gerr = None
    if outs is not None and gidx and all(i.dt == "f64" for i in ins if i.dt.startswith("f")) and \
            ins[0].dt == "f64" and all(outs[k].numel() > 0 for k in gidx):
        leaves = [t.detach().clone().requires_grad_(True) if t.dtype.is_floating_point else t for t in ts]
        flo = [lv for lv in leaves if lv.dtype.is_floating_point]
        o2 = fn(*leaves)
        sel = [o2[k] for k in gidx]
        gouts = [gauss(*o.shape) for o in sel]
        try:
            gs = torch.autograd.grad(sel, flo, gouts, allow_unused=True)
            grads = [g if g is not None else torch.zeros_like(f) for g, f in zip(gs, flo)]
        except Exception as e:
            gerr = str(e).split("\n")[0]
            if "inplace operation" in gerr:  # torch's own autograd bug (cond through inv_ex): no case
                gouts, gerr = None, None
    c = cond_of(cmat) if cmat is not None and cmat.dim() >= 2 and cmat.shape[-1] == cmat.shape[-2] else 1.0
    cases.append(dict(id=cid, op=op, fn=fn, args=fmt_args(args), ins=ins, outs=outs, err=err, gidx=gidx if gouts else [],
                      gouts=gouts, grads=grads, gerr=gerr, cond=min(c, 1e300)))


def arr(vals):
    return "&[" + ", ".join(lit(v) for v in vals) + "]"


def dims(s):
    return "&[" + ", ".join(str(d) for d in s) + "]"


lines = [
    f"//! Generated by tensor/tests/make_linalg_fuzz_golden.py from torch {torch.__version__} (seed {SEED}); "
    "do not edit.",
    "",
    "#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]",
    "",
    "/// One input: dtype, base shape, base values (row-major, in f64), layout ops to apply.",
    "pub struct In {",
    "    /// The dtype's short name (`f32`, `f64`, `i64`, `i32`).",
    "    pub dtype: &'static str,",
    "    /// The contiguous tensor's shape before the layout ops.",
    "    pub base: &'static [usize],",
    "    /// The contiguous tensor's values.",
    "    pub vals: &'static [f64],",
    "    /// `|`-separated layout ops (`t a,b`: transpose).",
    "    pub layout: &'static str,",
    "}",
    "",
    "/// One tensor of torch's: dtype, shape, values (row-major, in f64).",
    "pub struct Out {",
    "    /// The dtype's short name.",
    "    pub dtype: &'static str,",
    "    /// The shape.",
    "    pub shape: &'static [usize],",
    "    /// The values.",
    "    pub vals: &'static [f64],",
    "}",
    "",
    "/// One fuzz case.",
    "pub struct Case {",
    "    /// Case number.",
    "    pub id: usize,",
    "    /// The op's name in the replay's table.",
    "    pub op: &'static str,",
    "    /// `key=value` pairs separated by `;` (lists comma-separated, `none` for None).",
    "    pub args: &'static str,",
    "    /// The inputs.",
    "    pub inputs: &'static [In],",
    "    /// torch's outputs (after the gauge-invariant post-processing), or `Err(message)`.",
    "    pub outputs: Result<&'static [Out], &'static str>,",
    "    /// The outputs the gradient case differentiates (empty: no gradient case).",
    "    pub gidx: &'static [usize],",
    "    /// The upstream gradients, one per `gidx` entry.",
    "    pub gouts: &'static [Out],",
    "    /// torch's gradients w.r.t. the float inputs in order (zeros where unused), or `Err(message)`.",
    "    pub grads: Result<&'static [Out], &'static str>,",
    "    /// The 2-norm condition number of the case's main matrix (1 where not applicable).",
    "    pub cond: f64,",
    "}",
    "",
    "/// The cases.",
    "pub const CASES: &[Case] = &[",
]


def rstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def outs_block(ts, indent):
    pad = " " * indent
    return ["&["] + [f'{pad}    Out {{ dtype: "{NAME[t.dtype]}", shape: {dims(t.shape)}, '
                     f'vals: {arr(t.detach().double().flatten().tolist())} }},' for t in ts] + [f"{pad}]"]


for c in cases:
    lines.append("    Case {")
    lines.append(f"        id: {c['id']},")
    lines.append(f"        op: {rstr(c['op'])},")
    lines.append(f"        args: {rstr(c['args'])},")
    lines.append("        inputs: &[")
    for i in c["ins"]:
        lines.append(f'            In {{ dtype: "{i.dt}", base: {dims(i.base)}, vals: {arr(i.vals)}, '
                     f'layout: "{i.layout}" }},')
    lines.append("        ],")
    if c["outs"] is not None:
        b = outs_block(c["outs"], 8)
        lines.append("        outputs: Ok(" + b[0])
        lines.extend(b[1:-1])
        lines.append(b[-1] + "),")
    else:
        lines.append(f"        outputs: Err({rstr(c['err'])}),")
    lines.append("        gidx: &[" + ", ".join(str(k) for k in c["gidx"]) + "],")
    if c["gouts"]:
        b = outs_block(c["gouts"], 8)
        lines.append("        gouts: " + b[0])
        lines.extend(b[1:-1])
        lines.append(b[-1] + ",")
    else:
        lines.append("        gouts: &[],")
    if c["grads"] is not None:
        b = outs_block(c["grads"], 8)
        lines.append("        grads: Ok(" + b[0])
        lines.extend(b[1:-1])
        lines.append(b[-1] + "),")
    elif c["gerr"] is not None:
        lines.append(f"        grads: Err({rstr(c['gerr'])}),")
    else:
        lines.append("        grads: Ok(&[]),")
    lines.append(f"        cond: {lit(c['cond'])},")
    lines.append("    },")
lines.append("];")
lines.append("")
with open(OUT, "w") as f:
    f.write("\n".join(lines))
n_err = sum(c["outs"] is None for c in cases)
n_grad = sum(bool(c["gidx"]) for c in cases)
print(f"wrote {OUT}: {len(cases)} cases ({n_err} torch errors, {n_grad} gradient cases)")

"""Writes tensor/tests/cpu/linalg3_golden.rs: torch's values, gradients and error messages for
oxtorch_tensor::linalg's lstsq, matrix_exp, cond, tensorinv, tensorsolve, cholesky_inverse,
householder_product, vecdot and vander. The format is make_linalg2_golden.py's (see
make_linalg_golden.py's docstring); tensor/tests/cpu/linalg3.rs replays the cases by kind. Integer
outputs (ranks) are stored as f64 values with their dtype name.

Run: /work/.refenv/bin/python tensor/tests/make_linalg3_golden.py (from the repository root), then
`rustfmt --edition 2021 tensor/tests/cpu/linalg3_golden.rs`.
"""

import math
import os

import torch

L = torch.linalg
torch.manual_seed(0)
F64, F32 = torch.float64, torch.float32
DTYPE_NAMES = {F64: "float64", F32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
               torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}


def randn(*shape):
    return torch.randn(*shape, dtype=F64)


def eye(n):
    return torch.eye(n, dtype=F64)


def well(*shape):
    """Random square matrices made well-conditioned (diagonally dominant)."""
    return randn(*shape) + 3.0 * eye(shape[-1])


def f64(values):
    return torch.tensor(values, dtype=F64)


def parse_ord(s):
    """A cond order: None, an int (torch prints ±1 as integers), inf or a string."""
    if s == "none":
        return None
    if s in ("inf", "-inf"):
        return float(s)
    try:
        return int(s)
    except ValueError:
        return s


def parse_dims(s):
    if s in ("", "none"):
        return None
    return tuple(int(d) for d in s.split(","))


def opt(s, kind):
    return None if s == "none" else kind(s)


def run(kind, p, t):
    """The call of a kind: its outputs (a list)."""
    A, B = t.get("A"), t.get("B")
    if kind == "lstsq":
        return list(L.lstsq(A, B, rcond=opt(p["rcond"], float), driver=opt(p["driver"], str)))
    if kind == "matrix_exp":
        return [L.matrix_exp(A)]
    if kind == "cond":
        return [L.cond(A, parse_ord(p["p"]))]
    if kind == "tensorinv":
        return [L.tensorinv(A, ind=int(p["ind"]))]
    if kind == "tensorsolve":
        return [L.tensorsolve(A, B, dims=parse_dims(p["dims"]))]
    if kind == "cholesky_inverse":
        return [torch.cholesky_inverse(A, upper=p["upper"] == "true")]
    if kind == "householder_product":
        return [L.householder_product(A, B)]
    if kind == "vecdot":
        return [L.vecdot(A, B, dim=int(p["dim"]))]
    if kind == "vander":
        return [L.vander(A, N=opt(p["N"], int))]
    raise ValueError(kind)


CASES = []
FAILURES = []


def case(name, kind, params, inputs, grads=(), weights=None, dtype=F64, tol=None, skip=()):
    """A golden case. `weights`: the indices of the outputs in the loss (default: all, when `grads`);
    `skip`: outputs not compared."""
    CASES.append(dict(name=name, kind=kind, params=params, inputs=inputs, grads=list(grads), weights=weights,
                      dtype=dtype, tol=tol, skip=list(skip)))


def failure(name, kind, params, inputs, backward=False, weights=(0,)):
    FAILURES.append(dict(name=name, kind=kind, params=params, inputs=inputs, backward=backward, weights=weights))


# --- lstsq ----------------------------------------------------------------------------------------
def lsq(driver, rcond="none"):
    return {"driver": driver, "rcond": rcond}


for drv in ("none", "gels", "gelsy", "gelsd", "gelss"):
    with_res = [0, 1] if drv in ("gels", "gelsd", "gelss") else [0]
    case(f"lstsq_tall_{drv}", "lstsq", lsq(drv), {"A": randn(5, 3), "B": randn(5, 2)}, ["A", "B"], weights=with_res)
for drv in ("gelsy", "gelsd"):
    case(f"lstsq_wide_{drv}", "lstsq", lsq(drv), {"A": randn(3, 5), "B": randn(3, 2)}, ["A", "B"], weights=[0])
case("lstsq_vector_gels", "lstsq", lsq("gels"), {"A": randn(5, 3), "B": randn(5)}, ["A", "B"], weights=[0, 1])
case("lstsq_batch_vectors_gelsd", "lstsq", lsq("gelsd"), {"A": randn(2, 4, 3), "B": randn(2, 4)}, ["A", "B"],
     weights=[0, 1])
case("lstsq_broadcast_gelsy", "lstsq", lsq("gelsy"), {"A": randn(2, 1, 4, 3), "B": randn(3, 4, 1).unsqueeze(0)}, ["A", "B"],
     weights=[0])
case("lstsq_square_gelss", "lstsq", lsq("gelss"), {"A": well(3, 3), "B": randn(3, 2)}, ["A", "B"], weights=[0])
case("lstsq_rank_deficient_gelsd", "lstsq", lsq("gelsd"),
     {"A": f64([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0], [1.0, 2.0]]), "B": randn(4, 2)})
case("lstsq_rcond_gelss", "lstsq", lsq("gelss", "0.5"), {"A": f64([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]]),
                                                         "B": randn(3, 1)})
case("lstsq_f32_gelsd", "lstsq", lsq("gelsd"), {"A": randn(5, 3), "B": randn(5, 2)}, ["A", "B"], weights=[0, 1],
     dtype=F32)
case("lstsq_f32_default", "lstsq", lsq("none"), {"A": randn(4, 4), "B": randn(4, 1)}, ["A", "B"], weights=[0],
     dtype=F32)
failure("lstsq_driver", "lstsq", lsq("foo"), {"A": randn(5, 3), "B": randn(5, 2)})
failure("lstsq_1d", "lstsq", lsq("none"), {"A": randn(3), "B": randn(3, 2)})
failure("lstsq_0d_other", "lstsq", lsq("none"), {"A": randn(5, 3), "B": f64(1.0)})
failure("lstsq_dims", "lstsq", lsq("none"), {"A": randn(5, 3), "B": randn(2, 2, 5, 2)})
failure("lstsq_rows", "lstsq", lsq("none"), {"A": randn(5, 3), "B": randn(4, 2)})
failure("lstsq_rows_vector", "lstsq", lsq("none"), {"A": randn(5, 3), "B": randn(4)})
failure("lstsq_dtypes", "lstsq", lsq("none"), {"A": randn(5, 3), "B": randn(5, 2).float()})
failure("lstsq_long", "lstsq", lsq("none"), {"A": torch.ones(5, 3, dtype=torch.int64),
                                             "B": torch.ones(5, 2, dtype=torch.int64)})
failure("lstsq_batch_one_less", "lstsq", lsq("none"), {"A": randn(2, 5, 3), "B": randn(5, 4)})
failure("lstsq_batch_mismatch", "lstsq", lsq("none"), {"A": randn(2, 5, 3), "B": randn(3, 5, 2)})

# --- matrix_exp -----------------------------------------------------------------------------------
case("matrix_exp_small", "matrix_exp", {}, {"A": randn(3, 3) * 0.1}, ["A"])
case("matrix_exp_large", "matrix_exp", {}, {"A": randn(3, 3) * 2.0}, ["A"])
case("matrix_exp_batch", "matrix_exp", {}, {"A": randn(2, 3, 3) * 0.6}, ["A"])
case("matrix_exp_nilpotent", "matrix_exp", {}, {"A": f64([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])},
     ["A"])
case("matrix_exp_1x1", "matrix_exp", {}, {"A": randn(2, 1, 1)}, ["A"])
case("matrix_exp_empty", "matrix_exp", {}, {"A": randn(2, 0, 0)})
case("matrix_exp_f32", "matrix_exp", {}, {"A": randn(3, 3)}, ["A"], dtype=F32)
failure("matrix_exp_1d", "matrix_exp", {}, {"A": randn(3)})
failure("matrix_exp_nonsquare", "matrix_exp", {}, {"A": randn(2, 3)})
failure("matrix_exp_long", "matrix_exp", {}, {"A": torch.ones(2, 2, dtype=torch.int64)})

# --- cond -----------------------------------------------------------------------------------------
# (torch 2.15's backward of the orders that go through the inverse fails: it writes the saved
# inverse in place; those cases compare values only, and their gradients are checked numerically.)
for p in ("none", "2", "-2", "1", "-1", "inf", "-inf", "fro", "nuc"):
    case(f"cond_{p}".replace("-", "neg"), "cond", {"p": p}, {"A": well(2, 3, 3)},
         ["A"] if p in ("none", "2", "-2", "nuc") else [])
case("cond_rect_none", "cond", {"p": "none"}, {"A": randn(2, 4)}, ["A"])
case("cond_rect_neg2", "cond", {"p": "-2"}, {"A": randn(4, 3)}, ["A"])
case("cond_f32_1", "cond", {"p": "1"}, {"A": well(3, 3)}, dtype=F32)
case("cond_f32_none", "cond", {"p": "none"}, {"A": well(3, 3)}, ["A"], dtype=F32)
case("cond_empty", "cond", {"p": "1"}, {"A": randn(2, 0, 0)})
case("cond_singular_inf", "cond", {"p": "inf"}, {"A": torch.zeros(3, 3, dtype=F64)})
case("cond_singular_fro", "cond", {"p": "fro"}, {"A": torch.stack([well(2, 2), torch.zeros(2, 2, dtype=F64)])})
failure("cond_nonsquare_1", "cond", {"p": "1"}, {"A": randn(2, 3)})
failure("cond_nonsquare_neginf", "cond", {"p": "-inf"}, {"A": randn(3, 2)})
failure("cond_nonsquare_fro", "cond", {"p": "fro"}, {"A": randn(2, 3)})
failure("cond_order_3", "cond", {"p": "3"}, {"A": well(3, 3)})
failure("cond_order_foo", "cond", {"p": "foo"}, {"A": well(3, 3)})
failure("cond_1d", "cond", {"p": "none"}, {"A": randn(3)})
failure("cond_long_none", "cond", {"p": "none"}, {"A": torch.ones(3, 3, dtype=torch.int64)})
failure("cond_long_1", "cond", {"p": "1"}, {"A": torch.ones(3, 3, dtype=torch.int64)})

# --- tensorinv / tensorsolve ----------------------------------------------------------------------
case("tensorinv_ind2", "tensorinv", {"ind": "2"}, {"A": well(6, 6).reshape(2, 3, 6)}, ["A"])
case("tensorinv_ind1", "tensorinv", {"ind": "1"}, {"A": well(4, 4).reshape(4, 2, 2)}, ["A"])
case("tensorinv_f32", "tensorinv", {"ind": "1"}, {"A": well(4, 4).reshape(4, 2, 2)}, ["A"], dtype=F32)
failure("tensorinv_shapes", "tensorinv", {"ind": "2"}, {"A": randn(2, 3, 4, 2)})
failure("tensorinv_ind0", "tensorinv", {"ind": "0"}, {"A": randn(4, 4)})
failure("tensorinv_ind_large", "tensorinv", {"ind": "3"}, {"A": randn(4, 4)})
failure("tensorinv_singular", "tensorinv", {"ind": "2"}, {"A": torch.zeros(2, 2, 4, dtype=F64)})
failure("tensorinv_long", "tensorinv", {"ind": "2"}, {"A": torch.ones(2, 2, 4, dtype=torch.int64)})
case("tensorsolve", "tensorsolve", {"dims": "none"}, {"A": well(6, 6).reshape(2, 3, 6), "B": randn(2, 3)},
     ["A", "B"])
case("tensorsolve_dims", "tensorsolve", {"dims": "0"}, {"A": well(6, 6).T.reshape(6, 2, 3), "B": randn(2, 3)},
     ["A", "B"])
case("tensorsolve_f32", "tensorsolve", {"dims": "none"}, {"A": well(4, 4).reshape(2, 2, 4), "B": randn(2, 2)},
     ["A", "B"], dtype=F32)
failure("tensorsolve_shapes", "tensorsolve", {"dims": "none"}, {"A": randn(2, 3, 5), "B": randn(2, 3)})
failure("tensorsolve_dtypes", "tensorsolve", {"dims": "none"}, {"A": randn(2, 3, 6), "B": randn(2, 3).float()})
failure("tensorsolve_singular", "tensorsolve", {"dims": "none"},
        {"A": torch.zeros(2, 3, 6, dtype=F64), "B": randn(2, 3)})
failure("tensorsolve_long", "tensorsolve", {"dims": "none"},
        {"A": torch.ones(2, 3, 6, dtype=torch.int64), "B": torch.ones(2, 3, dtype=torch.int64)})

# --- cholesky_inverse -----------------------------------------------------------------------------
for up in ("true", "false"):
    x = randn(3, 3)
    chol = L.cholesky(x @ x.mT + 3 * eye(3), upper=up == "true")
    case(f"cholesky_inverse_u{up[0]}", "cholesky_inverse", {"upper": up}, {"A": chol}, ["A"])
case("cholesky_inverse_batch", "cholesky_inverse", {"upper": "false"}, {"A": well(2, 3, 3).tril()}, ["A"])
case("cholesky_inverse_full_lower", "cholesky_inverse", {"upper": "false"}, {"A": well(3, 3)}, ["A"])
case("cholesky_inverse_full_upper", "cholesky_inverse", {"upper": "true"}, {"A": well(3, 3)}, ["A"])
case("cholesky_inverse_f32", "cholesky_inverse", {"upper": "true"}, {"A": well(3, 3).triu()}, ["A"], dtype=F32)
case("cholesky_inverse_empty", "cholesky_inverse", {"upper": "false"}, {"A": randn(2, 0, 0)})
failure("cholesky_inverse_1d", "cholesky_inverse", {"upper": "false"}, {"A": randn(3)})
failure("cholesky_inverse_nonsquare", "cholesky_inverse", {"upper": "false"}, {"A": randn(2, 3)})
failure("cholesky_inverse_long", "cholesky_inverse", {"upper": "false"}, {"A": torch.ones(3, 3, dtype=torch.int64)})
failure("cholesky_inverse_half", "cholesky_inverse", {"upper": "false"}, {"A": torch.ones(3, 3, dtype=torch.half)})
failure("cholesky_inverse_singular", "cholesky_inverse", {"upper": "false"},
        {"A": torch.stack([well(3, 3).tril(), f64([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])])})

# --- householder_product --------------------------------------------------------------------------
case("householder_product_4x3_k2", "householder_product", {}, {"A": randn(4, 3), "B": randn(2)}, ["A", "B"])
case("householder_product_geqrf", "householder_product", {}, dict(zip("AB", torch.geqrf(randn(4, 3)))),
     ["A", "B"])
case("householder_product_batch", "householder_product", {}, {"A": randn(2, 3, 3), "B": randn(2, 2)}, ["A", "B"])
case("householder_product_k0", "householder_product", {}, {"A": randn(4, 3), "B": randn(0)})
case("householder_product_f32", "householder_product", {}, {"A": randn(4, 2), "B": randn(2)}, ["A", "B"],
     dtype=F32)
failure("householder_product_1d", "householder_product", {}, {"A": randn(4), "B": randn(0)})
failure("householder_product_wide", "householder_product", {}, {"A": randn(3, 4), "B": randn(2)})
failure("householder_product_tau_long", "householder_product", {}, {"A": randn(4, 3), "B": randn(4)})
failure("householder_product_tau_rank", "householder_product", {}, {"A": randn(4, 3), "B": randn(1, 2)})
failure("householder_product_tau_batch", "householder_product", {}, {"A": randn(2, 4, 3), "B": randn(3, 2)})
failure("householder_product_dtypes", "householder_product", {}, {"A": randn(4, 3), "B": randn(2).float()})
failure("householder_product_long", "householder_product", {},
        {"A": torch.ones(4, 3, dtype=torch.int64), "B": torch.ones(2, dtype=torch.int64)})

# --- vecdot / vander ------------------------------------------------------------------------------
case("vecdot_broadcast", "vecdot", {"dim": "-1"}, {"A": randn(2, 3), "B": randn(3)}, ["A", "B"])
case("vecdot_dim0", "vecdot", {"dim": "0"}, {"A": randn(3, 2), "B": randn(3, 1)}, ["A", "B"])
case("vecdot_f32", "vecdot", {"dim": "-1"}, {"A": randn(2, 4), "B": randn(2, 4)}, ["A", "B"], dtype=F32)
failure("vecdot_long", "vecdot", {"dim": "-1"},
        {"A": torch.ones(3, dtype=torch.int64), "B": torch.ones(3, dtype=torch.int64)})
failure("vecdot_dtypes", "vecdot", {"dim": "-1"}, {"A": randn(3), "B": randn(3).float()})
case("vander_batch", "vander", {"N": "none"}, {"A": randn(2, 3)}, ["A"])
case("vander_n4", "vander", {"N": "4"}, {"A": randn(3)}, ["A"])
case("vander_long", "vander", {"N": "3"}, {"A": torch.tensor([1, -2, 3])})
case("vander_f32", "vander", {"N": "3"}, {"A": randn(2)}, ["A"], dtype=F32)
failure("vander_n1", "vander", {"N": "1"}, {"A": randn(3)})
failure("vander_scalar", "vander", {"N": "none"}, {"A": f64(2.0)})
failure("vander_half", "vander", {"N": "none"}, {"A": randn(3).half()})
failure("vander_bool", "vander", {"N": "none"}, {"A": torch.tensor([True, False])})


# --- writing --------------------------------------------------------------------------------------
def lit(x):
    if math.isnan(x):
        return "f64::NAN"
    if math.isinf(x):
        return "f64::INFINITY" if x > 0 else "f64::NEG_INFINITY"
    return repr(float(x))


def tensor_lit(t):
    dims = ", ".join(str(d) for d in t.shape)
    vals = ", ".join(lit(v) for v in t.detach().to(F64).flatten().tolist())
    return f'T {{ dtype: "{DTYPE_NAMES[t.dtype]}", dims: &[{dims}], data: &[{vals}] }}'


def params_lit(p):
    return "&[" + ", ".join(f'("{k}", "{v}")' for k, v in p.items()) + "]"


def loss_of(outs, leaves, weights):
    total = None
    for i in weights:
        term = (outs[i] * leaves[f"w{i}"]).sum()
        total = term if total is None else total + term
    return total


lines = [
    "// @generated by tensor/tests/make_linalg3_golden.py from torch "
    f"{torch.__version__} (CPU); do not edit.",
    "",
    "// (torch's values, some of which happen to equal named constants)",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
for c in CASES:
    dt = c["dtype"]
    inputs = {k: (v.to(dt) if v.is_floating_point() else v) for k, v in c["inputs"].items()}
    probe = run(c["kind"], c["params"], {k: v.clone() for k, v in inputs.items()})
    weights = c["weights"] if c["weights"] is not None else (list(range(len(probe))) if c["grads"] else [])
    for i in weights:
        inputs[f"w{i}"] = torch.randn(tuple(probe[i].shape), dtype=F64).to(probe[i].dtype)
    leaves = {k: v.detach().clone().requires_grad_(k in c["grads"]) for k, v in inputs.items()}
    outs = run(c["kind"], c["params"], leaves)
    if c["grads"]:
        loss_of(outs, leaves, weights).backward()
    tol = c["tol"] if c["tol"] is not None else (2e-4 if dt == F32 else 1e-8)
    lines.append("    Golden {")
    lines.append(f'        name: "{c["name"]}",')
    lines.append(f'        kind: "{c["kind"]}",')
    lines.append(f"        params: {params_lit(c['params'])},")
    lines.append(f"        tol: {tol!r},")
    lines.append("        skip: &[" + ", ".join(str(i) for i in c["skip"]) + "],")
    lines.append("        inputs: &[")
    for k, v in inputs.items():
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append("        outs: &[")
    for o in outs:
        lines.append(f"            {tensor_lit(o)},")
    lines.append("        ],")
    lines.append("        grads: &[")
    for k in c["grads"]:
        lines.append(f'            ("{k}", {tensor_lit(leaves[k].grad)}),')
    lines.append("        ],")
    lines.append("    },")
    print(f"{c['name']:36s} outs={[tuple(o.shape) for o in outs]}")
lines.append("];")
lines.append("")
lines.append("#[allow(clippy::approx_constant)]")
lines.append("const FAILURES: &[Failure] = &[")
for f in FAILURES:
    leaves = {k: v.detach().clone().requires_grad_(f["backward"] and k == "A") for k, v in f["inputs"].items()}
    try:
        outs = run(f["kind"], f["params"], leaves)
        if not f["backward"]:
            raise SystemExit(f"{f['name']}: torch did not refuse it")
        loss_of(outs, leaves, f["weights"]).backward()
        raise SystemExit(f"{f['name']}: torch's backward did not refuse it")
    except (RuntimeError, NotImplementedError, IndexError, ValueError) as e:
        message = str(e).split("\n")[0]
    lines.append("    Failure {")
    lines.append(f'        name: "{f["name"]}",')
    lines.append(f'        kind: "{f["kind"]}",')
    lines.append(f"        params: {params_lit(f['params'])},")
    lines.append(f"        backward: {'true' if f['backward'] else 'false'},")
    lines.append("        inputs: &[")
    for k, v in f["inputs"].items():
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    assert '"#' not in message, message
    lines.append(f'        message: r#"{message}"#,')
    lines.append("    },")
    print(f"{f['name']:36s} {message}")
lines.append("];")

names = [c["name"] for c in CASES] + [f["name"] for f in FAILURES]
assert len(names) == len(set(names)), "duplicate case names"
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu", "linalg3_golden.rs")
with open(path, "w") as fh:
    fh.write("\n".join(lines) + "\n")
print(f"wrote {len(CASES)} cases and {len(FAILURES)} failures to {path}")

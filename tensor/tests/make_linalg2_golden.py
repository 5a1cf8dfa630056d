"""Writes tensor/tests/cpu/linalg2_golden.rs: torch's values, gradients and error messages for
oxtorch_tensor::linalg's solve_triangular, cholesky_solve, lu_factor(_ex), lu, lu_solve,
matrix_power, multi_dot, inv_ex and solve_ex. The format is make_linalg_golden.py's (see its
docstring); tensor/tests/cpu/linalg2.rs replays the cases by kind. Integer outputs (pivots, info)
are stored as f64 values with their dtype name.

Run: /work/.refenv/bin/python tensor/tests/make_linalg2_golden.py (from the repository root).
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


def spd(*shape):
    x = randn(*shape)
    return x @ x.mT + shape[-1] * eye(shape[-1])


def sym(*shape):
    x = randn(*shape)
    return x + x.mT


def f64(values):
    return torch.tensor(values, dtype=F64)


def opt_float(s):
    return None if s == "none" else float(s)


def parse_ord(s):
    if s == "none":
        return None
    try:
        return float(s)
    except ValueError:
        return s


def parse_dims(s):
    if s in ("", "none"):
        return None
    return tuple(int(d) for d in s.split(","))


def run(kind, p, t):
    """The call of a kind: its outputs (a list)."""
    A, B, C = t.get("A"), t.get("B"), t.get("C")
    if kind == "solve_triangular":
        return [L.solve_triangular(A, B, upper=p["upper"] == "true", left=p["left"] == "true",
                                   unitriangular=p["unit"] == "true")]
    if kind == "cholesky_solve":
        return [torch.cholesky_solve(B, A, upper=p["upper"] == "true")]
    if kind == "lu_factor":
        return list(L.lu_factor(A))
    if kind == "lu_factor_ex":
        return list(L.lu_factor_ex(A))
    if kind == "lu":
        return list(L.lu(A))
    if kind == "lu_solve":
        LU, piv = L.lu_factor(A)
        return [L.lu_solve(LU, piv, B, left=p["left"] == "true", adjoint=p["adjoint"] == "true")]
    if kind == "lu_solve_raw":
        return [L.lu_solve(A, C, B, left=p["left"] == "true", adjoint=p["adjoint"] == "true")]
    if kind == "matrix_power":
        return [L.matrix_power(A, int(p["n"]))]
    if kind == "multi_dot":
        return [L.multi_dot([t[k] for k in p["names"].split(",")])]
    if kind == "inv_ex":
        return list(L.inv_ex(A))
    if kind == "solve_ex":
        return list(L.solve_ex(A, B, left=p["left"] == "true"))
    raise ValueError(kind)


CASES = []
FAILURES = []


def case(name, kind, params, inputs, grads=(), weights=None, dtype=F64, tol=None, skip=()):
    """A golden case. `weights`: the indices of the outputs in the loss (default: all, when `grads`);
    `skip`: outputs not compared (singular vectors that the input does not determine)."""
    CASES.append(dict(name=name, kind=kind, params=params, inputs=inputs, grads=list(grads), weights=weights,
                      dtype=dtype, tol=tol, skip=list(skip)))


def failure(name, kind, params, inputs, backward=False, weights=(0,)):
    FAILURES.append(dict(name=name, kind=kind, params=params, inputs=inputs, backward=backward, weights=weights))


# --- solve_triangular -------------------------------------------------------------------------------
for up in ("true", "false"):
    for left in ("true", "false"):
        for unit in ("true", "false"):
            bshape = (3, 2) if left == "true" else (2, 3)
            case(f"solve_triangular_u{up[0]}_l{left[0]}_d{unit[0]}", "solve_triangular",
                 {"upper": up, "left": left, "unit": unit}, {"A": well(3, 3), "B": randn(*bshape)}, ["A", "B"])
case("solve_triangular_broadcast", "solve_triangular", {"upper": "false", "left": "true", "unit": "false"},
     {"A": well(2, 1, 3, 3), "B": randn(4, 3, 2)}, ["A", "B"])
case("solve_triangular_promote", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
     {"A": well(3, 3).float().double(), "B": randn(3, 1)})
case("solve_triangular_f32", "solve_triangular", {"upper": "true", "left": "false", "unit": "false"},
     {"A": well(2, 3, 3), "B": randn(2, 4, 3)}, ["A", "B"], dtype=F32)
# (A zero diagonal divides by zero: which entries come out inf and which NaN is the BLAS's order of
# operations, not an answer to compare.)
case("solve_triangular_empty", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
     {"A": randn(2, 0, 0), "B": randn(2, 0, 3)})
failure("solve_triangular_vector", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
        {"A": well(3, 3), "B": randn(3)})
failure("solve_triangular_shapes", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
        {"A": well(3, 3), "B": randn(4, 2)})
failure("solve_triangular_shapes_right", "solve_triangular", {"upper": "true", "left": "false", "unit": "false"},
        {"A": well(3, 3), "B": randn(2, 4)})
failure("solve_triangular_nonsquare", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
        {"A": randn(3, 4), "B": randn(3, 2)})
failure("solve_triangular_long", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
        {"A": torch.ones(3, 3, dtype=torch.int64), "B": torch.ones(3, 2, dtype=torch.int64)})
failure("solve_triangular_batch", "solve_triangular", {"upper": "true", "left": "true", "unit": "false"},
        {"A": well(2, 3, 3), "B": randn(4, 3, 2)})

# --- cholesky_solve -------------------------------------------------------------------------------
for up in ("true", "false"):
    chol = L.cholesky(spd(3, 3), upper=up == "true")
    case(f"cholesky_solve_u{up[0]}", "cholesky_solve", {"upper": up}, {"A": chol, "B": randn(3, 2)}, ["A", "B"])
chol = L.cholesky(spd(2, 1, 3, 3))
case("cholesky_solve_broadcast", "cholesky_solve", {"upper": "false"}, {"A": chol, "B": randn(3, 3, 2)},
     ["A", "B"])
case("cholesky_solve_f32", "cholesky_solve", {"upper": "false"}, {"A": L.cholesky(spd(3, 3)), "B": randn(3, 2)},
     ["A", "B"], dtype=F32)
failure("cholesky_solve_dtypes", "cholesky_solve", {"upper": "false"},
        {"A": eye(3).float(), "B": randn(3, 2)})
failure("cholesky_solve_vector", "cholesky_solve", {"upper": "false"}, {"A": eye(3), "B": randn(3)})
failure("cholesky_solve_shapes", "cholesky_solve", {"upper": "false"}, {"A": eye(3), "B": randn(4, 2)})
failure("cholesky_solve_nonsquare", "cholesky_solve", {"upper": "false"}, {"A": randn(3, 4), "B": randn(3, 2)})
failure("cholesky_solve_long", "cholesky_solve", {"upper": "false"},
        {"A": torch.ones(3, 3, dtype=torch.int64), "B": torch.ones(3, 2, dtype=torch.int64)})

# --- lu_factor / lu -------------------------------------------------------------------------------
for shape in [(4, 4), (3, 5), (5, 3), (2, 3, 3)]:
    nm = "x".join(map(str, shape))
    case(f"lu_factor_{nm}", "lu_factor", {}, {"A": randn(*shape)}, ["A"], weights=[0])
    case(f"lu_{nm}", "lu", {}, {"A": randn(*shape)}, ["A"], weights=[1, 2])
case("lu_factor_ex_singular", "lu_factor_ex", {}, {"A": torch.stack([well(3, 3), torch.zeros(3, 3, dtype=F64)])})
case("lu_factor_ex_rank1", "lu_factor_ex", {}, {"A": f64([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 2.0, 3.0]])})
case("lu_factor_f32", "lu_factor", {}, {"A": randn(4, 4)}, ["A"], weights=[0], dtype=F32)
case("lu_singular", "lu", {}, {"A": f64([[1.0, 2.0], [2.0, 4.0]])})
failure("lu_factor_singular", "lu_factor", {}, {"A": torch.zeros(3, 3, dtype=F64)})
failure("lu_factor_singular_batch", "lu_factor", {}, {"A": torch.stack([eye(3), torch.zeros(3, 3, dtype=F64)])})
failure("lu_factor_1d", "lu_factor", {}, {"A": randn(3)})
failure("lu_factor_long", "lu_factor", {}, {"A": torch.ones(3, 3, dtype=torch.int64)})
failure("lu_1d", "lu", {}, {"A": randn(3)})

# --- lu_solve -------------------------------------------------------------------------------------
for left in ("true", "false"):
    for adj in ("true", "false"):
        bshape = (4, 2) if left == "true" else (2, 4)
        case(f"lu_solve_l{left[0]}_a{adj[0]}", "lu_solve", {"left": left, "adjoint": adj},
             {"A": randn(4, 4), "B": randn(*bshape)}, ["A", "B"])
case("lu_solve_broadcast", "lu_solve", {"left": "true", "adjoint": "false"},
     {"A": randn(2, 1, 3, 3), "B": randn(3, 3, 2)}, ["A", "B"])
case("lu_solve_f32", "lu_solve", {"left": "true", "adjoint": "true"}, {"A": well(3, 3), "B": randn(3, 2)},
     ["A", "B"], dtype=F32)
LU3, P3 = L.lu_factor(randn(3, 3))
RAW = {"left": "true", "adjoint": "false"}
failure("lu_solve_vector", "lu_solve_raw", RAW, {"A": LU3, "C": P3, "B": randn(3)})
failure("lu_solve_shapes", "lu_solve_raw", RAW, {"A": LU3, "C": P3, "B": randn(4, 2)})
failure("lu_solve_pivots_long", "lu_solve_raw", RAW, {"A": LU3, "C": P3.long(), "B": randn(3, 2)})
failure("lu_solve_dtypes", "lu_solve_raw", RAW, {"A": LU3, "C": P3, "B": randn(3, 2).float()})
failure("lu_solve_nonsquare", "lu_solve_raw", RAW, {"A": randn(3, 4), "C": P3, "B": randn(3, 2)})
failure("lu_solve_pivots_count", "lu_solve_raw", RAW, {"A": LU3, "C": P3[:2], "B": randn(3, 2)})

# --- matrix_power ---------------------------------------------------------------------------------
for n in (0, 1, 2, 3, 5, 6, -1, -3):
    case(f"matrix_power_{n}".replace("-", "neg"), "matrix_power", {"n": str(n)}, {"A": well(2, 3, 3) / 3.0},
         ["A"] if n != 0 else [])
case("matrix_power_int", "matrix_power", {"n": "3"}, {"A": torch.tensor([[1, 2], [3, 4]])})
failure("matrix_power_nonsquare", "matrix_power", {"n": "2"}, {"A": randn(3, 4)})
failure("matrix_power_1d", "matrix_power", {"n": "2"}, {"A": randn(3)})
failure("matrix_power_singular", "matrix_power", {"n": "-1"}, {"A": torch.zeros(3, 3, dtype=F64)})
failure("matrix_power_int_neg", "matrix_power", {"n": "-1"}, {"A": torch.ones(3, 3, dtype=torch.int64)})

# --- multi_dot ------------------------------------------------------------------------------------
case("multi_dot_2", "multi_dot", {"names": "A,B"}, {"A": randn(2, 3), "B": randn(3, 4)}, ["A", "B"])
case("multi_dot_3_left", "multi_dot", {"names": "A,B,C"}, {"A": randn(10, 2), "B": randn(2, 8), "C": randn(8, 3)},
     ["A", "B", "C"])
case("multi_dot_3_right", "multi_dot", {"names": "A,B,C"}, {"A": randn(2, 9), "B": randn(9, 8), "C": randn(8, 1)},
     ["A", "B", "C"])
case("multi_dot_5_vectors", "multi_dot", {"names": "A,B,C,D,E"},
     {"A": randn(4), "B": randn(4, 7), "C": randn(7, 2), "D": randn(2, 6), "E": randn(6)}, ["A", "B", "C", "E"])
case("multi_dot_4", "multi_dot", {"names": "A,B,C,D"},
     {"A": randn(3, 5), "B": randn(5, 1), "C": randn(1, 6), "D": randn(6, 2)}, ["A", "D"])
case("multi_dot_row", "multi_dot", {"names": "A,B"}, {"A": randn(3), "B": randn(3, 2)}, ["A", "B"])
failure("multi_dot_one", "multi_dot", {"names": "A"}, {"A": randn(3)})
failure("multi_dot_shapes", "multi_dot", {"names": "A,B"}, {"A": randn(3), "B": randn(2, 3)})
failure("multi_dot_middle_1d", "multi_dot", {"names": "A,B,C"}, {"A": randn(3), "B": randn(3), "C": randn(3)})
failure("multi_dot_first_3d", "multi_dot", {"names": "A,B"}, {"A": randn(3, 3, 3), "B": randn(3)})
failure("multi_dot_dtypes", "multi_dot", {"names": "A,B"}, {"A": randn(2, 3), "B": randn(3, 2).float()})
failure("multi_dot_shapes_mid", "multi_dot", {"names": "A,B,C"},
        {"A": randn(2, 3), "B": randn(3, 2), "C": randn(3, 4)})

# --- inv_ex / solve_ex ----------------------------------------------------------------------------
case("inv_ex", "inv_ex", {}, {"A": well(2, 3, 3)}, ["A"], weights=[0])
case("inv_ex_singular", "inv_ex", {}, {"A": torch.stack([well(3, 3), f64([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])])},
     skip=[0])
case("solve_ex", "solve_ex", {"left": "true"}, {"A": well(2, 3, 3), "B": randn(2, 3)}, ["A", "B"], weights=[0])
case("solve_ex_singular", "solve_ex", {"left": "true"}, {"A": torch.zeros(3, 3, dtype=F64), "B": randn(3)},
     skip=[0])
failure("inv_ex_long", "inv_ex", {}, {"A": torch.ones(2, 2, dtype=torch.int64)})


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
    "// @generated by tensor/tests/make_linalg2_golden.py from torch "
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
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu", "linalg2_golden.rs")
with open(path, "w") as fh:
    fh.write("\n".join(lines) + "\n")
print(f"wrote {len(CASES)} cases and {len(FAILURES)} failures to {path}")

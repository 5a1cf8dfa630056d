"""Writes tensor/tests/cpu/linalg_golden.rs: torch's values, gradients and error messages for
oxtorch_tensor::linalg (inv, det, slogdet, logdet, solve, cholesky, qr, eigh, eigvalsh, svd, svdvals,
pinv, matrix_rank, vector_norm, matrix_norm, norm, vecdot, cross, diagonal, matmul) and the Tensor
methods inverse, det, logdet.

The numbers are Rust constants (Python's `repr` of a float reads back to the same f64). Each case
names a `kind` (the call) and its `params`; its inputs are "A" (and "B"), plus loss weights "w0",
"w1", ... for the outputs that are differentiated: the loss is sum_i sum(out_i * w_i) over the
outputs with a weight, and `grads` are its gradients with respect to the inputs listed there.
tensor/tests/cpu/linalg.rs makes the same calls by kind.

Eigenvectors and singular vectors have no sign torch promises (LAPACK's choice), so those kinds
return sign-invariant quantities: eigh gives (L, V*V); svd gives (S, Uk*Uk, Vhk*Vhk, Uk diag(S)
Vhk, U^T U, Vh Vh^T) for the first k = min(m, n) vectors; losses are taken of those only. QR's
signs are LAPACK's Householder convention, which oxtorch follows, so Q and R are compared as they
are. Float32 cases store float32-exact inputs and are compared with a looser tolerance.

`FAILURES` are calls torch refuses (or whose backward it refuses), with its message.

Run: /work/.refenv/bin/python tensor/tests/make_linalg_golden.py (from the repository root).
"""

import math
import os

import torch

L = torch.linalg
torch.manual_seed(0)
F64, F32 = torch.float64, torch.float32
DTYPE_NAMES = {F64: "float64", F32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
               torch.int64: "int64", torch.bool: "bool"}


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
    A, B = t.get("A"), t.get("B")
    if kind == "inv":
        return [L.inv(A)]
    if kind == "inverse":
        return [A.inverse()]
    if kind == "det":
        return [L.det(A)]
    if kind == "Tdet":
        return [A.det()]
    if kind == "slogdet":
        return list(L.slogdet(A))
    if kind == "logdet":
        return [A.logdet()]
    if kind == "solve":
        return [L.solve(A, B, left=p["left"] == "true")]
    if kind == "cholesky":
        return [L.cholesky(A, upper=p["upper"] == "true")]
    if kind == "qr":
        return list(L.qr(A, mode=p["mode"]))
    if kind == "eigh":
        w, V = L.eigh(A, UPLO=p["uplo"])
        return [w, V * V]
    if kind == "eigvalsh":
        return [L.eigvalsh(A, UPLO=p["uplo"])]
    if kind == "svd":
        U, S, Vh = L.svd(A, full_matrices=p["full"] == "true")
        k = S.shape[-1]
        Uk, Vk = U[..., :k], Vh[..., :k, :]
        return [S, Uk * Uk, Vk * Vk, (Uk * S.unsqueeze(-2)) @ Vk, U.mT @ U, Vh @ Vh.mT]
    if kind == "svdvals":
        return [L.svdvals(A)]
    if kind == "pinv":
        return [L.pinv(A, atol=opt_float(p["atol"]), rtol=opt_float(p["rtol"]), hermitian=p["hermitian"] == "true")]
    if kind == "matrix_rank":
        return [L.matrix_rank(A, atol=opt_float(p["atol"]), rtol=opt_float(p["rtol"]),
                              hermitian=p["hermitian"] == "true")]
    if kind == "vector_norm":
        dt = {"none": None, "float64": F64, "float32": F32, "float16": torch.float16, "int64": torch.int64}[p["dtype"]]
        return [L.vector_norm(A, float(p["ord"]), dim=parse_dims(p["dim"]), keepdim=p["keepdim"] == "true",
                              dtype=dt)]
    if kind == "matrix_norm":
        dt = {"none": None, "float64": F64, "float32": F32, "int64": torch.int64}[p["dtype"]]
        return [L.matrix_norm(A, parse_ord(p["ord"]), dim=parse_dims(p["dim"]), keepdim=p["keepdim"] == "true",
                              dtype=dt)]
    if kind == "norm":
        return [L.norm(A, parse_ord(p["ord"]), dim=parse_dims(p["dim"]), keepdim=p["keepdim"] == "true")]
    if kind == "vecdot":
        return [L.vecdot(A, B, dim=int(p["dim"]))]
    if kind == "cross":
        return [L.cross(A, B, dim=int(p["dim"]))]
    if kind == "diagonal":
        return [L.diagonal(A, offset=int(p["offset"]), dim1=int(p["dim1"]), dim2=int(p["dim2"]))]
    if kind == "matmul":
        return [L.matmul(A, B)]
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


# --- inv / inverse --------------------------------------------------------------------------------
case("inv_3x3", "inv", {}, {"A": well(3, 3)}, ["A"])
case("inv_batch", "inv", {}, {"A": well(2, 3, 3)}, ["A"])
case("inv_1x1", "inv", {}, {"A": f64([[-4.0]])}, ["A"])
case("inv_empty", "inv", {}, {"A": randn(2, 0, 0)})
case("inv_f32", "inv", {}, {"A": well(4, 4)}, ["A"], dtype=F32)
case("inverse_method", "inverse", {}, {"A": well(2, 2, 2)}, ["A"])

# --- det / slogdet / logdet -----------------------------------------------------------------------
sing3 = f64([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
case("det_3x3", "det", {}, {"A": well(3, 3)}, ["A"])
case("det_batch", "det", {}, {"A": randn(2, 2, 4, 4)}, ["A"])
case("det_singular", "det", {}, {"A": sing3}, ["A"])
case("det_singular_2x2", "det", {}, {"A": f64([[1.0, 2.0], [2.0, 4.0]])}, ["A"])
case("det_empty", "det", {}, {"A": randn(2, 0, 0)})
case("det_f32", "det", {}, {"A": well(2, 3, 3)}, ["A"], dtype=F32)
case("det_method", "Tdet", {}, {"A": randn(3, 3)}, ["A"])
neg = randn(2, 3, 3)
neg[0] = f64([[0.0, 1.0, 0.5], [1.0, 0.0, 0.2], [0.3, 0.1, 2.0]])  # det < 0
case("slogdet_batch", "slogdet", {}, {"A": neg}, ["A"], weights=[1])
case("slogdet_singular", "slogdet", {}, {"A": sing3})
case("slogdet_f32", "slogdet", {}, {"A": well(3, 3)}, ["A"], weights=[1], dtype=F32)
case("logdet_spd", "logdet", {}, {"A": spd(2, 3, 3)}, ["A"])
case("logdet_signs", "logdet", {}, {"A": torch.stack([-eye(3), -eye(3)[:, [1, 0, 2]], sing3])})

# --- solve ----------------------------------------------------------------------------------------
case("solve_vector", "solve", {"left": "true"}, {"A": well(3, 3), "B": randn(3)}, ["A", "B"])
case("solve_matrix", "solve", {"left": "true"}, {"A": well(3, 3), "B": randn(3, 2)}, ["A", "B"])
case("solve_batch_broadcast_B", "solve", {"left": "true"}, {"A": well(2, 3, 3), "B": randn(3, 2)}, ["A", "B"])
case("solve_batch_broadcast_A", "solve", {"left": "true"}, {"A": well(3, 3), "B": randn(2, 3, 2)}, ["A", "B"])
case("solve_batched_vector", "solve", {"left": "true"}, {"A": well(2, 3, 3), "B": randn(2, 3)}, ["A", "B"])
case("solve_vector_broadcast", "solve", {"left": "true"}, {"A": well(2, 3, 3), "B": randn(3)}, ["A", "B"])
case("solve_right", "solve", {"left": "false"}, {"A": well(3, 3), "B": randn(2, 3)}, ["A", "B"])
case("solve_right_batch", "solve", {"left": "false"}, {"A": well(2, 3, 3), "B": randn(4, 3)}, ["A", "B"])
case("solve_f32", "solve", {"left": "true"}, {"A": well(4, 4), "B": randn(4, 2)}, ["A", "B"], dtype=F32)

# --- cholesky -------------------------------------------------------------------------------------
case("cholesky_3x3", "cholesky", {"upper": "false"}, {"A": spd(3, 3)}, ["A"])
case("cholesky_batch", "cholesky", {"upper": "false"}, {"A": spd(2, 4, 4)}, ["A"])
case("cholesky_upper", "cholesky", {"upper": "true"}, {"A": spd(2, 3, 3)}, ["A"])
lower_only = f64([[4.0, 100.0, 2.0], [1.0, 5.0, 100.0], [0.5, 2.0, 6.0]])  # the upper triangle is junk
case("cholesky_reads_lower", "cholesky", {"upper": "false"}, {"A": lower_only}, ["A"])
case("cholesky_reads_upper", "cholesky", {"upper": "true"}, {"A": lower_only.mT.contiguous()}, ["A"])
case("cholesky_f32", "cholesky", {"upper": "false"}, {"A": spd(3, 3)}, ["A"], dtype=F32)

# --- qr -------------------------------------------------------------------------------------------
case("qr_tall", "qr", {"mode": "reduced"}, {"A": randn(5, 3)}, ["A"])
case("qr_wide", "qr", {"mode": "reduced"}, {"A": randn(3, 5)}, ["A"])
case("qr_square_batch", "qr", {"mode": "reduced"}, {"A": randn(2, 4, 4)}, ["A"])
case("qr_complete_wide", "qr", {"mode": "complete"}, {"A": randn(3, 5)}, ["A"])
case("qr_complete_tall", "qr", {"mode": "complete"}, {"A": randn(2, 5, 3)})
case("qr_r", "qr", {"mode": "r"}, {"A": randn(2, 3, 4)})
case("qr_zero_column", "qr", {"mode": "reduced"}, {"A": f64([[0.0, 2.0], [0.0, 4.0], [0.0, 6.0]])})
case("qr_signs", "qr", {"mode": "reduced"}, {"A": f64([[-3.0, 2.0], [0.0, 4.0], [0.0, 6.0]])})
case("qr_f32", "qr", {"mode": "reduced"}, {"A": randn(4, 3)}, ["A"], dtype=F32)

# --- eigh / eigvalsh ------------------------------------------------------------------------------
case("eigh_4x4", "eigh", {"uplo": "L"}, {"A": sym(4, 4)}, ["A"])
case("eigh_batch", "eigh", {"uplo": "L"}, {"A": sym(2, 3, 3)}, ["A"])
case("eigh_upper_of_nonsymmetric", "eigh", {"uplo": "U"}, {"A": randn(3, 3)}, ["A"])
case("eigh_lower_of_nonsymmetric", "eigh", {"uplo": "L"}, {"A": randn(3, 3)}, ["A"])
case("eigh_values_only_loss", "eigh", {"uplo": "L"}, {"A": sym(3, 3)}, ["A"], weights=[0])
case("eigh_repeated_values", "eigh", {"uplo": "L"},
     {"A": f64([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 1.0]])}, skip=[1])
case("eigh_f32", "eigh", {"uplo": "L"}, {"A": sym(3, 3)}, ["A"], dtype=F32)
case("eigvalsh_lower", "eigvalsh", {"uplo": "L"}, {"A": randn(2, 4, 4)}, ["A"])
case("eigvalsh_upper", "eigvalsh", {"uplo": "U"}, {"A": randn(4, 4)}, ["A"])

# --- svd / svdvals --------------------------------------------------------------------------------
SVD_W = [0, 1, 2]  # S, Uk*Uk, Vhk*Vhk
case("svd_tall", "svd", {"full": "false"}, {"A": randn(5, 3)}, ["A"], weights=SVD_W)
case("svd_wide", "svd", {"full": "false"}, {"A": randn(3, 5)}, ["A"], weights=SVD_W)
case("svd_tall_full", "svd", {"full": "true"}, {"A": randn(5, 3)}, ["A"], weights=SVD_W)
case("svd_wide_full", "svd", {"full": "true"}, {"A": randn(2, 3, 5)}, ["A"], weights=SVD_W)
case("svd_square_batch", "svd", {"full": "false"}, {"A": randn(2, 4, 4)}, ["A"], weights=SVD_W)
case("svd_values_only_loss", "svd", {"full": "true"}, {"A": randn(4, 3)}, ["A"], weights=[0])
case("svd_rank_deficient", "svd", {"full": "true"}, {"A": randn(5, 2) @ randn(2, 4)}, skip=[1, 2])
case("svd_f32", "svd", {"full": "false"}, {"A": randn(4, 3)}, ["A"], weights=SVD_W, dtype=F32)
case("svdvals_tall", "svdvals", {}, {"A": randn(2, 5, 3)}, ["A"])
case("svdvals_wide", "svdvals", {}, {"A": randn(3, 6)}, ["A"])

# --- pinv / matrix_rank ---------------------------------------------------------------------------
PINV = {"atol": "none", "rtol": "none", "hermitian": "false"}
case("pinv_tall", "pinv", PINV, {"A": randn(4, 3)}, ["A"])
case("pinv_wide_batch", "pinv", PINV, {"A": randn(2, 3, 5)}, ["A"])
case("pinv_square", "pinv", PINV, {"A": well(3, 3)}, ["A"])
case("pinv_rank_deficient", "pinv", PINV, {"A": randn(4, 2) @ randn(2, 3)})
case("pinv_atol", "pinv", {"atol": "0.5", "rtol": "none", "hermitian": "false"},
     {"A": f64([[3.0, 0.0, 0.0], [0.0, 0.4, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])})
case("pinv_rtol", "pinv", {"atol": "none", "rtol": "0.2", "hermitian": "false"},
     {"A": f64([[3.0, 0.0, 0.0], [0.0, 0.4, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])})
case("pinv_hermitian", "pinv", {"atol": "none", "rtol": "none", "hermitian": "true"}, {"A": sym(3, 3)}, ["A"])
case("pinv_f32", "pinv", PINV, {"A": randn(3, 4)}, ["A"], dtype=F32)
RANK = {"atol": "none", "rtol": "none", "hermitian": "false"}
case("matrix_rank_full", "matrix_rank", RANK, {"A": randn(2, 4, 3)})
case("matrix_rank_deficient", "matrix_rank", RANK, {"A": torch.stack([randn(5, 2) @ randn(2, 4), torch.zeros(5, 4, dtype=F64)])})
case("matrix_rank_atol", "matrix_rank", {"atol": "0.5", "rtol": "none", "hermitian": "false"},
     {"A": f64([[3.0, 0.0, 0.0], [0.0, 0.4, 0.0], [0.0, 0.0, 1.0]])})
case("matrix_rank_rtol", "matrix_rank", {"atol": "none", "rtol": "0.2", "hermitian": "false"},
     {"A": f64([[3.0, 0.0, 0.0], [0.0, 0.4, 0.0], [0.0, 0.0, 1.0]])})
case("matrix_rank_hermitian", "matrix_rank", {"atol": "none", "rtol": "none", "hermitian": "true"},
     {"A": f64([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, -2.0]])})

# --- norms ----------------------------------------------------------------------------------------
x3 = randn(2, 3, 4)


def vn(name, ord_, dim, keepdim, dtype="none", inp=None, grads=("A",), case_dtype=F64):
    case(name, "vector_norm", {"ord": ord_, "dim": dim, "keepdim": keepdim, "dtype": dtype},
         {"A": x3 if inp is None else inp}, grads, dtype=case_dtype)


vn("vector_norm_2_all", "2", "", "false")
vn("vector_norm_1_dims", "1", "0,2", "true")
vn("vector_norm_inf_dim", "inf", "-1", "false")
vn("vector_norm_neg_inf", "-inf", "1", "true")
vn("vector_norm_3", "3", "2", "false")
vn("vector_norm_0", "0", "1", "false", grads=())
vn("vector_norm_half_p", "0.5", "", "false")
vn("vector_norm_dtype_f64", "2", "1", "false", dtype="float64", case_dtype=F32)


def mn(name, ord_, dim, keepdim, inp=None, grads=("A",), dtype="none", case_dtype=F64):
    case(name, "matrix_norm", {"ord": ord_, "dim": dim, "keepdim": keepdim, "dtype": dtype},
         {"A": x3 if inp is None else inp}, grads, dtype=case_dtype)


mn("matrix_norm_fro", "fro", "-2,-1", "false")
mn("matrix_norm_nuc", "nuc", "-2,-1", "false")
mn("matrix_norm_nuc_keepdim", "nuc", "0,2", "true")
mn("matrix_norm_2", "2", "-2,-1", "false")
mn("matrix_norm_2_keepdim_swapped", "2", "2,0", "true")
mn("matrix_norm_neg2", "-2", "-2,-1", "false")
mn("matrix_norm_1", "1", "-2,-1", "false")
mn("matrix_norm_neg1_keepdim", "-1", "2,0", "true")
mn("matrix_norm_inf", "inf", "2,0", "false")
mn("matrix_norm_neg_inf", "-inf", "-2,-1", "true")
mn("matrix_norm_dtype", "fro", "-2,-1", "false", dtype="float64", case_dtype=F32)
mn("matrix_norm_empty_2", "2", "-2,-1", "false", inp=torch.zeros(2, 0, 3, dtype=F64), grads=())
mn("matrix_norm_f32_nuc", "nuc", "-2,-1", "false", case_dtype=F32)


def nm(name, ord_, dim, keepdim, inp, grads=("A",)):
    case(name, "norm", {"ord": ord_, "dim": dim, "keepdim": keepdim}, {"A": inp}, grads)


nm("norm_default_3d", "none", "none", "false", x3)
nm("norm_2d_ord_none", "none", "none", "false", x3[0].clone())
nm("norm_2d_ord_1_is_matrix", "1", "none", "false", x3[0].clone())
nm("norm_2d_ord_2_is_matrix", "2", "none", "false", x3[0].clone())
nm("norm_1d_ord_3", "3", "none", "false", x3[0, 0].clone())
nm("norm_dim1_ord_3", "3", "1", "true", x3)
nm("norm_dim2_nuc", "nuc", "0,2", "false", x3)
nm("norm_dim2_inf", "inf", "1,2", "false", x3)
nm("norm_dim2_none", "none", "1,2", "false", x3)

# --- products -------------------------------------------------------------------------------------
case("vecdot_last", "vecdot", {"dim": "-1"}, {"A": randn(2, 3, 4), "B": randn(4)}, ["A", "B"])
case("vecdot_dim0", "vecdot", {"dim": "0"}, {"A": randn(3, 4), "B": randn(3, 1)}, ["A", "B"])
case("cross_last", "cross", {"dim": "-1"}, {"A": randn(2, 3), "B": randn(2, 3)}, ["A", "B"])
case("diagonal_offset", "diagonal", {"offset": "1", "dim1": "-2", "dim2": "-1"}, {"A": randn(2, 3, 4)}, ["A"])
case("diagonal_dims", "diagonal", {"offset": "-1", "dim1": "0", "dim2": "2"}, {"A": randn(3, 2, 4)}, ["A"])
case("matmul_batch", "matmul", {}, {"A": randn(2, 3, 4), "B": randn(4, 2)}, ["A", "B"])

# --- failures -------------------------------------------------------------------------------------
i22 = torch.tensor([[1, 2], [3, 4]])
h33 = well(3, 3).half()
b33 = well(3, 3).bfloat16()
failure("inv_singular_3x3", "inv", {}, {"A": sing3})
failure("inv_singular_2x2", "inv", {}, {"A": f64([[1.0, 2.0], [2.0, 4.0]])})
failure("inv_singular_first_pivot", "inv", {}, {"A": f64([[0.0, 1.0], [0.0, 1.0]])})
failure("inv_singular_batch", "inv", {}, {"A": torch.stack([well(3, 3), sing3])})
failure("inv_int", "inv", {}, {"A": i22})
failure("inv_half", "inv", {}, {"A": h33})
failure("inv_1d", "inv", {}, {"A": randn(3)})
failure("inv_nonsquare", "inv", {}, {"A": randn(2, 3)})
failure("inverse_singular", "inverse", {}, {"A": sing3})
failure("det_int", "det", {}, {"A": i22})
failure("det_half", "det", {}, {"A": h33})
failure("det_bf16", "Tdet", {}, {"A": b33})
failure("det_nonsquare", "det", {}, {"A": randn(2, 3)})
failure("slogdet_half", "slogdet", {}, {"A": h33})
failure("slogdet_1d", "slogdet", {}, {"A": randn(3)})
failure("logdet_int", "logdet", {}, {"A": i22})
failure("logdet_half", "logdet", {}, {"A": h33})
failure("logdet_nonsquare", "logdet", {}, {"A": randn(2, 3)})
nonpd = f64([[1.0, 2.0], [2.0, 1.0]])
failure("cholesky_not_pd", "cholesky", {"upper": "false"}, {"A": nonpd})
failure("cholesky_not_pd_batch", "cholesky", {"upper": "false"}, {"A": torch.stack([eye(2), nonpd])})
failure("cholesky_upper_junk", "cholesky", {"upper": "true"}, {"A": lower_only})
failure("cholesky_not_pd_order3", "cholesky", {"upper": "false"},
        {"A": f64([[4.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, -5.0]])})
failure("cholesky_int", "cholesky", {"upper": "false"}, {"A": i22})
failure("cholesky_half", "cholesky", {"upper": "false"}, {"A": h33})
failure("qr_int", "qr", {"mode": "reduced"}, {"A": i22})
failure("qr_half", "qr", {"mode": "reduced"}, {"A": h33})
failure("qr_1d", "qr", {"mode": "reduced"}, {"A": randn(3)})
failure("qr_bad_mode", "qr", {"mode": "full"}, {"A": randn(3, 3)})
failure("qr_backward_mode_r", "qr", {"mode": "r"}, {"A": randn(3, 3), "w1": randn(3, 3)}, backward=True,
        weights=(1,))
failure("qr_backward_complete_tall", "qr", {"mode": "complete"}, {"A": randn(4, 3), "w1": randn(4, 3)},
        backward=True, weights=(1,))
failure("eigh_int", "eigh", {"uplo": "L"}, {"A": i22})
failure("eigh_half", "eigh", {"uplo": "L"}, {"A": h33})
failure("eigh_nonsquare", "eigh", {"uplo": "L"}, {"A": randn(2, 3)})
failure("eigh_bad_uplo", "eigh", {"uplo": "X"}, {"A": randn(3, 3)})
failure("eigvalsh_bad_uplo", "eigvalsh", {"uplo": "lower"}, {"A": randn(3, 3)})
failure("svd_int", "svd", {"full": "true"}, {"A": i22})
failure("svd_half", "svd", {"full": "true"}, {"A": h33})
failure("svdvals_1d", "svdvals", {}, {"A": randn(3)})
nan_m = f64([[1.0, float("nan")], [2.0, 3.0]])
failure("svd_nan", "svd", {"full": "false"}, {"A": nan_m})
failure("svdvals_nan_batch", "svdvals", {}, {"A": torch.stack([eye(2), nan_m])})
failure("pinv_nan", "pinv", PINV, {"A": nan_m})
failure("matrix_rank_nan", "matrix_rank", RANK, {"A": nan_m})
failure("pinv_int", "pinv", PINV, {"A": i22})
failure("pinv_1d", "pinv", PINV, {"A": randn(3)})
failure("matrix_rank_int", "matrix_rank", RANK, {"A": i22})
failure("matrix_rank_1d", "matrix_rank", RANK, {"A": randn(3)})
failure("solve_int", "solve", {"left": "true"}, {"A": i22, "B": i22})
failure("solve_dtypes", "solve", {"left": "true"}, {"A": well(3, 3).float(), "B": randn(3)})
failure("solve_half", "solve", {"left": "true"}, {"A": h33, "B": randn(3, 1).half()})
failure("solve_nonsquare", "solve", {"left": "true"}, {"A": randn(3, 2), "B": randn(3)})
failure("solve_B_scalar", "solve", {"left": "true"}, {"A": well(3, 3), "B": f64(1.0)})
failure("solve_shapes", "solve", {"left": "true"}, {"A": well(3, 3), "B": randn(2, 1)})
failure("solve_shapes_right", "solve", {"left": "false"}, {"A": well(3, 3), "B": randn(1, 2)})
failure("solve_batched_vector_right", "solve", {"left": "false"}, {"A": well(2, 3, 3), "B": randn(2, 3)})
failure("solve_vector_right", "solve", {"left": "false"}, {"A": randn(1, 1), "B": randn(3)})
failure("solve_batch_mismatch", "solve", {"left": "true"}, {"A": well(2, 3, 3), "B": randn(4, 3, 1)})
failure("solve_not_vector", "solve", {"left": "true"}, {"A": well(2, 3, 3), "B": randn(1, 3)})
failure("solve_singular", "solve", {"left": "true"}, {"A": sing3, "B": randn(3)})
failure("solve_singular_batch", "solve", {"left": "true"}, {"A": torch.stack([well(3, 3), sing3]), "B": randn(2, 3)})
failure("vector_norm_int", "vector_norm", {"ord": "2", "dim": "", "keepdim": "false", "dtype": "none"}, {"A": i22})
failure("vector_norm_int_dtype", "vector_norm", {"ord": "2", "dim": "", "keepdim": "false", "dtype": "float64"},
        {"A": i22})
failure("vector_norm_dtype_int", "vector_norm", {"ord": "2", "dim": "", "keepdim": "false", "dtype": "int64"},
        {"A": randn(3)})
failure("vector_norm_narrowing", "vector_norm", {"ord": "2", "dim": "", "keepdim": "false", "dtype": "float32"},
        {"A": randn(3)})
failure("vector_norm_narrowing_half", "vector_norm",
        {"ord": "2", "dim": "", "keepdim": "false", "dtype": "float16"}, {"A": randn(3).float()})
MN = {"ord": "fro", "dim": "-2,-1", "keepdim": "false", "dtype": "none"}
failure("matrix_norm_ord_3", "matrix_norm", {**MN, "ord": "3"}, {"A": randn(3, 3)})
failure("matrix_norm_ord_2_5", "matrix_norm", {**MN, "ord": "2.5"}, {"A": randn(3, 3)})
failure("matrix_norm_ord_str", "matrix_norm", {**MN, "ord": "abc"}, {"A": randn(3, 3)})
failure("matrix_norm_1d", "matrix_norm", MN, {"A": randn(3)})
failure("matrix_norm_int", "matrix_norm", MN, {"A": i22})
failure("matrix_norm_half_nuc", "matrix_norm", {**MN, "ord": "nuc"}, {"A": h33})
failure("matrix_norm_same_dims", "matrix_norm", {**MN, "dim": "1,-2"}, {"A": randn(2, 3, 3)})
failure("matrix_norm_one_dim", "matrix_norm", {**MN, "dim": "1"}, {"A": randn(2, 3, 3)})
failure("matrix_norm_three_dims", "matrix_norm", {**MN, "dim": "0,1,2"}, {"A": randn(2, 3, 3)})
failure("matrix_norm_dim_range", "matrix_norm", {**MN, "dim": "0,3"}, {"A": randn(2, 3, 3)})
failure("matrix_norm_dtype_int", "matrix_norm", {**MN, "dtype": "int64"}, {"A": randn(3, 3)})
failure("matrix_norm_neg2_empty", "matrix_norm", {**MN, "ord": "-2"}, {"A": torch.zeros(0, 3, dtype=F64)})
failure("norm_3d_with_ord", "norm", {"ord": "2", "dim": "none", "keepdim": "false"}, {"A": randn(2, 3, 4)})
failure("norm_3d_with_fro", "norm", {"ord": "fro", "dim": "none", "keepdim": "false"}, {"A": randn(2, 3, 4)})
failure("norm_three_dims", "norm", {"ord": "none", "dim": "0,1,2", "keepdim": "false"}, {"A": randn(2, 3, 4)})
failure("norm_1d_fro", "norm", {"ord": "fro", "dim": "none", "keepdim": "false"}, {"A": randn(3)})
failure("norm_fro_one_dim", "norm", {"ord": "fro", "dim": "1", "keepdim": "false"}, {"A": randn(2, 3)})
failure("norm_int", "norm", {"ord": "none", "dim": "none", "keepdim": "false"}, {"A": i22})
failure("vecdot_dtypes", "vecdot", {"dim": "-1"}, {"A": randn(3).float(), "B": randn(3)})
failure("vecdot_int", "vecdot", {"dim": "-1"}, {"A": torch.tensor([1, 2]), "B": torch.tensor([1, 2])})
failure("vecdot_sizes", "vecdot", {"dim": "-1"}, {"A": randn(2, 4), "B": randn(2, 3)})
failure("cross_ranks", "cross", {"dim": "-1"}, {"A": randn(2, 3), "B": randn(3)})


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
    "// @generated by tensor/tests/make_linalg_golden.py from torch "
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
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu", "linalg_golden.rs")
with open(path, "w") as fh:
    fh.write("\n".join(lines) + "\n")
print(f"wrote {len(CASES)} cases and {len(FAILURES)} failures to {path}")

//! `oxtorch_tensor::linalg`'s decompositions, solvers and norms: their hand-written backward
//! formulas against central differences. Inputs are made well-conditioned (shifted by `3 I`,
//! symmetrised, or `X Xᵀ + 3 I`) inside the function, so the check differentiates through that
//! too; eigen- and singular vectors enter as their squares, which do not depend on their signs.

use oxtorch_tensor::linalg::{self as la, NormOrd};
use oxtorch_tensor::{DType, Result, Tensor};

use crate::common::*;

fn eye(n: usize) -> Result<Tensor> {
    Tensor::eye(n, None, DType::F64)
}

fn last(x: &Tensor) -> usize {
    x.dims()[x.rank() - 1]
}

/// `x + 3 I`: diagonally dominant for entries in [-2, 2) and the sizes here.
fn shifted(x: &Tensor) -> Result<Tensor> {
    x.add(&eye(last(x))?.mul(3.0)?)
}

/// `x + xᵀ`
fn symmetrized(x: &Tensor) -> Result<Tensor> {
    x.add(&x.transpose(-2, -1)?)
}

/// `x xᵀ + 3 I`: symmetric positive-definite.
fn spd(x: &Tensor) -> Result<Tensor> {
    x.matmul(&x.transpose(-2, -1)?)?.add(&eye(last(x))?.mul(3.0)?)
}

/// `(S, Uk², Vhk²)` for the first `k` singular vectors.
fn svd_invariants(x: &Tensor, full: bool) -> Result<Vec<Tensor>> {
    let (u, s, vh) = la::svd(x, full)?;
    let k = s.size(-1)?;
    let (uk, vk) = (u.narrow(-1, 0, k)?, vh.narrow(-2, 0, k)?);
    Ok(vec![s, uk.mul(&uk)?, vk.mul(&vk)?])
}

/// The `decompositions` cases.
pub fn decomposition_cases() -> Vec<Case> {
    vec![
        case("inv", vec![smooth(&[3, 3], 101)], |x| la::inv(&shifted(&x[0])?)),
        case("inv_batch", vec![smooth(&[2, 3, 3], 102)], |x| la::inv(&shifted(&x[0])?)),
        case("inverse_method", vec![smooth(&[2, 2], 103)], |x| shifted(&x[0])?.inverse()),
        case("det", vec![smooth(&[3, 3], 104)], |x| la::det(&x[0])),
        case("det_batch", vec![smooth(&[2, 3, 3], 105)], |x| la::det(&shifted(&x[0])?)),
        case("slogdet_logabsdet", vec![smooth(&[2, 3, 3], 106)], |x| Ok(la::slogdet(&x[0])?.1)),
        case("logdet", vec![smooth(&[3, 3], 107)], |x| spd(&x[0])?.logdet()),
        case("solve_matrix", vec![smooth(&[3, 3], 108), smooth(&[3, 2], 109)], |x| {
            la::solve(&shifted(&x[0])?, &x[1], true)
        }),
        case("solve_vector_broadcast", vec![smooth(&[2, 3, 3], 110), smooth(&[3], 111)], |x| {
            la::solve(&shifted(&x[0])?, &x[1], true)
        }),
        case("solve_batched_vector", vec![smooth(&[2, 3, 3], 112), smooth(&[2, 3], 113)], |x| {
            la::solve(&shifted(&x[0])?, &x[1], true)
        }),
        case("solve_right_broadcast", vec![smooth(&[2, 3, 3], 114), smooth(&[4, 3], 115)], |x| {
            la::solve(&shifted(&x[0])?, &x[1], false)
        }),
        case("cholesky", vec![smooth(&[3, 3], 116)], |x| la::cholesky(&spd(&x[0])?, false)),
        case("cholesky_upper_batch", vec![smooth(&[2, 3, 3], 117)], |x| la::cholesky(&spd(&x[0])?, true)),
        case_n("qr_tall", vec![smooth(&[4, 3], 118)], |x| {
            let (q, r) = la::qr(&x[0], "reduced")?;
            Ok(vec![q, r])
        }),
        case_n("qr_square_batch", vec![smooth(&[2, 3, 3], 119)], |x| {
            let (q, r) = la::qr(&x[0], "reduced")?;
            Ok(vec![q, r])
        }),
        case_n("qr_wide", vec![smooth(&[3, 5], 120)], |x| {
            let (q, r) = la::qr(&x[0], "reduced")?;
            Ok(vec![q, r])
        }),
        case_n("qr_complete_wide", vec![smooth(&[2, 4], 121)], |x| {
            let (q, r) = la::qr(&x[0], "complete")?;
            Ok(vec![q, r])
        }),
        case_n("eigh", vec![smooth(&[3, 3], 122)], |x| {
            let (w, v) = la::eigh(&symmetrized(&x[0])?, "L")?;
            Ok(vec![w, v.mul(&v)?])
        }),
        case_n("eigh_upper_batch", vec![smooth(&[2, 4, 4], 123)], |x| {
            let (w, v) = la::eigh(&symmetrized(&x[0])?, "U")?;
            Ok(vec![w, v.mul(&v)?])
        }),
        case("eigvalsh", vec![smooth(&[4, 4], 124)], |x| la::eigvalsh(&symmetrized(&x[0])?, "L")),
        case_n("svd_tall", vec![smooth(&[4, 3], 125)], |x| svd_invariants(&x[0], false)),
        case_n("svd_wide_full", vec![smooth(&[3, 5], 126)], |x| svd_invariants(&x[0], true)),
        case_n("svd_square_batch", vec![smooth(&[2, 3, 3], 127)], |x| svd_invariants(&x[0], false)),
        case("svdvals", vec![smooth(&[2, 4, 3], 128)], |x| la::svdvals(&x[0])),
        case("pinv_tall", vec![smooth(&[4, 3], 129)], |x| la::pinv(&x[0], None, None, false)),
        case("pinv_wide_batch", vec![smooth(&[2, 3, 4], 130)], |x| la::pinv(&x[0], None, None, false)),
        case("pinv_hermitian", vec![smooth(&[3, 3], 131)], |x| la::pinv(&spd(&x[0])?, None, None, true)),
        case("matrix_norm_fro", vec![smooth(&[2, 3, 4], 132)], |x| {
            la::matrix_norm(&x[0], "fro", [-2, -1], false, None)
        }),
        case("matrix_norm_nuc", vec![smooth(&[2, 3, 4], 133)], |x| {
            la::matrix_norm(&x[0], "nuc", [0, 2], true, None)
        }),
        case("matrix_norm_2", vec![smooth(&[2, 3, 4], 134)], |x| {
            la::matrix_norm(&x[0], 2, [-2, -1], false, None)
        }),
        case("matrix_norm_neg2", vec![smooth(&[2, 3, 4], 135)], |x| {
            la::matrix_norm(&x[0], -2, [-1, -2], false, None)
        }),
        case("matrix_norm_1", vec![away(&[2, 3, 4], 136)], |x| {
            la::matrix_norm(&x[0], 1, [-2, -1], false, None)
        }),
        case("matrix_norm_neg_inf", vec![away(&[2, 3, 4], 137)], |x| {
            la::matrix_norm(&x[0], f64::NEG_INFINITY, [2, 0], true, None)
        }),
        case("norm_2d_ord_2", vec![smooth(&[3, 4], 138)], |x| {
            la::norm(&x[0], Some(NormOrd::P(2.0)), None, false, None)
        }),
        case("vector_norm_3", vec![away(&[2, 3], 139)], |x| la::vector_norm(&x[0], 3.0, [1], false, None)),
        case("vecdot", vec![smooth(&[2, 3], 140), smooth(&[3], 141)], |x| la::vecdot(&x[0], &x[1], -1)),
        case("diagonal", vec![smooth(&[2, 3, 4], 142)], |x| la::diagonal(&x[0], 1, -2, -1)),
    ]
}

#[test]
fn decompositions() {
    run("decompositions", decomposition_cases(), 37, Check::Grad);
}

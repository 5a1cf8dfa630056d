//! `oxtorch_tensor::linalg`'s triangular and LU solvers, `lu`/`lu_factor`, `matrix_power`,
//! `multi_dot` and the `_ex` variants: their backward formulas against central differences.
//! Inputs are made well-conditioned (`x + 3 I`) inside the function.

use oxtorch_tensor::linalg as la;
use oxtorch_tensor::{DType, Result, Tensor};

use crate::common::*;

fn eye(n: usize) -> Result<Tensor> {
    Tensor::eye(n, None, DType::F64)
}

/// `x + 3 I`: diagonally dominant for entries in [-2, 2) and the sizes here.
fn shifted(x: &Tensor) -> Result<Tensor> {
    x.add(&eye(x.dims()[x.rank() - 1])?.mul(3.0)?)
}

/// The `decompositions2` cases.
pub fn decomposition2_cases() -> Vec<Case> {
    vec![
        case("solve_triangular_upper_left", vec![smooth(&[3, 3], 201), smooth(&[3, 2], 202)], |x| {
            la::solve_triangular(&shifted(&x[0])?, &x[1], true, true, false)
        }),
        case("solve_triangular_lower_right_unit", vec![smooth(&[2, 3, 3], 203), smooth(&[4, 3], 204)], |x| {
            la::solve_triangular(&shifted(&x[0])?, &x[1], false, false, true)
        }),
        case("cholesky_solve_lower", vec![smooth(&[3, 3], 205), smooth(&[3, 2], 206)], |x| {
            la::cholesky_solve(&x[1], &shifted(&x[0])?.tril(0)?, false)
        }),
        case("cholesky_solve_upper_batch", vec![smooth(&[2, 3, 3], 207), smooth(&[3, 2], 208)], |x| {
            la::cholesky_solve(&x[1], &shifted(&x[0])?.triu(0)?, true)
        }),
        case("lu_factor_square", vec![smooth(&[3, 3], 209)], |x| Ok(la::lu_factor(&shifted(&x[0])?)?.0)),
        case_n("lu_wide", vec![smooth(&[3, 5], 210)], |x| {
            let (_, l, u) = la::lu(&x[0].add(&eye(5)?.narrow(0, 0, 3)?.mul(3.0)?)?)?;
            Ok(vec![l, u])
        }),
        case_n("lu_tall_batch", vec![smooth(&[2, 5, 3], 211)], |x| {
            let (_, l, u) = la::lu(&x[0].add(&eye(5)?.narrow(1, 0, 3)?.mul(3.0)?)?)?;
            Ok(vec![l, u])
        }),
        case("lu_solve_left", vec![smooth(&[3, 3], 212), smooth(&[3, 2], 213)], |x| {
            let (lu, piv) = la::lu_factor(&shifted(&x[0])?)?;
            la::lu_solve(&lu, &piv, &x[1], true, false)
        }),
        case("lu_solve_left_adjoint", vec![smooth(&[3, 3], 214), smooth(&[3, 2], 215)], |x| {
            let (lu, piv) = la::lu_factor(&shifted(&x[0])?)?;
            la::lu_solve(&lu, &piv, &x[1], true, true)
        }),
        case("lu_solve_right", vec![smooth(&[2, 3, 3], 216), smooth(&[2, 3], 217)], |x| {
            let (lu, piv) = la::lu_factor(&shifted(&x[0])?)?;
            la::lu_solve(&lu, &piv, &x[1], false, false)
        }),
        case("lu_solve_right_adjoint", vec![smooth(&[3, 3], 218), smooth(&[2, 3], 219)], |x| {
            let (lu, piv) = la::lu_factor(&shifted(&x[0])?)?;
            la::lu_solve(&lu, &piv, &x[1], false, true)
        }),
        case("matrix_power_5", vec![smooth(&[3, 3], 220)], |x| la::matrix_power(&x[0], 5)),
        case("matrix_power_neg2", vec![smooth(&[3, 3], 221)], |x| la::matrix_power(&shifted(&x[0])?, -2)),
        case(
            "multi_dot_4",
            vec![smooth(&[3], 222), smooth(&[3, 4], 223), smooth(&[4, 2], 224), smooth(&[2, 5], 225)],
            |x| la::multi_dot(&[&x[0], &x[1], &x[2], &x[3]]),
        ),
        case("inv_ex", vec![smooth(&[2, 3, 3], 226)], |x| Ok(la::inv_ex(&shifted(&x[0])?)?.0)),
        case("solve_ex", vec![smooth(&[3, 3], 227), smooth(&[3], 228)], |x| {
            Ok(la::solve_ex(&shifted(&x[0])?, &x[1], true)?.0)
        }),
    ]
}

#[test]
fn decompositions2() {
    run("decompositions2", decomposition2_cases(), 16, Check::Grad);
}

//! `oxtorch_tensor::linalg`'s `matrix_exp`, `lstsq`, `cond`, `tensorinv`, `tensorsolve`,
//! `cholesky_inverse`, `householder_product`, `vecdot` and `vander`: their gradients against
//! central differences. Square inputs are made well-conditioned (`x + 3 I`) inside the function,
//! and inputs are scaled where large outputs would make the differences' rounding count.

use oxtorch_tensor::linalg::{self as la, NormOrd};
use oxtorch_tensor::{DType, Result, Tensor};

use crate::common::*;

fn eye(n: usize) -> Result<Tensor> {
    Tensor::eye(n, None, DType::F64)
}

/// `x + 3 I`: diagonally dominant for entries in [-2, 2) and the sizes here.
fn shifted(x: &Tensor) -> Result<Tensor> {
    x.add(&eye(x.dims()[x.rank() - 1])?.mul(3.0)?)
}

/// `lstsq`'s differentiable outputs: the solution, and the residuals when the driver gives them.
fn lstsq_outputs(a: &Tensor, b: &Tensor, driver: &str) -> Result<Vec<Tensor>> {
    let (solution, residuals, _, _) = la::lstsq(a, b, None, Some(driver))?;
    Ok(if residuals.numel() > 0 { vec![solution, residuals] } else { vec![solution] })
}

fn cond_case(name: &str, ord: Option<NormOrd>, seed: u64) -> Case {
    case(name, vec![smooth(&[2, 3, 3], seed)], move |x| la::cond(&shifted(&x[0])?, ord.clone()))
}

/// The `linalg3` cases.
pub fn linalg3_cases() -> Vec<Case> {
    vec![
        case("matrix_exp_small", vec![smooth(&[3, 3], 301)], |x| la::matrix_exp(&x[0].mul(0.2)?)),
        // (a 1-norm up to 3.6: scaled by 2^-2 and squared twice)
        case("matrix_exp_scaled", vec![smooth(&[3, 3], 302)], |x| la::matrix_exp(&x[0].mul(0.6)?)),
        case("matrix_exp_batch", vec![smooth(&[2, 4, 4], 303)], |x| x[0].mul(0.5)?.matrix_exp()),
        case_n("lstsq_tall_gelsd", vec![smooth(&[5, 3], 304), smooth(&[5, 2], 305)], |x| {
            lstsq_outputs(&x[0], &x[1], "gelsd")
        }),
        case_n("lstsq_tall_gels_vector", vec![smooth(&[5, 3], 306), smooth(&[5], 307)], |x| {
            lstsq_outputs(&x[0], &x[1], "gels")
        }),
        case_n("lstsq_wide_gelsy", vec![smooth(&[3, 5], 308), smooth(&[3, 2], 309)], |x| {
            lstsq_outputs(&x[0], &x[1], "gelsy")
        }),
        case_n("lstsq_batch_gelss", vec![smooth(&[2, 4, 3], 310), smooth(&[4, 1], 311)], |x| {
            lstsq_outputs(&x[0], &x[1].unsqueeze(0)?, "gelss")
        }),
        cond_case("cond_2", None, 312),
        cond_case("cond_neg2", Some(NormOrd::P(-2.0)), 313),
        cond_case("cond_1", Some(NormOrd::P(1.0)), 314),
        cond_case("cond_inf", Some(NormOrd::P(f64::INFINITY)), 315),
        cond_case("cond_fro", Some(NormOrd::Fro), 316),
        cond_case("cond_nuc", Some(NormOrd::Nuc), 317),
        case("cond_rect", vec![smooth(&[4, 3], 318)], |x| la::cond(&x[0], None)),
        case("tensorinv", vec![smooth(&[6, 6], 319)], |x| {
            la::tensorinv(&shifted(&x[0])?.reshape([2, 3, 6])?, 2)
        }),
        case("tensorsolve", vec![smooth(&[6, 6], 320), smooth(&[2, 3], 321)], |x| {
            la::tensorsolve(&shifted(&x[0])?.reshape([2, 3, 6])?, &x[1], None)
        }),
        case("tensorsolve_dims", vec![smooth(&[4, 4], 322), smooth(&[2, 2], 323)], |x| {
            la::tensorsolve(&shifted(&x[0])?.reshape([4, 2, 2])?, &x[1], Some(&[0isize][..]))
        }),
        case("cholesky_inverse_lower", vec![smooth(&[3, 3], 324)], |x| {
            la::cholesky_inverse(&shifted(&x[0])?.tril(0)?, false)
        }),
        case("cholesky_inverse_upper_batch", vec![smooth(&[2, 3, 3], 325)], |x| {
            la::cholesky_inverse(&shifted(&x[0])?.triu(0)?, true)
        }),
        case("householder_product", vec![smooth(&[4, 3], 326), smooth(&[2], 327)], |x| {
            la::householder_product(&x[0].mul(0.5)?, &x[1].mul(0.3)?)
        }),
        case("householder_product_batch", vec![smooth(&[2, 3, 3], 328), smooth(&[2, 3], 329)], |x| {
            la::householder_product(&x[0].mul(0.5)?, &x[1].mul(0.3)?)
        }),
        case("vecdot", vec![smooth(&[2, 3], 330), smooth(&[3], 331)], |x| la::vecdot(&x[0], &x[1], -1)),
        case("vander", vec![smooth(&[2, 3], 332)], |x| la::vander(&x[0], Some(4))),
    ]
}

#[test]
fn linalg3() {
    run("linalg3", linalg3_cases(), 23, Check::Grad);
}

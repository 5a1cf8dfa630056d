//! `torch.linalg`: inverses and solvers ([`inv`], [`solve`], [`pinv`]), determinants ([`det`],
//! [`slogdet`]), decompositions ([`cholesky`], [`qr`], [`eigh`], [`svd`]), spectra
//! ([`eigvalsh`], [`svdvals`], [`matrix_rank`]), norms ([`vector_norm`], [`matrix_norm`],
//! [`norm`]) and products ([`matmul`], [`vecdot`], [`cross`], [`diagonal`]).
//!
//! Batches of matrices are the last two dims of a tensor, the others batch dims. Inputs are
//! float32 or float64 (some ops take float16/bfloat16 too, as torch's do); the checks and their
//! messages are torch's. The factorizations run on the host in float64 (LU with partial pivoting,
//! Cholesky and Householder QR as LAPACK's, Jacobi for the symmetric eigenproblem and the SVD)
//! and the results come back in the input's dtype and device. Every op is differentiable with
//! torch's backward formulas (written in tensor ops).
//!
//! ```
//! use oxtorch_tensor::{linalg, tensor, DType};
//! # fn main() -> oxtorch_tensor::Result<()> {
//! let a = tensor!([[4.0, 1.0], [2.0, 3.0]], dtype = DType::F64);
//! assert_eq!(linalg::det(&a)?.item::<f64>()?, 10.0);
//! let x = linalg::solve(&a, &tensor!([6.0, 7.0], dtype = DType::F64), true)?; // A x = b
//! let back = a.matmul(&x)?.to_vec::<f64>()?;
//! assert!((back[0] - 6.0).abs() < 1e-12 && (back[1] - 7.0).abs() < 1e-12);
//! # Ok(()) }
//! ```

use oxtorch_core::{Error, Result};

use super::batch::check_float;
use crate::Tensor;

pub use super::cholinv::cholesky_inverse;
pub use super::cond::cond;
pub use super::eigen::{eigh, eigvalsh};
pub use super::factor::{cholesky, qr};
pub use super::householder::{householder_product, vander};
pub use super::inverse::{det, inv, slogdet};
pub use super::ldl::{ldl_factor, ldl_factor_ex, ldl_solve};
pub use super::lstsq::lstsq;
pub use super::lu::{lu, lu_factor, lu_factor_ex, lu_solve};
pub use super::matexp::matrix_exp;
pub use super::matfn::{inv_ex, matrix_power, multi_dot, solve_ex};
pub use super::norms::{matrix_norm, norm, vector_norm, NormOrd};
pub use super::polar_lobpcg::{matrix_sqrth, polar};
pub use super::solve::solve;
pub use super::svd::{matrix_rank, pinv, svd, svdvals};
pub use super::tensorops::{tensorinv, tensorsolve};
pub use super::triangular::{cholesky_solve, solve_triangular};

/// `torch.linalg.cross(a, b, dim=dim)`: the cross product of the 3-vectors along `dim` (see
/// [`Tensor::linalg_cross`]).
pub fn cross(a: &Tensor, b: &Tensor, dim: isize) -> Result<Tensor> {
    a.linalg_cross(b, dim)
}

/// `torch.linalg.cholesky_ex(A, upper=upper, check_errors=check_errors)`: `(L, info)`, the
/// Cholesky factor and the LAPACK-style `info` (0 on success); see [`Tensor::linalg_cholesky_ex`].
pub fn cholesky_ex(a: &Tensor, upper: bool, check_errors: bool) -> Result<(Tensor, Tensor)> {
    a.linalg_cholesky_ex(upper, check_errors)
}

/// `torch.linalg.matmul(a, b)`: [`Tensor::matmul`].
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    a.matmul(b)
}

/// `torch.linalg.diagonal(A, offset=offset, dim1=dim1, dim2=dim2)` (torch's defaults: 0, -2,
/// -1): the diagonals of the matrices, a view (see [`Tensor::diagonal`]).
pub fn diagonal(a: &Tensor, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
    a.diagonal(offset, dim1, dim2)
}

/// `torch.linalg.vecdot(x, y, dim=dim)`: `sum(x * y, dim)`, `x` and `y` broadcast; both of one
/// float dtype.
pub fn vecdot(x: &Tensor, y: &Tensor, dim: isize) -> Result<Tensor> {
    const OP: &str = "linalg.vecdot";
    check_float(OP, x, true)?;
    if x.dtype() != y.dtype() {
        return Err(Error::msg(format!(
            "{OP}: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead",
            x.dtype().scalar_type_name(),
            y.dtype().scalar_type_name()
        )));
    }
    x.mul(y)?.sum([dim], false)
}

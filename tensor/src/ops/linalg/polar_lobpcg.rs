//! `torch.linalg.matrix_sqrth` (principal square root of symmetric positive-definite matrices),
//! `torch.linalg.polar` (polar decomposition `A = U H`) and `torch.lobpcg` (a few extreme
//! eigenpairs of a symmetric matrix).
//!
//! All are compositions of [`eigh`] and [`svd`] with tensor ops, so their gradients are torch's
//! eigendecomposition / SVD backward formulas carried through those ops.

use oxtorch_core::{Error, Result};

use super::batch::{check_float, check_matrix, check_square, mt, rows_cols};
use super::eigen::eigh;
use super::svd::svd;
use crate::Tensor;

/// `torch.linalg.matrix_sqrth(A)`: the principal square root `X` (`X X = A`, `X` symmetric
/// positive-(semi)definite) of each symmetric positive-definite matrix of `A` (`[*, n, n]`,
/// float32/float64), of which only the lower triangle is read: `V diag(sqrt(λ)) Vᵀ` from
/// [`eigh`]. Negative eigenvalues (an input that is not positive-semidefinite) are clamped to 0,
/// as torch's result shows.
pub fn matrix_sqrth(a: &Tensor) -> Result<Tensor> {
    const OP: &str = "linalg.matrix_sqrth";
    check_matrix(OP, a, "A")?;
    check_square(OP, a, "A")?;
    check_float(OP, a, false)?;
    let (l, v) = eigh(a, "L")?;
    let root = l.clamp_min(0.0)?.sqrt()?;
    v.mul(&root.unsqueeze(-2)?)?.matmul(&mt(&v)?)
}

/// `torch.linalg.polar(A)`: `(U, H)` with `A = U H` for each `m × n` matrix of `A` (`m >= n`,
/// float32/float64): `U` `[*, m, n]` with orthonormal columns, `H` `[*, n, n]` symmetric
/// positive-semidefinite. Computed from the thin SVD `A = W diag(S) Vh` as `U = W Vh`,
/// `H = Vhᵀ diag(S) Vh` (torch's CPU path); differentiable where `A` has full column rank.
pub fn polar(a: &Tensor) -> Result<(Tensor, Tensor)> {
    const OP: &str = "linalg.polar";
    check_matrix(OP, a, "A")?;
    check_float(OP, a, false)?;
    let (m, n) = rows_cols(a);
    if m < n {
        return Err(Error::shape(format!(
            "{OP}: input must have at least as many rows as columns, but got {m} by {n} matrices"
        )));
    }
    let (w, s, vh) = svd(a, false)?;
    let u = w.matmul(&vh)?;
    let v = mt(&vh)?;
    let h = v.mul(&s.unsqueeze(-2)?)?.matmul(&vh)?;
    Ok((u, h))
}

impl Tensor {
    /// `torch.lobpcg(A, k=k, largest=largest)` for a symmetric `A = self` (`[*, n, n]`,
    /// float32/float64, lower triangle read) and no `B`: `(E, X)`, the `k` largest (descending) or smallest
    /// (ascending) eigenvalues `[*, k]` and their eigenvectors as the columns of `[*, n, k]`. torch
    /// iterates LOBPCG ("ortho") from a random start to its tolerance; this solves the dense
    /// eigenproblem ([`eigh`]) and keeps the `k` extreme pairs, the values LOBPCG converges to (each
    /// eigenvector's sign is [`eigh`]'s). torch's requirement `n >= 3 k` is kept. Gradients are
    /// [`eigh`]'s.
    pub fn lobpcg(&self, k: usize, largest: bool) -> Result<(Tensor, Tensor)> {
        let a = self;
        if a.rank() < 2 {
            return Err(Error::shape(format!(
                "lobpcg: A must be a (batch of) square matrix, got shape torch.Size({:?})",
                a.dims()
            )));
        }
        let (m, n) = rows_cols(a);
        if m != n {
            return Err(Error::shape(format!("A must be square, got shape torch.Size({:?})", a.dims())));
        }
        if !a.dtype().is_float() {
            return Err(Error::msg(format!(
                "lobpcg: Expected a floating point tensor as input. Got {}",
                a.dtype().scalar_type_name()
            )));
        }
        if k == 0 {
            return Err(Error::msg("lobpcg: the number of requested eigenpairs k must be positive"));
        }
        if m < 3 * k {
            return Err(Error::msg(format!(
                "LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x the number of requested eigenpairs (={k})"
            )));
        }
        let (l, v) = eigh(a, "L")?;
        if largest {
            let start = (n - k) as isize;
            Ok((l.narrow(-1, start, k)?.flip(-1)?, v.narrow(-1, start, k)?.flip(-1)?))
        } else {
            Ok((l.narrow(-1, 0, k)?, v.narrow(-1, 0, k)?))
        }
    }
}

//! `linalg.lstsq`: least-squares solutions through the pseudo-inverse (so the solution's gradient
//! is torch's, which goes through `pinv`), with the residuals, ranks and singular values each
//! LAPACK driver reports in torch.

use oxtorch_core::{broadcast_shapes, DType, Error, Result};

use super::batch::{rows_cols, Host};
use super::jacobi;
use super::svd::pinv;
use crate::Tensor;

const OP: &str = "torch.linalg.lstsq";

/// The LAPACK driver torch would call, which decides what is reported besides the solution.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Driver {
    /// QR or LQ, full rank assumed: residuals (when `m > n`), no rank, no singular values.
    Gels,
    /// Complete orthogonal factorization: a rank, no residuals, no singular values.
    Gelsy,
    /// SVD: rank, singular values, residuals when `m > n` and every matrix has rank `n`.
    Gelsd,
    /// SVD, as `Gelsd`.
    Gelss,
}

impl Driver {
    fn parse(name: Option<&str>) -> Result<Driver> {
        Ok(match name {
            None | Some("gelsy") => Driver::Gelsy,
            Some("gels") => Driver::Gels,
            Some("gelsd") => Driver::Gelsd,
            Some("gelss") => Driver::Gelss,
            Some(_) => {
                return Err(Error::msg(format!(
                    "{OP}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
                )))
            }
        })
    }

    fn has_rank(self) -> bool {
        self != Driver::Gels
    }

    fn has_singular_values(self) -> bool {
        matches!(self, Driver::Gelsd | Driver::Gelss)
    }
}

/// torch's argument checks: ranks, dtypes, the rows of `A` against those of `B`. Returns whether
/// `B` is a batch of vectors (`B.shape == A.shape[:-1]`, or 1-d), unsqueezed to one-column
/// matrices.
fn check(a: &Tensor, b: &Tensor) -> Result<bool> {
    if a.rank() < 2 {
        return Err(Error::shape(format!("{OP}: input must have at least 2 dimensions.")));
    }
    if b.rank() < 1 {
        return Err(Error::shape(format!("{OP}: other must have at least 1 dimension.")));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::msg(format!(
            "{OP}: Expected input and other to have the same dtype, but got input's dtype {} and other's dtype {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    if b.rank() > a.rank() || a.rank() - b.rank() > 1 {
        return Err(Error::shape(format!(
            "{OP}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
        )));
    }
    // torch's `linalg_solve_is_vector_rhs` decides which size the rows are compared with ...
    let vector_shape = b.rank() == 1 || b.dims() == &a.dims()[..a.rank() - 1];
    let rows_b = if vector_shape { b.dims()[b.rank() - 1] } else { b.dims()[b.rank() - 2] };
    if rows_cols(a).0 != rows_b {
        return Err(Error::shape(format!(
            "{OP}: input.size(-2) should match other.size({})",
            if vector_shape { -1 } else { -2 }
        )));
    }
    if !matches!(a.dtype(), DType::F32 | DType::F64) {
        return Err(Error::msg("This function doesn't handle types other than float and double"));
    }
    Ok(vector_shape)
}

/// `torch.linalg.lstsq(A, B, rcond=rcond, driver=driver)`: `(solution, residuals, rank,
/// singular_values)` for `A` `[*, m, n]` and `B` `[*, m, k]` (or `[*, m]`, one dim less than `A`:
/// vectors), batch dims broadcast, float32/float64 of one dtype; as torch's CPU kernel:
///
/// - `solution` `[*, n, k]` (`[*, n]` for vectors) minimizes `‖A X - B‖` (the minimum-norm one
///   when `m < n` or `A` is rank-deficient), computed as `pinv(A) B` with the singular values at
///   most `rcond · σ_max` dropped (`rcond` defaults to `eps(dtype) · max(m, n)`; `gels` drops only
///   exact zeros, assuming full rank as LAPACK's does). For full-rank `A` this is LAPACK's
///   answer; for rank-deficient `A` the rank decision of `gelsy` (pivoted QR) may differ from
///   this SVD's.
/// - `residuals` `[*, k]` (`[*, 1]` for vectors): the squared residual norms `Σ (A X - B)²` over
///   the rows, given when `m > n` by `gels`, and by `gelsd`/`gelss` when every matrix has rank
///   `n`; otherwise, and always for `gelsy`, an empty `[0]` tensor.
/// - `rank` (int64, `A`'s batch dims, not broadcast, as torch's): the number of singular values
///   above the cutoff; empty `[0]` for `gels`.
/// - `singular_values` (`A`'s batch dims and `min(m, n)`) for `gelsd`/`gelss`, else empty `[0]`;
///   not differentiable.
///
/// `driver` is `"gelsy"` (the default), `"gels"`, `"gelsd"` or `"gelss"`. Gradients flow into `A`
/// and `B` from `solution` (torch's: through `pinv`) and from `residuals`. An empty `A` (`m` or
/// `n` zero) gives a zero solution without history.
pub fn lstsq(
    a: &Tensor,
    b: &Tensor,
    rcond: Option<f64>,
    driver: Option<&str>,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    let vector = check(a, b)?;
    let driver = Driver::parse(driver)?;
    let (m, n) = rows_cols(a);
    let a_batch = &a.dims()[..a.rank() - 2];
    let (b2, batch) = if vector {
        let b2 = b.unsqueeze(-1)?;
        let batch = broadcast_shapes(a_batch, &b2.dims()[..b2.rank() - 2])?;
        (b2, batch)
    } else if b.rank() + 1 == a.rank() {
        // torch's quirk: a matrix `B` of one dim less than `A` (not `A.shape[:-1]`) is broadcast
        // against `A`'s batch as if its rows were a batch dim too.
        let batch = broadcast_shapes(a_batch, &b.dims()[..b.rank() - 1])?;
        let mut dims = batch.clone();
        dims.extend_from_slice(&b.dims()[b.rank() - 2..]);
        (b.expand(&dims)?, batch)
    } else {
        (b.clone(), broadcast_shapes(a_batch, &b.dims()[..b.rank() - 2])?)
    };
    let k = b2.size(-1)?;
    let eps = if a.dtype() == DType::F32 { f64::from(f32::EPSILON) } else { f64::EPSILON };
    let rcond = match rcond {
        None => eps * m.max(n) as f64,
        // LAPACK's SVD drivers take a negative `rcond` as machine precision
        Some(r) if r < 0.0 && driver.has_singular_values() => eps,
        Some(r) => r,
    };
    let empty = |dtype: DType| Tensor::zeros([0usize], (dtype, a.device()));

    // the spectrum of each matrix of `A` (not broadcast: torch's ranks and singular values have
    // `A`'s batch dims)
    let a_batch = a_batch.to_vec();
    let spectra: Vec<Vec<f64>> = if driver.has_rank() {
        let h = Host::read(a)?;
        (0..h.count())
            .map(|i| if m.min(n) == 0 { Vec::new() } else { jacobi::singular_values(h.matrix(i), m, n) })
            .collect()
    } else {
        Vec::new()
    };
    let ranks: Vec<i64> = spectra
        .iter()
        .map(|s| {
            let cut = rcond * s.iter().fold(0.0, |acc: f64, x| acc.max(x.abs()));
            s.iter().filter(|x| x.abs() > cut).count() as i64
        })
        .collect();

    let solution = if m == 0 || n == 0 {
        let mut dims = batch.clone();
        dims.extend([n, k]);
        Tensor::zeros(dims, a.same_options())?
    } else {
        let cutoff = if driver == Driver::Gels { 0.0 } else { rcond };
        pinv(a, None, Some(cutoff), false)?.matmul(&b2)?
    };
    let full_rank = match driver {
        Driver::Gels => true,
        Driver::Gelsy => false,
        Driver::Gelsd | Driver::Gelss => ranks.iter().all(|&r| r == n as i64),
    };
    let residuals = if m > n && n == 0 && driver == Driver::Gels {
        // LAPACK's QR of an empty `A` leaves the residual rows zero
        let mut dims = batch.clone();
        dims.push(k);
        Tensor::zeros(dims, a.same_options())?
    } else if m > n && full_rank {
        a.matmul(&solution)?.sub(&b2)?.square()?.sum([-2isize], false)?
    } else {
        empty(a.dtype())?
    };
    let rank = if driver.has_rank() {
        Tensor::from_vec_on(ranks, a_batch.clone(), a.device())?
    } else {
        empty(DType::I64)?
    };
    let singular_values = if driver.has_singular_values() {
        let values: Vec<f64> = spectra.into_iter().flatten().collect();
        let mut dims = a_batch;
        dims.push(m.min(n));
        Tensor::from_vec_on(values, dims, a.device())?.to_dtype(a.dtype())?
    } else {
        empty(a.dtype())?
    };
    let solution = if vector { solution.squeeze_dims(-1)? } else { solution };
    Ok((solution, residuals, rank, singular_values))
}

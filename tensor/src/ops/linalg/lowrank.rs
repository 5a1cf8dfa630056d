//! `torch.lu_unpack`, `torch.linalg.cholesky_ex`, `torch.pinverse` and the randomized low-rank
//! factorizations `torch.svd_lowrank` / `torch.pca_lowrank` (Halko et al., as `torch/_lowrank.py`).
//!
//! The unpacked `L`/`U`, the successful Cholesky factor, the pseudo-inverse and the low-rank
//! factors are built from differentiable ops, so their gradients are torch's compositions.

use oxtorch_core::{DType, Error, Result};

use super::batch::{
    batch_prefix, build, check_float, check_kernel, check_square, rows_cols, transposed, Host,
};
use super::factor::{cholesky, qr};
use super::svd::{pinv, svd};
use crate::{Generator, Tensor};

/// LAPACK's unblocked `potf2` (lower) of a row-major `n × n` matrix, reading its lower triangle:
/// the factor (lower triangle only) and `info` (the order of the first leading minor that is not
/// positive-definite, 0 on success). On failure the columns before `info` hold the factor, the
/// failing diagonal entry holds the non-positive pivot and the rest holds `A`'s lower triangle.
fn potf2(a: &[f64], n: usize) -> (Vec<f64>, i32) {
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            w[i * n + j] = a[i * n + j];
        }
    }
    for j in 0..n {
        let mut d = w[j * n + j];
        for k in 0..j {
            d -= w[j * n + k] * w[j * n + k];
        }
        if d <= 0.0 || d.is_nan() {
            w[j * n + j] = d;
            return (w, j as i32 + 1);
        }
        let d = d.sqrt();
        w[j * n + j] = d;
        for i in j + 1..n {
            let mut s = w[i * n + j];
            for k in 0..j {
                s -= w[i * n + k] * w[j * n + k];
            }
            w[i * n + j] = s / d;
        }
    }
    (w, 0)
}

/// torch's `get_approximate_basis` (Halko et al., algorithm 4.4): `Q` with orthonormal columns
/// such that `Q Qᴴ A` approximates `A`.
fn approximate_basis(a: &Tensor, q: usize, niter: usize, generator: Option<&Generator>) -> Result<Tensor> {
    let n = a.size(-1)?;
    let r = Tensor::randn_with([n, q], (a.dtype(), a.device()), generator)?;
    let mut basis = qr(&a.matmul(&r)?, "reduced")?.0;
    let ah = a.mT()?;
    for _ in 0..niter {
        basis = qr(&ah.matmul(&basis)?, "reduced")?.0;
        basis = qr(&a.matmul(&basis)?, "reduced")?.0;
    }
    Ok(basis)
}

/// torch's `_svd_lowrank` (Halko et al., algorithm 5.1) of a float matrix batch `a`.
fn svd_lowrank_impl(
    a: &Tensor,
    q: usize,
    niter: usize,
    m_mean: Option<&Tensor>,
    generator: Option<&Generator>,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (m, n) = rows_cols(a);
    // A - M, formed once (torch avoids it only to keep sparse inputs sparse).
    let mut a = match m_mean {
        Some(mm) => a.sub(&mm.broadcast_to(a.dims())?)?,
        None => a.clone(),
    };
    if m < n {
        a = a.mT()?;
    }
    let basis = approximate_basis(&a, q, niter, generator)?;
    let b = basis.mT()?.matmul(&a)?;
    let (u, s, vh) = svd(&b, false)?;
    let v = vh.mT()?;
    let u = basis.matmul(&u)?;
    Ok(if m < n { (v, s, u) } else { (u, s, v) })
}

/// Floats stay as they are; other dtypes compute in the default float dtype (torch's
/// `get_floating_dtype`).
fn floating(a: &Tensor) -> Result<Tensor> {
    if a.is_floating_point() {
        Ok(a.clone())
    } else {
        a.to_dtype(DType::default_float())
    }
}

impl Tensor {
    /// `torch.lu_unpack(LU, pivots, unpack_data, unpack_pivots)`: `(P, L, U)` from the packed LU
    /// `[*, m, n]` and 1-based int32 `pivots` `[*, min(m, n)]` of `torch.linalg.lu_factor`, with
    /// `A = P L U`: `P` `[*, m, m]` a permutation matrix (not differentiable), `L` `[*, m, k]` unit
    /// lower triangular and `U` `[*, k, n]` upper triangular (`k = min(m, n)`), all in `LU`'s
    /// dtype. `P` is an empty `[0]` tensor without `unpack_pivots`, `L` and `U` without
    /// `unpack_data`. `L` and `U` are differentiable (torch's `lu_unpack_backward`).
    pub fn lu_unpack(
        &self,
        pivots: &Tensor,
        unpack_data: bool,
        unpack_pivots: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        if self.rank() < 2 {
            return Err(Error::shape(format!(
                "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {:?} instead",
                self.dims()
            )));
        }
        let (m, n) = rows_cols(self);
        let k = m.min(n);
        let batch = &self.dims()[..self.rank() - 2];
        let p = if unpack_pivots {
            if pivots.dtype() != DType::I32 {
                return Err(Error::msg(
                    "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\nNote: this function is intended to be used with the output produced by torch.linalg.lu_factor",
                ));
            }
            let mut want = batch.to_vec();
            want.push(k);
            if pivots.dims() != want.as_slice() {
                return Err(Error::shape(format!(
                    "Expected LU_pivots to have shape {want:?} but got {:?} instead.",
                    pivots.dims()
                )));
            }
            let piv = pivots.to_dtype(DType::I64)?.to_vec::<i64>()?;
            let count: usize = batch.iter().product();
            let mut values = vec![0.0; count * m * m];
            for b in 0..count {
                let mut perm: Vec<usize> = (0..m).collect();
                for i in 0..k {
                    let p = piv[b * k + i];
                    if p < 1 || p > m as i64 {
                        return Err(Error::msg(
                            "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly pass the result of lu_factor?",
                        ));
                    }
                    perm.swap(i, (p - 1) as usize);
                }
                // P[perm[i], i] = 1, so that A = P L U.
                for (i, &r) in perm.iter().enumerate() {
                    values[b * m * m + r * m + i] = 1.0;
                }
            }
            let mut dims = batch.to_vec();
            dims.extend([m, m]);
            Tensor::from_vec_on(values, dims, self.device())?.to_dtype(self.dtype())?
        } else {
            Tensor::zeros([0], self.same_options())?
        };
        if !unpack_data {
            let empty = Tensor::zeros([0], self.same_options())?;
            return Ok((p, empty.clone(), empty));
        }
        let eye = Tensor::eye(m, Some(k), self.same_options())?;
        let l = self.narrow(-1, 0, k)?.tril(-1)?.add(&eye)?;
        let u = self.narrow(-2, 0, k)?.triu(0)?;
        Ok((p, l, u))
    }

    /// `torch.linalg.cholesky_ex(A, upper=upper, check_errors=check_errors)`: `(L, info)` for
    /// `A` `[*, n, n]` (float32/float64): `info` `[*]` int32 is the order of the first leading
    /// minor that is not positive-definite (0 on success). With `check_errors`, a failure is
    /// torch's error. When every matrix factors, `L` is [`crate::linalg::cholesky`]'s
    /// (differentiable, `LinalgCholeskyExBackward0`). Otherwise `L` is LAPACK's unblocked partial
    /// factor (columns before the failing one factored, the failing pivot left unsquared, the rest
    /// `A`'s triangle), which is torch's for matrices below LAPACK's block size; it is then not
    /// differentiable.
    pub fn linalg_cholesky_ex(&self, upper: bool, check_errors: bool) -> Result<(Tensor, Tensor)> {
        const OP: &str = "linalg.cholesky";
        check_square(OP, self, "A")?;
        check_float(OP, self, true)?;
        check_kernel("cholesky_cpu", self)?;
        let h = Host::read(&self.detach())?;
        let n = h.n;
        let mut info = Vec::with_capacity(h.count());
        let mut partial = Vec::with_capacity(h.data.len());
        for b in 0..h.count() {
            let a = if upper { transposed(h.matrix(b), n, n) } else { h.matrix(b).to_vec() };
            let (l, i) = potf2(&a, n);
            info.push(i);
            partial.extend(if upper { transposed(&l, n, n) } else { l });
        }
        if let Some(b) = info.iter().position(|&i| i != 0) {
            if check_errors {
                return Err(Error::msg(format!(
                    "linalg.cholesky_ex: {}The factorization could not be completed because the input is not positive-definite (the leading minor of order {} is not positive-definite).",
                    batch_prefix(self, b),
                    info[b]
                )));
            }
            let info = Tensor::from_vec_on(info, h.batch.clone(), self.device())?;
            return Ok((build(partial, self.dims().to_vec(), self)?, info));
        }
        let info = Tensor::from_vec_on(info, h.batch.clone(), self.device())?;
        Ok((cholesky(self, upper)?, info))
    }

    /// `torch.pinverse(A, rcond)`: `torch.linalg.pinv(A, rtol=rcond)` with `atol = 0` (singular
    /// values at most `rcond · σ_max` are treated as zero); torch's default `rcond` is `1e-15`.
    pub fn pinverse(&self, rcond: f64) -> Result<Tensor> {
        pinv(self, Some(0.0), Some(rcond), false)
    }

    /// `torch.svd_lowrank(A, q, niter, M)`: a randomized rank-`q` SVD `(U, S, V)` with
    /// `A - M ≈ U diag(S) Vᴴ` for `A` `[*, m, n]` (`M` broadcast to `A`'s shape): `U` `[*, m, q]`,
    /// `S` `[*, q]`, `V` `[*, n, q]` (fewer columns when `q > min(m, n)`), by Halko et al.'s
    /// algorithm 5.1 with `niter` subspace iterations, as `torch/_lowrank.py`. The random start
    /// is drawn from `generator` (or the default one); non-float inputs compute in the default
    /// float dtype. Differentiable through `matmul`, `qr` and `svd`.
    pub fn svd_lowrank(
        &self,
        q: usize,
        niter: usize,
        m: Option<&Tensor>,
        generator: Option<&Generator>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        if self.rank() < 2 {
            return Err(Error::shape(format!(
                "svd_lowrank: expected a tensor with 2 or more dimensions, but got size {:?}",
                self.dims()
            )));
        }
        let a = floating(self)?;
        let mm = m.map(|t| t.to_dtype(a.dtype())).transpose()?;
        svd_lowrank_impl(&a, q, niter, mm.as_ref(), generator)
    }

    /// `torch.pca_lowrank(A, q, center, niter)`: [`Tensor::svd_lowrank`] of `A` (centered by its
    /// column means over dim -2 when `center`); `q` defaults (`None`) to `min(6, m, n)` and must
    /// not exceed `min(m, n)` (torch's `ValueError` message).
    pub fn pca_lowrank(
        &self,
        q: Option<usize>,
        center: bool,
        niter: usize,
        generator: Option<&Generator>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        if self.rank() < 2 {
            return Err(Error::shape(format!(
                "pca_lowrank: expected a tensor with 2 or more dimensions, but got size {:?}",
                self.dims()
            )));
        }
        let (m, n) = rows_cols(self);
        let q = match q {
            None => 6.min(m).min(n),
            Some(q) if q <= m.min(n) => q,
            Some(q) => {
                return Err(Error::msg(format!(
                    "q(={q}) must be non-negative integer and not greater than min(m, n)={}",
                    m.min(n)
                )))
            }
        };
        let a = floating(self)?;
        if !center {
            return svd_lowrank_impl(&a, q, niter, None, generator);
        }
        let c = a.mean(-2isize, true)?;
        svd_lowrank_impl(&a.sub(&c)?, q, niter, None, generator)
    }
}

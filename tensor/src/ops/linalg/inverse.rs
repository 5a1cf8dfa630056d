//! `linalg.inv`, `linalg.det`, `linalg.slogdet` and `logdet` (LU on the host), as autograd
//! functions with torch's backward formulas; and the `Tensor` methods `inverse`, `det`,
//! `slogdet`, `logdet` and (removed in torch, as there) `cholesky`.

use oxtorch_core::{Error, Result};

use super::batch::{
    batch_prefix, build, check_float, check_kernel, check_square, eye_like, mt, per_matrix, transposed, Host,
};
use super::decompose::Lu;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// `A⁻¹` for a batch of square matrices; with `check`, a singular matrix is torch's error, else
/// it gives inf/NaN (what backward formulas need: torch's `inv_ex`).
pub(super) struct InvFn {
    pub check: bool,
}

impl Function for InvFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let n = h.n;
        let mut out = Vec::with_capacity(h.data.len());
        for b in 0..h.count() {
            let lu = Lu::factor(h.matrix(b), n);
            if self.check && lu.info != 0 {
                return Err(Error::msg(format!(
                    "linalg.inv: {}The diagonal element {} is zero, the inversion could not be completed because the input matrix is singular.",
                    batch_prefix(a, b),
                    lu.info
                )));
            }
            out.extend(lu.inverse());
        }
        let inv = build(out, a.dims().to_vec(), a)?;
        ctx.save_for_backward(&[&inv]);
        Ok(vec![inv])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // -A⁻ᴴ g A⁻ᴴ
        let inv_h = mt(&ctx.saved_tensors()?[0])?;
        Ok(vec![Some(inv_h.matmul(&grads[0].matmul(&inv_h)?)?.neg()?)])
    }

    fn name(&self) -> &'static str {
        "LinalgInvExBackward0"
    }
}

/// `A⁻¹` without the singularity check (inf/NaN for singular matrices), differentiable.
pub(super) fn inv_unchecked(a: &Tensor) -> Result<Tensor> {
    Ok(InvFn { check: false }.apply(std::slice::from_ref(a))?.remove(0))
}

/// `torch.linalg.inv(A)`: the inverse of each square matrix of `A` (`[*, n, n]`, float32 or
/// float64). A singular matrix (an exactly zero pivot of its LU factorization) is torch's error
/// naming the pivot (`The diagonal element 2 is zero, ...`), prefixed with `(Batch element i): `
/// for a batch. The gradient is `-A⁻ᵀ g A⁻ᵀ`.
pub fn inv(a: &Tensor) -> Result<Tensor> {
    const OP: &str = "linalg.inv";
    check_square(OP, a, "A")?;
    check_float(OP, a, false)?;
    Ok(InvFn { check: true }.apply(std::slice::from_ref(a))?.remove(0))
}

/// The LU factorization torch takes for `det`/`slogdet`: of `Aᵀ` (torch factors the transpose of a
/// contiguous input, which decides the sign of a zero determinant).
fn lu_of_transpose(h: &Host, b: usize) -> Lu {
    Lu::factor(&transposed(h.matrix(b), h.n, h.n), h.n)
}

struct DetFn;

impl Function for DetFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let det: Vec<f64> = (0..h.count()).map(|b| lu_of_transpose(&h, b).det()).collect();
        let det = build(det, h.batch.clone(), a)?;
        ctx.save_for_backward(&[a, &det]);
        Ok(vec![det])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // g det A⁻ᵀ; torch 2.15 gives an exactly singular matrix (det == 0) a zero gradient, which
        // this reproduces by inverting the identity in its place and scaling by its zero det.
        let saved = ctx.saved_tensors()?;
        let (a, det) = (&saved[0], &saved[1]);
        let eye = eye_like(a.dims()[a.rank() - 1], a)?;
        let safe = Tensor::where_cond(&per_matrix(&det.eq(0.0)?)?, &eye, a)?;
        let scale = per_matrix(&grads[0].mul(det)?)?;
        Ok(vec![Some(mt(&inv_unchecked(&safe)?)?.mul(&scale)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgDetBackward0"
    }
}

/// `torch.linalg.det(A)`: the determinant of each square matrix of `A` (`[*, n, n]` gives `[*]`;
/// 1 for `0 × 0`), from an LU factorization (0 for a singular matrix). The gradient is
/// `g det(A) A⁻ᵀ`, zero at an exactly singular matrix as in torch 2.15.
pub fn det(a: &Tensor) -> Result<Tensor> {
    const OP: &str = "linalg.det";
    check_square(OP, a, "A")?;
    check_float(OP, a, true)?;
    check_kernel("lu_cpu", a)?;
    Ok(DetFn.apply(std::slice::from_ref(a))?.remove(0))
}

struct SlogdetFn;

impl Function for SlogdetFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let (sign, log): (Vec<f64>, Vec<f64>) =
            (0..h.count()).map(|b| lu_of_transpose(&h, b).slogdet()).unzip();
        let sign = build(sign, h.batch.clone(), a)?;
        let log = build(log, h.batch.clone(), a)?;
        ctx.save_for_backward(&[a]);
        ctx.mark_non_differentiable(&[&sign]);
        Ok(vec![sign, log])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // g_logabsdet A⁻ᵀ (inf/NaN at a singular matrix, as torch's)
        let a = &ctx.saved_tensors()?[0];
        Ok(vec![Some(mt(&inv_unchecked(a)?)?.mul(&per_matrix(&grads[1])?)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgSlogdetBackward0"
    }
}

/// `slogdet` with `op` naming the caller in messages.
fn slogdet_named(a: &Tensor, op: &str) -> Result<(Tensor, Tensor)> {
    check_square(op, a, "A")?;
    check_float(op, a, false)?;
    let mut out = SlogdetFn.apply(std::slice::from_ref(a))?;
    let log = out.remove(1);
    Ok((out.remove(0), log))
}

/// `torch.linalg.slogdet(A)`: `(sign, logabsdet)` of each square matrix of `A`, so that
/// `det = sign * exp(logabsdet)`; a singular matrix gives `(0, -inf)`. `sign` is not
/// differentiable; the gradient of `logabsdet` is `g A⁻ᵀ`.
pub fn slogdet(a: &Tensor) -> Result<(Tensor, Tensor)> {
    slogdet_named(a, "linalg.slogdet")
}

/// `torch.logdet(A)`: `log(det(A))` of each square matrix: `logabsdet` where the determinant is
/// positive, NaN where it is negative, `-inf` where it is zero.
pub fn logdet(a: &Tensor) -> Result<Tensor> {
    let (sign, log) = slogdet_named(a, "logdet")?;
    Tensor::where_cond(&sign.eq(-1.0)?, f64::NAN, &log)
}

impl Tensor {
    /// `A.inverse()`: [`linalg::inv`](crate::linalg::inv).
    pub fn inverse(&self) -> Result<Tensor> {
        inv(self)
    }

    /// `A.det()`: [`linalg::det`](crate::linalg::det).
    pub fn det(&self) -> Result<Tensor> {
        det(self)
    }

    /// `A.slogdet()`: [`linalg::slogdet`](crate::linalg::slogdet).
    pub fn slogdet(&self) -> Result<(Tensor, Tensor)> {
        slogdet(self)
    }

    /// `A.logdet()` (torch's `logdet`): `log(det(A))` of each square matrix, NaN where the
    /// determinant is negative, `-inf` where it is zero; differentiable through `slogdet`.
    pub fn logdet(&self) -> Result<Tensor> {
        logdet(self)
    }

    /// `A.cholesky(upper)`: removed in torch 2.15, whose error this returns; use
    /// [`linalg::cholesky`](crate::linalg::cholesky).
    pub fn cholesky(&self, upper: bool) -> Result<Tensor> {
        let _ = upper;
        Err(Error::msg(
            "This function was deprecated since version 1.9 and is now removed. `torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`.",
        ))
    }
}

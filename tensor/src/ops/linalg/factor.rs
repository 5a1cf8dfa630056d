//! `linalg.cholesky` and `linalg.qr` (on the host, LAPACK's conventions) with torch's backward
//! formulas (`cholesky_backward`, `linalg_qr_backward`).

use oxtorch_core::{Error, Result};

use super::batch::Host;
use super::batch::{
    batch_prefix, build, check_float, check_kernel, check_matrix, check_square, mt, transposed,
};
use super::decompose;
use super::inverse::inv_unchecked;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

struct CholeskyFn {
    upper: bool,
}

impl Function for CholeskyFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let n = h.n;
        let mut out = Vec::with_capacity(h.data.len());
        for b in 0..h.count() {
            // The upper factor reads the upper triangle: U = chol(lower of Aᵀ)ᵀ.
            let m = if self.upper { transposed(h.matrix(b), n, n) } else { h.matrix(b).to_vec() };
            let l = decompose::cholesky(&m, n).map_err(|order| {
                Error::msg(format!(
                    "linalg.cholesky: {}The factorization could not be completed because the input is not positive-definite (the leading minor of order {order} is not positive-definite).",
                    batch_prefix(a, b)
                ))
            })?;
            out.extend(if self.upper { transposed(&l, n, n) } else { l });
        }
        let factor = build(out, a.dims().to_vec(), a)?;
        ctx.save_for_backward(&[&factor]);
        Ok(vec![factor])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // torch's cholesky_backward: gA = L⁻ᴴ Φ(Lᴴ gL) L⁻¹ with Φ(X) = (tril(X) + tril(X, -1)ᴴ) / 2
        let factor = &ctx.saved_tensors()?[0];
        let (l, gl) =
            if self.upper { (mt(factor)?, mt(&grads[0])?) } else { (factor.clone(), grads[0].clone()) };
        let x = mt(&l)?.matmul(&gl)?.tril(0)?;
        let phi = x.add(&mt(&x.tril(-1)?)?)?.mul(0.5)?;
        let l_inv = inv_unchecked(&l)?;
        Ok(vec![Some(mt(&l_inv)?.matmul(&phi)?.matmul(&l_inv)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgCholeskyExBackward0"
    }
}

/// `torch.linalg.cholesky(A, upper=upper)`: the lower-triangular `L` with `A = L Lᵀ` of each
/// symmetric positive-definite matrix of `A` (`[*, n, n]`, float32/float64), reading only `A`'s
/// lower triangle; with `upper`, the upper-triangular `U = Lᵀ` with `A = Uᵀ U`, reading only the
/// upper triangle. A matrix that is not positive-definite is torch's error naming the first
/// leading minor that is not. The gradient is torch's (symmetric) `cholesky_backward`.
pub fn cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
    const OP: &str = "linalg.cholesky";
    check_square(OP, a, "A")?;
    check_float(OP, a, true)?;
    check_kernel("cholesky_cpu", a)?;
    Ok(CholeskyFn { upper }.apply(std::slice::from_ref(a))?.remove(0))
}

/// The `mode` of [`qr`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum QrMode {
    Reduced,
    Complete,
    R,
}

struct QrFn {
    mode: QrMode,
}

impl Function for QrFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let (m, n) = (h.m, h.n);
        let k = m.min(n);
        let (q_cols, r_rows) = if self.mode == QrMode::Complete { (m, m) } else { (k, k) };
        let (mut qs, mut rs) = (Vec::new(), Vec::new());
        for b in 0..h.count() {
            let (q, r) = decompose::qr(h.matrix(b), m, n, q_cols, r_rows);
            qs.extend(q);
            rs.extend(r);
        }
        let q = if self.mode == QrMode::R {
            build(Vec::new(), vec![0], a)?
        } else {
            build(qs, h.dims(&[m, q_cols]), a)?
        };
        let r = build(rs, h.dims(&[r_rows, n]), a)?;
        ctx.save_for_backward(&[&q, &r]);
        Ok(vec![q, r])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (q, r) = (&saved[0], &saved[1]);
        if self.mode == QrMode::R {
            return Err(Error::msg(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
            ));
        }
        let (m, n) = (q.dims()[q.rank() - 2], r.dims()[r.rank() - 1]);
        if self.mode == QrMode::Complete && m > n {
            return Err(Error::msg(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
            ));
        }
        let (gq, gr) = (&grads[0], &grads[1]);
        // copyltu(M) = tril(M) + tril(M, -1)ᵀ; gA = (gQ + Q copyltu(M)) R⁻ᵀ, M = R gRᵀ - gQᵀ Q
        let copyltu = |x: &Tensor| -> Result<Tensor> { x.tril(0)?.add(&mt(&x.tril(-1)?)?) };
        let square_part = |gq: &Tensor, r: &Tensor, gr: &Tensor| -> Result<Tensor> {
            let mm = r.matmul(&mt(gr)?)?.sub(&mt(gq)?.matmul(q)?)?;
            gq.add(&q.matmul(&copyltu(&mm)?)?)?.matmul(&mt(&inv_unchecked(r)?)?)
        };
        if m >= n {
            return Ok(vec![Some(square_part(gq, r, gr)?)]);
        }
        // A = [X | Y], R = [U | V] with X = Q U, Y = Q V: gY = Q gV, and X's part is the square
        // case with gQ + Y gVᵀ for gQ.
        let (u, v) = (r.narrow(-1, 0, m)?, r.narrow(-1, m as isize, n - m)?);
        let (gu, gv) = (gr.narrow(-1, 0, m)?, gr.narrow(-1, m as isize, n - m)?);
        let y = q.matmul(&v)?;
        let gx = square_part(&gq.add(&y.matmul(&mt(&gv)?)?)?, &u, &gu)?;
        Ok(vec![Some(Tensor::cat(&[&gx, &q.matmul(&gv)?], -1)?)])
    }

    fn name(&self) -> &'static str {
        "LinalgQrBackward0"
    }
}

/// `torch.linalg.qr(A, mode=mode)`: `(Q, R)` with `A = Q R`, `Q` with orthonormal columns and `R`
/// upper triangular, for `A` `[*, m, n]` (float32/float64), `k = min(m, n)`. `mode`:
/// `"reduced"` (`Q` `[*, m, k]`, `R` `[*, k, n]`), `"complete"` (`Q` `[*, m, m]`, `R` `[*, m, n]`)
/// or `"r"` (`R` only; `Q` is an empty `[0]` tensor). Householder reflections as LAPACK's, so the
/// signs are torch's (`R`'s diagonal is negative where the column's leading entry was positive).
/// Gradients are torch's `linalg_qr_backward`; they are refused, as torch refuses them, for
/// `mode="r"` and for `mode="complete"` with `m > n`.
pub fn qr(a: &Tensor, mode: &str) -> Result<(Tensor, Tensor)> {
    const OP: &str = "linalg.qr";
    check_matrix(OP, a, "A")?;
    check_float(OP, a, true)?;
    let mode = match mode {
        "reduced" => QrMode::Reduced,
        "complete" => QrMode::Complete,
        "r" => QrMode::R,
        other => {
            return Err(Error::msg(format!(
                "qr received unrecognized mode '{other}' but expected one of 'reduced' (default), 'r', or 'complete'"
            )))
        }
    };
    check_kernel("geqrf_cpu", a)?;
    let mut out = QrFn { mode }.apply(std::slice::from_ref(a))?;
    let r = out.remove(1);
    Ok((out.remove(0), r))
}

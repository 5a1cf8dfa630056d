//! `geqrf` (Householder QR in LAPACK's compact form), `orgqr` (an alias of
//! `linalg.householder_product`) and `ormqr` (applying the `Q` of `geqrf` to a matrix).

use oxtorch_core::{Error, Result};

use super::batch::{build, check_kernel, rows_cols, Host};
use super::householder::householder_product;
use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// LAPACK's `geqrf` of a row-major `m × n` matrix, in place: `R` on and above the diagonal, the
/// Householder vectors `v` (with an implied `v[j] = 1`) below it; returns `tau`
/// (`k = min(m, n)` entries). Each reflector is `dlarfg`'s: `beta = -sign(alpha) ‖(alpha, x)‖`,
/// `tau = (beta - alpha) / beta`, `x` scaled by `1 / (alpha - beta)`, and `tau = 0` (no
/// reflection) when `x` is zero.
fn geqrf_host(w: &mut [f64], m: usize, n: usize) -> Vec<f64> {
    let k = m.min(n);
    let mut taus = vec![0.0; k];
    for j in 0..k {
        let alpha = w[j * n + j];
        let xnorm = (j + 1..m).fold(0.0f64, |acc, i| acc.hypot(w[i * n + j]));
        if xnorm == 0.0 {
            continue;
        }
        // (LAPACK's SIGN: -0.0 counts as positive)
        let beta = if alpha >= 0.0 { -alpha.hypot(xnorm) } else { alpha.hypot(xnorm) };
        let tau = (beta - alpha) / beta;
        taus[j] = tau;
        let scale = 1.0 / (alpha - beta);
        for i in j + 1..m {
            w[i * n + j] *= scale;
        }
        w[j * n + j] = beta;
        // H A[j.., j+1..] = A - tau v (vᵀ A)
        for c in j + 1..n {
            let s = tau * (w[j * n + c] + (j + 1..m).map(|i| w[i * n + j] * w[i * n + c]).sum::<f64>());
            w[j * n + c] -= s;
            for i in j + 1..m {
                w[i * n + c] -= s * w[i * n + j];
            }
        }
    }
    taus
}

/// `geqrf` on the host; its gradient is torch's refusal.
struct GeqrfFn;

impl Function for GeqrfFn {
    fn forward(&self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let a = &inputs[0];
        let h = Host::read(a)?;
        let (m, n) = (h.m, h.n);
        let k = m.min(n);
        let (mut out, mut taus) = (Vec::with_capacity(h.data.len()), Vec::with_capacity(h.count() * k));
        for b in 0..h.count() {
            let mut w = h.matrix(b).to_vec();
            taus.extend(geqrf_host(&mut w, m, n));
            out.extend(w);
        }
        Ok(vec![build(out, a.dims().to_vec(), a)?, build(taus, h.dims(&[k]), a)?])
    }

    fn backward(&self, _ctx: &FunctionCtx, _grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Err(Error::msg("the derivative for 'geqrf' is not implemented."))
    }

    fn name(&self) -> &'static str {
        "GeqrfBackward0"
    }
}

/// torch's checks of `ormqr`'s arguments, in its order and with its messages.
fn ormqr_checks(input: &Tensor, tau: &Tensor, other: &Tensor, left: bool) -> Result<()> {
    const OP: &str = "torch.ormqr";
    if input.rank() < 2 {
        return Err(Error::shape(format!("{OP}: input must have at least 2 dimensions.")));
    }
    if other.rank() < 2 {
        return Err(Error::shape(format!("{OP}: other must have at least 2 dimensions.")));
    }
    let side: isize = if left { -2 } else { -1 };
    let other_side = other.size(side)?;
    let (m, n) = rows_cols(input);
    if other_side != m {
        return Err(Error::shape(format!("{OP}: other.shape[{side}] must be equal to input.shape[-2]")));
    }
    if tau.rank() == 0 || tau.size(-1)? != other_side.min(n) {
        return Err(Error::shape(format!(
            "{OP}: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )));
    }
    if input.rank() != tau.rank() + 1 {
        return Err(Error::shape(format!(
            "{OP}: Expected tau to have one dimension less than input, but got tau.ndim equal to {} and input.ndim is equal to {}",
            tau.rank(),
            input.rank()
        )));
    }
    if input.rank() != other.rank() {
        return Err(Error::shape(format!(
            "{OP}: Expected other to have the same number of dimensions as input, but got other.ndim equal to {} and input.ndim is equal to {}",
            other.rank(),
            input.rank()
        )));
    }
    if input.rank() > 2 {
        let batch = &input.dims()[..input.rank() - 2];
        let tau_batch = &tau.dims()[..tau.rank() - 1];
        if tau_batch != batch {
            return Err(Error::shape(format!(
                "{OP}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {tau_batch:?}"
            )));
        }
        let other_batch = &other.dims()[..other.rank() - 2];
        if other_batch != batch {
            return Err(Error::shape(format!(
                "{OP}: Expected batch dimensions of other to be equal to input.shape[:-2], but got {other_batch:?}"
            )));
        }
    }
    for (what, t) in [("tau", tau), ("other", other)] {
        if t.dtype() != input.dtype() {
            return Err(Error::msg(format!(
                "{OP}: Expected input and {what} to have the same dtype, but input has dtype{} and {what} has dtype {}",
                input.dtype().scalar_type_name(),
                t.dtype().scalar_type_name()
            )));
        }
    }
    check_kernel("ormqr_cpu", input)
}

impl Tensor {
    /// `torch.geqrf(self)`: the QR decomposition of each matrix of `self` (`[*, m, n]`,
    /// float32/float64) in LAPACK's compact form `(a, tau)`: `a` (`[*, m, n]`) holds `R` on and
    /// above the diagonal and the Householder vectors below it (each with an implied 1 on the
    /// diagonal), `tau` (`[*, min(m, n)]`) their scales, so that `Q = H_1 ⋯ H_k` with
    /// `H_i = I - tau_i v_i v_iᵀ` ([`Tensor::orgqr`] forms it, [`Tensor::ormqr`] applies it).
    /// The signs are LAPACK's (`dlarfg`). Computed on the host in float64. As in torch the
    /// results of an input that requires grad record a `GeqrfBackward0` node whose backward is
    /// the error `the derivative for 'geqrf' is not implemented.`
    pub fn geqrf(&self) -> Result<(Tensor, Tensor)> {
        if self.rank() < 2 {
            return Err(Error::shape("torch.geqrf: input must have at least 2 dimensions."));
        }
        check_kernel("geqrf_cpu", self)?;
        let mut out = GeqrfFn.apply(std::slice::from_ref(self))?;
        let tau = out.remove(1);
        Ok((out.remove(0), tau))
    }

    /// `torch.orgqr(self, tau)`: the first `n` columns of the `Q` of [`Tensor::geqrf`]'s compact
    /// form, an alias of [`crate::linalg::householder_product`] (its checks, messages and
    /// gradients).
    pub fn orgqr(&self, tau: &Tensor) -> Result<Tensor> {
        householder_product(self, tau)
    }

    /// `torch.ormqr(self, tau, other, left=left, transpose=transpose)`: `op(Q) other` (`left`)
    /// or `other op(Q)` (not `left`), `op(Q)` being `Qᵀ` with `transpose` and `Q` otherwise, for
    /// the `m × m` orthogonal `Q = H_1 ⋯ H_k` of the Householder vectors in `self` (`[*, m, n]`,
    /// as [`Tensor::geqrf`] returns) and `tau` (`[*, k]`, `k = min(m, n)`); `other` is
    /// `[*, m, p]` (`left`) or `[*, p, m]`, the same batch dims. float32/float64, torch's checks
    /// and messages. `Q` is formed with [`Tensor::orgqr`] and multiplied, all in differentiable
    /// tensor ops, so the gradients of `self`, `tau` and `other` are exact.
    pub fn ormqr(&self, tau: &Tensor, other: &Tensor, left: bool, transpose: bool) -> Result<Tensor> {
        ormqr_checks(self, tau, other, left)?;
        let (m, n) = rows_cols(self);
        // The reflectors as an m × m matrix: the first m columns, or zero columns appended.
        let square = if n >= m {
            self.narrow(-1, 0, m)?
        } else {
            let mut pad_dims = self.dims().to_vec();
            *pad_dims.last_mut().expect("at least 2 dims") = m - n;
            let pad = Tensor::zeros(pad_dims, self.same_options())?;
            Tensor::cat(&[self, &pad], -1)?
        };
        let q = householder_product(&square, tau)?;
        let q = if transpose { q.transpose(-2, -1)? } else { q };
        if left {
            q.matmul(other)
        } else {
            other.matmul(&q)
        }
    }
}

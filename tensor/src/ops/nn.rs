//! Neural-network kernels: convolution, pooling, interpolation, normalisation, attention, losses.
//!
//! Convolution, pooling and interpolation validate their arguments here (with torch's messages) and
//! run one `NnOp` prim (plus a matmul for convolutions); normalisations, attention, losses, one-hot
//! and dropout are compositions of tensor ops.

mod attention;
mod conv;
mod embedding;
mod fold;
mod interpolate;
mod interpolate_aa;
mod loss;
mod native;
mod norm;
mod pool;

pub use conv::Padding;

use oxtorch_core::{Error, Result};

use crate::Tensor;

/// Spreads a one-value parameter over `n` spatial dims (torch's `_single`/`_pair`/`_triple`).
pub(crate) fn spread(op: &str, name: &str, v: &[usize], n: usize) -> Result<Vec<usize>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        l => Err(Error::msg(format!(
            "{op}: {name} must be either a single int, or a tuple of {n} ints, got {l} values"
        ))),
    }
}

/// Softmax along the last dim of a float tensor: `exp(x - amax) / sum`; rows that are all `-inf`
/// give zeros (torch's `_safe_softmax`, used by attention). The shift by the maximum is cut from
/// the graph: the value does not depend on it, so its gradient is zero and computing it would
/// cost several passes over the scores.
pub(crate) fn safe_softmax_last(x: &Tensor) -> Result<Tensor> {
    let m = x.amax(-1, true)?.detach();
    let masked = m.isinf_neg()?;
    let e = x.sub(&masked.where_self(0.0, &m)?)?.exp()?;
    // A row whose every score is -inf sums to 0: divided by 1 instead, it stays 0 and so does its
    // gradient (0/0 would send NaN back through the division, as torch's _safe_softmax avoids).
    let s = e.sum(-1, true)?;
    e.div(&masked.where_self(1.0, &s)?)
}

impl Tensor {
    /// `self == -inf` (bool).
    fn isinf_neg(&self) -> Result<Tensor> {
        self.eq(f64::NEG_INFINITY)
    }

    /// Log-softmax along `dim` (float input), `x - amax - log(sum(exp(x - amax)))`, as torch's
    /// kernel computes it: a row holding NaN or +inf, or all -inf, is all NaN. The maximum is a
    /// shift the value does not depend on: cut from the graph (its gradient is zero), so the
    /// backward pass is torch's `g - softmax · sum(g)` with no pass for the maximum's gradient.
    pub(crate) fn log_softmax_dim(&self, dim: isize) -> Result<Tensor> {
        let m = self.amax(dim, true)?.detach();
        let shifted = self.sub(&m)?;
        shifted.sub(&shifted.exp()?.sum(dim, true)?.log()?)
    }
}

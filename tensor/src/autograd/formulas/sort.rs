//! Derivatives of the ordering ops and cumulative scans.

use oxtorch_core::ops::SortOp;
use oxtorch_core::Result;

use super::{not_differentiable, Ctx, Saves};
use crate::autograd::is_recording;
use crate::Tensor;

pub(super) fn saves(op: &SortOp, n: usize) -> Saves {
    match op {
        SortOp::CumSum { .. } => Saves::none(n),
        _ => Saves::outputs(n),
    }
}

/// The reverse cumulative sum along `dim`.
fn reverse_cumsum(t: &Tensor, dim: isize) -> Result<Tensor> {
    t.flip([dim])?.cumsum(dim, None)?.flip([dim])
}

pub(super) fn backward(op: &SortOp, ctx: &Ctx, g: &Tensor) -> Result<Vec<Option<Tensor>>> {
    // Ops that select input elements send each gradient back to the selected position.
    let select = |dim: usize| -> Result<Vec<Option<Tensor>>> {
        let idx = ctx.output(1)?;
        Ok(vec![Some(g.zeros_like_shape(ctx.dims(0))?.scatter_add(dim as isize, &idx, g)?)])
    };
    match op {
        SortOp::Sort { dim, .. }
        | SortOp::TopK { dim, .. }
        | SortOp::KthValue { dim, .. }
        | SortOp::Median { dim, .. }
        | SortOp::Mode { dim }
        | SortOp::CumMax { dim }
        | SortOp::CumMin { dim } => select(*dim),
        SortOp::CumSum { dim } => Ok(vec![Some(reverse_cumsum(g, *dim as isize)?)]),
        SortOp::CumProd { dim } => Ok(vec![Some(cumprod_backward(ctx, g, *dim as isize)?)]),
        SortOp::LogCumSumExp { dim } => {
            Ok(vec![Some(logcumsumexp_backward(&ctx.input(0)?, &ctx.output(0)?, g, *dim as isize)?)])
        }
        SortOp::Quantile { dim, interpolation } => {
            Ok(vec![Some(quantile_backward(ctx, g, *dim, interpolation)?), None])
        }
        SortOp::Unique { .. } => Err(not_differentiable("unique")),
        SortOp::SearchSorted { .. } => Err(not_differentiable("searchsorted")),
        SortOp::Histc { .. } => Err(not_differentiable("histc")),
        SortOp::Bincount { .. } => Err(not_differentiable("bincount")),
    }
}

/// The gradient of `logcumsumexp` along `d`: x_i's is `sum_{k >= i} g_k exp(x_i - y_k)`, summed in
/// log space as torch's `logcumsumexp_backward` does, the positive and negative parts of `g` apart
/// (`exp(x_i + rlcse(log g⁺ - y)) - exp(x_i + rlcse(log g⁻ - y))`, `rlcse` the reversed
/// logcumsumexp), so that a slice spanning a wide range (-1000 next to 1) neither overflows nor
/// underflows.
///
/// Narrower floats are summed in f64: `x_i + rlcse(...)` adds terms of opposite sign and large
/// magnitude, which in f32 would lose digits the shifted formula keeps.
fn logcumsumexp_backward(x: &Tensor, y: &Tensor, g: &Tensor, d: isize) -> Result<Tensor> {
    use oxtorch_core::DType;
    if g.dtype() != DType::F64 {
        let wide = |t: &Tensor| t.to_dtype(DType::F64);
        return logcumsumexp_backward(&wide(x)?, &wide(y)?, &wide(g)?, d)?.to_dtype(g.dtype());
    }
    let log_abs = g.abs()?.log()?;
    let lowest = f64::MIN;
    let reversed_lcse = |t: &Tensor| t.flip([d])?.logcumsumexp(d)?.flip([d]);
    let part = |mask: Tensor| -> Result<Tensor> {
        let log_part = mask.where_self(&log_abs, lowest)?;
        reversed_lcse(&log_part.sub(y)?)?.add(x)?.exp()
    };
    part(g.gt(0.0)?)?.sub(&part(g.lt(0.0)?)?)
}

/// The gradient of `cumprod` along `d` (torch's `cumprod_backward`). Away from zeros, x_i's
/// gradient is `sum_{k >= i} g_k y_k / x_i`. With zeros in a slice, that formula holds before the
/// first zero; the first zero's gradient is `sum_{k >= z} g_k y'_k` with `y'` the cumprod of the
/// slice with that zero replaced by one; every later element's gradient is zero.
fn cumprod_backward(ctx: &Ctx, g: &Tensor, d: isize) -> Result<Tensor> {
    let (x, y) = (ctx.input(0)?, ctx.output(0)?);
    let is_zero = x.eq(0.0)?;
    if !is_zero.any()?.item::<bool>()? {
        return reverse_cumsum(&g.mul(&y)?, d)?.div(&x);
    }
    if is_recording() {
        // Recorded for higher-order gradients: the piecewise formula below is exact but its own
        // derivative is not cumprod's second derivative (torch falls back the same way).
        return cumprod_backward_differentiable(&x, g, d);
    }
    let seen = is_zero.to_dtype(x.dtype())?.cumsum(d, None)?;
    let before = seen.eq(0.0)?;
    let first = is_zero.logical_and(&seen.eq(1.0)?)?;
    let safe = Tensor::where_cond(&is_zero, 1.0, &x)?;
    let before_grad = reverse_cumsum(&g.mul(&y)?, d)?.div(&safe)?;
    let skipped = Tensor::where_cond(&first, 1.0, &x)?.cumprod(d, None)?;
    let first_grad = reverse_cumsum(&g.mul(&skipped)?, d)?;
    Tensor::where_cond(&before, &before_grad, &Tensor::where_cond(&first, &first_grad, 0.0)?)
}

/// The gradient of the quantiles along `dim`: each quantile is a weighted sum of (at most) two
/// order statistics, whose positions in the input the sort indices give.
fn quantile_backward(ctx: &Ctx, g: &Tensor, dim: usize, interpolation: &str) -> Result<Tensor> {
    let (x, q) = (ctx.input(0)?, ctx.input(1)?);
    let d = dim as isize;
    let n = x.dims()[dim];
    let (_, order) = x.sort(d, false)?;
    let last = n.saturating_sub(1);
    let mut gx = g.zeros_like_shape(x.dims())?;
    for (j, p) in q.to_f64_vec()?.into_iter().enumerate() {
        let rank = p * last as f64;
        let (lo, hi) = (rank.floor(), rank.ceil());
        let terms: [(f64, f64); 2] = match interpolation {
            "lower" => [(lo, 1.0), (lo, 0.0)],
            "higher" => [(hi, 1.0), (hi, 0.0)],
            "nearest" => [(rank.round_ties_even(), 1.0), (lo, 0.0)],
            "midpoint" => [(lo, 0.5), (hi, 0.5)],
            _ => [(lo, 1.0 - (rank - lo)), (hi, rank - lo)],
        };
        let gj = g.select(0, j as isize)?;
        for (at, w) in terms {
            if w != 0.0 {
                let at = (at.max(0.0) as usize).min(last);
                let idx = order.narrow(d, at as isize, 1)?;
                gx = gx.scatter_add(d, &idx, &gj.mul(w)?)?;
            }
        }
    }
    Ok(gx)
}

/// `x_k`'s gradient `sum_{j >= k} g_j prod_{i <= j, i != k} x_i` as `prefix_k * sum_{j >= k} g_j
/// prod_{k < i <= j} x_i`: O(n^2) but division-free, hence exact with zeros at every order.
fn cumprod_backward_differentiable(x: &Tensor, g: &Tensor, d: isize) -> Result<Tensor> {
    let dim = if d < 0 { d + x.rank() as isize } else { d } as usize;
    let n = x.dims()[dim];
    let ones = x.narrow(d, 0, 1)?.ones_like()?;
    let mut parts = Vec::with_capacity(n);
    for k in 0..n {
        let prefix = if k == 0 { ones.clone() } else { x.narrow(d, 0, k)?.prod([d], true)? };
        let rest = n - k - 1;
        let tail = if rest == 0 {
            ones.clone()
        } else {
            Tensor::cat(&[&ones, &x.narrow(d, k as isize + 1, rest)?.cumprod(d, None)?], d)?
        };
        parts.push(prefix.mul(g.narrow(d, k as isize, n - k)?.mul(&tail)?.sum([d], true)?)?);
    }
    Tensor::cat(&parts.iter().collect::<Vec<_>>(), d)
}

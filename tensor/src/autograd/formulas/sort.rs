//! Derivatives of the ordering ops and cumulative scans.

use oxtorch_core::ops::SortOp;
use oxtorch_core::Result;

use super::{not_differentiable, Ctx, Saves};
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
        SortOp::CumProd { dim } => {
            // Away from zeros: x_i's gradient is sum_{k >= i} g_k y_k / x_i.
            let d = *dim as isize;
            let (x, y) = (ctx.input(0)?, ctx.output(0)?);
            Ok(vec![Some(reverse_cumsum(&g.mul(&y)?, d)?.div(&x)?)])
        }
        SortOp::LogCumSumExp { dim } => {
            // x_i's gradient is sum_{k >= i} g_k exp(x_i - y_k), shifted by the slice maximum for range.
            let d = *dim as isize;
            let (x, y) = (ctx.input(0)?, ctx.output(0)?);
            let m = x.amax([d], true)?;
            let inner = reverse_cumsum(&g.mul(m.sub(&y)?.exp()?)?, d)?;
            Ok(vec![Some(inner.mul(x.sub(&m)?.exp()?)?)])
        }
        SortOp::Quantile { .. } => Err(not_differentiable("quantile")),
        SortOp::Unique { .. } => Err(not_differentiable("unique")),
        SortOp::SearchSorted { .. } => Err(not_differentiable("searchsorted")),
        SortOp::Histc { .. } => Err(not_differentiable("histc")),
        SortOp::Bincount { .. } => Err(not_differentiable("bincount")),
    }
}

//! Derivatives of the reductions.

use oxtorch_core::ops::ReduceOp;
use oxtorch_core::Result;

use super::{not_differentiable, Ctx, Saves};
use crate::Tensor;

pub(super) fn saves(op: ReduceOp) -> Saves {
    match op {
        ReduceOp::Sum => Saves::none(1),
        _ => Saves::outputs(1),
    }
}

/// The gradient of a keepdim reduction over `dims` (an empty list reduces everything).
pub(super) fn reduce(op: ReduceOp, dims: &[usize], ctx: &Ctx, g: &Tensor) -> Result<Tensor> {
    let in_dims = ctx.dims(0);
    let all: Vec<isize> = if dims.is_empty() {
        (0..in_dims.len() as isize).collect()
    } else {
        dims.iter().map(|&d| d as isize).collect()
    };
    let expand = |t: &Tensor| t.expand(in_dims.iter().map(|&d| d as isize).collect::<Vec<_>>());
    match op {
        ReduceOp::Sum => expand(g)?.contiguous(),
        ReduceOp::Prod => {
            // Without zeros the gradient is prod / x; with zeros, the product of the others
            // (exclusive prefix times exclusive suffix products, exact and differentiable).
            let x = ctx.input(0)?;
            if !x.eq(0.0)?.any()?.item::<bool>()? {
                return g.mul(ctx.output(0)?)?.div(&x);
            }
            g.mul(prod_of_others(&x, &all)?)
        }
        ReduceOp::Max | ReduceOp::Min => {
            // Ties share the gradient evenly (torch's amax/amin rule).
            let x = ctx.input(0)?;
            let mask = x.eq(ctx.output(0)?)?.to_dtype(g.dtype())?;
            let count = mask.sum(all, true)?;
            mask.mul(g.div(count)?)
        }
        ReduceOp::All | ReduceOp::Any => Err(not_differentiable(op.name())),
    }
}

/// For every element, the product of the other elements of its slice over `dims`.
fn prod_of_others(x: &Tensor, dims: &[isize]) -> Result<Tensor> {
    let rank = x.rank();
    let reduced: Vec<usize> = (0..rank).filter(|d| dims.contains(&(*d as isize))).collect();
    let kept: Vec<usize> = (0..rank).filter(|d| !reduced.contains(d)).collect();
    let perm: Vec<usize> = kept.iter().chain(&reduced).copied().collect();
    let moved = x.permute(perm.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
    let n: usize = reduced.iter().map(|&d| x.dims()[d]).product();
    let mut flat: Vec<isize> = kept.iter().map(|&d| x.dims()[d] as isize).collect();
    flat.push(n as isize);
    let rows = moved.reshape(flat)?;
    let before = exclusive_cumprod(&rows)?;
    let after = exclusive_cumprod(&rows.flip([-1])?)?.flip([-1])?;
    let others = before.mul(&after)?.reshape(moved.dims().iter().map(|&d| d as isize).collect::<Vec<_>>())?;
    let mut inverse = vec![0isize; rank];
    for (i, &d) in perm.iter().enumerate() {
        inverse[d] = i as isize;
    }
    others.permute(inverse)
}

/// `[1, x0, x0 x1, ...]` along the last dim.
pub(super) fn exclusive_cumprod(t: &Tensor) -> Result<Tensor> {
    let n = t.dims().last().copied().unwrap_or(0);
    if n == 0 {
        return Ok(t.clone());
    }
    let ones = t.narrow(-1, 0, 1)?.ones_like()?;
    Tensor::cat(&[&ones, &t.narrow(-1, 0, n - 1)?.cumprod(-1, None)?], -1)
}

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
            // With no zero in a slice the gradient is prod / x; with one zero only that element
            // gets the product of the others; with more, every gradient is zero.
            let x = ctx.input(0)?;
            let y = ctx.output(0)?;
            let is_zero = x.eq(0.0)?;
            let zeros = is_zero.to_dtype(x.dtype())?.sum(all.clone(), true)?;
            let no_zero = g.mul(&y)?.div(&x)?;
            let others = Tensor::where_cond(&is_zero, 1.0, &x)?.prod_keep(&all)?;
            let one_zero = Tensor::where_cond(&is_zero, &g.mul(&others)?, 0.0)?;
            let none = zeros.eq(0.0)?;
            let one = zeros.eq(1.0)?;
            Tensor::where_cond(&none, &no_zero, &Tensor::where_cond(&one, &one_zero, 0.0)?)
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

impl Tensor {
    /// Product over `dims`, keeping them.
    fn prod_keep(&self, dims: &[isize]) -> Result<Tensor> {
        let mut t = self.clone();
        for &d in dims {
            t = t.prod([d], true)?;
        }
        Ok(t)
    }
}

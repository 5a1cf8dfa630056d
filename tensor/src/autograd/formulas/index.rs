//! Derivatives of gather and scatter.

use oxtorch_core::ops::{IndexOp, ReduceOp};
use oxtorch_core::Result;

use super::{not_differentiable, Ctx, Saves};
use crate::Tensor;

pub(super) fn saves(op: &IndexOp, n: usize) -> Saves {
    match op {
        IndexOp::Gather { .. } => Saves { inputs: [false, true].into_iter().collect(), outputs: false },
        IndexOp::Scatter { reduce: None | Some(ReduceOp::Sum), .. } => {
            Saves { inputs: [false, true, false].into_iter().collect(), outputs: false }
        }
        IndexOp::Scatter { .. } => Saves::outputs(n),
        IndexOp::Nonzero => Saves::none(n),
    }
}

pub(super) fn backward(op: &IndexOp, ctx: &Ctx, g: &Tensor, needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
    match op {
        IndexOp::Gather { dim } => {
            let index = ctx.input(1)?;
            Ok(vec![Some(g.zeros_like_shape(ctx.dims(0))?.scatter_add(*dim as isize, &index, g)?), None])
        }
        IndexOp::Scatter { dim, reduce, include_self } => {
            let d = *dim as isize;
            let index = ctx.input(1)?;
            let src_grad = |g: &Tensor| -> Result<Option<Tensor>> {
                if !needs[2] {
                    return Ok(None);
                }
                // The gathered gradient has index's shape; src may be larger.
                let gi = g.gather(d, &index)?;
                Ok(Some(pad_to(&gi, ctx.dims(2))?))
            };
            match reduce {
                None => {
                    let gs = if needs[0] { Some(g.scatter_value(d, &index, 0.0)?) } else { None };
                    Ok(vec![gs, None, src_grad(g)?])
                }
                Some(ReduceOp::Sum) => {
                    let gs = match (needs[0], include_self) {
                        (false, _) => None,
                        (true, true) => Some(g.clone()),
                        (true, false) => Some(g.scatter_value(d, &index, 0.0)?),
                    };
                    Ok(vec![gs, None, src_grad(g)?])
                }
                Some(ReduceOp::Max | ReduceOp::Min) => {
                    // Every element equal to the result shares its gradient evenly.
                    let (x, src, y) = (ctx.input(0)?, ctx.input(2)?, ctx.output(0)?);
                    let src = narrow_to(&src, index.dims())?;
                    let self_hit = if *include_self {
                        x.eq(&y)?.to_dtype(g.dtype())?
                    } else {
                        // Positions the scatter hit start from the scattered values only.
                        let hit = x.zeros_like()?.scatter_value(d, &index, 1.0)?;
                        x.eq(&y)?.to_dtype(g.dtype())?.mul(hit.neg()?.add(1.0)?)?
                    };
                    let src_hit = src.eq(y.gather(d, &index)?)?.to_dtype(g.dtype())?;
                    let count = self_hit.scatter_add(d, &index, &src_hit)?;
                    let share = g.div(&count)?;
                    let gs = if needs[0] { Some(share.mul(&self_hit)?) } else { None };
                    let gsrc = if needs[2] {
                        Some(pad_to(&share.gather(d, &index)?.mul(&src_hit)?, ctx.dims(2))?)
                    } else {
                        None
                    };
                    Ok(vec![gs, None, gsrc])
                }
                Some(ReduceOp::Prod) => {
                    // torch's rule, exact with zeros: each factor's gradient is the product of
                    // the others, recomputed with that factor (or a single zero) replaced by one.
                    let (x, src, y) = (ctx.input(0)?, ctx.input(2)?, ctx.output(0)?);
                    let src = narrow_to(&src, index.dims())?;
                    let gs = if needs[0] {
                        let masked = Tensor::where_cond(&x.eq(0.0)?, 1.0, &x)?;
                        let others = masked.scatter_reduce(d, &index, &src, "prod", *include_self)?;
                        let gs = g.mul(&others)?.div(&masked)?;
                        Some(if *include_self { gs } else { gs.scatter_value(d, &index, 0.0)? })
                    } else {
                        None
                    };
                    let gsrc = if needs[2] {
                        let src_zero = src.eq(0.0)?;
                        let zeros_at = x
                            .zeros_like()?
                            .scatter_add(d, &index, &src_zero.to_dtype(x.dtype())?)?
                            .gather(d, &index)?;
                        let single = src_zero.logical_and(&zeros_at.eq(1.0)?)?;
                        let masked = Tensor::where_cond(&single, 1.0, &src)?;
                        let others = x.scatter_reduce(d, &index, &masked, "prod", *include_self)?;
                        let safe = Tensor::where_cond(&src_zero, 1.0, &src)?;
                        let plain = g.mul(&y)?.gather(d, &index)?.div(&safe)?;
                        let gsrc = Tensor::where_cond(&single, &g.mul(&others)?.gather(d, &index)?, &plain)?;
                        Some(pad_to(&gsrc, ctx.dims(2))?)
                    } else {
                        None
                    };
                    Ok(vec![gs, None, gsrc])
                }
                Some(op) => Err(not_differentiable(op.name())),
            }
        }
        IndexOp::Nonzero => Err(not_differentiable("nonzero")),
    }
}

/// The leading `dims` block of `t` (src may be larger than index along any dim).
fn narrow_to(t: &Tensor, dims: &[usize]) -> Result<Tensor> {
    let mut out = t.clone();
    for (d, &n) in dims.iter().enumerate() {
        if out.dims()[d] != n {
            out = out.narrow(d as isize, 0, n)?;
        }
    }
    Ok(out)
}

/// Zero-pads `t` at the end of each dim to `dims`.
fn pad_to(t: &Tensor, dims: &[usize]) -> Result<Tensor> {
    if t.dims() == dims {
        return Ok(t.clone());
    }
    let mut pad = Vec::with_capacity(2 * dims.len());
    for d in (0..dims.len()).rev() {
        pad.push(0);
        pad.push((dims[d] - t.dims()[d]) as isize);
    }
    t.pad(&pad, "constant", Some(0.0))
}

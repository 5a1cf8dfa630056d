//! Shape ops that move data: cat, stack, flip, roll, rot90, repeat, tile, repeat_interleave,
//! tril/triu, pad; and their view relatives: tensor_split, unfold, movedim, meshgrid,
//! broadcast_tensors. `cat` is the one prim ([`ShapeOp::Cat`]); the others are compositions of views,
//! `cat`, gathers and `where`, so that they run on every backend.

mod join;
mod pad;
mod reorder;
mod repeat;
mod split;
mod triangle;
mod views;

use oxtorch_core::{wrap_dim, Error, Result};

use crate::Tensor;

/// Wraps `dims` for a tensor of `rank`, failing on a repeated dim with `dup`'s message.
fn unique_dims(dims: &[isize], rank: usize, dup: impl Fn(usize) -> String) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, rank)?;
        if out.contains(&w) {
            return Err(Error::msg(dup(w)));
        }
        out.push(w);
    }
    Ok(out)
}

/// The tensors as references (for the `&[&Tensor]` APIs).
fn refs(v: &[Tensor]) -> Vec<&Tensor> {
    v.iter().collect()
}

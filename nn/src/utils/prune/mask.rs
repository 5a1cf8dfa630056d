//! The masks' building blocks: the entries to prune of an unstructured method, and a structured
//! method's channel dim, channel norms and channel mask (with torch's checks).

use oxtorch_tensor::linalg::{matrix_norm, vector_norm, NormOrd};
use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::torch_size;

use super::amount::Amount;

/// `L1Unstructured` / `RandomUnstructured`'s mask: the `k` entries of smallest `|t|` (largest
/// uniform draw) set to 0 in a copy of `default_mask`.
pub(super) fn unstructured(
    t: &Tensor,
    default_mask: &Tensor,
    amount: Amount,
    random: bool,
) -> Result<Tensor> {
    let k = amount.to_prune(t.numel())?;
    let mask = default_mask.contiguous()?;
    if k == 0 {
        return Ok(mask);
    }
    let scores = if random { t.rand_like()? } else { t.abs()? };
    let (_, idx) = scores.reshape([-1])?.topk(k as i64, 0, random, true)?;
    mask.reshape([-1])?.index_fill(0, &idx, 0.0)?.reshape(default_mask.dims())
}

/// The channel dim `dim` of `t` for a structured method, with torch's checks
/// (`_validate_structured_pruning`, `_validate_pruning_dim`, then `t.shape[dim]`).
pub(super) fn channel_dim(t: &Tensor, dim: isize) -> Result<usize> {
    if t.rank() <= 1 {
        return Err(Error::msg(format!(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor of shape {} with {} dims",
            torch_size(t.dims()),
            t.rank()
        )));
    }
    let rank = t.rank() as isize;
    if dim >= rank {
        return Err(Error::msg(format!("Invalid index {dim} for tensor of size {}", torch_size(t.dims()))));
    }
    if dim < -rank {
        return Err(Error::msg("tuple index out of range"));
    }
    Ok(if dim < 0 { dim + rank } else { dim } as usize)
}

/// A mask shaped like `t` that is `keep[c]` on channel `c` along dim `d` (torch's `mask[slc] = 1`).
pub(super) fn channel_mask(t: &Tensor, d: usize, keep: &Tensor) -> Result<Tensor> {
    let mut shape = vec![1usize; t.rank()];
    shape[d] = t.dims()[d];
    keep.to(t.device())?.to_dtype(t.dtype())?.reshape(shape)?.expand(t.dims())?.contiguous()
}

/// torch's `_compute_norm(t, n, dim)`: the `n`-norm of each channel along `d` (over every other
/// dim); `'nuc'`, and `'fro'` over exactly two other dims, are matrix norms.
pub(super) fn channel_norm(t: &Tensor, n: &NormOrd, d: usize) -> Result<Tensor> {
    let dims: Vec<isize> = (0..t.rank()).filter(|&i| i != d).map(|i| i as isize).collect();
    let is_matrix = dims.len() == 2;
    match n {
        NormOrd::Nuc => {
            matrix_norm(t, NormOrd::Nuc, if is_matrix { dims } else { vec![-2, -1] }, false, None)
        }
        NormOrd::Fro if is_matrix => matrix_norm(t, NormOrd::Fro, dims, false, None),
        NormOrd::Fro => vector_norm(t, 2.0, dims, false, None),
        NormOrd::P(p) => vector_norm(t, *p, dims, false, None),
        NormOrd::Other(s) => Err(Error::msg(format!("linalg.vector_norm: ord must be a number, got '{s}'"))),
    }
}

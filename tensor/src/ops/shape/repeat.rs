//! repeat, tile and repeat_interleave: expanded views materialised, or index gathers.

use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::dims::IntoDims;
use crate::Tensor;

impl Tensor {
    /// `self.repeat(repeats)`: tiles self `repeats[i]` times along dim `i` (leading repeats add dims).
    pub fn repeat(&self, repeats: impl IntoDims) -> Result<Tensor> {
        let reps = repeats.into_dims();
        if reps.len() < self.rank() {
            return Err(Error::msg(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        let lead = reps.len() - self.rank();
        let mut padded = vec![1usize; lead];
        padded.extend_from_slice(self.dims());
        let out: Vec<isize> = reps
            .iter()
            .zip(&padded)
            .map(|(&r, &s)| isize::try_from(s).ok().and_then(|s| r.checked_mul(s)))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                Error::msg(format!(
                    "repeat: the repeated sizes overflow with sizes={padded:?} and repeats={reps:?}"
                ))
            })?;
        if let Some(&neg) = out.iter().find(|&&s| s < 0) {
            return Err(Error::msg(format!(
                "Trying to create tensor with negative dimension {neg}: {out:?}"
            )));
        }
        oxtorch_core::checked_numel(&out.iter().map(|&s| s as usize).collect::<Vec<_>>())?;
        let mut view = Vec::with_capacity(2 * reps.len());
        let mut expanded = Vec::with_capacity(2 * reps.len());
        for (&r, &s) in reps.iter().zip(&padded) {
            view.extend([1, s]);
            expanded.extend([r, s as isize]);
        }
        let x = self.reshape(view)?.expand(expanded)?;
        x.contiguous()?.reshape(out)
    }

    /// `self.tile(dims)`: [`Tensor::repeat`] with `dims` padded by leading ones to self's rank.
    pub fn tile(&self, dims: impl IntoDims) -> Result<Tensor> {
        let mut reps = dims.into_dims();
        if reps.len() < self.rank() {
            let mut padded = vec![1isize; self.rank() - reps.len()];
            padded.extend(reps);
            reps = padded;
        }
        self.repeat(reps)
    }

    /// `self.repeat_interleave(repeats, dim)`: every element repeated `repeats` times along `dim`
    /// (of the flattened tensor when `dim` is `None`).
    pub fn repeat_interleave(&self, repeats: i64, dim: Option<isize>) -> Result<Tensor> {
        if repeats < 0 {
            return Err(Error::msg("Repeats must be non-negative"));
        }
        let (x, d) = match dim {
            None => (self.reshape([-1])?, 0),
            Some(d) => (self.clone(), wrap_dim(d, self.rank())?),
        };
        let x = x.atleast_1d()?;
        let mut expanded: Vec<isize> = x.dims().iter().map(|&s| s as isize).collect();
        expanded.insert(d + 1, repeats as isize);
        let mut out: Vec<usize> = x.dims().to_vec();
        let size = out[d];
        out[d] = size.checked_mul(repeats as usize).ok_or_else(|| {
            Error::msg(format!(
                "repeat_interleave: size {size} at dimension {d} times {repeats} repeats overflows"
            ))
        })?;
        oxtorch_core::checked_numel(&out)?;
        x.unsqueeze(d as isize + 1)?.expand(expanded)?.contiguous()?.reshape(out)
    }

    /// `self.repeat_interleave(repeats_tensor, dim)`: element `i` along `dim` repeated `repeats[i]`
    /// times (a one-element `repeats` applies to all).
    pub fn repeat_interleave_tensor(&self, repeats: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        if !matches!(repeats.dtype(), DType::I64 | DType::I32) {
            return Err(Error::msg(format!(
                "\"repeat_interleave_cpu\" not implemented for '{}'",
                repeats.dtype().scalar_type_name()
            )));
        }
        if repeats.rank() > 1 {
            return Err(Error::msg("repeats must be 0-dim or 1-dim tensor"));
        }
        let reps = repeats.to_dtype(DType::I64)?.to_vec::<i64>()?;
        if reps.len() == 1 {
            return self.repeat_interleave(reps[0], dim);
        }
        let (x, d) = match dim {
            None => (self.reshape([-1])?, 0),
            Some(d) => (self.clone(), wrap_dim(d, self.rank())?),
        };
        let x = x.atleast_1d()?;
        if reps.len() != x.dims()[d] {
            return Err(Error::msg(format!(
                "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {}",
                reps.len(),
                x.dims()[d]
            )));
        }
        x.index_select(d as isize, &Tensor::repeat_interleave_index(&reps)?.to(x.device())?)
    }

    /// `torch.repeat_interleave(repeats)`: `i` repeated `repeats[i]` times, for a 1-d int tensor.
    pub fn repeat_interleave_self(repeats: &Tensor) -> Result<Tensor> {
        if !matches!(repeats.dtype(), DType::I64 | DType::I32) {
            return Err(Error::msg(format!(
                "\"repeat_interleave_cpu\" not implemented for '{}'",
                repeats.dtype().scalar_type_name()
            )));
        }
        if repeats.rank() != 1 {
            return Err(Error::msg("repeat_interleave only accept 1D vector as repeat"));
        }
        let idx = Tensor::repeat_interleave_index(&repeats.to_dtype(DType::I64)?.to_vec::<i64>()?)?
            .to(repeats.device())?;
        idx.to_dtype(repeats.dtype())
    }

    /// `[0; r0] ++ [1; r1] ++ ...` as an int64 tensor, refusing negative counts.
    fn repeat_interleave_index(reps: &[i64]) -> Result<Tensor> {
        if reps.iter().any(|&r| r < 0) {
            return Err(Error::msg("repeats can not be negative"));
        }
        let idx: Vec<i64> =
            reps.iter().enumerate().flat_map(|(i, &r)| std::iter::repeat_n(i as i64, r as usize)).collect();
        let n = idx.len();
        Tensor::from_vec(idx, [n])
    }
}

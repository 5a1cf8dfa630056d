//! Joining tensors: cat (the one prim of the family), stack, hstack/vstack/dstack, atleast_nd.

use oxtorch_core::ops::{Prim, ShapeOp};
use oxtorch_core::{promote_types, wrap_dim, Error, Result};

use super::refs;
use crate::dispatch::apply1;
use crate::Tensor;

impl Tensor {
    /// `torch.cat(tensors, dim)`: joins tensors (same rank, same sizes except at `dim`) along `dim`.
    /// The result dtype promotes across inputs; 1-d empty tensors are skipped, as in torch.
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Err(Error::msg("torch.cat(): expected a non-empty list of Tensors"));
        };
        let mut dtype = first.dtype();
        for (i, t) in tensors.iter().enumerate() {
            if t.rank() == 0 {
                return Err(Error::shape(format!(
                    "zero-dimensional tensor (at position {i}) cannot be concatenated"
                )));
            }
            dtype = promote_types(dtype, t.dtype());
        }
        let kept: Vec<(usize, &Tensor)> =
            tensors.iter().copied().enumerate().filter(|(_, t)| !(t.rank() == 1 && t.numel() == 0)).collect();
        let Some(&(_, reference)) = kept.first() else {
            return first.to_dtype(dtype)?.copy();
        };
        let d = wrap_dim(dim, reference.rank())?;
        for &(i, t) in &kept {
            if t.rank() != reference.rank() {
                return Err(Error::shape(format!(
                    "Tensors must have same number of dimensions: got {} and {}",
                    reference.rank(),
                    t.rank()
                )));
            }
            for k in (0..t.rank()).filter(|&k| k != d) {
                if t.dims()[k] != reference.dims()[k] {
                    return Err(Error::shape(format!(
                        "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                        reference.dims()[k],
                        t.dims()[k]
                    )));
                }
            }
        }
        let cast: Vec<Tensor> = kept.iter().map(|(_, t)| t.to_dtype(dtype)).collect::<Result<_>>()?;
        let prim = Prim::Shape(ShapeOp::Cat { dim: d, n: cast.len() });
        apply1(&prim, &refs(&cast), reference.device())
    }

    /// `torch.concat`: the same as [`Tensor::cat`].
    pub fn concat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        Tensor::cat(tensors, dim)
    }

    /// `torch.stack(tensors, dim)`: joins equally shaped tensors along a new dim `dim`.
    pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Err(Error::msg("stack expects a non-empty TensorList"));
        };
        for (i, t) in tensors.iter().enumerate() {
            if t.dims() != first.dims() {
                return Err(Error::shape(format!(
                    "stack expects each tensor to be equal size, but got {:?} at entry 0 and {:?} at entry {i}",
                    first.dims(),
                    t.dims()
                )));
            }
        }
        let d = wrap_dim(dim, first.rank() + 1)?;
        let parts: Vec<Tensor> = tensors.iter().map(|t| t.unsqueeze(d as isize)).collect::<Result<_>>()?;
        Tensor::cat(&refs(&parts), d as isize)
    }

    /// `torch.atleast_1d`: 0-d tensors become `[1]`; others are returned as they are.
    pub fn atleast_1d(&self) -> Result<Tensor> {
        if self.rank() == 0 {
            self.reshape([1])
        } else {
            Ok(self.clone())
        }
    }

    /// `torch.atleast_2d`: `[]` and `[n]` become `[1, 1]` and `[1, n]`.
    pub fn atleast_2d(&self) -> Result<Tensor> {
        match self.rank() {
            0 => self.reshape([1, 1]),
            1 => self.unsqueeze(0),
            _ => Ok(self.clone()),
        }
    }

    /// `torch.atleast_3d`: `[]`, `[n]`, `[m, n]` become `[1, 1, 1]`, `[1, n, 1]`, `[m, n, 1]`.
    pub fn atleast_3d(&self) -> Result<Tensor> {
        match self.rank() {
            0 => self.reshape([1, 1, 1]),
            1 => self.unsqueeze(0)?.unsqueeze(2),
            2 => self.unsqueeze(2),
            _ => Ok(self.clone()),
        }
    }

    fn stack_like(
        tensors: &[&Tensor],
        name: &str,
        prep: fn(&Tensor) -> Result<Tensor>,
        dim: impl Fn(&Tensor) -> isize,
    ) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(Error::msg(format!("{name} expects a non-empty TensorList")));
        }
        let parts: Vec<Tensor> = tensors.iter().map(|t| prep(t)).collect::<Result<_>>()?;
        Tensor::cat(&refs(&parts), dim(&parts[0]))
    }

    /// torch's `column_stack`: vectors (and 0-d tensors) as columns, then [`Tensor::hstack`].
    pub fn column_stack(tensors: &[&Tensor]) -> Result<Tensor> {
        let columns = tensors
            .iter()
            .map(|t| if t.rank() <= 1 { t.reshape([-1, 1]) } else { Ok((*t).clone()) })
            .collect::<Result<Vec<_>>>()?;
        Tensor::hstack(&columns.iter().collect::<Vec<_>>())
    }

    /// torch's `row_stack`, an alias of [`Tensor::vstack`].
    pub fn row_stack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::vstack(tensors)
    }

    /// `torch.hstack`: concatenation along dim 1 (dim 0 for 1-d inputs), after `atleast_1d`.
    pub fn hstack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::stack_like(tensors, "hstack", Tensor::atleast_1d, |t| if t.rank() == 1 { 0 } else { 1 })
    }

    /// `torch.vstack`: concatenation along dim 0 after `atleast_2d`.
    pub fn vstack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::stack_like(tensors, "vstack", Tensor::atleast_2d, |_| 0)
    }

    /// `torch.dstack`: concatenation along dim 2 after `atleast_3d`.
    pub fn dstack(tensors: &[&Tensor]) -> Result<Tensor> {
        Tensor::stack_like(tensors, "dstack", Tensor::atleast_3d, |_| 2)
    }
}

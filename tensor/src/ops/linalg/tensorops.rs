//! `linalg.tensorinv` and `linalg.tensorsolve`: the inverse and the solver of a tensor read as a
//! square matrix (its leading dims the rows, the others the columns), through `inv_ex` and
//! `solve` (so differentiable as those).

use oxtorch_core::{DType, Error, Result};

use super::matfn::inv_ex;
use super::solve::solve;
use crate::Tensor;

/// `torch.linalg.tensorinv(A, ind=ind)`: the tensor `X` of shape `A.shape[ind:] + A.shape[:ind]`
/// with `tensordot(X, A, ind) = I`: the inverse of `A` reshaped to the square matrix
/// `prod(A.shape[:ind]) × prod(A.shape[ind:])` (the two products must be equal), reshaped back.
/// `ind` must be positive; a singular matrix is torch's error (`inv: The diagonal element 1 is
/// zero, ...`), and the dtype checks are `linalg.inv`'s. Differentiable through `inv`.
pub fn tensorinv(a: &Tensor, ind: i64) -> Result<Tensor> {
    if ind <= 0 {
        return Err(Error::msg(format!("Expected a strictly positive integer for 'ind', but got {ind}")));
    }
    let ind = ind as usize;
    if ind > a.rank() {
        return Err(Error::msg(format!("ArrayRef: invalid slice, N = {ind}; size = {}", a.rank())));
    }
    let (front, back) = a.dims().split_at(ind);
    let (rows, cols) = (front.iter().product::<usize>(), back.iter().product::<usize>());
    if rows != cols {
        return Err(Error::shape(format!(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {cols} != {rows}"
        )));
    }
    let (inv, info) = inv_ex(&a.reshape([rows, cols])?)?;
    let info = info.to_dtype(DType::I64)?.item::<i64>()?;
    if info != 0 {
        return Err(Error::msg(format!(
            "inv: The diagonal element {info} is zero, the inversion could not be completed because the input matrix is singular."
        )));
    }
    let shape: Vec<usize> = back.iter().chain(front).copied().collect();
    inv.reshape(shape)
}

/// `torch.linalg.tensorsolve(A, B, dims=dims)`: the tensor `X` of shape `A.shape[B.ndim:]` with
/// `tensordot(A, X, X.ndim) = B`, solved as the square system `A` reshaped to
/// `B.numel() × B.numel()` (the product of `A.shape[B.ndim:]` must equal `B.numel()`). `dims`
/// (torch's default `None`) first moves those dims of `A` to the end, in order. The dtype,
/// singularity and dtype-mismatch errors are [`solve`]'s; differentiable through it.
pub fn tensorsolve(a: &Tensor, b: &Tensor, dims: Option<&[isize]>) -> Result<Tensor> {
    let nd = a.rank();
    let a = match dims {
        Some(d) => {
            let dest: Vec<isize> = (nd.saturating_sub(d.len())..nd).map(|x| x as isize).collect();
            a.movedim(d.to_vec(), dest)?
        }
        None => a.clone(),
    };
    if b.rank() > nd {
        return Err(Error::msg("cannot create std::vector larger than max_size()"));
    }
    let shape = a.dims()[b.rank()..].to_vec();
    let size = shape.iter().product::<usize>();
    if size != b.numel() {
        return Err(Error::shape(format!(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got {size} != {}",
            b.numel()
        )));
    }
    let x = solve(&a.reshape([size, size])?, &b.flatten(0, -1)?, true)?;
    x.reshape(shape)
}

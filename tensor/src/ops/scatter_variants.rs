//! Scatter variants of views and flat/indexed reductions: slice_scatter, select_scatter,
//! diagonal_scatter (a copy of self with one view's entries replaced), put/put_ (flat indices)
//! and index_reduce/index_reduce_.
//!
//! The view scatters find the flat positions the view covers by taking the same view of an
//! `arange` of self's positions, then run one scatter prim on the flattened self: so they run on
//! every device and are differentiable w.r.t. both self and src, as torch's are.

use oxtorch_core::ops::ReduceOp;
use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::indexing::{checked_indices, index_as_i64, IndexDTypes};
use crate::Tensor;

impl Tensor {
    /// `self`'s flat positions (int64, on self's device) in self's shape.
    fn flat_positions(&self) -> Result<Tensor> {
        Tensor::arange(self.numel() as i64, (DType::I64, self.device()))?.reshape(self.dims().to_vec())
    }

    /// A copy of self with the entries at the flat positions `view` (a view of
    /// [`Tensor::flat_positions`]) replaced by `src` (cast to self's dtype), after torch's
    /// shape check.
    fn scatter_into_view(&self, view: &Tensor, src: &Tensor) -> Result<Tensor> {
        if view.dims() != src.dims() {
            return Err(Error::shape(format!(
                "expected src to have a size equal to the slice of self. src size = {:?}, slice size = {:?}",
                src.dims(),
                view.dims()
            )));
        }
        if view.numel() == 0 {
            return self.copy();
        }
        let idx = view.reshape([-1])?;
        let src = src.to_dtype(self.dtype())?.reshape([-1])?;
        self.reshape([-1])?.scatter_raw(0, &idx, &src, None, true)?.reshape(self.dims().to_vec())
    }

    /// `torch.slice_scatter(self, src, dim, start, end, step)`: a copy of self with
    /// `out[.., start:end:step, ..] = src` along `dim` (Python slice bounds: negative ones count
    /// from the end, both clamp; `None` is open). `src` must have the slice's shape; it is cast to
    /// self's dtype. `step` must be positive.
    pub fn slice_scatter(
        &self,
        src: &Tensor,
        dim: isize,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Result<Tensor> {
        if step <= 0 {
            return Err(Error::msg("slice step must be positive"));
        }
        wrap_dim(dim, self.rank())?;
        let view = self.flat_positions()?.slice_bounds(
            dim,
            start.map(|s| s as isize),
            end.map(|e| e as isize),
            step as usize,
        )?;
        self.scatter_into_view(&view, src)
    }

    /// `torch.select_scatter(self, src, dim, index)`: a copy of self with `out.select(dim, index)
    /// = src` (negative `index` counts from the end). `src` has self's shape without `dim`.
    pub fn select_scatter(&self, src: &Tensor, dim: isize, index: i64) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(Error::msg("select() cannot be applied to a 0-dim tensor."));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = self.dims()[d] as i64;
        if index < -size || index >= size {
            return Err(Error::msg(format!(
                "select(): index {index} out of range for tensor of size {:?} at dimension {d}",
                self.dims()
            )));
        }
        let view = self.flat_positions()?.select(d as isize, index as isize)?;
        self.scatter_into_view(&view, src)
    }

    /// `torch.diagonal_scatter(self, src, offset, dim1, dim2)`: a copy of self with
    /// `out.diagonal(offset, dim1, dim2) = src`. `src` has the diagonal's shape.
    pub fn diagonal_scatter(&self, src: &Tensor, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        let view = self.flat_positions()?.diagonal(offset, dim1, dim2)?;
        self.scatter_into_view(&view, src)
    }

    /// `self.put(index, source, accumulate)`: a copy of self with the elements at the flat
    /// positions `index` (int64, any shape; negative values wrap) set to `source`'s (same dtype,
    /// same number of elements), or added to them when `accumulate` (duplicates then sum).
    pub fn put(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<Tensor> {
        let index =
            index_as_i64(index, IndexDTypes::Long("put_(): Expected a long tensor for index, but got {}"))?;
        if source.dtype() != self.dtype() {
            return Err(Error::msg(format!(
                "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        if source.numel() != index.numel() {
            return Err(Error::msg(format!(
                "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, index.numel() = {}",
                source.numel(),
                index.numel()
            )));
        }
        if index.numel() == 0 {
            return self.copy();
        }
        let n = self.numel();
        if n == 0 {
            return Err(Error::msg("put_(): Tried to put elements into an empty tensor"));
        }
        let idx = checked_indices(&index, n, true, |v| {
            Error::msg(format!("out of range: tried to access index {v} on a tensor of {n} elements."))
        })?
        .reshape([-1])?;
        let src = source.reshape([-1])?;
        let reduce = if accumulate { Some(ReduceOp::Sum) } else { None };
        self.reshape([-1])?.scatter_raw(0, &idx, &src, reduce, true)?.reshape(self.dims().to_vec())
    }

    /// In-place [`Tensor::put`] (torch's `put_`).
    pub fn put_(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<&Tensor> {
        self.apply_(&[source], |x| x.put(index, source, accumulate))
    }

    /// `self.index_reduce(dim, index, source, reduce, include_self)`: reduces `source[.., i, ..]`
    /// into the entries `index[i]` (a vector of int64/int32, no wrapping) of a copy of self along
    /// `dim`, with `reduce` one of "prod", "mean", "amax", "amin"; self's values take part when
    /// `include_self`. "mean" divides by the count (floor division for integers); entries no
    /// index names keep self's value.
    pub fn index_reduce(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        reduce: &str,
        include_self: bool,
    ) -> Result<Tensor> {
        if !matches!(reduce, "prod" | "mean" | "amax" | "amin") {
            return Err(Error::msg(format!(
                "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
            )));
        }
        let index_dtype = index.dtype();
        let index = index_as_i64(
            index,
            IndexDTypes::Int("index_reduce_(): Expected dtype int32/int64 for index but got: {}"),
        )?;
        if index.rank() > 1 {
            return Err(Error::msg(format!(
                "index_reduce_(): Index is supposed to be a vector, but got dim: {} with type: {} and size: {:?}",
                index.rank(),
                index_dtype.scalar_type_name(),
                index.dims()
            )));
        }
        let d = wrap_dim(dim, self.rank())?;
        if source.dtype() != self.dtype() {
            return Err(Error::msg(format!(
                "index_reduce_(): self ({}) and source ({}) must have the same scalar type",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        let me = if self.rank() == 0 { self.reshape([1])? } else { self.clone() };
        let src = if source.rank() == 0 { source.reshape([1])? } else { source.clone() };
        let same_other_dims =
            src.rank() == me.rank() && (0..me.rank()).all(|k| k == d || src.dims()[k] == me.dims()[k]);
        if !same_other_dims {
            return Err(Error::shape(format!(
                "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {:?} source.shape = {:?}",
                self.dims(),
                source.dims()
            )));
        }
        if src.dims()[d] != index.numel() {
            return Err(Error::shape(format!(
                "index_reduce_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {d}",
                index.numel(),
                src.dims()[d]
            )));
        }
        if reduce == "mean" && self.dtype() == DType::Bool {
            return Err(Error::msg("\"div_floor_cpu\" not implemented for 'Bool'"));
        }
        if index.numel() == 0 {
            return self.copy();
        }
        let size = me.dims()[d];
        let idx = checked_indices(&index, size, false, |_| Error::msg("index out of range in self"))?;
        let mut view = vec![1usize; src.rank()];
        view[d] = idx.numel();
        let idx = idx.reshape(view)?.broadcast_to(src.dims())?.contiguous()?;
        me.scatter_reduce(d as isize, &idx, &src, reduce, include_self)?.reshape(self.dims().to_vec())
    }

    /// In-place [`Tensor::index_reduce`] (torch's `index_reduce_`).
    pub fn index_reduce_(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        reduce: &str,
        include_self: bool,
    ) -> Result<&Tensor> {
        self.apply_(&[source], |x| x.index_reduce(dim, index, source, reduce, include_self))
    }
}

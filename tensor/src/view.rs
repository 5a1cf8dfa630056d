//! View ops: new layouts over the same storage, never a data copy (except `reshape`/`flatten` when
//! the strides cannot express the result, as in torch).

use oxtorch_core::{wrap_dim, Error, Layout, Result};

use std::sync::Arc;

use crate::autograd::record::{Join, ViewKind};
use crate::dims::{IntoDims, SliceRange};
use crate::Tensor;

/// Resolves a `-1` entry of `dims` so that the shape holds `numel` elements.
pub(crate) fn infer_shape(dims: &[isize], numel: usize) -> Result<Vec<usize>> {
    let mut infer = None;
    let mut known = 1usize;
    for (i, &d) in dims.iter().enumerate() {
        if d == -1 {
            if infer.replace(i).is_some() {
                return Err(Error::shape("only one dimension can be inferred"));
            }
        } else if d < 0 {
            return Err(Error::shape(format!("invalid shape dimension {d}")));
        } else {
            known = known.checked_mul(d as usize).ok_or_else(|| {
                Error::shape(format!("Storage size calculation overflowed with sizes={dims:?}"))
            })?;
        }
    }
    let invalid = || Error::shape(format!("shape '{dims:?}' is invalid for input of size {numel}"));
    let mut out: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    match infer {
        Some(i) => {
            if known == 0 || !numel.is_multiple_of(known) {
                return Err(invalid());
            }
            out[i] = numel / known;
        }
        None if known != numel => return Err(invalid()),
        None => {}
    }
    Ok(out)
}

/// The size of dim `d` (already wrapped), refusing 0-d tensors, which have no dims to split.
fn dim_size(t: &Tensor, d: usize) -> Result<usize> {
    t.dims()
        .get(d)
        .copied()
        .ok_or_else(|| Error::shape(format!("Dimension specified as {d} but tensor has no dimensions")))
}

impl Tensor {
    /// A view with another shape over the same elements (one size may be `-1`); fails when the
    /// strides cannot express it (use [`Tensor::reshape`]).
    pub fn view(&self, shape: impl IntoDims) -> Result<Tensor> {
        let shape = infer_shape(&shape.into_dims(), self.numel())?;
        match self.layout().view(&shape) {
            Some(l) => Ok(self.view_with(l, "ViewBackward0", || ViewKind::Reshape)),
            None => Err(Error::shape(
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            )),
        }
    }

    /// Like [`Tensor::view`], but copies when a view is impossible.
    pub fn reshape(&self, shape: impl IntoDims) -> Result<Tensor> {
        let shape = infer_shape(&shape.into_dims(), self.numel())?;
        match self.layout().view(&shape) {
            Some(l) => Ok(self.view_with(l, "ViewBackward0", || ViewKind::Reshape)),
            None => {
                let c = self.copy()?;
                Ok(c.view_with(Layout::contiguous(shape), "UnsafeViewBackward0", || ViewKind::Reshape))
            }
        }
    }

    /// Reorders the dimensions.
    pub fn permute(&self, dims: impl IntoDims) -> Result<Tensor> {
        let dims = dims.into_dims();
        let layout = self.layout().permute(&dims)?;
        let rank = self.rank();
        Ok(self.view_with(layout, "PermuteBackward0", || {
            ViewKind::Permute(dims.iter().map(|&d| wrap_dim(d, rank).unwrap_or(0)).collect())
        }))
    }

    /// Swaps dimensions `d0` and `d1`.
    pub fn transpose(&self, d0: isize, d1: isize) -> Result<Tensor> {
        let layout = self.layout().transpose(d0, d1)?;
        let rank = self.rank();
        Ok(self.view_with(layout, "TransposeBackward0", || {
            let mut p: Vec<usize> = (0..rank).collect();
            if rank > 0 {
                p.swap(wrap_dim(d0, rank).unwrap_or(0), wrap_dim(d1, rank).unwrap_or(0));
            }
            ViewKind::Permute(p)
        }))
    }

    /// Transposes a 2-D tensor (0-D and 1-D give a view of the same shape, as torch's `t()`).
    pub fn t(&self) -> Result<Tensor> {
        match self.rank() {
            0 | 1 => Ok(self.view_with(self.layout().clone(), "TBackward0", || ViewKind::Reshape)),
            2 => Ok(self.named(self.transpose(0, 1)?, "TBackward0")),
            r => Err(Error::shape(format!("t() expects a tensor with <= 2 dimensions, but self is {r}D"))),
        }
    }

    /// Elements `start..start+len` of dimension `dim`.
    pub fn narrow(&self, dim: isize, start: isize, len: usize) -> Result<Tensor> {
        let layout = self.layout().narrow(dim, start, len)?;
        // Valid now (the layout checked them): the dim, and a negative start counted from the end.
        let d = wrap_dim(dim, self.rank())?;
        let start = if start < 0 { start + self.dims()[d] as isize } else { start } as usize;
        Ok(self.view_with(layout, "NarrowBackward0", || ViewKind::Narrow { dim: d, start }))
    }

    /// Python slicing `t[..., start:end:step, ...]` along `dim`: `t.slice(1, 1..3, 1)`, `t.slice(0, .., 2)`.
    pub fn slice(&self, dim: isize, range: impl SliceRange, step: usize) -> Result<Tensor> {
        let (start, end) = range.bounds();
        self.slice_bounds(dim, start, end, step)
    }

    /// [`Tensor::slice`] with explicit optional bounds.
    pub(crate) fn slice_bounds(
        &self,
        dim: isize,
        start: Option<isize>,
        end: Option<isize>,
        step: usize,
    ) -> Result<Tensor> {
        let layout = self.layout().slice(dim, start, end, step)?;
        if step == 1 {
            // Python's bounds: a negative start counts from the end, and both clamp to the dim.
            let d = wrap_dim(dim, self.rank())?;
            let size = self.dims()[d] as isize;
            let from = start.unwrap_or(0);
            let from = if from < 0 { (from + size).max(0) } else { from.min(size) } as usize;
            return Ok(self.view_with(layout, "SliceBackward0", || ViewKind::Narrow { dim: d, start: from }));
        }
        Ok(self.view_with(layout, "SliceBackward0", || {
            ViewKind::Replay(Arc::new(move |t: &Tensor| {
                Ok(t.with_layout(t.layout().slice(dim, start, end, step)?))
            }))
        }))
    }

    /// Index `index` of dimension `dim`, removing that dimension.
    pub fn select(&self, dim: isize, index: isize) -> Result<Tensor> {
        let layout = self.layout().select(dim, index)?;
        Ok(self.view_with(layout, "SelectBackward0", || {
            ViewKind::Replay(Arc::new(move |t: &Tensor| t.select(dim, index)))
        }))
    }

    /// Broadcasts size-1 dims to `sizes` (`-1` keeps a size); the new elements share memory.
    pub fn expand(&self, sizes: impl IntoDims) -> Result<Tensor> {
        let layout = self.layout().expand(&sizes.into_dims())?;
        Ok(self.view_with(layout, "ExpandBackward0", || ViewKind::Expand))
    }

    /// Expands to `other`'s shape.
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        self.broadcast_to(other.dims())
    }

    /// Broadcasts to exactly `shape`.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        if self.dims() == shape {
            return Ok(self.clone());
        }
        Ok(self.view_with(self.layout().broadcast_to(shape)?, "ExpandBackward0", || ViewKind::Expand))
    }

    /// Removes every size-1 dimension.
    pub fn squeeze(&self) -> Result<Tensor> {
        Ok(self.view_with(self.layout().squeeze_all(), "SqueezeBackward0", || ViewKind::Reshape))
    }

    /// Removes `dim` (or each of several dims) where its size is 1.
    pub fn squeeze_dims(&self, dims: impl IntoDims) -> Result<Tensor> {
        let dims = dims.into_dims();
        let mut seen = Vec::with_capacity(dims.len());
        for &d in &dims {
            let w = wrap_dim(d, self.rank())?;
            if seen.contains(&w) {
                return Err(Error::msg(format!("dim {w} appears multiple times in the list of dims")));
            }
            seen.push(w);
        }
        let layout = self.layout().squeeze_dims(&dims)?;
        Ok(self.view_with(layout, "SqueezeBackward1", || ViewKind::Reshape))
    }

    /// Inserts a size-1 dimension at `dim`.
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        Ok(self.view_with(self.layout().unsqueeze(dim)?, "UnsqueezeBackward0", || ViewKind::Reshape))
    }

    /// Merges dims `start..=end` into one (a view when possible, else a copy).
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        if self.rank() == 0 {
            // (dims 0 and -1 name the scalar's one implicit dim)
            wrap_dim(start, 0)?;
            wrap_dim(end, 0)?;
            return self.reshape([1]);
        }
        let (s, e) = (wrap_dim(start, self.rank())?, wrap_dim(end, self.rank())?);
        if s > e {
            return Err(Error::shape("flatten() has invalid args: start_dim cannot come after end_dim"));
        }
        let dims = self.dims();
        let mut shape: Vec<usize> = dims[..s].to_vec();
        shape.push(dims[s..=e].iter().product());
        shape.extend_from_slice(&dims[e + 1..]);
        self.reshape(shape)
    }

    /// Splits dim `dim` into `sizes` (one may be `-1`).
    pub fn unflatten(&self, dim: isize, sizes: impl IntoDims) -> Result<Tensor> {
        let d = wrap_dim(dim, self.rank())?;
        let size = dim_size(self, d)?;
        let sizes = sizes.into_dims();
        if sizes.is_empty() {
            return Err(Error::shape("unflatten: sizes must be non-empty"));
        }
        let sizes = infer_shape(&sizes, size).map_err(|_| {
            Error::shape(format!(
                "unflatten: Provided sizes don't multiply up to the size of dim {dim} ({}) in the input tensor",
                self.dims()[d]
            ))
        })?;
        let mut shape = self.dims()[..d].to_vec();
        shape.extend(sizes);
        shape.extend_from_slice(&self.dims()[d + 1..]);
        self.view(shape)
    }

    /// Every index of `dim` as its own tensor (with `dim` removed).
    pub fn unbind(&self, dim: isize) -> Result<Vec<Tensor>> {
        let d = wrap_dim(dim, self.rank())?;
        let layouts = (0..dim_size(self, d)?)
            .map(|i| self.layout().select(d as isize, i as isize))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.view_group(layouts, "UnbindBackward0", Join::Stack(d)))
    }

    /// Splits `dim` into pieces of `split_size` (the last may be smaller).
    pub fn split(&self, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
        let d = wrap_dim(dim, self.rank())?;
        let size = dim_size(self, d)?;
        if split_size == 0 && size != 0 {
            return Err(Error::msg("split_size can only be 0 if dimension size is 0"));
        }
        let n = if size == 0 { 1 } else { size.div_ceil(split_size) };
        let layouts = (0..n)
            .map(|i| {
                let start = i * split_size;
                self.layout().narrow(d as isize, start as isize, split_size.min(size - start))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.view_group(layouts, "SplitBackward0", Join::Cat(d)))
    }

    /// Splits `dim` into pieces of the given sizes, which must add up to its size.
    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        let d = wrap_dim(dim, self.rank())?;
        // A sum past `usize` is no sum to the size either (never an overflow panic).
        let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
        if total != Some(dim_size(self, d)?) {
            return Err(Error::shape(format!(
                "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {d}), but got split_sizes={sizes:?}",
                self.dims()[d]
            )));
        }
        let mut start = 0;
        let layouts = sizes
            .iter()
            .map(|&s| {
                let l = self.layout().narrow(d as isize, start as isize, s);
                start += s;
                l
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.view_group(layouts, "SplitWithSizesBackward0", Join::Cat(d)))
    }

    /// Splits `dim` into `chunks` pieces of equal size (the last may be smaller; there may be fewer;
    /// an empty dim gives `chunks` empty pieces, as in torch).
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        if chunks == 0 {
            return Err(Error::msg("chunk expects `chunks` to be greater than 0, got: 0"));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = dim_size(self, d)?;
        if size == 0 {
            // torch gives `chunks` empty pieces of an empty dim (as many as fit in memory).
            let mut sizes = Vec::new();
            sizes
                .try_reserve_exact(chunks)
                .map_err(|_| Error::msg(format!("chunk: cannot return {chunks} chunks (out of memory)")))?;
            sizes.resize(chunks, 0);
            return self.split_with_sizes(&sizes, dim);
        }
        self.split(size.div_ceil(chunks), dim)
    }

    /// The diagonal of dims `d1` and `d2` (`offset > 0` above it), as a view with that dim last.
    pub fn diagonal(&self, offset: isize, d1: isize, d2: isize) -> Result<Tensor> {
        let layout = self.layout().diagonal(offset, d1, d2)?;
        Ok(self.view_with(layout, "DiagonalBackward0", || {
            ViewKind::Replay(Arc::new(move |t: &Tensor| t.diagonal(offset, d1, d2)))
        }))
    }

    /// An arbitrary strided view of this tensor's storage, checked against the storage size.
    pub fn as_strided(
        &self,
        size: &[usize],
        stride: &[usize],
        storage_offset: Option<usize>,
    ) -> Result<Tensor> {
        let len = self.storage().read().len();
        let offset = storage_offset.unwrap_or(self.storage_offset());
        let layout = Layout::as_strided(size, stride, offset, len)?;
        let (size, stride, base_offset) = (size.to_vec(), stride.to_vec(), self.storage_offset());
        if self.requires_grad() && !self.is_contiguous() {
            return Err(Error::msg(
                "as_strided: autograd supports as_strided of a contiguous tensor only; call .contiguous() first",
            ));
        }
        Ok(self.view_with(layout, "AsStridedBackward0", || {
            ViewKind::Replay(Arc::new(move |t: &Tensor| {
                let t = t.contiguous()?;
                t.as_strided(&size, &stride, Some(offset - base_offset + t.storage_offset()))
            }))
        }))
    }
}

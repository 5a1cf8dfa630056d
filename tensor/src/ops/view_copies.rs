//! torch's view-copy functions (`permute_copy`, `view_copy`, `squeeze_copy`, `unsqueeze_copy`,
//! `t_copy`, `transpose_copy`, `expand_copy`, `diagonal_copy`, `select_copy`, `slice_copy`,
//! `split_copy`, `split_with_sizes_copy`, `unbind_copy`, `unfold_copy`, `alias_copy`,
//! `as_strided_copy`, `detach_copy`): the view op, then a copy into a fresh contiguous tensor
//! that never shares storage with the input (not even when the view is already contiguous).
//!
//! Each takes the view op's checks and messages and its gradient; the node is named as torch's
//! (`PermuteBackward0_copy`, ...).

use crate::dims::{IntoDims, SliceRange};
use crate::{Result, Tensor};

impl Tensor {
    /// A fresh contiguous copy of `view` (a view of `self`), its node named `name`.
    fn copy_of_view(&self, view: Result<Tensor>, name: &'static str) -> Result<Tensor> {
        let out = view?.copy()?;
        Ok(self.named(out, name))
    }

    /// Fresh contiguous copies of `views` (views of `self`), their nodes named `name`.
    fn copies_of_views(&self, views: Result<Vec<Tensor>>, name: &'static str) -> Result<Vec<Tensor>> {
        views?.iter().map(|v| self.copy_of_view(Ok(v.clone()), name)).collect()
    }

    /// torch's `permute_copy`: [`Tensor::permute`], copied.
    pub fn permute_copy(&self, dims: impl IntoDims) -> Result<Tensor> {
        self.copy_of_view(self.permute(dims), "PermuteBackward0_copy")
    }

    /// torch's `view_copy`: [`Tensor::view`] (one size may be `-1`), copied; as torch, strides
    /// a view could not take are fine (the copy reshapes).
    pub fn view_copy(&self, shape: impl IntoDims) -> Result<Tensor> {
        self.copy_of_view(self.reshape(shape), "ViewBackward0_copy")
    }

    /// torch's `squeeze_copy(x)`: [`Tensor::squeeze`] (every size-1 dim removed), copied.
    pub fn squeeze_copy(&self) -> Result<Tensor> {
        self.copy_of_view(self.squeeze(), "SqueezeBackward0_copy")
    }

    /// torch's `squeeze_copy(x, dim)`: `dim` removed if its size is 1, copied.
    pub fn squeeze_dim_copy(&self, dim: isize) -> Result<Tensor> {
        self.copy_of_view(self.squeeze_dims(dim), "SqueezeBackward1_copy")
    }

    /// torch's `squeeze_copy(x, dims)`: each of `dims` removed if its size is 1, copied.
    pub fn squeeze_dims_copy(&self, dims: impl IntoDims) -> Result<Tensor> {
        self.copy_of_view(self.squeeze_dims(dims), "SqueezeBackward2_copy")
    }

    /// torch's `unsqueeze_copy`: [`Tensor::unsqueeze`], copied.
    pub fn unsqueeze_copy(&self, dim: isize) -> Result<Tensor> {
        self.copy_of_view(self.unsqueeze(dim), "UnsqueezeBackward0_copy")
    }

    /// torch's `t_copy`: [`Tensor::t`] (at most 2-D), copied.
    pub fn t_copy(&self) -> Result<Tensor> {
        self.copy_of_view(self.t(), "TBackward0_copy")
    }

    /// torch's `transpose_copy`: [`Tensor::transpose`], copied.
    pub fn transpose_copy(&self, d0: isize, d1: isize) -> Result<Tensor> {
        self.copy_of_view(self.transpose(d0, d1), "TransposeBackward0_copy")
    }

    /// torch's `expand_copy`: [`Tensor::expand`] (`-1` keeps a size), materialized.
    pub fn expand_copy(&self, sizes: impl IntoDims) -> Result<Tensor> {
        self.copy_of_view(self.expand(sizes), "ExpandBackward0_copy")
    }

    /// torch's `diagonal_copy`: [`Tensor::diagonal`], copied.
    pub fn diagonal_copy(&self, offset: isize, d1: isize, d2: isize) -> Result<Tensor> {
        self.copy_of_view(self.diagonal(offset, d1, d2), "DiagonalBackward0_copy")
    }

    /// torch's `select_copy`: [`Tensor::select`], copied.
    pub fn select_copy(&self, dim: isize, index: isize) -> Result<Tensor> {
        self.copy_of_view(self.select(dim, index), "SelectBackward0_copy")
    }

    /// torch's `slice_copy(x, dim, start, end, step)`: [`Tensor::slice`], copied
    /// (`x.slice_copy(1, 1..3, 1)`, `x.slice_copy(0, .., 2)`).
    pub fn slice_copy(&self, dim: isize, range: impl SliceRange, step: usize) -> Result<Tensor> {
        self.copy_of_view(self.slice(dim, range, step), "SliceBackward0_copy")
    }

    /// torch's `split_copy`: [`Tensor::split`], each piece copied.
    pub fn split_copy(&self, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
        self.copies_of_views(self.split(split_size, dim), "SplitBackward0_copy")
    }

    /// torch's `split_with_sizes_copy`: [`Tensor::split_with_sizes`], each piece copied.
    pub fn split_with_sizes_copy(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        self.copies_of_views(self.split_with_sizes(sizes, dim), "SplitWithSizesBackward0_copy")
    }

    /// torch's `unbind_copy`: [`Tensor::unbind`], each slice copied.
    pub fn unbind_copy(&self, dim: isize) -> Result<Vec<Tensor>> {
        self.copies_of_views(self.unbind(dim), "UnbindBackward0_copy")
    }

    /// torch's `unfold_copy`: [`Tensor::unfold`] (windows of `size` every `step` along
    /// `dimension`, as a new last dim), materialized.
    pub fn unfold_copy(&self, dimension: isize, size: usize, step: usize) -> Result<Tensor> {
        self.copy_of_view(self.unfold(dimension, size, step), "UnfoldBackward0_copy")
    }

    /// torch's `alias_copy`: a copy of `self` (the copy of the alias view).
    pub fn alias_copy(&self) -> Result<Tensor> {
        self.copy_of_view(Ok(self.clone()), "AliasBackward0_copy")
    }

    /// torch's `as_strided_copy`: [`Tensor::as_strided`] (checked against the storage), copied.
    pub fn as_strided_copy(
        &self,
        size: &[usize],
        stride: &[usize],
        storage_offset: Option<usize>,
    ) -> Result<Tensor> {
        self.copy_of_view(self.as_strided(size, stride, storage_offset), "AsStridedBackward0_copy")
    }

    /// torch's `detach_copy`: a copy of `self` cut from the graph (it never requires grad; torch's
    /// own result oddly claims `requires_grad` with a `NotImplemented` node that cannot run
    /// backward).
    pub fn detach_copy(&self) -> Result<Tensor> {
        self.detach().copy()
    }
}

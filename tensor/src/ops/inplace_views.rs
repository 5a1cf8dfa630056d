//! torch's in-place view ops (`t_`, `transpose_`, `swapdims_`/`swapaxes_`, `unsqueeze_`,
//! `squeeze_`, `as_strided_`): they give the tensor a new shape and strides over the same storage.
//!
//! A `Tensor` is a shared handle to an immutable view, so these take `&mut self` and change the
//! view of this handle; other handles (Rust clones, which are the same torch tensor) keep the old
//! view. As torch, each bumps the storage's version, refuses a leaf that requires grad (and a view
//! of one) under grad mode, and records a view node named as torch's in-place form
//! (`TBackward1`, `TransposeBackward1`, `UnsqueezeBackward1`, `SqueezeBackward3/4/5`,
//! `AsStridedBackward1`); a view stays a view of its base.

use std::sync::Arc;

use oxtorch_core::{wrap_dim, Error, Layout, Result};

use crate::autograd::record::{check_inplace, needs_recording, ViewKind};
use crate::dims::IntoDims;
use crate::Tensor;

/// The permutation swapping `d0` and `d1` of `rank` dims (already validated).
fn swap_permutation(rank: usize, d0: isize, d1: isize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..rank).collect();
    if rank > 0 {
        p.swap(wrap_dim(d0, rank).unwrap_or(0), wrap_dim(d1, rank).unwrap_or(0));
    }
    p
}

impl Tensor {
    /// Makes `layout` (validated by the caller) this handle's view, as an in-place view op.
    fn set_view_in_place(
        &mut self,
        layout: Layout,
        name: &'static str,
        kind: impl FnOnce() -> ViewKind,
    ) -> Result<&mut Tensor> {
        // (before the new view is made, so that its history is current with the version)
        self.storage().bump_version();
        if needs_recording(&[&*self]) || self.view_base().is_some() {
            *self = self.view_with(layout, name, kind);
        } else if let Some(inner) = Arc::get_mut(&mut self.0) {
            // The only handle: change it in place, keeping `requires_grad`, `.grad` and hooks.
            inner.layout = layout;
        } else {
            let keep_leaf = self.requires_grad() && self.is_leaf();
            let out = self.with_layout(layout);
            *self = if keep_leaf { out.requires_grad_(true)? } else { out };
        }
        Ok(self)
    }

    /// In-place [`Tensor::t`] (torch's `t_`): transposes a 2-D tensor; 0-D and 1-D are kept.
    pub fn t_(&mut self) -> Result<&mut Tensor> {
        check_inplace(self)?;
        let rank = self.rank();
        if rank > 2 {
            return Err(Error::shape(format!(
                "t_() expects a tensor with <= 2 dimensions, but self is {rank}D"
            )));
        }
        let layout = if rank == 2 { self.layout().transpose(0, 1)? } else { self.layout().clone() };
        self.set_view_in_place(layout, "TBackward1", || ViewKind::Permute(swap_permutation(rank, 0, -1)))
    }

    /// In-place [`Tensor::transpose`] (torch's `transpose_`): swaps dims `d0` and `d1`.
    pub fn transpose_(&mut self, d0: isize, d1: isize) -> Result<&mut Tensor> {
        check_inplace(self)?;
        let layout = self.layout().transpose(d0, d1)?;
        let rank = self.rank();
        self.set_view_in_place(layout, "TransposeBackward1", || {
            ViewKind::Permute(swap_permutation(rank, d0, d1))
        })
    }

    /// torch's `swapdims_`: [`Tensor::transpose_`].
    pub fn swapdims_(&mut self, d0: isize, d1: isize) -> Result<&mut Tensor> {
        self.transpose_(d0, d1)
    }

    /// torch's `swapaxes_`: [`Tensor::transpose_`].
    pub fn swapaxes_(&mut self, d0: isize, d1: isize) -> Result<&mut Tensor> {
        self.transpose_(d0, d1)
    }

    /// In-place [`Tensor::unsqueeze`] (torch's `unsqueeze_`): inserts a size-1 dim at `dim`.
    pub fn unsqueeze_(&mut self, dim: isize) -> Result<&mut Tensor> {
        check_inplace(self)?;
        let layout = self.layout().unsqueeze(dim)?;
        self.set_view_in_place(layout, "UnsqueezeBackward1", || ViewKind::Reshape)
    }

    /// In-place [`Tensor::squeeze`] (torch's `squeeze_()`): removes every size-1 dim.
    pub fn squeeze_(&mut self) -> Result<&mut Tensor> {
        check_inplace(self)?;
        let layout = self.layout().squeeze_all();
        self.set_view_in_place(layout, "SqueezeBackward3", || ViewKind::Reshape)
    }

    /// torch's `squeeze_(dim)`: removes `dim` if its size is 1.
    pub fn squeeze_dim_(&mut self, dim: isize) -> Result<&mut Tensor> {
        check_inplace(self)?;
        let layout = self.layout().squeeze_dims(&[dim])?;
        self.set_view_in_place(layout, "SqueezeBackward4", || ViewKind::Reshape)
    }

    /// torch's `squeeze_(dims)`: removes each of `dims` whose size is 1 (no dim twice).
    pub fn squeeze_dims_(&mut self, dims: impl IntoDims) -> Result<&mut Tensor> {
        check_inplace(self)?;
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
        self.set_view_in_place(layout, "SqueezeBackward5", || ViewKind::Reshape)
    }

    /// In-place [`Tensor::as_strided`] (torch's `as_strided_`): any strided view of the storage
    /// (checked against its size); `storage_offset` defaults to the current one. Under autograd
    /// the tensor must be contiguous, as for `as_strided`.
    pub fn as_strided_(
        &mut self,
        size: &[usize],
        stride: &[usize],
        storage_offset: Option<usize>,
    ) -> Result<&mut Tensor> {
        check_inplace(self)?;
        let len = self.storage().read().len();
        let offset = storage_offset.unwrap_or(self.storage_offset());
        let layout = Layout::as_strided(size, stride, offset, len)?;
        if needs_recording(&[&*self]) && (!self.is_contiguous() || offset < self.storage_offset()) {
            return Err(Error::msg(
                "as_strided_: autograd supports as_strided_ of a contiguous tensor only, at or after its storage offset; call .contiguous() first",
            ));
        }
        let (size, stride, base_offset) = (size.to_vec(), stride.to_vec(), self.storage_offset());
        self.set_view_in_place(layout, "AsStridedBackward1", || {
            ViewKind::Replay(Arc::new(move |t: &Tensor| {
                let t = t.contiguous()?;
                t.as_strided(&size, &stride, Some(offset - base_offset + t.storage_offset()))
            }))
        })
    }
}

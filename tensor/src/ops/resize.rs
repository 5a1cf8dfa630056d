//! torch's `resize_` and `resize_as_`: a new shape for a tensor, growing its storage if needed.
//!
//! As torch: a tensor that requires grad is refused ("cannot resize variables that require
//! grad", leaf or not, even under `no_grad`); the storage's version is bumped; the same shape
//! keeps the current strides; any other shape becomes contiguous at the current storage offset,
//! over the storage's elements in storage order (a shrink keeps the storage's size; a grow keeps
//! its elements as the prefix of a larger storage).
//!
//! Differences from torch: the new elements of a grown storage are zeros (torch leaves them
//! uninitialized; oxtorch never exposes uninitialized memory), and a storage borrowed zero-copy
//! (a memory-mapped checkpoint) is grown into owned memory instead of being refused as not
//! resizable. The storage is grown in place, so every tensor sharing it sees the larger storage,
//! as in torch. Like the in-place view ops (`t_`, `as_strided_`), these take `&mut self` and
//! change the view of this handle: other handles (Rust clones, which are the same torch tensor)
//! keep their shape.

use std::sync::Arc;

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::{Error, Layout, Result, Shape};

use crate::storage::Storage;
use crate::Tensor;

/// `s`'s elements followed by zeros, `len` in all (`len` above `s`'s length).
fn grown(s: &CpuStorage, len: usize) -> Result<CpuStorage> {
    oxtorch_backend_cpu::with_storage!(s, v => {
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|e| {
            Error::msg(format!("resize_: cannot allocate a storage of {len} elements: {e}"))
        })?;
        out.extend_from_slice(&v[..]);
        out.resize(len, Default::default());
        Ok(CpuStorage::from_vec(out))
    })
}

impl Tensor {
    /// torch's `resize_(shape)`: gives this tensor `shape`, contiguous at its storage offset over
    /// the storage's elements (in storage order), growing the storage with zeros when it is too
    /// small (see the module notes for how this differs from torch). The same shape keeps the
    /// strides. Refused for a tensor that requires grad.
    pub fn resize_(&mut self, shape: impl Into<Shape>) -> Result<&mut Tensor> {
        if self.requires_grad() {
            return Err(Error::msg("cannot resize variables that require grad"));
        }
        let shape: Shape = shape.into();
        let numel = shape.checked_numel()?;
        self.storage().bump_version();
        if self.dims() == shape.dims() {
            return Ok(self);
        }
        let offset = self.storage_offset();
        // (torch's storage size, `offset + numel`, also for zero elements)
        let needed = offset.checked_add(numel).ok_or_else(|| {
            Error::shape(format!("Storage size calculation overflowed with sizes={:?}", shape.dims()))
        })?;
        {
            let mut cell = self.storage().write();
            if needed > cell.len() {
                let larger = match &*cell {
                    Storage::Cpu(s) => Storage::Cpu(grown(s, needed)?),
                    Storage::Xla(s) => {
                        Storage::Xla(XlaStorage::from_cpu(&grown(&s.to_cpu()?, needed)?, self.device())?)
                    }
                };
                *cell = larger;
            }
        }
        let strides = shape.contiguous_strides();
        let layout = Layout::new(shape, strides, offset)?;
        if self.view_base().is_none() {
            if let Some(inner) = Arc::get_mut(&mut self.0) {
                inner.layout = layout;
                return Ok(self);
            }
        }
        *self = self.with_layout(layout);
        Ok(self)
    }

    /// torch's `resize_as_(other)`: [`Tensor::resize_`] to `other`'s shape (contiguous unless the
    /// shape is already this tensor's).
    pub fn resize_as_(&mut self, other: &Tensor) -> Result<&mut Tensor> {
        self.resize_(other.dims())
    }
}

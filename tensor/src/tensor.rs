//! The `Tensor` type.

use std::sync::{Arc, OnceLock};

use oxtorch_core::{DType, Device, Layout, Shape};

use crate::autograd::meta_type::AutogradMeta;
use crate::storage::{Storage, StorageCell};

/// An n-dimensional array with a runtime dtype and device (torch's `torch.Tensor`).
///
/// A tensor is a strided view ([`Layout`]) of a shared storage; cloning is cheap (a reference count)
/// and view ops (`view`, `transpose`, `narrow`, ...) return tensors that share the storage, so writes
/// through a view are visible in its base, as in torch.
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorImpl>);

pub(crate) struct TensorImpl {
    pub(crate) storage: Arc<StorageCell>,
    pub(crate) layout: Layout,
    pub(crate) dtype: DType,
    pub(crate) device: Device,
    /// Autograd state, created when the tensor requires grad, is recorded, or is a view.
    pub(crate) autograd: OnceLock<AutogradMeta>,
}

impl Tensor {
    /// A tensor owning a fresh storage, seen contiguously with `shape`.
    #[inline]
    pub(crate) fn from_storage(storage: Storage, shape: impl Into<Shape>) -> Tensor {
        let layout = Layout::contiguous(shape);
        debug_assert_eq!(layout.numel(), storage.len());
        let (dtype, device) = (storage.dtype(), storage.device());
        let storage = Arc::new(StorageCell::new(storage));
        Tensor(Arc::new(TensorImpl { storage, layout, dtype, device, autograd: OnceLock::new() }))
    }

    /// A view of the same storage with another layout (callers validate the layout).
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            storage: self.0.storage.clone(),
            layout,
            dtype: self.0.dtype,
            device: self.0.device,
            autograd: OnceLock::new(),
        }))
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    /// The device holding the storage.
    #[inline]
    pub fn device(&self) -> Device {
        self.0.device
    }

    /// The sizes (torch's `.shape`).
    #[inline]
    pub fn shape(&self) -> &Shape {
        self.0.layout.shape()
    }

    /// The sizes as a slice (torch's `.size()`).
    #[inline]
    pub fn dims(&self) -> &[usize] {
        self.0.layout.dims()
    }

    /// The size of dimension `dim` (negative counts from the end).
    pub fn size(&self, dim: isize) -> oxtorch_core::Result<usize> {
        let d = oxtorch_core::wrap_dim(dim, self.rank())?;
        Ok(if self.rank() == 0 { 1 } else { self.dims()[d] })
    }

    /// Number of dimensions (torch's `.dim()`).
    #[inline]
    pub fn rank(&self) -> usize {
        self.0.layout.rank()
    }

    /// Number of elements.
    #[inline]
    pub fn numel(&self) -> usize {
        self.0.layout.numel()
    }

    /// Strides in elements (torch's `.stride()`).
    #[inline]
    pub fn strides(&self) -> &[usize] {
        self.0.layout.strides()
    }

    /// Offset of the first element in the storage (torch's `.storage_offset()`).
    pub fn storage_offset(&self) -> usize {
        self.0.layout.offset()
    }

    /// The strided layout of this view.
    #[inline]
    pub fn layout(&self) -> &Layout {
        &self.0.layout
    }

    /// True when the elements are row-major without gaps; an empty tensor always is, as in torch.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.0.layout.is_contiguous() || self.0.layout.numel() == 0
    }

    /// True when both tensors view the same storage.
    #[inline]
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0.storage, &other.0.storage)
    }

    /// True when the elements are memory this tensor borrows rather than owns: a checkpoint loaded
    /// zero-copy from a memory map ([`Tensor::from_shared_bytes`]). The first write copies them.
    pub fn borrows_memory(&self) -> bool {
        match &*self.0.storage.read() {
            Storage::Cpu(s) => s.is_shared(),
            Storage::Xla(_) => false,
        }
    }

    /// For a tensor that borrows a memory-mapped file ([`Tensor::borrows_memory`]): lets the OS drop
    /// the pages that lie wholly inside this view's span of its storage (all of them for a whole
    /// tensor) from this process's resident memory, as after copying a checkpoint's weights
    /// elsewhere. Values never change: the next read brings the pages back from the file (or the
    /// page cache). Does nothing for tensors that own their memory.
    pub fn release_pages(&self) {
        let l = &self.0.layout;
        if l.numel() == 0 {
            return;
        }
        if let (Storage::Cpu(s), Some(end)) = (&*self.0.storage.read(), l.checked_storage_extent()) {
            s.release_shared_pages(l.offset()..end);
        }
    }

    /// The storage's version counter: the number of in-place writes to it (torch's `._version`).
    pub fn version(&self) -> u64 {
        self.0.storage.version()
    }

    /// True for floating-point dtypes.
    pub fn is_floating_point(&self) -> bool {
        self.0.dtype.is_float()
    }

    /// Size in bytes of one element.
    pub fn element_size(&self) -> usize {
        self.0.dtype.size_in_bytes()
    }

    pub(crate) fn storage(&self) -> &Arc<StorageCell> {
        &self.0.storage
    }
}

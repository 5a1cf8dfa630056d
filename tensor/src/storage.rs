//! Tensor storage: a backend buffer shared by every view of it, with a version counter.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::{BackendStorage, DType, Device};

/// A backend buffer. One variant per backend; every op reaches its backend through a `match` here.
#[derive(Debug)]
pub enum Storage {
    /// Host memory, run by `oxtorch-backend-cpu`.
    Cpu(CpuStorage),
    /// A flat device buffer on `xla:N` or `tpu:N`, run by `oxtorch-backend-tpu`'s eager runtime.
    Xla(XlaStorage),
}

impl Storage {
    /// Element type of the buffer.
    pub fn dtype(&self) -> DType {
        match self {
            Storage::Cpu(s) => s.dtype(),
            Storage::Xla(s) => s.dtype(),
        }
    }

    /// Device holding the buffer.
    pub fn device(&self) -> Device {
        match self {
            Storage::Cpu(_) => Device::Cpu,
            Storage::Xla(s) => s.device(),
        }
    }

    /// Number of elements in the buffer.
    pub fn len(&self) -> usize {
        match self {
            Storage::Cpu(s) => s.len(),
            Storage::Xla(s) => s.len(),
        }
    }
}

/// A storage shared by a tensor and its views: the buffer behind a lock (in-place ops write through
/// any view), plus the version counter that in-place ops bump and autograd checks.
#[derive(Debug)]
pub struct StorageCell {
    data: RwLock<Storage>,
    version: AtomicU64,
}

impl StorageCell {
    /// Wraps a buffer.
    pub fn new(storage: Storage) -> Self {
        StorageCell { data: RwLock::new(storage), version: AtomicU64::new(0) }
    }

    /// Locks the buffer for reading.
    pub fn read(&self) -> RwLockReadGuard<'_, Storage> {
        self.data.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Locks the buffer for writing.
    pub fn write(&self) -> RwLockWriteGuard<'_, Storage> {
        self.data.write().unwrap_or_else(|e| e.into_inner())
    }

    /// How many in-place writes this storage has seen.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Records one in-place write.
    pub fn bump_version(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }
}

//! `XlaStorage`: a flat device buffer, the XLA backend's [`BackendStorage`].

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, DType, Device as TorchDevice, Layout, Result, Scalar};

use super::{execute, registry, transfer, write};
use crate::pjrt::Buffer;

/// A flat 1-D array of `len` elements of one dtype on an `xla:N` or `tpu:N` device. Tensors see it
/// through a [`Layout`], as they see a [`CpuStorage`]; views never copy.
pub struct XlaStorage {
    pub(crate) buffer: Buffer,
    pub(crate) dtype: DType,
    pub(crate) device: TorchDevice,
    pub(crate) len: usize,
}

impl std::fmt::Debug for XlaStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "XlaStorage({} x {} on {})", self.len, self.dtype, self.device)
    }
}

impl XlaStorage {
    /// Wraps a flat device array of `dtype`.
    pub(crate) fn from_buffer(buffer: Buffer, dtype: DType, device: TorchDevice) -> Self {
        let len = buffer.dims().iter().product::<i64>().max(0) as usize;
        XlaStorage { buffer, dtype, device, len }
    }

    /// Copies a host storage to `device` (`xla:N` or `tpu:N`).
    pub fn from_cpu(storage: &CpuStorage, device: TorchDevice) -> Result<Self> {
        let (client, pjrt_device) = registry::device(device)?;
        let buffer = transfer::upload_storage(client, pjrt_device, storage)?;
        Ok(XlaStorage { buffer, dtype: storage.dtype(), device, len: storage.len() })
    }

    /// `shape`'s element count of `value` (torch's casting rules) on `device`, as a flat buffer: the
    /// XLA form of `Prim::Full`, which has no input to take the device from. The value is a
    /// program input, never part of the compiled program.
    pub fn full(shape: &[usize], value: Scalar, dtype: DType, device: TorchDevice) -> Result<Self> {
        execute::full(shape, value, dtype, device)
    }

    /// Copies the whole buffer back to the host (waiting for the work that produces it).
    pub fn to_cpu(&self) -> Result<CpuStorage> {
        transfer::storage_from_bytes(self.dtype, &transfer::download(&self.buffer)?)
    }

    /// Blocks until the work producing this buffer has finished (JAX's `block_until_ready`).
    pub fn wait_ready(&self) -> Result<()> {
        self.buffer.wait_ready().map_err(super::pjrt_err)
    }

    /// The device array.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }
}

impl BackendStorage for XlaStorage {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn device(&self) -> TorchDevice {
        self.device
    }

    fn len(&self) -> usize {
        self.len
    }

    fn execute(prim: &Prim, inputs: &[(&Self, &Layout)]) -> Result<Vec<Self>> {
        execute::execute(prim, inputs)
    }

    fn copy_from(&mut self, dst_layout: &Layout, src: &Self, src_layout: &Layout) -> Result<()> {
        write::copy_into(self, dst_layout, src, src_layout)
    }

    fn fill(&mut self, layout: &Layout, value: Scalar) -> Result<()> {
        write::fill(self, layout, value)
    }
}

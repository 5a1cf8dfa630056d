//! `XlaStorage`: a flat device buffer, the XLA backend's [`BackendStorage`].

use oxtorch_backend_cpu::CpuStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, DType, Device as TorchDevice, Layout, Result, Scalar};

use std::sync::Arc;

use super::dynamic::Extent;
use super::lazy::{self, Data, Node};
use super::{execute, registry, transfer, write};
use crate::pjrt::Buffer;

/// A flat 1-D array of `len` elements of one dtype on an `xla:N` or `tpu:N` device. Tensors see it
/// through a [`Layout`], as they see a [`CpuStorage`]; views never copy. In fused mode the
/// buffer may still be pending (an output of the deferred graph), computed when first read.
pub struct XlaStorage {
    pub(crate) data: Data,
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
        XlaStorage { data: Data::Ready(Arc::new(buffer), None), dtype, device, len }
    }

    /// Wraps a computed buffer shared with the deferred graph (padded when `extent` is given).
    pub(crate) fn ready(
        buffer: Arc<Buffer>,
        extent: Option<Extent>,
        dtype: DType,
        len: usize,
        device: TorchDevice,
    ) -> Self {
        XlaStorage { data: Data::Ready(buffer, extent), dtype, device, len }
    }

    /// Output `output` of a pending node.
    pub(crate) fn pending(node: Arc<Node>, output: usize) -> Self {
        let (dtype, len) = node.outputs[output];
        let device = node.device;
        XlaStorage { data: Data::Pending(node, output), dtype, device, len }
    }

    /// Whether the elements are still to be computed (fused mode).
    pub fn is_pending(&self) -> bool {
        self.data.pending().is_some()
    }

    /// Copies a host storage to `device` (`xla:N` or `tpu:N`).
    pub fn from_cpu(storage: &CpuStorage, device: TorchDevice) -> Result<Self> {
        let (client, pjrt_device) = registry::device(device)?;
        let buffer = transfer::upload_storage(client, pjrt_device, storage)?;
        Ok(XlaStorage {
            data: Data::Ready(Arc::new(buffer), None),
            dtype: storage.dtype(),
            device,
            len: storage.len(),
        })
    }

    /// `shape`'s element count of `value` (torch's casting rules) on `device`, as a flat buffer: the
    /// XLA form of `Prim::Full`, which has no input to take the device from. The value is a
    /// program input, never part of the compiled program.
    pub fn full(shape: &[usize], value: Scalar, dtype: DType, device: TorchDevice) -> Result<Self> {
        execute::full(shape, value, dtype, device)
    }

    /// Copies the storage's elements back to the host (waiting for the work that produces them);
    /// a dynamic tensor's padding is left behind.
    pub fn to_cpu(&self) -> Result<CpuStorage> {
        let mut bytes = transfer::download(self.buffer()?)?;
        bytes.truncate(self.len * self.dtype.size_in_bytes());
        transfer::storage_from_bytes(self.dtype, &bytes)
    }

    /// Blocks until the work producing this buffer has finished (JAX's `block_until_ready`);
    /// computes it first when it is pending.
    pub fn wait_ready(&self) -> Result<()> {
        self.buffer()?.wait_ready().map_err(super::pjrt_err)
    }

    /// The device array, computing the pending graph behind it first when needed.
    pub fn buffer(&self) -> Result<&Buffer> {
        if let Some(node) = self.data.pending() {
            lazy::materialize(vec![node.clone()], "a value was read")?;
        }
        self.data
            .ready()
            .map(|b| &**b)
            .ok_or_else(|| oxtorch_core::Error::msg("xla: a pending tensor could not be computed"))
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

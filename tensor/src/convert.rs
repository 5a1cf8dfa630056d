//! Moving between dtypes and devices, and reading values back to Rust.

use oxtorch_backend_cpu::{CpuElement, CpuStorage};
use oxtorch_backend_tpu::xla::XlaStorage;
use oxtorch_core::ops::Prim;
use oxtorch_core::{BackendStorage, DType, Device, Element, Error, Result, Scalar};

use crate::autograd::{Function, FunctionCtx};
use crate::dispatch::apply1;
use crate::options::ToTarget;
use crate::storage::Storage;
use crate::Tensor;

/// A device move as a differentiable op (torch's `ToCopyBackward0`): the gradient moves back.
struct ToDevice {
    from: Device,
    to: Device,
}

impl Function for ToDevice {
    fn forward(&self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![inputs[0].move_to(self.to)?])
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].to(self.from)?)])
    }

    fn name(&self) -> &'static str {
        "ToCopyBackward0"
    }
}

impl Tensor {
    /// Converts to another device and/or dtype (torch's `.to(...)`): `t.to("tpu")`, `t.to(DType::F16)`,
    /// `t.to((Device::Cpu, DType::F64))`. Returns `self` (shared) when nothing changes.
    pub fn to(&self, target: impl ToTarget) -> Result<Tensor> {
        let (device, dtype) = target.target()?;
        let mut t = self.clone();
        if let Some(d) = dtype {
            t = t.to_dtype(d)?;
        }
        if let Some(dev) = device {
            if dev != t.device() {
                t = ToDevice { from: t.device(), to: dev }.apply(&[t])?.swap_remove(0);
            }
        }
        Ok(t)
    }

    /// This tensor when its storage holds exactly its elements, in order; else a contiguous copy.
    pub(crate) fn exact(&self) -> Result<Tensor> {
        if self.is_contiguous() && self.storage_offset() == 0 && self.numel() == self.storage().read().len() {
            Ok(self.clone())
        } else {
            self.copy()
        }
    }

    /// The values on `device`, contiguous, without autograd history.
    fn move_to(&self, device: Device) -> Result<Tensor> {
        if device == self.device() {
            return self.contiguous();
        }
        if self.device().is_cpu() {
            // Upload one contiguous buffer holding exactly the view's elements.
            let src = self.exact()?;
            let cell = src.storage().read();
            let Storage::Cpu(host) = &*cell else {
                return Err(Error::msg("internal error: a cpu tensor without host storage"));
            };
            let storage = Storage::Xla(XlaStorage::from_cpu(host, device)?);
            return Ok(Tensor::from_storage(storage, self.shape().clone()));
        }
        let host = self.download()?;
        if device.is_cpu() {
            Ok(host)
        } else {
            host.move_to(device)
        }
    }

    /// A contiguous host copy of a device tensor's values. Downloads the whole buffer when the
    /// view covers most of it (no program to compile), else gathers the view on the device first.
    pub(crate) fn download(&self) -> Result<Tensor> {
        let len = self.storage().read().len();
        let src = if self.numel().saturating_mul(2) >= len { self.clone() } else { self.copy()? };
        let host = {
            let cell = src.storage().read();
            match &*cell {
                Storage::Xla(s) => s.to_cpu()?,
                Storage::Cpu(s) => s.clone(),
            }
        };
        let layout = src.layout();
        if layout.is_contiguous() && layout.offset() == 0 && layout.numel() == host.len() {
            return Ok(Tensor::from_storage(Storage::Cpu(host), self.shape().clone()));
        }
        let args = [(&host, layout)];
        let out = CpuStorage::execute(&Prim::Copy, &args)?.swap_remove(0);
        Ok(Tensor::from_storage(Storage::Cpu(out), self.shape().clone()))
    }

    /// Converts to `dtype` with torch's casting rules (floats truncate toward zero when cast to
    /// integers, integers wrap, non-zero is `true`). Returns `self` when the dtype already matches.
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        apply1(&Prim::Cast(dtype), &[self], self.device())
    }

    /// A contiguous tensor with the same values: `self` if already contiguous, else a copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        self.copy()
    }

    /// A new tensor with a copy of the data (torch's `.clone()`; Rust's `Clone` shares the storage).
    pub fn copy(&self) -> Result<Tensor> {
        apply1(&Prim::Copy, &[self], self.device())
    }

    /// Blocks until the device work producing this tensor's storage has finished (JAX's
    /// `block_until_ready`; a no-op on cpu). Device ops return before their work completes;
    /// reading values waits by itself, so this is only needed for timing.
    pub fn block_until_ready(&self) -> Result<()> {
        match &*self.storage().read() {
            Storage::Cpu(_) => Ok(()),
            Storage::Xla(s) => s.wait_ready(),
        }
    }

    /// The single value of a one-element tensor, converted to `T` with torch's casting rules.
    pub fn item<T: Element>(&self) -> Result<T> {
        Ok(T::from_scalar(self.item_scalar()?))
    }

    /// The single value of a one-element tensor as a Python-like scalar.
    pub fn item_scalar(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(Error::msg(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                self.numel()
            )));
        }
        if !self.device().is_cpu() {
            return self.download()?.item_scalar();
        }
        let cell = self.storage().read();
        let Storage::Cpu(s) = &*cell else {
            return Err(Error::msg("internal error: a cpu tensor without host storage"));
        };
        let off = self.storage_offset();
        Ok(oxtorch_backend_cpu::with_storage!(s, v => v[off].to_scalar()))
    }

    /// All elements in row-major order. `T` must match the dtype (call `to_dtype` first otherwise).
    pub fn to_vec<T: CpuElement>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::msg(format!(
                "to_vec: the tensor has dtype {} but {} was requested; convert with .to_dtype() first",
                self.dtype(),
                T::DTYPE
            )));
        }
        if self.numel() == 0 {
            return Ok(Vec::new());
        }
        let t = if self.device().is_cpu() { self.contiguous()? } else { self.download()? };
        let cell = t.storage().read();
        let Storage::Cpu(s) = &*cell else {
            return Err(Error::msg("internal error: a cpu tensor without host storage"));
        };
        let start = t.storage_offset();
        Ok(s.as_slice::<T>()?[start..start + t.numel()].to_vec())
    }

    /// The rows of a 2-D tensor.
    pub fn to_vec2<T: CpuElement>(&self) -> Result<Vec<Vec<T>>> {
        if self.rank() != 2 {
            return Err(Error::msg(format!("to_vec2: expected a 2-D tensor, got {} dims", self.rank())));
        }
        let cols = self.dims()[1];
        let flat = self.to_vec::<T>()?;
        Ok(if cols == 0 {
            vec![Vec::new(); self.dims()[0]]
        } else {
            flat.chunks(cols).map(<[T]>::to_vec).collect()
        })
    }

    /// All elements as f64 in row-major order (any dtype).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        self.to_dtype(DType::F64)?.to_vec::<f64>()
    }

    /// Reads one element by flat row-major index (for printing; no bounds beyond `numel`; cpu
    /// tensors only, printing downloads device tensors first).
    pub(crate) fn get_flat(&self, index: usize) -> Scalar {
        let mut rem = index;
        let mut off = self.storage_offset();
        for (d, &size) in self.dims().iter().enumerate().rev() {
            off += (rem % size) * self.strides()[d];
            rem /= size;
        }
        let cell = self.storage().read();
        match &*cell {
            Storage::Cpu(s) => oxtorch_backend_cpu::with_storage!(s, v => v[off].to_scalar()),
            Storage::Xla(_) => Scalar::Float(f64::NAN),
        }
    }
}

//! Moving between dtypes and devices, and reading values back to Rust.

use oxtorch_backend_cpu::CpuElement;
use oxtorch_core::ops::Prim;
use oxtorch_core::{DType, Element, Error, Result, Scalar};

use crate::dispatch::{apply1, no_backend};
use crate::options::ToTarget;
use crate::storage::Storage;
use crate::Tensor;

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
                return Err(no_backend(if dev.is_cpu() { t.device() } else { dev }));
            }
        }
        Ok(t)
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
        let cell = self.storage().read();
        let Storage::Cpu(s) = &*cell;
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
        let t = self.contiguous()?;
        let cell = t.storage().read();
        let Storage::Cpu(s) = &*cell;
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

    /// Reads one element by flat row-major index (for printing; no bounds beyond `numel`).
    pub(crate) fn get_flat(&self, index: usize) -> Scalar {
        let mut rem = index;
        let mut off = self.storage_offset();
        for (d, &size) in self.dims().iter().enumerate().rev() {
            off += (rem % size) * self.strides()[d];
            rem /= size;
        }
        let cell = self.storage().read();
        let Storage::Cpu(s) = &*cell;
        oxtorch_backend_cpu::with_storage!(s, v => v[off].to_scalar())
    }
}

//! Creation options (`dtype=`, `device=`) and targets of `Tensor::to`.

use oxtorch_core::{DType, Device, Result};

/// The `dtype` and `device` keyword arguments of torch's creation functions.
///
/// Anything that names a dtype, a device, or both converts into options, so that
/// `Tensor::zeros([2, 3], DType::F16)`, `Tensor::zeros([2, 3], Device::Cpu)`,
/// `Tensor::zeros([2, 3], (DType::F16, Device::Cpu))` and `Tensor::zeros([2, 3], ())` all read naturally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorOptions {
    /// The dtype, or `None` for the function's default (usually float32).
    pub dtype: Option<DType>,
    /// The device ([`crate::get_default_device`] unless one was named: cpu by default).
    pub device: Device,
}

impl Default for TensorOptions {
    /// No dtype, on [`crate::get_default_device`].
    fn default() -> Self {
        TensorOptions { dtype: None, device: crate::ops::get_default_device() }
    }
}

impl TensorOptions {
    /// Default options: default dtype, default device.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the dtype.
    pub fn dtype(mut self, dtype: DType) -> Self {
        self.dtype = Some(dtype);
        self
    }

    /// Sets the device.
    pub fn device(mut self, device: Device) -> Self {
        self.device = device;
        self
    }

    /// The dtype, or `default` when none was given.
    pub fn dtype_or(&self, default: DType) -> DType {
        self.dtype.unwrap_or(default)
    }
}

impl From<()> for TensorOptions {
    fn from(_: ()) -> Self {
        TensorOptions::default()
    }
}
impl From<DType> for TensorOptions {
    fn from(d: DType) -> Self {
        TensorOptions { dtype: Some(d), device: crate::ops::get_default_device() }
    }
}
impl From<Device> for TensorOptions {
    fn from(device: Device) -> Self {
        TensorOptions { dtype: None, device }
    }
}
impl From<(DType, Device)> for TensorOptions {
    fn from((d, device): (DType, Device)) -> Self {
        TensorOptions { dtype: Some(d), device }
    }
}

/// What `Tensor::to` accepts: a device, a dtype, a device string (`"cpu"`, `"tpu:1"`), or a pair.
pub trait ToTarget {
    /// The requested (device, dtype); `None` keeps the tensor's own.
    fn target(self) -> Result<(Option<Device>, Option<DType>)>;
}

impl ToTarget for Device {
    fn target(self) -> Result<(Option<Device>, Option<DType>)> {
        Ok((Some(self), None))
    }
}
impl ToTarget for DType {
    fn target(self) -> Result<(Option<Device>, Option<DType>)> {
        Ok((None, Some(self)))
    }
}
impl ToTarget for &str {
    fn target(self) -> Result<(Option<Device>, Option<DType>)> {
        Ok((Some(self.parse()?), None))
    }
}
impl ToTarget for &String {
    fn target(self) -> Result<(Option<Device>, Option<DType>)> {
        self.as_str().target()
    }
}
impl ToTarget for (Device, DType) {
    fn target(self) -> Result<(Option<Device>, Option<DType>)> {
        Ok((Some(self.0), Some(self.1)))
    }
}
impl ToTarget for (&str, DType) {
    fn target(self) -> Result<(Option<Device>, Option<DType>)> {
        Ok((Some(self.0.parse()?), Some(self.1)))
    }
}

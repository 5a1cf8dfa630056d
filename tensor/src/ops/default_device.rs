//! `torch.set_default_device`/`torch.get_default_device` and `torch.frombuffer`.

use std::cell::Cell;

use oxtorch_core::{DType, Device, Error, Result};

use super::view_dtype::bytes_to_storage;
use crate::create::from_cpu;
use crate::Tensor;

thread_local! {
    /// This thread's default device (torch keeps it per thread too).
    static DEFAULT_DEVICE: Cell<Device> = const { Cell::new(Device::Cpu) };
}

/// `torch.get_default_device()`: the device of tensors made by creation functions that take
/// [`crate::TensorOptions`] without a device (cpu unless [`set_default_device`] changed it).
pub fn get_default_device() -> Device {
    DEFAULT_DEVICE.with(Cell::get)
}

/// `torch.set_default_device(device)`: the device of tensors made by creation functions that
/// take [`crate::TensorOptions`] without naming one (`Tensor::zeros([2], ())`,
/// `Tensor::ones([2], DType::F16)`; new layers' parameters); `None` goes back to cpu.
///
/// As torch's, the setting belongs to the calling thread (threads started later begin at cpu),
/// and an explicit device is always kept. Functions that take host data
/// ([`Tensor::from_vec`], [`Tensor::from_slice`], [`Tensor::frombuffer`]) still give cpu tensors.
pub fn set_default_device(device: impl Into<Option<Device>>) {
    let device = device.into().unwrap_or(Device::Cpu);
    DEFAULT_DEVICE.with(|d| d.set(device));
}

impl Tensor {
    /// `torch.frombuffer(buffer, dtype=dtype, count=count, offset=offset)`: a 1-D cpu tensor of
    /// `count` elements of `dtype` read from `buffer`'s bytes after the first `offset` (native
    /// endianness); `None` reads every whole element after `offset`, which must then leave a
    /// multiple of the element size. A bool is `true` for any non-zero byte.
    ///
    /// Unlike torch, the tensor owns a copy of the bytes: writes to it never reach `buffer`.
    /// Errors are torch's, e.g. "buffer length (7 bytes) after offset (0 bytes) must be a multiple
    /// of element size (2)".
    pub fn frombuffer(buffer: &[u8], dtype: DType, count: Option<usize>, offset: usize) -> Result<Tensor> {
        let len = buffer.len();
        let elsize = dtype.size_in_bytes();
        let shown = count.map_or_else(|| "-1".to_string(), |c| c.to_string());
        if len == 0 || count == Some(0) {
            return Err(Error::msg(format!("both buffer length ({len}) and count ({shown}) must not be 0")));
        }
        if offset >= len {
            return Err(Error::msg(format!(
                "offset ({offset} bytes) must be non-negative and no greater than buffer length ({len} bytes) minus 1"
            )));
        }
        let rest = len - offset;
        let count = match count {
            Some(c) => c,
            None if rest.is_multiple_of(elsize) => rest / elsize,
            None => {
                return Err(Error::msg(format!(
                    "buffer length ({rest} bytes) after offset ({offset} bytes) must be a multiple of element size ({elsize})"
                )))
            }
        };
        let bytes = count.checked_mul(elsize).filter(|&b| b <= rest).ok_or_else(|| {
            Error::msg(format!(
                "requested buffer length ({count} * {elsize} bytes) after offset ({offset} bytes) must not be greater than actual buffer length ({len} bytes)"
            ))
        })?;
        from_cpu(bytes_to_storage(&buffer[offset..offset + bytes], dtype), [count], Device::Cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TensorOptions;

    #[test]
    fn the_default_device_is_per_thread_and_fills_options() {
        assert_eq!(get_default_device(), Device::Cpu);
        set_default_device(Device::Xla(3));
        assert_eq!(get_default_device(), Device::Xla(3));
        assert_eq!(TensorOptions::default().device, Device::Xla(3));
        assert_eq!(TensorOptions::from(DType::F16).device, Device::Xla(3));
        assert_eq!(TensorOptions::from((DType::F16, Device::Cpu)).device, Device::Cpu);
        assert_eq!(TensorOptions::from(Device::Tpu(1)).device, Device::Tpu(1));
        std::thread::spawn(|| assert_eq!(get_default_device(), Device::Cpu)).join().unwrap();
        set_default_device(None);
        assert_eq!(get_default_device(), Device::Cpu);
        assert_eq!(TensorOptions::default().device, Device::Cpu);
    }
}

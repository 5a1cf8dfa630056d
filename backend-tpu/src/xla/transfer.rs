//! Host ↔ device copies of flat buffers, counted in the metrics.

use oxtorch_backend_cpu::{with_dtype, CpuStorage};
use oxtorch_core::{BackendStorage, DType, Error, Result};

use super::{host_block, metrics, pjrt_err};
use crate::pjrt::{Buffer, Client, Device, ElementType};

/// Copies `bytes` (row-major elements of `dtype`) to `device` as an array of `dims`.
pub(crate) fn upload(
    client: &Client,
    device: &Device,
    bytes: &[u8],
    dtype: DType,
    dims: &[i64],
) -> Result<Buffer> {
    let et = ElementType::from(dtype);
    let buffer = if bytes.len() >= host_block::MIN_BYTES && client.platform_name().eq_ignore_ascii_case("cpu")
    {
        host_block::upload(client, device, bytes, et, dims).map_err(pjrt_err)?
    } else {
        Buffer::from_host(client, device, bytes, et, dims).map_err(pjrt_err)?
    };
    metrics::record_to_device(bytes.len());
    Ok(buffer)
}

/// Copies a host storage to `device` as a flat 1-D array.
pub(crate) fn upload_storage(client: &Client, device: &Device, storage: &CpuStorage) -> Result<Buffer> {
    upload(client, device, storage.as_bytes(), storage.dtype(), &[storage.len() as i64])
}

/// Copies a device array back to the host, waiting for the work that produces it.
pub(crate) fn download(buffer: &Buffer) -> Result<Vec<u8>> {
    let bytes = buffer.to_host().map_err(pjrt_err)?;
    metrics::record_from_device(bytes.len());
    Ok(bytes)
}

/// The row-major bytes of `dtype` elements as a host storage.
pub(crate) fn storage_from_bytes(dtype: DType, bytes: &[u8]) -> Result<CpuStorage> {
    let size = dtype.size_in_bytes();
    if !bytes.len().is_multiple_of(size) {
        return Err(Error::msg(format!(
            "the device returned {} bytes, not a whole number of {dtype} elements",
            bytes.len()
        )));
    }
    let n = bytes.len() / size;
    if dtype == DType::Bool {
        // Any non-zero byte is true; never transmute a byte that is not 0 or 1 into a bool.
        return Ok(CpuStorage::from_vec(bytes.iter().map(|&b| b != 0).collect::<Vec<bool>>()));
    }
    Ok(with_dtype!(dtype, T => {
        let mut out: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `T` is a plain numeric type (every bit pattern valid, bool handled above);
        // `out` has capacity for `n` elements = `bytes.len()` bytes, and the regions are disjoint.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len());
            out.set_len(n);
        }
        CpuStorage::from_vec(out)
    }))
}

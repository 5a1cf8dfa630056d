//! torch's `x.view(dtype)` ([`Tensor::view_dtype`]): the same bytes read as another dtype.
//!
//! A storage here holds elements of one dtype (`CpuStorage` is a typed buffer per dtype), so a
//! view of one storage as two dtypes cannot exist: for another dtype the result is a copy of the
//! bytes. Its sizes, strides and storage offset are torch's, and so are its checks and messages.

use oxtorch_backend_cpu::{CpuElement, CpuStorage};
use oxtorch_core::{bf16, f16, BackendStorage, DType, Error, Layout, Result};

use crate::create::from_cpu;
use crate::storage::Storage;
use crate::Tensor;

/// Reads `bytes` (native endianness) as whole elements of `dtype`; trailing bytes that do not
/// fill an element are dropped. A bool is `true` for any non-zero byte (how torch reads it).
pub(crate) fn bytes_to_storage(bytes: &[u8], dtype: DType) -> CpuStorage {
    fn read<T: CpuElement, const N: usize>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> CpuStorage {
        let v: Vec<T> =
            bytes.chunks_exact(N).map(|c| f(c.try_into().expect("chunks_exact gives N bytes"))).collect();
        CpuStorage::from_vec(v)
    }
    match dtype {
        DType::Bool => read(bytes, |[b]: [u8; 1]| b != 0),
        DType::U8 => read(bytes, |[b]: [u8; 1]| b),
        DType::I8 => read(bytes, i8::from_ne_bytes),
        DType::I16 => read(bytes, i16::from_ne_bytes),
        DType::I32 => read(bytes, i32::from_ne_bytes),
        DType::I64 => read(bytes, i64::from_ne_bytes),
        DType::F16 => read(bytes, |b: [u8; 2]| f16::from_bits(u16::from_ne_bytes(b))),
        DType::BF16 => read(bytes, |b: [u8; 2]| bf16::from_bits(u16::from_ne_bytes(b))),
        DType::F32 => read(bytes, f32::from_ne_bytes),
        DType::F64 => read(bytes, f64::from_ne_bytes),
    }
}

/// torch's sizes, strides and storage offset of `t.view(dtype)` (`view_dtype` in ATen's
/// TensorConversions.cpp), with its checks in its order and words.
fn bitcast_geometry(t: &Tensor, dtype: DType) -> Result<(Vec<usize>, Vec<usize>, usize)> {
    let (old, new) = (t.element_size(), dtype.size_in_bytes());
    let (mut sizes, mut strides, offset) = (t.dims().to_vec(), t.strides().to_vec(), t.storage_offset());
    if old == new {
        return Ok((sizes, strides, offset));
    }
    let what = format!(
        "to view {} as {} (different element sizes)",
        t.dtype().scalar_type_name(),
        dtype.scalar_type_name()
    );
    let Some(last) = sizes.len().checked_sub(1) else {
        return Err(Error::msg(format!("self.dim() cannot be 0 {what}")));
    };
    let overflow =
        || Error::msg(format!("view(dtype): sizes {sizes:?} and strides {strides:?} overflow {what}"));
    if old > new {
        let ratio = old / new;
        if strides[last] != 1 {
            return Err(Error::msg(format!("self.stride(-1) must be 1 {what}, but got {}", strides[last])));
        }
        let scaled: Option<Vec<usize>> = strides.iter().map(|s| s.checked_mul(ratio)).collect();
        let (Some(mut scaled), Some(size), Some(off)) =
            (scaled, sizes[last].checked_mul(ratio), offset.checked_mul(ratio))
        else {
            return Err(overflow());
        };
        scaled[last] = 1;
        sizes[last] = size;
        return Ok((sizes, scaled, off));
    }
    let ratio = new / old;
    if !sizes[last].is_multiple_of(ratio) {
        return Err(Error::msg(format!(
            "self.size(-1) must be divisible by {ratio} {what}, but got {}",
            sizes[last]
        )));
    }
    if !offset.is_multiple_of(ratio) {
        return Err(Error::msg(format!(
            "self.storage_offset() must be divisible by {ratio} {what}, but got {offset}"
        )));
    }
    if strides[last] != 1 {
        return Err(Error::msg(format!("self.stride(-1) must be 1 {what}, but got {}", strides[last])));
    }
    for (i, s) in strides[..last].iter_mut().enumerate() {
        if !s.is_multiple_of(ratio) {
            return Err(Error::msg(format!(
                "self.stride({i}) must be divisible by {ratio} {what}, but got {s}"
            )));
        }
        *s /= ratio;
    }
    sizes[last] /= ratio;
    Ok((sizes, strides, offset / ratio))
}

impl Tensor {
    /// torch's `x.view(dtype)`: the same bytes read as `dtype`.
    ///
    /// For the same element size the sizes and strides are kept; otherwise the last dim (which
    /// must have stride 1) is scaled by the ratio of the element sizes, and a larger element
    /// needs that dim's size, the storage offset and every other stride divisible by the ratio
    /// (torch's checks and messages, e.g. "self.size(-1) must be divisible by 2 to view Byte as
    /// Short (different element sizes), but got 3"; a 0-d tensor only views a dtype of its size).
    /// The result never requires grad, as in torch.
    ///
    /// **Not a shared view for another dtype.** A storage here holds one dtype, so for a
    /// different dtype the result owns a copy of the whole storage's bytes, read as `dtype`
    /// (trailing bytes that fill no element dropped), seen with torch's sizes, strides and
    /// storage offset. Unlike torch, writes through the result do not reach `self` (nor the other
    /// way round), and a bool result holds `true` for every non-zero byte (torch keeps the raw
    /// byte: viewing it back as uint8 gives 1 here where torch gives the byte). For the same dtype
    /// the result does share storage with `self` (a detached view, as torch's).
    pub fn view_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.detach());
        }
        let (sizes, strides, offset) = bitcast_geometry(self, dtype)?;
        let host = {
            let cell = self.storage().read();
            match &*cell {
                Storage::Cpu(s) => bytes_to_storage(s.as_bytes(), dtype),
                Storage::Xla(s) => bytes_to_storage(s.to_cpu()?.as_bytes(), dtype),
            }
        };
        let len = host.len();
        let layout = Layout::as_strided(&sizes, &strides, offset, len)?;
        let whole = from_cpu(host, [len], self.device())?;
        Ok(whole.with_layout(layout))
    }
}

//! Little-endian checkpoint bytes into oxtorch tensors (one copy).

use oxtorch_tensor::{bf16, f16, CpuElement, DType, Tensor};

use crate::error::Result;

/// A copy of `bytes` as `T` values: a straight copy when aligned, an unaligned read otherwise.
/// Checkpoints are little-endian, as is every host oxtorch's CPU backend runs on.
fn pod_vec<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    match bytemuck::try_cast_slice::<u8, T>(bytes) {
        Ok(values) => values.to_vec(),
        Err(_) => {
            let mut values = vec![T::zeroed(); bytes.len() / std::mem::size_of::<T>()];
            bytemuck::cast_slice_mut::<T, u8>(&mut values).copy_from_slice(bytes);
            values
        }
    }
}

fn build<T: bytemuck::Pod + CpuElement>(bytes: &[u8], shape: &[usize]) -> Result<Tensor> {
    Ok(Tensor::from_vec(pod_vec::<T>(bytes), shape.to_vec())?)
}

/// The tensor of `dtype` and `shape` stored row-major in `bytes` (whose length the caller has checked).
pub fn tensor_from_bytes(bytes: &[u8], dtype: DType, shape: &[usize]) -> Result<Tensor> {
    match dtype {
        DType::Bool => {
            Ok(Tensor::from_vec(bytes.iter().map(|&b| b != 0).collect::<Vec<bool>>(), shape.to_vec())?)
        }
        DType::U8 => build::<u8>(bytes, shape),
        DType::I8 => build::<i8>(bytes, shape),
        DType::I16 => build::<i16>(bytes, shape),
        DType::I32 => build::<i32>(bytes, shape),
        DType::I64 => build::<i64>(bytes, shape),
        DType::F16 => build::<f16>(bytes, shape),
        DType::BF16 => build::<bf16>(bytes, shape),
        DType::F32 => build::<f32>(bytes, shape),
        DType::F64 => build::<f64>(bytes, shape),
    }
}

//! `pytorch_model.bin`: the zip that `torch.save` writes, read by `pytorch-reader`, whose unpickler
//! only rebuilds tensors from an allow-list of torch functions and storage types and never runs code.

use std::path::Path;

use oxtorch_tensor::{DType, Tensor};
use pytorch_reader::{DType as PtDType, PytorchReader};

use super::decode::tensor_from_bytes;
use super::torch_zip::patched_zip64_archive;
use crate::error::{Error, Result};

fn dtype_of(dtype: PtDType) -> Option<DType> {
    Some(match dtype {
        PtDType::F64 => DType::F64,
        PtDType::F32 => DType::F32,
        PtDType::F16 => DType::F16,
        PtDType::BF16 => DType::BF16,
        PtDType::I64 => DType::I64,
        PtDType::I32 => DType::I32,
        PtDType::I16 => DType::I16,
        PtDType::I8 => DType::I8,
        PtDType::U8 => DType::U8,
        PtDType::Bool => DType::Bool,
        PtDType::U64 | PtDType::U32 | PtDType::U16 => return None,
    })
}

/// Every tensor of the PyTorch checkpoint at `path` (sorted by name), passed to `each`.
pub fn read_pytorch(path: &Path, mut each: impl FnMut(String, Tensor) -> Result<()>) -> Result<()> {
    let reader = PytorchReader::new(path)
        .or_else(|first| match patched_zip64_archive(path) {
            Some(bytes) => PytorchReader::from_bytes(bytes, None),
            None => Err(first),
        })
        .map_err(|e| Error::format(path, format!("invalid PyTorch checkpoint: {e}")))?;
    let mut entries: Vec<_> = reader.into_tensors().into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, t) in entries {
        let dtype = dtype_of(t.dtype()).ok_or_else(|| {
            Error::format(
                path,
                format!("tensor '{name}' has dtype {:?}, which oxtorch does not support", t.dtype()),
            )
        })?;
        let bytes = t.read().map_err(|e| Error::format(path, format!("tensor '{name}': {e}")))?;
        each(name, tensor_from_bytes(&bytes, dtype, t.shape())?)?;
    }
    Ok(())
}

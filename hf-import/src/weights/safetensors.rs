//! `.safetensors` files: memory-mapped, header validated by the `safetensors` crate, tensors viewing
//! the map without a copy where their bytes are aligned (copied otherwise).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use oxtorch_tensor::{DType, SharedBytes, Tensor};
use safetensors::{Dtype, SafeTensors};

use super::decode::tensor_from_bytes;
use crate::error::{Error, Result};

/// The oxtorch dtype of a safetensors dtype, or `None` for one oxtorch lacks (fp8, u16, ...).
pub fn dtype_of(dtype: Dtype) -> Option<DType> {
    Some(match dtype {
        Dtype::BOOL => DType::Bool,
        Dtype::U8 => DType::U8,
        Dtype::I8 => DType::I8,
        Dtype::I16 => DType::I16,
        Dtype::I32 => DType::I32,
        Dtype::I64 => DType::I64,
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        Dtype::F32 => DType::F32,
        Dtype::F64 => DType::F64,
        _ => return None,
    })
}

/// The safetensors dtype of an oxtorch dtype.
pub fn safetensors_dtype(dtype: DType) -> Dtype {
    match dtype {
        DType::Bool => Dtype::BOOL,
        DType::U8 => Dtype::U8,
        DType::I8 => Dtype::I8,
        DType::I16 => Dtype::I16,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
    }
}

/// A read-only memory map of a checkpoint file, kept alive by the tensors that view it.
struct MappedFile(memmap2::Mmap);

impl SharedBytes for MappedFile {
    fn bytes(&self) -> &[u8] {
        &self.0
    }

    fn release(&self, range: std::ops::Range<usize>) {
        // Whole pages inside the range only: a page shared with a neighbouring tensor stays.
        let page = 4096;
        let (start, end) = (range.start.div_ceil(page) * page, range.end / page * page);
        if end > start && end <= self.0.len() {
            // SAFETY: the map is private and read-only, so dropping its pages loses nothing: the
            // next read faults them in again from the file. No reference into the map is invalidated.
            let _ = unsafe {
                self.0.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }
}

/// Whether tensors may view the file's memory map (the default) rather than copy it: off with
/// `OXTORCH_MMAP=0`, for a process that must not see a checkpoint file that changes under it.
fn zero_copy() -> bool {
    cfg!(target_endian = "little") && std::env::var("OXTORCH_MMAP").map_or(true, |v| v != "0")
}

/// Every tensor of the safetensors file at `path`, in file order, passed to `each` as it is read.
///
/// Tensors view the file's memory map without copying (unless `OXTORCH_MMAP=0`, or a tensor's bytes
/// are misaligned for its dtype), so loading costs no time and no memory until the weights are
/// used; the first write to such a tensor copies it, and the file is never written. As with every
/// memory-mapped reader, truncating the file while its tensors live is an error of the caller's.
pub fn read_safetensors(path: &Path, mut each: impl FnMut(String, Tensor) -> Result<()>) -> Result<()> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: the map is read-only and private; a file truncated under us while mapped is the one
    // hazard, as for every memory-mapped reader (the safetensors crate's own loaders included).
    let map = Arc::new(MappedFile(unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?));
    let owner: Arc<dyn SharedBytes> = map.clone();
    let base = map.0.as_ptr() as usize;
    let st = SafeTensors::deserialize(&map.0)
        .map_err(|e| Error::format(path, format!("invalid safetensors: {e}")))?;
    let zero_copy = zero_copy();
    let mut entries: Vec<_> = st.tensors();
    entries.sort_by_key(|(_, v)| v.data().as_ptr() as usize);
    for (name, view) in entries {
        let dtype = dtype_of(view.dtype()).ok_or_else(|| {
            Error::format(
                path,
                format!("tensor '{name}' has dtype {:?}, which oxtorch does not support", view.dtype()),
            )
        })?;
        let offset = view.data().as_ptr() as usize - base;
        let shared = || Tensor::from_shared_bytes(owner.clone(), offset, dtype, view.shape().to_vec());
        let tensor = match zero_copy.then(shared) {
            Some(Ok(t)) => t,
            _ => tensor_from_bytes(view.data(), dtype, view.shape())?,
        };
        each(name, tensor)?;
    }
    Ok(())
}

/// Writes `tensors` (name, tensor) to a safetensors file at `path`, with optional string metadata.
pub fn write_safetensors(
    path: &Path,
    tensors: &[(String, Tensor)],
    metadata: Option<std::collections::HashMap<String, String>>,
) -> Result<()> {
    let mut data = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let bytes = tensor_bytes(t)?;
        data.push((name.clone(), safetensors_dtype(t.dtype()), t.dims().to_vec(), bytes));
    }
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = data
        .iter()
        .map(|(name, dt, shape, bytes)| {
            safetensors::tensor::TensorView::new(*dt, shape.clone(), bytes)
                .map(|v| (name.clone(), v))
                .map_err(|e| Error::format(path, format!("tensor '{name}': {e}")))
        })
        .collect::<Result<_>>()?;
    // A regular file is replaced by a rename, which would replace a device or FIFO too: those
    // (`--output /dev/null`) are written in place.
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(Error::format(path, "cannot write: is a directory"));
        }
        if !meta.is_file() {
            let bytes = safetensors::serialize(views, metadata)
                .map_err(|e| Error::format(path, format!("cannot write: {e}")))?;
            return std::fs::write(path, bytes).map_err(|e| Error::io(path, e));
        }
    }
    // Written next to the target and renamed, so that a failure never leaves a partial file (the
    // temporary one is removed).
    let tmp = path.with_extension("safetensors.partial");
    let written = safetensors::serialize_to_file(views, metadata, &tmp)
        .map_err(|e| Error::format(path, format!("cannot write: {e}")))
        .and_then(|()| give_default_permissions(&tmp).map_err(|e| Error::io(path, e)))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The permissions a newly created file gets (`0o666` less the process's umask): the safetensors
/// crate writes through a private temporary file (`0o600`).
#[cfg(unix)]
fn give_default_permissions(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // Linux reports the umask in /proc/self/status; elsewhere the common 022 is assumed.
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666 & !umask))
}

#[cfg(not(unix))]
fn give_default_permissions(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// The little-endian row-major bytes of `t`.
pub fn tensor_bytes(t: &Tensor) -> Result<Vec<u8>> {
    use oxtorch_tensor::{bf16, f16};
    fn bytes<T: bytemuck::Pod + oxtorch_tensor::CpuElement>(t: &Tensor) -> Result<Vec<u8>> {
        Ok(bytemuck::cast_slice(&t.to_vec::<T>()?).to_vec())
    }
    match t.dtype() {
        DType::Bool => Ok(t.to_vec::<bool>()?.into_iter().map(u8::from).collect()),
        DType::U8 => bytes::<u8>(t),
        DType::I8 => bytes::<i8>(t),
        DType::I16 => bytes::<i16>(t),
        DType::I32 => bytes::<i32>(t),
        DType::I64 => bytes::<i64>(t),
        DType::F16 => bytes::<f16>(t),
        DType::BF16 => bytes::<bf16>(t),
        DType::F32 => bytes::<f32>(t),
        DType::F64 => bytes::<f64>(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_neither_the_file_nor_its_temporary() {
        let dir = std::env::temp_dir().join(format!("oxtorch-st-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // The target is a folder holding a file: the data is written, the rename over it fails.
        let target = dir.join("model.safetensors");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        let tensors = [("w".to_string(), Tensor::ones([2, 3], DType::F32).unwrap())];
        let err = write_safetensors(&target, &tensors, None).unwrap_err().to_string();
        assert!(err.contains("model.safetensors"), "{err}");
        assert!(!dir.join("model.safetensors.partial").exists(), "the temporary file was left behind");
        assert!(target.join("inside").is_dir());
        // The same write to a free name succeeds and reads back.
        let ok = dir.join("ok.safetensors");
        write_safetensors(&ok, &tensors, None).unwrap();
        let mut read = Vec::new();
        read_safetensors(&ok, |n, t| {
            read.push((n, t.to_vec::<f32>()?));
            Ok(())
        })
        .unwrap();
        assert_eq!(read, [("w".to_string(), vec![1.0f32; 6])]);
        assert!(!dir.join("ok.safetensors.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

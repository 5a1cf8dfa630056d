//! State dicts: named tensors in order, saved as safetensors files that PyTorch's
//! `safetensors.torch.load_file` reads (and the reverse). Writes are atomic: a temporary file in the
//! same directory, synced, then renamed over the target, so a crash never destroys the previous
//! checkpoint.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use oxtorch_tensor::{bf16, f16, DType, Error, Result, Tensor};
use safetensors::{Dtype, SafeTensors};

/// Named tensors in insertion order (torch's `OrderedDict` state dict).
#[derive(Clone, Default)]
pub struct StateDict {
    entries: Vec<(String, Tensor)>,
    index: HashMap<String, usize>,
}

impl StateDict {
    /// An empty state dict.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces `name`.
    pub fn insert(&mut self, name: &str, t: Tensor) {
        match self.index.get(name) {
            Some(&i) => self.entries[i].1 = t,
            None => {
                self.index.insert(name.to_string(), self.entries.len());
                self.entries.push((name.to_string(), t));
            }
        }
    }

    /// The tensor stored under `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.index.get(name).map(|&i| &self.entries[i].1)
    }

    /// The names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// Names and tensors, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.entries.iter().map(|(k, t)| (k.as_str(), t))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Serialises to safetensors bytes (tensors are made contiguous; `metadata` goes in the header).
    pub fn to_safetensors_bytes(&self, metadata: Option<HashMap<String, String>>) -> Result<Vec<u8>> {
        let mut owned: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::with_capacity(self.len());
        for (name, t) in &self.entries {
            owned.push((name.clone(), st_dtype(t.dtype()), t.dims().to_vec(), tensor_bytes(t)?));
        }
        let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = owned
            .iter()
            .map(|(n, d, s, b)| {
                safetensors::tensor::TensorView::new(*d, s.clone(), b)
                    .map(|v| (n.clone(), v))
                    .map_err(|e| Error::msg(format!("safetensors: tensor '{n}': {e}")))
            })
            .collect::<Result<_>>()?;
        safetensors::serialize(views, metadata).map_err(|e| Error::msg(format!("safetensors: {e}")))
    }

    /// Saves atomically to `path` as safetensors.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let bytes = self.to_safetensors_bytes(Some(HashMap::from([("format".into(), "pt".into())])))?;
        write_atomic(path.as_ref(), &bytes)
    }

    /// Reads a safetensors file (every dtype torch writes).
    pub fn load(path: impl AsRef<Path>) -> Result<StateDict> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| Error::msg(format!("cannot read checkpoint '{}': {e}", path.display())))?;
        Self::from_safetensors_bytes(&bytes)
            .map_err(|e| Error::msg(format!("checkpoint '{}': {e}", path.display())))
    }

    /// Parses safetensors bytes.
    pub fn from_safetensors_bytes(bytes: &[u8]) -> Result<StateDict> {
        let st = SafeTensors::deserialize(bytes)
            .map_err(|e| Error::msg(format!("invalid safetensors file: {e}")))?;
        let mut names: Vec<(usize, String)> =
            st.tensors().into_iter().map(|(n, v)| (v.data().as_ptr() as usize, n)).collect();
        // File order (safetensors sorts its header by name; the data order is the writer's).
        names.sort();
        let mut sd = StateDict::new();
        for (_, name) in names {
            let v = st.tensor(&name).map_err(|e| Error::msg(format!("tensor '{name}': {e}")))?;
            let t = tensor_from_bytes(v.dtype(), v.shape(), v.data())
                .map_err(|e| Error::msg(format!("tensor '{name}': {e}")))?;
            sd.insert(&name, t);
        }
        Ok(sd)
    }
}

/// Writes `bytes` to a temporary file next to `path`, syncs it and renames it over `path`, then
/// syncs the folder so that the rename itself survives a crash. The temporary file is unique to
/// the call (two threads saving the same path do not share one) and removed on any failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file_name =
        path.file_name().ok_or_else(|| Error::msg(format!("'{}' is not a file path", path.display())))?;
    let unique = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{}.tmp{}-{unique}", file_name.to_string_lossy(), std::process::id()));
    let io = |e: std::io::Error| Error::msg(format!("cannot write checkpoint '{}': {e}", path.display()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    // The rename is durable once the folder's entry is (where folders can be opened and synced).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn st_dtype(d: DType) -> Dtype {
    match d {
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

/// Little-endian bytes of a tensor's elements in row-major order.
pub(crate) fn tensor_bytes(t: &Tensor) -> Result<Vec<u8>> {
    let t = t.to("cpu")?;
    macro_rules! le {
        ($ty:ty) => {
            t.to_vec::<$ty>()?.iter().flat_map(|v| v.to_le_bytes()).collect()
        };
    }
    Ok(match t.dtype() {
        DType::Bool => t.to_vec::<bool>()?.into_iter().map(u8::from).collect(),
        DType::U8 => t.to_vec::<u8>()?,
        DType::I8 => le!(i8),
        DType::I16 => le!(i16),
        DType::I32 => le!(i32),
        DType::I64 => le!(i64),
        DType::F16 => le!(f16),
        DType::BF16 => le!(bf16),
        DType::F32 => le!(f32),
        DType::F64 => le!(f64),
    })
}

/// A tensor from safetensors data.
pub(crate) fn tensor_from_bytes(dtype: Dtype, shape: &[usize], data: &[u8]) -> Result<Tensor> {
    macro_rules! from_le {
        ($ty:ty, $n:expr) => {
            Tensor::from_vec(
                data.chunks_exact($n)
                    .map(|c| <$ty>::from_le_bytes(c.try_into().expect("chunk size")))
                    .collect::<Vec<_>>(),
                shape.to_vec(),
            )
        };
    }
    match dtype {
        Dtype::BOOL => Tensor::from_vec(data.iter().map(|&b| b != 0).collect::<Vec<_>>(), shape.to_vec()),
        Dtype::U8 => Tensor::from_vec(data.to_vec(), shape.to_vec()),
        Dtype::I8 => from_le!(i8, 1),
        Dtype::I16 => from_le!(i16, 2),
        Dtype::I32 => from_le!(i32, 4),
        Dtype::I64 => from_le!(i64, 8),
        Dtype::F16 => from_le!(f16, 2),
        Dtype::BF16 => from_le!(bf16, 2),
        Dtype::F32 => from_le!(f32, 4),
        Dtype::F64 => from_le!(f64, 8),
        other => Err(Error::msg(format!("unsupported safetensors dtype {other:?}"))),
    }
}

//! Checkpoint weights: safetensors (single or sharded) and `pytorch_model.bin`, cast on load.

mod decode;
mod pickle;
mod safetensors;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use oxtorch_tensor::{DType, Tensor};

pub use self::pickle::read_pytorch;
pub use self::safetensors::{read_safetensors, tensor_bytes, write_safetensors};
use crate::error::{Error, Result};

/// The checkpoint files of a model folder, in the order transformers prefers them.
const CANDIDATES: [&str; 4] = [
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
];

/// The weight files of the model in `dir`: one file, or the shards named by an index.
pub fn checkpoint_files(dir: &Path) -> Result<Vec<PathBuf>> {
    for name in CANDIDATES {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        if !name.ends_with(".index.json") {
            return Ok(vec![path]);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let index: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Error::format(&path, format!("invalid JSON: {e}")))?;
        let map = index
            .get("weight_map")
            .and_then(|m| m.as_object())
            .ok_or_else(|| Error::format(&path, "no \"weight_map\" object"))?;
        let mut shards = BTreeSet::new();
        for (tensor, file) in map {
            let file = file
                .as_str()
                .filter(|f| !f.contains("..") && !Path::new(f).is_absolute())
                .ok_or_else(|| Error::format(&path, format!("bad shard name for tensor '{tensor}'")))?;
            shards.insert(file.to_string());
        }
        return Ok(shards.into_iter().map(|f| dir.join(f)).collect());
    }
    Err(Error::format(dir, format!("no weights found: expected one of {}", CANDIDATES.join(", "))))
}

/// The tensors of a checkpoint by name, floating-point ones cast to one dtype.
#[derive(Debug, Clone, Default)]
pub struct Weights {
    tensors: BTreeMap<String, Tensor>,
    stored: BTreeMap<String, DType>,
}

impl Weights {
    /// Every tensor in the checkpoint files of `dir`; floating-point tensors are cast to `dtype`
    /// when given (integer buffers such as `position_ids` keep theirs).
    pub fn load(dir: &Path, dtype: Option<DType>) -> Result<Self> {
        Self::load_with_progress(dir, dtype, |_, _, _| {})
    }

    /// [`Weights::load`], calling `progress(done, total, file)` before each checkpoint file is read
    /// and once more at the end (`done == total`).
    pub fn load_with_progress(
        dir: &Path,
        dtype: Option<DType>,
        mut progress: impl FnMut(usize, usize, &Path),
    ) -> Result<Self> {
        let files = checkpoint_files(dir)?;
        let mut weights = Weights::default();
        for (i, file) in files.iter().enumerate() {
            progress(i, files.len(), file);
            weights.load_file(file, dtype)?;
        }
        if let Some(last) = files.last() {
            progress(files.len(), files.len(), last);
        }
        weights.check_index(dir)?;
        Ok(weights)
    }

    /// Adds the tensors of one `.safetensors` or `.bin` file.
    pub fn load_file(&mut self, file: &Path, dtype: Option<DType>) -> Result<()> {
        let add = |name: String, t: Tensor| -> Result<()> {
            self.stored.insert(name.clone(), t.dtype());
            let t = match dtype {
                Some(d) if t.dtype().is_float() && t.dtype() != d => {
                    let cast = t.to_dtype(d)?;
                    // The stored bytes (a memory-mapped window) are not needed once cast.
                    t.release_pages();
                    cast
                }
                _ => t,
            };
            self.tensors.insert(name, t);
            Ok(())
        };
        if file.extension().is_some_and(|e| e == "safetensors") {
            read_safetensors(file, add)
        } else {
            read_pytorch(file, add)
        }
    }

    /// Every tensor an index file names must have been found in its shard.
    fn check_index(&self, dir: &Path) -> Result<()> {
        for index in ["model.safetensors.index.json", "pytorch_model.bin.index.json"] {
            let path = dir.join(index);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if let Some(map) = json.get("weight_map").and_then(|m| m.as_object()) {
                for (name, file) in map {
                    if !self.tensors.contains_key(name) {
                        return Err(Error::format(
                            &path,
                            format!("tensor '{name}' is listed in shard {file} but missing from it"),
                        ));
                    }
                }
            }
            return Ok(());
        }
        Ok(())
    }

    /// Weights from tensors already in memory.
    pub fn from_tensors(tensors: impl IntoIterator<Item = (String, Tensor)>) -> Self {
        let tensors: BTreeMap<String, Tensor> = tensors.into_iter().collect();
        let stored = tensors.iter().map(|(k, t)| (k.clone(), t.dtype())).collect();
        Weights { tensors, stored }
    }

    /// The same weights moved to `device` (tensors already there are not copied).
    pub fn to_device(self, device: oxtorch_tensor::Device) -> Result<Self> {
        let tensors = self.tensors.into_iter().map(|(k, t)| Ok((k, t.to(device)?))).collect::<Result<_>>()?;
        Ok(Weights { tensors, stored: self.stored })
    }

    /// The tensor called `name`, if present.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name)
    }

    /// Whether a tensor called `name` is present.
    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// The tensor called `name`, which must have `shape`.
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        let t = self
            .tensors
            .get(name)
            .ok_or_else(|| Error::Weight(format!("tensor '{name}' is missing from the checkpoint")))?;
        if t.dims() != shape {
            return Err(Error::Weight(format!(
                "tensor '{name}' has shape {:?} in the checkpoint, but the config implies {shape:?}",
                t.dims()
            )));
        }
        Ok(t.clone())
    }

    /// The names and tensors, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Tensor)> {
        self.tensors.iter()
    }

    /// The dtype a tensor had in the file (before any cast on load).
    pub fn stored_dtype(&self, name: &str) -> Option<DType> {
        self.stored.get(name).copied()
    }

    /// The most common floating-point dtype in the file: the checkpoint's dtype.
    pub fn checkpoint_dtype(&self) -> Option<DType> {
        let mut counts: BTreeMap<String, (usize, DType)> = BTreeMap::new();
        for d in self.stored.values().filter(|d| d.is_float()) {
            counts.entry(format!("{d:?}")).or_insert((0, *d)).0 += 1;
        }
        counts.into_values().max_by_key(|(n, _)| *n).map(|(_, d)| d)
    }

    /// The number of tensors.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether there are no tensors.
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// A view of the tensors under `prefix` (`"model.layers.0"`).
    pub fn vars(&self, prefix: &str) -> Vars<'_> {
        Vars { weights: self, prefix: prefix.to_string() }
    }
}

/// The weights below a dotted name prefix, as a module tree sees them.
#[derive(Clone)]
pub struct Vars<'a> {
    weights: &'a Weights,
    prefix: String,
}

impl<'a> Vars<'a> {
    /// The sub-tree `name` (`vars.pp("layers").pp(3)`).
    pub fn pp(&self, name: impl std::fmt::Display) -> Vars<'a> {
        Vars { weights: self.weights, prefix: self.path(&name.to_string()) }
    }

    /// The full dotted name of `name` under this prefix.
    pub fn path(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        }
    }

    /// The tensor `name` under this prefix, which must have `shape`.
    pub fn get(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        self.weights.tensor(&self.path(name), shape)
    }

    /// Whether the tensor `name` exists under this prefix.
    pub fn contains(&self, name: &str) -> bool {
        self.weights.contains(&self.path(name))
    }

    /// The tensor `name` if present (with `shape`), `None` if absent.
    pub fn get_opt(&self, name: &str, shape: &[usize]) -> Result<Option<Tensor>> {
        if self.contains(name) {
            self.get(name, shape).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The weights these vars read.
    pub fn weights(&self) -> &'a Weights {
        self.weights
    }
}

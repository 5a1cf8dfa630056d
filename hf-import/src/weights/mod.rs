//! Checkpoint weights: safetensors (single or sharded) and `pytorch_model.bin`, cast to one dtype.
//!
//! A cast is made when a tensor is read ([`Weights::tensor`]), from the memory-mapped file, whose
//! pages are then released: the process holds the cast copies a model keeps, never the whole
//! checkpoint as well. Tensors the file could not lend (a `.bin`, an unaligned safetensors entry)
//! are cast as they are loaded. A model that packs its matrices reads them as stored
//! ([`Vars::deferring_matrix_casts`]) and casts them straight into the packed buffer.

mod decode;
mod pickle;
mod safetensors;
mod torch_zip;

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
                .filter(|f| !f.is_empty() && !f.contains("..") && !Path::new(f).is_absolute())
                .ok_or_else(|| Error::format(&path, format!("bad shard name for tensor '{tensor}'")))?;
            shards.insert(file.to_string());
        }
        return Ok(shards.into_iter().map(|f| dir.join(f)).collect());
    }
    Err(Error::format(dir, format!("no weights found: expected one of {}", CANDIDATES.join(", "))))
}

/// The tensors of a checkpoint by name, floating-point ones cast to one dtype when read.
#[derive(Debug, Clone, Default)]
pub struct Weights {
    /// As stored, or already cast (see the module doc).
    tensors: BTreeMap<String, Tensor>,
    stored: BTreeMap<String, DType>,
    /// The dtype floating-point tensors are read as.
    cast: Option<DType>,
    /// `cast` was chosen to unify a checkpoint of mixed float dtypes, not asked for.
    unified: bool,
}

impl Weights {
    /// Every tensor in the checkpoint files of `dir`; floating-point tensors are read as `dtype`
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
        weights.unify_float_dtypes(dir);
        Ok(weights)
    }

    /// Adds the tensors of one `.safetensors` or `.bin` file, floating-point ones to be read as
    /// `dtype` when given (which then applies to every file of these weights).
    pub fn load_file(&mut self, file: &Path, dtype: Option<DType>) -> Result<()> {
        if dtype.is_some() {
            self.cast = dtype;
        }
        let cast = self.cast;
        let add = |name: String, t: Tensor| -> Result<()> {
            self.stored.insert(name.clone(), t.dtype());
            // A tensor in memory of its own would be held twice if cast only when read.
            let t = match cast_to(cast, &t) {
                Some(d) if !t.borrows_memory() => t.to_dtype(d)?,
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

    /// Without a cast asked for, a checkpoint mixing float dtypes (an f16 embedding among f32
    /// matrices, f64 norm scales) is read in one, as transformers builds a model in one dtype and
    /// copies every tensor into it: the config's `dtype` (`torch_dtype`) when the checkpoint holds
    /// it, else its most common float dtype. [`Weights::keep_stored_dtypes`] undoes this.
    fn unify_float_dtypes(&mut self, dir: &Path) {
        if self.cast.is_some() {
            return;
        }
        let mut floats = self.stored.values().filter(|d| d.is_float());
        let first = floats.next();
        if !floats.any(|d| Some(d) != first) {
            return;
        }
        let configured = crate::Config::load(dir).ok().and_then(|c| {
            let name = c.get("dtype").or_else(|| c.get("torch_dtype"))?.as_str()?.to_string();
            crate::config::parse_dtype(&name)
        });
        let held = |d: &DType| self.stored.values().any(|s| s == d);
        self.cast = configured.filter(held).or_else(|| self.checkpoint_dtype());
        self.unified = true;
    }

    /// Reads every tensor in its stored dtype again after a checkpoint of mixed float dtypes was
    /// unified on load (what `convert` without `--dtype` writes); a cast asked for stays.
    pub fn keep_stored_dtypes(&mut self) {
        if self.unified {
            self.cast = None;
            self.unified = false;
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
        Weights { tensors, stored, cast: None, unified: false }
    }

    /// The tensors that `rename` gives a name, under that name; the others left out. The tensors
    /// are shared, not copied or cast, and keep their stored dtypes and the cast these weights read
    /// them with: a view of part of a checkpoint under the names a model reads (a multimodal
    /// checkpoint's language model, without its vision tower).
    pub fn renamed(&self, rename: impl Fn(&str) -> Option<String>) -> Weights {
        let mut out = Weights { cast: self.cast, unified: self.unified, ..Weights::default() };
        for (name, t) in &self.tensors {
            if let Some(new) = rename(name) {
                if let Some(&d) = self.stored.get(name) {
                    out.stored.insert(new.clone(), d);
                }
                out.tensors.insert(new, t.clone());
            }
        }
        out
    }

    /// These weights with `extra` tensors added under their names (held as given, stored in their
    /// own dtypes; a name already held is replaced): tensors a family's checkpoint leaves out that
    /// the decoder reads (Llama 4's weightless q/k norms as norms of ones).
    pub fn with_tensors(mut self, extra: impl IntoIterator<Item = (String, Tensor)>) -> Weights {
        for (name, t) in extra {
            self.stored.insert(name.clone(), t.dtype());
            self.tensors.insert(name, t);
        }
        self
    }

    /// These weights with each tensor that `replace` (given its name and the tensor as held) gives
    /// a new value replaced by it, the others shared as they are; the cast they are read with is
    /// kept (a model's constant multipliers folded into its matrices at load).
    pub fn replaced(&self, replace: impl Fn(&str, &Tensor) -> Result<Option<Tensor>>) -> Result<Weights> {
        let mut tensors = BTreeMap::new();
        for (name, t) in &self.tensors {
            tensors.insert(name.clone(), replace(name, t)?.unwrap_or_else(|| t.clone()));
        }
        Ok(Weights { tensors, ..self.clone() })
    }

    /// The same weights moved to `device` (tensors already there are not copied), cast first.
    pub fn to_device(self, device: oxtorch_tensor::Device) -> Result<Self> {
        let tensors = self
            .tensors
            .iter()
            .map(|(k, t)| Ok((k.clone(), self.read(t)?.to(device)?)))
            .collect::<Result<_>>()?;
        Ok(Weights { tensors, stored: self.stored, cast: self.cast, unified: self.unified })
    }

    /// The tensor called `name` (cast), if present.
    pub fn get(&self, name: &str) -> Result<Option<Tensor>> {
        self.tensors.get(name).map(|t| self.read(t)).transpose()
    }

    /// `t` as read: cast when it is a floating-point tensor of another dtype than the one asked
    /// for, the stored pages then released.
    fn read(&self, t: &Tensor) -> Result<Tensor> {
        Ok(match cast_to(self.cast, t) {
            Some(d) => {
                let cast = Tensor::empty(t.dims(), (d, t.device()))?;
                copy_releasing(&cast.reshape([t.numel()])?, t)?;
                cast
            }
            None => t.clone(),
        })
    }

    /// Whether a tensor called `name` is present.
    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// The tensor called `name` (cast), which must have `shape`.
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        self.read(&self.tensor_as_stored(name, shape)?)
    }

    /// The tensor called `name` in the dtype it has in memory (not cast), which must have `shape`.
    pub fn tensor_as_stored(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
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

    /// The tensor names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.tensors.keys()
    }

    /// The names and tensors (each cast as it is reached), sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = Result<(&String, Tensor)>> {
        self.tensors.iter().map(|(k, t)| Ok((k, self.read(t)?)))
    }

    /// The dtype floating-point tensors are read as, when a cast was asked for.
    pub fn cast_dtype(&self) -> Option<DType> {
        self.cast
    }

    /// The device the tensors are on (the CPU when there are none).
    pub fn device(&self) -> oxtorch_tensor::Device {
        self.tensors.values().next().map_or(oxtorch_tensor::Device::Cpu, Tensor::device)
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
        Vars { weights: self, prefix: prefix.to_string(), defer_matrix_casts: false }
    }

    /// A base model's tensors: under `prefix.` where the checkpoint has any there (a checkpoint
    /// with a head: `wav2vec2.`, `beit.`), else at the root (the base model saved alone).
    pub fn base_vars(&self, prefix: &str) -> Vars<'_> {
        let dotted = format!("{prefix}.");
        match self.names().any(|n| n.starts_with(&dotted)) {
            true => self.vars(prefix),
            false => self.vars(""),
        }
    }
}

/// Bytes of a checkpoint tensor copied (and their pages released) at a time by [`copy_releasing`].
const RELEASE_CHUNK_BYTES: usize = 4 << 20;

/// Copies `src` (cast) into the flat view `dst` of as many elements, letting the OS drop the pages
/// of a memory-mapped `src` as they are copied: a few megabytes at a time for a contiguous `src`,
/// so that casting or packing a large matrix (a 100 MB embedding table) never holds it resident
/// in full next to its copy.
pub(crate) fn copy_releasing(dst: &Tensor, src: &Tensor) -> Result<()> {
    let n = src.numel();
    if !src.is_contiguous() || !src.borrows_memory() {
        dst.copy_(&src.reshape([n])?)?;
        src.release_pages();
        return Ok(());
    }
    let flat = src.reshape([n])?;
    let chunk = (RELEASE_CHUNK_BYTES / src.element_size()).max(1);
    for start in (0..n).step_by(chunk) {
        let len = chunk.min(n - start);
        let part = flat.narrow(0, start as isize, len)?;
        dst.narrow(0, start as isize, len)?.copy_(&part)?;
        part.release_pages();
    }
    Ok(())
}

/// The dtype `t` is read as under the cast `cast`: `Some` for a floating-point tensor of another
/// dtype.
fn cast_to(cast: Option<DType>, t: &Tensor) -> Option<DType> {
    cast.filter(|&d| t.dtype().is_float() && t.dtype() != d)
}

/// The weights below a dotted name prefix, as a module tree sees them.
#[derive(Clone)]
pub struct Vars<'a> {
    weights: &'a Weights,
    prefix: String,
    /// [`Vars::get_matrix`] reads tensors as stored.
    defer_matrix_casts: bool,
}

impl<'a> Vars<'a> {
    /// The sub-tree `name` (`vars.pp("layers").pp(3)`).
    pub fn pp(&self, name: impl std::fmt::Display) -> Vars<'a> {
        Vars {
            weights: self.weights,
            prefix: self.path(&name.to_string()),
            defer_matrix_casts: self.defer_matrix_casts,
        }
    }

    /// These vars, with [`Vars::get_matrix`] reading tensors in their stored dtype: for a model
    /// that then copies its matrices into one buffer, casting them on the way (so that the cast
    /// copies and the buffer never coexist). Such a model must cast every matrix it reads.
    pub fn deferring_matrix_casts(self) -> Vars<'a> {
        Vars { defer_matrix_casts: true, ..self }
    }

    /// These vars with every tensor read cast (undoing [`Vars::deferring_matrix_casts`]): for the
    /// parts of such a model that keep their own matrices.
    pub fn casting_matrices(self) -> Vars<'a> {
        Vars { defer_matrix_casts: false, ..self }
    }

    /// A weight matrix `name` with `shape`: as [`Vars::get`], but in the stored dtype under
    /// [`Vars::deferring_matrix_casts`].
    pub fn get_matrix(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        if self.defer_matrix_casts {
            self.weights.tensor_as_stored(&self.path(name), shape)
        } else {
            self.get(name, shape)
        }
    }

    /// [`Vars::get_matrix`] for a tensor that may be absent.
    pub fn get_matrix_opt(&self, name: &str, shape: &[usize]) -> Result<Option<Tensor>> {
        if self.contains(name) {
            self.get_matrix(name, shape).map(Some)
        } else {
            Ok(None)
        }
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

    /// The tensor `name` under this prefix in the dtype it has in memory (no cast on load), which
    /// must have `shape`: for the few tensors a model keeps in float32 whatever its dtype.
    pub fn get_as_stored(&self, name: &str, shape: &[usize]) -> Result<Tensor> {
        self.weights.tensor_as_stored(&self.path(name), shape)
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

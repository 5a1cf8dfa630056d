//! `hf-import convert MODEL --out DIR [--dtype T]`.

use std::path::{Path, PathBuf};

use oxtorch_hf_import::weights::{checkpoint_files, write_safetensors};
use oxtorch_hf_import::{resolve_model, Config, Error, Result};
use oxtorch_tensor::DType;

/// Whether `a` and `b` both exist and are the same file or folder once links, `.` and `..` are
/// resolved.
fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The model folder's top-level files other than the checkpoint (`files`), its index and
/// `config.json`: what is copied as is.
fn files_to_copy(dir: &Path, files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let skip = |name: &str| {
        files.iter().any(|f| f.file_name().is_some_and(|n| n == name))
            || name.ends_with(".index.json")
            || name == "config.json"
    };
    let mut copies = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_file() && !skip(&name) {
            copies.push(path);
        }
    }
    Ok(copies)
}

/// Fails when writing to `out` would write over the model's own files: `out` is the model folder
/// (copying a file onto itself empties it), or a file written there is one of the model's (links).
fn check_out_is_elsewhere(dir: &Path, out: &Path, copies: &[PathBuf]) -> Result<()> {
    if same_path(dir, out) {
        return Err(Error::Input(format!(
            "--out {} is the model's own folder {}: convert writes a new folder, so give another one",
            out.display(),
            dir.display()
        )));
    }
    let written = copies.iter().filter_map(|p| p.file_name()).chain([std::ffi::OsStr::new("config.json")]);
    for name in written {
        let (source, target) = (dir.join(name), out.join(name));
        if same_path(&source, &target) {
            return Err(Error::Input(format!(
                "--out {}: {} is the model's own file {} (a link), which convert would write over",
                out.display(),
                target.display(),
                source.display()
            )));
        }
    }
    Ok(())
}

/// Writes every tensor to `out/model.safetensors` (cast to `dtype` if given) and copies the other
/// top-level files (config, tokenizer, ...), updating the config's dtype. `out` must be another
/// folder than the model's. A new folder is written under a temporary name and renamed once
/// complete, so that a failure leaves nothing behind.
pub fn run(model: &str, out: &Path, dtype: Option<DType>) -> Result<()> {
    let dir = resolve_model(model)?;
    Config::load(&dir)?; // a folder without a readable config is not a model
    let files = checkpoint_files(&dir)?;
    let copies = files_to_copy(&dir, &files)?;
    check_out_is_elsewhere(&dir, out, &copies)?;
    let mut weights = super::load_weights(&dir, dtype)?;
    if dtype.is_none() {
        // Without --dtype every tensor is written as stored, a checkpoint of mixed dtypes too.
        weights.keep_stored_dtypes();
    }
    if out.exists() {
        write(&dir, out, &weights, &copies, dtype)?;
    } else {
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let staging = out.with_file_name(format!(".{name}.partial-{}", std::process::id()));
        let written = write(&dir, &staging, &weights, &copies, dtype)
            .and_then(|()| std::fs::rename(&staging, out).map_err(|e| Error::io(out, e)));
        if written.is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        written?;
    }
    outln!("wrote {} tensors to {}", weights.len(), out.join("model.safetensors").display());
    Ok(())
}

/// The converted model's files, into the folder `out`.
fn write(
    dir: &Path,
    out: &Path,
    weights: &oxtorch_hf_import::weights::Weights,
    copies: &[PathBuf],
    dtype: Option<DType>,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let tensors: Vec<_> = weights.iter().map(|r| r.map(|(n, t)| (n.clone(), t))).collect::<Result<_>>()?;
    let meta = [("format".to_string(), "pt".to_string())].into_iter().collect();
    write_safetensors(&out.join("model.safetensors"), &tensors, Some(meta))?;
    for path in copies {
        let target = out.join(path.file_name().unwrap_or_default());
        std::fs::copy(path, &target).map_err(|e| Error::io(&target, e))?;
    }
    let mut json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| Error::io(&dir.join("config.json"), e))?,
    )
    .map_err(|e| Error::Config(e.to_string()))?;
    if let (Some(d), Some(obj)) = (dtype, json.as_object_mut()) {
        let name = match d {
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
            DType::F64 => "float64",
            _ => "float32",
        };
        let key = if obj.contains_key("torch_dtype") && !obj.contains_key("dtype") {
            "torch_dtype"
        } else {
            "dtype"
        };
        obj.insert(key.to_string(), name.into());
    }
    let text = serde_json::to_string_pretty(&json).map_err(|e| Error::Config(e.to_string()))? + "\n";
    let path = out.join("config.json");
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
}

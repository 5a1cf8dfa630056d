//! `hf-import convert MODEL --out DIR [--dtype T]`.

use std::path::Path;

use oxtorch_hf_import::weights::{checkpoint_files, write_safetensors};
use oxtorch_hf_import::{resolve_model, Config, Error, Result};
use oxtorch_tensor::DType;

/// Writes every tensor to `out/model.safetensors` (cast to `dtype` if given) and copies the other
/// top-level files (config, tokenizer, ...), updating the config's dtype.
pub fn run(model: &str, out: &Path, dtype: Option<DType>) -> Result<()> {
    let dir = resolve_model(model)?;
    Config::load(&dir)?; // a folder without a readable config is not a model
    let files = checkpoint_files(&dir)?;
    let weights = super::load_weights(&dir, dtype)?;
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let tensors: Vec<_> = weights.iter().map(|r| r.map(|(n, t)| (n.clone(), t))).collect::<Result<_>>()?;
    let meta = [("format".to_string(), "pt".to_string())].into_iter().collect();
    write_safetensors(&out.join("model.safetensors"), &tensors, Some(meta))?;
    let skip = |name: &str| {
        files.iter().any(|f| f.file_name().is_some_and(|n| n == name))
            || name.ends_with(".index.json")
            || name == "config.json"
    };
    for entry in std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))? {
        let path = entry.map_err(|e| Error::io(&dir, e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_file() && !skip(&name) {
            std::fs::copy(&path, out.join(&name)).map_err(|e| Error::io(&path, e))?;
        }
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
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    println!("wrote {} tensors to {}", tensors.len(), out.join("model.safetensors").display());
    Ok(())
}

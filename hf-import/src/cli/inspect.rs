//! `hf-import inspect MODEL`.

use oxtorch_hf_import::weights::checkpoint_files;
use oxtorch_hf_import::{resolve_model, AutoModel, Config, Result};

/// Prints the model's folder, architecture, checkpoint files, parameter count, dtypes and tensors.
pub fn run(model: &str) -> Result<()> {
    let dir = resolve_model(model)?;
    let cfg = Config::load(&dir)?;
    let files = checkpoint_files(&dir)?;
    let weights = super::load_weights(&dir, None)?;
    let arch = AutoModel::architecture_of(&cfg).unwrap_or_else(|e| format!("({e})"));
    println!("model:        {}", dir.display());
    println!("model_type:   {}", cfg.model_type()?);
    println!("architecture: {arch}");
    for f in &files {
        println!(
            "file:         {}",
            f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        );
    }
    // Loaded without a cast, so reading each tensor copies nothing.
    let tensors: Vec<(&String, oxtorch_tensor::Tensor)> = weights.iter().collect::<Result<_>>()?;
    let params: usize = tensors.iter().filter(|(_, t)| t.dtype().is_float()).map(|(_, t)| t.numel()).sum();
    println!("parameters:   {params} ({:.2}M)", params as f64 / 1e6);
    let mut dtypes = std::collections::BTreeMap::<String, usize>::new();
    for (name, t) in &tensors {
        let d = weights.stored_dtype(name).unwrap_or(t.dtype());
        *dtypes.entry(format!("{d:?}").to_lowercase()).or_default() += t.numel();
    }
    let list: Vec<String> = dtypes.iter().map(|(d, n)| format!("{d} ({n} values)")).collect();
    println!("dtypes:       {}", list.join(", "));
    println!("tensors:      {}", weights.len());
    let width = tensors.iter().map(|(n, _)| n.len()).max().unwrap_or(4).max(4);
    println!();
    println!("{:<width$}  {:<5}  shape", "name", "dtype");
    for (name, t) in &tensors {
        let d = weights.stored_dtype(name).unwrap_or(t.dtype());
        println!("{name:<width$}  {:<5}  {:?}", format!("{d:?}").to_lowercase(), t.dims());
    }
    Ok(())
}

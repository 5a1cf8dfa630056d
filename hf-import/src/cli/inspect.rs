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
    outln!("model:        {}", dir.display());
    outln!("model_type:   {}", cfg.model_type()?);
    outln!("architecture: {arch}");
    match arch.as_str() {
        arch if oxtorch_hf_import::models::takes_images(arch) => {
            outln!(
                "runs:         its language model on text, and on images with its vision tower and projector"
            );
        }
        "Mistral3ForConditionalGeneration"
        | "Llama4ForConditionalGeneration"
        | "Qwen2VLForConditionalGeneration"
        | "Qwen2_5_VLForConditionalGeneration"
        | "Qwen3VLForConditionalGeneration"
        | "Qwen3VLMoeForConditionalGeneration" => {
            outln!(
                "runs:         its language model, on text (the vision tower and projector are not loaded)"
            );
        }
        arch if oxtorch_hf_import::models::is_vision_language(arch) => {
            outln!(
                "runs:         its language model, on text (the vision tower and projector are not loaded)"
            );
        }
        "Gemma4ForConditionalGeneration" | "Gemma3nForConditionalGeneration" => {
            outln!("runs:         its language model, on text (the vision and audio towers are not loaded)");
        }
        _ => {}
    }
    for f in &files {
        outln!(
            "file:         {}",
            f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
        );
    }
    // Loaded without a cast, so reading each tensor copies nothing.
    let tensors: Vec<(&String, oxtorch_tensor::Tensor)> = weights.iter().collect::<Result<_>>()?;
    let params: usize = tensors.iter().filter(|(_, t)| t.dtype().is_float()).map(|(_, t)| t.numel()).sum();
    outln!("parameters:   {params} ({:.2}M)", params as f64 / 1e6);
    let mut dtypes = std::collections::BTreeMap::<String, usize>::new();
    for (name, t) in &tensors {
        let d = weights.stored_dtype(name).unwrap_or(t.dtype());
        *dtypes.entry(format!("{d:?}").to_lowercase()).or_default() += t.numel();
    }
    let list: Vec<String> = dtypes.iter().map(|(d, n)| format!("{d} ({n} values)")).collect();
    outln!("dtypes:       {}", list.join(", "));
    outln!("tensors:      {}", weights.len());
    let width = tensors.iter().map(|(n, _)| n.len()).max().unwrap_or(4).max(4);
    outln!();
    outln!("{:<width$}  {:<5}  shape", "name", "dtype");
    for (name, t) in &tensors {
        let d = weights.stored_dtype(name).unwrap_or(t.dtype());
        outln!("{name:<width$}  {:<5}  {:?}", format!("{d:?}").to_lowercase(), t.dims());
    }
    Ok(())
}

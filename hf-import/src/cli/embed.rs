//! `hf-import embed MODEL [--output OUT.safetensors] SENTENCE...`.

use std::path::Path;

use oxtorch_hf_import::weights::write_safetensors;
use oxtorch_hf_import::{resolve_model, Error, Result, SentenceTransformer};
use oxtorch_tensor::{DType, Device};

/// The prompt `embed` puts before the sentences (neither: the model's default prompt).
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptArgs<'a> {
    /// `--prompt`: a text
    pub prompt: Option<&'a str>,
    /// `--prompt-name`: a prompt of `config_sentence_transformers.json`
    pub prompt_name: Option<&'a str>,
}

/// Embeds `sentences` with the sentence-transformers model `model`, after the prompt of `prompt`;
/// writes `embeddings` `[n, dim]` (float32) to `output`, or prints `{"embeddings": [[...], ...]}`
/// on stdout. The model runs on `device`.
pub fn run(
    model: &str,
    sentences: &[String],
    output: Option<&Path>,
    prompt: PromptArgs<'_>,
    device: Device,
    dtype: Option<DType>,
) -> Result<()> {
    if sentences.is_empty() {
        return Err(Error::Input("embed: give at least one sentence".into()));
    }
    let dir = resolve_model(model)?;
    let st = SentenceTransformer::load_on_device(&dir, dtype, device)?;
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let emb = st
        .encode_with_prompt(&texts, prompt.prompt, prompt.prompt_name)?
        .to(Device::Cpu)?
        .to_dtype(DType::F32)?;
    match output {
        Some(path) => write_safetensors(path, &[("embeddings".to_string(), emb)], None),
        None => {
            let rows = emb.to_vec2::<f32>()?;
            let json = serde_json::json!({ "embeddings": rows });
            outln!("{json}");
            Ok(())
        }
    }
}

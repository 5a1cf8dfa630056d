//! `hf-import embed MODEL [--output OUT.safetensors] SENTENCE...`.

use std::path::Path;

use oxtorch_hf_import::weights::write_safetensors;
use oxtorch_hf_import::{resolve_model, Error, Result, SentenceTransformer};
use oxtorch_tensor::{DType, Device};

/// Embeds `sentences` with the sentence-transformers model `model`; writes `embeddings` `[n, dim]`
/// (float32) to `output`, or prints `{"embeddings": [[...], ...]}` on stdout. The model runs on `device`.
pub fn run(
    model: &str,
    sentences: &[String],
    output: Option<&Path>,
    device: Device,
    dtype: Option<DType>,
) -> Result<()> {
    if sentences.is_empty() {
        return Err(Error::Input("embed: give at least one sentence".into()));
    }
    let dir = resolve_model(model)?;
    let st = SentenceTransformer::load_on_device(&dir, dtype, device)?;
    let texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let emb = st.encode(&texts)?.to(Device::Cpu)?.to_dtype(DType::F32)?;
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

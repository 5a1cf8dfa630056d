//! `hf-import forward MODEL --inputs IN --output OUT [--hidden-states] [--device D] [--dtype T]`.

use std::collections::BTreeMap;
use std::path::Path;

use oxtorch_hf_import::weights::{read_safetensors, write_safetensors};
use oxtorch_hf_import::{resolve_model, AutoModel, Config, Result};
use oxtorch_tensor::{DType, Device};

/// Runs the model on the tensors of `inputs` and writes its float32 outputs to `output`.
pub fn run(
    model: &str,
    inputs: &Path,
    output: &Path,
    hidden_states: bool,
    device: Device,
    dtype: Option<DType>,
) -> Result<()> {
    let dir = resolve_model(model)?;
    let cfg = Config::load(&dir)?;
    let mut named = BTreeMap::new();
    read_safetensors(inputs, |name, t| {
        named.insert(name, t);
        Ok(())
    })?;
    // (Without what the model never reads: a multimodal checkpoint's vision tower is not moved.)
    let weights = AutoModel::weights_used(&cfg, super::load_weights(&dir, dtype)?).to_device(device)?;
    let (model, note) = AutoModel::load_or_base(&cfg, &weights)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    // The model holds what it uses (a decoder on the cpu, its own packed copy): the loaded set
    // goes, so a cast checkpoint is not kept twice.
    drop(weights);
    let named = named.into_iter().map(|(k, t)| Ok((k, t.to(device)?))).collect::<Result<BTreeMap<_, _>>>()?;
    let outputs = model.forward_named(&named, hidden_states)?;
    let outputs = outputs
        .into_iter()
        .map(|(k, t)| Ok((k, t.to(Device::Cpu)?.to_dtype(DType::F32)?)))
        .collect::<Result<Vec<_>>>()?;
    write_safetensors(output, &outputs, None)
}

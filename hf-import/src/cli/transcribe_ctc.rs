//! `generate` with a wav2vec 2.0 or HuBERT CTC model: WAV files (`--audio`) or `--inputs`'
//! `input_values` to the greedy per-frame ids, printed as text (the CTC tokenizer's decoding of
//! each row) or written as `output_ids` `[batch, frames]` to `--output`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oxtorch_hf_import::audio::{read_clips, RawAudioFeatureExtractor};
use oxtorch_hf_import::tokenizer::CtcTokenizer;
use oxtorch_hf_import::weights::write_safetensors;
use oxtorch_hf_import::{Error, Result, Wav2Vec2};
use oxtorch_tensor::Tensor;

/// Transcribes `audio` (or runs `inputs`) with `model` from the model folder `dir`.
pub(super) fn run(
    model: &Wav2Vec2,
    dir: &Path,
    inputs: Option<BTreeMap<String, Tensor>>,
    audio: &[PathBuf],
    output: Option<PathBuf>,
) -> Result<()> {
    if !model.is_ctc() {
        return Err(Error::Input(
            "generate needs a CTC model (Wav2Vec2ForCTC, HubertForCTC, WavLMForCTC, ...); run this one with forward".into(),
        ));
    }
    let (values, mask) = match inputs {
        Some(named) => {
            let values = named
                .get("input_values")
                .cloned()
                .ok_or_else(|| Error::Input("missing input 'input_values'".into()))?;
            (values, named.get("attention_mask").cloned())
        }
        None if !audio.is_empty() => clips(dir, audio)?,
        None => return Err(Error::Input(
            "generate with a CTC model needs --audio FILE.wav or --inputs IN (float input_values [batch, \
                 samples]) --output OUT"
                .into(),
        )),
    };
    match output {
        Some(path) => {
            let ids = model.ctc_ids(&values, mask.as_ref())?;
            write_safetensors(&path, &[("output_ids".to_string(), ids)], None)
        }
        None => {
            // (The vocabulary is read before the model runs: a folder without one fails fast.)
            let tok = CtcTokenizer::from_model_dir(dir)?;
            for row in model.ctc_ids(&values, mask.as_ref())?.to_vec2::<i64>()? {
                outln!("{}", tok.decode(&row));
            }
            Ok(())
        }
    }
}

/// The WAV files as the model's feature extractor batches them.
fn clips(dir: &Path, files: &[PathBuf]) -> Result<(Tensor, Option<Tensor>)> {
    let extractor = RawAudioFeatureExtractor::from_model_dir(dir)?;
    extractor.batch(&read_clips(files, extractor.sampling_rate)?)
}

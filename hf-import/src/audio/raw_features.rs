//! wav2vec 2.0's and HuBERT's feature extractor (`Wav2Vec2FeatureExtractor`): raw samples, the
//! batch right-padded with `padding_value` to its longest clip, each row normalised to zero mean
//! and unit variance (`do_normalize`), and an `attention_mask` over the samples where
//! `return_attention_mask` asks for one (the layer-normed models'; the group-normed ones take the
//! padded batch alone). As transformers' processor: with the mask each clip is normalised over its
//! own samples, its padding left at `padding_value`; without it over the whole padded row.

use std::path::Path;

use oxtorch_tensor::Tensor;
use serde_json::Value;

use crate::error::{Error, Result};

/// The settings of `preprocessor_config.json` that shape the raw-audio inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct RawAudioFeatureExtractor {
    /// samples per second the model was trained on (16000)
    pub sampling_rate: u32,
    /// whether each clip is normalised to zero mean and unit variance
    pub do_normalize: bool,
    /// the value padding samples get
    pub padding_value: f32,
    /// whether the batch comes with an `attention_mask` over the samples
    pub return_attention_mask: bool,
}

impl Default for RawAudioFeatureExtractor {
    fn default() -> Self {
        RawAudioFeatureExtractor {
            sampling_rate: 16_000,
            do_normalize: true,
            padding_value: 0.0,
            return_attention_mask: false,
        }
    }
}

impl RawAudioFeatureExtractor {
    /// The settings in `dir/preprocessor_config.json`, transformers' defaults where it has none.
    pub fn from_model_dir(dir: &Path) -> Result<Self> {
        let path = dir.join("preprocessor_config.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
        let d = Self::default();
        let flag = |key: &str, default: bool| match json.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| Error::format(&path, format!("\"{key}\" must be a boolean, got {v}"))),
        };
        let sampling_rate = match json.get("sampling_rate") {
            None | Some(Value::Null) => d.sampling_rate,
            Some(v) => {
                v.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|&n| n > 0).ok_or_else(|| {
                    Error::format(&path, format!("\"sampling_rate\" must be a positive integer, got {v}"))
                })?
            }
        };
        Ok(RawAudioFeatureExtractor {
            sampling_rate,
            do_normalize: flag("do_normalize", d.do_normalize)?,
            padding_value: match json.get("padding_value") {
                None | Some(Value::Null) => d.padding_value,
                Some(v) => v.as_f64().ok_or_else(|| {
                    Error::format(&path, format!("\"padding_value\" must be a number, got {v}"))
                })? as f32,
            },
            return_attention_mask: flag("return_attention_mask", d.return_attention_mask)?,
        })
    }

    /// `input_values` `[clips, longest]` (float32) and, with `return_attention_mask`, the
    /// `attention_mask` `[clips, longest]` (int64) of `clips`.
    pub fn batch(&self, clips: &[Vec<f32>]) -> Result<(Tensor, Option<Tensor>)> {
        let longest = clips.iter().map(Vec::len).max().unwrap_or(0);
        if clips.is_empty() || longest == 0 {
            return Err(Error::Input("no audio samples to run".into()));
        }
        let mut values = vec![self.padding_value; clips.len() * longest];
        let mut mask = vec![0i64; clips.len() * longest];
        for (i, clip) in clips.iter().enumerate() {
            let row = &mut values[i * longest..(i + 1) * longest];
            row[..clip.len()].copy_from_slice(clip);
            mask[i * longest..i * longest + clip.len()].fill(1);
            if self.do_normalize {
                // As transformers: with the attention mask over the clip's own samples (the padding
                // left at `padding_value`), without it over the padded row, padding included.
                let n = if self.return_attention_mask { clip.len() } else { longest };
                normalize(&mut row[..n]);
            }
        }
        let values = Tensor::from_vec(values, [clips.len(), longest])?;
        let mask = match self.return_attention_mask {
            true => Some(Tensor::from_vec(mask, [clips.len(), longest])?),
            false => None,
        };
        Ok((values, mask))
    }
}

/// `x` to zero mean and unit variance (`(x - mean) / sqrt(var + 1e-7)`), the statistics in
/// float64.
fn normalize(x: &mut [f32]) {
    let n = x.len().max(1) as f64;
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
    let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    let scale = (var + 1e-7).sqrt();
    for v in x {
        *v = ((*v as f64 - mean) / scale) as f32;
    }
}

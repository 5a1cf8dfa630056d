//! Gemma 3n (`Gemma3nForCausalLM`, model type `gemma3n_text`: the text model of Gemma 3n E2B and
//! E4B): Gemma 3's attention (sandwich norms, q/k norms, sliding and full layers with RoPE bases
//! of their own) with norms that scale by `w`, the values RMS-normed without a scale, attention
//! unscaled, and:
//!
//! - alternating updates (AltUp): the hidden state is `altup_num_inputs` streams, each layer runs
//!   on the active one (`altup_active_idx`) predicted from all of them and corrects them all with
//!   its output (see `decoder/altup.rs`);
//! - a low-rank residual beside attention (LAuReL, `laurel_rank`);
//! - per-layer embeddings (`hidden_size_per_layer_input`), ids outside their table reading row 0,
//!   their block's output added to the streams other than the first;
//! - the last `num_kv_shared_layers` layers attending to the keys and values of the last earlier
//!   layer of their type;
//! - MLP widths per layer (`intermediate_size` as a list) and activation sparsity
//!   (`activation_sparsity_pattern`: the gate less `mean + std · Φ⁻¹(p)`, clamped at zero);
//! - final logit soft-capping (`final_logit_softcapping`, default 30).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};
use serde_json::Value;

use super::decoder::{AltUpSpec, CausalLm, DecoderSpec, PerLayerInputsSpec};
use super::family::causal_lm_newtype;
use super::gemma3_multimodal::{nested_text_config, with_language_model};
use super::gemma4::{kv_sources, normed_attention_spec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Gemma3nForCausalLM`.
    Gemma3nForCausalLM
);

impl Gemma3nForCausalLM {
    /// Loads the model from a Gemma 3n text config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, widths) = decoder_config(cfg)?;
        Ok(Gemma3nForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg, widths)?)?))
    }
}

/// transformers' `Gemma3nForConditionalGeneration` (`model_type` `gemma3n`: Gemma 3n E2B and E4B)
/// for text: its language model (`model.language_model.*`), the vision and audio towers and their
/// embedders never read. Image and audio inputs are refused, and so are the ids from the vision
/// embedder's `vocab_offset` on (soft tokens the towers' embedders would embed).
#[derive(Debug, Clone)]
pub struct Gemma3nForConditionalGeneration {
    model: CausalLm,
    /// the first id of the multimodal embedders' vocabularies
    multimodal_from: i64,
}

impl Gemma3nForConditionalGeneration {
    /// Loads the language model of a `gemma3n` checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let text = text_config(cfg)?;
        let model = with_language_model(weights, |w| Ok(Gemma3nForCausalLM::load(&text, w)?.0))?;
        let offset = |tower: &str, default: usize| -> Result<usize> {
            match cfg.get(tower) {
                Some(Value::Object(m)) => Config::from_map(m.clone()).usize_or("vocab_offset", default),
                _ => Ok(default),
            }
        };
        let first = offset("vision_config", 262_144)?.min(offset("audio_config", 262_272)?);
        Ok(Gemma3nForConditionalGeneration {
            model,
            multimodal_from: i64::try_from(first).unwrap_or(i64::MAX),
        })
    }

    /// Refuses image and audio inputs, and `input_ids` of the multimodal embedders' tokens.
    pub(crate) fn check_text_only(&self, inputs: &BTreeMap<String, Tensor>) -> Result<()> {
        const MEDIA: &[&str] = &["pixel_values", "input_features", "input_features_mask"];
        if let Some(name) = inputs.keys().find(|k| MEDIA.contains(&k.as_str())) {
            return Err(Error::Unsupported(format!(
                "input '{name}': image and audio inputs are not supported for Gemma3nForConditionalGeneration \
                 (hf-import runs its language model on text only)"
            )));
        }
        if let Some(ids) = inputs.get("input_ids") {
            super::check_input_dtype("input_ids", ids)?;
            let ids = ids.to_dtype(DType::I64)?.to_vec::<i64>()?;
            if let Some(id) = ids.iter().find(|&&id| id >= self.multimodal_from) {
                return Err(Error::Unsupported(format!(
                    "input_ids hold {id}, an id of the multimodal embedders (from {}): only text tokens are supported \
                     for Gemma3nForConditionalGeneration",
                    self.multimodal_from
                )));
            }
        }
        Ok(())
    }
}

impl std::ops::Deref for Gemma3nForConditionalGeneration {
    type Target = CausalLm;
    fn deref(&self) -> &Self::Target {
        &self.model
    }
}

/// `Gemma3nTextConfig`'s defaults for the keys the decoder requires, where a `text_config` leaves
/// them out.
const TEXT_DEFAULTS: &[(&str, u64)] = &[
    ("vocab_size", 262_400),
    ("hidden_size", 2048),
    ("intermediate_size", 16_384),
    ("num_hidden_layers", 35),
    ("num_attention_heads", 8),
    ("max_position_embeddings", 32_768),
];

/// The text model's config of a `gemma3n` config (`text_config`, with `Gemma3nTextConfig`'s
/// defaults where it is absent), with the outer `tie_word_embeddings` (default true) and dtype.
fn text_config(cfg: &Config) -> Result<Config> {
    nested_text_config(cfg, "gemma3n_text", TEXT_DEFAULTS)
}

/// The config with a single `intermediate_size` (the first of a per-layer list) for the decoder,
/// and the MLP width of every layer.
fn decoder_config(cfg: &Config) -> Result<(Config, Vec<usize>)> {
    let layers = cfg.layers("num_hidden_layers")?;
    let widths = match cfg.get("intermediate_size") {
        Some(Value::Array(list)) => {
            let widths: Option<Vec<usize>> = list.iter().map(|v| v.as_u64().map(|w| w as usize)).collect();
            match widths {
                Some(w) if w.len() == layers => w,
                _ => {
                    return Err(Error::Config(format!(
                    "\"intermediate_size\" must be one integer or one per layer ({layers} layers), got {}",
                    Value::Array(list.clone())
                )))
                }
            }
        }
        _ => vec![cfg.usize_or("intermediate_size", 16_384)?; layers],
    };
    let mut json = cfg.json().clone();
    json.insert("intermediate_size".into(), Value::from(widths.first().copied().unwrap_or(0)));
    Ok((Config::from_map(json), widths))
}

/// Each layer's activation sparsity (`activation_sparsity_pattern`; by default 0.95 on the first
/// ten layers of a model of more than ten, else none).
fn activation_sparsity(cfg: &Config, layers: usize) -> Result<Vec<f64>> {
    match cfg.get("activation_sparsity_pattern") {
        None => {
            let sparse = if layers > 10 { 10 } else { 0 };
            Ok((0..layers).map(|i| if i < sparse { 0.95 } else { 0.0 }).collect())
        }
        Some(Value::Array(list)) => {
            let values: Option<Vec<f64>> = list.iter().map(Value::as_f64).collect();
            match values {
                Some(v) if v.len() == layers => Ok(v),
                _ => Err(Error::Config(format!(
                    "\"activation_sparsity_pattern\" must have one number per layer ({layers} layers)"
                ))),
            }
        }
        Some(v) => Err(Error::Config(format!(
            "\"activation_sparsity_pattern\" must have one number per layer ({layers} layers), got {v}"
        ))),
    }
}

/// Gemma 3n's decoder (see the module docs).
fn spec(cfg: &Config, widths: Vec<usize>) -> Result<DecoderSpec> {
    let mut spec = normed_attention_spec(cfg, 2)?;
    spec.final_softcap = cfg.nullable_f64_or("final_logit_softcapping", Some(30.0))?;
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..layers).map(|i| (i + 1) % 5 != 0).collect(),
    };
    let window = cfg.nullable_usize_or("sliding_window", Some(512))?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.local_rope = sliding.clone();
    spec.kv_sources = Some(kv_sources(cfg.usize_or("num_kv_shared_layers", 15)?, &sliding)?);
    spec.intermediate_per_layer = Some(widths);
    spec.activation_sparsity = Some(activation_sparsity(cfg, layers)?);
    let width = cfg.usize_or("hidden_size_per_layer_input", 256)?;
    if width > 0 {
        let vocab = cfg.usize_or("vocab_size_per_layer_input", 262_144)?;
        spec.per_layer_inputs = Some(PerLayerInputsSpec { width, vocab, clamp_ids: true });
    }
    spec.altup = Some(AltUpSpec {
        streams: cfg.usize_or("altup_num_inputs", 4)?,
        active: cfg.usize_or("altup_active_idx", 0)?,
        correct_scale: cfg.bool_or("altup_correct_scale", true)?,
        laurel_rank: cfg.usize_or("laurel_rank", 64)?,
    });
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    /// A per-layer `intermediate_size` list gives each layer its width (one integer: all of them);
    /// a list of another length is refused.
    #[test]
    fn mlp_widths_per_layer() {
        let (c, w) =
            decoder_config(&cfg(r#"{"num_hidden_layers": 3, "intermediate_size": [8, 16, 4]}"#)).unwrap();
        assert_eq!((c.usize("intermediate_size").unwrap(), w), (8, vec![8, 16, 4]));
        let (_, w) = decoder_config(&cfg(r#"{"num_hidden_layers": 2, "intermediate_size": 12}"#)).unwrap();
        assert_eq!(w, vec![12, 12]);
        let err = decoder_config(&cfg(r#"{"num_hidden_layers": 2, "intermediate_size": [8]}"#)).unwrap_err();
        assert!(err.to_string().contains("one per layer (2 layers)"), "{err}");
    }

    /// The default sparsity is 0.95 on the first ten layers of a deeper model, none otherwise.
    #[test]
    fn default_activation_sparsity() {
        let deep = activation_sparsity(&cfg("{}"), 12).unwrap();
        assert_eq!((deep[9], deep[10]), (0.95, 0.0));
        assert_eq!(activation_sparsity(&cfg("{}"), 10).unwrap(), vec![0.0; 10]);
        let listed = cfg(r#"{"activation_sparsity_pattern": [0.5, 0.0]}"#);
        assert_eq!(activation_sparsity(&listed, 2).unwrap(), vec![0.5, 0.0]);
        assert!(activation_sparsity(&listed, 3).is_err());
    }
}

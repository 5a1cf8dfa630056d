//! Mistral 3 multimodal checkpoints (`model_type` `mistral3`, `Mistral3ForConditionalGeneration`:
//! Mistral Small 3.1/3.2, Magistral Small, Ministral 3), run as their language model on text.
//!
//! The config nests the text model under `text_config` (`model_type` `mistral` by default, or
//! `ministral3` / `ministral`) beside a Pixtral `vision_config`; the weights keep it under
//! `language_model.model.*` and `language_model.lm_head.weight` (what `save_pretrained` writes) or
//! `model.language_model.*` and `lm_head.weight` (transformers 5's modules). For a text-only input
//! transformers' `Mistral3ForConditionalGeneration` is exactly its text model's `*ForCausalLM` on
//! those weights; a checkpoint with its Pixtral tower loads as a
//! [`super::VisionLanguageForConditionalGeneration`] that also takes images (see
//! [`super::llava_images`]). The head is tied by the outer
//! `tie_word_embeddings` (default true) where the checkpoint holds none.

use std::collections::BTreeMap;

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::CausalLm;
use super::gemma3_multimodal::{inherit_outer_flags, with_language_model};
use super::{Ministral3ForCausalLM, MinistralForCausalLM, MistralForCausalLM};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// transformers' `Mistral3ForConditionalGeneration` (`model_type` `mistral3`) for text: its
/// language model. Image inputs are refused (as inputs the decoder does not take).
#[derive(Debug, Clone)]
pub struct Mistral3ForConditionalGeneration(pub CausalLm);

impl Mistral3ForConditionalGeneration {
    /// Loads the language model of a `mistral3` checkpoint (see the module docs).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let text = text_config(cfg)?;
        let lm = with_language_model(weights, |w| match text.model_type()? {
            "mistral" => Ok(MistralForCausalLM::load(&text, w)?.0),
            "ministral3" => Ok(Ministral3ForCausalLM::load(&text, w)?.0),
            "ministral" => Ok(MinistralForCausalLM::load(&text, w)?.0),
            other => Err(Error::Unsupported(format!(
                "Mistral3ForConditionalGeneration with a text model of model_type \"{other}\" (supported: \
                 mistral, ministral3, ministral)"
            ))),
        })?;
        Ok(Mistral3ForConditionalGeneration(lm))
    }
}

impl std::ops::Deref for Mistral3ForConditionalGeneration {
    type Target = CausalLm;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Inputs that carry images (`Mistral3ForConditionalGeneration.forward` and its processor's).
const IMAGE_INPUTS: &[&str] = &["pixel_values", "image_sizes"];

/// Refuses image inputs with an error that says so (`architecture`: the multimodal class whose
/// language model runs: Mistral 3's, Llama 4's).
pub(crate) fn check_text_only(inputs: &BTreeMap<String, Tensor>, architecture: &str) -> Result<()> {
    match inputs.keys().find(|k| IMAGE_INPUTS.contains(&k.as_str())) {
        Some(name) => Err(Error::Unsupported(format!(
            "input '{name}': image inputs are not supported for {architecture} (hf-import runs its language \
             model on text only)"
        ))),
        None => Ok(()),
    }
}

/// The text model's config of a `mistral3` config, as `Mistral3Config` builds its `text_config`:
/// the nested object under its own `model_type` (default `mistral`; absent or null: Mistral Small
/// 3.1's text model, `Mistral3Config`'s default), with the outer `tie_word_embeddings` (default
/// true) and the outer dtype where the nested config names none.
fn text_config(cfg: &Config) -> Result<Config> {
    let mut text = match cfg.get("text_config") {
        None => match serde_json::json!({
            "head_dim": 128,
            "hidden_act": "silu",
            "hidden_size": 5120,
            "intermediate_size": 32768,
            "max_position_embeddings": 131072,
            "num_attention_heads": 32,
            "num_hidden_layers": 40,
            "num_key_value_heads": 8,
            "rms_norm_eps": 1e-05,
            "rope_theta": 1_000_000_000.0,
            "sliding_window": null,
            "vocab_size": 131072,
        }) {
            Value::Object(m) => m,
            _ => unreachable!("an object"),
        },
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    text.entry("model_type").or_insert_with(|| Value::from("mistral"));
    inherit_outer_flags(&mut text, cfg, true)?;
    Ok(Config::from_map(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_config_is_mistral_by_default_and_takes_the_outer_flags() {
        let cfg = Config::from_json_str(r#"{"model_type": "mistral3", "torch_dtype": "bfloat16"}"#).unwrap();
        let text = text_config(&cfg).unwrap();
        assert_eq!(text.model_type().unwrap(), "mistral");
        assert_eq!(text.usize("intermediate_size").unwrap(), 32768);
        assert!(text.bool_or("tie_word_embeddings", false).unwrap());
        assert_eq!(text.get("torch_dtype"), Some(&Value::from("bfloat16")));
        let nested = r#"{"model_type": "mistral3", "tie_word_embeddings": false,
            "text_config": {"model_type": "ministral3", "tie_word_embeddings": true}}"#;
        let text = text_config(&Config::from_json_str(nested).unwrap()).unwrap();
        assert_eq!(text.model_type().unwrap(), "ministral3");
        assert!(!text.bool_or("tie_word_embeddings", true).unwrap());
        let bad = Config::from_json_str(r#"{"model_type": "mistral3", "text_config": 3}"#).unwrap();
        assert!(text_config(&bad).is_err());
    }
}

//! Llama 3.2 Vision (`MllamaForConditionalGeneration`, model type `mllama`): its language model,
//! and its images where the checkpoint has the vision tower (see [`super::mllama_images`]).
//!
//! Its language model is Llama's decoder with cross-attention layers among the self-attention
//! ones (`text_config.cross_attention_layers`, every fifth from the fourth by default), which
//! attend to the image features; transformers skips them when there is no image, so on text it is
//! the Llama decoder of the other layers, numbered in order — hf-import loads it so, the
//! cross-attention layers beside it (read only with the vision tower, run only with images,
//! each before the self-attention layer it precedes), the hidden states one per run layer as
//! transformers records them. The embedding table holds 8 rows past the vocabulary (the image
//! token's and spares): the decoder's table is cut to the vocabulary, the image token's row kept
//! by the image path; the head is never tied.

use serde_json::{Map, Value};

use super::decoder::CausalLm;
use super::gemma3_multimodal::{inherit_outer_dtype, language_model_weights};
use super::mllama_images::MllamaImages;
use super::vision_language::{Media, VisionLanguageForConditionalGeneration};
use super::LlamaForCausalLM;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, CrossAttentionDims, CrossAttentionLayer};
use crate::weights::Weights;

/// The class's name.
pub(crate) const ARCH: &str = "MllamaForConditionalGeneration";

/// `MllamaTextConfig`'s defaults for the sizes the decoder requires.
const TEXT_SIZES: &[(&str, u64)] = &[
    ("vocab_size", 128_256),
    ("hidden_size", 4096),
    ("intermediate_size", 14_336),
    ("num_hidden_layers", 40),
    ("num_attention_heads", 32),
    ("num_key_value_heads", 8),
    ("max_position_embeddings", 131_072),
];

/// `MllamaTextConfig`'s cross-attention layers.
const CROSS_ATTENTION_LAYERS: [u64; 8] = [3, 8, 13, 18, 23, 28, 33, 38];

/// Loads an `mllama` checkpoint: its language model, and with the vision tower its
/// cross-attention layers and image path (see the module docs).
pub(crate) fn load(cfg: &Config, weights: &Weights) -> Result<VisionLanguageForConditionalGeneration> {
    let (text, cross) = text_config(cfg)?;
    let vocab = text.usize("vocab_size")?;
    let lm_weights = language_model_weights(weights.clone());
    let lm = LlamaForCausalLM::load(&text, &self_attention_layers(&lm_weights, &cross, vocab)?)?.0;
    let images = match lm_weights.get("model.embed_tokens.weight")? {
        Some(table) if table.rank() == 2 => MllamaImages::load(cfg, weights, &table, vocab)?,
        _ => None,
    };
    let Some(images) = images else {
        return Ok(VisionLanguageForConditionalGeneration::from_language_model(lm, ARCH, None));
    };
    let lm = with_cross_attention_layers(lm, &text, &lm_weights, &cross)?;
    Ok(VisionLanguageForConditionalGeneration::from_language_model(lm, ARCH, Some(Media::Mllama(images))))
}

/// `lm` (the self-attention layers) with the cross-attention layers `cross` of `weights` (the
/// language model's, as `model.*`), each before the self-attention layer that follows it.
fn with_cross_attention_layers(
    lm: CausalLm,
    text: &Config,
    weights: &Weights,
    cross: &[usize],
) -> Result<CausalLm> {
    let dims = CrossAttentionDims {
        hidden: text.usize("hidden_size")?,
        heads: text.usize("num_attention_heads")?,
        kv_heads: text.usize("num_key_value_heads")?,
        intermediate: text.usize("intermediate_size")?,
        eps: text.f64_or("rms_norm_eps", 1e-5)?,
        act: Activation::from_name(text.str_or("hidden_act", "silu")?)?,
    };
    let layers = cross
        .iter()
        .enumerate()
        .map(|(n, &c)| {
            Ok((c - n, CrossAttentionLayer::load(&weights.vars(&format!("model.layers.{c}")), &dims)?))
        })
        .collect::<Result<Vec<_>>>()?;
    lm.with_cross_attention_layers(layers)
}

/// The Llama config of the self-attention layers and the cross-attention layers' indices.
fn text_config(cfg: &Config) -> Result<(Config, Vec<usize>)> {
    let mut text = match cfg.get("text_config") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    for (key, default) in TEXT_SIZES {
        text.entry(*key).or_insert_with(|| Value::from(*default));
    }
    text.entry("rms_norm_eps").or_insert_with(|| Value::from(1e-5));
    let has_theta = text.contains_key("rope_theta")
        || ["rope_parameters", "rope_scaling"]
            .iter()
            .any(|k| text.get(*k).and_then(|r| r.get("rope_theta")).is_some());
    if !has_theta {
        text.insert("rope_theta".into(), Value::from(500_000.0));
    }
    let layers = Config::from_map(text.clone()).layers("num_hidden_layers")?;
    let cross: Vec<usize> = match text.remove("cross_attention_layers") {
        None | Some(Value::Null) => CROSS_ATTENTION_LAYERS.iter().map(|&i| i as usize).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_u64().map(|i| i as usize).ok_or_else(|| {
                    Error::Config(format!("\"cross_attention_layers\" must list layer indices, got {v}"))
                })
            })
            .collect::<Result<_>>()?,
        Some(v) => {
            return Err(Error::Config(format!("\"cross_attention_layers\" must list layer indices, got {v}")))
        }
    };
    let mut cross: Vec<usize> = cross.into_iter().filter(|&i| i < layers).collect();
    cross.sort_unstable();
    cross.dedup();
    text.insert("num_hidden_layers".into(), Value::from(layers - cross.len()));
    // (Its attention and MLP have no biases, whatever a config says.)
    for key in ["attention_bias", "mlp_bias"] {
        text.remove(key);
    }
    text.insert("model_type".into(), Value::from("llama"));
    text.insert("tie_word_embeddings".into(), Value::Bool(false));
    inherit_outer_dtype(&mut text, cfg);
    Ok((Config::from_map(text), cross))
}

/// `weights` (the language model's, as `model.*`) with the cross-attention layers left out, the
/// others numbered in order, and the embedding table cut to the vocabulary.
fn self_attention_layers(weights: &Weights, cross: &[usize], vocab: usize) -> Result<Weights> {
    let renamed = weights.renamed(|name| {
        let Some(rest) = name.strip_prefix("model.layers.") else { return Some(name.to_string()) };
        let (index, tail) = rest.split_once('.')?;
        let i: usize = index.parse().ok()?;
        if cross.binary_search(&i).is_ok() {
            return None;
        }
        let before = cross.iter().filter(|&&c| c < i).count();
        Some(format!("model.layers.{}.{tail}", i - before))
    });
    renamed.replaced(|name, t| {
        match name == "model.embed_tokens.weight" && t.rank() == 2 && t.dims()[0] > vocab {
            true => Ok(Some(t.narrow(0, 0, vocab)?.contiguous()?)),
            false => Ok(None),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_self_attention_layers_make_a_llama() {
        let cfg = Config::from_json_str(
            r#"{"model_type": "mllama", "torch_dtype": "bfloat16",
                "text_config": {"num_hidden_layers": 5, "cross_attention_layers": [3, 1, 9], "mlp_bias": true}}"#,
        )
        .unwrap();
        let (text, cross) = text_config(&cfg).unwrap();
        assert_eq!(cross, vec![1, 3]);
        assert_eq!(text.usize("num_hidden_layers").unwrap(), 3);
        assert_eq!(text.model_type().unwrap(), "llama");
        assert_eq!(text.get("torch_dtype"), Some(&Value::from("bfloat16")));
        assert_eq!(text.get("rope_theta"), Some(&Value::from(500_000.0)));
        assert!(text.get("mlp_bias").is_none());
        let (defaults, cross) =
            text_config(&Config::from_json_str(r#"{"model_type": "mllama"}"#).unwrap()).unwrap();
        assert_eq!(cross.len(), 8);
        assert_eq!(defaults.usize("num_hidden_layers").unwrap(), 32);
        let bad = r#"{"model_type": "mllama", "text_config": {"cross_attention_layers": ["x"]}}"#;
        assert!(text_config(&Config::from_json_str(bad).unwrap()).is_err());
    }
}

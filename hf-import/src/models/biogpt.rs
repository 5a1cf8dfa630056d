//! BioGPT (`BioGptForCausalLM`, `BioGptModel`, `BioGptForSequenceClassification`:
//! microsoft/biogpt and BioGPT-Large): pre-norm blocks with layer norms (epsilon 1e-5 whatever
//! `layer_norm_eps` says, as transformers builds them), biases everywhere, a plain GELU MLP
//! (`fc1`, `fc2`), embeddings scaled by `sqrt(hidden_size)` (`scale_embedding`), learned positions
//! offset by 2 (counted by column, as transformers' forward passes them), the head
//! (`output_projection`) tied to the embeddings.
//!
//! The checkpoint's `biogpt.*` names (`self_attn.out_proj`, `self_attn_layer_norm`,
//! `final_layer_norm`, `fc1`, `fc2`, `layer_norm`) are read as the decoder's.

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `BioGptForCausalLM`.
#[derive(Debug, Clone)]
pub struct BioGptForCausalLM(pub CausalLm);

impl std::ops::Deref for BioGptForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl BioGptForCausalLM {
    /// Loads the model from a BioGPT config and checkpoint (names with `biogpt.`, or without for a
    /// base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(BioGptForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights), spec(&cfg)?)?))
    }
}

/// `BioGptConfig` as the decoder reads it (its defaults are microsoft/biogpt's sizes).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let hidden = cfg.usize_or("hidden_size", 1024)?;
    let heads = cfg.usize_or("num_attention_heads", 16)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "embed_dim must be divisible by num_heads (got `embed_dim`: {hidden} and `num_heads`: {heads})."
        )));
    }
    let layers = if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 24 };
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", hidden.into()),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", cfg.usize_or("intermediate_size", 4096)?.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 42_384)?.into()),
        ("max_position_embeddings", cfg.usize_or("max_position_embeddings", 1024)?.into()),
        ("hidden_act", cfg.str_or("hidden_act", "gelu")?.into()),
        // (The layer norms are `nn.LayerNorm(embed_dim)`: `layer_norm_eps` is not read.)
        ("rms_norm_eps", 1e-5.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (true, true, true);
    spec.layer_norm = true;
    spec.learned_positions = true;
    spec.position_offset = 2;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    if cfg.bool_or("scale_embedding", true)? {
        spec.embedding_multiplier = Some((cfg.usize("hidden_size")? as f64).sqrt());
    }
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names; `output_projection` is the LM head.
fn decoder_weights(weights: &Weights) -> Weights {
    weights.renamed(|name| {
        if let Some(rest) = name.strip_prefix("output_projection.") {
            return Some(format!("lm_head.{rest}"));
        }
        // (A base model's names have no `biogpt.`: they stay without `model.`.)
        let (prefix, rest) = match name.strip_prefix("biogpt.") {
            Some(rest) => ("model.", rest),
            None if name.starts_with("lm_head.") || name.starts_with("score.") => {
                return Some(name.to_string())
            }
            None => ("", name),
        };
        let renamed = match rest.strip_prefix("layers.") {
            Some(layer) => format!(
                "layers.{}",
                layer
                    .replace(".self_attn.out_proj.", ".self_attn.o_proj.")
                    .replace(".self_attn_layer_norm.", ".input_layernorm.")
                    .replace(".final_layer_norm.", ".post_attention_layernorm.")
                    .replace(".fc1.", ".mlp.up_proj.")
                    .replace(".fc2.", ".mlp.down_proj.")
            ),
            None => rest.replace("layer_norm.", "norm."),
        };
        Some(format!("{prefix}{renamed}"))
    })
}

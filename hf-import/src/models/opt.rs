//! OPT (`OPTForCausalLM`, `OPTModel`, `OPTForSequenceClassification`: facebook/opt-125m to 66b,
//! Galactica): pre-norm blocks with layer norms, biases everywhere (`enable_bias`), a plain ReLU MLP
//! (`fc1`, `fc2`), learned positions offset by 2 and, without `position_ids`, counted over each
//! row's kept tokens (`cumsum(mask) * mask - 1`: a left-padded row starts at 0), the LM head tied to
//! the embeddings.
//!
//! opt-350m's blocks norm after each residual add (`do_layer_norm_before: false`, and no final
//! norm then, nor with `_remove_final_layer_norm`), and its embeddings are narrower than the hidden
//! size (`word_embed_proj_dim`: `project_in` after the embeddings, `project_out` before the head).
//!
//! The checkpoint's `model.decoder.*` names (`self_attn.out_proj`, `self_attn_layer_norm`,
//! `final_layer_norm`, `fc1`, `fc2`) are read as the decoder's.

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `OPTForCausalLM`.
#[derive(Debug, Clone)]
pub struct OPTForCausalLM(pub CausalLm);

impl std::ops::Deref for OPTForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl OPTForCausalLM {
    /// Loads the model from an OPT config and checkpoint (names with `model.decoder.`, or
    /// `decoder.` for a base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(OPTForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights), spec(&cfg)?)?))
    }
}

/// `OPTConfig` as the decoder reads it (its defaults are opt-125m's sizes).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let hidden = cfg.usize_or("hidden_size", 768)?;
    let heads = cfg.usize_or("num_attention_heads", 12)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "embed_dim must be divisible by num_heads (got `embed_dim`: {hidden} and `num_heads`: {heads})."
        )));
    }
    let mut json = cfg.json().clone();
    let layers = if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 12 };
    for (key, value) in [
        ("hidden_size", hidden.into()),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", cfg.usize_or("ffn_dim", 3072)?.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 50_272)?.into()),
        ("max_position_embeddings", cfg.usize_or("max_position_embeddings", 2048)?.into()),
        ("hidden_act", cfg.str_or("activation_function", "relu")?.into()),
        // (`nn.LayerNorm`'s default: OPT's config has no epsilon.)
        ("rms_norm_eps", 1e-5.into()),
        // (`OPTConfig`: `word_embed_proj_dim` defaults, and a null one falls back, to the hidden size.)
        ("word_embed_proj_dim", cfg.nullable_usize_or("word_embed_proj_dim", None)?.unwrap_or(hidden).into()),
    ] {
        json.insert(key.to_string(), value);
    }
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let bias = cfg.bool_or("enable_bias", true)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (bias, bias, bias);
    spec.layer_norm = true;
    spec.parameterless_norms = !cfg.bool_or("layer_norm_elementwise_affine", true)?;
    spec.learned_positions = true;
    spec.position_offset = 2;
    spec.positions_from_mask = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    let pre_norm = cfg.bool_or("do_layer_norm_before", true)?;
    spec.post_norm = !pre_norm;
    spec.final_norm = pre_norm && !cfg.bool_or("_remove_final_layer_norm", false)?;
    spec.embed_width = Some(cfg.usize("word_embed_proj_dim")?);
    Ok(spec)
}

/// The checkpoint under the decoder's names.
fn decoder_weights(weights: &Weights) -> Weights {
    weights.renamed(|name| {
        // (A base model's `decoder.*` stays without the `model.` prefix, as the decoder expects
        // a base model's names.)
        let (prefix, rest) = match (name.strip_prefix("model.decoder."), name.strip_prefix("decoder.")) {
            (Some(rest), _) => ("model.", rest),
            (None, Some(rest)) => ("", rest),
            _ => return Some(name.to_string()),
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
            // (`project_in` and `project_out` keep their names.)
            None => rest.replace("final_layer_norm.", "norm."),
        };
        Some(format!("{prefix}{renamed}"))
    })
}

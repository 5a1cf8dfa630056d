//! GPT-J (`GPTJForCausalLM`, `GPTJModel`, `GPTJForSequenceClassification`: EleutherAI/gpt-j-6b
//! and its fine-tunes): attention and the MLP in parallel on one layer norm (`ln_1`), RoPE over the
//! first `rotary_dim` dims of each head with interleaved pairs, no biases in attention, a plain
//! `gelu_new` MLP (`fc_in`, `fc_out`) with biases, an untied LM head with a bias.
//!
//! The checkpoint's GPT-2-style names (`transformer.wte`, `transformer.h.N`, `ln_f`) are read as the
//! decoder's, the block's one norm also as its MLP norm, and q and k reordered so that the
//! decoder's half-split rotation rotates the interleaved pairs ([`halves_from_interleaved`]).

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{halves_from_interleaved, Activation};
use crate::weights::Weights;

/// transformers' `GPTJForCausalLM`.
#[derive(Debug, Clone)]
pub struct GPTJForCausalLM(pub CausalLm);

impl std::ops::Deref for GPTJForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GPTJForCausalLM {
    /// Loads the model from a GPT-J config and checkpoint (names with `transformer.`, or without for
    /// a base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, rotary_dim) = decoder_config(cfg)?;
        let weights = decoder_weights(weights, &cfg, rotary_dim)?;
        Ok(GPTJForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// The value of `key`, else of its GPT-2-style alias, else `default`.
fn sized(cfg: &Config, key: &str, alias: &str, default: usize) -> Result<usize> {
    match (cfg.get(key), cfg.get(alias)) {
        (Some(v), _) if !v.is_null() => cfg.usize(key),
        (_, Some(v)) if !v.is_null() => cfg.usize(alias),
        _ => Ok(default),
    }
}

/// `GPTJConfig` as the decoder reads it (its defaults are gpt-j-6b's), and the rotated dims per head.
fn decoder_config(cfg: &Config) -> Result<(Config, usize)> {
    let hidden = sized(cfg, "n_embd", "hidden_size", 4096)?;
    let heads = sized(cfg, "n_head", "num_attention_heads", 16)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "embed_dim must be divisible by num_attention_heads (got `embed_dim`: {hidden} and `num_attention_heads`: {heads})."
        )));
    }
    let head_dim = hidden / heads;
    let rotary_dim = match cfg.get("rotary_dim") {
        None => 64,
        Some(v) if v.is_null() => head_dim,
        Some(_) => cfg.usize("rotary_dim")?,
    };
    if !rotary_dim.is_multiple_of(2) || rotary_dim > head_dim {
        return Err(Error::Config(format!(
            "rotary_dim {rotary_dim} must be even and at most the head size {head_dim}"
        )));
    }
    let layers = match (cfg.get("n_layer"), cfg.get("num_hidden_layers")) {
        (Some(_), _) => cfg.layers("n_layer")?,
        (None, Some(_)) => cfg.layers("num_hidden_layers")?,
        (None, None) => 28,
    };
    let inner = match cfg.get("n_inner") {
        Some(v) if !v.is_null() => cfg.usize("n_inner")?,
        _ => 4 * hidden,
    };
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", hidden.into()),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", head_dim.into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", inner.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 50_400)?.into()),
        ("max_position_embeddings", sized(cfg, "n_positions", "max_position_embeddings", 2048)?.into()),
        ("hidden_act", cfg.str_or("activation_function", "gelu_new")?.into()),
        ("rms_norm_eps", cfg.f64_or("layer_norm_epsilon", 1e-5)?.into()),
        ("partial_rotary_factor", (rotary_dim as f64 / head_dim as f64).into()),
        ("tie_word_embeddings", cfg.bool_or("tie_word_embeddings", false)?.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok((Config::from_map(json), rotary_dim))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.token_types = true;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias, spec.lm_head_bias) = (false, false, true, true);
    spec.layer_norm = true;
    spec.parallel_residual = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", false)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names (see the module docs).
fn decoder_weights(weights: &Weights, cfg: &Config, rotary_dim: usize) -> Result<Weights> {
    let (heads, head_dim) = (cfg.usize("num_attention_heads")?, cfg.usize("head_dim")?);
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 64);
    for item in weights.iter() {
        let (name, t) = item?;
        // (A base model's names have no `transformer.`: they stay without `model.`.)
        let (prefix, rest) = match name.strip_prefix("transformer.") {
            Some(rest) => ("model.", rest),
            None if name.starts_with("lm_head.") || name.starts_with("score.") => {
                out.push((name.to_string(), t));
                continue;
            }
            None => ("", name.as_str()),
        };
        let renamed = match rest.strip_prefix("h.") {
            Some(layer) => format!(
                "layers.{}",
                layer
                    .replace(".ln_1.", ".input_layernorm.")
                    .replace(".attn.out_proj.", ".self_attn.o_proj.")
                    .replace(".attn.", ".self_attn.")
                    .replace(".mlp.fc_in.", ".mlp.up_proj.")
                    .replace(".mlp.fc_out.", ".mlp.down_proj.")
            ),
            None => rest.replace("wte.", "embed_tokens.").replace("ln_f.", "norm."),
        };
        let name = format!("{prefix}{renamed}");
        let t = if name.ends_with("self_attn.q_proj.weight") || name.ends_with("self_attn.k_proj.weight") {
            halves_from_interleaved(&t, heads, head_dim, rotary_dim)
                .map_err(|e| Error::Weight(format!("tensor '{name}': {e}")))?
        } else {
            t
        };
        if name.contains(".input_layernorm.") {
            out.push((name.replace(".input_layernorm.", ".post_attention_layernorm."), t.clone()));
        }
        out.push((name, t));
    }
    Ok(Weights::from_tensors(out))
}

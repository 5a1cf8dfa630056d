//! The ModernBERT decoder (`ModernBertDecoderForCausalLM`, model type `modernbert-decoder`: the
//! Ettin decoders): ModernBERT's layers run causally. Normed token embeddings (no positions);
//! layer norms (bias-free unless `norm_bias`), the first layer without its input norm; separate
//! q/k/v projections and `Wo`; RoPE with a base per layer type (`global_rope_theta` /
//! `local_rope_theta` in 4.x configs); every `global_attn_every_n_layers`-th layer (from the first)
//! global, the others within a causal window of `local_attention / 2` keys; a GLU MLP
//! (`act(input) · gate` from the fused `Wi`); a final norm; a prediction head (`dense`, the
//! `classifier_activation`, a norm) before the decoder, tied to the embeddings, with its bias
//! (`decoder_bias`).

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `ModernBertDecoderForCausalLM` (and `ModernBertDecoderModel`).
    ModernBertDecoderForCausalLM
);

impl ModernBertDecoderForCausalLM {
    /// Loads the model from a parsed config and its weights.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(ModernBertDecoderForCausalLM(CausalLm::load(&cfg, &renamed(weights)?, spec(&cfg)?)?))
    }
}

/// The config under the keys the decoder reads (`ModernBertDecoderConfig`'s defaults; its sizes
/// come from `class_defaults`).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize("num_attention_heads")?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "The hidden size ({hidden}) is not a multiple of the number of attention heads ({heads})"
        )));
    }
    let layers = cfg.layers("num_hidden_layers")?;
    let layer_types: Vec<String> = match cfg.layer_types() {
        Some(types) if types.len() == layers => types,
        Some(types) => {
            return Err(Error::Config(format!(
                "\"layer_types\" has {} entries for {layers} layers",
                types.len()
            )))
        }
        None => {
            let every = cfg.usize_or("global_attn_every_n_layers", 3)?;
            if every == 0 {
                return Err(Error::Config("global_attn_every_n_layers must be positive".into()));
            }
            let kind =
                |i: usize| if i.is_multiple_of(every) { "full_attention" } else { "sliding_attention" };
            (0..layers).map(|i| kind(i).to_string()).collect()
        }
    };
    let window = match cfg.nullable_usize_or("local_attention", Some(128))? {
        Some(span) if span >= 2 => Some(span / 2),
        _ => None,
    };
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", hidden.into()),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("rms_norm_eps", cfg.f64_or("norm_eps", 1e-5)?.into()),
        ("hidden_act", cfg.str_or("hidden_activation", "gelu")?.into()),
        ("layer_types", layer_types.into()),
        ("sliding_window", window.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let attention_bias = cfg.bool_or("attention_bias", false)?;
    (spec.qkv_bias, spec.o_bias) = (attention_bias, attention_bias);
    spec.layer_norm = true;
    spec.embed_norm = true;
    spec.first_input_norm_identity = true;
    spec.head_transform = Some(Activation::from_name(cfg.str_or("classifier_activation", "gelu")?)?);
    spec.lm_head_bias = cfg.bool_or("decoder_bias", true)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    let sliding = DecoderSpec::sliding_layers(cfg)?.unwrap_or_default();
    spec.windows = DecoderSpec::sliding_windows(&sliding, cfg.nullable_usize_or("sliding_window", None)?)?;
    spec.local_rope = sliding;
    Ok(spec)
}

/// A `ModernBertDecoderForSequenceClassification` checkpoint as the decoder classifiers read theirs:
/// its prediction head `head` (which runs before the classifier) as the decoder's
/// `head_transform`, the `classifier` as `score`.
pub(crate) fn classifier_weights(weights: &Weights) -> Weights {
    weights.renamed(|name| {
        Some(match (name.strip_prefix("head."), name.strip_prefix("classifier.")) {
            (Some(rest), _) => format!("model.lm_head.{rest}"),
            (_, Some(rest)) => format!("score.{rest}"),
            _ => name.to_string(),
        })
    })
}

/// The checkpoint under the decoder's names: `embeddings.tok_embeddings` / `.norm` as
/// `embed_tokens` / `embed_norm`, each layer's `attn_norm`, `attn.{q,k,v}_proj`, `attn.Wo`,
/// `mlp_norm`, `mlp.Wi`, `mlp.Wo` as Llama's, `final_norm` as `norm`, the prediction head
/// `lm_head.{dense,norm}` as `head_transform`, the `decoder` as `lm_head`.
fn renamed(weights: &Weights) -> Result<Weights> {
    let mut out = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        let renamed = if let Some(rest) = name.strip_prefix("lm_head.") {
            format!("head_transform.{rest}")
        } else if let Some(rest) = name.strip_prefix("decoder.") {
            format!("lm_head.{rest}")
        } else {
            name.replace("embeddings.tok_embeddings.", "embed_tokens.")
                .replace("embeddings.norm.", "embed_norm.")
                .replace(".attn_norm.", ".input_layernorm.")
                .replace(".attn.Wo.", ".self_attn.o_proj.")
                .replace(".attn.", ".self_attn.")
                .replace(".mlp_norm.", ".post_attention_layernorm.")
                .replace(".mlp.Wi.", ".mlp.gate_up_proj.")
                .replace(".mlp.Wo.", ".mlp.down_proj.")
                .replace("final_norm.", "norm.")
        };
        out.push((renamed, t));
    }
    Ok(Weights::from_tensors(out))
}

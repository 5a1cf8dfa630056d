//! GPT-Neo (`GPTNeoForCausalLM`, `GPTNeoModel`, `GPTNeoForSequenceClassification`:
//! EleutherAI/gpt-neo-125m to 2.7B, the TinyStories models): GPT-2's pre-norm block with layer
//! norms and learned positions, but separate `q_proj`, `k_proj`, `v_proj` without biases, scores
//! **not** scaled by `head_dim^-0.5`, and layers alternating between global attention and local
//! attention over the last `window_size` tokens, as `attention_types` lists them
//! (`[[["global", "local"], 12]]`: the pair repeated twelve times).
//!
//! The checkpoint's names (`transformer.wte`, `transformer.h.N.attn.attention.q_proj`, `ln_f`, ...)
//! are read as the decoder's; the old causal-mask buffers (`attn.attention.bias`,
//! `attn.attention.masked_bias`) are left out.

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `GPTNeoForCausalLM` (the LM head tied to `wte` unless the config unties it).
#[derive(Debug, Clone)]
pub struct GPTNeoForCausalLM(pub CausalLm);

impl std::ops::Deref for GPTNeoForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GPTNeoForCausalLM {
    /// Loads the model from a GPT-Neo config and checkpoint (names with `transformer.`, or without
    /// for a base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, local) = decoder_config(cfg)?;
        Ok(GPTNeoForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights), spec(&cfg, &local)?)?))
    }
}

/// Each layer's attention type from `attention_types` (`[[types, repeat], ...]`, each entry's
/// types repeated `repeat` times; `GPTNeoConfig`'s default is `[[["global", "local"], 12]]`):
/// `true` for a local layer. Its length must be the number of layers, as the config class checks.
fn local_layers(cfg: &Config, layers: usize) -> Result<Vec<bool>> {
    let default = serde_json::json!([[["global", "local"], 12]]);
    let types = match cfg.get("attention_types") {
        Some(v) if !v.is_null() => v,
        _ => &default,
    };
    let bad = || {
        Error::Config(format!(
            "attention_types must be a list of [[\"global\" | \"local\", ...], repeat] pairs, got {types}"
        ))
    };
    let mut local = Vec::new();
    for item in types.as_array().ok_or_else(bad)? {
        let [kinds, repeat] = item.as_array().map(Vec::as_slice).ok_or_else(bad)? else {
            return Err(bad());
        };
        let repeat = repeat.as_u64().ok_or_else(bad)?;
        let kinds: Vec<bool> = kinds
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|k| match k.as_str() {
                Some("global") => Ok(false),
                Some("local") => Ok(true),
                _ => Err(Error::Config(format!(
                    "Only attn layer types 'global' and 'local' exist, but got {k} in attention_types"
                ))),
            })
            .collect::<Result<_>>()?;
        for _ in 0..repeat {
            if local.len() > layers {
                break;
            }
            local.extend(&kinds);
        }
    }
    if local.len() != layers {
        return Err(Error::Config(format!(
            "It is required that `len(config.attention_layers)` == `config.num_layers` but is \
             `len(config.attention_layers) = {}`, `config.num_layers = {layers}` \
             (`config.attention_layers` is prepared using `config.attention_types`: {types})",
            local.len()
        )));
    }
    Ok(local)
}

/// `GPTNeoConfig` under the decoder's key names (its defaults are gpt-neo-1.3B's), and which
/// layers are local.
fn decoder_config(cfg: &Config) -> Result<(Config, Vec<bool>)> {
    let hidden = cfg.usize_or("hidden_size", 2048)?;
    let heads = cfg.usize_aliased("num_heads", "num_attention_heads", 16)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "embed_dim must be divisible by num_heads (got `embed_dim`: {hidden} and `num_heads`: {heads})."
        )));
    }
    let layers = match (cfg.get("num_layers"), cfg.get("num_hidden_layers")) {
        (Some(_), _) => cfg.layers("num_layers")?,
        (None, Some(_)) => cfg.layers("num_hidden_layers")?,
        (None, None) => 24,
    };
    let inner = match cfg.nullable_usize_or("intermediate_size", None)? {
        Some(n) => n,
        None => hidden
            .checked_mul(4)
            .ok_or_else(|| Error::Config(format!("hidden_size {hidden} is too large")))?,
    };
    let window = cfg.usize_or("window_size", 256)?;
    if window == 0 {
        return Err(Error::Config("window_size must be positive, got 0".into()));
    }
    let local = local_layers(cfg, layers)?;
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", Value::from(hidden)),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", inner.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 50_257)?.into()),
        ("max_position_embeddings", cfg.usize_or("max_position_embeddings", 2048)?.into()),
        ("hidden_act", cfg.str_or("activation_function", "gelu_new")?.into()),
        ("rms_norm_eps", cfg.f64_or("layer_norm_epsilon", 1e-5)?.into()),
        ("sliding_window", window.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok((Config::from_map(json), local))
}

/// GPT-Neo's structure as a [`DecoderSpec`]: biases on the output projection and the MLP only,
/// layer norms, learned positions, the ungated MLP, unscaled scores, the local layers' windows.
fn spec(cfg: &Config, local: &[bool]) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.token_types = true;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, true, true);
    spec.layer_norm = true;
    spec.learned_positions = true;
    spec.plain_mlp = true;
    spec.attention_scale = Some(1.0);
    spec.window_mask_added = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.windows = DecoderSpec::sliding_windows(local, Some(cfg.usize("sliding_window")?))?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names (see the module docs); names outside the model's
/// (`lm_head.*`, `score.*`) kept as they are.
fn decoder_weights(weights: &Weights) -> Weights {
    weights.renamed(|name| {
        // (A base model's names have no `transformer.`: they stay without `model.`.)
        let (prefix, rest) = match name.strip_prefix("transformer.") {
            Some(rest) => ("model.", rest),
            None if name.starts_with("lm_head.") || name.starts_with("score.") => {
                return Some(name.to_string())
            }
            None => ("", name),
        };
        let renamed = match rest.strip_prefix("h.") {
            Some(layer) => {
                if layer.ends_with(".attn.attention.bias") || layer.ends_with(".attn.attention.masked_bias") {
                    return None;
                }
                format!(
                    "layers.{}",
                    layer
                        .replace(".ln_1.", ".input_layernorm.")
                        .replace(".ln_2.", ".post_attention_layernorm.")
                        .replace(".attn.attention.out_proj.", ".self_attn.o_proj.")
                        .replace(".attn.attention.", ".self_attn.")
                        .replace(".mlp.c_fc.", ".mlp.up_proj.")
                        .replace(".mlp.c_proj.", ".mlp.down_proj.")
                )
            }
            None => rest
                .replace("wte.", "embed_tokens.")
                .replace("wpe.", "embed_positions.")
                .replace("ln_f.", "norm."),
        };
        Some(format!("{prefix}{renamed}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> Result<(Config, Vec<bool>)> {
        decoder_config(&Config::from_json_str(json)?)
    }

    /// `attention_types` expands to one type per layer; the default alternates global and local
    /// over 24 layers; a list of the wrong length or with another type is refused.
    #[test]
    fn attention_types_expand_per_layer() {
        let (c, local) = config(r#"{"model_type": "gpt_neo"}"#).unwrap();
        assert_eq!(c.usize("num_hidden_layers").unwrap(), 24);
        assert_eq!(local.len(), 24);
        assert!(!local[0] && local[1] && !local[22] && local[23]);
        let (_, local) = config(
            r#"{"num_layers": 3, "attention_types": [[["local"], 1], [["global", "local"], 1]], "hidden_size": 8, "num_heads": 2}"#,
        )
        .unwrap();
        assert_eq!(local, vec![true, false, true]);
        let err = config(r#"{"num_layers": 3, "attention_types": [[["global", "local"], 1]]}"#).unwrap_err();
        assert!(err.to_string().contains("`config.num_layers = 3`"), "{err}");
        let err = config(r#"{"num_layers": 2, "attention_types": [[["global", "sparse"], 1]]}"#).unwrap_err();
        assert!(err.to_string().contains("'global' and 'local'"), "{err}");
        let err = config(r#"{"num_layers": 2, "attention_types": [["global", 2]]}"#).unwrap_err();
        assert!(err.to_string().contains("attention_types must be"), "{err}");
    }

    /// The config's aliases and defaults become the decoder's keys.
    #[test]
    fn config_keys_and_defaults() {
        let (c, _) = config(
            r#"{"num_layers": 2, "num_heads": 4, "hidden_size": 32, "attention_types": [[["global", "local"], 1]], "window_size": 3}"#,
        )
        .unwrap();
        assert_eq!(c.usize("num_attention_heads").unwrap(), 4);
        assert_eq!(c.usize("head_dim").unwrap(), 8);
        assert_eq!(c.usize("intermediate_size").unwrap(), 128);
        assert_eq!(c.usize("sliding_window").unwrap(), 3);
        assert_eq!(c.str("hidden_act").unwrap(), "gelu_new");
        let (c, _) = config(
            r#"{"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 32, "intermediate_size": 50, "attention_types": [[["global"], 2]]}"#,
        )
        .unwrap();
        assert_eq!((c.usize("num_attention_heads").unwrap(), c.usize("intermediate_size").unwrap()), (4, 50));
        let err = config(r#"{"hidden_size": 10, "num_heads": 4}"#).unwrap_err();
        assert!(err.to_string().contains("embed_dim must be divisible by num_heads"), "{err}");
    }
}

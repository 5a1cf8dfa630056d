//! Ministral 3 (`Ministral3ForCausalLM`, model type `ministral3`: the language model of
//! mistralai/Ministral-3-3B/8B/14B): Mistral's decoder (no biases, one window on every layer when
//! `sliding_window` is set) whose queries, once rotated, are multiplied by Llama 4's
//! `1 + llama_4_scaling_beta·ln(1 + floor(position / original_max_position_embeddings))`, both
//! read from the rope parameters. `Ministral3Config`'s defaults: 8 key/value heads of 128, epsilon
//! 1e-5 and, where the config names no rope parameters, YaRN (factor 16 over 16384 positions, base
//! 1000000, beta 0.1).

use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec, QueryScale};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Ministral3ForCausalLM`.
    Ministral3ForCausalLM
);

impl Ministral3ForCausalLM {
    /// Loads the model from a Ministral 3 config (the class's RoPE where it names none) and
    /// checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg);
        Ok(Ministral3ForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg)?)?))
    }
}

/// The config with `Ministral3Config`'s RoPE where it names none.
pub(super) fn decoder_config(cfg: &Config) -> Config {
    cfg.with_class_rope(json!({
        "rope_type": "yarn",
        "rope_theta": 1_000_000.0,
        "factor": 16.0,
        "original_max_position_embeddings": 16384,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale_all_dim": 1.0,
        "mscale": 1.0,
        "llama_4_scaling_beta": 0.1,
    }))
}

/// The per-position query scale `family` reads from its rope parameters'
/// `llama_4_scaling_beta` and `original_max_position_embeddings` (Ministral 3, Mistral 4).
pub(super) fn query_scale(cfg: &Config, family: &str) -> Result<QueryScale> {
    let number = |key: &str| -> Result<f64> {
        match cfg.rope_entry(key) {
            Some(v) => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                Error::Config(format!("the rope parameters' \"{key}\" must be a finite number, got {v}"))
            }),
            None => Err(Error::Config(format!(
                "{family} scales its queries by the rope parameters' \"{key}\", which are missing it"
            ))),
        }
    };
    let original_max = number("original_max_position_embeddings")?;
    if original_max <= 0.0 {
        return Err(Error::Config(format!(
            "the rope parameters' \"original_max_position_embeddings\" must be positive, got {original_max}"
        )));
    }
    Ok(QueryScale { beta: number("llama_4_scaling_beta")?, original_max, temperature: false })
}

/// Mistral's decoder with the query scale (see the module docs).
pub(super) fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.default_kv_heads = Some(8);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-5;
    let window = cfg.nullable_usize_or("sliding_window", None)?;
    spec.windows = vec![window; cfg.layers("num_hidden_layers")?];
    spec.query_scale = Some(query_scale(cfg, "Ministral 3")?);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn cfg(json: &str) -> Config {
        decoder_config(&Config::from_json_str(json).unwrap())
    }

    #[test]
    fn the_query_scale_comes_from_the_rope_parameters() {
        let default = spec(&cfg(r#"{"num_hidden_layers": 2}"#)).unwrap();
        assert_eq!(
            default.query_scale,
            Some(QueryScale { beta: 0.1, original_max: 16384.0, temperature: false })
        );
        assert_eq!(default.windows, vec![None, None]);
        let own = r#"{"num_hidden_layers": 1, "sliding_window": 4, "rope_parameters":
            {"rope_type": "default", "rope_theta": 10.0, "llama_4_scaling_beta": 0.5,
             "original_max_position_embeddings": 8}}"#;
        let own = spec(&cfg(own)).unwrap();
        assert_eq!(own.query_scale, Some(QueryScale { beta: 0.5, original_max: 8.0, temperature: false }));
        assert_eq!(own.windows, vec![Some(4)]);
        let missing = r#"{"num_hidden_layers": 1, "rope_parameters": {"rope_type": "default"}}"#;
        let err = spec(&cfg(missing)).unwrap_err().to_string();
        assert!(err.contains("llama_4_scaling_beta") || err.contains("original_max"), "{err}");
        assert_eq!(cfg(r#"{"rope_theta": 5.0}"#).get("rope_theta"), None::<&Value>);
    }
}

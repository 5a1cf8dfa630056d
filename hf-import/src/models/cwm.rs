//! Code World Model (`CwmForCausalLM`, model type `cwm`: facebook/cwm): Llama's blocks without
//! biases whose layers take turns of one full-attention layer then three with a sliding window
//! (`layer_types`, by default layer `i` full when `i % 4 == 0`; `sliding_window` 8192), under
//! `CwmConfig`'s defaults: 8 key/value heads of 128, epsilon 1e-5, RoPE base 1000000 and, when the
//! config names neither `rope_parameters` nor `rope_scaling`, llama3 scaling (factor 16 over 8192
//! positions; a top-level `rope_theta` is then ignored, as `CwmConfig` ignores it).

use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `CwmForCausalLM`.
    CwmForCausalLM
);

impl CwmForCausalLM {
    /// Loads the model from a CWM config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg);
        Ok(CwmForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg)?)?))
    }
}

/// The config with `CwmConfig`'s llama3 RoPE where it names no rope parameters.
fn decoder_config(cfg: &Config) -> Config {
    cfg.with_class_rope(json!({
        "rope_type": "llama3",
        "rope_theta": 1_000_000.0,
        "factor": 16.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
    }))
}

/// CWM's windows: `layer_types` as given, else every fourth layer (from the first) full.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias) = (false, false);
    spec.default_kv_heads = Some(8);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-5;
    // (`CwmConfig` turns a zero window into none.)
    let window = cfg.nullable_usize_or("sliding_window", Some(8192))?.filter(|&w| w > 0);
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..cfg.layers("num_hidden_layers")?).map(|i| i % 4 != 0).collect(),
    };
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    #[test]
    fn every_fourth_layer_is_full_unless_layer_types_say_otherwise() {
        let six = spec(&cfg(r#"{"num_hidden_layers": 6}"#)).unwrap();
        let w = Some(8192);
        assert_eq!(six.windows, vec![None, w, w, w, None, w]);
        let typed = r#"{"num_hidden_layers": 2, "sliding_window": 3,
            "layer_types": ["sliding_attention", "full_attention"]}"#;
        assert_eq!(spec(&cfg(typed)).unwrap().windows, vec![Some(3), None]);
        let zero = spec(&cfg(r#"{"num_hidden_layers": 2, "sliding_window": 0}"#)).unwrap_err();
        assert!(zero.to_string().contains("sets no sliding_window"), "{zero}");
    }

    #[test]
    fn llama3_rope_unless_the_config_names_its_own() {
        let plain = decoder_config(&cfg(r#"{"rope_theta": 5000.0}"#));
        assert!(plain.get("rope_theta").is_none());
        assert_eq!(
            plain.get("rope_parameters").and_then(|r| r.get("rope_type")),
            Some(&Value::from("llama3"))
        );
        let own = cfg(r#"{"rope_theta": 5000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}"#);
        assert_eq!(decoder_config(&own).get("rope_theta"), Some(&Value::from(5000.0)));
    }
}

//! Phi-3 (`Phi3ForCausalLM`): Llama with fused `qkv_proj` and `gate_up_proj`, optional partial
//! rotary embeddings and a sliding window on every layer when the config sets one.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    // Phi-3's fused projections have no biases; `Phi3Config.rms_norm_eps` is 1e-5.
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.default_rms_norm_eps = 1e-5;
    spec.windows = vec![cfg.opt_usize("sliding_window")?; cfg.layers("num_hidden_layers")?];
    // As transformers' `Phi3ForCausalLM.prepare_inputs_for_generation`: once the sequence reaches
    // the pretraining length + 1 (the config class defaults it to 4096), the cache is recomputed.
    let original = cfg.usize_or("original_max_position_embeddings", 4096)?;
    let at = original.checked_add(1).ok_or_else(|| {
        Error::Config(format!(
            "\"original_max_position_embeddings\" is {original}, more positions than a sequence can have"
        ))
    })?;
    spec.recompute_cache_at = Some(at);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Phi3ForCausalLM`.
    Phi3ForCausalLM,
    spec
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_recomputed_past_the_original_length() {
        let spec_of = |json: &str| spec(&Config::from_json_str(json).unwrap());
        let at = |json: &str| spec_of(json).unwrap().recompute_cache_at;
        assert_eq!(at(r#"{"num_hidden_layers": 1}"#), Some(4097));
        assert_eq!(at(r#"{"num_hidden_layers": 1, "original_max_position_embeddings": 16}"#), Some(17));
        let huge = format!(r#"{{"num_hidden_layers": 1, "original_max_position_embeddings": {}}}"#, u64::MAX);
        let err = spec_of(huge.as_str()).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "config: \"original_max_position_embeddings\" is {}, more positions than a sequence can have",
                u64::MAX
            )
        );
    }

    /// `Phi3Config.rms_norm_eps` is 1e-5 and Phi-3's projections never have biases.
    #[test]
    fn phi3_defaults_follow_its_config_class() {
        let json = r#"{"num_hidden_layers": 1, "attention_bias": true, "mlp_bias": true}"#;
        let s = spec(&Config::from_json_str(json).unwrap()).unwrap();
        assert_eq!(s.default_rms_norm_eps, 1e-5);
        assert!(!s.qkv_bias && !s.o_bias && !s.mlp_bias);
    }
}

//! Mistral (`MistralForCausalLM`): Llama with sliding-window attention on every layer.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// Llama's spec with `sliding_window` on every layer, as `MistralConfig` and its attention read it:
/// 4096 when the key is absent, none when it is null. `layer_types` is not a `MistralConfig` field:
/// transformers checks its length against `num_hidden_layers` but puts the window on every layer.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    // Mistral's projections have no biases whatever `attention_bias`/`mlp_bias` say; the class
    // defaults to 8 key/value heads.
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.default_kv_heads = Some(8);
    DecoderSpec::sliding_layers(cfg)?;
    let window = cfg.nullable_usize_or("sliding_window", Some(4096))?;
    spec.windows = vec![window; cfg.layers("num_hidden_layers")?];
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `MistralForCausalLM`.
    MistralForCausalLM,
    spec
);

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(json: &str) -> Result<Vec<Option<usize>>> {
        Ok(spec(&Config::from_json_str(json)?)?.windows)
    }

    /// `MistralConfig` defaults to 8 key/value heads; its projections never have biases.
    #[test]
    fn mistral_defaults_follow_its_config_class() {
        let json = r#"{"num_hidden_layers": 1, "attention_bias": true, "mlp_bias": true}"#;
        let s = spec(&Config::from_json_str(json).unwrap()).unwrap();
        assert_eq!(s.default_kv_heads, Some(8));
        assert!(!s.qkv_bias && !s.o_bias && !s.mlp_bias);
    }

    #[test]
    fn the_window_is_on_every_layer_whatever_layer_types_say() {
        let typed = r#"{"num_hidden_layers": 2, "sliding_window": 3,
            "layer_types": ["full_attention", "sliding_attention"]}"#;
        assert_eq!(windows(typed).unwrap(), vec![Some(3); 2]);
        assert_eq!(windows(r#"{"num_hidden_layers": 2}"#).unwrap(), vec![Some(4096); 2]);
        assert_eq!(windows(r#"{"num_hidden_layers": 2, "sliding_window": null}"#).unwrap(), vec![None; 2]);
        let short = r#"{"num_hidden_layers": 2, "layer_types": ["full_attention"]}"#;
        assert_eq!(
            windows(short).unwrap_err().to_string(),
            "config: \"layer_types\" has 1 entries for 2 layers"
        );
    }

    #[test]
    fn embeddings_are_untied_by_default() {
        let spec_of = |json: &str| spec(&Config::from_json_str(json).unwrap()).unwrap();
        assert!(!spec_of(r#"{"num_hidden_layers": 1}"#).tie_word_embeddings);
        assert!(spec_of(r#"{"num_hidden_layers": 1, "tie_word_embeddings": true}"#).tie_word_embeddings);
    }
}

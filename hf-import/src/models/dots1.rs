//! dots.llm1 (`Dots1ForCausalLM`, `Dots1Model`: rednote-hilab's dots.llm1): Qwen3's attention
//! (per-head q/k norms, biases with `attention_bias`, windows on the layers `layer_types` or
//! `max_window_layers` mark) with DeepSeek-V3's mixture from layer `first_k_dense_replace` on
//! (sigmoid routing biased by `e_score_correction_bias`, shared experts).

use super::decoder::DecoderSpec;
use super::deepseek::{v3_mixture, MixtureDefaults};
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// `Dots1Config`'s mixture (it has no usable default for the experts' counts).
const DOTS1: MixtureDefaults = MixtureDefaults {
    experts: None,
    intermediate: 1408,
    shared: None,
    first_sparse: 0,
    top_k: None,
    groups: (1, 1),
    normalize: false,
    scale: 1.0,
};

/// `Dots1Config`'s windows: `layer_types`, else `sliding_window` (default 4096; null: none) on
/// the layers from `max_window_layers` (default 62) on.
fn windows(cfg: &Config) -> Result<Vec<Option<usize>>> {
    let window = cfg.nullable_usize_or("sliding_window", Some(4096))?;
    if cfg.layer_types().is_some() {
        return DecoderSpec::windows_from_layer_types(cfg, window);
    }
    let first = cfg.nullable_usize_or("max_window_layers", Some(62))?.unwrap_or(0);
    Ok((0..cfg.layers("num_hidden_layers")?).map(|i| window.filter(|_| i >= first)).collect())
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.mlp_bias = false;
    spec.default_kv_heads = Some(32);
    spec.windows = windows(cfg)?;
    spec.moe = Some(v3_mixture(cfg, DOTS1)?);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Dots1ForCausalLM`.
    Dots1ForCausalLM,
    spec
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_max_window_layers() {
        let cfg = |json: &str| Config::from_json_str(json).unwrap();
        let w = windows(&cfg(r#"{"num_hidden_layers": 3, "max_window_layers": 1, "sliding_window": 5}"#))
            .unwrap();
        assert_eq!(w, vec![None, Some(5), Some(5)]);
        assert_eq!(windows(&cfg(r#"{"num_hidden_layers": 2}"#)).unwrap(), vec![None, None]);
        let none = cfg(r#"{"num_hidden_layers": 2, "max_window_layers": 0, "sliding_window": null}"#);
        assert_eq!(windows(&none).unwrap(), vec![None, None]);
    }
}

//! Qwen2 (`Qwen2ForCausalLM`): Llama with biases on q, k and v; sliding windows only on the layers
//! `layer_types` (or `use_sliding_window` + `max_window_layers`) mark.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// Qwen2 and Qwen3 attention windows, as their config classes set `layer_types`: from the config
/// when present, else, when `use_sliding_window` is set, the layers from `max_window_layers`
/// (default 28) on slide with `sliding_window` (default 4096).
pub(crate) fn qwen_windows(cfg: &Config) -> Result<Vec<Option<usize>>> {
    let n = cfg.layers("num_hidden_layers")?;
    let window = cfg
        .nullable_usize_or("sliding_window", Some(4096))?
        .filter(|_| cfg.bool_or("use_sliding_window", false).unwrap_or(false));
    if cfg.layer_types().is_some() {
        return DecoderSpec::windows_from_layer_types(cfg, window);
    }
    let first = cfg.usize_or("max_window_layers", 28)?;
    Ok((0..n).map(|i| if i >= first { window } else { None }).collect())
}

/// What Qwen2 and Qwen3 share: windows, bias-free MLPs and `Qwen2Config`'s 32 key/value heads.
pub(crate) fn qwen_common(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.mlp_bias = false;
    spec.windows = qwen_windows(cfg)?;
    spec.default_kv_heads = Some(32);
    Ok(spec)
}

/// Qwen2: biases on q, k and v only (its attention does not read `attention_bias`).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = qwen_common(cfg)?;
    spec.qkv_bias = true;
    spec.o_bias = false;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Qwen2ForCausalLM`.
    Qwen2ForCausalLM,
    spec
);

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(json: &str) -> Vec<Option<usize>> {
        qwen_windows(&Config::from_json_str(json).unwrap()).unwrap()
    }

    /// `Qwen2Config`: with `use_sliding_window`, the layers from `max_window_layers` (default 28) on
    /// slide, with `sliding_window` (default 4096); without it, none does.
    #[test]
    fn windows_follow_the_config_class_defaults() {
        let n = r#""num_hidden_layers": 30"#;
        let w = windows(&format!(r#"{{{n}, "use_sliding_window": true, "sliding_window": 3}}"#));
        assert_eq!(w[..28], vec![None; 28]);
        assert_eq!(w[28..], vec![Some(3); 2]);
        let w = windows(&format!(r#"{{{n}, "use_sliding_window": true, "max_window_layers": 29}}"#));
        assert_eq!((w[28], w[29]), (None, Some(4096)));
        assert_eq!(
            windows(&format!(r#"{{{n}, "sliding_window": 3, "max_window_layers": 0}}"#)),
            vec![None; 30]
        );
        // A `sliding_attention` layer without `use_sliding_window`: transformers 5.24's mask has no
        // window to use and fails.
        let types = r#""num_hidden_layers": 2, "layer_types": ["sliding_attention", "full_attention"]"#;
        let on = format!(r#"{{{types}, "use_sliding_window": true, "sliding_window": 3}}"#);
        assert_eq!(windows(&on), vec![Some(3), None]);
        let off = Config::from_json_str(&format!(r#"{{{types}, "sliding_window": 3}}"#)).unwrap();
        assert!(qwen_windows(&off).unwrap_err().to_string().contains("sets no sliding_window"));
        let spec =
            spec(&Config::from_json_str(r#"{"num_hidden_layers": 1, "mlp_bias": true}"#).unwrap()).unwrap();
        assert!(!spec.mlp_bias && spec.qkv_bias && !spec.o_bias);
        assert_eq!(spec.default_kv_heads, Some(32));
    }
}

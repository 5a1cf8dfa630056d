//! EXAONE 4 (`Exaone4ForCausalLM`: LGAI-EXAONE/EXAONE-4.0-1.2B and 32B): OLMo 2's blocks (norms
//! closing the attention and MLP branches, none before them) with per-head q/k norms, no biases,
//! and hybrid attention: `sliding_window` on the layers `layer_types` (or `sliding_window_pattern`,
//! default 4: every fourth layer global) marks sliding, the global layers then without RoPE.

use serde_json::Value;

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};

/// Which layers slide: `layer_types`, else `sliding_window_pattern` (an int `p`: all but every
/// `p`-th layer; a string such as `"LLLG"`, repeated), none without a window.
fn sliding_layers(cfg: &Config, window: Option<usize>) -> Result<Vec<bool>> {
    let layers = cfg.layers("num_hidden_layers")?;
    if let Some(sliding) = DecoderSpec::sliding_layers(cfg)? {
        return Ok(sliding);
    }
    if window.is_none() {
        return Ok(vec![false; layers]);
    }
    match cfg.get("sliding_window_pattern") {
        None => Ok((0..layers).map(|i| !(i + 1).is_multiple_of(4)).collect()),
        Some(Value::String(p)) if !p.is_empty() && p.chars().all(|c| c == 'L' || c == 'G') => {
            let p: Vec<char> = p.chars().collect();
            Ok((0..layers).map(|i| p[i % p.len()] == 'L').collect())
        }
        Some(v) => match v.as_u64() {
            Some(p) if p > 0 => Ok((0..layers).map(|i| !(i as u64 + 1).is_multiple_of(p)).collect()),
            _ => Err(Error::Config(format!(
                "\"sliding_window_pattern\" must be a positive integer or a string of L and G, got {v}"
            ))),
        },
    }
}

/// The decoder `Exaone4Config` describes (EXAONE-MoE starts from it).
pub(super) fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.qk_norm = true;
    spec.post_norms_only = true;
    spec.default_kv_heads = Some(32);
    spec.default_rms_norm_eps = 1e-5;
    let window = cfg.nullable_usize_or("sliding_window", Some(4096))?;
    let sliding = sliding_layers(cfg, window)?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    // Global layers of a hybrid model run without RoPE.
    spec.nope = sliding.iter().map(|&s| window.is_some() && !s).collect();
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Exaone4ForCausalLM`.
    Exaone4ForCausalLM,
    spec
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_layers_follow_the_pattern() {
        let cfg = |json: &str| Config::from_json_str(json).unwrap();
        let s = spec(&cfg(r#"{"num_hidden_layers": 5, "sliding_window": 3}"#)).unwrap();
        assert_eq!(s.windows, vec![Some(3), Some(3), Some(3), None, Some(3)]);
        assert_eq!(s.nope, vec![false, false, false, true, false]);
        let s =
            spec(&cfg(r#"{"num_hidden_layers": 3, "sliding_window": 3, "sliding_window_pattern": "LG"}"#))
                .unwrap();
        assert_eq!(s.windows, vec![Some(3), None, Some(3)]);
        let s = spec(&cfg(r#"{"num_hidden_layers": 2, "sliding_window": null}"#)).unwrap();
        assert_eq!((s.windows, s.nope), (vec![None, None], vec![false, false]));
        assert!(spec(&cfg(r#"{"num_hidden_layers": 2, "sliding_window_pattern": 0}"#)).is_err());
    }
}

//! HunYuan dense (`HunYuanDenseV1ForCausalLM`, `HunYuanDenseV1Model`: tencent/Hunyuan-0.5B to 7B):
//! Llama with per-head q/k norms applied after RoPE (`query_layernorm`, `key_layernorm`) and the
//! checkpoints' `"dynamic"` RoPE with a fixed `alpha`, which only stretches the base to
//! `rope_theta · alpha^(head_dim / (head_dim − 2))` (transformers' `ntk_alpha`).

use serde_json::{json, Value};

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `HunYuanDenseV1ForCausalLM`.
    HunYuanDenseV1ForCausalLM
);

impl HunYuanDenseV1ForCausalLM {
    /// Loads the model, its q/k norms read as the decoder's.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = with_alpha_rope(cfg)?;
        let mut spec = DecoderSpec::llama(&cfg)?;
        spec.qk_norm = true;
        spec.qk_norm_after_rope = true;
        spec.default_rms_norm_eps = 1e-5;
        let weights = weights.renamed(|n| {
            Some(
                n.replace(".self_attn.query_layernorm.", ".self_attn.q_norm.")
                    .replace(".self_attn.key_layernorm.", ".self_attn.k_norm."),
            )
        });
        Ok(HunYuanDenseV1ForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The config with a `"dynamic"` rope dict that names `alpha` replaced by plain RoPE of the
/// stretched base (the frequencies transformers computes for it, whatever the sequence length).
fn with_alpha_rope(cfg: &Config) -> Result<Config> {
    for key in ["rope_scaling", "rope_parameters"] {
        let Some(Value::Object(rope)) = cfg.get(key) else { continue };
        let kind = rope.get("rope_type").or_else(|| rope.get("type")).and_then(Value::as_str);
        let Some(alpha) = rope.get("alpha").filter(|a| !a.is_null()) else { continue };
        if kind != Some("dynamic") {
            continue;
        }
        let alpha = alpha
            .as_f64()
            .ok_or_else(|| Error::Config(format!("rope \"alpha\" must be a number, got {alpha}")))?;
        let heads = cfg.usize("num_attention_heads")?;
        let dim =
            cfg.nullable_usize_or("head_dim", None)?.unwrap_or(cfg.usize("hidden_size")? / heads.max(1));
        if dim <= 2 {
            return Err(Error::Config(format!("NTK-alpha RoPE needs heads wider than 2 dims, got {dim}")));
        }
        let theta = match rope.get("rope_theta").and_then(Value::as_f64) {
            Some(t) => t,
            None => cfg.f64_or("rope_theta", 10_000.0)?,
        };
        let base = theta * alpha.powf(dim as f64 / (dim as f64 - 2.0));
        let mut json = cfg.json().clone();
        json.remove("rope_scaling");
        json.insert("rope_parameters".into(), json!({"rope_type": "default", "rope_theta": base}));
        return Ok(Config::from_map(json));
    }
    Ok(cfg.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_alpha_stretches_the_base() {
        let cfg = Config::from_json_str(
            r#"{"num_attention_heads": 2, "hidden_size": 16, "rope_parameters":
                {"rope_type": "dynamic", "alpha": 4.0, "rope_theta": 100.0, "factor": 1.0}}"#,
        )
        .unwrap();
        let out = with_alpha_rope(&cfg).unwrap();
        let theta = out.get("rope_parameters").unwrap()["rope_theta"].as_f64().unwrap();
        assert!((theta - 100.0 * 4f64.powf(8.0 / 6.0)).abs() < 1e-9);
        let plain =
            Config::from_json_str(r#"{"rope_parameters": {"rope_type": "dynamic", "factor": 2.0}}"#).unwrap();
        assert_eq!(with_alpha_rope(&plain).unwrap().get("rope_parameters"), plain.get("rope_parameters"));
    }
}

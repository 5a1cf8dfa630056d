//! HunYuan dense (`HunYuanDenseV1ForCausalLM`, `HunYuanDenseV1Model`: tencent/Hunyuan-0.5B to 7B):
//! Llama with per-head q/k norms applied after RoPE (`query_layernorm`, `key_layernorm`) and the
//! checkpoints' `"dynamic"` RoPE with a fixed `alpha`, which only stretches the base to
//! `rope_theta · alpha^(head_dim / (head_dim − 2))` (transformers' `ntk_alpha`). HunYuan-MoE
//! (`HunYuanMoEV1ForCausalLM`: tencent/Hunyuan-A13B) has the same blocks with a mixture in every
//! layer's MLP (`num_experts` of `intermediate_size`, the top `moe_topk` of the router's softmax
//! renormalised) plus the shared MLP, unscaled.

use serde_json::{json, Value};

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `HunYuanDenseV1ForCausalLM`.
    HunYuanDenseV1ForCausalLM
);

impl HunYuanDenseV1ForCausalLM {
    /// Loads the model, its q/k norms read as the decoder's.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = with_alpha_rope(cfg)?;
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(HunYuanDenseV1ForCausalLM(CausalLm::load(&cfg, &weights, dense_spec(&cfg)?)?))
    }
}

causal_lm_newtype!(
    /// transformers' `HunYuanMoEV1ForCausalLM`.
    HunYuanMoEV1ForCausalLM
);

impl HunYuanMoEV1ForCausalLM {
    /// Loads the model: the dense blocks with the mixture (`mlp.gate.wg` its router,
    /// `mlp.shared_mlp` its shared expert). `num_experts` and `moe_topk` may be per-layer lists
    /// of one value.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = with_alpha_rope(cfg)?;
        let mut spec = dense_spec(&cfg)?;
        let intermediate = cfg.usize("intermediate_size")?;
        spec.moe = Some(MoeSpec {
            ungated: None,
            experts: per_model(&cfg, "num_experts", 1)?,
            intermediate,
            routing: Routing::softmax(per_model(&cfg, "moe_topk", 1)?, true, true),
            sparse_layers: vec![true; cfg.layers("num_hidden_layers")?],
            shared: Some(SharedExpert::Plain(intermediate)),
            biased: false,
            shared_bias: false,
            glu: Glu::Product,
        });
        let weights = weights.renamed(|n| {
            Some(decoder_name(n).replacen(".mlp.gate.wg.", ".mlp.gate.", 1).replacen(
                ".mlp.shared_mlp.",
                ".mlp.shared_experts.",
                1,
            ))
        });
        Ok(HunYuanMoEV1ForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// HunYuan's decoder: Llama with per-head q/k norms after RoPE.
fn dense_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.qk_norm_after_rope = true;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// A HunYuan tensor's name in the common decoder (its q/k norms as the decoder's).
fn decoder_name(name: &str) -> String {
    name.replace(".self_attn.query_layernorm.", ".self_attn.q_norm.")
        .replace(".self_attn.key_layernorm.", ".self_attn.k_norm.")
}

/// `key` as one number for every layer: a number, or a per-layer list of one value.
fn per_model(cfg: &Config, key: &str, default: usize) -> Result<usize> {
    match cfg.get(key) {
        Some(Value::Array(items)) => {
            let values: Option<Vec<u64>> = items.iter().map(Value::as_u64).collect();
            match values.as_deref() {
                Some([first, rest @ ..]) if rest.iter().all(|v| v == first) => Ok(*first as usize),
                _ => Err(Error::Unsupported(format!(
                    "\"{key}\" differs between layers ({items:?}): one value for every layer is supported"
                ))),
            }
        }
        _ => cfg.usize_or(key, default),
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

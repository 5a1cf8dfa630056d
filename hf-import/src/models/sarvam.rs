//! Sarvam's mixtures of experts, which transformers runs on other families' models with their own
//! config classes: Sarvam-MLA (`sarvam_mla`: sarvamai/sarvam-105b) as `DeepseekV3ForCausalLM`
//! (latent attention without a low-rank query by default, one group of 128 experts, a dense first
//! layer; the remote code's `rope_scaling` of type `deepseek_yarn` read as YaRN) and Sarvam-MoE
//! (`sarvam_moe`: sarvamai/sarvam-30b) as `Glm4MoeForCausalLM` (RoPE over whole heads of 64, base
//! 8000000, per-head q/k norms, 4 key/value heads, 128 experts of 1024, 6 a token, scaled by 2.5).
//!
//! Sarvam-MoE's checkpoints keep the remote code's names, read as transformers converts them:
//! `word_embeddings`, `attention.query_key_value` (split into q, k and v), `attention.dense`,
//! `query_layernorm`, `key_layernorm` and the router's `expert_bias`.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::{v3_mixture, v3_spec_with, MixtureDefaults};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// The remote code's `SarvamMLAForCausalLM` (transformers' `DeepseekV3ForCausalLM` on a
    /// `SarvamMLAConfig`).
    SarvamMLAForCausalLM
);

causal_lm_newtype!(
    /// The remote code's `SarvamMoEForCausalLM` (transformers' `Glm4MoeForCausalLM` on a
    /// `SarvamMoEConfig`).
    SarvamMoEForCausalLM
);

/// `SarvamMLAConfig`'s mixture.
const SARVAM_MLA: MixtureDefaults = MixtureDefaults {
    experts: Some(128),
    intermediate: 2048,
    shared: Some(1),
    first_sparse: 1,
    top_k: Some(8),
    groups: (1, 1),
    normalize: true,
    scale: 2.5,
};

/// `SarvamMoEConfig`'s mixture.
const SARVAM_MOE: MixtureDefaults = MixtureDefaults {
    experts: Some(128),
    intermediate: 1024,
    shared: Some(1),
    first_sparse: 1,
    top_k: Some(6),
    groups: (1, 1),
    normalize: true,
    scale: 2.5,
};

impl SarvamMLAForCausalLM {
    /// Loads the model from a Sarvam-MLA config (either format) and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = mla_config(cfg);
        Ok(SarvamMLAForCausalLM(CausalLm::load(&cfg, weights, v3_spec_with(&cfg, SARVAM_MLA)?)?))
    }
}

/// The config as `SarvamMLAConfig` reads it: no low-rank query unless `q_lora_rank` says so, and
/// the remote code's `rope_scaling` of type `deepseek_yarn` as YaRN rope parameters.
fn mla_config(cfg: &Config) -> Config {
    let mut json = cfg.json().clone();
    json.entry("q_lora_rank").or_insert(Value::Null);
    if let Some(Value::Object(scaling)) = cfg.get("rope_scaling") {
        let kind = |k: &str| scaling.get(k).and_then(Value::as_str) == Some("deepseek_yarn");
        if kind("type") || kind("rope_type") {
            let mut rope = scaling.clone();
            rope.remove("type");
            rope.insert("rope_type".into(), "yarn".into());
            if let Some(theta) = json.get("rope_theta").filter(|t| !t.is_null()) {
                rope.entry("rope_theta").or_insert(theta.clone());
            }
            json.remove("rope_scaling");
            json.insert("rope_parameters".into(), Value::Object(rope));
        }
    }
    Config::from_map(json)
}

impl SarvamMoEForCausalLM {
    /// Loads the model from a Sarvam-MoE config and checkpoint (the remote code's names or
    /// transformers').
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = moe_config(cfg);
        let spec = moe_spec(&cfg)?;
        let weights = moe_weights(weights, &cfg)?;
        Ok(SarvamMoEForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The config with `SarvamMoEConfig`'s whole-head RoPE where it names no rotary share.
fn moe_config(cfg: &Config) -> Config {
    let nested = ["rope_parameters", "rope_scaling"]
        .iter()
        .any(|k| cfg.get(k).and_then(|v| v.get("partial_rotary_factor")).is_some_and(|p| !p.is_null()));
    if nested || cfg.get("partial_rotary_factor").is_some() {
        return cfg.clone();
    }
    let mut json = cfg.json().clone();
    json.insert("partial_rotary_factor".into(), 1.0.into());
    Config::from_map(json)
}

/// GLM-4-MoE's decoder under `SarvamMoEConfig`'s defaults.
fn moe_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.o_bias, spec.mlp_bias) = (false, false);
    spec.qk_norm = cfg.bool_or("use_qk_norm", true)?;
    spec.default_kv_heads = Some(4);
    spec.default_head_dim = Some(64);
    spec.moe = Some(v3_mixture(cfg, SARVAM_MOE)?);
    Ok(spec)
}

/// A Sarvam-MoE tensor's name in the common decoder (transformers' names are kept).
fn moe_name(name: &str) -> String {
    let name = match name.strip_prefix("model.word_embeddings.") {
        Some(rest) => format!("model.embed_tokens.{rest}"),
        None => name.to_string(),
    };
    let name = name.replace(".attention.", ".self_attn.");
    [
        (".self_attn.dense.", ".self_attn.o_proj."),
        (".self_attn.query_layernorm.", ".self_attn.q_norm."),
        (".self_attn.key_layernorm.", ".self_attn.k_norm."),
        (".mlp.gate.expert_bias", ".mlp.gate.e_score_correction_bias"),
    ]
    .iter()
    .fold(name, |n, (own, common)| n.replace(own, common))
}

/// The checkpoint under the decoder's names, each fused `query_key_value` (weight and bias: the
/// query rows, then the keys', then the values') split into `q_proj`, `k_proj` and `v_proj`.
fn moe_weights(weights: &Weights, cfg: &Config) -> Result<Weights> {
    if !weights.names().any(|n| n.contains(".query_key_value.") || n.starts_with("model.word_embeddings.")) {
        return Ok(weights.clone());
    }
    let heads = cfg.usize("num_attention_heads")?;
    let kv_heads = cfg.nullable_usize_or("num_key_value_heads", Some(4))?.unwrap_or(heads);
    let head_dim =
        cfg.nullable_usize_or("head_dim", Some(64))?.unwrap_or(cfg.usize("hidden_size")? / heads.max(1));
    let rows = |n: usize| {
        n.checked_mul(head_dim).ok_or_else(|| Error::Config(format!("{n} heads of {head_dim} are too large")))
    };
    let (q, kv) = (rows(heads)?, rows(kv_heads)?);
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 64);
    for item in weights.iter() {
        let (name, t) = item?;
        let name = moe_name(name);
        let Some((stem, part)) = name.split_once(".self_attn.query_key_value.") else {
            out.push((name, t));
            continue;
        };
        let fused = t.dims().first().copied();
        if fused != q.checked_add(2 * kv) {
            return Err(Error::Weight(format!(
                "tensor '{name}' has shape {:?}; the fused query_key_value needs {q} + 2 × {kv} rows",
                t.dims()
            )));
        }
        let parts = t.split_with_sizes(&[q, kv, kv], 0)?;
        for (proj, p) in ["q_proj", "k_proj", "v_proj"].iter().zip(parts) {
            out.push((format!("{stem}.self_attn.{proj}.{part}"), p));
        }
    }
    Ok(Weights::from_tensors(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    #[test]
    fn deepseek_yarn_is_read_as_yarn() {
        let c = mla_config(&cfg(r#"{"rope_theta": 5000.0, "rope_scaling": {"type": "deepseek_yarn",
            "factor": 4.0, "original_max_position_embeddings": 16}}"#));
        assert!(c.get("rope_scaling").is_none());
        assert_eq!(c.rope_entry("rope_type"), Some(Value::from("yarn")));
        assert_eq!(c.rope_entry("rope_theta"), Some(Value::from(5000.0)));
        assert!(c.json()["q_lora_rank"].is_null());
    }

    #[test]
    fn remote_names_are_transformers_names() {
        assert_eq!(moe_name("model.word_embeddings.weight"), "model.embed_tokens.weight");
        assert_eq!(
            moe_name("model.layers.2.attention.dense.weight"),
            "model.layers.2.self_attn.o_proj.weight"
        );
        assert_eq!(
            moe_name("model.layers.0.attention.query_layernorm.weight"),
            "model.layers.0.self_attn.q_norm.weight"
        );
        assert_eq!(
            moe_name("model.layers.1.mlp.gate.expert_bias"),
            "model.layers.1.mlp.gate.e_score_correction_bias"
        );
        assert_eq!(moe_name("lm_head.weight"), "lm_head.weight");
    }
}

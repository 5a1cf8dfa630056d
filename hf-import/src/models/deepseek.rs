//! DeepSeek-V2 and V3 (`DeepseekV2ForCausalLM`, `DeepseekV3ForCausalLM`, their base models and
//! sequence classifiers): Llama's pre-norm blocks with multi-head latent attention
//! ([`crate::layers::LatentQkv`]) and, from layer `first_k_dense_replace` on, a mixture of routed
//! experts plus always-run shared experts. V2 routes by softmax (greedily, or limited to the best
//! groups); V3 by sigmoid scores biased by `e_score_correction_bias`, among the groups whose two
//! best experts score highest, renormalised (`norm_topk_prob`) and scaled by
//! `routed_scaling_factor`. With YaRN RoPE, the attention scale is multiplied by
//! `mscale(factor, mscale_all_dim)²` as transformers does.

use serde_json::Value;

use super::decoder::{DecoderSpec, MoeSpec, SharedExpert};
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, LatentDims, Routing, Scoring};

/// The DeepSeek generation a config describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V2,
    V3,
}

/// The latent attention's widths, with the config classes' defaults (shared by V2 and V3);
/// V2 always rotates interleaved pairs, V3 with `rope_interleave` (default true).
fn latent_dims(cfg: &Config, version: Version) -> Result<LatentDims> {
    match version {
        // (V2 reads no `rope_interleave`.)
        Version::V2 => Ok(LatentDims {
            q_rank: cfg.nullable_usize_or("q_lora_rank", Some(1536))?,
            kv_rank: cfg.usize_or("kv_lora_rank", 512)?,
            nope: cfg.usize_or("qk_nope_head_dim", 128)?,
            rope: cfg.usize_or("qk_rope_head_dim", 64)?,
            v: cfg.usize_or("v_head_dim", 128)?,
            interleaved: true,
        }),
        Version::V3 => v3_latent_dims(cfg),
    }
}

/// V3's latent attention widths (`rope_interleave` default true), with `DeepseekV3Config`'s
/// defaults.
pub(super) fn v3_latent_dims(cfg: &Config) -> Result<LatentDims> {
    Ok(LatentDims {
        q_rank: cfg.nullable_usize_or("q_lora_rank", Some(1536))?,
        kv_rank: cfg.usize_or("kv_lora_rank", 512)?,
        nope: cfg.usize_or("qk_nope_head_dim", 128)?,
        rope: cfg.usize_or("qk_rope_head_dim", 64)?,
        v: cfg.usize_or("v_head_dim", 128)?,
        interleaved: cfg.bool_or("rope_interleave", true)?,
    })
}

/// transformers' `yarn_apply_mscale`: `qk_head_dim^-0.5`, times `mscale²` where
/// `mscale = 0.1 · mscale_all_dim · ln(factor) + 1` when the rope dict names a scaling type other
/// than `default`, a non-zero `mscale_all_dim` and a `factor` above 1.
pub(super) fn attention_scale(cfg: &Config, qk_head_dim: usize) -> Result<f64> {
    let scale = (qk_head_dim as f64).powf(-0.5);
    let kind = cfg.rope_entry("rope_type").or_else(|| cfg.rope_entry("type"));
    let kind = kind.as_ref().and_then(Value::as_str).unwrap_or("default");
    let number = |key: &str| -> Result<Option<f64>> {
        match cfg.rope_entry(key) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                Error::Config(format!("the rope parameters' \"{key}\" must be a number, got {v}"))
            }),
        }
    };
    let all_dim = number("mscale_all_dim")?.unwrap_or(0.0);
    if kind == "default" || all_dim == 0.0 {
        return Ok(scale);
    }
    let factor = number("factor")?.ok_or_else(|| {
        Error::Config(format!("rope scaling \"{kind}\" with mscale_all_dim needs a \"factor\""))
    })?;
    let mscale = if factor <= 1.0 { 1.0 } else { 0.1 * all_dim * factor.ln() + 1.0 };
    Ok(scale * mscale * mscale)
}

/// What V2 and V3 share: Llama's decoder (no MLP biases; `attention_bias` on `q_a_proj`,
/// `kv_a_proj_with_mqa` and `o_proj`) with latent attention and the mixture.
fn spec(cfg: &Config, version: Version) -> Result<DecoderSpec> {
    let mut spec = latent_spec(cfg, version)?;
    spec.moe = Some(mixture(cfg, version)?);
    Ok(spec)
}

/// V3's decoder with a V3 mixture of `d`'s defaults (Sarvam's MLA models).
pub(super) fn v3_spec_with(cfg: &Config, d: MixtureDefaults) -> Result<DecoderSpec> {
    let mut spec = latent_spec(cfg, Version::V3)?;
    spec.moe = Some(v3_mixture(cfg, d)?);
    Ok(spec)
}

/// V3's decoder without its mixture: dense MLPs in every layer (Youtu).
pub(super) fn v3_latent_spec(cfg: &Config) -> Result<DecoderSpec> {
    latent_spec(cfg, Version::V3)
}

/// Llama's decoder (no MLP biases) with latent attention, scaled as YaRN asks.
fn latent_spec(cfg: &Config, version: Version) -> Result<DecoderSpec> {
    if version == Version::V2
        && !cfg.usize("hidden_size")?.is_multiple_of(cfg.usize("num_attention_heads")?.max(1))
    {
        // `DeepseekV2Config.validate_architecture`.
        return Err(Error::Config(format!(
            "The hidden size ({}) is not a multiple of the number of attention heads ({}).",
            cfg.usize("hidden_size")?,
            cfg.usize("num_attention_heads")?
        )));
    }
    latent_spec_with(cfg, latent_dims(cfg, version)?)
}

/// Llama's decoder (no MLP biases) with latent attention of `dims`, scaled as YaRN asks (V2, V3,
/// and Mistral 4 with widths of its own).
pub(super) fn latent_spec_with(cfg: &Config, dims: LatentDims) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.mlp_bias = false;
    let heads = cfg.usize("num_attention_heads")?;
    if let Some(kv) = cfg.nullable_usize_or("num_key_value_heads", None)? {
        if kv != heads {
            // (transformers' `repeat_kv` would then copy the already expanded heads again.)
            return Err(Error::Config(format!(
                "latent attention expands keys and values for every head: num_key_value_heads ({kv}) \
                 must equal num_attention_heads ({heads})"
            )));
        }
    }
    spec.attention_scale = Some(attention_scale(cfg, dims.qk())?);
    spec.latent = Some(dims);
    Ok(spec)
}

/// A DeepSeek-style mixture's config-class defaults (`None`: the class has none that works, the
/// config must name it).
#[derive(Debug, Clone, Copy)]
pub(super) struct MixtureDefaults {
    /// `n_routed_experts`
    pub experts: Option<usize>,
    /// `moe_intermediate_size`
    pub intermediate: usize,
    /// `n_shared_experts`
    pub shared: Option<usize>,
    /// `first_k_dense_replace`
    pub first_sparse: usize,
    /// `num_experts_per_tok`
    pub top_k: Option<usize>,
    /// `(n_group, topk_group)` of V3-style routing
    pub groups: (usize, usize),
    /// `norm_topk_prob`
    pub normalize: bool,
    /// `routed_scaling_factor`
    pub scale: f64,
}

/// `DeepseekV3Config`'s mixture.
const DEEPSEEK_V3: MixtureDefaults = MixtureDefaults {
    experts: Some(256),
    intermediate: 2048,
    shared: Some(1),
    first_sparse: 3,
    top_k: Some(8),
    groups: (8, 4),
    normalize: true,
    scale: 2.5,
};

/// `DeepseekV2Config`'s mixture (its groups only under `group_limited_greedy`).
const DEEPSEEK_V2: MixtureDefaults = MixtureDefaults {
    experts: Some(64),
    intermediate: 1407,
    shared: Some(2),
    first_sparse: 0,
    top_k: None,
    groups: (0, 0),
    normalize: false,
    scale: 1.0,
};

/// The routed experts (`n_routed_experts`, or `num_local_experts`) of `moe_intermediate_size`,
/// `num_experts_per_tok` a token, on the layers from `first_k_dense_replace` on, with the shared
/// experts (`n_shared_experts` times `moe_intermediate_size`), routed as V2 or V3 routes.
fn mixture(cfg: &Config, version: Version) -> Result<MoeSpec> {
    match version {
        Version::V2 => {
            let scoring = match cfg.str_or("topk_method", "greedy")? {
                "greedy" => Scoring::DeepseekV2 { groups: None },
                "group_limited_greedy" => {
                    let n = cfg.nullable_usize_or("n_group", None)?;
                    let groups = n.zip(cfg.nullable_usize_or("topk_group", None)?).ok_or_else(|| {
                        Error::Config(
                            "topk_method \"group_limited_greedy\" needs n_group and topk_group".into(),
                        )
                    })?;
                    Scoring::DeepseekV2 { groups: Some(groups) }
                }
                other => {
                    return Err(Error::Unsupported(format!(
                        "DeepSeek-V2 topk_method \"{other}\" (supported: greedy, group_limited_greedy)"
                    )))
                }
            };
            // (V2's router never renormalises, whatever `norm_topk_prob` says.)
            routed_mixture(cfg, DEEPSEEK_V2, scoring, false)
        }
        Version::V3 => v3_mixture(cfg, DEEPSEEK_V3),
    }
}

/// A DeepSeek-V3-style mixture (also GLM-4-MoE's and dots.llm1's): biased sigmoid scores within
/// the best `topk_group` of `n_group` groups, renormalised with `norm_topk_prob`.
pub(super) fn v3_mixture(cfg: &Config, d: MixtureDefaults) -> Result<MoeSpec> {
    let groups = cfg.nullable_usize_or("n_group", Some(d.groups.0))?;
    let top_groups = cfg.nullable_usize_or("topk_group", Some(d.groups.1))?;
    let (Some(groups), Some(top_groups)) = (groups, top_groups) else {
        return Err(Error::Config("sigmoid routing by groups needs n_group and topk_group".into()));
    };
    // (A null `norm_topk_prob` is falsy to the router.)
    let normalize = match cfg.get("norm_topk_prob") {
        Some(Value::Null) => false,
        _ => cfg.bool_or("norm_topk_prob", d.normalize)?,
    };
    routed_mixture(cfg, d, Scoring::DeepseekV3 { groups, top_groups }, normalize)
}

/// Which of `layers` layers are the mixture by `mlp_layer_types` (`"sparse"` or `"dense"` for each;
/// `None` when the config has none).
pub(super) fn sparse_layers_by_type(cfg: &Config, layers: usize) -> Result<Option<Vec<bool>>> {
    let Some(types) = cfg.get("mlp_layer_types") else { return Ok(None) };
    types
        .as_array()
        .filter(|a| a.len() == layers)
        .and_then(|a| {
            a.iter()
                .map(|t| match t.as_str() {
                    Some("sparse") => Some(true),
                    Some("dense") => Some(false),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
        })
        .map(Some)
        .ok_or_else(|| {
            Error::Config(format!(
                "\"mlp_layer_types\" must list \"dense\" or \"sparse\" for each of the {layers} layers, got {types}"
            ))
        })
}

/// The mixture's sizes and layers read with `d`'s defaults, routed by `scoring`.
pub(super) fn routed_mixture(
    cfg: &Config,
    d: MixtureDefaults,
    scoring: Scoring,
    normalize: bool,
) -> Result<MoeSpec> {
    let layers = cfg.layers("num_hidden_layers")?;
    let required = |key: &str, v: Option<usize>| {
        v.ok_or_else(|| Error::Config(format!("{key} is missing or null: the mixture needs it")))
    };
    let experts = match (cfg.get("n_routed_experts"), cfg.get("num_local_experts")) {
        (None, None) => required("n_routed_experts", d.experts)?,
        (Some(_), _) => required("n_routed_experts", cfg.nullable_usize_or("n_routed_experts", d.experts)?)?,
        (None, Some(_)) => cfg.usize("num_local_experts")?,
    };
    let intermediate = cfg.usize_or("moe_intermediate_size", d.intermediate)?;
    let top_k = required("num_experts_per_tok", cfg.nullable_usize_or("num_experts_per_tok", d.top_k)?)?;
    let first_sparse = cfg.nullable_usize_or("first_k_dense_replace", Some(d.first_sparse))?.unwrap_or(0);
    let shared = required("n_shared_experts", cfg.nullable_usize_or("n_shared_experts", d.shared)?)?;
    let shared_width = shared
        .checked_mul(intermediate)
        .ok_or_else(|| Error::Config(format!("{shared} shared experts of {intermediate} are too large")))?;
    Ok(MoeSpec {
        ungated: None,
        experts,
        intermediate,
        routing: Routing {
            top_k,
            normalize,
            round_weights: false,
            scoring,
            scale: cfg.f64_or("routed_scaling_factor", d.scale)?,
        },
        sparse_layers: (0..layers).map(|i| i >= first_sparse).collect(),
        shared: Some(SharedExpert::Plain(shared_width)),
        biased: false,
        shared_bias: false,
        glu: Glu::Product,
    })
}

causal_lm_family!(
    /// transformers' `DeepseekV2ForCausalLM`.
    DeepseekV2ForCausalLM,
    |cfg| spec(cfg, Version::V2)
);

causal_lm_family!(
    /// transformers' `DeepseekV3ForCausalLM`.
    DeepseekV3ForCausalLM,
    |cfg| spec(cfg, Version::V3)
);

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    /// YaRN with `mscale_all_dim` scales the scores by `mscale²` (DeepSeek-V2-Lite: factor 40,
    /// 0.707); without it, or under default RoPE, the plain `qk_head_dim^-0.5`.
    #[test]
    fn yarn_scales_the_attention_as_transformers() {
        let yarn = cfg(r#"{"rope_scaling": {"type": "yarn", "factor": 40, "mscale_all_dim": 0.707,
            "original_max_position_embeddings": 4096}}"#);
        let m = 0.1 * 0.707 * 40f64.ln() + 1.0;
        assert!((attention_scale(&yarn, 192).unwrap() - m * m / 192f64.sqrt()).abs() < 1e-12);
        let plain = cfg(r#"{"rope_parameters": {"rope_type": "yarn", "factor": 40}}"#);
        assert_eq!(attention_scale(&plain, 192).unwrap(), 192f64.powf(-0.5));
        let default = cfg(r#"{"rope_parameters": {"rope_type": "default", "mscale_all_dim": 1.0}}"#);
        assert_eq!(attention_scale(&default, 64).unwrap(), 0.125);
    }

    /// The config classes' routing defaults, and what is refused.
    #[test]
    fn routing_follows_the_config_classes() {
        let v3 = mixture(&cfg(r#"{"num_hidden_layers": 4}"#), Version::V3).unwrap();
        assert_eq!(v3.sparse_layers, vec![false, false, false, true]);
        assert_eq!((v3.experts, v3.intermediate, v3.shared), (256, 2048, Some(SharedExpert::Plain(2048))));
        assert_eq!(v3.routing.scoring, Scoring::DeepseekV3 { groups: 8, top_groups: 4 });
        assert!(v3.routing.normalize && v3.routing.scale == 2.5 && v3.routing.top_k == 8);
        let v2 = cfg(r#"{"num_hidden_layers": 2, "num_experts_per_tok": 6, "norm_topk_prob": true}"#);
        let v2 = mixture(&v2, Version::V2).unwrap();
        assert_eq!(v2.routing.scoring, Scoring::DeepseekV2 { groups: None });
        assert!(!v2.routing.normalize, "V2's router never renormalises");
        assert_eq!(v2.shared, Some(SharedExpert::Plain(2 * 1407)));
        let limited = r#"{"num_hidden_layers": 2, "num_experts_per_tok": 6,
            "topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3}"#;
        let limited = mixture(&cfg(limited), Version::V2).unwrap();
        assert_eq!(limited.routing.scoring, Scoring::DeepseekV2 { groups: Some((8, 3)) });
        let err = mixture(&cfg(r#"{"num_hidden_layers": 2}"#), Version::V2).unwrap_err().to_string();
        assert!(err.contains("num_experts_per_tok is missing or null"), "{err}");
        let noaux = r#"{"num_hidden_layers": 2, "num_experts_per_tok": 2, "topk_method": "noaux_tc"}"#;
        assert!(mixture(&cfg(noaux), Version::V2).unwrap_err().to_string().contains("noaux_tc"));
    }
}

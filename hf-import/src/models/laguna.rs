//! Laguna (`LagunaForCausalLM`, model type `laguna`: poolside/Laguna): attention with per-head
//! q/k norms, a window on the `layer_types` marked `sliding_attention`, each layer type with RoPE of
//! its own (by default base 500000 over half of each head on full layers, 10000 over whole heads on
//! sliding ones), a query head count per layer (`num_attention_heads_per_layer`) and an output gate
//! `softplus(g_proj(x))` per head (`gating` true or `"per-head"`) or per channel; a dense MLP on the
//! layers `mlp_layer_types` marks `dense` (by default the first), elsewhere a mixture (256 experts
//! of 512, 8 a token) routed by sigmoid scores of soft-capped logits, chosen with the router's
//! `e_score_correction_bias`, renormalised, scaled by `moe_routed_scaling_factor`, beside an
//! ungated shared expert (`shared_experts`, `shared_expert_intermediate_size`). Checkpoints name the
//! router's bias `mlp.experts.e_score_correction_bias` and the shared expert `mlp.shared_expert`;
//! either naming loads.

use serde_json::{json, Value};

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::deepseek::sparse_layers_by_type;
use super::family::causal_lm_newtype;
use super::mellum::per_layer_type_rope;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{OutputGate, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `LagunaForCausalLM`.
    LagunaForCausalLM
);

impl LagunaForCausalLM {
    /// Loads the model from a Laguna config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg);
        let weights = weights.renamed(|n| Some(module_name(n)));
        Ok(LagunaForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// A checkpoint's name as transformers names the module in memory (its conversion mapping): the
/// router's bias saved under the experts, the shared expert in the singular.
fn module_name(name: &str) -> String {
    name.replace(".mlp.experts.e_score_correction_bias", ".mlp.gate.e_score_correction_bias")
        .replace(".mlp.shared_expert.", ".mlp.shared_experts.")
}

/// The config with `LagunaConfig`'s rope dicts where it names none.
fn decoder_config(cfg: &Config) -> Config {
    cfg.with_class_rope(json!({
        "full_attention": {"rope_type": "default", "rope_theta": 500_000.0, "partial_rotary_factor": 0.5},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0, "partial_rotary_factor": 1.0},
    }))
}

/// Laguna's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.mlp_bias = false;
    spec.default_kv_heads = Some(8);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-6;
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = DecoderSpec::sliding_layers(cfg)?.unwrap_or_else(|| vec![false; layers]);
    per_layer_type_rope(cfg, &sliding, "Laguna")?;
    spec.windows =
        DecoderSpec::sliding_windows(&sliding, cfg.nullable_usize_or("sliding_window", Some(512))?)?;
    spec.local_rope = sliding;
    spec.heads_per_layer = heads_per_layer(cfg, layers)?;
    spec.output_gate = Some(OutputGate::Softplus { per_head: gate_per_head(cfg)? });
    if cfg.bool_or("moe_apply_router_weight_on_input", false)? {
        return Err(Error::Unsupported(
            "Laguna's moe_apply_router_weight_on_input (transformers does not run it either)".into(),
        ));
    }
    let softcap = cfg.f64_or("moe_router_logit_softcapping", 0.0)?;
    spec.moe = Some(MoeSpec {
        shared: Some(SharedExpert::Plain(cfg.usize_or("shared_expert_intermediate_size", 512)?)),
        ..MoeSpec::routed(
            cfg.usize_or("num_experts", 256)?,
            cfg.usize_or("moe_intermediate_size", 512)?,
            Routing {
                top_k: cfg.usize_or("num_experts_per_tok", 8)?,
                normalize: true,
                round_weights: true,
                scoring: Scoring::BiasedSigmoid { softcap: (softcap > 0.0).then_some(softcap) },
                scale: cfg.f64_or("moe_routed_scaling_factor", 1.0)?,
            },
            sparse_layers_by_type(cfg, layers)?.unwrap_or_else(|| (0..layers).map(|i| i > 0).collect()),
        )
    });
    Ok(spec)
}

/// `num_attention_heads_per_layer`, one count per layer (`None` when absent or null).
fn heads_per_layer(cfg: &Config, layers: usize) -> Result<Option<Vec<usize>>> {
    let heads = match cfg.get("num_attention_heads_per_layer") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items.iter().map(|v| v.as_u64().map(|h| h as usize)).collect(),
        Some(_) => None,
    };
    match heads {
        Some(heads) if Vec::len(&heads) == layers => Ok(Some(heads)),
        _ => Err(Error::Config(format!(
            "\"num_attention_heads_per_layer\" must list a head count for each of the {layers} layers, got {}",
            cfg.get("num_attention_heads_per_layer").map_or(String::new(), Value::to_string)
        ))),
    }
}

/// Whether the output gate is one per head: `gating` true (the default) or `"per-head"`; false or
/// any other string gates each channel, as `LagunaAttention` reads it.
fn gate_per_head(cfg: &Config) -> Result<bool> {
    match cfg.get("gating") {
        None | Some(Value::Bool(true)) => Ok(true),
        Some(Value::String(s)) => Ok(s == "per-head"),
        Some(Value::Bool(false)) => Ok(false),
        Some(other) => Err(Error::Config(format!(
            "\"gating\" must be true, false, \"per-head\" or \"per-element\", got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        decoder_config(&Config::from_json_str(json).unwrap())
    }

    /// The class's defaults: the first layer dense, half-head RoPE on full layers, per-head gates.
    #[test]
    fn class_defaults() {
        let c = cfg(r#"{"model_type": "laguna", "num_hidden_layers": 3}"#);
        let spec = spec(&c).unwrap();
        assert_eq!(spec.moe.as_ref().unwrap().sparse_layers, vec![false, true, true]);
        assert_eq!(spec.output_gate, Some(OutputGate::Softplus { per_head: true }));
        assert_eq!(spec.heads_per_layer, None);
        let full = c.rope(Some("full_attention")).unwrap();
        assert_eq!((full.theta, full.partial_rotary_factor), (500_000.0, 0.5));
        let local = c.rope(Some("sliding_attention")).unwrap();
        assert_eq!((local.theta, local.partial_rotary_factor), (10_000.0, 1.0));
    }

    #[test]
    fn gating_heads_and_router_options() {
        let c = cfg(r#"{"model_type": "laguna", "num_hidden_layers": 2, "gating": "per-element",
            "num_attention_heads_per_layer": [4, 8], "moe_router_logit_softcapping": 2.5}"#);
        let spec = spec(&c).unwrap();
        assert_eq!(spec.output_gate, Some(OutputGate::Softplus { per_head: false }));
        assert_eq!(spec.heads_per_layer, Some(vec![4, 8]));
        assert_eq!(spec.moe.unwrap().routing.scoring, Scoring::BiasedSigmoid { softcap: Some(2.5) });
        let short =
            cfg(r#"{"model_type": "laguna", "num_hidden_layers": 2, "num_attention_heads_per_layer": [4]}"#);
        assert!(spec_err(&short).contains("for each of the 2 layers"));
        let on_input = cfg(
            r#"{"model_type": "laguna", "num_hidden_layers": 1, "moe_apply_router_weight_on_input": true}"#,
        );
        assert!(spec_err(&on_input).contains("moe_apply_router_weight_on_input"));
    }

    fn spec_err(c: &Config) -> String {
        spec(c).unwrap_err().to_string()
    }
}

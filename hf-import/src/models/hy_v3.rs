//! Hunyuan 3 (`HYV3ForCausalLM`, model type `hy_v3`): Llama's blocks with per-head q/k norms
//! before RoPE (base 11158840 by default), a dense MLP on the layers `mlp_layer_types` marks
//! `dense` (by default the first) and elsewhere a mixture (192 experts of 1536, 8 a token) routed
//! as DeepSeek-V3 routes, in float32 (sigmoid scores, chosen with the block's
//! `e_score_correction_bias`, renormalised, scaled by `router_scaling_factor`, 2.826), beside
//! `num_shared_experts` shared experts (one MLP that many times wider; none: `intermediate_size` wide). Checkpoints name the router
//! `mlp.router.gate`, its bias `mlp.expert_bias` and the shared experts `mlp.shared_mlp`; either
//! naming loads. The multi-token-prediction layer (`model.layers.{num_hidden_layers}`) is not run.

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::deepseek::sparse_layers_by_type;
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::layers::{Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `HYV3ForCausalLM`.
    HYV3ForCausalLM
);

impl HYV3ForCausalLM {
    /// Loads the model from a Hunyuan 3 config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(HYV3ForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

/// A checkpoint's (or transformers' in-memory) name as the decoder's: the router and its bias as
/// `mlp.gate` and `mlp.gate.e_score_correction_bias`, the shared experts as `mlp.shared_experts`.
fn decoder_name(name: &str) -> String {
    name.replace(".mlp.router.gate.", ".mlp.gate.")
        .replace(".mlp.expert_bias", ".mlp.gate.e_score_correction_bias")
        .replace(".mlp.e_score_correction_bias", ".mlp.gate.e_score_correction_bias")
        .replace(".mlp.shared_mlp.", ".mlp.shared_experts.")
}

/// Hunyuan 3's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.default_head_dim = Some(128);
    spec.default_kv_heads = Some(8);
    spec.default_rms_norm_eps = 1e-5;
    let layers = cfg.layers("num_hidden_layers")?;
    let intermediate = cfg.usize_or("moe_intermediate_size", 1536)?;
    // (`HYV3MLP` takes a zero width as none given: `intermediate_size`'s.)
    let shared = match intermediate.saturating_mul(cfg.usize_or("num_shared_experts", 1)?) {
        0 => cfg.usize("intermediate_size")?,
        width => width,
    };
    spec.moe = Some(MoeSpec {
        shared: Some(SharedExpert::Plain(shared)),
        // (The shared experts are the dense MLP's class, biased with `mlp_bias`.)
        shared_bias: spec.mlp_bias,
        ..MoeSpec::routed(
            cfg.usize_or("num_experts", 192)?,
            intermediate,
            Routing {
                top_k: cfg.usize_or("num_experts_per_tok", 8)?,
                normalize: true,
                round_weights: false,
                scoring: Scoring::DeepseekV3 { groups: 1, top_groups: 1 },
                scale: cfg.f64_or("router_scaling_factor", 2.826)?,
            },
            sparse_layers_by_type(cfg, layers)?.unwrap_or_else(|| (0..layers).map(|i| i > 0).collect()),
        )
    });
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_defaults_and_names() {
        let s = spec(&Config::from_json_str(r#"{"num_hidden_layers": 3}"#).unwrap()).unwrap();
        let moe = s.moe.unwrap();
        assert_eq!(moe.sparse_layers, vec![false, true, true]);
        assert_eq!(
            (moe.experts, moe.intermediate, moe.routing.top_k, moe.routing.scale),
            (192, 1536, 8, 2.826)
        );
        assert!(matches!(moe.shared, Some(SharedExpert::Plain(1536))));
        assert_eq!(
            decoder_name("model.layers.2.mlp.expert_bias"),
            "model.layers.2.mlp.gate.e_score_correction_bias"
        );
        assert_eq!(
            decoder_name("model.layers.2.mlp.shared_mlp.up_proj.weight"),
            "model.layers.2.mlp.shared_experts.up_proj.weight"
        );
    }
}

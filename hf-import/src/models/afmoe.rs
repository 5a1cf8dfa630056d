//! AFMoE (`AfmoeForCausalLM`, model type `afmoe`: Arcee's Trinity): attention with per-head q/k
//! norms and an output gate `sigmoid(gate_proj(x))`, a window on the `layer_types` marked
//! `sliding_attention` (by default all but every `global_attn_every_n_layers`-th, 4) and RoPE on
//! those alone (the full layers take no positions), in blocks with a norm before and after both
//! attention and the MLP; dense MLPs on the first `num_dense_layers` layers (1), then a mixture (64
//! experts of 1408, 6 a token) routed by sigmoid scores, chosen with the block's `expert_bias`,
//! renormalised and scaled by `route_scale`, beside `num_shared_experts` shared experts (one MLP
//! that many times wider). Norms scale in float32; with `mup_enabled` the embeddings are
//! multiplied by `sqrt(hidden_size)`.

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::layers::{OutputGate, RmsNormStyle, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `AfmoeForCausalLM`.
    AfmoeForCausalLM
);

impl AfmoeForCausalLM {
    /// Loads the model from an AFMoE config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(AfmoeForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

/// AFMoE's names as the decoder's: the router `mlp.router.gate` and `mlp.expert_bias` as
/// `mlp.gate` and its `e_score_correction_bias`, the MLP's norms as the feed-forward's.
fn decoder_name(name: &str) -> String {
    name.replace(".mlp.router.gate.", ".mlp.gate.")
        .replace(".mlp.expert_bias", ".mlp.gate.e_score_correction_bias")
        .replace(".pre_mlp_layernorm.", ".pre_feedforward_layernorm.")
        .replace(".post_mlp_layernorm.", ".post_feedforward_layernorm.")
}

/// AFMoE's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::ScaleInFloat32;
    spec.qk_norm = true;
    spec.sandwich_norms = true;
    spec.mlp_bias = false;
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-5;
    spec.output_gate = Some(OutputGate::Sigmoid { bias: false });
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => {
            let every = cfg.usize_or("global_attn_every_n_layers", 4)?.max(1);
            (0..layers).map(|i| (i + 1) % every != 0).collect()
        }
    };
    spec.windows =
        DecoderSpec::sliding_windows(&sliding, cfg.nullable_usize_or("sliding_window", Some(1024))?)?;
    spec.nope = sliding.iter().map(|&s| !s).collect();
    if cfg.bool_or("mup_enabled", false)? {
        spec.embedding_multiplier = Some((cfg.usize("hidden_size")? as f64).sqrt());
    }
    let dense = cfg.usize_or("num_dense_layers", 1)?;
    let intermediate = cfg.usize_or("moe_intermediate_size", 1408)?;
    let shared = intermediate.saturating_mul(cfg.usize_or("num_shared_experts", 2)?);
    spec.moe = Some(MoeSpec {
        shared: (shared > 0).then_some(SharedExpert::Plain(shared)),
        ..MoeSpec::routed(
            cfg.usize_or("num_experts", 64)?,
            intermediate,
            Routing {
                top_k: cfg.usize_or("num_experts_per_tok", 6)?,
                normalize: true,
                round_weights: false,
                scoring: Scoring::BiasedSigmoid { softcap: None },
                scale: cfg.f64_or("route_scale", 1.0)?,
            },
            (0..layers).map(|i| i >= dense).collect(),
        )
    });
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_of(json: &str) -> DecoderSpec {
        spec(&Config::from_json_str(json).unwrap()).unwrap()
    }

    /// The class's pattern: every fourth layer full and without RoPE, the first dense.
    #[test]
    fn layer_pattern_and_mixtures() {
        let s = spec_of(r#"{"num_hidden_layers": 5, "hidden_size": 16}"#);
        let w = Some(1024);
        assert_eq!(s.windows, vec![w, w, w, None, w]);
        assert_eq!(s.nope, vec![false, false, false, true, false]);
        let moe = s.moe.unwrap();
        assert_eq!(moe.sparse_layers, vec![false, true, true, true, true]);
        assert!(matches!(moe.shared, Some(SharedExpert::Plain(2816))));
        assert_eq!(s.embedding_multiplier, None);
        let mup = spec_of(
            r#"{"num_hidden_layers": 1, "hidden_size": 16, "mup_enabled": true,
            "num_dense_layers": 0, "num_shared_experts": 0}"#,
        );
        assert_eq!(mup.embedding_multiplier, Some(4.0));
        let moe = mup.moe.unwrap();
        assert_eq!((moe.sparse_layers, moe.shared.is_none()), (vec![true], true));
    }

    #[test]
    fn checkpoint_names() {
        assert_eq!(decoder_name("model.layers.1.mlp.router.gate.weight"), "model.layers.1.mlp.gate.weight");
        assert_eq!(
            decoder_name("model.layers.1.mlp.expert_bias"),
            "model.layers.1.mlp.gate.e_score_correction_bias"
        );
        assert_eq!(
            decoder_name("model.layers.0.post_mlp_layernorm.weight"),
            "model.layers.0.post_feedforward_layernorm.weight"
        );
    }
}

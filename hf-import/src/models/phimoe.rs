//! PhiMoE (`PhimoeForCausalLM`, `PhimoeModel`, `PhimoeForSequenceClassification`:
//! microsoft/Phi-3.5-MoE-instruct): Mixtral's layout (`block_sparse_moe.{gate, experts.{j}.{w1,
//! w3, w2}}`) with layer norms (scale and shift, `rms_norm_eps`), optional biases on the attention
//! projections (`attention_bias`) and on the LM head (`lm_head_bias`), and routing by the
//! sparsemixer ([`Scoring::SparseMixer`]): two experts a token whatever `num_experts_per_tok`
//! says, weighed without renormalising. Its LongRoPE always divides by the short factors and
//! scales cos and sin by `short_mscale`, or `long_mscale` past `original_max_position_embeddings`
//! (see [`RopeScaling::LongRope`]), and generation recomputes the cache on crossing that length.

use super::decoder::{CausalLm, DecoderSpec, MoeSpec};
use super::family::causal_lm_newtype;
use super::moe::mixtral_name;
use crate::config::{Config, RopeScaling};
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `PhimoeForCausalLM`.
    PhimoeForCausalLM
);

impl PhimoeForCausalLM {
    /// Loads the model, from Mixtral-style names as checkpoints store them or transformers 5's
    /// in-memory ones (`mlp.router`, fused `mlp.experts.gate_up_proj`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| Some(mixtral_name(n).replacen(".mlp.router.", ".mlp.gate.", 1)));
        Ok(PhimoeForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

/// The decoder `PhimoeConfig` describes, with its class's defaults (8 key/value heads, 16 experts,
/// norm eps 1e-5, router jitter 0.01, no window).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let layers = cfg.layers("num_hidden_layers")?;
    spec.layer_norm = true;
    spec.mlp_bias = false;
    spec.lm_head_bias = cfg.bool_or("lm_head_bias", false)?;
    spec.default_kv_heads = Some(8);
    spec.default_rms_norm_eps = 1e-5;
    spec.windows = vec![cfg.nullable_usize_or("sliding_window", None)?; layers];
    // As `PhimoeForCausalLM.prepare_inputs_for_generation`: once the sequence reaches the
    // original length + 1, the cache is recomputed (with the long mscale).
    let original = match cfg.rope(None)?.scaling {
        RopeScaling::LongRope { original_max_position_embeddings, .. } => {
            Some(original_max_position_embeddings as usize)
        }
        _ => cfg.opt_usize("original_max_position_embeddings")?,
    };
    spec.recompute_cache_at = original.map(|o| o.saturating_add(1));
    let experts = cfg.usize_or("num_local_experts", 16)?;
    if experts < 2 {
        return Err(Error::Config(format!(
            "PhiMoE's sparsemixer routes every token to two experts; num_local_experts is {experts}"
        )));
    }
    spec.moe = Some(MoeSpec {
        ungated: None,
        experts,
        intermediate: cfg.usize_or("intermediate_size", 6400)?,
        routing: Routing {
            top_k: 2,
            normalize: false,
            round_weights: true,
            scoring: Scoring::SparseMixer { jitter_eps: cfg.f64_or("router_jitter_noise", 0.01)? },
            scale: 1.0,
        },
        sparse_layers: vec![true; layers],
        shared: None,
        biased: false,
        shared_bias: false,
        glu: Glu::Product,
    });
    Ok(spec)
}

//! Mistral 4 (`Mistral4ForCausalLM`, model type `mistral4`; its base model and sequence and token
//! classifiers): DeepSeek-V3's blocks (multi-head latent attention, dense MLPs on the first
//! `first_k_dense_replace` layers, then routed experts beside shared ones) with a softmax router
//! over groups (`Scoring::GroupedSoftmax`) and Ministral 3's per-position query scale
//! (`llama_4_scaling_beta`, `original_max_position_embeddings` of the rope dict), its YaRN RoPE
//! over the `qk_rope_head_dim` dims of each head.

use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::{latent_spec_with, routed_mixture, MixtureDefaults};
use super::family::causal_lm_newtype;
use super::ministral3::query_scale;
use crate::config::Config;
use crate::error::Result;
use crate::layers::{LatentDims, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Mistral4ForCausalLM`.
    Mistral4ForCausalLM
);

impl Mistral4ForCausalLM {
    /// Loads the model from a Mistral 4 config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(Mistral4ForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg)?)?))
    }
}

/// `Mistral4Config`'s mixture.
const MISTRAL4: MixtureDefaults = MixtureDefaults {
    experts: Some(128),
    intermediate: 2048,
    shared: Some(1),
    first_sparse: 0,
    top_k: Some(4),
    groups: (1, 1),
    normalize: true,
    scale: 1.0,
};

/// The config with `Mistral4Config`'s rope dict where it names none (YaRN of factor 128 over 8192
/// positions, the query scale's beta 0.1).
pub(super) fn decoder_config(cfg: &Config) -> Result<Config> {
    let max_positions = cfg.usize_or("max_position_embeddings", 1_048_576)?;
    Ok(cfg.with_class_rope(json!({
        "type": "yarn",
        "rope_theta": 10000.0,
        "factor": 128.0,
        "original_max_position_embeddings": 8192,
        "max_position_embeddings": max_positions,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale_all_dim": 1.0,
        "mscale": 1.0,
        "llama_4_scaling_beta": 0.1,
    })))
}

/// Mistral 4's decoder (see the module docs).
pub(super) fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let dims = LatentDims {
        q_rank: cfg.nullable_usize_or("q_lora_rank", Some(1024))?,
        kv_rank: cfg.usize_or("kv_lora_rank", 256)?,
        nope: cfg.usize_or("qk_nope_head_dim", 64)?,
        rope: cfg.usize_or("qk_rope_head_dim", 64)?,
        v: cfg.nullable_usize_or("v_head_dim", Some(128))?.unwrap_or(128),
        interleaved: cfg.bool_or("rope_interleave", true)?,
    };
    let mut spec = latent_spec_with(cfg, dims)?;
    let groups = cfg.nullable_usize_or("n_group", Some(1))?.unwrap_or(1);
    let top_groups = cfg.nullable_usize_or("topk_group", Some(1))?.unwrap_or(1);
    let normalize = cfg.bool_or("norm_topk_prob", true)?;
    let mut moe = routed_mixture(cfg, MISTRAL4, Scoring::GroupedSoftmax { groups, top_groups }, normalize)?;
    // (The weights scale the experts' outputs in the model dtype.)
    moe.routing.round_weights = true;
    spec.moe = Some(moe);
    spec.query_scale = Some(query_scale(cfg, "Mistral 4")?);
    Ok(spec)
}

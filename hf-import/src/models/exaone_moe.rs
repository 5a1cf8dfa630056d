//! EXAONE-MoE (`ExaoneMoeForCausalLM`, `ExaoneMoeModel`: LGAI-EXAONE's K-EXAONE): EXAONE 4's
//! attention (per-head q/k norms, sliding and global layers, the global ones without RoPE) in
//! pre-norm blocks, and DeepSeek-V3's mixture on the layers `mlp_layer_types` marks `sparse` (else
//! from `first_k_dense_replace`): `num_experts` experts routed by biased sigmoid scores within
//! groups, renormalised and scaled by `routed_scaling_factor`, plus `num_shared_experts` shared
//! ones. Checkpoints keep the router's bias as `mlp.e_score_correction_bias`.

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::{sparse_layers_by_type, v3_mixture, MixtureDefaults};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `ExaoneMoeForCausalLM`.
    ExaoneMoeForCausalLM
);

impl ExaoneMoeForCausalLM {
    /// Loads the model from an EXAONE-MoE config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| {
            Some(n.replacen(".mlp.e_score_correction_bias", ".mlp.gate.e_score_correction_bias", 1))
        });
        Ok(ExaoneMoeForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

/// `ExaoneMoeConfig`'s mixture.
const EXAONE_MOE: MixtureDefaults = MixtureDefaults {
    experts: Some(64),
    intermediate: 1024,
    shared: Some(1),
    first_sparse: 1,
    top_k: Some(8),
    groups: (1, 1),
    normalize: true,
    scale: 2.5,
};

/// The decoder `ExaoneMoeConfig` describes.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = super::exaone4::spec(cfg)?;
    spec.post_norms_only = false;
    // (Its mixture's keys under DeepSeek's names.)
    let mut json = cfg.json().clone();
    for (from, to) in [("num_experts", "n_routed_experts"), ("num_shared_experts", "n_shared_experts")] {
        if let Some(v) = json.remove(from) {
            json.insert(to.into(), v);
        }
    }
    let mut moe = v3_mixture(&Config::from_map(json), EXAONE_MOE)?;
    if let Some(sparse) = sparse_layers_by_type(cfg, moe.sparse_layers.len())? {
        moe.sparse_layers = sparse;
    }
    spec.moe = Some(moe);
    Ok(spec)
}

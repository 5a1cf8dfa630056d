//! GLM-4.7-Flash (`Glm4MoeLiteForCausalLM`, model type `glm4_moe_lite`): DeepSeek-V3's multi-head
//! latent attention (interleaved RoPE with `rope_interleave`, YaRN's attention scale) with
//! GLM-4-MoE's mixture (64 experts of 1536, 4 a token by biased sigmoid scores, renormalised,
//! scaled by 1.8, a shared expert) on the layers `mlp_layer_types` marks `sparse` (by default all
//! but the first).

use super::decoder::DecoderSpec;
use super::deepseek::{sparse_layers_by_type, v3_spec_with, MixtureDefaults};
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// `Glm4MoeLiteConfig`'s mixture.
const GLM4_MOE_LITE: MixtureDefaults = MixtureDefaults {
    experts: Some(64),
    intermediate: 1536,
    shared: Some(1),
    first_sparse: 1,
    top_k: Some(4),
    groups: (1, 1),
    normalize: true,
    scale: 1.8,
};

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = v3_spec_with(cfg, GLM4_MOE_LITE)?;
    spec.default_rms_norm_eps = 1e-5;
    if let Some(moe) = spec.moe.as_mut() {
        let layers = moe.sparse_layers.len();
        // (`Glm4MoeLiteConfig` has no `first_k_dense_replace`: the first layer is dense by default.)
        moe.sparse_layers =
            sparse_layers_by_type(cfg, layers)?.unwrap_or_else(|| (0..layers).map(|i| i > 0).collect());
    }
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Glm4MoeLiteForCausalLM`.
    Glm4MoeLiteForCausalLM,
    spec
);

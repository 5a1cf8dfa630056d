//! GLM-4-MoE (`Glm4MoeForCausalLM`, `Glm4MoeModel`: zai-org's GLM-4.5 and GLM-4.5-Air): GLM's
//! partial RoPE (`partial_rotary_factor` 0.5 by default, half-split here, not interleaved), q/k/v
//! biases with `attention_bias`, per-head q/k norms with `use_qk_norm`, and DeepSeek-V3's mixture
//! from layer `first_k_dense_replace` on (sigmoid routing biased by `e_score_correction_bias`,
//! shared experts). The checkpoint's multi-token-prediction layers past `num_hidden_layers` are
//! not read.

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::{v3_mixture, MixtureDefaults};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Glm4MoeForCausalLM`.
    Glm4MoeForCausalLM
);

impl Glm4MoeForCausalLM {
    /// Loads the model from a GLM-4-MoE config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = super::glm::decoder_config(cfg)?;
        let spec = spec(&cfg)?;
        Ok(Glm4MoeForCausalLM(CausalLm::load(&cfg, weights, spec)?))
    }
}

/// `Glm4MoeConfig`'s mixture.
const GLM4_MOE: MixtureDefaults = MixtureDefaults {
    experts: Some(128),
    intermediate: 1408,
    shared: Some(1),
    first_sparse: 1,
    top_k: Some(8),
    groups: (1, 1),
    normalize: true,
    scale: 1.0,
};

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.o_bias, spec.mlp_bias) = (false, false);
    spec.qk_norm = cfg.bool_or("use_qk_norm", false)?;
    spec.default_kv_heads = Some(8);
    spec.default_rms_norm_eps = 1e-5;
    spec.moe = Some(v3_mixture(cfg, GLM4_MOE)?);
    Ok(spec)
}

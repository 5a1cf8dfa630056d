//! Solar Open (`SolarOpenForCausalLM`, model type `solar_open`: upstage/Solar-Open-100B): Llama's
//! attention (q/k/v biases with `attention_bias`, none on the output; RoPE over whole heads of 128,
//! base 1000000) with GLM-4-MoE's mixture in every layer: 128 experts of 1280, 8 a token chosen by
//! sigmoid scores biased by `e_score_correction_bias` (DeepSeek-V3's router, one group by default),
//! renormalised, plus a shared expert.

use super::decoder::DecoderSpec;
use super::deepseek::{v3_mixture, MixtureDefaults};
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// `SolarOpenConfig`'s mixture.
const SOLAR_OPEN: MixtureDefaults = MixtureDefaults {
    experts: Some(128),
    intermediate: 1280,
    shared: Some(1),
    first_sparse: 0,
    top_k: Some(8),
    groups: (1, 1),
    normalize: true,
    scale: 1.0,
};

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.o_bias, spec.mlp_bias) = (false, false);
    spec.default_kv_heads = Some(8);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-5;
    let mut moe = v3_mixture(cfg, SOLAR_OPEN)?;
    // (`SolarOpenConfig` has no `first_k_dense_replace`: every layer's MLP is the mixture.)
    moe.sparse_layers.fill(true);
    spec.moe = Some(moe);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `SolarOpenForCausalLM`.
    SolarOpenForCausalLM,
    spec
);

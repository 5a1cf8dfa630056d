//! OLMo (`OlmoForCausalLM`: layer norms without weight or bias, `clip_qkv`) and OLMo 2
//! (`Olmo2ForCausalLM`: no norm before attention or the MLP, RMS norms after them, q and k normed
//! over their whole projection): Llama's blocks otherwise.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};

/// OLMo: parameterless layer norms (epsilon 1e-5), q, k and v clamped to `clip_qkv`.
fn olmo_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.layer_norm = true;
    spec.parameterless_norms = true;
    spec.default_rms_norm_eps = 1e-5;
    spec.clip_qkv = clip_qkv(cfg)?;
    Ok(spec)
}

/// `clip_qkv`: a positive number or null.
fn clip_qkv(cfg: &Config) -> Result<Option<f64>> {
    match cfg.nullable_f64_or("clip_qkv", None)? {
        Some(c) if c.is_nan() || c <= 0.0 => {
            Err(Error::Config(format!("clip_qkv must be positive, got {c}")))
        }
        c => Ok(c),
    }
}

/// OLMo 2: post-norms only, whole-projection q/k norms, the norm's product in float32.
fn olmo2_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.post_norms_only = true;
    spec.qk_norm = true;
    spec.qk_norm_whole = true;
    spec.norm_style = crate::layers::RmsNormStyle::ScaleInFloat32;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `OlmoForCausalLM`.
    OlmoForCausalLM,
    olmo_spec
);

causal_lm_family!(
    /// transformers' `Olmo2ForCausalLM`.
    Olmo2ForCausalLM,
    olmo2_spec
);

//! OLMo (`OlmoForCausalLM`: layer norms without weight or bias, `clip_qkv`), OLMo 2
//! (`Olmo2ForCausalLM`: no norm before attention or the MLP, RMS norms after them, q and k normed
//! over their whole projection), OLMo 3 (`Olmo3ForCausalLM`: OLMo 2 with sliding-window layers,
//! each layer type with RoPE parameters of its own) and OLMoE (`OlmoeForCausalLM`: Llama's
//! pre-norm blocks with whole-projection q/k norms, `clip_qkv` after them, and a mixture of
//! experts in every layer): Llama's blocks otherwise.

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

/// OLMo 3: OLMo 2's blocks; `layer_types` (default: every fourth layer full, the others
/// sliding) give each layer its window (`sliding_window`, default 4096) and its RoPE (the
/// `sliding_attention` or `full_attention` parameters: see `Config::rope`).
fn olmo3_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = olmo2_spec(cfg)?;
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding =
        DecoderSpec::sliding_layers(cfg)?.unwrap_or_else(|| (0..layers).map(|i| (i + 1) % 4 != 0).collect());
    let window = cfg.nullable_usize_or("sliding_window", Some(4096))?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.local_rope = sliding;
    Ok(spec)
}

/// OLMoE: Llama's blocks with q and k normed over their whole projection, then clamped to
/// `clip_qkv`; every layer's MLP a mixture of `num_experts` (64) experts of `intermediate_size`
/// (2048), `num_experts_per_tok` (8) a token, probabilities renormalised with `norm_topk_prob`.
fn olmoe_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.qk_norm_whole = true;
    spec.clip_qkv = clip_qkv(cfg)?;
    spec.clip_after_qk_norm = true;
    spec.default_rms_norm_eps = 1e-5;
    let intermediate = cfg.usize_or("intermediate_size", 2048)?;
    spec.moe = Some(super::moe::qwen_mixture(cfg, 64, intermediate, 8, None)?);
    Ok(spec)
}

/// FlexOLMo: OLMo 2's blocks with OLMoE's mixture in every layer (`num_experts` (7) experts of
/// `intermediate_size`, `num_experts_per_tok` (5) a token, renormalised with `norm_topk_prob`),
/// `FlexOlmoConfig`'s epsilon 1e-6 and RoPE base 5e5.
fn flex_olmo_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = olmo2_spec(cfg)?;
    spec.default_rms_norm_eps = 1e-6;
    let intermediate = cfg.usize_or("intermediate_size", 11008)?;
    spec.moe = Some(super::moe::qwen_mixture(cfg, 7, intermediate, 5, None)?);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `FlexOlmoForCausalLM`.
    FlexOlmoForCausalLM,
    flex_olmo_spec
);

causal_lm_family!(
    /// transformers' `OlmoeForCausalLM`.
    OlmoeForCausalLM,
    olmoe_spec
);

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

causal_lm_family!(
    /// transformers' `Olmo3ForCausalLM`.
    Olmo3ForCausalLM,
    olmo3_spec
);

//! Qwen3 (`Qwen3ForCausalLM`): Llama with per-head RMS norms on q and k and an explicit `head_dim`.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use super::qwen2::qwen_common;
use crate::config::Config;
use crate::error::Result;

/// Qwen3: Qwen2's windows with q/k norms, `attention_bias` on all four projections and
/// `Qwen3Config`'s `head_dim` of 128.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = qwen_common(cfg)?;
    spec.qk_norm = true;
    spec.default_head_dim = Some(128);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Qwen3ForCausalLM`.
    Qwen3ForCausalLM,
    spec
);

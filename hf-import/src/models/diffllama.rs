//! DiffLlama (`DiffLlamaForCausalLM`, model type `diffllama`; its base model and sequence and
//! token classifiers): Llama's blocks with differential attention (see
//! [`crate::layers::Differential`]): two softmax attentions whose difference, weighted by a learned
//! `λ` per layer, is normed per pair of heads.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};

/// DiffLlama's decoder: Llama's with differential attention (`DiffLlamaConfig`: one key/value head
/// per head by default, `rms_norm_eps` 1e-5).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.default_rms_norm_eps = 1e-5;
    spec.differential = true;
    if cfg.f64_or("attention_dropout", 0.0)? > 0.0 {
        // (`DiffLlamaAttention` refuses it too.)
        return Err(Error::Config("DiffLlama does not support attention_dropout > 0".into()));
    }
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `DiffLlamaForCausalLM`.
    DiffLlamaForCausalLM,
    spec
);

//! Granite (`GraniteForCausalLM`, IBM's Granite 3 language models): Llama's blocks with four
//! multipliers: the embeddings scaled by `embedding_multiplier`, attention scores by
//! `attention_multiplier` (in place of `head_dim^-0.5`), each block's attention and MLP outputs by
//! `residual_multiplier` before their residual adds, and the logits divided by `logits_scaling`
//! (all 1 by default, as `GraniteConfig` has them).

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let multiplier = |key: &str| -> Result<f64> {
        let m = cfg.f64_or(key, 1.0)?;
        if !m.is_finite() || (key == "logits_scaling" && m == 0.0) {
            return Err(Error::Config(format!(
                "\"{key}\" must be a finite number (nonzero for logits_scaling), got {m}"
            )));
        }
        Ok(m)
    };
    spec.attention_scale = Some(multiplier("attention_multiplier")?);
    spec.embedding_multiplier = Some(multiplier("embedding_multiplier")?);
    spec.residual_multiplier = Some(multiplier("residual_multiplier")?);
    spec.logits_scaling = Some(multiplier("logits_scaling")?);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `GraniteForCausalLM`.
    GraniteForCausalLM,
    spec
);

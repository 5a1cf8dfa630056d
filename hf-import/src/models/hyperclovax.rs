//! HyperCLOVA X (`HyperCLOVAXForCausalLM`, model type `hyperclovax`:
//! naver-hyperclovax/HyperCLOVAX-SEED-Think-14B): Granite's blocks and µP multipliers with, when
//! `use_post_norm` (default true), a norm closing each branch before its residual multiplier
//! (Peri-LN: `x + m·post_norm1(attn(norm(x)))`, then the same around the MLP), and the logits
//! multiplied by `logits_scaling` where Granite divides by it.
//!
//! The checkpoint's `post_norm1`, `post_attention_layernorm` (before the MLP) and `post_norm2` are
//! read as the decoder's sandwich norms.

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `HyperCLOVAXForCausalLM`.
    HyperCLOVAXForCausalLM
);

impl HyperCLOVAXForCausalLM {
    /// Loads the model from a HyperCLOVA X config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let spec = spec(cfg)?;
        let lm = if spec.sandwich_norms {
            CausalLm::load(cfg, &weights.renamed(|n| Some(decoder_name(n))), spec)?
        } else {
            CausalLm::load(cfg, weights, spec)?
        };
        Ok(HyperCLOVAXForCausalLM(lm))
    }
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = super::granite::spec(cfg)?;
    spec.logit_scale = spec.logits_scaling.take();
    // (`HyperCLOVAXConfig` leaves an absent or null `attention_multiplier` at `head_dim^-0.5`.)
    if cfg.get("attention_multiplier").is_none() {
        spec.attention_scale = None;
    }
    spec.sandwich_norms = cfg.bool_or("use_post_norm", true)?;
    Ok(spec)
}

/// A layer norm's name among the decoder's sandwich norms.
fn decoder_name(name: &str) -> String {
    for (own, common) in [
        (".post_norm1.", ".post_attention_layernorm."),
        (".post_attention_layernorm.", ".pre_feedforward_layernorm."),
        (".post_norm2.", ".post_feedforward_layernorm."),
    ] {
        if let Some((stem, rest)) = name.split_once(own) {
            return format!("{stem}{common}{rest}");
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_norms_are_read_as_sandwich_norms() {
        assert_eq!(
            decoder_name("model.layers.3.post_norm1.weight"),
            "model.layers.3.post_attention_layernorm.weight"
        );
        assert_eq!(
            decoder_name("model.layers.3.post_attention_layernorm.weight"),
            "model.layers.3.pre_feedforward_layernorm.weight"
        );
        assert_eq!(
            decoder_name("model.layers.0.post_norm2.weight"),
            "model.layers.0.post_feedforward_layernorm.weight"
        );
        assert_eq!(decoder_name("model.norm.weight"), "model.norm.weight");
    }
}

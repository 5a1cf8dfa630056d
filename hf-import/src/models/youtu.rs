//! Youtu-LLM (`YoutuForCausalLM`, model type `youtu`: tencent/Youtu-LLM-2B): DeepSeek-V3's
//! multi-head latent attention (interleaved RoPE with `rope_interleave`, YaRN's attention scale)
//! in Llama's blocks, with a dense gated MLP in every layer and `YoutuConfig`'s tied embeddings.
//!
//! transformers 5.24 zeroes the embedding row of `pad_token_id` whenever it loads a Youtu
//! checkpoint (its `_init_weights` writes through `weight.data`, past the guard that keeps loaded
//! tensors): that row, and with tied embeddings the pad token's logit, are zero here too (a
//! checkpoint's `lm_head.weight` equal to the embeddings is then tied to them, zeroed alike).

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::v3_latent_spec;
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `YoutuForCausalLM`.
    YoutuForCausalLM
);

impl YoutuForCausalLM {
    /// Loads the model from a Youtu config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = match cfg.nullable_usize_or("pad_token_id", None).ok().flatten() {
            Some(pad) => {
                // (transformers ties the head before zeroing: a head equal to the embeddings loses
                // the row too.)
                let head_is_embed = cfg.bool_or("tie_word_embeddings", true)?
                    && match (weights.get("lm_head.weight")?, weights.get("model.embed_tokens.weight")?) {
                        (Some(h), Some(e)) => h.dims() == e.dims() && h.equal(&e)?,
                        _ => false,
                    };
                weights.replaced(|name, t| {
                    let zeroed =
                        name.ends_with("embed_tokens.weight") || (head_is_embed && name == "lm_head.weight");
                    match zeroed && t.rank() == 2 && pad < t.dims()[0] {
                        true => Ok(Some(t.index_fill(
                            0,
                            &Tensor::from_vec(vec![pad as i64], [1])?.to(t.device())?,
                            0.0,
                        )?)),
                        false => Ok(None),
                    }
                })?
            }
            None => weights.clone(),
        };
        Ok(YoutuForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = v3_latent_spec(cfg)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    Ok(spec)
}

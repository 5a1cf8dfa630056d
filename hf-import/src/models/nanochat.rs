//! NanoChat (`NanoChatForCausalLM`, model type `nanochat`: karpathy/nanochat's models as
//! transformers runs them): Llama's blocks whose every norm is a weightless RMS norm (also on the
//! embeddings, before the first layer), q and k normed per head after RoPE, an ungated MLP
//! (`fc1`, squared ReLU, `fc2`), no biases and Gemma 2's final logit soft-capping (15 by default).
//!
//! Its RoPE turns the other way (`rotate_half` is `[x2, -x1]`): rotating by `-θ` is the usual
//! rotation by `θ` of q and k with each head's two halves swapped, which leaves the scores (and
//! the per-head norms) unchanged, so the rows of `q_proj` and `k_proj` are swapped so at load.
//! The weightless norms are read as norms of ones.

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `NanoChatForCausalLM`.
    NanoChatForCausalLM
);

impl NanoChatForCausalLM {
    /// Loads the model from a NanoChat config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let spec = spec(cfg)?;
        Ok(NanoChatForCausalLM(CausalLm::load(cfg, &decoder_weights(weights, cfg)?, spec)?))
    }
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.mlp_bias = false;
    spec.act = Activation::from_name(cfg.str_or("hidden_act", "relu2")?)?;
    spec.plain_mlp = true;
    spec.qk_norm = true;
    spec.qk_norm_after_rope = true;
    spec.embed_norm = true;
    spec.final_softcap = match cfg.get("final_logit_softcapping") {
        None if cfg.json().contains_key("final_logit_softcapping") => None,
        None => Some(15.0),
        Some(_) => Some(cfg.f64_or("final_logit_softcapping", 15.0)?),
    };
    Ok(spec)
}

/// The checkpoint under the decoder's names: `fc1`/`fc2` as `up_proj`/`down_proj`, the rows of
/// `q_proj` and `k_proj` with each head's halves swapped, and norms of ones.
fn decoder_weights(weights: &Weights, cfg: &Config) -> Result<Weights> {
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize("num_attention_heads")?;
    let head_dim = cfg.nullable_usize_or("head_dim", None)?.unwrap_or(hidden / heads.max(1));
    if head_dim % 2 == 1 {
        return Err(Error::Config(format!("RoPE rotates pairs of dims: head_dim {head_dim} is odd")));
    }
    let prefix = if weights.contains("model.embed_tokens.weight") { "model." } else { "" };
    let embed = weights.get(&format!("{prefix}embed_tokens.weight"))?.ok_or_else(|| {
        Error::Weight(format!("tensor '{prefix}embed_tokens.weight' is missing from the checkpoint"))
    })?;
    let ones = |n: usize| Tensor::ones([n], (embed.dtype(), embed.device()));
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() * 2);
    for item in weights.iter() {
        let (name, t) = item?;
        let name = name.replace(".mlp.fc1.", ".mlp.up_proj.").replace(".mlp.fc2.", ".mlp.down_proj.");
        let qk = [".self_attn.q_proj.", ".self_attn.k_proj."].iter().any(|p| name.contains(p));
        let t = if qk { swap_head_halves(&name, &t, head_dim)? } else { t };
        out.push((name, t));
    }
    for i in 0..cfg.layers("num_hidden_layers")? {
        let layer = format!("{prefix}layers.{i}");
        for norm in ["input_layernorm", "post_attention_layernorm"] {
            out.push((format!("{layer}.{norm}.weight"), ones(hidden)?));
        }
        for norm in ["q_norm", "k_norm"] {
            out.push((format!("{layer}.self_attn.{norm}.weight"), ones(head_dim)?));
        }
    }
    out.push((format!("{prefix}norm.weight"), ones(hidden)?));
    out.push((format!("{prefix}embed_norm.weight"), ones(hidden)?));
    Ok(Weights::from_tensors(out))
}

/// A projection's rows (`[heads × head_dim, in]`, or its bias `[heads × head_dim]`) with each
/// head's two halves swapped.
fn swap_head_halves(name: &str, t: &Tensor, head_dim: usize) -> Result<Tensor> {
    let dims = t.dims().to_vec();
    if !matches!(dims.len(), 1 | 2) || head_dim == 0 || !dims[0].is_multiple_of(head_dim) {
        return Err(Error::Weight(format!(
            "tensor '{name}' has shape {dims:?}; it needs rows in heads of {head_dim}"
        )));
    }
    let cols = dims.get(1).copied().unwrap_or(1);
    let halves = t.reshape([dims[0] / head_dim, 2, head_dim / 2, cols])?;
    Ok(halves.flip([1])?.reshape(dims)?.contiguous()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_heads_halves_are_swapped() {
        let t = Tensor::from_vec((0..8).map(|x| x as f32).collect::<Vec<_>>(), [8, 1]).unwrap();
        let swapped = swap_head_halves("q", &t, 4).unwrap();
        assert_eq!(swapped.to_vec::<f32>().unwrap(), vec![2.0, 3.0, 0.0, 1.0, 6.0, 7.0, 4.0, 5.0]);
        assert!(swap_head_halves("q", &t, 3).is_err());
        let bias = Tensor::from_vec((0..4).map(|x| x as f32).collect::<Vec<_>>(), [4]).unwrap();
        assert_eq!(
            swap_head_halves("b", &bias, 4).unwrap().to_vec::<f32>().unwrap(),
            vec![2.0, 3.0, 0.0, 1.0]
        );
    }
}

//! ERNIE 4.5 (`Ernie4_5ForCausalLM`, `Ernie4_5Model`: baidu/ERNIE-4.5-0.3B and the dense models):
//! Llama's blocks with RoPE rotating interleaved pairs over the whole head (GLM's style), biases on
//! every projection with `use_bias`, and `Ernie4_5Config`'s defaults (two key/value heads of 128,
//! tied embeddings). q and k (weights and biases) are reordered at load so that the decoder's
//! half-split rotation rotates the interleaved pairs ([`halves_from_interleaved`]).

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::halves_from_interleaved;
use crate::weights::Weights;

/// transformers' `Ernie4_5ForCausalLM`.
#[derive(Debug, Clone)]
pub struct Ernie4_5ForCausalLM(pub CausalLm);

impl std::ops::Deref for Ernie4_5ForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl Ernie4_5ForCausalLM {
    /// Loads the model from an ERNIE 4.5 config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let spec = spec(cfg)?;
        Ok(Ernie4_5ForCausalLM(CausalLm::load(cfg, &decoder_weights(weights, cfg)?, spec)?))
    }
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let bias = cfg.bool_or("use_bias", false)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (bias, bias, bias);
    spec.default_head_dim = Some(128);
    spec.default_kv_heads = Some(2);
    spec.default_rms_norm_eps = 1e-5;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    Ok(spec)
}

/// The checkpoint with q and k reordered for the half-split rotation.
fn decoder_weights(weights: &Weights, cfg: &Config) -> Result<Weights> {
    let heads = cfg.usize("num_attention_heads")?;
    let kv_heads = cfg.nullable_usize_or("num_key_value_heads", Some(2))?.unwrap_or(heads);
    let head_dim =
        cfg.nullable_usize_or("head_dim", Some(128))?.unwrap_or(cfg.usize("hidden_size")? / heads.max(1));
    with_interleaved_qk(weights, heads, kv_heads, head_dim)
}

/// `weights` with every layer's `self_attn.q_proj` (`heads` heads) and `self_attn.k_proj`
/// (`kv_heads`) rows and biases reordered so that the decoder's half-split rotation of whole
/// `head_dim` heads rotates the checkpoint's interleaved pairs (ERNIE 4.5, Helium).
pub(super) fn with_interleaved_qk(
    weights: &Weights,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        let n = if name.contains(".self_attn.q_proj.") {
            Some(heads)
        } else if name.contains(".self_attn.k_proj.") {
            Some(kv_heads)
        } else {
            None
        };
        let t = match n {
            Some(n) => halves_from_interleaved(&t, n, head_dim, head_dim)
                .map_err(|e| Error::Weight(format!("tensor '{name}': {e}")))?,
            None => t,
        };
        out.push((name.clone(), t));
    }
    Ok(Weights::from_tensors(out))
}

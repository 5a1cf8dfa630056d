//! StarCoder2 (`Starcoder2ForCausalLM`): Llama's block with layer norms (`norm_epsilon`), biases on
//! every projection (`use_bias`), an ungated `c_fc`/`c_proj` MLP (read as `up_proj`/`down_proj`),
//! the window of `sliding_window` on every layer, the head tied by default.

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::Result;
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `Starcoder2ForCausalLM`.
#[derive(Debug, Clone)]
pub struct Starcoder2ForCausalLM(pub CausalLm);

impl std::ops::Deref for Starcoder2ForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl Starcoder2ForCausalLM {
    /// Loads the model (its MLP names read as the decoder's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| {
            Some(n.replace(".mlp.c_fc.", ".mlp.up_proj.").replace(".mlp.c_proj.", ".mlp.down_proj."))
        });
        Ok(Starcoder2ForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

/// StarCoder2 as a [`DecoderSpec`] (`Starcoder2Config`'s defaults: 2 key/value heads,
/// `gelu_pytorch_tanh`, biases, tied head, no window).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let bias = cfg.bool_or("use_bias", true)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (bias, bias, bias);
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str_or("hidden_act", "gelu_pytorch_tanh")?)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_kv_heads = Some(2);
    spec.default_rms_norm_eps = cfg.f64_or("norm_epsilon", 1e-5)?;
    spec.windows = vec![cfg.nullable_usize_or("sliding_window", None)?; cfg.layers("num_hidden_layers")?];
    Ok(spec)
}

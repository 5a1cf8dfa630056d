//! Phi (`PhiForCausalLM`: phi-1, phi-1.5, phi-2): one layer norm feeding attention and MLP in
//! parallel, `x + attn(ln(x)) + mlp(ln(x))`, biases everywhere (the LM head's too), RoPE over
//! `partial_rotary_factor` of each head (0.5 by default), an ungated `fc1`/`fc2` MLP. The checkpoint
//! is read under the decoder's names (`self_attn.dense` as `o_proj`, `fc1`/`fc2` as
//! `up_proj`/`down_proj`, `final_layernorm` as `norm`, the one layer norm as both of a layer's).

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// transformers' `PhiForCausalLM`.
#[derive(Debug, Clone)]
pub struct PhiForCausalLM(pub CausalLm);

impl std::ops::Deref for PhiForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl PhiForCausalLM {
    /// Loads the model from a Phi config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        if cfg.bool_or("qk_layernorm", false)? {
            return Err(Error::Unsupported("Phi with qk_layernorm is not supported".into()));
        }
        let cfg = decoder_config(cfg)?;
        Ok(PhiForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights)?, spec(&cfg)?)?))
    }
}

/// `layer_norm_eps` as the decoder's epsilon; `PhiConfig`'s RoPE share of 0.5 where the config
/// gives none.
fn decoder_config(cfg: &Config) -> Result<Config> {
    let mut json = cfg.json().clone();
    json.insert("rms_norm_eps".into(), cfg.f64_or("layer_norm_eps", 1e-5)?.into());
    let in_dict = cfg.get("rope_parameters").and_then(|r| r.get("partial_rotary_factor")).is_some();
    if !in_dict && cfg.get("partial_rotary_factor").is_none() {
        json.insert("partial_rotary_factor".into(), 0.5.into());
    }
    Ok(Config::from_map(json))
}

/// Phi as a [`DecoderSpec`].
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias, spec.lm_head_bias) = (true, true, true, true);
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.parallel_residual = true;
    spec.act = crate::layers::Activation::from_name(cfg.str_or("hidden_act", "gelu_new")?)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names.
fn decoder_weights(weights: &Weights) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 8);
    for item in weights.iter() {
        let (name, t) = item?;
        let renamed = name
            .replace(".self_attn.dense.", ".self_attn.o_proj.")
            .replace(".mlp.fc1.", ".mlp.up_proj.")
            .replace(".mlp.fc2.", ".mlp.down_proj.")
            .replace("final_layernorm.", "norm.");
        if renamed.contains(".input_layernorm.") {
            out.push((renamed.replace(".input_layernorm.", ".post_attention_layernorm."), t.clone()));
        }
        out.push((renamed, t));
    }
    Ok(Weights::from_tensors(out))
}

//! Persimmon (`PersimmonForCausalLM`, `PersimmonModel`, its sequence and token classifiers:
//! adept/persimmon-8b) and Fuyu (`FuyuForCausalLM`, adept/fuyu-8b, run as its Persimmon language
//! model on text): pre-norm blocks with layer norms (biases), a fused `query_key_value` per head
//! (`[q_h k_h v_h]`, as GPT-NeoX's, regrouped at load), per-head layer norms on q and k before RoPE
//! (`qk_layernorm`), RoPE over `partial_rotary_factor` (0.5) of each head, biases on every
//! projection, an ungated MLP (`dense_h_to_4h`, squared ReLU, `dense_4h_to_h`) and a final
//! `final_layernorm`, the LM head untied.

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use super::gemma3_multimodal::{inherit_outer_flags, with_language_model};
use super::gpt_neox::per_head_qkv_to_grouped;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `PersimmonForCausalLM`.
    PersimmonForCausalLM
);

impl PersimmonForCausalLM {
    /// Loads the model from a Persimmon config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let heads = cfg.usize("num_attention_heads")?;
        Ok(PersimmonForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights, heads)?, spec(&cfg)?)?))
    }
}

/// transformers' `FuyuForCausalLM` for text: its Persimmon language model (`text_config`; the
/// checkpoint's `language_model.*`, or transformers 5's `model.language_model.*` and `lm_head`),
/// the patch embeddings never read. Image inputs are refused.
#[derive(Debug, Clone)]
pub struct FuyuForCausalLM(pub CausalLm);

impl FuyuForCausalLM {
    /// Loads the language model of a `fuyu` checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let mut text = match cfg.get("text_config") {
            None => serde_json::Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
        };
        text.insert("model_type".into(), Value::from("persimmon"));
        inherit_outer_flags(&mut text, cfg, false)?;
        let text = Config::from_map(text);
        Ok(FuyuForCausalLM(with_language_model(weights, |w| Ok(PersimmonForCausalLM::load(&text, w)?.0))?))
    }
}

impl std::ops::Deref for FuyuForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// The config with `layer_norm_eps` as the decoder's norm epsilon and `head_dim` from the hidden
/// size.
fn decoder_config(cfg: &Config) -> Result<Config> {
    let (hidden, heads) = (cfg.usize("hidden_size")?, cfg.usize("num_attention_heads")?);
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "hidden_size must be divisible by num_heads (got `hidden_size`: {hidden} and `num_heads`: {heads})."
        )));
    }
    let mut json = cfg.json().clone();
    json.insert("rms_norm_eps".into(), cfg.f64_or("layer_norm_eps", 1e-5)?.into());
    json.insert("head_dim".into(), (hidden / heads).into());
    json.insert("num_key_value_heads".into(), heads.into());
    Ok(Config::from_map(json))
}

/// Persimmon's structure as a [`DecoderSpec`].
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (true, true, true);
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str_or("hidden_act", "relu2")?)?;
    spec.qk_norm = cfg.bool_or("qk_layernorm", true)?;
    spec.qk_layer_norm = true;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names: `query_key_value` regrouped as `qkv_proj`, `dense` as
/// `o_proj`, the q/k layer norms as `q_norm`/`k_norm`, the MLP's as `up_proj`/`down_proj`,
/// `final_layernorm` as `norm`.
fn decoder_weights(weights: &Weights, heads: usize) -> Result<Weights> {
    let regrouped = weights.replaced(|name, t| {
        if name.contains(".self_attn.query_key_value.") {
            return Ok(Some(per_head_qkv_to_grouped(name, t, heads)?));
        }
        Ok(None)
    })?;
    Ok(regrouped.renamed(|n| {
        Some(
            n.replace(".self_attn.query_key_value.", ".self_attn.qkv_proj.")
                .replace(".self_attn.dense.", ".self_attn.o_proj.")
                .replace(".self_attn.q_layernorm.", ".self_attn.q_norm.")
                .replace(".self_attn.k_layernorm.", ".self_attn.k_norm.")
                .replace(".mlp.dense_h_to_4h.", ".mlp.up_proj.")
                .replace(".mlp.dense_4h_to_h.", ".mlp.down_proj.")
                .replace("final_layernorm.", "norm."),
        )
    }))
}

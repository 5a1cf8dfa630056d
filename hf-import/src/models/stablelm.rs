//! StableLM (`StableLmForCausalLM`: stablelm-2-1_6b/12b, stablelm-3b-4e1t, stablelm-zephyr):
//! Llama's gated MLP and grouped attention with layer norms (weight and bias), RoPE over a share of
//! each head (`partial_rotary_factor`, 0.25 by default), q/k/v biases with `use_qkv_bias`, per-head
//! q/k layer norms with `qk_layernorm` (stored as one norm per head, read as one `[heads, head_dim]`
//! scale), and attention and the MLP in parallel on one norm with `use_parallel_residual`.

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::RmsNormStyle;
use crate::weights::Weights;

/// transformers' `StableLmForCausalLM`.
#[derive(Debug, Clone)]
pub struct StableLmForCausalLM(pub CausalLm);

impl std::ops::Deref for StableLmForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl StableLmForCausalLM {
    /// Loads the model from a StableLM config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let parallel = cfg.bool_or("use_parallel_residual", false)?;
        Ok(StableLmForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights, parallel)?, spec(&cfg)?)?))
    }
}

/// `StableLmConfig` as the decoder reads it: `layer_norm_eps`, and the rotary share 0.25 when the
/// config names none.
fn decoder_config(cfg: &Config) -> Result<Config> {
    let mut json = cfg.json().clone();
    json.insert("rms_norm_eps".into(), cfg.f64_or("layer_norm_eps", 1e-5)?.into());
    let in_dict = cfg.get("rope_parameters").and_then(|r| r.get("partial_rotary_factor")).is_some();
    if !in_dict && cfg.get("partial_rotary_factor").is_none() {
        json.insert("partial_rotary_factor".into(), 0.25.into());
    }
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.layer_norm = true;
    spec.qkv_bias = cfg.bool_or("use_qkv_bias", false)?;
    (spec.o_bias, spec.mlp_bias) = (false, false);
    spec.parallel_residual = cfg.bool_or("use_parallel_residual", false)?;
    // `qk_layernorm`: a bias-free layer norm per head (as Cohere's q/k norms).
    spec.qk_norm = cfg.bool_or("qk_layernorm", false)?;
    spec.qk_norm_per_head = spec.qk_norm;
    spec.norm_style = RmsNormStyle::Cohere;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", false)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names: the per-head q/k norms (`q_layernorm.norms.{h}`)
/// stacked into one scale each, and with the parallel block its one norm also as the MLP's.
fn decoder_weights(weights: &Weights, parallel: bool) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 64);
    let mut per_head: std::collections::BTreeMap<String, Vec<(usize, Tensor)>> = Default::default();
    for item in weights.iter() {
        let (name, t) = item?;
        for (from, to) in [
            (".self_attn.q_layernorm.norms.", ".self_attn.q_norm.weight"),
            (".self_attn.k_layernorm.norms.", ".self_attn.k_norm.weight"),
        ] {
            if let Some((layer, rest)) = name.split_once(from) {
                let head =
                    rest.strip_suffix(".weight").and_then(|h| h.parse::<usize>().ok()).ok_or_else(|| {
                        Error::Weight(format!("tensor '{name}' is not a per-head norm's weight"))
                    })?;
                per_head.entry(format!("{layer}{to}")).or_default().push((head, t.clone()));
            }
        }
        if name.contains("_layernorm.norms.") {
            continue;
        }
        if parallel && name.contains(".input_layernorm.") {
            out.push((name.replace(".input_layernorm.", ".post_attention_layernorm."), t.clone()));
        }
        out.push((name.to_string(), t));
    }
    for (name, mut heads) in per_head {
        heads.sort_by_key(|(h, _)| *h);
        if heads.iter().enumerate().any(|(i, (h, _))| i != *h) {
            return Err(Error::Weight(format!("the per-head norms of '{name}' are not numbered 0..heads")));
        }
        let rows: Vec<Tensor> =
            heads.into_iter().map(|(_, t)| t.unsqueeze(0)).collect::<std::result::Result<_, _>>()?;
        let refs: Vec<&Tensor> = rows.iter().collect();
        out.push((name, Tensor::cat(&refs, 0)?));
    }
    Ok(Weights::from_tensors(out))
}

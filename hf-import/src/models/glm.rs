//! GLM (`GlmForCausalLM`: THUDM's glm-4-9b-hf and its chat models) and GLM-4 (`Glm4ForCausalLM`:
//! the GLM-4-0414 models): Llama's blocks with q/k/v biases (`attention_bias`, default true) but
//! none on the output projection, a fused `gate_up_proj`, and RoPE over the first
//! `partial_rotary_factor` (0.5 unless the config says otherwise) of each head with interleaved
//! pairs; GLM-4 adds norms closing the attention and MLP branches (`post_self_attn_layernorm`,
//! `post_mlp_layernorm`). Their base models and sequence classifiers too.
//!
//! At load, `gate_up_proj` is split into `gate_proj` and `up_proj`, q and k (weights and biases)
//! are reordered so that the decoder's half-split rotation rotates the interleaved pairs
//! ([`halves_from_interleaved`]), and GLM-4's four norms are read as the decoder's sandwich norms.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::halves_from_interleaved;
use crate::weights::Weights;

/// transformers' `GlmForCausalLM` and `Glm4ForCausalLM`.
#[derive(Debug, Clone)]
pub struct GlmForCausalLM(pub CausalLm);

impl std::ops::Deref for GlmForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GlmForCausalLM {
    /// Loads GLM (`glm4`: GLM-4, with its branch-closing norms) from its config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights, glm4: bool) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let spec = spec(&cfg, glm4)?;
        Ok(GlmForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights, &cfg, glm4)?, spec)?))
    }
}

/// The config with the class's `partial_rotary_factor` of 0.5 where neither it nor its rope
/// parameters give one.
pub(super) fn decoder_config(cfg: &Config) -> Result<Config> {
    let mut json = cfg.json().clone();
    let nested = ["rope_parameters", "rope_scaling"]
        .iter()
        .any(|k| cfg.get(k).and_then(|v| v.get("partial_rotary_factor")).is_some_and(|p| !p.is_null()));
    if !nested && cfg.get("partial_rotary_factor").is_none_or(Value::is_null) {
        json.insert("partial_rotary_factor".into(), 0.5.into());
    }
    Ok(Config::from_map(json))
}

/// GLM's structure as a [`DecoderSpec`]: `GlmConfig`'s defaults (128-wide heads, 2 key/value
/// heads, epsilon 1.5625e-7), q/k/v biases without the output's, GLM-4's sandwich norms.
fn spec(cfg: &Config, glm4: bool) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qkv_bias = cfg.bool_or("attention_bias", true)?;
    spec.o_bias = false;
    spec.mlp_bias = false;
    spec.default_head_dim = Some(128);
    spec.default_kv_heads = Some(2);
    spec.default_rms_norm_eps = 1.5625e-7;
    spec.sandwich_norms = glm4;
    Ok(spec)
}

/// The checkpoint under the decoder's names and layouts (see the module docs).
fn decoder_weights(weights: &Weights, cfg: &Config, glm4: bool) -> Result<Weights> {
    let heads = cfg.usize("num_attention_heads")?;
    let kv_heads = cfg.nullable_usize_or("num_key_value_heads", Some(2))?.unwrap_or(heads);
    let head_dim =
        cfg.nullable_usize_or("head_dim", Some(128))?.unwrap_or(cfg.usize("hidden_size")? / heads.max(1));
    let rotary_dim = (head_dim as f64 * cfg.rope(None)?.partial_rotary_factor) as usize;
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 64);
    for item in weights.iter() {
        let (name, t) = item?;
        if let Some(stem) = name.strip_suffix(".mlp.gate_up_proj.weight") {
            let rows = t.dims().first().copied().unwrap_or(0);
            if t.rank() != 2 || rows % 2 != 0 {
                return Err(Error::Weight(format!(
                    "tensor '{name}' of shape {:?} is not a [2 · intermediate, hidden] gate_up_proj",
                    t.dims()
                )));
            }
            out.push((format!("{stem}.mlp.gate_proj.weight"), t.narrow(0, 0, rows / 2)?.contiguous()?));
            out.push((
                format!("{stem}.mlp.up_proj.weight"),
                t.narrow(0, (rows / 2) as isize, rows / 2)?.contiguous()?,
            ));
            continue;
        }
        let n = if name.contains(".self_attn.q_proj.") {
            Some(heads)
        } else if name.contains(".self_attn.k_proj.") {
            Some(kv_heads)
        } else {
            None
        };
        let t = match n {
            Some(n) => halves_from_interleaved(&t, n, head_dim, rotary_dim)
                .map_err(|e| Error::Weight(format!("tensor '{name}': {e}")))?,
            None => t,
        };
        let name = if glm4 { glm4_norm_name(name) } else { name.clone() };
        out.push((name, t));
    }
    Ok(Weights::from_tensors(out))
}

/// GLM-4's norms under the decoder's sandwich names: `post_self_attn_layernorm` closes the
/// attention branch (`post_attention_layernorm`), `post_attention_layernorm` opens the MLP's
/// (`pre_feedforward_layernorm`) and `post_mlp_layernorm` closes it (`post_feedforward_layernorm`).
pub(super) fn glm4_norm_name(name: &str) -> String {
    for (from, to) in [
        (".post_self_attn_layernorm.", ".post_attention_layernorm."),
        (".post_attention_layernorm.", ".pre_feedforward_layernorm."),
        (".post_mlp_layernorm.", ".post_feedforward_layernorm."),
    ] {
        if name.contains(from) {
            return name.replace(from, to);
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glm4_norms_map_to_the_sandwich() {
        assert_eq!(
            glm4_norm_name("model.layers.0.post_self_attn_layernorm.weight"),
            "model.layers.0.post_attention_layernorm.weight"
        );
        assert_eq!(
            glm4_norm_name("model.layers.0.post_attention_layernorm.weight"),
            "model.layers.0.pre_feedforward_layernorm.weight"
        );
        assert_eq!(
            glm4_norm_name("model.layers.0.post_mlp_layernorm.weight"),
            "model.layers.0.post_feedforward_layernorm.weight"
        );
        assert_eq!(glm4_norm_name("model.norm.weight"), "model.norm.weight");
    }

    #[test]
    fn rotary_share_defaults_to_a_half() {
        let c = decoder_config(&Config::from_json_str(r#"{"model_type": "glm"}"#).unwrap()).unwrap();
        assert_eq!(c.get("partial_rotary_factor").and_then(Value::as_f64), Some(0.5));
    }
}

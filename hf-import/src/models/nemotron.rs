//! Nemotron (`NemotronForCausalLM`, `NemotronModel`, `NemotronForSequenceClassification`:
//! nvidia's Nemotron-3/4 and Minitron models): Llama's pre-norm blocks with `LayerNorm1P` norms
//! (layer norms with a bias whose scale is stored minus one), an ungated squared-ReLU MLP
//! (`up_proj`, `down_proj`), and RoPE over the first half of each head (`partial_rotary_factor`
//! 0.5 unless the config says otherwise). The norms' `weight + 1` is taken once at load, in the
//! stored dtype, as the module takes it on each call.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::Result;
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `NemotronForCausalLM`.
#[derive(Debug, Clone)]
pub struct NemotronForCausalLM(pub CausalLm);

impl std::ops::Deref for NemotronForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl NemotronForCausalLM {
    /// Loads the model from a Nemotron config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(NemotronForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights)?, spec(&cfg)?)?))
    }
}

/// `NemotronConfig` under the decoder's key names: `norm_eps` as the norms' epsilon, and the
/// class's `partial_rotary_factor` of 0.5 where neither the config nor its `rope_parameters`
/// gives one.
fn decoder_config(cfg: &Config) -> Result<Config> {
    let mut json = cfg.json().clone();
    json.insert("rms_norm_eps".into(), cfg.f64_or("norm_eps", 1e-5)?.into());
    let nested = ["rope_parameters", "rope_scaling"]
        .iter()
        .any(|k| cfg.get(k).and_then(|v| v.get("partial_rotary_factor")).is_some_and(|p| !p.is_null()));
    if !nested && cfg.get("partial_rotary_factor").is_none_or(Value::is_null) {
        json.insert("partial_rotary_factor".into(), 0.5.into());
    }
    json.entry("hidden_act").or_insert_with(|| "relu2".into());
    Ok(Config::from_map(json))
}

/// Nemotron's structure as a [`DecoderSpec`]: layer norms, the ungated MLP with its activation
/// (`relu2`), Llama's biases.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint with every norm's scale (`*layernorm.weight`, `norm.weight`) plus one.
fn decoder_weights(weights: &Weights) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        let norm = name.ends_with("layernorm.weight") || name == "model.norm.weight" || name == "norm.weight";
        out.push((name.clone(), if norm { t.add(1.0)? } else { t }));
    }
    Ok(Weights::from_tensors(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rotary share defaults to a half where no config level names one.
    #[test]
    fn rotary_share_defaults_to_a_half() {
        let partial = |json: &str| {
            let c = decoder_config(&Config::from_json_str(json).unwrap()).unwrap();
            c.get("partial_rotary_factor").and_then(Value::as_f64)
        };
        assert_eq!(partial(r#"{"model_type": "nemotron"}"#), Some(0.5));
        assert_eq!(partial(r#"{"partial_rotary_factor": 1.0}"#), Some(1.0));
        // (Nested: left to the rope parameters.)
        assert_eq!(
            partial(r#"{"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.25}}"#),
            None
        );
    }
}

//! Jais 2 (`Jais2ForCausalLM`, model type `jais2`: inceptionai/Jais-2-8B-Chat): Llama's attention
//! (biases on q, k, v and o with `attention_bias`, default true) in blocks normed by layer norms
//! with a bias (`layer_norm_eps`, default 1e-5), and an ungated MLP, `down(relu(up(x))²)`, with
//! biases (`mlp_bias`, default true).

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::layers::Activation;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Jais2ForCausalLM`.
    Jais2ForCausalLM
);

impl Jais2ForCausalLM {
    /// Loads the model from a Jais 2 config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(Jais2ForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg)?)?))
    }
}

/// The config with its norms' epsilon, `layer_norm_eps`, where the decoder reads it (`Jais2Config`
/// has no `rms_norm_eps`: one in config.json is ignored).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let mut json = cfg.json().clone();
    json.insert("rms_norm_eps".into(), Value::from(cfg.f64_or("layer_norm_eps", 1e-5)?));
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let bias = cfg.bool_or("attention_bias", true)?;
    (spec.qkv_bias, spec.o_bias) = (bias, bias);
    spec.mlp_bias = cfg.bool_or("mlp_bias", true)?;
    spec.act = Activation::from_name(cfg.str_or("hidden_act", "relu2")?)?;
    spec.layer_norm = true;
    spec.plain_mlp = true;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_class_defaults() {
        let cfg = decoder_config(
            &Config::from_json_str(r#"{"num_hidden_layers": 1, "rms_norm_eps": 0.5}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(cfg.f64_or("rms_norm_eps", 0.0).unwrap(), 1e-5);
        let spec = spec(&cfg).unwrap();
        assert!(spec.qkv_bias && spec.o_bias && spec.mlp_bias && spec.layer_norm && spec.plain_mlp);
        assert_eq!(spec.act, Activation::ReluSquared);
    }
}

//! Apertus (`ApertusForCausalLM`, `ApertusModel`: swiss-ai/Apertus-8B and 70B): Llama with
//! per-head q/k norms, an ungated MLP whose activation is xIELU with each layer's learned scalars
//! (`hidden_act: "xielu"`, [`crate::layers::Xielu`]), the norms named `attention_layernorm` and
//! `feedforward_layernorm`, and `ApertusConfig`'s llama3-scaled RoPE (base 1.2e7) when the config
//! names none.

use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `ApertusForCausalLM`.
    ApertusForCausalLM
);

impl ApertusForCausalLM {
    /// Loads the model, its norms read as the decoder's.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let xielu = cfg.str_or("hidden_act", "xielu")? == "xielu";
        let mut json = cfg.json().clone();
        if xielu {
            // (The decoder's activation is unused: xIELU replaces it.)
            json.insert("hidden_act".into(), json!("linear"));
        }
        let named = |key: &str| cfg.get(key).is_some_and(|v| !v.is_null());
        if !named("rope_parameters") && !named("rope_scaling") {
            json.insert(
                "rope_parameters".into(),
                json!({"rope_type": "llama3", "rope_theta": 12000000.0, "factor": 8.0,
                       "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0}),
            );
        }
        let cfg = Config::from_map(json);
        let mut spec = DecoderSpec::llama(&cfg)?;
        spec.qk_norm = true;
        spec.plain_mlp = true;
        spec.mlp_bias = false;
        spec.xielu = xielu;
        spec.default_rms_norm_eps = 1e-5;
        let weights = weights.renamed(|n| {
            Some(
                n.replace(".attention_layernorm.", ".input_layernorm.")
                    .replace(".feedforward_layernorm.", ".post_attention_layernorm."),
            )
        });
        Ok(ApertusForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

//! OpenAI GPT (`OpenAIGPTLMHeadModel`, `OpenAIGPTModel`, `OpenAIGPTForSequenceClassification`,
//! model type `openai-gpt`: openai-community/openai-gpt): GPT-2's block, fused `c_attn` and
//! `Conv1D` weights, learned positions (`positions_embed`) and tied head, but post-norm
//! (`x = ln_1(x + attn(x))`, then `ln_2(x + mlp(x))`) with no final norm, and its activation named
//! by `afn` (`gelu` being the tanh approximation). Its config and tensors are read as GPT-2's.

use serde_json::Value;

use super::decoder::CausalLm;
use super::family::causal_lm_newtype;
use super::gpt2;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `OpenAIGPTLMHeadModel`.
    OpenAIGPTLMHeadModel
);

impl OpenAIGPTLMHeadModel {
    /// Loads the model from an OpenAI GPT config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = gpt2::decoder_config(&gpt2_config(cfg)?)?;
        let mut spec = gpt2::spec(&cfg)?;
        spec.post_norm = true;
        spec.final_norm = false;
        let layers = cfg.layers("num_hidden_layers")?;
        let weights = gpt2::decoder_weights(&weights.renamed(|n| Some(gpt2_name(n))), layers)?;
        Ok(OpenAIGPTLMHeadModel(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The config as GPT-2's: `afn` as `activation_function`, and none of the GPT-2 keys
/// `OpenAIGPTConfig` does not have (its MLP is always 4 × `n_embd` wide, its scores always
/// scaled).
fn gpt2_config(cfg: &Config) -> Result<Config> {
    let act = match cfg.str_or("afn", "gelu")? {
        // (`ACT_FNS` of modeling_openai.py.)
        "gelu" => "gelu_new",
        "relu" => "relu",
        "silu" | "swish" => "silu",
        other => {
            return Err(Error::Unsupported(format!(
                "OpenAI GPT's afn \"{other}\" (supported: gelu, relu, silu, swish)"
            )))
        }
    };
    let mut json = cfg.json().clone();
    for key in ["n_inner", "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "add_cross_attention"] {
        json.remove(key);
    }
    json.insert("activation_function".into(), Value::from(act));
    Ok(Config::from_map(json))
}

/// An OpenAI GPT tensor under GPT-2's name (`tokens_embed`, `positions_embed` as `wte`, `wpe`).
fn gpt2_name(name: &str) -> String {
    name.replace("tokens_embed.", "wte.").replace("positions_embed.", "wpe.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn afn_names_the_activation() {
        let cfg = |json: &str| gpt2_config(&Config::from_json_str(json).unwrap());
        assert_eq!(cfg("{}").unwrap().str("activation_function").unwrap(), "gelu_new");
        assert_eq!(
            cfg(r#"{"afn": "swish", "n_inner": 7}"#).unwrap().str("activation_function").unwrap(),
            "silu"
        );
        assert!(cfg(r#"{"afn": "tanh"}"#).is_err());
        assert_eq!(gpt2_name("transformer.tokens_embed.weight"), "transformer.wte.weight");
    }
}

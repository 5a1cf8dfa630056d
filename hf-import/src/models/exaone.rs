//! EXAONE 3 and 3.5 (`ExaoneForCausalLM`, model type `exaone`: LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct,
//! EXAONE-3.5-2.4B to 32B), which transformers runs as `LlamaForCausalLM`: Llama under GPT-2-style
//! names (`transformer.wte`, `transformer.h.{i}.attn.attention.{q,k,v,out}_proj`, `ln_1`, `ln_2`,
//! `mlp.c_fc_0` (gate), `mlp.c_fc_1` (up), `mlp.c_proj` (down), `transformer.ln_f`) and config
//! keys (`num_layers`, `layer_norm_epsilon`, `activation_function`, read as Llama's when the
//! config is parsed); RoPE base 500000 and 8 key/value heads by default.

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// The remote code's `ExaoneForCausalLM` (transformers' `LlamaForCausalLM` on an
    /// `ExaoneConfig`).
    ExaoneForCausalLM
);

impl ExaoneForCausalLM {
    /// Loads the model from its own names or Llama's.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let mut spec = DecoderSpec::llama(cfg)?;
        spec.default_kv_heads = Some(8);
        spec.default_rms_norm_eps = 1e-5;
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(ExaoneForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

/// An EXAONE tensor's name in the common decoder (names already Llama's are kept).
fn decoder_name(name: &str) -> String {
    let Some(rest) = name.strip_prefix("transformer.") else { return name.to_string() };
    let rest = match rest {
        "ln_f.weight" => return "model.norm.weight".into(),
        _ if rest.starts_with("wte.") => return format!("model.embed_tokens.{}", &rest[4..]),
        _ => rest,
    };
    let Some(layer) = rest.strip_prefix("h.") else { return name.to_string() };
    let mut out = format!("model.layers.{layer}");
    for (from, to) in [
        (".attn.attention.out_proj.", ".self_attn.o_proj."),
        (".attn.attention.", ".self_attn."),
        (".ln_1.", ".input_layernorm."),
        (".ln_2.", ".post_attention_layernorm."),
        (".mlp.c_fc_0.", ".mlp.gate_proj."),
        (".mlp.c_fc_1.", ".mlp.up_proj."),
        (".mlp.c_proj.", ".mlp.down_proj."),
    ] {
        if out.contains(from) {
            out = out.replacen(from, to, 1);
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exaone_names_and_keys_read_as_llamas() {
        for (from, to) in [
            ("transformer.wte.weight", "model.embed_tokens.weight"),
            ("transformer.ln_f.weight", "model.norm.weight"),
            ("transformer.h.3.attn.attention.q_proj.weight", "model.layers.3.self_attn.q_proj.weight"),
            ("transformer.h.3.attn.attention.out_proj.weight", "model.layers.3.self_attn.o_proj.weight"),
            ("transformer.h.0.ln_2.weight", "model.layers.0.post_attention_layernorm.weight"),
            ("transformer.h.1.mlp.c_fc_1.weight", "model.layers.1.mlp.up_proj.weight"),
            ("lm_head.weight", "lm_head.weight"),
            ("model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.gate_proj.weight"),
        ] {
            assert_eq!(decoder_name(from), to);
        }
        // (The config keys are read as Llama's when the config is parsed: `class_defaults`.)
        let cfg = Config::from_json_str(
            r#"{"model_type": "exaone", "num_layers": 3, "layer_norm_epsilon": 0.01, "activation_function": "gelu"}"#,
        )
        .unwrap();
        assert_eq!(cfg.usize("num_hidden_layers").unwrap(), 3);
        assert_eq!(cfg.f64_or("rms_norm_eps", 0.0).unwrap(), 0.01);
        assert_eq!(cfg.str_or("hidden_act", "").unwrap(), "gelu");
    }
}

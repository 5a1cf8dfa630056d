//! LFM3 (`Lfm3ForCausalLM`, model type `lfm3`): LFM2's layers (gated short convolutions, or
//! attention with per-head q/k norms) of three types, `layer_types` `conv`, `sliding_attention`
//! (a window of `sliding_window`, default 256) and `full_attention` (by default layer `i` is full
//! when `i % 4 == 2`, sliding when `i % 4 == 0` past the first, else a convolution), each
//! attention type with its RoPE (`proportional` over half of each head's angles on full layers,
//! by default); attention scaled per head by `sigmoid(g_proj(x))` (`use_attention_gate`); norms
//! closing both branches (`post_operator_norm`, `post_ffn_norm`, with `use_sandwich_norm`); the
//! SwiGLU `feed_forward` (`w1`, `w3`, `w2`) of `intermediate_size`.

use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec, ShortConvSpec};
use super::family::causal_lm_newtype;
use super::lfm2::decoder_name;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, OutputGate};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Lfm3ForCausalLM`.
    Lfm3ForCausalLM
);

impl Lfm3ForCausalLM {
    /// Loads the model: `Lfm3Config`'s keys read as the common decoder's (`norm_eps`), its tensors
    /// renamed (with sandwich norms, `ffn_norm` opens the MLP and the post-norms close the branches).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let sandwich = cfg.bool_or("use_sandwich_norm", true)?;
        let weights = weights.renamed(|n| Some(lfm3_name(n, sandwich)));
        Ok(Lfm3ForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// An LFM3 tensor's name in the common decoder: LFM2's, the attention gate as transformers names
/// it (`g_proj`; checkpoints' `gate_proj`), with its sandwich norms under the decoder's
/// (`post_operator_norm` closes the mixer, `ffn_norm` opens the MLP, `post_ffn_norm` closes it).
fn lfm3_name(name: &str, sandwich: bool) -> String {
    let name = name.replace(".self_attn.gate_proj.", ".self_attn.g_proj.");
    if !sandwich {
        return decoder_name(&name);
    }
    let name = name
        .replace(".post_operator_norm.", ".post_attention_layernorm.")
        .replace(".post_ffn_norm.", ".post_feedforward_layernorm.")
        .replace(".ffn_norm.", ".pre_feedforward_layernorm.");
    decoder_name(&name)
}

/// The config under the common decoder's keys (`rms_norm_eps` from `norm_eps`), with
/// `Lfm3Config`'s rope dicts where it names none.
fn decoder_config(cfg: &Config) -> Result<Config> {
    let mut json = cfg
        .with_class_rope(json!({
            "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
            "full_attention": {"rope_type": "proportional", "rope_theta": 1_000_000.0, "partial_rotary_factor": 0.5},
        }))
        .json()
        .clone();
    json.insert("rms_norm_eps".into(), cfg.f64_or("norm_eps", 1e-5)?.into());
    Ok(Config::from_map(json))
}

/// Each layer's type: `layer_types`, or `Lfm3Config`'s pattern.
fn layer_types(cfg: &Config) -> Result<Vec<String>> {
    let layers = cfg.layers("num_hidden_layers")?;
    let types = match cfg.layer_types() {
        Some(types) if types.len() == layers => types,
        Some(types) => {
            return Err(Error::Config(format!(
                "\"layer_types\" has {} entries for {layers} layers",
                types.len()
            )))
        }
        None => (0..layers)
            .map(|i| match i % 4 {
                2 => "full_attention",
                0 if i > 0 => "sliding_attention",
                _ => "conv",
            })
            .map(String::from)
            .collect(),
    };
    if let Some(t) =
        types.iter().find(|t| !matches!(t.as_str(), "conv" | "sliding_attention" | "full_attention"))
    {
        return Err(Error::Config(format!(
            "\"layer_types\" entries must be conv, sliding_attention or full_attention, got {t:?}"
        )));
    }
    Ok(types)
}

/// LFM3's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (cfg.bool_or("attention_bias", false)?, false, false);
    spec.default_kv_heads = Some(4);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-5;
    spec.act = Activation::Silu;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    let types = layer_types(cfg)?;
    let sliding: Vec<bool> = types.iter().map(|t| t == "sliding_attention").collect();
    let window = cfg.nullable_usize_or("sliding_window", Some(256))?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.local_rope = sliding;
    spec.short_conv = Some(ShortConvSpec {
        kernel: cfg.usize_or("conv_L_cache", 7)?,
        bias: cfg.bool_or("conv_bias", false)?,
        layers: types.iter().map(|t| t == "conv").collect(),
    });
    spec.sandwich_norms = cfg.bool_or("use_sandwich_norm", true)?;
    if cfg.bool_or("use_attention_gate", true)? {
        spec.output_gate = Some(OutputGate::SigmoidPerHead);
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The class's pattern: full on `i % 4 == 2`, sliding on the other multiples of four past the
    /// first, convolutions elsewhere.
    #[test]
    fn default_layer_types() {
        let cfg = Config::from_json_str(r#"{"num_hidden_layers": 6}"#).unwrap();
        let types = layer_types(&cfg).unwrap();
        assert_eq!(types, ["conv", "conv", "full_attention", "conv", "sliding_attention", "conv"]);
        assert_eq!(
            lfm3_name("model.layers.1.ffn_norm.weight", true),
            "model.layers.1.pre_feedforward_layernorm.weight"
        );
        assert_eq!(
            lfm3_name("model.layers.1.ffn_norm.weight", false),
            "model.layers.1.post_attention_layernorm.weight"
        );
    }
}

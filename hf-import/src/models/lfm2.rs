//! LFM2 (`Lfm2ForCausalLM`: LiquidAI/LFM2-350M, 700M, 1.2B, 2.6B): a decoder whose layers mix
//! tokens with a gated short convolution (`layers.{i}.conv`, see [`ShortConv`]), except the
//! attention layers `layer_types` (or the older `full_attn_idxs`) names, which attend with per-head
//! q/k RMS norms and RoPE (base 1e6 by default). Each block is `operator_norm`, the mixer, the
//! residual, then `ffn_norm` and the SwiGLU `feed_forward` (`w1`, `w3`, `w2`) whose width
//! `block_auto_adjust_ff_dim` derives from `intermediate_size`; the final norm is
//! `embedding_norm`. The embeddings are tied by default.
//!
//! [`ShortConv`]: crate::layers::ShortConv

use super::decoder::{CausalLm, DecoderSpec, ShortConvSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Lfm2ForCausalLM`.
    Lfm2ForCausalLM
);

impl Lfm2ForCausalLM {
    /// Loads the model: `Lfm2Config`'s keys read as the common decoder's (`norm_eps`, the
    /// feed-forward width, the older `tie_embedding` and `block_ff_dim`), its tensors renamed.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let layers = cfg.layers("num_hidden_layers")?;
        let conv_layers = match cfg.layer_types() {
            Some(types) if types.len() == layers => types.iter().map(|t| t == "conv").collect(),
            Some(types) => {
                return Err(Error::Config(format!(
                    "\"layer_types\" has {} entries for {layers} layers",
                    types.len()
                )))
            }
            None => {
                let attention: Option<Vec<usize>> = match cfg.get("full_attn_idxs") {
                    Some(v) => Some(
                        v.as_array()
                            .and_then(|a| a.iter().map(|i| i.as_u64().map(|i| i as usize)).collect())
                            .ok_or_else(|| {
                                Error::Config(format!(
                                    "\"full_attn_idxs\" must be a list of layer indices, got {v}"
                                ))
                            })?,
                    ),
                    None => None,
                };
                // (Without either key every layer attends, as `Lfm2Config` has it.)
                (0..layers).map(|i| attention.as_ref().is_some_and(|a| !a.contains(&i))).collect()
            }
        };
        let mut json = cfg.json().clone();
        let tie = match cfg.get("tie_embedding") {
            Some(v) => v.clone(),
            None => cfg.bool_or("tie_word_embeddings", true)?.into(),
        };
        json.insert("tie_word_embeddings".into(), tie);
        json.insert("rms_norm_eps".into(), cfg.f64_or("norm_eps", 1e-5)?.into());
        json.insert("intermediate_size".into(), feed_forward_width(cfg)?.into());
        let cfg = Config::from_map(json);
        let mut spec = DecoderSpec::llama(&cfg)?;
        spec.qk_norm = true;
        spec.default_kv_heads = Some(8);
        spec.short_conv = Some(ShortConvSpec {
            kernel: cfg.usize_or("conv_L_cache", 3)?,
            bias: cfg.bool_or("conv_bias", false)?,
            layers: conv_layers,
        });
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(Lfm2ForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The SwiGLU's width: `intermediate_size` (or the older `block_ff_dim`), with
/// `block_auto_adjust_ff_dim` (the default) two thirds of it, times `block_ffn_dim_multiplier`,
/// rounded up to a multiple of `block_multiple_of`.
fn feed_forward_width(cfg: &Config) -> Result<usize> {
    let width = match cfg.get("block_ff_dim") {
        Some(_) => cfg.usize("block_ff_dim")?,
        None => cfg.usize("intermediate_size")?,
    };
    if !cfg.bool_or("block_auto_adjust_ff_dim", true)? {
        return Ok(width);
    }
    let width = width
        .checked_mul(2)
        .ok_or_else(|| Error::Config(format!("the feed-forward width ({width}) is too large")))?
        / 3;
    let multiplier = match cfg.get("block_ffn_dim_multiplier") {
        Some(v) if v.is_null() => return Ok(width),
        Some(_) => cfg.f64_or("block_ffn_dim_multiplier", 1.0)?,
        None => 1.0,
    };
    let width = (multiplier * width as f64) as usize;
    let multiple = cfg.usize_or("block_multiple_of", 256)?.max(1);
    width.div_ceil(multiple).checked_mul(multiple).ok_or_else(|| {
        Error::Config(format!("the feed-forward width ({width} × block_ffn_dim_multiplier) is too large"))
    })
}

/// An LFM2 tensor's name in the common decoder.
fn decoder_name(name: &str) -> String {
    let Some((layer, rest)) = name.split_once(".layers.").and_then(|(model, rest)| {
        let (index, part) = rest.split_once('.')?;
        Some((format!("{model}.layers.{index}"), part))
    }) else {
        return name.replacen("embedding_norm.", "norm.", 1);
    };
    let part = match rest {
        "operator_norm.weight" => "input_layernorm.weight",
        "ffn_norm.weight" => "post_attention_layernorm.weight",
        "feed_forward.w1.weight" => "mlp.gate_proj.weight",
        "feed_forward.w3.weight" => "mlp.up_proj.weight",
        "feed_forward.w2.weight" => "mlp.down_proj.weight",
        "self_attn.out_proj.weight" => "self_attn.o_proj.weight",
        "self_attn.q_layernorm.weight" => "self_attn.q_norm.weight",
        "self_attn.k_layernorm.weight" => "self_attn.k_norm.weight",
        other => other,
    };
    format!("{layer}.{part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lfm2_names_land_on_the_decoders() {
        for (from, to) in [
            ("model.layers.3.operator_norm.weight", "model.layers.3.input_layernorm.weight"),
            ("model.layers.0.feed_forward.w3.weight", "model.layers.0.mlp.up_proj.weight"),
            ("model.layers.2.self_attn.out_proj.weight", "model.layers.2.self_attn.o_proj.weight"),
            ("model.layers.1.conv.in_proj.weight", "model.layers.1.conv.in_proj.weight"),
            ("model.embedding_norm.weight", "model.norm.weight"),
            ("model.embed_tokens.weight", "model.embed_tokens.weight"),
        ] {
            assert_eq!(decoder_name(from), to);
        }
    }

    /// 6656 → two thirds, 4437 → rounded up to a multiple of 256, 4608; without the adjustment,
    /// the older `block_ff_dim` as it is.
    #[test]
    fn the_feed_forward_width_as_lfm2_config_derives_it() {
        let cfg = Config::from_json_str(r#"{"model_type": "lfm2", "intermediate_size": 6656}"#).unwrap();
        assert_eq!(feed_forward_width(&cfg).unwrap(), 4608);
        let off = r#"{"model_type": "lfm2", "block_ff_dim": 100, "block_auto_adjust_ff_dim": false}"#;
        assert_eq!(feed_forward_width(&Config::from_json_str(off).unwrap()).unwrap(), 100);
    }
}

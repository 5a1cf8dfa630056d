//! LFM2 (`Lfm2ForCausalLM`: LiquidAI/LFM2-350M, 700M, 1.2B, 2.6B): a decoder whose layers mix
//! tokens with a gated short convolution (`layers.{i}.conv`, see [`ShortConv`]), except the
//! attention layers `layer_types` (or the older `full_attn_idxs`) names, which attend with per-head
//! q/k RMS norms and RoPE (base 1e6 by default). Each block is `operator_norm`, the mixer, the
//! residual, then `ffn_norm` and the SwiGLU `feed_forward` (`w1`, `w3`, `w2`) whose width
//! `block_auto_adjust_ff_dim` derives from `intermediate_size`; the final norm is
//! `embedding_norm`. The embeddings are tied by default. LFM2-MoE (`Lfm2MoeForCausalLM`) has
//! mixtures of experts in place of the SwiGLU after its dense layers (see
//! [`Lfm2MoeForCausalLM::load`]).
//!
//! [`ShortConv`]: crate::layers::ShortConv

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, ShortConvSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Glu, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Lfm2ForCausalLM`.
    Lfm2ForCausalLM
);

causal_lm_newtype!(
    /// transformers' `Lfm2MoeForCausalLM`.
    Lfm2MoeForCausalLM
);

impl Lfm2ForCausalLM {
    /// Loads the model: `Lfm2Config`'s keys read as the common decoder's (`norm_eps`, the
    /// feed-forward width, the older `tie_embedding` and `block_ff_dim`), its tensors renamed.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, spec) = decoder(cfg, feed_forward_width(cfg)?)?;
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(Lfm2ForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

impl Lfm2MoeForCausalLM {
    /// Loads LFM2-MoE (`Lfm2MoeForCausalLM`: LiquidAI/LFM2-8B-A1B): LFM2's layers whose
    /// feed-forward, from layer `num_dense_layers` (2) on, is a mixture of `num_experts` (32)
    /// SwiGLU experts of `moe_intermediate_size` (1792), `num_experts_per_tok` (4) a token chosen
    /// by sigmoid scores plus the block's `expert_bias` (with `use_expert_bias`), weighted by the
    /// unbiased scores renormalised (`norm_topk_prob`) and scaled by `routed_scaling_factor`. The
    /// dense layers' width is `intermediate_size` as given.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, mut spec) = decoder(cfg, cfg.usize("intermediate_size")?)?;
        let layers = cfg.layers("num_hidden_layers")?;
        let dense = cfg.usize_or("num_dense_layers", 2)?;
        let experts = cfg.usize_or("num_experts", 32)?;
        spec.act = Activation::Silu;
        spec.moe = Some(MoeSpec {
            ungated: None,
            experts,
            intermediate: cfg.usize_or("moe_intermediate_size", 1792)?,
            routing: Routing {
                top_k: cfg.usize_or("num_experts_per_tok", 4)?,
                normalize: cfg.bool_or("norm_topk_prob", true)?,
                round_weights: true,
                scoring: Scoring::Sigmoid { biased: cfg.bool_or("use_expert_bias", true)? },
                scale: cfg.f64_or("routed_scaling_factor", 1.0)?,
            },
            sparse_layers: (0..layers).map(|i| i >= dense).collect(),
            shared: None,
            biased: false,
            shared_bias: false,
            glu: Glu::Product,
        });
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(Lfm2MoeForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// LFM2's decoder with a feed-forward of `width`: its config under the common decoder's keys and
/// its spec (see the module docs).
fn decoder(cfg: &Config, width: usize) -> Result<(Config, DecoderSpec)> {
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
    json.insert("intermediate_size".into(), width.into());
    let cfg = Config::from_map(json);
    let mut spec = DecoderSpec::llama(&cfg)?;
    spec.qk_norm = true;
    spec.default_kv_heads = Some(8);
    spec.short_conv = Some(ShortConvSpec {
        kernel: cfg.usize_or("conv_L_cache", 3)?,
        bias: cfg.bool_or("conv_bias", false)?,
        layers: conv_layers,
    });
    Ok((cfg, spec))
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
pub(super) fn decoder_name(name: &str) -> String {
    let Some((layer, rest)) = name.split_once(".layers.").and_then(|(model, rest)| {
        let (index, part) = rest.split_once('.')?;
        Some((format!("{model}.layers.{index}"), part))
    }) else {
        return name.replacen("embedding_norm.", "norm.", 1);
    };
    // (LFM2-MoE's mixture: `feed_forward.{gate, expert_bias, experts.{j}.w1/w3/w2}`.)
    if let Some(moe) = rest
        .strip_prefix("feed_forward.")
        .filter(|r| r.starts_with("experts.") || r.starts_with("gate.") || *r == "expert_bias")
    {
        let moe =
            moe.replace(".w1.", ".gate_proj.").replace(".w3.", ".up_proj.").replace(".w2.", ".down_proj.");
        return format!("{layer}.mlp.{moe}");
    }
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
            (
                "model.layers.2.feed_forward.experts.3.w3.weight",
                "model.layers.2.mlp.experts.3.up_proj.weight",
            ),
            (
                "model.layers.2.feed_forward.experts.0.w2.weight",
                "model.layers.2.mlp.experts.0.down_proj.weight",
            ),
            ("model.layers.2.feed_forward.gate.weight", "model.layers.2.mlp.gate.weight"),
            ("model.layers.2.feed_forward.expert_bias", "model.layers.2.mlp.expert_bias"),
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

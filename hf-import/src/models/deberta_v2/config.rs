//! `DebertaV2Config` as transformers reads it: its class defaults (the xlarge model's sizes), and
//! the attention options (`relative_attention`, `pos_att_type`, `position_buckets`,
//! `max_relative_positions`, `share_att_key`, `norm_rel_ebd`, the convolution of the first layer);
//! and v1's `DebertaConfig` (`model_type: "deberta"`: deberta-base's sizes, none of v2's options).

use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;

/// The relative-position part of the attention (`relative_attention: true`).
#[derive(Debug, Clone, PartialEq)]
pub struct RelativeConfig {
    /// `position_buckets` (log buckets past half of it; none when not positive)
    pub buckets: i64,
    /// `max_relative_positions` (`max_position_embeddings` when not positive)
    pub max_relative: i64,
    /// `att_span`: the relative embeddings hold `2 * span` rows (`position_buckets` when positive,
    /// else `max_relative`)
    pub span: usize,
    /// `share_att_key`: the positions are projected by the content's key and query projections
    /// (else by `pos_key_proj` and `pos_query_proj`)
    pub share_att_key: bool,
    /// `norm_rel_ebd` names `layer_norm`: the relative embeddings go through `encoder.LayerNorm`
    pub norm: bool,
}

/// The depth-wise mixing convolution after the first layer (`conv_kernel_size > 0`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvConfig {
    /// `conv_kernel_size` (odd: the output keeps the sequence's length)
    pub kernel: usize,
    /// `conv_groups`
    pub groups: usize,
    /// `conv_act`
    pub act: Activation,
}

/// The sizes and options of a DeBERTa encoder (v1, v2 or v3).
#[derive(Debug, Clone)]
pub struct DebertaV2Config {
    /// v1 (`model_type: "deberta"`): a fused `in_proj` with `q_bias` and `v_bias`, `pos_proj` and
    /// `pos_q_proj`, unbucketed distances, `talking_head` refused
    pub v1: bool,
    /// model width
    pub hidden: usize,
    /// `embedding_size` (projected to `hidden` by `embed_proj` when it differs)
    pub embedding: usize,
    /// attention heads
    pub heads: usize,
    /// per-head width
    pub head_dim: usize,
    /// MLP width
    pub intermediate: usize,
    /// number of blocks
    pub layers: usize,
    /// vocabulary size
    pub vocab: usize,
    /// `max_position_embeddings`
    pub max_positions: usize,
    /// token types (0 for none, v3's)
    pub type_vocab: usize,
    /// layer norm epsilon
    pub eps: f64,
    /// MLP activation
    pub act: Activation,
    /// `position_biased_input`: absolute position embeddings added to the input (v3 has none)
    pub position_biased_input: bool,
    /// `pos_att_type` has `c2p` (content to position)
    pub c2p: bool,
    /// `pos_att_type` has `p2c` (position to content)
    pub p2c: bool,
    /// the scores are divided by `sqrt(head_dim * scale_factor)`: 1, plus 1 for each of `c2p` and
    /// `p2c` (counted with or without `relative_attention`, as transformers does); v1 counts every
    /// entry of `pos_att_type`
    pub scale_factor: usize,
    /// relative positions, with `relative_attention`
    pub relative: Option<RelativeConfig>,
    /// the first layer's convolution, with `conv_kernel_size`
    pub conv: Option<ConvConfig>,
    /// `pooler_hidden_size`
    pub pooler_hidden: usize,
    /// `pooler_hidden_act`
    pub pooler_act: Activation,
}

impl DebertaV2Config {
    /// Reads `cfg` with `DebertaV2Config`'s defaults (`DebertaConfig`'s for `model_type: "deberta"`).
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let v1 = cfg.get("model_type").and_then(Value::as_str) == Some("deberta");
        // The classes' defaults: deberta-base's sizes for v1, deberta-v2-xlarge's for v2.
        let (hidden, heads, layers, intermediate, vocab) =
            if v1 { (768, 12, 12, 3072, 50_265) } else { (1536, 24, 24, 6144, 128_100) };
        let hidden = cfg.usize_or("hidden_size", hidden)?;
        let heads = cfg.usize_or("num_attention_heads", heads)?;
        if v1 && cfg.bool_or("talking_head", false)? {
            return Err(Error::Unsupported("DeBERTa's talking_head attention is not supported".into()));
        }
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "The hidden size ({hidden}) is not a multiple of the number of attention heads ({heads})"
            )));
        }
        let head_dim = if v1 { hidden / heads } else { cfg.usize_or("attention_head_size", hidden / heads)? };
        if head_dim * heads != hidden {
            return Err(Error::Unsupported(format!(
                "attention_head_size {head_dim} with {heads} heads does not make the hidden size {hidden}"
            )));
        }
        let pos_att_type = pos_att_type(cfg)?;
        let max_positions = cfg.usize_or("max_position_embeddings", 512)?;
        let relative = if cfg.bool_or("relative_attention", false)? {
            let max_relative = match signed(cfg, "max_relative_positions")? {
                Some(m) if m >= 1 => m,
                _ => max_positions as i64,
            };
            let buckets = if v1 { -1 } else { signed(cfg, "position_buckets")?.unwrap_or(-1) };
            let span = if buckets > 0 { buckets } else { max_relative };
            if buckets == 1 {
                return Err(Error::Config("position_buckets must be at least 2 (or not positive)".into()));
            }
            let norm_rel_ebd = cfg.str_or("norm_rel_ebd", "none")?.to_lowercase();
            Some(RelativeConfig {
                buckets,
                max_relative,
                span: span as usize,
                share_att_key: !v1 && cfg.bool_or("share_att_key", false)?,
                norm: !v1 && norm_rel_ebd.split('|').any(|x| x.trim() == "layer_norm"),
            })
        } else {
            None
        };
        let conv = match if v1 { 0 } else { cfg.usize_or("conv_kernel_size", 0)? } {
            0 => None,
            kernel if kernel % 2 == 0 => {
                return Err(Error::Unsupported(format!(
                    "conv_kernel_size {kernel} is even: the convolution would shorten the sequence"
                )))
            }
            kernel => {
                let groups = cfg.usize_or("conv_groups", 1)?;
                if groups == 0 || !hidden.is_multiple_of(groups) {
                    return Err(Error::Config(format!(
                        "conv_groups ({groups}) must divide the hidden size ({hidden})"
                    )));
                }
                Some(ConvConfig {
                    kernel,
                    groups,
                    act: Activation::from_name(cfg.str_or("conv_act", "tanh")?)?,
                })
            }
        };
        let (c2p, p2c) = (pos_att_type.iter().any(|t| t == "c2p"), pos_att_type.iter().any(|t| t == "p2c"));
        Ok(DebertaV2Config {
            v1,
            hidden,
            embedding: cfg.usize_or("embedding_size", hidden)?,
            heads,
            head_dim,
            intermediate: cfg.usize_or("intermediate_size", intermediate)?,
            layers: if cfg.get("num_hidden_layers").is_some() {
                cfg.layers("num_hidden_layers")?
            } else {
                layers
            },
            vocab: cfg.usize_or("vocab_size", vocab)?,
            max_positions,
            type_vocab: cfg.usize_or("type_vocab_size", 0)?,
            eps: cfg.f64_or("layer_norm_eps", 1e-7)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            position_biased_input: cfg.bool_or("position_biased_input", true)?,
            c2p,
            p2c,
            scale_factor: if v1 { 1 + pos_att_type.len() } else { 1 + c2p as usize + p2c as usize },
            relative,
            conv,
            pooler_hidden: cfg.usize_or("pooler_hidden_size", hidden)?,
            pooler_act: Activation::from_name(cfg.str_or("pooler_hidden_act", "gelu")?)?,
        })
    }
}

/// An integer key that may be negative (`-1` means "unset" for DeBERTa's position options).
fn signed(cfg: &Config, key: &str) -> Result<Option<i64>> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            v.as_i64().map(Some).ok_or_else(|| Error::Config(format!("{key} must be an integer, got {v}")))
        }
    }
}

/// `pos_att_type`: a list of names, or one string of names joined by `|` (older configs:
/// `"p2c|c2p"`), lower-cased and trimmed as `DebertaV2Config` does.
fn pos_att_type(cfg: &Config) -> Result<Vec<String>> {
    Ok(match cfg.get("pos_att_type") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s.to_lowercase().split('|').map(|x| x.trim().to_string()).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::Config(format!("pos_att_type entries must be strings, got {v}")))
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::Config(format!("pos_att_type must be a list or a string, got {other}")))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<DebertaV2Config> {
        DebertaV2Config::from_config(&Config::from_json_str(json).unwrap())
    }

    /// v3's options as its configs spell them, older string forms, and transformers' defaults.
    #[test]
    fn options_as_transformers_reads_them() {
        let v3 = read(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "relative_attention": true,
                "pos_att_type": ["p2c", "c2p"], "position_buckets": 256, "max_relative_positions": -1,
                "norm_rel_ebd": "layer_norm", "share_att_key": true, "position_biased_input": false}"#,
        )
        .unwrap();
        let rel = v3.relative.clone().unwrap();
        assert_eq!((rel.buckets, rel.max_relative, rel.span), (256, 512, 256));
        assert!(rel.share_att_key && rel.norm && v3.c2p && v3.p2c && !v3.position_biased_input);
        assert_eq!((v3.scale_factor, v3.type_vocab, v3.eps), (3, 0, 1e-7));
        let old =
            read(r#"{"relative_attention": true, "pos_att_type": "C2P | p2p", "norm_rel_ebd": "none"}"#)
                .unwrap();
        assert!(old.c2p && !old.p2c && !old.relative.as_ref().unwrap().norm);
        assert_eq!((old.hidden, old.layers, old.vocab, old.scale_factor), (1536, 24, 128_100, 2));
        // v1 counts every `pos_att_type` entry, and reads none of v2's options.
        let v1 = read(
            r#"{"model_type": "deberta", "relative_attention": true, "pos_att_type": "c2p|p2c|p2p",
                "position_buckets": 8, "share_att_key": true, "norm_rel_ebd": "layer_norm", "conv_kernel_size": 3}"#,
        )
        .unwrap();
        let rel = v1.relative.clone().unwrap();
        assert!(v1.v1 && rel.buckets == -1 && !rel.share_att_key && !rel.norm && v1.conv.is_none());
        assert_eq!((v1.hidden, v1.layers, v1.vocab, v1.scale_factor, rel.span), (768, 12, 50_265, 4, 512));
        let err = read(r#"{"model_type": "deberta", "talking_head": true}"#).err().unwrap();
        assert!(err.to_string().contains("talking_head"), "{err}");
        assert_eq!(old.relative.unwrap().span, 512);
        let plain = read("{}").unwrap();
        assert!(plain.relative.is_none() && plain.position_biased_input && plain.conv.is_none());
        let conv = read(r#"{"conv_kernel_size": 3, "conv_act": "gelu"}"#).unwrap().conv.unwrap();
        assert_eq!((conv.kernel, conv.groups, conv.act), (3, 1, Activation::Gelu));
        for (bad, msg) in [
            (r#"{"conv_kernel_size": 2}"#, "even"),
            (r#"{"hidden_size": 10, "num_attention_heads": 4}"#, "multiple"),
            (r#"{"pos_att_type": 3}"#, "pos_att_type"),
            (r#"{"relative_attention": true, "position_buckets": 1}"#, "position_buckets"),
        ] {
            let err = read(bad).err().unwrap().to_string();
            assert!(err.contains(msg), "{bad}: {err}");
        }
    }
}

//! MPT (`MptForCausalLM`, `MptModel`, `MptForSequenceClassification`: mosaicml/mpt-7b and its
//! fine-tunes) as transformers runs it: no position embeddings but ALiBi by column (its slopes with
//! `alibi_bias_max` 8, as transformers builds them whatever the config says), pre-norm blocks with
//! bias-free layer norms, a fused `Wqkv` (`[q; k; v]`, optionally clamped by `clip_qkv`), no biases
//! anywhere, an exact-GELU MLP four times the hidden size, the LM head tied to the embeddings. MPT
//! reads no positions: `position_ids` are ignored, as transformers' forward ignores them.
//!
//! The checkpoint's names (`transformer.wte`, `blocks.N.norm_1`, `attn.Wqkv`, `attn.out_proj`,
//! `norm_2`, `ffn.up_proj`, `ffn.down_proj`, `norm_f`) are read as the decoder's.

use serde_json::Value;

use super::decoder::{Alibi, CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `MptForCausalLM`.
#[derive(Debug, Clone)]
pub struct MptForCausalLM(pub CausalLm);

impl std::ops::Deref for MptForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl MptForCausalLM {
    /// Loads the model from an MPT config and checkpoint (names with `transformer.`, or without for
    /// a base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        Ok(MptForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights), spec(&cfg)?)?))
    }
}

/// `attn_config.{key}` as a number; `None` when absent or null.
fn attn_number(cfg: &Config, key: &str) -> Result<Option<f64>> {
    let Some(attn) = cfg.get("attn_config").filter(|v| !v.is_null()) else { return Ok(None) };
    let Some(object) = attn.as_object() else {
        return Err(Error::Config(format!("attn_config must be an object, got {attn}")));
    };
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(Error::Config(format!("attn_config.{key} must be a number, got {v}"))),
        },
    }
}

/// `MptConfig` under the decoder's key names (its defaults are mpt-7b's).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let hidden = cfg.usize_aliased("d_model", "hidden_size", 2048)?;
    let heads = cfg.usize_aliased("n_heads", "num_attention_heads", 16)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "d_model must be divisible by n_heads (got `d_model`: {hidden} and `n_heads`: {heads})."
        )));
    }
    let layers = match (cfg.get("n_layers"), cfg.get("num_hidden_layers")) {
        (Some(_), _) => cfg.layers("n_layers")?,
        (None, Some(_)) => cfg.layers("num_hidden_layers")?,
        (None, None) => 24,
    };
    // (transformers' MptMLP is four times the hidden size, whatever `expansion_ratio` says.)
    let inner =
        hidden.checked_mul(4).ok_or_else(|| Error::Config(format!("d_model {hidden} is too large")))?;
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", Value::from(hidden)),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", inner.into()),
        ("max_position_embeddings", cfg.usize_or("max_seq_len", 2048)?.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 50_368)?.into()),
        ("rms_norm_eps", cfg.f64_or("layer_norm_epsilon", 1e-5)?.into()),
        // (MptMLP's `nn.GELU(approximate="none")`.)
        ("hidden_act", "gelu".into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok(Config::from_map(json))
}

/// MPT's structure as a [`DecoderSpec`]: ALiBi by column, bias-free layer norms and projections,
/// the ungated MLP, `attn_config`'s `softmax_scale` and `clip_qkv`, the tied head.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.alibi = Some(Alibi::mpt(cfg.usize("num_attention_heads")?, 8.0));
    spec.attention_scale = attn_number(cfg, "softmax_scale")?;
    spec.clip_qkv = attn_number(cfg, "clip_qkv")?.filter(|c| *c != 0.0);
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names (see the module docs); the names outside the model's
/// (`lm_head.*`, `score.*`) kept.
fn decoder_weights(weights: &Weights) -> Weights {
    weights.renamed(|name| {
        // (A base model's names have no `transformer.`: they stay without `model.`.)
        let (prefix, rest) = match name.strip_prefix("transformer.") {
            Some(rest) => ("model.", rest),
            None if name.starts_with("lm_head.") || name.starts_with("score.") => {
                return Some(name.to_string())
            }
            None => ("", name),
        };
        let renamed = match rest.strip_prefix("blocks.") {
            Some(layer) => format!(
                "layers.{}",
                layer
                    .replace(".norm_1.", ".input_layernorm.")
                    .replace(".norm_2.", ".post_attention_layernorm.")
                    .replace(".attn.Wqkv.", ".self_attn.qkv_proj.")
                    .replace(".attn.out_proj.", ".self_attn.o_proj.")
                    .replace(".ffn.up_proj.", ".mlp.up_proj.")
                    .replace(".ffn.down_proj.", ".mlp.down_proj.")
            ),
            None => rest.replace("wte.", "embed_tokens.").replace("norm_f.", "norm."),
        };
        Some(format!("{prefix}{renamed}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `MptConfig`'s names, aliases and defaults, and `attn_config`'s numbers.
    #[test]
    fn config_keys_and_attn_config() {
        let cfg = |json: &str| decoder_config(&Config::from_json_str(json).unwrap());
        let c = cfg(r#"{"model_type": "mpt"}"#).unwrap();
        assert_eq!(c.usize("hidden_size").unwrap(), 2048);
        assert_eq!(c.usize("num_hidden_layers").unwrap(), 24);
        assert_eq!(c.usize("intermediate_size").unwrap(), 8192);
        let c = cfg(r#"{"d_model": 32, "n_heads": 4, "n_layers": 2, "attn_config": {"clip_qkv": 6.0, "softmax_scale": null}}"#)
            .unwrap();
        assert_eq!(attn_number(&c, "clip_qkv").unwrap(), Some(6.0));
        assert_eq!(attn_number(&c, "softmax_scale").unwrap(), None);
        let s = spec(&c).unwrap();
        assert_eq!((s.clip_qkv, s.attention_scale), (Some(6.0), None));
        assert_eq!(s.alibi.unwrap().slopes.len(), 4);
        let c =
            cfg(r#"{"d_model": 32, "n_heads": 4, "n_layers": 2, "attn_config": {"clip_qkv": "x"}}"#).unwrap();
        assert!(spec(&c).unwrap_err().to_string().contains("attn_config.clip_qkv must be a number"));
        let err = cfg(r#"{"d_model": 10, "n_heads": 4}"#).unwrap_err().to_string();
        assert!(err.contains("d_model must be divisible by n_heads"), "{err}");
    }
}

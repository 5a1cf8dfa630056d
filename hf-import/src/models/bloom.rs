//! BLOOM (`BloomForCausalLM`, `BloomModel`, `BloomForSequenceClassification`: bigscience/bloom-560m
//! to 176B, BLOOMZ): no position embeddings but ALiBi (each head's scores biased by its slope times
//! the key's index among the row's kept tokens), a layer norm on the word embeddings, pre-norm
//! blocks with layer norms and biases, a fused `query_key_value` interleaved per head, a plain
//! `gelu_new`-style MLP four times the hidden size, the LM head tied to the embeddings. BLOOM reads
//! no positions: `position_ids` are ignored, as transformers' forward ignores them.
//!
//! The checkpoint's names (`transformer.word_embeddings`, `word_embeddings_layernorm`,
//! `h.N.self_attention.query_key_value`, `dense`, `mlp.dense_h_to_4h`, `dense_4h_to_h`, `ln_f`;
//! without `transformer.` as bigscience's own uploads have them) are read as the decoder's.

use super::decoder::{Alibi, CausalLm, DecoderSpec};
use super::gpt_neox::per_head_qkv_to_grouped;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `BloomForCausalLM`.
#[derive(Debug, Clone)]
pub struct BloomForCausalLM(pub CausalLm);

impl std::ops::Deref for BloomForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl BloomForCausalLM {
    /// Loads the model from a BLOOM config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let weights = decoder_weights(weights, cfg.usize("num_attention_heads")?)?;
        Ok(BloomForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// `BloomConfig` under the decoder's key names (`n_embed`, the old name, wins over `hidden_size` as
/// the class reads it).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let hidden = match cfg.get("n_embed") {
        Some(v) if !v.is_null() => cfg.usize("n_embed")?,
        _ => cfg.usize_or("hidden_size", 64)?,
    };
    let heads = cfg.usize_aliased("n_head", "num_attention_heads", 8)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "`hidden_size` must be divisible by num_heads (got `hidden_size`: {hidden} and `num_heads`: {heads})."
        )));
    }
    let layers = match (cfg.get("n_layer"), cfg.get("num_hidden_layers")) {
        (Some(_), _) => cfg.layers("n_layer")?,
        (None, Some(_)) => cfg.layers("num_hidden_layers")?,
        (None, None) => 2,
    };
    let inner =
        hidden.checked_mul(4).ok_or_else(|| Error::Config(format!("hidden_size {hidden} is too large")))?;
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", hidden.into()),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", inner.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 250_880)?.into()),
        ("rms_norm_eps", cfg.f64_or("layer_norm_epsilon", 1e-5)?.into()),
        // (BloomGelu: the tanh approximation.)
        ("hidden_act", "gelu_new".into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok(Config::from_map(json))
}

/// BLOOM's structure as a [`DecoderSpec`]: ALiBi, the embeddings' norm, layer norms, biases
/// everywhere, the ungated MLP, the tied head.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (true, true, true);
    spec.layer_norm = true;
    spec.alibi = Some(Alibi::bloom(cfg.usize("num_attention_heads")?));
    spec.embed_norm = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.residual_from_norm = cfg.bool_or("apply_residual_connection_post_layernorm", false)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names (see the module docs), `query_key_value` regrouped
/// from per-head `[q k v]` to `[q; k; v]`; names outside the model's (`lm_head.*`, `score.*`) kept.
fn decoder_weights(weights: &Weights, heads: usize) -> Result<Weights> {
    let mut out = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        // (A base model's names have no `transformer.`: they stay without `model.`.)
        let (prefix, rest) = match name.strip_prefix("transformer.") {
            Some(rest) => ("model.", rest),
            None if name.starts_with("lm_head.") || name.starts_with("score.") => {
                out.push((name.clone(), t));
                continue;
            }
            None => ("", name.as_str()),
        };
        let renamed = match rest.strip_prefix("h.") {
            Some(layer) => format!(
                "layers.{}",
                layer
                    .replace(".self_attention.query_key_value.", ".self_attn.qkv_proj.")
                    .replace(".self_attention.dense.", ".self_attn.o_proj.")
                    .replace(".mlp.dense_h_to_4h.", ".mlp.up_proj.")
                    .replace(".mlp.dense_4h_to_h.", ".mlp.down_proj.")
            ),
            None => rest
                .replace("word_embeddings_layernorm.", "embed_norm.")
                .replace("word_embeddings.", "embed_tokens.")
                .replace("ln_f.", "norm."),
        };
        let renamed = format!("{prefix}{renamed}");
        let t = if renamed.contains(".self_attn.qkv_proj.") {
            per_head_qkv_to_grouped(name, &t, heads)?
        } else {
            t
        };
        out.push((renamed, t));
    }
    Ok(Weights::from_tensors(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `BloomConfig`'s aliases and defaults; `n_embed` wins over `hidden_size`.
    #[test]
    fn config_keys_and_defaults() {
        let cfg = |json: &str| decoder_config(&Config::from_json_str(json).unwrap());
        let c = cfg(r#"{"model_type": "bloom"}"#).unwrap();
        assert_eq!(c.usize("hidden_size").unwrap(), 64);
        assert_eq!(c.usize("num_attention_heads").unwrap(), 8);
        assert_eq!(c.usize("num_hidden_layers").unwrap(), 2);
        assert_eq!(c.usize("intermediate_size").unwrap(), 256);
        let c =
            cfg(r#"{"n_embed": 32, "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 3}"#)
                .unwrap();
        assert_eq!(c.usize("hidden_size").unwrap(), 32);
        assert_eq!(c.usize("head_dim").unwrap(), 8);
        assert_eq!(c.usize("num_hidden_layers").unwrap(), 3);
        let err = cfg(r#"{"hidden_size": 10, "n_head": 4}"#).unwrap_err().to_string();
        assert!(err.contains("must be divisible by num_heads"), "{err}");
    }
}

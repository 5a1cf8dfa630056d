//! GPTBigCode (`GPTBigCodeForCausalLM`, `GPTBigCodeModel`, `GPTBigCodeForSequenceClassification`:
//! StarCoder, SantaCoder, tiny_starcoder, WizardCoder): GPT-2's pre-norm block with learned
//! positions, but `nn.Linear` weights (`[out, in]`, not `Conv1D`) and, with `multi_query` (the
//! default), one key/value head shared by every query head: `c_attn` projects to
//! `[q (hidden); k (head_dim); v (head_dim)]`. Without `multi_query`, `c_attn` holds each head's
//! `[q k v]` in turn, regrouped at load to all queries, all keys, all values.
//!
//! The checkpoint's GPT-2-style names (`transformer.wte`, `wpe`, `h.N.ln_1`, `attn.c_attn`,
//! `attn.c_proj`, `mlp.c_fc`, `mlp.c_proj`, `ln_f`) are read as the decoder's.

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use super::gpt_neox::per_head_qkv_to_grouped;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `GPTBigCodeForCausalLM` (the LM head tied to `wte` unless the config unties it).
#[derive(Debug, Clone)]
pub struct GPTBigCodeForCausalLM(pub CausalLm);

impl std::ops::Deref for GPTBigCodeForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GPTBigCodeForCausalLM {
    /// Loads the model from a GPTBigCode config and checkpoint (names with `transformer.`, or
    /// without for a base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let (cfg, multi_query) = decoder_config(cfg)?;
        let heads = cfg.usize("num_attention_heads")?;
        let weights = decoder_weights(weights, if multi_query { None } else { Some(heads) })?;
        Ok(GPTBigCodeForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// `GPTBigCodeConfig` under the decoder's key names (its defaults are gpt2-sized), and whether
/// attention is multi-query.
fn decoder_config(cfg: &Config) -> Result<(Config, bool)> {
    if cfg.bool_or("add_cross_attention", false)? {
        return Err(Error::Unsupported(
            "GPTBigCode with add_cross_attention (the decoder of an encoder-decoder model) is not supported"
                .into(),
        ));
    }
    let embd = cfg.usize_aliased("n_embd", "hidden_size", 768)?;
    let heads = cfg.usize_aliased("n_head", "num_attention_heads", 12)?;
    if heads == 0 || !embd.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "embed_dim must be divisible by num_heads (got `embed_dim`: {embd} and `num_heads`: {heads})."
        )));
    }
    let layers = match (cfg.get("n_layer"), cfg.get("num_hidden_layers")) {
        (Some(_), _) => cfg.layers("n_layer")?,
        (None, Some(_)) => cfg.layers("num_hidden_layers")?,
        (None, None) => 12,
    };
    let inner = match cfg.nullable_usize_or("n_inner", None)? {
        Some(n) => n,
        None => embd.checked_mul(4).ok_or_else(|| Error::Config(format!("n_embd {embd} is too large")))?,
    };
    let multi_query = cfg.bool_or("multi_query", true)?;
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", Value::from(embd)),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", (if multi_query { 1 } else { heads }).into()),
        ("head_dim", (embd / heads).into()),
        ("num_hidden_layers", layers.into()),
        (
            "max_position_embeddings",
            cfg.usize_aliased("n_positions", "max_position_embeddings", 1024)?.into(),
        ),
        ("vocab_size", cfg.usize_or("vocab_size", 50257)?.into()),
        ("intermediate_size", inner.into()),
        ("rms_norm_eps", cfg.f64_or("layer_norm_epsilon", 1e-5)?.into()),
        ("hidden_act", cfg.str_or("activation_function", "gelu_pytorch_tanh")?.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok((Config::from_map(json), multi_query))
}

/// GPTBigCode's structure as a [`DecoderSpec`]: biases everywhere, layer norms, learned
/// positions, the ungated MLP, scores scaled unless `scale_attn_weights` is off, the tied head.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.token_types = true;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (true, true, true);
    spec.layer_norm = true;
    spec.learned_positions = true;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    if !cfg.bool_or("scale_attn_weights", true)? {
        spec.attention_scale = Some(1.0);
    }
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint under the decoder's names (see the module docs); `c_attn` regrouped from
/// per-head `[q k v]` when attention is not multi-query (`per_head` holds the head count then);
/// the names outside the model's (`lm_head.*`, `score.*`) kept.
fn decoder_weights(weights: &Weights, per_head: Option<usize>) -> Result<Weights> {
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
                    .replace(".ln_1.", ".input_layernorm.")
                    .replace(".ln_2.", ".post_attention_layernorm.")
                    .replace(".attn.c_attn.", ".self_attn.qkv_proj.")
                    .replace(".attn.c_proj.", ".self_attn.o_proj.")
                    .replace(".mlp.c_fc.", ".mlp.up_proj.")
                    .replace(".mlp.c_proj.", ".mlp.down_proj.")
            ),
            None => rest
                .replace("wte.", "embed_tokens.")
                .replace("wpe.", "embed_positions.")
                .replace("ln_f.", "norm."),
        };
        let renamed = format!("{prefix}{renamed}");
        let t = match per_head {
            Some(heads) if renamed.contains(".self_attn.qkv_proj.") => {
                per_head_qkv_to_grouped(name, &t, heads)?
            }
            _ => t,
        };
        out.push((renamed, t));
    }
    Ok(Weights::from_tensors(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `GPTBigCodeConfig`'s names, aliases and defaults; one key/value head under `multi_query`.
    #[test]
    fn config_keys_and_defaults() {
        let cfg = |json: &str| decoder_config(&Config::from_json_str(json).unwrap());
        let (c, mq) = cfg(r#"{"model_type": "gpt_bigcode"}"#).unwrap();
        assert!(mq);
        assert_eq!(c.usize("hidden_size").unwrap(), 768);
        assert_eq!(c.usize("num_key_value_heads").unwrap(), 1);
        assert_eq!(c.usize("intermediate_size").unwrap(), 3072);
        assert_eq!(c.str("hidden_act").unwrap(), "gelu_pytorch_tanh");
        let (c, mq) =
            cfg(r#"{"hidden_size": 32, "n_head": 4, "multi_query": false, "n_positions": 64}"#).unwrap();
        assert!(!mq);
        assert_eq!(c.usize("num_key_value_heads").unwrap(), 4);
        assert_eq!(c.usize("max_position_embeddings").unwrap(), 64);
        let err = cfg(r#"{"n_embd": 10, "n_head": 4}"#).unwrap_err().to_string();
        assert!(err.contains("embed_dim must be divisible by num_heads"), "{err}");
    }
}

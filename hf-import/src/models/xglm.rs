//! XGLM (`XGLMForCausalLM`, `XGLMModel`: facebook/xglm-564M to 7.5B): pre-norm blocks with layer
//! norms and biases, a plain GELU MLP (`fc1`, `fc2`), embeddings scaled by `sqrt(d_model)`, and
//! fixed sinusoidal positions offset by 2 (fairseq's table: sines then cosines of
//! `position · 10000^(-i / (half - 1))`, the padding id's row zero), the LM head tied.
//!
//! The sinusoidal table is built at load (`max_position_embeddings + 2` rows) and read as a
//! learned one; the checkpoint's `model.*` names (`self_attn.out_proj`, `self_attn_layer_norm`,
//! `final_layer_norm`, `fc1`, `fc2`, `layer_norm`) are read as the decoder's.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// The rows the position table is offset by (fairseq's padding convention).
const OFFSET: usize = 2;

/// transformers' `XGLMForCausalLM`.
#[derive(Debug, Clone)]
pub struct XGLMForCausalLM(pub CausalLm);

impl std::ops::Deref for XGLMForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl XGLMForCausalLM {
    /// Loads the model from an XGLM config and checkpoint (names with `model.`, or without for a
    /// base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let weights = decoder_weights(weights, &cfg)?;
        Ok(XGLMForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// `XGLMConfig` under the decoder's key names (its defaults are xglm-564M's).
fn decoder_config(cfg: &Config) -> Result<Config> {
    if cfg.bool_or("add_cross_attention", false)? {
        return Err(Error::Unsupported("XGLM with add_cross_attention is not supported".into()));
    }
    let hidden = cfg.usize_aliased("d_model", "hidden_size", 1024)?;
    let heads = cfg.usize_aliased("attention_heads", "num_attention_heads", 16)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "embed_dim must be divisible by num_heads (got `embed_dim`: {hidden} and `num_heads`: {heads})."
        )));
    }
    let layers = match (cfg.get("num_layers"), cfg.get("num_hidden_layers")) {
        (Some(_), _) => cfg.layers("num_layers")?,
        (None, Some(_)) => cfg.layers("num_hidden_layers")?,
        (None, None) => 24,
    };
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", Value::from(hidden)),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", heads.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", layers.into()),
        ("intermediate_size", cfg.usize_or("ffn_dim", 4096)?.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 256_008)?.into()),
        ("max_position_embeddings", cfg.usize_or("max_position_embeddings", 2048)?.into()),
        ("hidden_act", cfg.str_or("activation_function", "gelu")?.into()),
        // (`nn.LayerNorm(d_model)`'s default.)
        ("rms_norm_eps", 1e-5.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    json.remove("rope_scaling");
    json.remove("rope_parameters");
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (true, true, true);
    spec.layer_norm = true;
    spec.learned_positions = true;
    spec.position_offset = OFFSET;
    spec.plain_mlp = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    if cfg.bool_or("scale_embedding", true)? {
        spec.embedding_multiplier = Some((cfg.usize("hidden_size")? as f64).sqrt());
        spec.embedding_multiplier_on_ids = true;
    }
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// fairseq's sinusoidal table `[rows, dim]` as transformers' `get_embedding` builds it (in float32),
/// the row `padding_idx` zero.
fn sinusoidal_table(rows: usize, dim: usize, padding_idx: Option<usize>) -> Result<Tensor> {
    let half = dim / 2;
    let step = (10000f64).ln() / (half as f64 - 1.0);
    let freqs: Vec<f32> = (0..half).map(|i| (i as f32 * -(step as f32)).exp()).collect();
    let mut data = Vec::with_capacity(rows * dim);
    for p in 0..rows {
        let angles: Vec<f32> = freqs.iter().map(|f| p as f32 * f).collect();
        if Some(p) == padding_idx {
            data.extend(std::iter::repeat_n(0.0f32, dim));
            continue;
        }
        data.extend(angles.iter().map(|a| a.sin()));
        data.extend(angles.iter().map(|a| a.cos()));
        if dim % 2 == 1 {
            data.push(0.0);
        }
    }
    Ok(Tensor::from_vec(data, [rows, dim])?)
}

/// The checkpoint under the decoder's names, with the sinusoidal table as `embed_positions`.
fn decoder_weights(weights: &Weights, cfg: &Config) -> Result<Weights> {
    let hidden = cfg.usize("hidden_size")?;
    if hidden < 4 {
        return Err(Error::Config(format!("d_model {hidden} is too small for XGLM's sinusoidal positions")));
    }
    let rows = cfg.usize("max_position_embeddings")? + OFFSET;
    let padding_idx = cfg.nullable_usize_or("pad_token_id", Some(1))?;
    let base = !weights.contains("model.embed_tokens.weight");
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 1);
    // (In the embeddings' dtype, as read, and on the weights' device, where the decoder reads them.)
    let embed = if base { "embed_tokens.weight" } else { "model.embed_tokens.weight" };
    let table = sinusoidal_table(rows, hidden, padding_idx)?.to(weights.device())?;
    let table = match weights.cast_dtype().or_else(|| weights.stored_dtype(embed)) {
        Some(d) if d.is_float() => table.to_dtype(d)?,
        _ => table,
    };
    out.push((format!("{}embed_positions.weight", if base { "" } else { "model." }), table));
    for item in weights.iter() {
        let (name, t) = item?;
        if name.ends_with("embed_positions.weights") || name.ends_with("embed_positions._float_tensor") {
            continue;
        }
        let (prefix, rest) = match name.strip_prefix("model.") {
            Some(rest) => ("model.", rest),
            None => ("", name.as_str()),
        };
        let renamed = match rest.strip_prefix("layers.") {
            Some(layer) => format!(
                "layers.{}",
                layer
                    .replace(".self_attn.out_proj.", ".self_attn.o_proj.")
                    .replace(".self_attn_layer_norm.", ".input_layernorm.")
                    .replace(".final_layer_norm.", ".post_attention_layernorm.")
                    .replace(".fc1.", ".mlp.up_proj.")
                    .replace(".fc2.", ".mlp.down_proj.")
            ),
            None if rest.starts_with("layer_norm.") => rest.replace("layer_norm.", "norm."),
            None => rest.to_string(),
        };
        out.push((format!("{prefix}{renamed}"), t));
    }
    Ok(Weights::from_tensors(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's first rows: position 0 is sines 0 then cosines 1; the padding row is zero.
    #[test]
    fn sinusoidal_table_rows() {
        let t = sinusoidal_table(4, 6, Some(1)).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(&t[..6], &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert!(t[6..12].iter().all(|&v| v == 0.0));
        // Position 2, the first frequency (1): sin 2, cos 2.
        assert!((t[12] - 2f32.sin()).abs() < 1e-6 && (t[15] - 2f32.cos()).abs() < 1e-6);
    }
}

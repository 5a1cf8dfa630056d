//! MiniCPM3 (`MiniCPM3ForCausalLM`, model type `minicpm3`: openbmb/MiniCPM3-4B): DeepSeek-V2's
//! multi-head latent attention (`q_lora_rank` 768, `kv_lora_rank` 256, heads of 64 + 32 rotated
//! dims, values `hidden_size / num_attention_heads` wide) with the usual half-split RoPE, not
//! DeepSeek's interleaved one, in Llama's blocks with MiniCPM's three scales: the embeddings
//! multiplied by `scale_emb` (12), each block's attention and MLP outputs by
//! `scale_depth / sqrt(num_hidden_layers)` (1.4 / √L) before their residual adds, and the final
//! states divided by `hidden_size / dim_model_base` (256) before the tied LM head.

use super::decoder::DecoderSpec;
use super::deepseek::attention_scale;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::LatentDims;

/// MiniCPM3's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize("num_attention_heads")?;
    let layers = cfg.layers("num_hidden_layers")?;
    if heads == 0 {
        return Err(Error::Config("num_attention_heads must be positive".into()));
    }
    if let Some(kv) = cfg.nullable_usize_or("num_key_value_heads", None)? {
        if kv != heads {
            return Err(Error::Config(format!(
                "latent attention expands keys and values for every head: num_key_value_heads ({kv}) \
                 must equal num_attention_heads ({heads})"
            )));
        }
    }
    let dims = LatentDims {
        q_rank: cfg.nullable_usize_or("q_lora_rank", Some(768))?,
        kv_rank: cfg.usize_or("kv_lora_rank", 256)?,
        nope: cfg.usize_or("qk_nope_head_dim", 64)?,
        rope: cfg.usize_or("qk_rope_head_dim", 32)?,
        v: cfg.nullable_usize_or("v_head_dim", None)?.unwrap_or(hidden / heads),
        interleaved: false,
    };
    spec.attention_scale = Some(attention_scale(cfg, dims.qk())?);
    spec.latent = Some(dims);
    let number = |key: &str, default: f64| -> Result<Option<f64>> {
        let v = cfg.nullable_f64_or(key, Some(default))?;
        match v {
            Some(x) if !x.is_finite() || x == 0.0 => {
                Err(Error::Config(format!("\"{key}\" must be a finite nonzero number, got {x}")))
            }
            v => Ok(v),
        }
    };
    spec.embedding_multiplier = Some(number("scale_emb", 12.0)?.unwrap_or(1.0));
    spec.embedding_multiplier_on_ids = true;
    // (A null `scale_depth` is `sqrt(num_hidden_layers)`: no scaling; a null `dim_model_base` the
    // hidden size: none either.)
    let depth = number("scale_depth", 1.4)?;
    spec.residual_multiplier = Some(depth.map_or(1.0, |d| d / (layers.max(1) as f64).sqrt()));
    let base = number("dim_model_base", 256.0)?.unwrap_or(hidden as f64);
    spec.logits_scaling = Some(hidden as f64 / base);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `MiniCPM3ForCausalLM`.
    MiniCPM3ForCausalLM,
    spec
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scales_and_their_defaults() {
        let s = spec(
            &Config::from_json_str(
                r#"{"hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 4}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(s.embedding_multiplier, Some(12.0));
        assert_eq!(s.residual_multiplier, Some(0.7));
        assert_eq!(s.logits_scaling, Some(2.0));
        assert_eq!(s.latent.unwrap().v, 64);
        let plain = spec(
            &Config::from_json_str(
                r#"{"hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 4, "scale_depth": null,
                    "dim_model_base": null}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!((plain.residual_multiplier, plain.logits_scaling), (Some(1.0), Some(1.0)));
    }
}

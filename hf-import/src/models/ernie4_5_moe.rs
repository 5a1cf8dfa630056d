//! ERNIE 4.5 MoE (`Ernie4_5_MoeForCausalLM`, `Ernie4_5_MoeModel`: baidu/ERNIE-4.5-21B-A3B and
//! up): ERNIE 4.5's decoder (interleaved whole-head RoPE, biases with `use_bias` (the LM head's
//! too), RoPE base 5e5,
//! tied embeddings) with a mixture on the layers `moe_layer_start_index..=moe_layer_end_index`
//! every `moe_layer_interval`: a float32 softmax router whose choice is biased by
//! `moe_statics.e_score_correction_bias`, renormalised weights, and shared experts.

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::ernie4_5::with_interleaved_qk;
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Ernie4_5_MoeForCausalLM`.
    Ernie4_5MoeForCausalLM
);

impl Ernie4_5MoeForCausalLM {
    /// Loads the model, q and k reordered for the half-split rotation.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let spec = spec(cfg)?;
        let heads = cfg.usize("num_attention_heads")?;
        let kv_heads = cfg.nullable_usize_or("num_key_value_heads", Some(4))?.unwrap_or(heads);
        let head_dim =
            cfg.nullable_usize_or("head_dim", None)?.unwrap_or(cfg.usize("hidden_size")? / heads.max(1));
        let weights = with_interleaved_qk(weights, heads, kv_heads, head_dim)?;
        Ok(Ernie4_5MoeForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

/// Which layers hold the mixture: every `interval`-th from `start` to `end` (-1: the last).
fn sparse_layers(cfg: &Config, layers: usize) -> Result<Vec<bool>> {
    let index = |key: &str, default: i64| -> Result<i64> {
        match cfg.get(key) {
            None | Some(serde_json::Value::Null) => Ok(default),
            Some(v) => {
                v.as_i64().ok_or_else(|| Error::Config(format!("\"{key}\" must be an integer, got {v}")))
            }
        }
    };
    let start = index("moe_layer_start_index", 1)?;
    let end = match index("moe_layer_end_index", -1)? {
        -1 => layers as i64 - 1,
        end => end,
    };
    let interval = index("moe_layer_interval", 1)?;
    if interval <= 0 {
        return Err(Error::Config(format!("\"moe_layer_interval\" must be positive, got {interval}")));
    }
    Ok((0..layers as i64).map(|i| (i + 1) % interval == 0 && i >= start && i <= end).collect())
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let bias = cfg.bool_or("use_bias", false)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias, spec.lm_head_bias) = (bias, bias, bias, bias);
    spec.default_kv_heads = Some(4);
    spec.default_rms_norm_eps = 1e-5;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    let layers = cfg.layers("num_hidden_layers")?;
    let intermediate = cfg.usize_or("moe_intermediate_size", 1536)?;
    let shared = cfg.usize_or("moe_num_shared_experts", 2)?;
    let shared_width = shared
        .checked_mul(intermediate)
        .ok_or_else(|| Error::Config(format!("{shared} shared experts of {intermediate} are too large")))?;
    spec.moe = Some(MoeSpec {
        ungated: None,
        experts: cfg.usize_aliased("moe_num_experts", "num_experts", 64)?,
        intermediate,
        routing: Routing {
            top_k: cfg.usize_aliased("moe_k", "num_experts_per_tok", 6)?,
            normalize: true,
            round_weights: true,
            scoring: Scoring::BiasedSoftmax,
            scale: 1.0,
        },
        sparse_layers: sparse_layers(cfg, layers)?,
        shared: (shared > 0).then_some(SharedExpert::Plain(shared_width)),
        biased: false,
        shared_bias: bias,
        glu: Glu::Product,
    });
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mixture_sits_on_the_configured_layers() {
        let cfg = |json: &str| Config::from_json_str(json).unwrap();
        assert_eq!(sparse_layers(&cfg("{}"), 3).unwrap(), vec![false, true, true]);
        let every_other =
            cfg(r#"{"moe_layer_start_index": 0, "moe_layer_interval": 2, "moe_layer_end_index": 2}"#);
        assert_eq!(sparse_layers(&every_other, 5).unwrap(), vec![false, true, false, false, false]);
        assert!(sparse_layers(&cfg(r#"{"moe_layer_interval": 0}"#), 2).is_err());
    }
}

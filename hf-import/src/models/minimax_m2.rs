//! MiniMax-M2 (`MiniMaxM2ForCausalLM`, model type `minimax_m2`: MiniMaxAI/MiniMax-M2): Llama's
//! blocks with q and k RMS-normed over their whole projections (OLMo 2's norms), RoPE over the
//! first `rotary_dim` dims of each head (base 5000000), and a mixture in every layer: 256 experts
//! of `intermediate_size`, 8 a token chosen by sigmoid scores plus the block's
//! `e_score_correction_bias` and weighted by the unbiased scores renormalised. The checkpoint keeps
//! Mixtral's names (`block_sparse_moe.{gate, e_score_correction_bias, experts.{j}.{w1, w3, w2}}`).

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec, MoeSpec};
use super::family::causal_lm_newtype;
use super::moe::mixtral_name;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `MiniMaxM2ForCausalLM`.
    MiniMaxM2ForCausalLM
);

impl MiniMaxM2ForCausalLM {
    /// Loads the model from a MiniMax-M2 config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let spec = spec(&cfg)?;
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(MiniMaxM2ForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The config with `rotary_dim` as the share of each head RoPE rotates, as `MiniMaxM2Config` reads
/// it (where the rope parameters name no share).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let Some(rotary) = cfg.get("rotary_dim") else { return Ok(cfg.clone()) };
    let rotary = rotary
        .as_f64()
        .ok_or_else(|| Error::Config(format!("\"rotary_dim\" must be a number, got {rotary}")))?;
    let head_dim = cfg.usize_or("head_dim", 128)?;
    let nested = ["rope_parameters", "rope_scaling"]
        .iter()
        .any(|k| cfg.get(k).and_then(|v| v.get("partial_rotary_factor")).is_some_and(|p| !p.is_null()));
    if nested || cfg.get("partial_rotary_factor").is_some() || head_dim == 0 {
        return Ok(cfg.clone());
    }
    let mut json = cfg.json().clone();
    json.insert("partial_rotary_factor".into(), Value::from(rotary / head_dim as f64));
    Ok(Config::from_map(json))
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.qk_norm = true;
    spec.qk_norm_whole = true;
    spec.default_kv_heads = Some(8);
    spec.default_head_dim = Some(128);
    let layers = cfg.layers("num_hidden_layers")?;
    spec.moe = Some(MoeSpec {
        ungated: None,
        experts: cfg.usize_or("num_local_experts", 256)?,
        intermediate: cfg.usize("intermediate_size")?,
        routing: Routing {
            top_k: cfg.usize_or("num_experts_per_tok", 8)?,
            normalize: true,
            round_weights: false,
            scoring: Scoring::DeepseekV3 { groups: 1, top_groups: 1 },
            scale: 1.0,
        },
        sparse_layers: vec![true; layers],
        shared: None,
        biased: false,
        shared_bias: false,
        glu: Glu::Product,
    });
    Ok(spec)
}

/// A MiniMax-M2 tensor's name in the common decoder: Mixtral's mixture names, the block's score
/// correction under the router's.
fn decoder_name(name: &str) -> String {
    let name = mixtral_name(name);
    match name.strip_suffix(".mlp.e_score_correction_bias") {
        Some(layer) => format!("{layer}.mlp.gate.e_score_correction_bias"),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotary_dim_is_a_share_of_the_head() {
        let cfg = Config::from_json_str(r#"{"head_dim": 8, "rotary_dim": 4}"#).unwrap();
        assert_eq!(decoder_config(&cfg).unwrap().f64_or("partial_rotary_factor", 1.0).unwrap(), 0.5);
        assert_eq!(
            decoder_name("model.layers.2.block_sparse_moe.e_score_correction_bias"),
            "model.layers.2.mlp.gate.e_score_correction_bias"
        );
        assert_eq!(
            decoder_name("model.layers.2.block_sparse_moe.experts.1.w3.weight"),
            "model.layers.2.mlp.experts.1.up_proj.weight"
        );
    }
}

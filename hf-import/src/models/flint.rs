//! Flint (`FlintForCausalLM`, model type `flint`: RecursiveSI/flint): Qwen3-MoE's blocks with
//! norms that scale in float32, attention sinks on every layer, RoPE on the sliding layers alone
//! (the full ones, by default the first two, every fourth from the second and the last, run
//! without positions), dense MLPs on `mlp_only_layers` (default the first two) and elsewhere a
//! mixture routed by float32 sigmoid scores beside an ungated shared expert
//! (`shared_expert_intermediate_size`) added in full.

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec, SharedExpert};
use super::family::causal_lm_newtype;
use super::moe::qwen_mixture;
use crate::config::Config;
use crate::error::Result;
use crate::layers::{RmsNormStyle, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `FlintForCausalLM`.
    FlintForCausalLM
);

impl FlintForCausalLM {
    /// Loads the model from a Flint config and checkpoint (the shared expert `mlp.shared_expert`
    /// read as the decoder's `mlp.shared_experts`, the sinks as checkpoints name them,
    /// `self_attn.softmax_offset`, or as transformers does in memory, `self_attn.sinks`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let mut json = cfg.json().clone();
        // (`FlintConfig` makes the first two layers dense unless the config says otherwise.)
        if !json.contains_key("mlp_only_layers") || json["mlp_only_layers"].is_null() {
            json.insert("mlp_only_layers".into(), Value::from(vec![0, 1]));
        }
        let cfg = Config::from_map(json);
        let weights = weights.renamed(|n| {
            Some(
                n.replace(".mlp.shared_expert.", ".mlp.shared_experts.")
                    .replace(".self_attn.softmax_offset", ".self_attn.sinks"),
            )
        });
        Ok(FlintForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// Which layers are `sliding_attention` layers: `layer_types`, or all but the first two, every
/// fourth from the second and the last.
fn sliding_layers(cfg: &Config) -> Result<Vec<bool>> {
    if let Some(sliding) = DecoderSpec::sliding_layers(cfg)? {
        return Ok(sliding);
    }
    let layers = cfg.layers("num_hidden_layers")?;
    Ok((0..layers).map(|i| !(i < 2 || i % 4 == 1 || i + 1 == layers)).collect())
}

/// Flint's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::ScaleInFloat32;
    spec.qk_norm = true;
    spec.mlp_bias = false;
    spec.default_kv_heads = Some(4);
    spec.default_head_dim = Some(128);
    let sliding = sliding_layers(cfg)?;
    let window = cfg.nullable_usize_or("sliding_window", Some(513))?;
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.nope = sliding.iter().map(|&s| !s).collect();
    spec.sinks = true;
    let shared = cfg.usize_or("shared_expert_intermediate_size", 1024)?;
    let mut moe = qwen_mixture(cfg, 256, 512, 6, Some(SharedExpert::Plain(shared)))?;
    moe.routing.scoring = Scoring::Float32Sigmoid;
    moe.routing.normalize = cfg.bool_or("norm_topk_prob", true)?;
    moe.routing.round_weights = false;
    spec.moe = Some(moe);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default layer types: full on the first two, every fourth from the second and the last.
    #[test]
    fn default_layer_types() {
        let cfg = Config::from_json_str(r#"{"num_hidden_layers": 8}"#).unwrap();
        let full: Vec<usize> = (0..8).filter(|&i| !sliding_layers(&cfg).unwrap()[i]).collect();
        assert_eq!(full, [0, 1, 5, 7]);
    }
}

//! MiMo-V2-Flash (`MiMoV2FlashForCausalLM`, model type `mimo_v2_flash`: XiaomiMiMo/MiMo-V2-Flash):
//! pre-norm blocks whose attention has query/key heads of `head_dim` (192) and narrower value
//! heads (`v_head_dim`, 128) scaled by `attention_value_scale` (0.707), q/k/v biases with
//! `attention_bias`, none on `o_proj`; a window of `sliding_window` (129) on the
//! `sliding_attention` layers (by default all but the first and every sixth), which have twice
//! the key/value heads and a learned sink per head (`self_attn.sinks`, checkpoints'
//! `attention_sink_bias`); each layer type with RoPE of its own over a third of each head
//! (`partial_rotary_factor` 0.334; bases 5000000 on full layers, 10000 on sliding ones); a dense MLP
//! on the layers `mlp_layer_types` marks `dense` (by default the first), elsewhere DeepSeek-V3's
//! grouped sigmoid mixture (256 experts of 2048, 8 a token) without shared experts. The
//! multi-token-prediction layers (`model.mtp.*`) are not run.

use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec, MoeSpec};
use super::deepseek::sparse_layers_by_type;
use super::family::causal_lm_newtype;
use super::mellum::per_layer_type_rope;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `MiMoV2FlashForCausalLM`.
    MiMoV2FlashForCausalLM
);

impl MiMoV2FlashForCausalLM {
    /// Loads the model from a MiMo-V2-Flash config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg);
        let weights =
            weights.renamed(|n| Some(n.replace(".self_attn.attention_sink_bias", ".self_attn.sinks")));
        Ok(MiMoV2FlashForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// The config with `MiMoV2FlashConfig`'s rope dicts where it names none.
fn decoder_config(cfg: &Config) -> Config {
    cfg.with_class_rope(json!({
        "full_attention": {"rope_type": "default", "rope_theta": 5_000_000.0, "partial_rotary_factor": 0.334},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0, "partial_rotary_factor": 0.334},
    }))
}

/// MiMo-V2-Flash's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.o_bias, spec.mlp_bias) = (false, false);
    spec.default_head_dim = Some(192);
    spec.default_kv_heads = Some(4);
    spec.default_rms_norm_eps = 1e-5;
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..layers).map(|i| i != 0 && (i + 1) % 6 != 0).collect(),
    };
    per_layer_type_rope(cfg, &sliding, "MiMo-V2-Flash")?;
    // (`sliding_window_size`, where a config names it, is the window less one.)
    let window = match cfg.nullable_usize_or("sliding_window_size", None)? {
        Some(size) => Some(size.saturating_add(1)),
        None => cfg.nullable_usize_or("sliding_window", Some(129))?,
    };
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.local_rope = sliding.clone();
    let heads = cfg.usize("num_attention_heads")?;
    let kv = cfg.nullable_usize_or("num_key_value_heads", Some(4))?.unwrap_or(heads);
    let doubled =
        kv.checked_mul(2).ok_or_else(|| Error::Config(format!("num_key_value_heads {kv} is too large")))?;
    spec.kv_heads_per_layer = Some(sliding.iter().map(|&s| if s { doubled } else { kv }).collect());
    spec.sinks = true;
    spec.sink_layers = Some(sliding);
    spec.v_head_dim = Some(cfg.usize_or("v_head_dim", 128)?);
    spec.v_scale = cfg.nullable_f64_or("attention_value_scale", Some(0.707))?;
    let experts = match cfg.get("n_routed_experts") {
        Some(_) => cfg.usize("n_routed_experts")?,
        None => cfg.usize_or("num_local_experts", 256)?,
    };
    let routing = Routing {
        top_k: cfg.usize_or("num_experts_per_tok", 8)?,
        normalize: cfg.bool_or("norm_topk_prob", true)?,
        round_weights: false,
        scoring: Scoring::DeepseekV3 {
            groups: cfg.usize_or("n_group", 1)?,
            top_groups: cfg.usize_or("topk_group", 1)?,
        },
        scale: cfg.nullable_f64_or("routed_scaling_factor", Some(1.0))?.unwrap_or(1.0),
    };
    let sparse_layers =
        sparse_layers_by_type(cfg, layers)?.unwrap_or_else(|| (0..layers).map(|i| i > 0).collect());
    let intermediate = cfg.usize_or("moe_intermediate_size", 2048)?;
    spec.moe = Some(MoeSpec::routed(experts, intermediate, routing, sparse_layers));
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_pattern_heads_and_sinks() {
        let c = decoder_config(
            &Config::from_json_str(
                r#"{"model_type": "mimo_v2_flash", "num_hidden_layers": 7, "num_attention_heads": 8}"#,
            )
            .unwrap(),
        );
        let s = spec(&c).unwrap();
        let w = Some(129);
        assert_eq!(s.windows, vec![None, w, w, w, w, None, w]);
        assert_eq!(s.kv_heads_per_layer, Some(vec![4, 8, 8, 8, 8, 4, 8]));
        assert_eq!(s.sink_layers, Some(vec![false, true, true, true, true, false, true]));
        assert_eq!((s.v_head_dim, s.v_scale), (Some(128), Some(0.707)));
        let full = c.rope(Some("full_attention")).unwrap();
        assert_eq!((full.theta, full.partial_rotary_factor), (5_000_000.0, 0.334));
        assert_eq!(s.moe.unwrap().sparse_layers, vec![false, true, true, true, true, true, true]);
    }
}

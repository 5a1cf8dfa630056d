//! Mellum 2 (`MellumForCausalLM`, model type `mellum`: JetBrains/Mellum2): Qwen3-MoE's attention
//! (per-head q/k norms, biases with `attention_bias`) with a window on the `layer_types` marked
//! `sliding_attention`, each layer type with RoPE of its own (`rope_parameters` keyed by layer
//! type; by default base 500000 on full layers, 10000 on sliding ones), and Qwen3-MoE's softmax
//! mixture (64 experts of 896, 8 a token, renormalised) on the layers `mlp_layer_types` marks
//! `sparse` (all by default), a dense MLP of `intermediate_size` on the others. The
//! multi-token-prediction layer (`mtp.*`) is not run.

use serde_json::{json, Value};

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::sparse_layers_by_type;
use super::family::causal_lm_newtype;
use super::moe::qwen_mixture;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `MellumForCausalLM`.
    MellumForCausalLM
);

impl MellumForCausalLM {
    /// Loads the model from a Mellum config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg);
        Ok(MellumForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg)?)?))
    }
}

/// The config with `MellumConfig`'s rope dicts where it names none.
fn decoder_config(cfg: &Config) -> Config {
    cfg.with_class_rope(json!({
        "full_attention": {"rope_type": "default", "rope_theta": 500_000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
    }))
}

/// Mellum's decoder: Qwen3-MoE's attention and mixture, windows and RoPE by layer type.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.mlp_bias = false;
    spec.default_kv_heads = Some(4);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-6;
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = DecoderSpec::sliding_layers(cfg)?.unwrap_or_else(|| vec![false; layers]);
    per_layer_type_rope(cfg, &sliding, "Mellum")?;
    spec.windows =
        DecoderSpec::sliding_windows(&sliding, cfg.nullable_usize_or("sliding_window", Some(1024))?)?;
    spec.local_rope = sliding;
    let mut moe = qwen_mixture(cfg, 64, 896, 8, None)?;
    moe.routing.normalize = cfg.bool_or("norm_topk_prob", true)?;
    // (`MellumConfig` has no `decoder_sparse_step` or `mlp_only_layers`: `mlp_layer_types` decides.)
    moe.sparse_layers = sparse_layers_by_type(cfg, layers)?.unwrap_or_else(|| vec![true; layers]);
    spec.moe = Some(moe);
    Ok(spec)
}

/// Checks the rope dict of each layer type the layers use (`sliding` marks the sliding ones), as
/// the family's rotary embedding reads them (`rope_parameters[layer_type]`): each must be there, and
/// with `family` (Mellum) rotating whole heads, none may name a `partial_rotary_factor` below one.
pub(super) fn per_layer_type_rope(cfg: &Config, sliding: &[bool], family: &str) -> Result<()> {
    for (layer_type, used) in
        [("full_attention", sliding.iter().any(|s| !s)), ("sliding_attention", sliding.iter().any(|s| *s))]
    {
        if !used {
            continue;
        }
        let Some(Value::Object(dict)) = cfg.rope_entry(layer_type) else {
            return Err(Error::Config(format!(
                "{family}'s \"rope_parameters\" needs a dict for \"{layer_type}\" layers (one per layer type)"
            )));
        };
        let partial = dict.get("partial_rotary_factor").and_then(Value::as_f64).unwrap_or(1.0);
        if family == "Mellum" && partial != 1.0 {
            return Err(Error::Unsupported(format!(
                "Mellum rotates whole heads: \"partial_rotary_factor\" {partial} for \"{layer_type}\" layers \
                 (transformers' Mellum cannot run it)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        decoder_config(&Config::from_json_str(json).unwrap())
    }

    /// Windows and the local RoPE follow `layer_types`; the mixture is on the `sparse` layers.
    #[test]
    fn layer_types_pick_windows_rope_and_mixtures() {
        let c = cfg(r#"{"model_type": "mellum", "num_hidden_layers": 3, "sliding_window": 5,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
            "mlp_layer_types": ["dense", "sparse", "sparse"]}"#);
        let spec = spec(&c).unwrap();
        assert_eq!(spec.windows, vec![Some(5), None, Some(5)]);
        assert_eq!(spec.local_rope, vec![true, false, true]);
        let moe = spec.moe.unwrap();
        assert_eq!(moe.sparse_layers, vec![false, true, true]);
        assert_eq!((moe.experts, moe.intermediate, moe.routing.top_k), (64, 896, 8));
        assert!(moe.routing.normalize);
        assert_eq!(c.rope(Some("full_attention")).unwrap().theta, 500_000.0);
        assert_eq!(c.rope(Some("sliding_attention")).unwrap().theta, 10_000.0);
    }

    #[test]
    fn rope_dicts_are_read_per_layer_type() {
        let flat = cfg(r#"{"model_type": "mellum", "num_hidden_layers": 1,
            "rope_parameters": {"rope_type": "default", "rope_theta": 7.0}}"#);
        let err = spec(&flat).unwrap_err().to_string();
        assert!(err.contains("needs a dict for \"full_attention\""), "{err}");
        let partial = cfg(r#"{"model_type": "mellum", "num_hidden_layers": 1, "rope_parameters":
            {"full_attention": {"rope_type": "default", "rope_theta": 7.0, "partial_rotary_factor": 0.5}}}"#);
        let err = spec(&partial).unwrap_err().to_string();
        assert!(err.contains("rotates whole heads"), "{err}");
    }
}

//! gpt-oss (`GptOssForCausalLM`, `GptOssModel`, `GptOssForSequenceClassification`:
//! openai/gpt-oss-20b and 120b, once dequantized): Llama's pre-norm blocks (norm scales applied in
//! float32) with biases on every attention projection, attention sinks (a learned logit per head
//! in every softmax), sliding-window and full layers alternating by `layer_types`, YaRN RoPE by
//! default, and a mixture of experts in every layer: a biased router whose `top_k` largest logits
//! are chosen and softmaxed, experts with biases and the clamped SwiGLU
//! `(up + 1) · gate · sigmoid(1.702 · gate)`.
//!
//! transformers stores the experts transposed (`gate_up_proj` `[experts, hidden, 2 · inter]` with
//! gate and up interleaved column by column, `down_proj` `[experts, inter, hidden]`); they are
//! split per expert into the decoder's `[out, in]` layout at load.

use oxtorch_tensor::Tensor;
use serde_json::json;

use super::decoder::{CausalLm, DecoderSpec, MoeSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, RmsNormStyle, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `GptOssForCausalLM`.
    GptOssForCausalLM
);

impl GptOssForCausalLM {
    /// Loads the model from a gpt-oss config and an unquantized checkpoint (an MXFP4 one is
    /// refused).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = with_default_rope(cfg);
        let spec = spec(&cfg)?;
        Ok(GptOssForCausalLM(CausalLm::load(&cfg, &decoder_weights(weights)?, spec)?))
    }
}

/// `GptOssConfig`'s RoPE when the config names none: YaRN with factor 32 over 4096 positions,
/// `beta_fast` 32, `beta_slow` 1, not truncated.
fn with_default_rope(cfg: &Config) -> Config {
    let named = |key: &str| cfg.get(key).is_some_and(|v| !v.is_null());
    if named("rope_parameters") || named("rope_scaling") {
        return cfg.clone();
    }
    let mut map = cfg.json().clone();
    let theta = cfg.get("rope_theta").cloned().unwrap_or(json!(150000.0));
    map.insert(
        "rope_parameters".into(),
        json!({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": false,
               "original_max_position_embeddings": 4096, "rope_theta": theta}),
    );
    Config::from_map(map)
}

/// The decoder `GptOssConfig` describes, with its class's defaults.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let layers = cfg.layers("num_hidden_layers")?;
    spec.norm_style = RmsNormStyle::ScaleInFloat32;
    let bias = cfg.bool_or("attention_bias", true)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (bias, bias, false);
    spec.default_head_dim = Some(64);
    spec.default_kv_heads = Some(8);
    spec.default_rms_norm_eps = 1e-5;
    spec.sinks = true;
    // `layer_types` default: sliding first, then alternating.
    let sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..layers).map(|i| i % 2 == 0).collect(),
    };
    spec.windows =
        DecoderSpec::sliding_windows(&sliding, cfg.nullable_usize_or("sliding_window", Some(128))?)?;
    let experts = cfg.usize_aliased("num_local_experts", "num_experts", 128)?;
    spec.moe = Some(MoeSpec {
        ungated: None,
        experts,
        intermediate: cfg.usize_or("intermediate_size", 2880)?,
        routing: Routing {
            top_k: cfg.usize_or("num_experts_per_tok", 4)?,
            normalize: false,
            round_weights: true,
            scoring: Scoring::SoftmaxOfTopK,
            scale: 1.0,
        },
        sparse_layers: vec![true; layers],
        shared: None,
        biased: true,
        shared_bias: false,
        glu: Glu::Clamped {
            alpha: cfg.f64_or("swiglu_alpha", 1.702)?,
            limit: cfg.f64_or("swiglu_limit", 7.0)?,
        },
    });
    Ok(spec)
}

/// The checkpoint with the router read as the decoder's `mlp.gate` and each layer's experts split
/// into `mlp.experts.{j}.{gate_up_proj,down_proj}.{weight,bias}` (`[out, in]`, gate rows then up
/// rows).
fn decoder_weights(weights: &Weights) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        if name.ends_with("_blocks") || name.ends_with("_scales") {
            return Err(Error::Unsupported(format!(
                "tensor '{name}': MXFP4-quantized gpt-oss checkpoints are not supported (dequantize it first, \
                 e.g. transformers' Mxfp4Config(dequantize=True), and save it)"
            )));
        }
        let Some((layer, leaf)) = name.split_once(".mlp.experts.") else {
            out.push((name.replace(".mlp.router.", ".mlp.gate."), t));
            continue;
        };
        let shape = t.dims().to_vec();
        let experts = shape.first().copied().unwrap_or(0);
        let bad = || Error::Weight(format!("tensor '{name}' has an unexpected shape {shape:?}"));
        for j in 0..experts {
            let e = t.select(0, j as isize)?;
            let (suffix, part) = match (leaf, shape.len()) {
                // `[hidden, 2 · inter]`, gate and up interleaved: rows 0, 2, 4... then 1, 3, 5...
                ("gate_up_proj", 3) => ("gate_up_proj.weight", deinterleave(&e.transpose(0, 1)?)?),
                ("gate_up_proj_bias", 2) => ("gate_up_proj.bias", deinterleave(&e)?),
                ("down_proj", 3) => ("down_proj.weight", e.transpose(0, 1)?.contiguous()?),
                ("down_proj_bias", 2) => ("down_proj.bias", e.contiguous()?),
                _ => return Err(bad()),
            };
            out.push((format!("{layer}.mlp.experts.{j}.{suffix}"), part));
        }
    }
    Ok(Weights::from_tensors(out))
}

/// `t`'s rows (its leading dim, of even length) reordered: the even ones, then the odd ones.
fn deinterleave(t: &Tensor) -> Result<Tensor> {
    let dims = t.dims().to_vec();
    let n = dims.first().copied().unwrap_or(0);
    if n % 2 == 1 {
        return Err(Error::Weight(format!("gate_up_proj has an odd width {n}: gate and up must pair up")));
    }
    let rest: usize = dims[1..].iter().product();
    let pairs = t.contiguous()?.reshape([n / 2, 2, rest])?.transpose(0, 1)?.contiguous()?;
    Ok(pairs.reshape(dims)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_and_up_columns_are_split_and_the_default_rope_is_yarn() {
        let t = Tensor::from_vec((0..6).map(|i| i as f32).collect::<Vec<_>>(), [6, 1]).unwrap();
        let d = deinterleave(&t).unwrap().reshape([6]).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(d, vec![0., 2., 4., 1., 3., 5.]);
        let cfg = with_default_rope(&Config::from_json_str(r#"{"num_hidden_layers": 3}"#).unwrap());
        let rope = cfg.get("rope_parameters").cloned().unwrap();
        assert_eq!(rope["rope_type"], "yarn");
        assert_eq!(rope["rope_theta"], 150000.0);
        let spec = spec(&cfg).unwrap();
        assert_eq!(spec.windows, vec![Some(128), None, Some(128)]);
        assert!(spec.sinks && spec.qkv_bias && spec.o_bias);
    }
}

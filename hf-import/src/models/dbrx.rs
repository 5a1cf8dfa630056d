//! DBRX (`DbrxForCausalLM`, `DbrxModel`: databricks/dbrx-base and dbrx-instruct): pre-norm blocks
//! with bias-free layer norms, a fused `Wqkv` (`[q; k; v]`, `attn_config.kv_n_heads` key/value
//! heads, optionally clamped by `attn_config.clip_qkv`), RoPE, no biases, and a mixture in every
//! layer: `ffn_config.moe_num_experts` (4) gated experts of `ffn_hidden_size`, the
//! `moe_top_k` (1) most probable a token, their probabilities divided by their
//! `moe_normalize_expert_weights`-norm (1: their sum; null: kept). As transformers 5.24 runs it,
//! RoPE takes `rope_parameters` (base 10000 by default): `attn_config.rope_theta` is not read.
//!
//! The checkpoint's names (`transformer.wte`, `blocks.N.norm_attn_norm.{norm_1, attn.Wqkv,
//! attn.out_proj, norm_2}`, `ffn.router.layer`, `ffn.experts.mlp.{w1, v1, w2}`, `norm_f`) are read
//! as the decoder's; the experts' stacked `w1`/`v1` (`[experts · ffn, hidden]`) as their fused gate
//! and up projections, `w2` (the same shape) transposed as their down projections.

use oxtorch_tensor::Tensor;
use serde_json::{Map, Value};

use super::decoder::{CausalLm, DecoderSpec, MoeSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `DbrxForCausalLM`.
    DbrxForCausalLM
);

impl DbrxForCausalLM {
    /// Loads the model from a DBRX config and checkpoint (names with `transformer.`, or without for
    /// a base model's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let spec = spec(&cfg)?;
        let experts = spec.moe.as_ref().map_or(0, |m| m.experts);
        let weights = decoder_weights(weights, experts, cfg.usize("intermediate_size")?)?;
        Ok(DbrxForCausalLM(CausalLm::load(&cfg, &weights, spec)?))
    }
}

/// The nested config `key` (`attn_config`, `ffn_config`) as an object (empty when absent).
fn nested(cfg: &Config, key: &str) -> Result<Map<String, Value>> {
    match cfg.get(key) {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(v) => Err(Error::Config(format!("\"{key}\" must be an object, got {v}"))),
    }
}

/// `DbrxConfig` under the decoder's key names (its defaults where the config has none).
fn decoder_config(cfg: &Config) -> Result<Config> {
    let attn = Config::from_map(nested(cfg, "attn_config")?);
    let ffn = Config::from_map(nested(cfg, "ffn_config")?);
    let hidden = cfg.usize_or("d_model", 2048)?;
    let heads = cfg.usize_or("n_heads", 16)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(format!("d_model ({hidden}) must be a multiple of n_heads ({heads})")));
    }
    let act = match ffn.get("ffn_act_fn") {
        None => "silu".to_string(),
        Some(Value::Object(f)) => f.get("name").and_then(Value::as_str).unwrap_or("silu").to_string(),
        Some(v) => return Err(Error::Config(format!("ffn_config.ffn_act_fn must be an object, got {v}"))),
    };
    let mut json = cfg.json().clone();
    for (key, value) in [
        ("hidden_size", Value::from(hidden)),
        ("num_attention_heads", heads.into()),
        ("num_key_value_heads", attn.usize_or("kv_n_heads", 1)?.into()),
        ("head_dim", (hidden / heads).into()),
        ("num_hidden_layers", cfg.usize_or("n_layers", 24)?.into()),
        ("intermediate_size", ffn.usize_or("ffn_hidden_size", 3584)?.into()),
        ("max_position_embeddings", cfg.usize_or("max_seq_len", 2048)?.into()),
        ("vocab_size", cfg.usize_or("vocab_size", 32000)?.into()),
        ("rms_norm_eps", 1e-5.into()),
        ("hidden_act", act.into()),
        ("num_local_experts", ffn.usize_or("moe_num_experts", 4)?.into()),
        ("num_experts_per_tok", ffn.usize_or("moe_top_k", 1)?.into()),
    ] {
        json.insert(key.to_string(), value);
    }
    if let Some(clip) = attn.nullable_f64_or("clip_qkv", None)? {
        json.insert("clip_qkv".into(), clip.into());
    }
    let norm = match ffn.json().get("moe_normalize_expert_weights") {
        None => Some(1.0),
        Some(_) => ffn.nullable_f64_or("moe_normalize_expert_weights", Some(1.0))?,
    };
    json.insert("moe_normalize_expert_weights".into(), norm.map_or(Value::Null, Value::from));
    Ok(Config::from_map(json))
}

/// DBRX's structure as a [`DecoderSpec`], from its decoder config.
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    if spec.tie_word_embeddings {
        // (`DbrxConfig.validate_architecture`)
        return Err(Error::Config("tie_word_embeddings is not supported for DBRX models.".into()));
    }
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.layer_norm = true;
    spec.act = Activation::from_name(cfg.str("hidden_act")?)?;
    spec.clip_qkv = cfg.nullable_f64_or("clip_qkv", None)?;
    let normalize = match cfg.nullable_f64_or("moe_normalize_expert_weights", None)? {
        None => false,
        Some(1.0) => true,
        Some(p) => {
            return Err(Error::Unsupported(format!(
                "DBRX's moe_normalize_expert_weights {p}: only the 1-norm (or none) is supported"
            )))
        }
    };
    let layers = cfg.layers("num_hidden_layers")?;
    spec.moe = Some(MoeSpec::routed(
        cfg.usize("num_local_experts")?,
        cfg.usize("intermediate_size")?,
        Routing {
            top_k: cfg.usize("num_experts_per_tok")?,
            normalize,
            round_weights: true,
            scoring: Scoring::Softmax,
            scale: 1.0,
        },
        vec![true; layers],
    ));
    Ok(spec)
}

/// The checkpoint under the decoder's names and layouts (see the module docs); the names outside
/// the model's (`lm_head.*`) kept.
fn decoder_weights(weights: &Weights, experts: usize, ffn: usize) -> Result<Weights> {
    let renamed = weights.renamed(|name| {
        let (prefix, rest) = match name.strip_prefix("transformer.") {
            Some(rest) => ("model.", rest),
            None if name.starts_with("lm_head.") => return Some(name.to_string()),
            None => ("", name),
        };
        let renamed = match rest.strip_prefix("blocks.") {
            Some(layer) => format!(
                "layers.{}",
                layer
                    .replace(".norm_attn_norm.norm_1.", ".input_layernorm.")
                    .replace(".norm_attn_norm.norm_2.", ".post_attention_layernorm.")
                    .replace(".norm_attn_norm.attn.Wqkv.", ".self_attn.qkv_proj.")
                    .replace(".norm_attn_norm.attn.out_proj.", ".self_attn.o_proj.")
                    .replace(".ffn.router.layer.", ".mlp.gate.")
                    .replace(".ffn.experts.mlp.", ".mlp.experts.dbrx_")
            ),
            None => rest.replace("wte.", "embed_tokens.").replace("norm_f.", "norm."),
        };
        Some(format!("{prefix}{renamed}"))
    });
    // The experts' stacked matrices as the fused layout: `gate_up_proj` `[experts, 2 · ffn,
    // hidden]` from `w1` and `v1`, `down_proj` `[experts, hidden, ffn]` from `w2`.
    let Some(rows) = experts.checked_mul(ffn) else {
        return Err(Error::Config(format!(
            "{experts} experts of {ffn} is too large (moe_num_experts, ffn_hidden_size)"
        )));
    };
    let mut fused = Vec::new();
    for name in renamed.names().filter(|n| n.ends_with(".mlp.experts.dbrx_w1")) {
        let stem = name.trim_end_matches("dbrx_w1");
        let part = |leaf: &str| -> Result<Tensor> {
            let key = format!("{stem}{leaf}");
            let t = renamed.get(&key)?.ok_or_else(|| {
                Error::Weight(format!(
                    "tensor '{}' is missing from the checkpoint",
                    key.replace("dbrx_", "mlp.")
                ))
            })?;
            let dims = t.dims().to_vec();
            if dims.len() != 2 || dims[0] != rows {
                return Err(Error::Weight(format!(
                    "tensor '{}' has shape {dims:?}; expected [{}, hidden] ({experts} experts of {ffn})",
                    key.replace("dbrx_", "mlp."),
                    rows
                )));
            }
            Ok(t.reshape([experts, ffn, dims[1]])?)
        };
        let gate_up = Tensor::cat(&[&part("dbrx_w1")?, &part("dbrx_v1")?], 1)?.contiguous()?;
        let down = part("dbrx_w2")?.transpose(1, 2)?.contiguous()?;
        fused.push((format!("{stem}gate_up_proj"), gate_up));
        fused.push((format!("{stem}down_proj"), down));
    }
    Ok(renamed.renamed(|n| (!n.contains(".mlp.experts.dbrx_")).then(|| n.to_string())).with_tensors(fused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_configs_read_as_the_decoders() {
        let c = decoder_config(
            &Config::from_json_str(
                r#"{"d_model": 64, "n_heads": 4, "n_layers": 2, "attn_config": {"kv_n_heads": 2, "clip_qkv": 8},
                    "ffn_config": {"ffn_hidden_size": 12, "moe_num_experts": 3, "moe_top_k": 2,
                                   "ffn_act_fn": {"name": "gelu"}, "moe_normalize_expert_weights": null}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!((c.usize("num_key_value_heads").unwrap(), c.usize("head_dim").unwrap()), (2, 16));
        let s = spec(&c).unwrap();
        assert_eq!(s.clip_qkv, Some(8.0));
        let moe = s.moe.unwrap();
        assert_eq!(
            (moe.experts, moe.intermediate, moe.routing.top_k, moe.routing.normalize),
            (3, 12, 2, false)
        );
        let p2 = r#"{"n_layers": 1, "ffn_config": {"moe_normalize_expert_weights": 2.0}}"#;
        assert!(spec(&decoder_config(&Config::from_json_str(p2).unwrap()).unwrap()).is_err());
    }
}

//! GPT-NeoX (`GPTNeoXForCausalLM`, `GPTNeoXModel`: Pythia, GPT-NeoX-20B): layer norms, RoPE over
//! the first `rotary_pct` of each head, attention and MLP in parallel on the layer's input
//! (`use_parallel_residual`), a fused `query_key_value` interleaved per head, an ungated MLP, an
//! untied `embed_out`. The config (`rotary_pct`, `rotary_emb_base`, `layer_norm_eps` in the 4.x
//! style, or `rope_parameters`) and the checkpoint (`gpt_neox.*`, or a base model's bare names,
//! with or without the old buffers `attention.bias`, `attention.masked_bias`,
//! `attention.rotary_emb.inv_freq`) are read into the decoder's layout.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// transformers' `GPTNeoXForCausalLM`.
#[derive(Debug, Clone)]
pub struct GPTNeoXForCausalLM(pub CausalLm);

impl std::ops::Deref for GPTNeoXForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GPTNeoXForCausalLM {
    /// Loads the model from a GPT-NeoX config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let heads = cfg.usize("num_attention_heads")?;
        let weights = decoder_weights(weights, cfg.layers("num_hidden_layers")?, heads)?;
        Ok(GPTNeoXForCausalLM(CausalLm::load(&cfg, &weights, spec(&cfg)?)?))
    }
}

/// The config under the decoder's key names: RoPE's base and share of each head from
/// `rotary_emb_base` (default 10000) and `rotary_pct` (default 0.25) where no `rope_parameters`
/// give them (a 4.x `rope_scaling` still scales), the layer-norm epsilon, one key-value head per
/// head.
fn decoder_config(cfg: &Config) -> Result<Config> {
    let (hidden, heads) = (cfg.usize("hidden_size")?, cfg.usize("num_attention_heads")?);
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::Config(
            "The hidden size is not divisible by the number of attention heads! Make sure to update them!"
                .into(),
        ));
    }
    let mut json = cfg.json().clone();
    let mut set = |key: &str, value: Value| {
        json.insert(key.to_string(), value);
    };
    set("num_key_value_heads", heads.into());
    set("head_dim", (hidden / heads).into());
    set("rms_norm_eps", cfg.f64_or("layer_norm_eps", 1e-5)?.into());
    if cfg.get("rope_parameters").is_none() {
        // As `GPTNeoXConfig` builds its rope dict: from these keys (or their defaults) alone; a
        // top-level `rope_theta` or `partial_rotary_factor` is not read.
        set("rope_theta", cfg.f64_or("rotary_emb_base", 10000.0)?.into());
        set("partial_rotary_factor", cfg.f64_or("rotary_pct", 0.25)?.into());
    }
    Ok(Config::from_map(json))
}

/// GPT-NeoX's structure as a [`DecoderSpec`].
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let bias = cfg.bool_or("attention_bias", true)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (bias, bias, true);
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.parallel_residual = cfg.bool_or("use_parallel_residual", true)?;
    spec.act = crate::layers::Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint's tensors under the decoder's names (with `model.` where the checkpoint has the
/// `gpt_neox.` prefix), `query_key_value` regrouped from per-head `[q k v]` to `[q; k; v]`.
fn decoder_weights(weights: &Weights, layers: usize, heads: usize) -> Result<Weights> {
    let (prefix, root) =
        if weights.contains("gpt_neox.embed_in.weight") { ("gpt_neox.", "model.") } else { ("", "") };
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        if name == "embed_out.weight" {
            out.push(("lm_head.weight".into(), t));
            continue;
        }
        let Some(rest) = name.strip_prefix(prefix) else {
            out.push((name.clone(), t));
            continue;
        };
        let (new, regroup) = match rest {
            "embed_in.weight" => (format!("{root}embed_tokens.weight"), false),
            "final_layer_norm.weight" | "final_layer_norm.bias" => {
                (format!("{root}norm.{}", &rest["final_layer_norm.".len()..]), false)
            }
            _ => match layer_name(rest, layers) {
                Some(Some((name, regroup))) => (format!("{root}{name}"), regroup),
                Some(None) => continue,
                None => (name.clone(), false),
            },
        };
        let t = if regroup { per_head_qkv_to_grouped(name, &t, heads)? } else { t };
        out.push((new, t));
    }
    Ok(Weights::from_tensors(out))
}

/// The decoder's name of `layers.{i}.{part}` and whether it is the fused `query_key_value` (weight
/// or bias); `Some(None)` for a buffer left out, `None` for a name outside the blocks.
fn layer_name(rest: &str, layers: usize) -> Option<Option<(String, bool)>> {
    let after = rest.strip_prefix("layers.")?;
    let (index, part) = after.split_once('.')?;
    let i: usize = index.parse().ok().filter(|i| *i < layers)?;
    let (target, regroup) = match part {
        "attention.bias" | "attention.masked_bias" | "attention.rotary_emb.inv_freq" => return Some(None),
        "input_layernorm.weight"
        | "input_layernorm.bias"
        | "post_attention_layernorm.weight"
        | "post_attention_layernorm.bias" => (part.to_string(), false),
        "attention.query_key_value.weight" => ("self_attn.qkv_proj.weight".into(), true),
        "attention.query_key_value.bias" => ("self_attn.qkv_proj.bias".into(), true),
        "attention.dense.weight" => ("self_attn.o_proj.weight".into(), false),
        "attention.dense.bias" => ("self_attn.o_proj.bias".into(), false),
        "mlp.dense_h_to_4h.weight" => ("mlp.up_proj.weight".into(), false),
        "mlp.dense_h_to_4h.bias" => ("mlp.up_proj.bias".into(), false),
        "mlp.dense_4h_to_h.weight" => ("mlp.down_proj.weight".into(), false),
        "mlp.dense_4h_to_h.bias" => ("mlp.down_proj.bias".into(), false),
        _ => return None,
    };
    Some(Some((format!("layers.{i}.{target}"), regroup)))
}

/// `query_key_value`'s rows (weight `[3 · hidden, hidden]` or bias `[3 · hidden]`) from GPT-NeoX's
/// per-head `[q_h k_h v_h]` order to all queries, then all keys, then all values.
pub(super) fn per_head_qkv_to_grouped(name: &str, t: &Tensor, heads: usize) -> Result<Tensor> {
    let dims = t.dims().to_vec();
    let rows = dims.first().copied().unwrap_or(0);
    if heads == 0 || !rows.is_multiple_of(3 * heads) || dims.len() > 2 {
        return Err(Error::Weight(format!(
            "tensor '{name}' of shape {dims:?} does not hold q, k and v for {heads} heads"
        )));
    }
    let head_dim = rows / (3 * heads);
    let mut split = vec![heads, 3, head_dim];
    split.extend_from_slice(&dims[1..]);
    Ok(t.reshape(split)?.transpose(0, 1)?.contiguous()?.reshape(dims)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-head `[q k v]` rows become `[q; k; v]`.
    #[test]
    fn query_key_value_is_regrouped() {
        // 2 heads of dim 1: rows q0 k0 v0 q1 k1 v1.
        let t = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], [6]).unwrap();
        let g = per_head_qkv_to_grouped("b", &t, 2).unwrap();
        assert_eq!(g.to_vec::<f32>().unwrap(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert!(per_head_qkv_to_grouped("b", &t, 4).unwrap_err().to_string().contains("for 4 heads"));
    }

    /// The 4.x keys give RoPE's base and share; `rope_parameters` are left as they are.
    #[test]
    fn rotary_keys_of_both_styles() {
        let cfg = |json: &str| decoder_config(&Config::from_json_str(json).unwrap()).unwrap();
        let c = cfg(
            r#"{"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4, "rotary_pct": 0.5, "rotary_emb_base": 100}"#,
        );
        let rope = c.rope(None).unwrap();
        assert_eq!((rope.theta, rope.partial_rotary_factor), (100.0, 0.5));
        let c = cfg(r#"{"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4}"#);
        assert_eq!(c.rope(None).unwrap().partial_rotary_factor, 0.25);
    }
}

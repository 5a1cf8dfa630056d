//! Qwen3.5's language model (`Qwen3_5ForCausalLM`, model type `qwen3_5_text`: the text part of
//! Qwen/Qwen3.5-*): a decoder whose layers are gated delta nets (`layers.{i}.linear_attn`, see
//! [`GatedDeltaNet`]) except the `full_attention` ones of `layer_types` (by default every
//! `full_attention_interval`-th, 4), which attend with per-head q/k norms, RoPE over a quarter of
//! each head (`partial_rotary_factor` 0.25 unless the rope dict says otherwise; the multimodal
//! sections coincide on text) and their output gated by `sigmoid` of the gate rows `q_proj`
//! interleaves per head. The norms scale by `1 + w` in float32 (Gemma's). A multimodal checkpoint
//! (`Qwen3_5ForConditionalGeneration`, model type `qwen3_5`) runs its language model on text (see
//! [`Qwen3_5ForCausalLM::load_multimodal`]); its vision tower and the multi-token prediction
//! layers (`mtp.*`) are not read.
//!
//! [`GatedDeltaNet`]: crate::layers::GatedDeltaNet

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec, DeltaNetSpec, SharedExpert};
use super::family::causal_lm_newtype;
use super::moe::qwen_mixture;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, DeltaNetDims, OutputGate, RmsNormStyle};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Qwen3_5ForCausalLM`.
    Qwen3_5ForCausalLM
);

causal_lm_newtype!(
    /// transformers' `Qwen3NextForCausalLM` (Qwen/Qwen3-Next-80B-A3B): Qwen3.5's layers with
    /// Qwen2-MoE's mixture (`num_experts` of `moe_intermediate_size`, the top `num_experts_per_tok`,
    /// a shared expert gated by `sigmoid(shared_expert_gate(x))`) on every
    /// `decoder_sparse_step`-th layer outside `mlp_only_layers`, and each delta net's q, k, v, z
    /// (and b, a) projected together, grouped by key head (`in_proj_qkvz`, `in_proj_ba`).
    Qwen3NextForCausalLM
);

causal_lm_newtype!(
    /// transformers' `Qwen3_5MoeForCausalLM` (Qwen3.5's mixture-of-experts language models): Qwen3.5's
    /// layers with a mixture on every layer (`num_experts` of `moe_intermediate_size`, the top
    /// `num_experts_per_tok` renormalised, a shared expert gated by `sigmoid(shared_expert_gate(x))`).
    Qwen3_5MoeForCausalLM
);

impl Qwen3_5MoeForCausalLM {
    /// Loads the model.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        // (Every layer is a mixture: `Qwen3_5MoeTextConfig` has no dense `intermediate_size`.)
        let mut json = cfg.json().clone();
        if !json.contains_key("intermediate_size") {
            json.insert("intermediate_size".into(), cfg.usize_or("moe_intermediate_size", 512)?.into());
        }
        let cfg = &Config::from_map(json);
        let shared = cfg.usize_or("shared_expert_intermediate_size", 512)?;
        let mut spec = gated_spec(cfg)?;
        spec.default_kv_heads = Some(2);
        spec.moe = Some(qwen_mixture(cfg, 256, 512, 8, Some(SharedExpert::Gated(shared)))?);
        Ok(Qwen3_5MoeForCausalLM(load_gated(cfg, weights, spec)?))
    }

    /// The language model of a multimodal checkpoint (`Qwen3_5MoeForConditionalGeneration`), as
    /// [`Qwen3_5ForCausalLM::load_multimodal`] reads Qwen3.5's.
    pub fn load_multimodal(cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load(&text_config(cfg, "qwen3_5_moe_text")?, weights)
    }
}

impl Qwen3NextForCausalLM {
    /// Loads the model, its grouped projections regrouped as Qwen3.5's.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let shared = cfg.usize_or("shared_expert_intermediate_size", 512)?;
        let mut spec = gated_spec(cfg)?;
        spec.default_kv_heads = Some(2);
        spec.moe = Some(qwen_mixture(cfg, 512, 512, 10, Some(SharedExpert::Gated(shared)))?);
        let dims = spec.delta_net.as_ref().expect("set by gated_spec").dims;
        let weights = ungroup_delta_projections(weights, &dims)?;
        Ok(Qwen3NextForCausalLM(load_gated(cfg, &weights, spec)?))
    }
}

impl Qwen3_5ForCausalLM {
    /// Loads the model, each attention layer's `q_proj` split into its query and gate rows.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Ok(Qwen3_5ForCausalLM(load_gated(cfg, weights, gated_spec(cfg)?)?))
    }
}

/// The decoder of Qwen3.5's layers, read from `cfg` (see the module docs).
fn gated_spec(cfg: &Config) -> Result<DecoderSpec> {
    let layers = cfg.layers("num_hidden_layers")?;
    let delta_layers = match cfg.layer_types() {
        Some(types) if types.len() == layers => types.iter().map(|t| t == "linear_attention").collect(),
        Some(types) => {
            return Err(Error::Config(format!(
                "\"layer_types\" has {} entries for {layers} layers",
                types.len()
            )))
        }
        None => {
            let interval = cfg.usize_or("full_attention_interval", 4)?.max(1);
            (0..layers).map(|i| (i + 1) % interval != 0).collect()
        }
    };
    let hidden = cfg.usize("hidden_size")?;
    let dims = DeltaNetDims {
        hidden,
        key_heads: cfg.usize_or("linear_num_key_heads", 16)?,
        key_dim: cfg.usize_or("linear_key_head_dim", 128)?,
        value_heads: cfg.usize_or("linear_num_value_heads", 32)?,
        value_dim: cfg.usize_or("linear_value_head_dim", 128)?,
        kernel: cfg.usize_or("linear_conv_kernel_dim", 4)?,
        act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
        eps: cfg.f64_or("rms_norm_eps", 1e-6)?,
    };
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::Gemma;
    spec.qk_norm = true;
    spec.output_gate = Some(OutputGate::Sigmoid { bias: spec.qkv_bias });
    spec.default_head_dim = Some(256);
    spec.default_kv_heads = Some(4);
    spec.delta_net = Some(DeltaNetSpec { dims, layers: delta_layers });
    Ok(spec)
}

/// The decoder of `spec` from `weights`, each attention layer's `q_proj` split into its query and
/// gate rows.
fn load_gated(cfg: &Config, weights: &Weights, spec: DecoderSpec) -> Result<CausalLm> {
    let heads = cfg.usize("num_attention_heads")?;
    let hidden = cfg.usize("hidden_size")?;
    let head_dim = cfg.nullable_usize_or("head_dim", Some(256))?.unwrap_or(hidden / heads.max(1));
    let weights = split_query_gates(&weights.renamed(|n| Some(text_name(n))), heads, head_dim)?;
    CausalLm::load(cfg, &weights, spec)
}

/// `weights` with Qwen3-Next's grouped delta-net projections as Qwen3.5's: `in_proj_qkvz`
/// (per key head: its query, key, values and z rows) as `in_proj_qkv` and `in_proj_z`,
/// `in_proj_ba` (per key head: its b rows, then its a rows) as `in_proj_b` and `in_proj_a`.
fn ungroup_delta_projections(weights: &Weights, d: &DeltaNetDims) -> Result<Weights> {
    // (Positive sizes whose widths fit: the groups' rows below do not overflow.)
    d.check()?;
    let r = d.value_heads / d.key_heads;
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 8);
    for item in weights.iter() {
        let (name, t) = item?;
        let (prefix, parts): (&str, Vec<(&str, usize)>) =
            if let Some(p) = name.strip_suffix(".in_proj_qkvz.weight") {
                (p, vec![("q", d.key_dim), ("k", d.key_dim), ("v", r * d.value_dim), ("z", r * d.value_dim)])
            } else if let Some(p) = name.strip_suffix(".in_proj_ba.weight") {
                (p, vec![("b", r), ("a", r)])
            } else {
                out.push((name.clone(), t));
                continue;
            };
        let per_group: usize = parts.iter().map(|(_, n)| n).sum();
        let hidden = t.dims().get(1).copied().unwrap_or(0);
        if t.dims() != [d.key_heads * per_group, hidden] {
            return Err(Error::Weight(format!(
                "tensor '{name}' has shape {:?}; {} key heads need {} rows",
                t.dims(),
                d.key_heads,
                d.key_heads * per_group
            )));
        }
        let grouped = t.reshape([d.key_heads, per_group, hidden])?;
        let mut at = 0;
        let mut pieces = std::collections::BTreeMap::new();
        for (part, n) in parts {
            let rows = grouped.narrow(1, at as isize, n)?.contiguous()?.reshape([d.key_heads * n, hidden])?;
            pieces.insert(part, rows);
            at += n;
        }
        if pieces.contains_key("q") {
            let qkv = Tensor::cat(&[&pieces["q"], &pieces["k"], &pieces["v"]], 0)?;
            out.push((format!("{prefix}.in_proj_qkv.weight"), qkv));
            out.push((format!("{prefix}.in_proj_z.weight"), pieces["z"].clone()));
        } else {
            out.push((format!("{prefix}.in_proj_b.weight"), pieces["b"].clone()));
            out.push((format!("{prefix}.in_proj_a.weight"), pieces["a"].clone()));
        }
    }
    Ok(Weights::from_tensors(out))
}

impl Qwen3_5ForCausalLM {
    /// The language model of a multimodal checkpoint (`Qwen3_5ForConditionalGeneration`): its
    /// `text_config` (with the top level's `tie_word_embeddings` and dtype), its
    /// `model.language_model.*` tensors and `lm_head.weight`.
    pub fn load_multimodal(cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load(&text_config(cfg, "qwen3_5_text")?, weights)
    }
}

/// A multimodal checkpoint's `text_config` as the text model's config (`model_type`), with the
/// top level's `tie_word_embeddings` and dtype.
fn text_config(cfg: &Config, model_type: &str) -> Result<Config> {
    let mut text = match cfg.get("text_config") {
        None => serde_json::Map::new(),
        Some(serde_json::Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    text.insert("model_type".into(), model_type.into());
    text.insert("tie_word_embeddings".into(), cfg.bool_or("tie_word_embeddings", false)?.into());
    for key in ["dtype", "torch_dtype"] {
        if let (false, Some(v)) = (text.contains_key(key), cfg.get(key)) {
            text.insert(key.to_string(), v.clone());
        }
    }
    Ok(Config::from_map(text))
}

/// A multimodal checkpoint's language model tensor under the text model's name.
fn text_name(name: &str) -> String {
    match name.strip_prefix("model.language_model.") {
        Some(rest) => format!("model.{rest}"),
        None => name.to_string(),
    }
}

/// `weights` with each `self_attn.q_proj` (`[heads × 2 × head_dim, hidden]`: per head its query
/// rows, then its gate rows) split into `q_proj` and `gate_proj` (`[heads × head_dim, hidden]`
/// each), biases alike.
fn split_query_gates(weights: &Weights, heads: usize, head_dim: usize) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 8);
    for item in weights.iter() {
        let (name, t) = item?;
        let Some(prefix) =
            name.strip_suffix(".self_attn.q_proj.weight").or(name.strip_suffix(".self_attn.q_proj.bias"))
        else {
            out.push((name.clone(), t));
            continue;
        };
        let part = if name.ends_with("weight") { "weight" } else { "bias" };
        let dims = t.dims().to_vec();
        let rows = heads.checked_mul(head_dim).and_then(|n| n.checked_mul(2));
        if rows.is_none() || dims.first() != rows.as_ref() {
            return Err(Error::Weight(format!(
                "tensor '{name}' has shape {dims:?}; the gated attention's q_proj needs {heads} heads × 2 × {head_dim} rows"
            )));
        }
        let rest: Vec<usize> = dims[1..].to_vec();
        let mut grouped = vec![heads, 2, head_dim];
        grouped.extend(&rest);
        let t = t.reshape(grouped.as_slice())?;
        let mut flat = vec![heads * head_dim];
        flat.extend(&rest);
        let half =
            |i: isize| -> Result<Tensor> { Ok(t.select(1, i)?.contiguous()?.reshape(flat.as_slice())?) };
        out.push((format!("{prefix}.self_attn.q_proj.{part}"), half(0)?));
        out.push((format!("{prefix}.self_attn.gate_proj.{part}"), half(1)?));
    }
    Ok(Weights::from_tensors(out))
}

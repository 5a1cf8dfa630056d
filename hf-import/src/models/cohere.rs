//! Cohere (`CohereForCausalLM`: Command R, Command R+, Aya 23 and Aya Expanse), Cohere 2
//! (`Cohere2ForCausalLM`: Command R7B, Command A) and Cohere 2 MoE (`Cohere2MoeForCausalLM`).
//!
//! Both run attention and the MLP in parallel on one norm, `x + attn(norm(x)) + mlp(norm(x))`,
//! with `CohereLayerNorm` (a layer norm with a scale and no shift, computed in float32), RoPE over
//! interleaved pairs (dims `2i` and `2i + 1` rotate together, not `i` and `i + head_dim / 2`), the
//! LM head tied to the embeddings by default and the logits multiplied by `logit_scale` (0.0625 by
//! default). Cohere may norm q and k per head with a scale per head (`use_qk_norm`, Command R+);
//! Cohere 2 alternates sliding-window layers with RoPE and full layers without (every fourth by
//! default), and its `head_dim` is `hidden_size / num_attention_heads` unless the config names one.
//!
//! Cohere 2 MoE is Cohere 2 with an explicit `head_dim` (128), RMS norms where the config sets
//! `rms_norm_eps`, and a mixture on the layers `mlp_layer_types` marks `sparse` (all but the first
//! `first_k_dense_replace` by default; those are dense, `prefix_dense_intermediate_size` wide, and
//! with `prefix_dense_sliding_window_pattern` 1 their full layers keep RoPE): `num_experts` (8) of
//! `intermediate_size`, the `num_experts_per_tok` (2) largest router logits weighted by a softmax
//! over them (`expert_selection_fn: "softmax"`) or by their sigmoids (renormalised with
//! `norm_topk_prob`), beside `num_shared_experts` shared experts whose output is averaged with the
//! routed ones' (`"average"`) or added (`"sum"`).
//!
//! The interleaved rotation is the usual half-split one on q and k with their dims reordered
//! (evens, then odds, within each head): the weights of `q_proj`, `k_proj` (and their biases and
//! q/k norm scales) are permuted so at load, which leaves every attention score as it was.

use oxtorch_tensor::Tensor;

use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::deepseek::sparse_layers_by_type;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{halves_from_interleaved, RmsNormStyle, Routing, Scoring};
use crate::weights::Weights;

/// Which of the two families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    Cohere,
    Cohere2,
    Cohere2Moe,
}

/// The config as the decoder reads it: `layer_norm_eps` as its norm epsilon; Cohere's window
/// keys dropped (it has no windows); Cohere 2's
/// `head_dim` from the hidden size and its layer types from `sliding_window_pattern` (4) when it
/// names none.
fn decoder_config(cfg: &Config, version: Version) -> Result<Config> {
    let mut json = cfg.json().clone();
    if version == Version::Cohere2Moe {
        return cohere2_moe_config(cfg, json);
    }
    json.insert("rms_norm_eps".into(), cfg.f64_or("layer_norm_eps", 1e-5)?.into());
    if version == Version::Cohere {
        // (Cohere's attention sees every earlier token whatever window keys a config carries.)
        for key in ["sliding_window", "layer_types", "use_sliding_window"] {
            json.remove(key);
        }
    }
    if version == Version::Cohere2 {
        let (hidden, heads) = (cfg.usize_or("hidden_size", 8192)?, cfg.usize_or("num_attention_heads", 64)?);
        if heads == 0 {
            return Err(Error::Config("num_attention_heads must be positive".into()));
        }
        // (An explicit `head_dim` is read, as Cohere 2's attention and rotary embedding do.)
        if cfg.get("head_dim").is_none() {
            json.insert("head_dim".into(), (hidden / heads).into());
        }
        if cfg.get("layer_types").is_none_or(serde_json::Value::is_null) {
            let pattern = cfg.usize_or("sliding_window_pattern", 4)?;
            if pattern == 0 {
                return Err(Error::Config("sliding_window_pattern must be positive".into()));
            }
            let types: Vec<&str> = (0..cfg.layers("num_hidden_layers")?)
                .map(|i| if (i + 1) % pattern != 0 { "sliding_attention" } else { "full_attention" })
                .collect();
            json.insert("layer_types".into(), types.into());
        }
        if cfg.get("sliding_window").is_none() {
            json.insert("sliding_window".into(), 4096.into());
        }
    }
    Ok(Config::from_map(json))
}

/// Cohere 2 MoE's config as the decoder reads it: its norm epsilon (`rms_norm_eps`, else
/// `layer_norm_eps`), `head_dim` (128), its layer types and MLP kinds from `first_k_dense_replace`
/// and the window patterns when it names none, and its dense MLPs' width as `intermediate_size`
/// (the experts' kept as `__hf_import_expert_intermediate_size`, RMS norms marked by
/// `__hf_import_rms_norm`: keys of the decoder config alone).
fn cohere2_moe_config(cfg: &Config, mut json: serde_json::Map<String, Value>) -> Result<Config> {
    let eps = match cfg.get("rms_norm_eps") {
        Some(_) => cfg.f64_or("rms_norm_eps", 1e-6)?,
        None => cfg.f64_or("layer_norm_eps", 1e-5)?,
    };
    json.insert("rms_norm_eps".into(), eps.into());
    json.insert("__hf_import_rms_norm".into(), cfg.get("rms_norm_eps").is_some().into());
    json.insert("head_dim".into(), cfg.usize_or("head_dim", 128)?.into());
    let layers = cfg.layers("num_hidden_layers")?;
    let dense = cfg.usize_or("first_k_dense_replace", 0)?.min(layers);
    if cfg.get("layer_types").is_none() {
        let (prefix, rest) = (
            cfg.usize_or("prefix_dense_sliding_window_pattern", 1)?,
            cfg.usize_or("sliding_window_pattern", 4)?,
        );
        if prefix == 0 || rest == 0 {
            return Err(Error::Config("the sliding window patterns must be positive".into()));
        }
        let kind = |i: usize, pattern: usize| {
            if !(i + 1).is_multiple_of(pattern) {
                "sliding_attention"
            } else {
                "full_attention"
            }
        };
        let types: Vec<&str> =
            (0..dense).map(|i| kind(i, prefix)).chain((0..layers - dense).map(|i| kind(i, rest))).collect();
        json.insert("layer_types".into(), types.into());
    }
    if cfg.get("mlp_layer_types").is_none() {
        let kinds: Vec<&str> = (0..layers).map(|i| if i < dense { "dense" } else { "sparse" }).collect();
        json.insert("mlp_layer_types".into(), kinds.into());
    }
    if !cfg.json().contains_key("sliding_window") {
        json.insert("sliding_window".into(), 4096.into());
    }
    let experts_width = cfg.usize("intermediate_size")?;
    json.insert("__hf_import_expert_intermediate_size".into(), experts_width.into());
    let dense_width = cfg.nullable_usize_or("prefix_dense_intermediate_size", None)?.unwrap_or(experts_width);
    json.insert("intermediate_size".into(), dense_width.into());
    Ok(Config::from_map(json))
}

/// Cohere 2 MoE's mixture (see the module docs), from its decoder config.
fn cohere2_moe_mixture(cfg: &Config) -> Result<MoeSpec> {
    let layers = cfg.layers("num_hidden_layers")?;
    let scoring = match cfg.str_or("expert_selection_fn", "softmax")? {
        "softmax" => Scoring::SoftmaxOfTopK,
        "sigmoid" => Scoring::Sigmoid { biased: false },
        other => {
            return Err(Error::Config(format!(
                "\"expert_selection_fn\" must be \"softmax\" or \"sigmoid\", got \"{other}\""
            )))
        }
    };
    let normalize = scoring == Scoring::Sigmoid { biased: false } && cfg.bool_or("norm_topk_prob", true)?;
    let intermediate = cfg.usize("__hf_import_expert_intermediate_size")?;
    let shared = intermediate.saturating_mul(cfg.usize_or("num_shared_experts", 0)?);
    let shared = match cfg.str_or("shared_expert_combination_strategy", "average")? {
        _ if shared == 0 => None,
        "average" => Some(SharedExpert::Averaged(shared)),
        "sum" => Some(SharedExpert::Plain(shared)),
        other => {
            return Err(Error::Config(format!(
                "\"shared_expert_combination_strategy\" must be \"sum\" or \"average\", got \"{other}\""
            )))
        }
    };
    let routing = Routing {
        top_k: cfg.usize_or("num_experts_per_tok", 2)?,
        normalize,
        round_weights: true,
        scoring,
        scale: 1.0,
    };
    let sparse_layers = sparse_layers_by_type(cfg, layers)?.unwrap_or_else(|| vec![true; layers]);
    let experts = cfg.usize_or("num_experts", 8)?;
    Ok(MoeSpec { shared, ..MoeSpec::routed(experts, intermediate, routing, sparse_layers) })
}

fn spec(cfg: &Config, version: Version) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::Cohere;
    spec.default_rms_norm_eps = 1e-5;
    spec.parallel_residual = true;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.o_bias = spec.qkv_bias;
    let scale = cfg.nullable_f64_or("logit_scale", Some(0.0625))?;
    spec.logit_scale = scale.filter(|&s| s != 1.0);
    match version {
        Version::Cohere => {
            spec.qk_norm = cfg.bool_or("use_qk_norm", false)?;
            spec.qk_norm_per_head = spec.qk_norm;
        }
        Version::Cohere2 | Version::Cohere2Moe => {
            let types = cfg.layer_types().unwrap_or_default();
            spec.windows = DecoderSpec::windows_from_layer_types(cfg, cfg.opt_usize("sliding_window")?)?;
            // Full-attention layers have no RoPE (but Cohere 2 MoE's dense prefix layers under
            // `prefix_dense_sliding_window_pattern` 1: their `force_rope`).
            spec.nope = types.iter().map(|t| t == "full_attention").collect();
            if version == Version::Cohere2Moe {
                let moe = cohere2_moe_mixture(cfg)?;
                if cfg.usize_or("prefix_dense_sliding_window_pattern", 1)? == 1 {
                    for (nope, sparse) in spec.nope.iter_mut().zip(&moe.sparse_layers) {
                        *nope &= *sparse;
                    }
                }
                if cfg.bool_or("__hf_import_rms_norm", false)? {
                    spec.norm_style = RmsNormStyle::Llama;
                }
                spec.moe = Some(moe);
            }
        }
    }
    Ok(spec)
}

/// The checkpoint as the decoder reads it: the one norm of each block also as its
/// `post_attention_layernorm` (the parallel block's MLP norm), and q and k reordered for the
/// half-split rotation (see the module docs).
fn decoder_weights(weights: &Weights, cfg: &Config) -> Result<Weights> {
    let heads = cfg.usize("num_attention_heads")?;
    let kv_heads = cfg.opt_usize("num_key_value_heads")?.unwrap_or(heads);
    let head_dim = cfg.usize("head_dim")?;
    if head_dim % 2 != 0 {
        return Err(Error::Config(format!("head_dim {head_dim} is odd: RoPE rotates pairs of dims")));
    }
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 64);
    for item in weights.iter() {
        let (name, t) = item?;
        let n = if name.contains(".self_attn.q_") { Some(heads) } else { None };
        let n = n.or(if name.contains(".self_attn.k_") { Some(kv_heads) } else { None });
        let t = match n {
            Some(n)
                if name.ends_with("_proj.weight")
                    || name.ends_with("_proj.bias")
                    || name.ends_with("_norm.weight") =>
            {
                halves_from_interleaved(&t, n, head_dim, head_dim)
                    .map_err(|e| Error::Weight(format!("tensor '{name}': {e}")))?
            }
            _ => t,
        };
        if name.contains(".input_layernorm.") {
            out.push((name.replace(".input_layernorm.", ".post_attention_layernorm."), t.clone()));
        }
        out.push((name.to_string(), t));
    }
    Ok(Weights::from_tensors(out))
}

macro_rules! cohere_family {
    ($(#[$doc:meta])* $name:ident, $version:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub CausalLm);

        impl $name {
            /// Loads the model from a parsed config and its weights.
            pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
                let cfg = decoder_config(cfg, $version)?;
                let spec = spec(&cfg, $version)?;
                let head_dim = match cfg.opt_usize("head_dim")? {
                    Some(d) => d,
                    None => cfg.usize("hidden_size")? / cfg.usize("num_attention_heads")?.max(1),
                };
                let mut json = cfg.json().clone();
                json.insert("head_dim".into(), head_dim.into());
                let cfg = Config::from_map(json);
                Ok($name(CausalLm::load(&cfg, &decoder_weights(weights, &cfg)?, spec)?))
            }
        }

        impl std::ops::Deref for $name {
            type Target = CausalLm;
            fn deref(&self) -> &CausalLm {
                &self.0
            }
        }
    };
}

cohere_family!(
    /// transformers' `CohereForCausalLM`.
    CohereForCausalLM,
    Version::Cohere
);

cohere_family!(
    /// transformers' `Cohere2ForCausalLM`.
    Cohere2ForCausalLM,
    Version::Cohere2
);

cohere_family!(
    /// transformers' `Cohere2MoeForCausalLM`.
    Cohere2MoeForCausalLM,
    Version::Cohere2Moe
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Cohere's config drops the window keys (its attention has none); Cohere 2's keeps them.
    #[test]
    fn only_cohere_2_reads_windows() {
        let cfg = Config::from_json_str(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "sliding_window": 2,
                "layer_types": ["sliding_attention"]}"#,
        )
        .unwrap();
        let v1 = decoder_config(&cfg, Version::Cohere).unwrap();
        assert!(v1.get("sliding_window").is_none() && v1.get("layer_types").is_none());
        let v2 = decoder_config(&cfg, Version::Cohere2).unwrap();
        assert_eq!(v2.usize("sliding_window").unwrap(), 2);
        assert_eq!(v2.usize("head_dim").unwrap(), 4);
        let explicit = Config::from_json_str(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "head_dim": 16}"#,
        )
        .unwrap();
        assert_eq!(decoder_config(&explicit, Version::Cohere2).unwrap().usize("head_dim").unwrap(), 16);
    }
}

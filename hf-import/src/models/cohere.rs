//! Cohere (`CohereForCausalLM`: Command R, Command R+, Aya 23 and Aya Expanse) and Cohere 2
//! (`Cohere2ForCausalLM`: Command R7B, Command A).
//!
//! Both run attention and the MLP in parallel on one norm, `x + attn(norm(x)) + mlp(norm(x))`,
//! with `CohereLayerNorm` (a layer norm with a scale and no shift, computed in float32), RoPE over
//! interleaved pairs (dims `2i` and `2i + 1` rotate together, not `i` and `i + head_dim / 2`), the
//! LM head tied to the embeddings by default and the logits multiplied by `logit_scale` (0.0625 by
//! default). Cohere may norm q and k per head with a scale per head (`use_qk_norm`, Command R+);
//! Cohere 2 alternates sliding-window layers with RoPE and full layers without (every fourth by
//! default), and its `head_dim` is always `hidden_size / num_attention_heads`.
//!
//! The interleaved rotation is the usual half-split one on q and k with their dims reordered
//! (evens, then odds, within each head): the weights of `q_proj`, `k_proj` (and their biases and
//! q/k norm scales) are permuted so at load, which leaves every attention score as it was.

use oxtorch_tensor::Tensor;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{halves_from_interleaved, RmsNormStyle};
use crate::weights::Weights;

/// Which of the two families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    Cohere,
    Cohere2,
}

/// The config as the decoder reads it: `layer_norm_eps` as its norm epsilon; Cohere 2's
/// `head_dim` from the hidden size and its layer types from `sliding_window_pattern` (4) when it
/// names none.
fn decoder_config(cfg: &Config, version: Version) -> Result<Config> {
    let mut json = cfg.json().clone();
    json.insert("rms_norm_eps".into(), cfg.f64_or("layer_norm_eps", 1e-5)?.into());
    if version == Version::Cohere2 {
        let (hidden, heads) = (cfg.usize_or("hidden_size", 8192)?, cfg.usize_or("num_attention_heads", 64)?);
        if heads == 0 {
            return Err(Error::Config("num_attention_heads must be positive".into()));
        }
        json.insert("head_dim".into(), (hidden / heads).into());
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
        Version::Cohere2 => {
            let types = cfg.layer_types().unwrap_or_default();
            spec.windows = DecoderSpec::windows_from_layer_types(cfg, cfg.opt_usize("sliding_window")?)?;
            // Full-attention layers have no RoPE.
            spec.nope = types.iter().map(|t| t == "full_attention").collect();
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

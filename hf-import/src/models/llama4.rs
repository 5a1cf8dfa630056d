//! Llama 4 (`Llama4ForCausalLM`, model type `llama4_text`; `Llama4ForConditionalGeneration`, model
//! type `llama4`, run as its language model on text: meta-llama/Llama-4-Scout and Maverick).
//!
//! Llama's blocks with:
//! - RoPE (interleaved, as complex products) on the layers `no_rope_layers` marks 1 (by default
//!   all but every `no_rope_layer_interval`-th, 4); its pairs are read as the half-split rotation
//!   on q/k rows reordered at load (`halves_from_interleaved`), which leaves every score as it was;
//! - on those layers, with `use_qk_norm`, q and k normed per head without a weight after RoPE
//!   (read as norms of ones), and a window-free chunked attention on the `chunked_attention`
//!   layers (by default the RoPE layers): a query sees the keys of its own chunk of
//!   `attention_chunk_size` tokens (8192), counted from each row's first kept token;
//! - on the other layers, with `attn_temperature_tuning`, the queries scaled by
//!   `1 + attn_scale·ln(1 + floor((column + 1) / floor_scale))` of their column in the cache;
//! - a mixture on the layers `moe_layers` lists (by default every `interleave_moe_layer_step`-th):
//!   `num_local_experts` experts of `intermediate_size`, the `num_experts_per_tok` largest router
//!   logits' sigmoids scaling those experts' inputs, beside a shared expert of the same width; the
//!   other layers' MLPs are `intermediate_size_mlp` wide. The experts' fused tensors
//!   (`gate_up_proj` `[experts, hidden, 2 · intermediate]`, `down_proj`
//!   `[experts, intermediate, hidden]`) are transposed at load to the decoder's layout.

use serde_json::Value;

use super::decoder::{AttentionChunk, CausalLm, DecoderSpec, MoeSpec, QueryScale, SharedExpert};
use super::family::causal_lm_newtype;
use super::gemma3_multimodal::{inherit_outer_flags, with_language_model};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{halves_from_interleaved, Routing, Scoring};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Llama4ForCausalLM`.
    Llama4ForCausalLM
);

impl Llama4ForCausalLM {
    /// Loads the model from a Llama 4 text config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let spec = spec(cfg)?;
        let weights = decoder_weights(weights, cfg, &spec)?;
        // (The decoder's dense MLPs are `intermediate_size_mlp` wide; the experts keep theirs.)
        let mut json = cfg.json().clone();
        json.insert("intermediate_size".into(), Value::from(cfg.usize_or("intermediate_size_mlp", 16384)?));
        Ok(Llama4ForCausalLM(CausalLm::load(&Config::from_map(json), &weights, spec)?))
    }
}

/// transformers' `Llama4ForConditionalGeneration` (`model_type` `llama4`) for text: its language
/// model (`language_model.*`), the vision tower and projector never read. Image inputs are refused.
#[derive(Debug, Clone)]
pub struct Llama4ForConditionalGeneration(pub CausalLm);

impl Llama4ForConditionalGeneration {
    /// Loads the language model of a `llama4` checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let text = text_config(cfg)?;
        let lm = with_language_model(weights, |w| Ok(Llama4ForCausalLM::load(&text, w)?.0))?;
        Ok(Llama4ForConditionalGeneration(lm))
    }
}

impl std::ops::Deref for Llama4ForConditionalGeneration {
    type Target = CausalLm;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// The text model's config of a `llama4` config (`text_config`, `Llama4TextConfig`'s defaults where
/// it is absent), with the outer `tie_word_embeddings` (default false) and dtype.
fn text_config(cfg: &Config) -> Result<Config> {
    let mut text = match cfg.get("text_config") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    text.insert("model_type".into(), Value::from("llama4_text"));
    inherit_outer_flags(&mut text, cfg, false)?;
    Ok(Config::from_map(text))
}

/// Llama 4's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.mlp_bias = false;
    spec.default_head_dim = Some(128);
    spec.default_kv_heads = Some(8);
    spec.default_rms_norm_eps = 1e-5;
    let layers = cfg.layers("num_hidden_layers")?;
    let rope = rope_layers(cfg, layers)?;
    spec.nope = rope.iter().map(|&r| !r).collect();
    spec.qk_norm = cfg.bool_or("use_qk_norm", true)? && rope.contains(&true);
    spec.qk_norm_after_rope = true;
    spec.qk_norm_layers = Some(rope.clone());
    let chunk = cfg.nullable_usize_or("attention_chunk_size", Some(8192))?;
    let chunked = match cfg.layer_types() {
        Some(types) if types.len() == layers => types.iter().map(|t| t == "chunked_attention").collect(),
        Some(types) => {
            return Err(Error::Config(format!(
                "\"layer_types\" has {} entries for {layers} layers",
                types.len()
            )))
        }
        None => rope.iter().map(|&r| r && chunk.is_some()).collect::<Vec<bool>>(),
    };
    spec.chunks = chunked
        .iter()
        .map(|&c| match (c, chunk) {
            (false, _) => Ok(None),
            (true, Some(size)) if size > 0 => Ok(Some(AttentionChunk { size })),
            (true, _) => Err(Error::Config(
                "a \"chunked_attention\" layer needs a positive \"attention_chunk_size\"".into(),
            )),
        })
        .collect::<Result<_>>()?;
    if cfg.bool_or("attn_temperature_tuning", true)? {
        let floor_scale = cfg.f64_or("floor_scale", 8192.0)?;
        if floor_scale <= 0.0 {
            return Err(Error::Config(format!("\"floor_scale\" must be positive, got {floor_scale}")));
        }
        let beta = cfg.f64_or("attn_scale", 0.1)?;
        spec.query_scale = Some(QueryScale { beta, original_max: floor_scale, temperature: true });
    }
    let intermediate = cfg.usize_or("intermediate_size", 8192)?;
    spec.moe = Some(MoeSpec {
        shared: Some(SharedExpert::Plain(intermediate)),
        ..MoeSpec::routed(
            cfg.usize_or("num_local_experts", 16)?,
            intermediate,
            Routing {
                top_k: cfg.usize_or("num_experts_per_tok", 1)?,
                normalize: false,
                round_weights: true,
                scoring: Scoring::SigmoidOnInputs,
                scale: 1.0,
            },
            moe_layers(cfg, layers)?,
        )
    });
    Ok(spec)
}

/// Which layers take RoPE: `no_rope_layers` (1 where a layer does; absent or empty, every layer
/// but each `no_rope_layer_interval`-th).
fn rope_layers(cfg: &Config, layers: usize) -> Result<Vec<bool>> {
    match cfg.get("no_rope_layers") {
        Some(Value::Array(items)) if !items.is_empty() => {
            let flags: Option<Vec<bool>> = items.iter().map(|v| v.as_u64().map(|f| f != 0)).collect();
            match flags {
                Some(flags) if flags.len() == layers => Ok(flags),
                _ => Err(Error::Config(format!(
                    "\"no_rope_layers\" must hold 0 or 1 for each of the {layers} layers, got {}",
                    Value::Array(items.clone())
                ))),
            }
        }
        None | Some(Value::Null) | Some(Value::Array(_)) => {
            let every = cfg.usize_or("no_rope_layer_interval", 4)?;
            if every == 0 {
                return Err(Error::Config("\"no_rope_layer_interval\" must be positive".into()));
            }
            Ok((0..layers).map(|i| (i + 1) % every != 0).collect())
        }
        Some(v) => Err(Error::Config(format!("\"no_rope_layers\" must be a list, got {v}"))),
    }
}

/// Which layers are mixtures: `moe_layers` (layer indices), else every
/// `interleave_moe_layer_step`-th from the `step − 1`-th.
fn moe_layers(cfg: &Config, layers: usize) -> Result<Vec<bool>> {
    match cfg.get("moe_layers") {
        None | Some(Value::Null) => {
            let step = cfg.usize_or("interleave_moe_layer_step", 1)?;
            if step == 0 {
                return Err(Error::Config("\"interleave_moe_layer_step\" must be positive".into()));
            }
            Ok((0..layers).map(|i| (i + 1) % step == 0).collect())
        }
        Some(Value::Array(items)) => {
            let indices: Option<Vec<usize>> = items.iter().map(|v| v.as_u64().map(|i| i as usize)).collect();
            let indices = indices.ok_or_else(|| {
                Error::Config(format!(
                    "\"moe_layers\" must list layer indices, got {}",
                    Value::Array(items.clone())
                ))
            })?;
            Ok((0..layers).map(|i| indices.contains(&i)).collect())
        }
        Some(v) => Err(Error::Config(format!("\"moe_layers\" must list layer indices, got {v}"))),
    }
}

/// The checkpoint under the decoder's names and layouts: `feed_forward` as `mlp` (its `router` as
/// `gate`, `shared_expert` as `shared_experts`), the experts' tensors transposed, q/k rows
/// reordered from interleaved to half-split pairs, and norms of ones where q and k are normed.
fn decoder_weights(weights: &Weights, cfg: &Config, spec: &DecoderSpec) -> Result<Weights> {
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize("num_attention_heads")?;
    let kv_heads = cfg.nullable_usize_or("num_key_value_heads", Some(8))?.unwrap_or(heads);
    let head_dim = cfg.nullable_usize_or("head_dim", Some(128))?.unwrap_or(hidden / heads.max(1));
    let reordered = weights.replaced(|name, t| {
        let rows = if name.contains(".self_attn.q_proj.") {
            heads
        } else if name.contains(".self_attn.k_proj.") {
            kv_heads
        } else if name.ends_with(".experts.gate_up_proj") || name.ends_with(".experts.down_proj") {
            if t.rank() != 3 {
                return Err(Error::Weight(format!(
                    "tensor '{name}' has shape {:?}; it needs 3 dims",
                    t.dims()
                )));
            }
            return Ok(Some(t.transpose(1, 2)?.contiguous()?));
        } else {
            return Ok(None);
        };
        halves_from_interleaved(t, rows, head_dim, head_dim)
            .map(Some)
            .map_err(|e| Error::Weight(format!("tensor '{name}': {e}")))
    })?;
    let renamed = reordered.renamed(|n| {
        Some(
            n.replace(".feed_forward.router.", ".mlp.gate.")
                .replace(".feed_forward.shared_expert.", ".mlp.shared_experts.")
                .replace(".feed_forward.", ".mlp."),
        )
    });
    let prefix = if weights.contains("model.embed_tokens.weight") { "model." } else { "" };
    let dtype =
        weights.stored_dtype(&format!("{prefix}embed_tokens.weight")).unwrap_or(oxtorch_tensor::DType::F32);
    let mut norms = Vec::new();
    if spec.qk_norm {
        // (The norms' width is checked against a query projection first: a corrupt config's
        // `head_dim` is never allocated.)
        let q = (0..spec.nope.len())
            .find_map(|i| weights.get(&format!("{prefix}layers.{i}.self_attn.q_proj.weight")).transpose());
        let rows = match q {
            Some(q) => q?.dims().first().copied().unwrap_or(0),
            None => {
                return Err(Error::Weight(format!(
                    "tensor '{prefix}layers.0.self_attn.q_proj.weight' is missing from the checkpoint"
                )))
            }
        };
        if heads.checked_mul(head_dim) != Some(rows) {
            return Err(Error::Weight(format!(
                "the query projections have {rows} rows; {heads} heads of head_dim {head_dim} need {}",
                heads.saturating_mul(head_dim)
            )));
        }
        let ones = oxtorch_tensor::Tensor::ones([head_dim], (dtype, weights.device()))?;
        for (i, &normed) in spec.qk_norm_layers.iter().flatten().enumerate() {
            if normed {
                for norm in ["q_norm", "k_norm"] {
                    norms.push((format!("{prefix}layers.{i}.self_attn.{norm}.weight"), ones.clone()));
                }
            }
        }
    }
    Ok(renamed.with_tensors(norms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_of(json: &str) -> DecoderSpec {
        spec(&Config::from_json_str(json).unwrap()).unwrap()
    }

    /// The class's defaults: every fourth layer without RoPE (and q/k norms, and chunks), its
    /// temperature; every layer a mixture.
    #[test]
    fn layer_pattern_by_default() {
        let s = spec_of(r#"{"num_hidden_layers": 5}"#);
        assert_eq!(s.nope, vec![false, false, false, true, false]);
        assert_eq!(s.qk_norm_layers, Some(vec![true, true, true, false, true]));
        let chunk = Some(AttentionChunk { size: 8192 });
        assert_eq!(s.chunks, vec![chunk, chunk, chunk, None, chunk]);
        assert_eq!(s.query_scale, Some(QueryScale { beta: 0.1, original_max: 8192.0, temperature: true }));
        assert_eq!(s.moe.unwrap().sparse_layers, vec![true; 5]);
    }

    #[test]
    fn listed_layers_and_steps() {
        let s = spec_of(
            r#"{"num_hidden_layers": 4, "no_rope_layers": [0, 1, 1, 0], "interleave_moe_layer_step": 2,
                "attention_chunk_size": null, "attn_temperature_tuning": false, "use_qk_norm": false}"#,
        );
        assert_eq!(s.nope, vec![true, false, false, true]);
        assert_eq!(s.chunks, vec![None; 4]);
        assert!(!s.qk_norm && s.query_scale.is_none());
        assert_eq!(s.moe.unwrap().sparse_layers, vec![false, true, false, true]);
        let listed = spec_of(r#"{"num_hidden_layers": 3, "moe_layers": [2]}"#);
        assert_eq!(listed.moe.unwrap().sparse_layers, vec![false, false, true]);
        let bad = spec(&Config::from_json_str(r#"{"num_hidden_layers": 2, "no_rope_layers": [1]}"#).unwrap());
        assert!(bad.unwrap_err().to_string().contains("for each of the 2 layers"));
    }
}

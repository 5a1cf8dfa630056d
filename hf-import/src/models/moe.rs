//! The mixture-of-experts decoders: Mixtral (`MixtralForCausalLM`: Mistral with a mixture in every
//! layer, `block_sparse_moe.{gate, experts.{j}.{w1, w3, w2}}`, probabilities renormalised over the
//! chosen experts) and Qwen3-MoE (`Qwen3MoeForCausalLM`: Qwen3 with `mlp.{gate, experts.{j}.*}`
//! on the layers `decoder_sparse_step` and `mlp_only_layers` pick, `norm_topk_prob`), and Qwen2-MoE
//! (`Qwen2MoeForCausalLM`: Qwen2 with such a mixture plus a shared expert every token runs, scaled
//! by `sigmoid(shared_expert_gate(x))`).

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing};
use crate::weights::Weights;

/// transformers' `MixtralForCausalLM`.
#[derive(Debug, Clone)]
pub struct MixtralForCausalLM(pub CausalLm);

/// transformers' `Qwen3MoeForCausalLM`.
#[derive(Debug, Clone)]
pub struct Qwen3MoeForCausalLM(pub CausalLm);

/// transformers' `Qwen2MoeForCausalLM`.
#[derive(Debug, Clone)]
pub struct Qwen2MoeForCausalLM(pub CausalLm);

impl std::ops::Deref for Qwen2MoeForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl Qwen2MoeForCausalLM {
    /// Loads the model.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Ok(Qwen2MoeForCausalLM(CausalLm::load(cfg, weights, qwen2_moe_spec(cfg)?)?))
    }
}

impl std::ops::Deref for MixtralForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl std::ops::Deref for Qwen3MoeForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl MixtralForCausalLM {
    /// Loads the model (Mixtral's expert names read as the decoder's).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| Some(mixtral_name(n)));
        Ok(MixtralForCausalLM(CausalLm::load(cfg, &weights, mixtral_spec(cfg)?)?))
    }
}

impl Qwen3MoeForCausalLM {
    /// Loads the model.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Ok(Qwen3MoeForCausalLM(CausalLm::load(cfg, weights, qwen3_moe_spec(cfg)?)?))
    }
}

/// `block_sparse_moe.gate` and `experts.{j}.w1`/`w3`/`w2` as `mlp.gate` and
/// `experts.{j}.gate_proj`/`up_proj`/`down_proj`.
pub(super) fn mixtral_name(name: &str) -> String {
    let Some((before, after)) = name.split_once(".block_sparse_moe.") else { return name.to_string() };
    let after = match after.rsplit_once('.') {
        Some((head, leaf)) => {
            let head = head
                .strip_suffix(".w1")
                .map(|e| format!("{e}.gate_proj"))
                .or_else(|| head.strip_suffix(".w3").map(|e| format!("{e}.up_proj")))
                .or_else(|| head.strip_suffix(".w2").map(|e| format!("{e}.down_proj")))
                .unwrap_or_else(|| head.to_string());
            format!("{head}.{leaf}")
        }
        None => after.to_string(),
    };
    format!("{before}.mlp.{after}")
}

/// Mistral's decoder (sliding window from `sliding_window`, default none in `MixtralConfig`) with
/// `num_local_experts` (default 8) experts of `intermediate_size`, `num_experts_per_tok` (2) a token.
fn mixtral_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.default_kv_heads = Some(8);
    spec.default_rms_norm_eps = 1e-5;
    let layers = cfg.layers("num_hidden_layers")?;
    spec.windows = vec![cfg.nullable_usize_or("sliding_window", None)?; layers];
    spec.moe = Some(MoeSpec {
        ungated: None,
        experts: cfg.usize_or("num_local_experts", 8)?,
        intermediate: cfg.usize("intermediate_size")?,
        routing: Routing::softmax(cfg.usize_or("num_experts_per_tok", 2)?, true, false),
        sparse_layers: vec![true; layers],
        shared: None,
        biased: false,
        shared_bias: false,
        glu: Glu::Product,
    });
    Ok(spec)
}

/// Qwen3's decoder (q/k norms, no MLP biases) with [`qwen_mixture`]'s experts; the window on every
/// layer with `use_sliding_window`.
fn qwen3_moe_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.mlp_bias = false;
    spec.default_kv_heads = Some(4);
    let layers = cfg.layers("num_hidden_layers")?;
    let window = if cfg.bool_or("use_sliding_window", false)? {
        cfg.nullable_usize_or("sliding_window", Some(4096))?
    } else {
        None
    };
    spec.windows = vec![window; layers];
    spec.moe = Some(qwen_mixture(cfg, 128, 768, 8, None)?);
    Ok(spec)
}

/// Qwen2's decoder (q/k/v biases from `qkv_bias`, default true; Qwen2's windows) with
/// [`qwen_mixture`]'s experts (60 of 1408, 4 a token) and the shared expert
/// (`shared_expert_intermediate_size`, 5632).
fn qwen2_moe_spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = super::qwen2::qwen_common(cfg)?;
    spec.qkv_bias = cfg.bool_or("qkv_bias", true)?;
    spec.o_bias = false;
    spec.default_kv_heads = Some(16);
    let shared = cfg.usize_or("shared_expert_intermediate_size", 5632)?;
    spec.moe = Some(qwen_mixture(cfg, 60, 1408, 4, Some(SharedExpert::Gated(shared)))?);
    Ok(spec)
}

/// The Qwen mixtures: `num_local_experts` or `num_experts` experts of `moe_intermediate_size`,
/// `num_experts_per_tok` a token weighted by the router's probabilities (renormalised with
/// `norm_topk_prob`), on every layer `i` with `(i + 1) % decoder_sparse_step == 0` outside
/// `mlp_only_layers` (the config classes' defaults given).
pub(super) fn qwen_mixture(
    cfg: &Config,
    experts: usize,
    intermediate: usize,
    top_k: usize,
    shared: Option<SharedExpert>,
) -> Result<MoeSpec> {
    let layers = cfg.layers("num_hidden_layers")?;
    // (`Qwen3MoeConfig` saves `num_experts` as `num_local_experts`; either name is read.)
    let experts = match cfg.get("num_local_experts") {
        Some(_) => cfg.usize("num_local_experts")?,
        None => cfg.usize_or("num_experts", experts)?,
    };
    let step = cfg.usize_or("decoder_sparse_step", 1)?;
    let dense: Vec<usize> = match cfg.get("mlp_only_layers") {
        None => Vec::new(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_u64().map(|i| i as usize).ok_or_else(|| {
                    Error::Config(format!("\"mlp_only_layers\" must be a list of layer indices, got {v}"))
                })
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::Config(format!(
                "\"mlp_only_layers\" must be a list of layer indices, got {other}"
            )))
        }
    };
    let sparse_layers =
        (0..layers).map(|i| !dense.contains(&i) && experts > 0 && step > 0 && (i + 1) % step == 0).collect();
    Ok(MoeSpec {
        ungated: None,
        experts,
        intermediate: cfg.usize_or("moe_intermediate_size", intermediate)?,
        routing: Routing::softmax(
            cfg.usize_or("num_experts_per_tok", top_k)?,
            // (Qwen3-Next and Qwen3.5-MoE renormalise by default, the older Qwen mixtures do not.)
            cfg.bool_or(
                "norm_topk_prob",
                matches!(
                    cfg.get("model_type").and_then(|t| t.as_str()),
                    Some("qwen3_next" | "qwen3_5_moe_text")
                ),
            )?,
            true,
        ),
        sparse_layers,
        shared,
        biased: false,
        shared_bias: false,
        glu: Glu::Product,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixtral_expert_names() {
        assert_eq!(
            mixtral_name("model.layers.3.block_sparse_moe.experts.5.w1.weight"),
            "model.layers.3.mlp.experts.5.gate_proj.weight"
        );
        assert_eq!(
            mixtral_name("model.layers.0.block_sparse_moe.gate.weight"),
            "model.layers.0.mlp.gate.weight"
        );
        assert_eq!(mixtral_name("model.norm.weight"), "model.norm.weight");
    }

    /// `decoder_sparse_step` and `mlp_only_layers` pick Qwen3-MoE's sparse layers.
    #[test]
    fn qwen3_moe_sparse_layers() {
        let sparse = |json: &str| {
            qwen3_moe_spec(&Config::from_json_str(json).unwrap()).unwrap().moe.unwrap().sparse_layers
        };
        assert_eq!(sparse(r#"{"num_hidden_layers": 3}"#), [true, true, true]);
        assert_eq!(
            sparse(r#"{"num_hidden_layers": 4, "decoder_sparse_step": 2}"#),
            [false, true, false, true]
        );
        assert_eq!(sparse(r#"{"num_hidden_layers": 3, "mlp_only_layers": [1]}"#), [true, false, true]);
    }
}

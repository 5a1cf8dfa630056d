//! Granite (`GraniteForCausalLM`, IBM's Granite 3 language models): Llama's blocks with four
//! multipliers: the embeddings scaled by `embedding_multiplier`, attention scores by
//! `attention_multiplier` (in place of `head_dim^-0.5`), each block's attention and MLP outputs by
//! `residual_multiplier` before their residual adds, and the logits divided by `logits_scaling`
//! (all 1 by default, as `GraniteConfig` has them). Granite-MoE (`GraniteMoeForCausalLM`, the
//! Granite 3 "a400m"/"a800m" models) has a mixture of experts in every layer's place of the MLP.
//! Granite 4.0's hybrids (`GraniteMoeHybridForCausalLM`: granite-4.0-h-micro/tiny/small, and the
//! attention-only granite-4.0-micro) mix tokens with Mamba-2 in most layers (see
//! [`GraniteMoeForCausalLM::load_hybrid`]).

use super::decoder::{CausalLm, DecoderSpec, HybridMixer, HybridSpec, MoeSpec, SharedExpert};
use super::family::causal_lm_family;
use super::mamba::hybrid_mamba_dims;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing};
use crate::weights::Weights;

/// Llama's decoder with Granite's four multipliers (1 when absent).
pub(super) fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    let multiplier = |key: &str| -> Result<f64> {
        let m = cfg.f64_or(key, 1.0)?;
        if !m.is_finite() || (key == "logits_scaling" && m == 0.0) {
            return Err(Error::Config(format!(
                "\"{key}\" must be a finite number (nonzero for logits_scaling), got {m}"
            )));
        }
        Ok(m)
    };
    spec.attention_scale = Some(multiplier("attention_multiplier")?);
    spec.embedding_multiplier = Some(multiplier("embedding_multiplier")?);
    spec.residual_multiplier = Some(multiplier("residual_multiplier")?);
    spec.logits_scaling = Some(multiplier("logits_scaling")?);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `GraniteForCausalLM`.
    GraniteForCausalLM,
    spec
);

/// transformers' `GraniteMoeForCausalLM`.
#[derive(Debug, Clone)]
pub struct GraniteMoeForCausalLM(pub CausalLm);

impl std::ops::Deref for GraniteMoeForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GraniteMoeForCausalLM {
    /// Loads the model: Granite's decoder whose every MLP is `num_local_experts` (8) experts of
    /// `intermediate_size`, `num_experts_per_tok` (2) a token, weighted by the softmax of the chosen
    /// routers' logits (the top-k probabilities renormalised) rounded to the model dtype. The
    /// checkpoint's `block_sparse_moe.{router.layer, input_linear, output_linear}` (or transformers
    /// 5's `router`, `experts.gate_up_proj`, `experts.down_proj`) are read as the decoder's mixture.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load_with_shared(cfg, weights, None)
    }

    /// Granite-MoE-Shared (`GraniteMoeSharedForCausalLM`): Granite-MoE plus, when
    /// `shared_intermediate_size` is not 0, a gated MLP every token runs (`shared_mlp.input_linear`,
    /// gate then up rows, and `shared_mlp.output_linear`), added unscaled to the mixture's output.
    pub fn load_shared(cfg: &Config, weights: &Weights) -> Result<Self> {
        let width = cfg.usize_or("shared_intermediate_size", 0)?;
        Self::load_with_shared(cfg, weights, (width > 0).then_some(SharedExpert::Plain(width)))
    }

    fn load_with_shared(cfg: &Config, weights: &Weights, shared: Option<SharedExpert>) -> Result<Self> {
        Self::load_with(cfg, weights, shared, |_| {})
    }

    /// Granite-MoE with the `shared` expert, its decoder spec then changed by `adjust`
    /// (Granite-MoE-SWA's windows, bases and sinks).
    pub(super) fn load_with(
        cfg: &Config,
        weights: &Weights,
        shared: Option<SharedExpert>,
        adjust: impl FnOnce(&mut DecoderSpec),
    ) -> Result<Self> {
        let mut spec = spec(cfg)?;
        spec.moe = Some(moe_spec(cfg, shared)?);
        adjust(&mut spec);
        let weights = weights.renamed(|n| Some(moe_name(n)));
        Ok(GraniteMoeForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }

    /// Granite 4.0 (`GraniteMoeHybridForCausalLM`): Granite-MoE-Shared's blocks whose token mixer
    /// is, on the layers `layer_types` marks `mamba` (all by default), a Mamba-2 mixer
    /// (`layers.{i}.mamba`: `mamba_n_heads` heads of `mamba_d_head` channels in `mamba_n_groups`
    /// groups, `mamba_d_state` states, a convolution of `mamba_d_conv`, `mamba_proj_bias`,
    /// `mamba_conv_bias`, `time_step_limit`), and attention elsewhere, with RoPE only when
    /// `position_embedding_type` is `"rope"`. With `num_local_experts` 0 the feed-forward is the
    /// shared MLP alone (granite-4.0-micro).
    pub fn load_hybrid(cfg: &Config, weights: &Weights) -> Result<Self> {
        let layers = cfg.layers("num_hidden_layers")?;
        let types = cfg.layer_types().unwrap_or_else(|| vec!["mamba".to_string(); layers]);
        if types.len() != layers {
            return Err(Error::Config(format!(
                "\"layer_types\" has {} entries for {layers} layers",
                types.len()
            )));
        }
        let mamba_layers = types
            .iter()
            .map(|t| match t.as_str() {
                "mamba" | "linear_attention" => Ok(true),
                "attention" | "full_attention" => Ok(false),
                other => Err(Error::Config(format!(
                    "layer type \"{other}\" is not one of \"mamba\", \"attention\" (or \"linear_attention\", \"full_attention\")"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        let dims = hybrid_mamba_dims(cfg, 1e-6)?;
        let experts = cfg.usize_or("num_local_experts", 8)?;
        let shared = cfg.usize_or("shared_intermediate_size", 1024)?;
        // Without experts, the decoder's dense MLP is the shared one.
        let dense_cfg;
        let cfg = if experts == 0 {
            let mut json = cfg.json().clone();
            json.insert("intermediate_size".into(), shared.into());
            dense_cfg = Config::from_map(json);
            &dense_cfg
        } else {
            cfg
        };
        let mut spec = spec(cfg)?;
        if experts > 0 {
            spec.moe = Some(moe_spec(cfg, (shared > 0).then_some(SharedExpert::Plain(shared)))?);
        }
        let rope = cfg.get("position_embedding_type").and_then(|v| v.as_str()) == Some("rope");
        spec.nope = vec![!rope; layers];
        spec.mamba = Some(HybridSpec {
            dims: HybridMixer::Mamba2(dims),
            layers: mamba_layers,
            prefix: "mamba",
            beside_attention: false,
        });
        let weights = weights.renamed(|n| Some(if experts == 0 { dense_name(n) } else { moe_name(n) }));
        Ok(GraniteMoeForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

/// Granite-MoE's mixture in every layer: `num_local_experts` (8) of `intermediate_size`,
/// `num_experts_per_tok` (2) a token, and the `shared` expert.
fn moe_spec(cfg: &Config, shared: Option<SharedExpert>) -> Result<MoeSpec> {
    Ok(MoeSpec {
        ungated: None,
        experts: cfg.usize_or("num_local_experts", 8)?,
        intermediate: cfg.usize("intermediate_size")?,
        routing: Routing::softmax(cfg.usize_or("num_experts_per_tok", 2)?, true, true),
        sparse_layers: vec![true; cfg.layers("num_hidden_layers")?],
        shared,
        biased: false,
        shared_bias: false,
        glu: Glu::Product,
    })
}

/// A dense Granite 4.0 tensor's name in the decoder: the shared MLP as the dense MLP
/// (`mlp.gate_up_proj`, `mlp.down_proj`); other names unchanged.
fn dense_name(name: &str) -> String {
    match name.split_once(".shared_mlp.") {
        Some((before, "input_linear.weight")) => format!("{before}.mlp.gate_up_proj.weight"),
        Some((before, "output_linear.weight")) => format!("{before}.mlp.down_proj.weight"),
        _ => name.to_string(),
    }
}

/// A Granite-MoE tensor's name in the decoder's mixture (`mlp.gate.weight`,
/// `mlp.experts.gate_up_proj`, `mlp.experts.down_proj`); other names unchanged.
fn moe_name(name: &str) -> String {
    if let Some((before, after)) = name.split_once(".shared_mlp.") {
        let after = match after {
            "input_linear.weight" => "gate_up_proj.weight",
            "output_linear.weight" => "down_proj.weight",
            other => other,
        };
        return format!("{before}.mlp.shared_experts.{after}");
    }
    let Some((before, after)) = name.split_once(".block_sparse_moe.") else { return name.to_string() };
    let after = match after {
        "router.layer.weight" | "router.weight" => "gate.weight",
        "input_linear.weight" | "experts.gate_up_proj" => "experts.gate_up_proj",
        "output_linear.weight" | "experts.down_proj" => "experts.down_proj",
        other => other,
    };
    format!("{before}.mlp.{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both checkpoint styles' names land on the decoder's mixture.
    #[test]
    fn moe_names_of_both_styles() {
        for (from, to) in [
            ("model.layers.1.block_sparse_moe.router.layer.weight", "model.layers.1.mlp.gate.weight"),
            ("model.layers.1.block_sparse_moe.router.weight", "model.layers.1.mlp.gate.weight"),
            (
                "model.layers.0.block_sparse_moe.input_linear.weight",
                "model.layers.0.mlp.experts.gate_up_proj",
            ),
            ("model.layers.0.block_sparse_moe.experts.down_proj", "model.layers.0.mlp.experts.down_proj"),
            ("model.norm.weight", "model.norm.weight"),
            (
                "model.layers.0.shared_mlp.input_linear.weight",
                "model.layers.0.mlp.shared_experts.gate_up_proj.weight",
            ),
        ] {
            assert_eq!(moe_name(from), to);
        }
    }
}

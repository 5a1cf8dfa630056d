//! Granite (`GraniteForCausalLM`, IBM's Granite 3 language models): Llama's blocks with four
//! multipliers: the embeddings scaled by `embedding_multiplier`, attention scores by
//! `attention_multiplier` (in place of `head_dim^-0.5`), each block's attention and MLP outputs by
//! `residual_multiplier` before their residual adds, and the logits divided by `logits_scaling`
//! (all 1 by default, as `GraniteConfig` has them). Granite-MoE (`GraniteMoeForCausalLM`, the
//! Granite 3 "a400m"/"a800m" models) has a mixture of experts in every layer's place of the MLP.

use super::decoder::{CausalLm, DecoderSpec, MoeSpec, SharedExpert};
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Glu, Routing};
use crate::weights::Weights;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
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
        let mut spec = spec(cfg)?;
        let layers = cfg.layers("num_hidden_layers")?;
        spec.moe = Some(MoeSpec {
            experts: cfg.usize_or("num_local_experts", 8)?,
            intermediate: cfg.usize("intermediate_size")?,
            routing: Routing::softmax(cfg.usize_or("num_experts_per_tok", 2)?, true, true),
            sparse_layers: vec![true; layers],
            shared,
            biased: false,
            shared_bias: false,
            glu: Glu::Product,
        });
        let weights = weights.renamed(|n| Some(moe_name(n)));
        Ok(GraniteMoeForCausalLM(CausalLm::load(cfg, &weights, spec)?))
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

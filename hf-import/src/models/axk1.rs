//! A.X-K1 (`AXK1ForCausalLM`, model type `axk1`: SK Telecom's A.X K1; its base model and sequence
//! and token classifiers): DeepSeek-V3's blocks (multi-head latent attention, queries always
//! through their low rank) whose mixture's output, shared experts included, is normed by
//! `post_mlp_layernorm` (checkpoints keep it at the layer, `layers.{i}.post_mlp_layernorm`;
//! transformers in the block, `layers.{i}.mlp.post_mlp_layernorm`); dense and sparse layers from
//! `mlp_layer_types`, or from the legacy `first_k_dense_replace` (default 1) and `moe_layer_freq`
//! (default 1).

use super::decoder::{CausalLm, DecoderSpec};
use super::deepseek::{latent_spec_with, sparse_layers_by_type, v3_latent_dims, v3_mixture, MixtureDefaults};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `AXK1ForCausalLM`.
    AXK1ForCausalLM
);

impl AXK1ForCausalLM {
    /// Loads the model from an A.X-K1 config and checkpoint (the mixture's norm under either name).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = weights.renamed(|n| match n.contains(".mlp.post_mlp_layernorm.") {
            true => Some(n.to_string()),
            false => Some(n.replace(".post_mlp_layernorm.", ".mlp.post_mlp_layernorm.")),
        });
        Ok(AXK1ForCausalLM(CausalLm::load(cfg, &weights, spec(cfg)?)?))
    }
}

/// `AXK1Config`'s mixture.
const AXK1: MixtureDefaults = MixtureDefaults {
    experts: Some(192),
    intermediate: 2048,
    shared: Some(1),
    first_sparse: 1,
    top_k: Some(8),
    groups: (8, 4),
    normalize: true,
    scale: 2.5,
};

/// Which layers are sparse: `mlp_layer_types`, or from layer `first_k_dense_replace` on, every
/// `moe_layer_freq`-th.
fn sparse_layers(cfg: &Config) -> Result<Vec<bool>> {
    let layers = cfg.layers("num_hidden_layers")?;
    if let Some(sparse) = sparse_layers_by_type(cfg, layers)? {
        return Ok(sparse);
    }
    let first = cfg.usize_or("first_k_dense_replace", 1)?;
    let every = cfg.usize_or("moe_layer_freq", 1)?;
    if every == 0 {
        return Err(Error::Config("\"moe_layer_freq\" must be positive".into()));
    }
    Ok((0..layers).map(|i| i >= first && i % every == 0).collect())
}

/// A.X-K1's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let dims = v3_latent_dims(cfg)?;
    if dims.q_rank.is_none() {
        return Err(Error::Config(
            "A.X-K1 projects its queries through a low rank: \"q_lora_rank\" must be set".into(),
        ));
    }
    let mut spec = latent_spec_with(cfg, dims)?;
    let mut moe = v3_mixture(cfg, AXK1)?;
    moe.sparse_layers = sparse_layers(cfg)?;
    spec.moe = Some(moe);
    spec.moe_output_norm = true;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The legacy keys pick the sparse layers where `mlp_layer_types` is absent.
    #[test]
    fn sparse_layers_from_legacy_keys() {
        let cfg = |json: &str| Config::from_json_str(json).unwrap();
        assert_eq!(sparse_layers(&cfg(r#"{"num_hidden_layers": 3}"#)).unwrap(), [false, true, true]);
        let every = cfg(r#"{"num_hidden_layers": 5, "first_k_dense_replace": 0, "moe_layer_freq": 2}"#);
        assert_eq!(sparse_layers(&every).unwrap(), [true, false, true, false, true]);
        let typed = cfg(r#"{"num_hidden_layers": 2, "mlp_layer_types": ["sparse", "dense"]}"#);
        assert_eq!(sparse_layers(&typed).unwrap(), [true, false]);
    }
}

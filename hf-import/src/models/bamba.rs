//! Bamba (`BambaForCausalLM`: ibm-ai-platform/Bamba-9B): a Llama-style decoder whose layers are
//! Mamba-2 mixers (`layers.{i}.mamba`) except those `attn_layer_indices` lists, which attend with
//! RoPE over half of each head (`partial_rotary_factor` 0.5 unless `rope_parameters` says
//! otherwise); the MLP is `feed_forward` after `pre_ff_layernorm`, the final norm
//! `final_layernorm`. The Mamba-2 mixers read the `mamba_*` keys (see
//! [`hybrid_mamba_dims`]).

use super::decoder::{CausalLm, DecoderSpec, HybridMixer, HybridSpec};
use super::family::causal_lm_newtype;
use super::mamba::hybrid_mamba_dims;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `BambaForCausalLM`.
    BambaForCausalLM
);

impl BambaForCausalLM {
    /// Loads the model, its tensors renamed to the decoder's (`feed_forward` → `mlp`,
    /// `pre_ff_layernorm` → `post_attention_layernorm`, `final_layernorm` → `norm`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let layers = cfg.layers("num_hidden_layers")?;
        let attention: Vec<usize> = match cfg.get("attn_layer_indices") {
            None => Vec::new(),
            Some(v) if v.is_null() => Vec::new(),
            Some(v) => v
                .as_array()
                .and_then(|a| a.iter().map(|i| i.as_u64().map(|i| i as usize)).collect::<Option<Vec<_>>>())
                .ok_or_else(|| {
                    Error::Config(format!("\"attn_layer_indices\" must be a list of layer indices, got {v}"))
                })?,
        };
        let mut spec = DecoderSpec::llama(cfg)?;
        spec.default_rms_norm_eps = 1e-5;
        spec.default_kv_heads = Some(8);
        let dims = hybrid_mamba_dims(cfg, 1e-5)?;
        spec.mamba = Some(HybridSpec {
            dims: HybridMixer::Mamba2(dims),
            layers: (0..layers).map(|i| !attention.contains(&i)).collect(),
            prefix: "mamba",
            beside_attention: false,
        });
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(BambaForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

/// A Bamba tensor's name in the common decoder.
fn decoder_name(name: &str) -> String {
    if name == "model.final_layernorm.weight" || name == "final_layernorm.weight" {
        return name.replace("final_layernorm", "norm");
    }
    name.replacen(".feed_forward.", ".mlp.", 1).replacen(
        ".pre_ff_layernorm.",
        ".post_attention_layernorm.",
        1,
    )
}

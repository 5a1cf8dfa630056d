//! Jamba (`JambaForCausalLM`: ai21labs/Jamba-v0.1, AI21-Jamba-Mini/Large 1.5 to 1.7): a decoder
//! whose layers mix tokens with Mamba (`layers.{i}.mamba`: the selective scan with learned RMS
//! norms on the step sizes, `B` and `C`), except every `attn_layer_period`-th layer from
//! `attn_layer_offset`, which attends without positions; every `expert_layer_period`-th feed-forward
//! from `expert_layer_offset` is a mixture of `num_experts` experts (the softmax's top
//! `num_experts_per_tok` weights, not renormalised), the others Llama's MLP. Each block is
//! `input_layernorm`, the mixer, the residual, `pre_ff_layernorm`, `feed_forward`, the residual;
//! the final norm is `final_layernorm`.

use super::decoder::{CausalLm, DecoderSpec, HybridMixer, HybridSpec, MoeSpec};
use super::family::causal_lm_newtype;
use super::mamba::dt_rank;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Glu, MambaDims, Routing, StepNorms};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `JambaForCausalLM`.
    JambaForCausalLM
);

impl JambaForCausalLM {
    /// Loads the model, its tensors renamed to the common decoder's (`feed_forward` → `mlp`, its
    /// `router` → `gate`, `pre_ff_layernorm` → `post_attention_layernorm`, `final_layernorm` →
    /// `norm`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let layers = cfg.layers("num_hidden_layers")?;
        let every = |period: &str, default_period: usize, offset: &str, default_offset: usize| {
            let (p, o) = (cfg.usize_or(period, default_period)?, cfg.usize_or(offset, default_offset)?);
            if p == 0 {
                return Err(Error::Config(format!("\"{period}\" must be positive")));
            }
            Ok::<_, Error>((0..layers).map(|i| i % p == o).collect::<Vec<_>>())
        };
        let attention = every("attn_layer_period", 8, "attn_layer_offset", 4)?;
        let sparse = every("expert_layer_period", 2, "expert_layer_offset", 1)?;
        let hidden = cfg.usize("hidden_size")?;
        let eps = cfg.f64_or("rms_norm_eps", 1e-6)?;
        let dims = MambaDims {
            hidden,
            channels: cfg.usize_or("mamba_expand", 2)?.saturating_mul(hidden),
            states: cfg.usize_or("mamba_d_state", 16)?,
            rank: dt_rank(cfg, "mamba_dt_rank", hidden)?,
            kernel: cfg.usize_or("mamba_d_conv", 4)?,
            proj_bias: cfg.bool_or("mamba_proj_bias", false)?,
            conv_bias: cfg.bool_or("mamba_conv_bias", true)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
            step_norms: StepNorms::Learned(eps),
        };
        let mut spec = DecoderSpec::llama(cfg)?;
        spec.default_kv_heads = Some(8);
        spec.nope = vec![true; layers];
        spec.mamba = Some(HybridSpec {
            dims: HybridMixer::Mamba(dims),
            layers: attention.iter().map(|a| !a).collect(),
            prefix: "mamba",
            beside_attention: false,
        });
        let experts = cfg.usize_or("num_experts", 16)?;
        if experts > 1 {
            spec.moe = Some(MoeSpec {
                ungated: None,
                experts,
                intermediate: cfg.usize("intermediate_size")?,
                routing: Routing::softmax(cfg.usize_or("num_experts_per_tok", 2)?, false, true),
                sparse_layers: sparse,
                shared: None,
                biased: false,
                shared_bias: false,
                glu: Glu::Product,
            });
        }
        let weights = weights.renamed(|n| Some(decoder_name(n)));
        Ok(JambaForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

/// A Jamba tensor's name in the common decoder.
fn decoder_name(name: &str) -> String {
    if let Some(prefix) = name.strip_suffix("final_layernorm.weight") {
        return format!("{prefix}norm.weight");
    }
    name.replacen(".feed_forward.router.", ".mlp.gate.", 1).replacen(".feed_forward.", ".mlp.", 1).replacen(
        ".pre_ff_layernorm.",
        ".post_attention_layernorm.",
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jamba_names_land_on_the_decoders() {
        for (from, to) in [
            ("model.layers.1.feed_forward.router.weight", "model.layers.1.mlp.gate.weight"),
            (
                "model.layers.1.feed_forward.experts.3.down_proj.weight",
                "model.layers.1.mlp.experts.3.down_proj.weight",
            ),
            ("model.layers.0.pre_ff_layernorm.weight", "model.layers.0.post_attention_layernorm.weight"),
            ("model.final_layernorm.weight", "model.norm.weight"),
            ("model.layers.0.mamba.dt_layernorm.weight", "model.layers.0.mamba.dt_layernorm.weight"),
        ] {
            assert_eq!(decoder_name(from), to);
        }
    }
}

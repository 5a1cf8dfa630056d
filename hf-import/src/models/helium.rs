//! Helium (`HeliumForCausalLM`: kyutai/helium-1-preview-2b): Llama with RoPE rotating interleaved
//! pairs over whole heads (q and k reordered at load), norm scales applied in float32, biases on q, k and v only with `attention_bias`, and `HeliumConfig`'s defaults (RoPE
//! base 1e5, 128-wide heads, 20 key/value heads, epsilon 1e-8).

use super::decoder::{CausalLm, DecoderSpec};
use super::ernie4_5::with_interleaved_qk;
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::layers::RmsNormStyle;
use crate::weights::Weights;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::ScaleInFloat32;
    spec.o_bias = false;
    spec.default_head_dim = Some(128);
    spec.default_kv_heads = Some(20);
    spec.default_rms_norm_eps = 1e-8;
    Ok(spec)
}

causal_lm_newtype!(
    /// transformers' `HeliumForCausalLM`.
    HeliumForCausalLM
);

impl HeliumForCausalLM {
    /// Loads the model, q and k reordered for the half-split rotation (Helium rotates interleaved
    /// pairs over whole heads).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let spec = spec(cfg)?;
        let heads = cfg.usize("num_attention_heads")?;
        let kv_heads = cfg.nullable_usize_or("num_key_value_heads", Some(20))?.unwrap_or(heads);
        let head_dim =
            cfg.nullable_usize_or("head_dim", Some(128))?.unwrap_or(cfg.usize("hidden_size")? / heads.max(1));
        let weights = with_interleaved_qk(weights, heads, kv_heads, head_dim)?;
        Ok(HeliumForCausalLM(CausalLm::load(cfg, &weights, spec)?))
    }
}

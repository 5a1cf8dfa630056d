//! Phi-3 (`Phi3ForCausalLM`): Llama with fused `qkv_proj` and `gate_up_proj`, optional partial
//! rotary embeddings and a sliding window on every layer when the config sets one.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.windows = vec![cfg.opt_usize("sliding_window")?; cfg.usize("num_hidden_layers")?];
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Phi3ForCausalLM`.
    Phi3ForCausalLM,
    spec
);

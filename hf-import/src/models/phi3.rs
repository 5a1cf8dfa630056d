//! Phi-3 (`Phi3ForCausalLM`): Llama with fused `qkv_proj` and `gate_up_proj`, optional partial
//! rotary embeddings and a sliding window on every layer when the config sets one.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.windows = vec![cfg.opt_usize("sliding_window")?; cfg.layers("num_hidden_layers")?];
    // As transformers' `Phi3ForCausalLM.prepare_inputs_for_generation`: once the sequence reaches
    // the pretraining length + 1 (the config class defaults it to 4096), the cache is recomputed.
    spec.recompute_cache_at = Some(cfg.usize_or("original_max_position_embeddings", 4096)? + 1);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Phi3ForCausalLM`.
    Phi3ForCausalLM,
    spec
);

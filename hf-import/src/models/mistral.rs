//! Mistral (`MistralForCausalLM`): Llama with sliding-window attention on every layer.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// Llama's spec with `sliding_window` on every layer (none when the config has it null).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.windows = DecoderSpec::windows_from_layer_types(cfg, cfg.opt_usize("sliding_window")?)?;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `MistralForCausalLM`.
    MistralForCausalLM,
    spec
);

//! Ministral (`MinistralForCausalLM`: mistralai/Ministral-8B-Instruct-2410): Mistral's decoder
//! (no biases, 8 key/value heads by default) with the window only on the layers `layer_types`
//! marks `sliding_attention` (by default every layer, when `sliding_window` is set).

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (false, false, false);
    spec.default_kv_heads = Some(8);
    let window = cfg.nullable_usize_or("sliding_window", Some(4096))?;
    spec.windows = DecoderSpec::windows_from_layer_types(cfg, window)?;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `MinistralForCausalLM`.
    MinistralForCausalLM,
    spec
);

//! Qwen2 (`Qwen2ForCausalLM`): Llama with biases on q, k and v; sliding windows only on the layers
//! `layer_types` (or `use_sliding_window` + `max_window_layers`) mark.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// Qwen2 and Qwen3 attention windows: from `layer_types` when present, else the layers from
/// `max_window_layers` on slide when `use_sliding_window` is set.
pub(crate) fn qwen_windows(cfg: &Config) -> Result<Vec<Option<usize>>> {
    let n = cfg.layers("num_hidden_layers")?;
    let window = cfg
        .opt_usize("sliding_window")?
        .filter(|_| cfg.bool_or("use_sliding_window", false).unwrap_or(false));
    if cfg.layer_types().is_some() {
        return DecoderSpec::windows_from_layer_types(cfg, window);
    }
    let first = cfg.usize_or("max_window_layers", n)?;
    Ok((0..n).map(|i| if i >= first { window } else { None }).collect())
}

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qkv_bias = true;
    spec.o_bias = false;
    spec.windows = qwen_windows(cfg)?;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Qwen2ForCausalLM`.
    Qwen2ForCausalLM,
    spec
);

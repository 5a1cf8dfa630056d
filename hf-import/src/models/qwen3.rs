//! Qwen3 (`Qwen3ForCausalLM`): Llama with per-head RMS norms on q and k and an explicit `head_dim`.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use super::qwen2::qwen_windows;
use crate::config::Config;
use crate::error::Result;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qk_norm = true;
    spec.windows = qwen_windows(cfg)?;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `Qwen3ForCausalLM`.
    Qwen3ForCausalLM,
    spec
);

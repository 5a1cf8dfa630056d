//! Model types that transformers runs as `LlamaForCausalLM` with their own config class's
//! defaults: InternLM3 (`internlm3`: internlm/internlm3-8b-instruct; 2 key/value heads of 128, the
//! biases named `qkv_bias` and `bias`) and IQuestCoder (`iquestcoder`: 8 key/value heads of 128);
//! both norm with eps 1e-5 and use the Llama checkpoint names. EXAONE 3, which renames them, is in
//! `exaone.rs`.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

/// Llama with a config class's head sizes and norm epsilon.
fn llama_with(cfg: &Config, kv_heads: usize) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.default_kv_heads = Some(kv_heads);
    spec.default_head_dim = Some(128);
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

causal_lm_family!(
    /// The remote code's `InternLM3ForCausalLM` (transformers' `LlamaForCausalLM` on an
    /// `InternLM3Config`).
    InternLM3ForCausalLM,
    |cfg| llama_with(cfg, 2)
);

causal_lm_family!(
    /// The remote code's `IQuestCoderForCausalLM` (transformers' `LlamaForCausalLM` on an
    /// `IQuestCoderConfig`).
    IQuestCoderForCausalLM,
    |cfg| llama_with(cfg, 8)
);

//! Seed-OSS (`SeedOssForCausalLM`: ByteDance-Seed/Seed-OSS-36B): Llama with biases on q, k and v
//! (`attention_bias`, default true), on the output projection only with `attention_out_bias`,
//! and `SeedOssConfig`'s defaults (128-wide heads, 8 key/value heads).

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.qkv_bias = cfg.bool_or("attention_bias", true)?;
    spec.o_bias = cfg.bool_or("attention_out_bias", false)?;
    spec.default_head_dim = Some(128);
    spec.default_kv_heads = Some(8);
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `SeedOssForCausalLM`.
    SeedOssForCausalLM,
    spec
);

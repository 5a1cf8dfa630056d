//! Llama 1/2/3 (`LlamaForCausalLM`): RMS norm, RoPE (default, linear or llama3 scaling), grouped KV
//! heads, SwiGLU MLP, optionally tied embeddings.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;

causal_lm_family!(
    /// transformers' `LlamaForCausalLM`.
    LlamaForCausalLM,
    DecoderSpec::llama
);

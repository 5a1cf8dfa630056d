//! Llama 1/2/3 (`LlamaForCausalLM`): RMS norm, RoPE (default, linear or llama3 scaling), grouped KV
//! heads, SwiGLU MLP, optionally tied embeddings; and Arcee (`ArceeForCausalLM`), Llama with an
//! ungated squared-ReLU MLP.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;

causal_lm_family!(
    /// transformers' `LlamaForCausalLM`.
    LlamaForCausalLM,
    DecoderSpec::llama
);

/// Arcee (AFM-4.5B): Llama with an ungated MLP (`up_proj`, `down_proj`) and squared ReLU
/// (`hidden_act`, default `relu2`), as transformers' `ArceeMLP` (Nemotron's).
fn arcee_spec(cfg: &crate::config::Config) -> crate::error::Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.plain_mlp = true;
    spec.act = crate::layers::Activation::from_name(cfg.str_or("hidden_act", "relu2")?)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `ArceeForCausalLM`.
    ArceeForCausalLM,
    arcee_spec
);

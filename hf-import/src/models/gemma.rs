//! Gemma, Gemma 2 and Gemma 3 (text): `(1 + w)` RMS norms in float32, embeddings scaled by
//! `sqrt(hidden)` in the model dtype, GELU-tanh MLP, tied embeddings. Gemma 2 adds norms after
//! attention and around the MLP, `query_pre_attn_scalar`, attention and final logit soft-capping and
//! alternating sliding/global layers; Gemma 3 adds per-head q/k norms and its own RoPE base for the
//! sliding layers.

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::Result;
use crate::layers::{Activation, RmsNormStyle};

/// Gemma (1): Llama with Gemma's norm, embedding scale and activation.
fn gemma(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::Gemma;
    spec.scale_embeddings = true;
    let act = cfg
        .get("hidden_activation")
        .and_then(|v| v.as_str())
        .unwrap_or(cfg.str_or("hidden_act", "gelu_pytorch_tanh")?);
    // transformers maps Gemma's legacy "gelu" to the tanh approximation as well.
    spec.act = if act == "gelu" { Activation::GeluTanh } else { Activation::from_name(act)? };
    Ok(spec)
}

/// Gemma 2: sandwich norms, soft-capping, `query_pre_attn_scalar`, sliding layers from `layer_types`
/// (every other layer when absent).
fn gemma2(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = gemma(cfg)?;
    spec.sandwich_norms = true;
    spec.attn_softcap = cfg.opt_f64("attn_logit_softcapping")?;
    spec.final_softcap = cfg.opt_f64("final_logit_softcapping")?;
    if let Some(s) = cfg.opt_f64("query_pre_attn_scalar")? {
        spec.attention_scale = Some(s.powf(-0.5));
    }
    let window = cfg.opt_usize("sliding_window")?;
    spec.windows = if cfg.layer_types().is_some() {
        DecoderSpec::windows_from_layer_types(cfg, window)?
    } else {
        (0..cfg.layers("num_hidden_layers")?).map(|i| if i % 2 == 0 { window } else { None }).collect()
    };
    Ok(spec)
}

/// Gemma 3 text: Gemma 2 plus q/k norms and local RoPE; sliding layers from `layer_types`, or every
/// layer but each `sliding_window_pattern`-th (4.x style).
fn gemma3(cfg: &Config) -> Result<DecoderSpec> {
    if cfg.bool_or("use_bidirectional_attention", false)? {
        return Err(crate::error::Error::Unsupported(
            "Gemma 3 with use_bidirectional_attention is not supported".into(),
        ));
    }
    let mut spec = gemma2(cfg)?;
    spec.qk_norm = true;
    spec.local_rope = true;
    if cfg.layer_types().is_none() {
        let window = cfg.opt_usize("sliding_window")?;
        let pattern = cfg.usize_or("sliding_window_pattern", 6)?.max(1);
        spec.windows = (0..cfg.layers("num_hidden_layers")?)
            .map(|i| if (i + 1) % pattern != 0 { window } else { None })
            .collect();
    }
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `GemmaForCausalLM`.
    GemmaForCausalLM,
    gemma
);

causal_lm_family!(
    /// transformers' `Gemma2ForCausalLM`.
    Gemma2ForCausalLM,
    gemma2
);

causal_lm_family!(
    /// transformers' `Gemma3ForCausalLM` (the text model, `model_type` `gemma3_text`).
    Gemma3ForCausalLM,
    gemma3
);

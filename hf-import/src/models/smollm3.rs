//! SmolLM3 (`SmolLM3ForCausalLM`): Llama's blocks with NoPE layers (`no_rope_layers`: 1 where a
//! layer rotates q and k, 0 where it does not; by default every `no_rope_layer_interval`-th layer,
//! counting from 1, is NoPE) and, with `use_sliding_window`, windows on the NoPE layers;
//! `tie_word_embeddings` true by default, as `SmolLM3Config` has it.

use serde_json::Value;

use super::decoder::DecoderSpec;
use super::family::causal_lm_family;
use crate::config::Config;
use crate::error::{Error, Result};

fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    let layers = cfg.layers("num_hidden_layers")?;
    let rotates: Vec<bool> = match cfg.get("no_rope_layers") {
        None | Some(Value::Null) => {
            let interval = cfg.usize_or("no_rope_layer_interval", 4)?;
            if interval == 0 {
                return Err(Error::Config("no_rope_layer_interval must be positive".into()));
            }
            (0..layers).map(|i| (i + 1) % interval != 0).collect()
        }
        Some(Value::Array(flags)) if flags.len() == layers => flags
            .iter()
            .map(|f| match f {
                Value::Number(n) => Ok(n.as_f64() != Some(0.0)),
                Value::Bool(b) => Ok(*b),
                other => Err(Error::Config(format!("no_rope_layers must hold 0s and 1s, got {other}"))),
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(Error::Config(format!(
                "no_rope_layers must be a list of {layers} flags (one per layer), got {other}"
            )))
        }
    };
    spec.nope = rotates.iter().map(|&r| !r).collect();
    // `SmolLM3Config`: sliding layers are the NoPE ones when `use_sliding_window` and a window are
    // set (or as `layer_types` says); the attention reads the window only with `use_sliding_window`.
    let window = cfg.nullable_usize_or("sliding_window", None)?;
    spec.windows = if cfg.bool_or("use_sliding_window", false)? {
        let sliding = DecoderSpec::sliding_layers(cfg)?
            .unwrap_or_else(|| spec.nope.iter().map(|&n| n && window.is_some()).collect());
        DecoderSpec::sliding_windows(&sliding, window)?
    } else {
        DecoderSpec::sliding_layers(cfg)?;
        vec![None; layers]
    };
    Ok(spec)
}

causal_lm_family!(
    /// transformers' `SmolLM3ForCausalLM`.
    SmolLM3ForCausalLM,
    spec
);

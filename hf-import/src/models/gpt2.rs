//! GPT-2 (`GPT2LMHeadModel`, `GPT2Model`): a pre-norm decoder with layer norms, learned absolute
//! positions, a fused `c_attn`, an ungated MLP (`gelu_new` by default) and `Conv1D` weights stored
//! `[in, out]`. Its config (`n_embd`, `n_layer`, `n_head`, `n_positions`, `n_inner`, ... as
//! `GPT2Config` names them, each with the class's default) and its checkpoint (with the
//! `transformer.` prefix or without it, as the original OpenAI upload has them, with or without the
//! old causal-mask buffers) are read into the decoder's layout: [`CausalLm`] with layer norms,
//! learned positions and no RoPE.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// transformers' `GPT2LMHeadModel` (the LM head tied to `wte` unless the config unties it).
#[derive(Debug, Clone)]
pub struct GPT2LMHeadModel(pub CausalLm);

impl std::ops::Deref for GPT2LMHeadModel {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

impl GPT2LMHeadModel {
    /// Loads the model from a GPT-2 config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg)?;
        let layers = cfg.layers("num_hidden_layers")?;
        Ok(GPT2LMHeadModel(CausalLm::load(&cfg, &decoder_weights(weights, layers)?, spec(&cfg)?)?))
    }
}

/// The config under the decoder's key names (`hidden_size`, `num_hidden_layers`, ...), with
/// `GPT2Config`'s defaults for what it leaves out.
pub(super) fn decoder_config(cfg: &Config) -> Result<Config> {
    if cfg.bool_or("add_cross_attention", false)? {
        return Err(Error::Unsupported(
            "GPT-2 with add_cross_attention (the decoder of an encoder-decoder model) is not supported"
                .into(),
        ));
    }
    let embd = cfg.usize_aliased("n_embd", "hidden_size", 768)?;
    let heads = cfg.usize_aliased("n_head", "num_attention_heads", 12)?;
    if heads == 0 || !embd.is_multiple_of(heads) {
        return Err(Error::Config(format!(
            "`embed_dim` must be divisible by num_heads (got `embed_dim`: {embd} and `num_heads`: {heads})."
        )));
    }
    let inner = match cfg.opt_usize("n_inner")? {
        Some(n) => n,
        None => embd.checked_mul(4).ok_or_else(|| Error::Config(format!("n_embd {embd} is too large")))?,
    };
    let mut json = cfg.json().clone();
    let mut set = |key: &str, value: Value| {
        json.insert(key.to_string(), value);
    };
    set("hidden_size", embd.into());
    set("num_attention_heads", heads.into());
    set("num_key_value_heads", heads.into());
    set("head_dim", (embd / heads).into());
    set("num_hidden_layers", cfg.usize_aliased("n_layer", "num_hidden_layers", 12)?.into());
    set("max_position_embeddings", cfg.usize_aliased("n_positions", "max_position_embeddings", 1024)?.into());
    set("vocab_size", cfg.usize_or("vocab_size", 50257)?.into());
    set("intermediate_size", inner.into());
    set("rms_norm_eps", cfg.f64_or("layer_norm_epsilon", 1e-5)?.into());
    set("hidden_act", cfg.str_or("activation_function", "gelu_new")?.into());
    Ok(Config::from_map(json))
}

/// GPT-2's structure as a [`DecoderSpec`]: biases everywhere, layer norms, learned positions, the
/// ungated MLP, scores scaled by `head_dim^-0.5` unless `scale_attn_weights` is off and divided by
/// the layer's number with `scale_attn_by_inverse_layer_idx`, the head tied by default.
pub(super) fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.token_types = true;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (true, true, true);
    spec.layer_norm = true;
    spec.learned_positions = true;
    spec.plain_mlp = true;
    spec.scale_by_inverse_layer = cfg.bool_or("scale_attn_by_inverse_layer_idx", false)?;
    if !cfg.bool_or("scale_attn_weights", true)? {
        spec.attention_scale = Some(1.0);
    }
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint's tensors under the decoder's names (`model.layers.0.self_attn.qkv_proj.weight`,
/// ...; without `model.` where the checkpoint has no `transformer.` prefix, as a base model's, whose
/// untied LM head may be absent), `Conv1D` weights transposed to `[out, in]`; the causal-mask
/// buffers (`attn.bias`, `attn.masked_bias`) left out, other names kept as they are.
pub(super) fn decoder_weights(weights: &Weights, layers: usize) -> Result<Weights> {
    let (prefix, root) =
        if weights.contains("transformer.wte.weight") { ("transformer.", "model.") } else { ("", "") };
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len());
    for item in weights.iter() {
        let (name, t) = item?;
        let Some(rest) = name.strip_prefix(prefix).filter(|_| name != "lm_head.weight") else {
            out.push((name.clone(), t));
            continue;
        };
        let (new, conv1d) = match rest {
            "wte.weight" => (format!("{root}embed_tokens.weight"), false),
            "wpe.weight" => (format!("{root}embed_positions.weight"), false),
            "ln_f.weight" | "ln_f.bias" => (format!("{root}norm.{}", &rest["ln_f.".len()..]), false),
            _ => match layer_name(rest, layers) {
                Some(Some((name, conv1d))) => (format!("{root}{name}"), conv1d),
                Some(None) => continue,
                None => (name.clone(), false),
            },
        };
        let t = if conv1d {
            if t.rank() != 2 {
                return Err(Error::Weight(format!(
                    "tensor '{name}' must be a matrix, got shape {:?}",
                    t.dims()
                )));
            }
            t.t()?.contiguous()?
        } else {
            t
        };
        out.push((new, t));
    }
    Ok(Weights::from_tensors(out))
}

/// The decoder's name of `h.{i}.{part}` and whether it is a `Conv1D` weight; `Some(None)` for a
/// buffer left out, `None` for a name outside the blocks.
fn layer_name(rest: &str, layers: usize) -> Option<Option<(String, bool)>> {
    let after = rest.strip_prefix("h.")?;
    let (index, part) = after.split_once('.')?;
    let i: usize = index.parse().ok().filter(|i| *i < layers)?;
    let (target, conv1d) = match part {
        "attn.bias" | "attn.masked_bias" => return Some(None),
        "ln_1.weight" => ("input_layernorm.weight", false),
        "ln_1.bias" => ("input_layernorm.bias", false),
        "ln_2.weight" => ("post_attention_layernorm.weight", false),
        "ln_2.bias" => ("post_attention_layernorm.bias", false),
        "attn.c_attn.weight" => ("self_attn.qkv_proj.weight", true),
        "attn.c_attn.bias" => ("self_attn.qkv_proj.bias", false),
        "attn.c_proj.weight" => ("self_attn.o_proj.weight", true),
        "attn.c_proj.bias" => ("self_attn.o_proj.bias", false),
        "mlp.c_fc.weight" => ("mlp.up_proj.weight", true),
        "mlp.c_fc.bias" => ("mlp.up_proj.bias", false),
        "mlp.c_proj.weight" => ("mlp.down_proj.weight", true),
        "mlp.c_proj.bias" => ("mlp.down_proj.bias", false),
        _ => return None,
    };
    Some(Some((format!("layers.{i}.{target}"), conv1d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `GPT2Config`'s names and defaults become the decoder's keys; `hidden_size` is `n_embd`'s alias.
    #[test]
    fn gpt2_config_keys_and_defaults() {
        let cfg = |json: &str| decoder_config(&Config::from_json_str(json).unwrap());
        let c = cfg(r#"{"model_type": "gpt2"}"#).unwrap();
        assert_eq!(c.usize("hidden_size").unwrap(), 768);
        assert_eq!(c.usize("intermediate_size").unwrap(), 3072);
        assert_eq!(c.usize("max_position_embeddings").unwrap(), 1024);
        assert_eq!(c.usize("vocab_size").unwrap(), 50257);
        assert_eq!(c.str("hidden_act").unwrap(), "gelu_new");
        let c = cfg(r#"{"model_type": "gpt2", "hidden_size": 64, "n_head": 4, "n_inner": 100}"#).unwrap();
        assert_eq!((c.usize("hidden_size").unwrap(), c.usize("head_dim").unwrap()), (64, 16));
        assert_eq!(c.usize("intermediate_size").unwrap(), 100);
        let err = cfg(r#"{"model_type": "gpt2", "n_embd": 10, "n_head": 4}"#).unwrap_err().to_string();
        assert!(err.contains("`embed_dim` must be divisible by num_heads (got `embed_dim`: 10"), "{err}");
        let err = cfg(r#"{"model_type": "gpt2", "add_cross_attention": true}"#).unwrap_err().to_string();
        assert!(err.contains("add_cross_attention"), "{err}");
    }

    #[test]
    fn block_names_map_to_the_decoders() {
        assert_eq!(
            layer_name("h.1.attn.c_attn.weight", 2),
            Some(Some(("layers.1.self_attn.qkv_proj.weight".into(), true)))
        );
        assert_eq!(layer_name("h.0.attn.bias", 2), Some(None));
        assert_eq!(layer_name("h.2.ln_1.weight", 2), None);
        assert_eq!(layer_name("wte.weight", 2), None);
    }
}

//! Gemma 4 (`Gemma4ForCausalLM`, model type `gemma4_text`; the text model of
//! `Gemma4ForConditionalGeneration`): Gemma 3's blocks (sandwich norms, q/k norms, sliding and full
//! layers, embeddings scaled by `sqrt(hidden)`) with norms that scale by `w` (not `1 + w`),
//! attention unscaled (the q/k norms set the scale), the values RMS-normed without a scale, and:
//!
//! - full layers of their own head width and key/value heads (`per_layer_config`, or
//!   `global_head_dim` (default 512) and `num_global_key_value_heads` as transformers 5.5 wrote
//!   them), whose values are their keys' projection with `attention_k_eq_v`;
//! - RoPE per layer type, the full layers' `proportional` over a quarter of each head's angles;
//! - per-layer embeddings (`hidden_size_per_layer_input`, default 256; 0 for none): an input for
//!   every layer from the tokens (`embed_tokens_per_layer`) and their embeddings
//!   (`per_layer_model_projection`), added through a gated block after each layer's MLP;
//! - the last `num_kv_shared_layers` layers attending to the keys and values of the last earlier
//!   layer of their type, their MLPs twice as wide with `use_double_wide_mlp`;
//! - a scalar per layer (`layer_scalar`) on its output;
//! - with `enable_moe_block`, a mixture of experts beside each dense MLP (see
//!   [`ExpertsBesideSpec`]);
//! - final logit soft-capping with `final_logit_softcapping`.

use serde_json::{json, Value};

use super::decoder::{CausalLm, DecoderSpec, ExpertsBesideSpec, PerLayerInputsSpec};
use super::family::causal_lm_newtype;
use super::gemma3_multimodal::{nested_text_config, with_language_model};
use super::mellum::per_layer_type_rope;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, RmsNormStyle};
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `Gemma4ForCausalLM`.
    Gemma4ForCausalLM
);

impl Gemma4ForCausalLM {
    /// Loads the model from a Gemma 4 text config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let cfg = decoder_config(cfg);
        Ok(Gemma4ForCausalLM(CausalLm::load(&cfg, weights, spec(&cfg)?)?))
    }
}

/// transformers' `Gemma4ForConditionalGeneration` (`model_type` `gemma4`) for text: its language
/// model (`model.language_model.*`), the vision and audio towers and their embedders never read.
/// Image, video and audio inputs are refused.
#[derive(Debug, Clone)]
pub struct Gemma4ForConditionalGeneration(pub CausalLm);

impl Gemma4ForConditionalGeneration {
    /// Loads the language model of a `gemma4` checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let text = text_config(cfg)?;
        let lm = with_language_model(weights, |w| Ok(Gemma4ForCausalLM::load(&text, w)?.0))?;
        Ok(Gemma4ForConditionalGeneration(lm))
    }
}

impl std::ops::Deref for Gemma4ForConditionalGeneration {
    type Target = CausalLm;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// `Gemma4TextConfig`'s defaults for the keys the decoder requires, where a `text_config` leaves
/// them out.
const TEXT_DEFAULTS: &[(&str, u64)] = &[
    ("vocab_size", 262_144),
    ("hidden_size", 2304),
    ("intermediate_size", 9216),
    ("num_hidden_layers", 30),
    ("num_attention_heads", 8),
    ("max_position_embeddings", 131_072),
];

/// The text model's config of a `gemma4` config (`text_config`, with `Gemma4TextConfig`'s defaults
/// where it is absent), with the outer `tie_word_embeddings` (default true) and dtype.
fn text_config(cfg: &Config) -> Result<Config> {
    nested_text_config(cfg, "gemma4_text", TEXT_DEFAULTS)
}

/// The config with `Gemma4TextConfig`'s rope dicts where it names none.
pub(super) fn decoder_config(cfg: &Config) -> Config {
    cfg.with_class_rope(json!({
        "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1_000_000.0},
    }))
}

/// Which layers are `sliding_attention` layers, as `Gemma4TextConfig` sets `layer_types`: from the
/// config (the last layer forced to full attention), or every layer but each sixth.
fn sliding_layers(cfg: &Config, layers: usize) -> Result<Vec<bool>> {
    let mut sliding = match DecoderSpec::sliding_layers(cfg)? {
        Some(sliding) => sliding,
        None => (0..layers).map(|i| (i + 1) % 6 != 0).collect(),
    };
    if let Some(last) = sliding.last_mut() {
        *last = false;
    }
    Ok(sliding)
}

/// Each layer's head width and key/value heads: `head_dim` and `num_key_value_heads`, overridden
/// per layer by `per_layer_config`; without it, full layers take `global_head_dim` (default 512)
/// and, with `attention_k_eq_v`, `num_global_key_value_heads`.
fn layer_shapes(cfg: &Config, sliding: &[bool]) -> Result<(Vec<usize>, Vec<usize>)> {
    let hidden = cfg.usize("hidden_size")?;
    let heads = cfg.usize("num_attention_heads")?;
    let head_dim = cfg.nullable_usize_or("head_dim", Some(256))?.unwrap_or(hidden / heads.max(1));
    let kv = cfg.nullable_usize_or("num_key_value_heads", Some(4))?.unwrap_or(heads);
    let (mut dims, mut kvs) = (vec![head_dim; sliding.len()], vec![kv; sliding.len()]);
    match cfg.get("per_layer_config") {
        Some(Value::Object(overrides)) => {
            for (layer, fields) in overrides {
                let i = layer.parse::<usize>().ok().filter(|&i| i < sliding.len()).ok_or_else(|| {
                    Error::Config(format!(
                        "\"per_layer_config\" keys must be layer indices below {}, got {layer:?}",
                        sliding.len()
                    ))
                })?;
                let Value::Object(fields) = fields else {
                    return Err(Error::Config(format!(
                        "\"per_layer_config\" entry {layer} must be an object"
                    )));
                };
                for (key, value) in fields {
                    let n = value.as_u64().map(|n| n as usize).filter(|&n| n > 0);
                    match (key.as_str(), n) {
                        ("head_dim", Some(n)) => dims[i] = n,
                        ("num_key_value_heads", Some(n)) => kvs[i] = n,
                        ("head_dim" | "num_key_value_heads", None) => {
                            return Err(Error::Config(format!(
                                "\"per_layer_config\" layer {layer}: \"{key}\" must be a positive integer, got {value}"
                            )))
                        }
                        _ => {
                            return Err(Error::Unsupported(format!(
                                "\"per_layer_config\" layer {layer} sets \"{key}\": only head_dim and num_key_value_heads \
                                 may differ between Gemma 4's layers"
                            )))
                        }
                    }
                }
            }
        }
        Some(v) => return Err(Error::Config(format!("\"per_layer_config\" must be an object, got {v}"))),
        None => {
            let global = match cfg.get("global_head_dim") {
                Some(_) => cfg.usize("global_head_dim")?,
                None if cfg.json().contains_key("global_head_dim") => {
                    return Err(Error::Config(
                        "\"global_head_dim\" must be a positive integer, got null".into(),
                    ))
                }
                None => 512,
            };
            let global_kv = match cfg.bool_or("attention_k_eq_v", false)? {
                true => cfg.opt_usize("num_global_key_value_heads")?,
                false => None,
            };
            for (i, &s) in sliding.iter().enumerate() {
                if !s {
                    dims[i] = global;
                    kvs[i] = global_kv.unwrap_or(kv);
                }
            }
        }
    }
    Ok((dims, kvs))
}

/// For each layer, the layer whose keys and values it reads (`Gemma4TextConfig.kv_sharing_modes`):
/// the last `shared` layers read the last earlier layer of their type.
pub(super) fn kv_sources(shared: usize, sliding: &[bool]) -> Result<Vec<Option<usize>>> {
    let layers = sliding.len();
    if shared >= layers && shared > 0 {
        return Err(Error::Config(format!(
            "num_kv_shared_layers ({shared}) must be below num_hidden_layers ({layers}): some layer must compute the \
             keys and values the others share"
        )));
    }
    let first_shared = layers - shared;
    (0..layers)
        .map(|i| {
            if i < first_shared {
                return Ok(None);
            }
            match (0..first_shared).rev().find(|&j| sliding[j] == sliding[i]) {
                Some(j) => Ok(Some(j)),
                None => Err(Error::Config(
                    "The set of layer types producing a cache is different than the set of layer types using them \
                     (num_kv_shared_layers)"
                        .into(),
                )),
            }
        })
        .collect()
}

/// What Gemma 4 and Gemma 3n share: Gemma 3's sandwich blocks with q/k norms and embeddings
/// scaled by `sqrt(hidden)`, with norms that scale by `w` in float32, values normed without a
/// scale and attention unscaled (the q/k norms set its scale); tied embeddings, the
/// `hidden_activation` (default `gelu_pytorch_tanh`), `head_dim` 256 and `default_kv_heads`
/// key/value heads unless the config says otherwise.
pub(super) fn normed_attention_spec(cfg: &Config, default_kv_heads: usize) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(cfg)?;
    spec.norm_style = RmsNormStyle::ScaleInFloat32;
    spec.scale_embeddings = true;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.act = Activation::from_name(cfg.str_or("hidden_activation", "gelu_pytorch_tanh")?)?;
    spec.mlp_bias = false;
    spec.default_head_dim = Some(256);
    spec.default_kv_heads = Some(default_kv_heads);
    spec.sandwich_norms = true;
    spec.qk_norm = true;
    spec.v_norm = true;
    spec.attention_scale = Some(1.0);
    Ok(spec)
}

/// Gemma 4's decoder (see the module docs).
fn spec(cfg: &Config) -> Result<DecoderSpec> {
    let mut spec = normed_attention_spec(cfg, 4)?;
    spec.final_softcap = cfg.opt_f64("final_logit_softcapping")?;
    match cfg.get("use_bidirectional_attention") {
        None => {}
        Some(Value::String(s)) if s == "all" => spec.bidirectional = true,
        // (Bidirectional over image tokens alone: text attends causally.)
        Some(Value::String(s)) if s == "vision" => {}
        Some(v) => {
            return Err(Error::Config(format!(
                "\"use_bidirectional_attention\" must be null, \"all\" or \"vision\", got {v}"
            )))
        }
    }
    let layers = cfg.layers("num_hidden_layers")?;
    let sliding = sliding_layers(cfg, layers)?;
    per_layer_type_rope(cfg, &sliding, "Gemma 4")?;
    let window = cfg.nullable_usize_or("sliding_window", Some(512))?;
    // Both ways, `Gemma4TextConfig` makes the window `sliding_window // 2 + 1` and its mask keeps
    // `|i − j| <=` that (Gemma 3's keeps `<`): the decoder's bidirectional rule `|i − j| <= w / 2`
    // at `w = sliding_window + 2`.
    let window = if spec.bidirectional { window.map(|w| w.saturating_add(2)) } else { window };
    spec.windows = DecoderSpec::sliding_windows(&sliding, window)?;
    spec.local_rope = sliding.clone();
    let (dims, kvs) = layer_shapes(cfg, &sliding)?;
    spec.head_dims_per_layer = Some(dims);
    spec.kv_heads_per_layer = Some(kvs);
    let k_eq_v = cfg.bool_or("attention_k_eq_v", false)?;
    spec.values_from_keys = Some(sliding.iter().map(|&s| k_eq_v && !s).collect());
    let sources = kv_sources(cfg.usize_or("num_kv_shared_layers", 0)?, &sliding)?;
    if cfg.bool_or("use_double_wide_mlp", false)? {
        let intermediate = cfg.usize("intermediate_size")?;
        let doubled = intermediate
            .checked_mul(2)
            .ok_or_else(|| Error::Config(format!("intermediate_size ({intermediate}) is too large")))?;
        spec.intermediate_per_layer =
            Some(sources.iter().map(|s| if s.is_some() { doubled } else { intermediate }).collect());
    }
    spec.kv_sources = Some(sources);
    let width = cfg.nullable_usize_or("hidden_size_per_layer_input", Some(256))?.unwrap_or(0);
    if width > 0 {
        let vocab = cfg.usize_or("vocab_size_per_layer_input", 262_144)?;
        spec.per_layer_inputs = Some(PerLayerInputsSpec { width, vocab, clamp_ids: false });
    }
    spec.layer_scalar = true;
    if cfg.bool_or("enable_moe_block", false)? {
        let need = |key: &str| {
            cfg.opt_usize(key)?
                .ok_or_else(|| Error::Config(format!("enable_moe_block needs \"{key}\" (got none or null)")))
        };
        spec.experts_beside = Some(ExpertsBesideSpec {
            experts: need("num_experts")?,
            top_k: need("top_k_experts")?,
            intermediate: need("moe_intermediate_size")?,
        });
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        decoder_config(&Config::from_json_str(json).unwrap())
    }

    /// Full layers take `global_head_dim` (default 512) and, with `attention_k_eq_v`,
    /// `num_global_key_value_heads`; `per_layer_config` overrides any layer instead.
    #[test]
    fn full_layers_take_their_own_widths() {
        let base = r#""hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
            "num_hidden_layers": 3, "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]"#;
        let c = cfg(&format!("{{{base}}}"));
        let sliding = sliding_layers(&c, 3).unwrap();
        assert_eq!(sliding, [true, false, false], "the last layer is forced full");
        assert_eq!(layer_shapes(&c, &sliding).unwrap(), (vec![8, 512, 512], vec![2, 2, 2]));
        let c = cfg(&format!(
            r#"{{{base}, "global_head_dim": 16, "num_global_key_value_heads": 1, "attention_k_eq_v": true}}"#
        ));
        assert_eq!(layer_shapes(&c, &sliding).unwrap(), (vec![8, 16, 16], vec![2, 1, 1]));
        let c = cfg(&format!(r#"{{{base}, "global_head_dim": 16, "num_global_key_value_heads": 1}}"#));
        assert_eq!(layer_shapes(&c, &sliding).unwrap(), (vec![8, 16, 16], vec![2, 2, 2]));
        let c = cfg(&format!(r#"{{{base}, "per_layer_config": {{"1": {{"head_dim": 4}}}}}}"#));
        assert_eq!(layer_shapes(&c, &sliding).unwrap(), (vec![8, 4, 8], vec![2, 2, 2]));
        let c = cfg(&format!(r#"{{{base}, "per_layer_config": {{"1": {{"intermediate_size": 4}}}}}}"#));
        let err = layer_shapes(&c, &sliding).unwrap_err().to_string();
        assert!(err.contains("sets \"intermediate_size\""), "{err}");
        let c = cfg(&format!(r#"{{{base}, "per_layer_config": {{"7": {{"head_dim": 4}}}}}}"#));
        assert!(layer_shapes(&c, &sliding).unwrap_err().to_string().contains("layer indices below 3"));
    }

    /// The last layers read the last earlier layer of their type; all layers sharing is refused.
    #[test]
    fn shared_layers_read_the_last_earlier_layer_of_their_type() {
        let sliding = [true, false, true, true, false];
        assert_eq!(kv_sources(2, &sliding).unwrap(), [None, None, None, Some(2), Some(1)]);
        assert_eq!(kv_sources(0, &sliding).unwrap(), [None; 5]);
        assert!(kv_sources(5, &sliding).is_err());
        // No full layer before the shared ones to read from.
        assert!(kv_sources(1, &[true, true, false]).is_err());
    }
}

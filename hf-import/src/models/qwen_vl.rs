//! Qwen's vision-language checkpoints run as their language model (with images too where the
//! checkpoint has its tower: see [`super::qwen_vl_images`]): Qwen2-VL (model type
//! `qwen2_vl`, `Qwen2VLForConditionalGeneration`), Qwen2.5-VL (`qwen2_5_vl`), Qwen3-VL (`qwen3_vl`)
//! and Qwen3-VL-MoE (`qwen3_vl_moe`: Qwen3-VL-30B-A3B, 235B-A22B).
//!
//! On text their language models are Qwen2's, Qwen2's, Qwen3's and Qwen3-MoE's decoders: the
//! multimodal RoPE (`mrope_section`, interleaved for Qwen3-VL) gives every frequency the same
//! position when the three position streams agree, as they do without images, and Qwen3-VL's
//! deepstack features are added at image tokens only. The config nests the text model under
//! `text_config` (its own class's defaults for absent keys) or, as the Qwen2-VL and Qwen2.5-VL
//! checkpoints saved before transformers 5 do, keeps its keys at the top level with
//! `rope_scaling: {"type": "mrope", ...}`. The weights keep the language model under
//! `model.language_model.*` (transformers 5's modules, what Qwen3-VL saves) or `model.*` beside
//! `visual.*` (what Qwen2-VL and Qwen2.5-VL save), the tower read for images. The decoder turns its RoPE frequencies by the three position streams
//! (`CausalLm::with_multimodal_rope`), which images set apart.
//! Qwen3-VL-MoE's fused experts may be stored transposed (`gate_up_proj` `[experts, hidden, 2 ·
//! intermediate]`, as the published checkpoints hold them), which transformers transposes at load
//! when the shape says so, and so does this loader. The model runs as a
//! [`VisionLanguageForConditionalGeneration`] (videos refused).

use serde_json::{Map, Value};

use super::gemma3_multimodal::{
    inherit_outer_dtype, language_model_weights as renamed_language_model, with_language_model,
};
use super::qwen_vl_images::QwenImages;
use super::qwen_vl_vision::Kind;
use super::vision_language::{Media, VisionLanguageForConditionalGeneration};
use super::{Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// What tells one vision-language family from another.
struct Family {
    /// `config.json`'s `model_type`
    model_type: &'static str,
    /// the multimodal class
    architecture: &'static str,
    /// the model type of the decoder its language model runs as
    text_model_type: &'static str,
    /// its text config class's defaults for the sizes the decoder requires
    sizes: &'static [(&'static str, u64)],
    /// its text config class's `rms_norm_eps`
    rms_norm_eps: f64,
    /// its text config class's RoPE base
    rope_theta: f64,
    /// whether `tie_word_embeddings: true` inside `text_config` ties the head as the outer flag
    /// does (the Qwen2-VL and Qwen2.5-VL config classes' compatibility with 4.x saves)
    tie_from_text: bool,
    /// whether its attention reads the sliding-window keys (Qwen2's do; Qwen3-VL's attends to
    /// every earlier token whatever they say)
    windows: bool,
    /// its rotary embedding's `mrope_section` where the config gives none
    mrope_section: [usize; 3],
    /// whether its multimodal RoPE interleaves the streams (Qwen3-VL's, whatever the config says)
    interleaved: bool,
}

/// Qwen2-VL's and Qwen2.5-VL's text config class's sizes.
const QWEN2_VL_SIZES: &[(&str, u64)] = &[
    ("vocab_size", 152_064),
    ("hidden_size", 8192),
    ("intermediate_size", 29_568),
    ("num_hidden_layers", 80),
    ("num_attention_heads", 64),
    ("num_key_value_heads", 8),
    ("max_position_embeddings", 32_768),
];

/// The families, by model type.
const FAMILIES: [Family; 4] = [
    Family {
        model_type: "qwen2_vl",
        architecture: "Qwen2VLForConditionalGeneration",
        text_model_type: "qwen2",
        sizes: QWEN2_VL_SIZES,
        rms_norm_eps: 1e-5,
        rope_theta: 1e6,
        tie_from_text: true,
        windows: true,
        mrope_section: [16, 24, 24],
        interleaved: false,
    },
    Family {
        model_type: "qwen2_5_vl",
        architecture: "Qwen2_5_VLForConditionalGeneration",
        text_model_type: "qwen2",
        sizes: QWEN2_VL_SIZES,
        rms_norm_eps: 1e-5,
        rope_theta: 1e6,
        tie_from_text: true,
        windows: true,
        mrope_section: [16, 24, 24],
        interleaved: false,
    },
    Family {
        model_type: "qwen3_vl",
        architecture: "Qwen3VLForConditionalGeneration",
        text_model_type: "qwen3",
        sizes: &[
            ("vocab_size", 151_936),
            ("hidden_size", 4096),
            ("intermediate_size", 22_016),
            ("num_hidden_layers", 32),
            ("num_attention_heads", 32),
            ("num_key_value_heads", 32),
            ("head_dim", 128),
            ("max_position_embeddings", 128_000),
        ],
        rms_norm_eps: 1e-6,
        rope_theta: 5e5,
        tie_from_text: false,
        windows: false,
        mrope_section: [24, 20, 20],
        interleaved: true,
    },
    Family {
        model_type: "qwen3_vl_moe",
        architecture: "Qwen3VLMoeForConditionalGeneration",
        text_model_type: "qwen3_moe",
        sizes: &[
            ("vocab_size", 151_936),
            ("hidden_size", 2048),
            ("intermediate_size", 5632),
            ("num_hidden_layers", 24),
            ("num_attention_heads", 16),
            ("num_key_value_heads", 16),
            ("head_dim", 128),
            ("max_position_embeddings", 128_000),
            ("moe_intermediate_size", 1408),
            ("num_experts", 60),
            ("num_experts_per_tok", 4),
            ("decoder_sparse_step", 1),
        ],
        rms_norm_eps: 1e-6,
        rope_theta: 5e5,
        tie_from_text: false,
        windows: false,
        mrope_section: [24, 20, 20],
        interleaved: true,
    },
];

/// The multimodal classes (what [`super::is_vision_language`] also names).
pub(crate) const ARCHITECTURES: [&str; 4] =
    [FAMILIES[0].architecture, FAMILIES[1].architecture, FAMILIES[2].architecture, FAMILIES[3].architecture];

/// Whether `model_type` is one of the Qwen vision-language families.
pub(crate) fn is_qwen_vl(model_type: &str) -> bool {
    FAMILIES.iter().any(|f| f.model_type == model_type)
}

/// Loads the language model of a `qwen2_vl`, `qwen2_5_vl`, `qwen3_vl` or `qwen3_vl_moe`
/// checkpoint (see the module docs).
pub(crate) fn load(cfg: &Config, weights: &Weights) -> Result<VisionLanguageForConditionalGeneration> {
    let model_type = cfg.model_type()?;
    let family = FAMILIES.iter().find(|f| f.model_type == model_type).ok_or_else(|| {
        Error::Unsupported(format!("model_type \"{model_type}\" is not a Qwen vision-language family"))
    })?;
    let (text, sections) = text_config(cfg, family)?;
    let lm = with_language_model(weights, |w| match family.text_model_type {
        "qwen2" => Ok(Qwen2ForCausalLM::load(&text, w)?.0),
        "qwen3" => Ok(Qwen3ForCausalLM::load(&text, w)?.0),
        _ => Ok(Qwen3MoeForCausalLM::load(&text, &experts_as_loaded(&text, w)?)?.0),
    })?;
    let lm = lm.with_multimodal_rope(sections, family.interleaved)?;
    let kind = match family.model_type {
        "qwen2_vl" => Kind::Qwen2,
        "qwen2_5_vl" => Kind::Qwen2_5,
        _ => Kind::Qwen3,
    };
    let images = QwenImages::load(cfg, weights, kind)?.map(Media::Qwen);
    Ok(VisionLanguageForConditionalGeneration::from_language_model(lm, family.architecture, images))
}

/// The language model's tensors of a Qwen vision-language checkpoint under the names the decoder
/// reads, without the vision tower (shared, not copied).
pub(crate) fn language_model_weights(weights: Weights) -> Weights {
    renamed_language_model(weights)
        .renamed(|n| (!n.starts_with("visual.") && !n.starts_with("model.visual.")).then(|| n.to_string()))
}

/// The text model's config of `family`'s config `cfg`, as its config class builds `text_config`:
/// the nested object, or without one the top level's keys (the 4.x saves); the class's defaults
/// where a key is absent (the sliding-window keys dropped where the attention ignores them); a multimodal `rope_scaling` / `rope_parameters` (`"mrope"`) read as the
/// default RoPE (its sections coincide on text); the head tied by the outer
/// `tie_word_embeddings` (default false), or for Qwen2-VL and Qwen2.5-VL by the nested one too;
/// the outer dtype where the nested config names none. With it, the multimodal RoPE's
/// `mrope_section`.
fn text_config(cfg: &Config, family: &Family) -> Result<(Config, [usize; 3])> {
    let nested = match cfg.get("text_config") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    let tied_inside = match &nested {
        Some(m) if family.tie_from_text => {
            m.get("tie_word_embeddings").and_then(Value::as_bool) == Some(true)
        }
        _ => false,
    };
    let mut text = nested.unwrap_or_else(|| {
        let mut flat = cfg.json().clone();
        flat.remove("vision_config");
        flat
    });
    text.insert("model_type".into(), Value::from(family.text_model_type));
    for (key, default) in family.sizes {
        text.entry(*key).or_insert_with(|| Value::from(*default));
    }
    text.entry("rms_norm_eps").or_insert_with(|| Value::from(family.rms_norm_eps));
    if !family.windows {
        for key in ["use_sliding_window", "sliding_window", "max_window_layers", "layer_types"] {
            text.remove(key);
        }
    }
    if family.text_model_type == "qwen3_moe" {
        // (Its router always renormalises the chosen experts' weights.)
        text.insert("norm_topk_prob".into(), Value::Bool(true));
    }
    let sections = rope_as_default(&mut text, family.rope_theta)?.unwrap_or(family.mrope_section);
    let tied = cfg.bool_or("tie_word_embeddings", false)? || tied_inside;
    text.insert("tie_word_embeddings".into(), Value::Bool(tied));
    inherit_outer_dtype(&mut text, cfg);
    Ok((Config::from_map(text), sections))
}

/// `text`'s RoPE settings with a multimodal type (`"mrope"`) read as `"default"` (the decoder
/// turns the frequencies by their streams itself), and the base `rope_theta` where neither the
/// settings nor the top level give one. Returns their `mrope_section`, where they give one.
fn rope_as_default(text: &mut Map<String, Value>, rope_theta: f64) -> Result<Option<[usize; 3]>> {
    let mut sections = None;
    let mut has_theta = text.contains_key("rope_theta");
    for key in ["rope_scaling", "rope_parameters"] {
        match text.get_mut(key) {
            Some(Value::Object(rope)) => {
                let kind = rope.get("rope_type").or_else(|| rope.get("type")).and_then(Value::as_str);
                if kind == Some("mrope") {
                    rope.remove("type");
                    rope.insert("rope_type".into(), Value::from("default"));
                }
                has_theta |= rope.contains_key("rope_theta");
                if let Some(section) = rope.get("mrope_section") {
                    sections = Some(mrope_section(section)?);
                }
            }
            None | Some(Value::Null) => {}
            Some(v) => return Err(Error::Config(format!("\"{key}\" must be an object, got {v}"))),
        }
    }
    if !has_theta {
        text.insert("rope_theta".into(), Value::from(rope_theta));
    }
    Ok(sections)
}

/// `mrope_section`: three counts of frequencies.
fn mrope_section(v: &Value) -> Result<[usize; 3]> {
    let counts: Option<Vec<usize>> = v
        .as_array()
        .and_then(|a| a.iter().map(|n| n.as_u64().and_then(|n| usize::try_from(n).ok())).collect());
    match counts.as_deref() {
        Some(&[t, h, w]) => Ok([t, h, w]),
        _ => Err(Error::Config(format!("\"mrope_section\" must be three non-negative integers, got {v}"))),
    }
}

/// `weights` with each layer's fused experts in transformers 5's layout (`gate_up_proj`
/// `[experts, 2 · intermediate, hidden]`, `down_proj` `[experts, hidden, intermediate]`): a
/// tensor whose last two dims are the other way round (the published Qwen3-VL-MoE checkpoints')
/// is transposed, as transformers' loading does when the shapes say so.
fn experts_as_loaded(text: &Config, weights: &Weights) -> Result<Weights> {
    let hidden = text.usize("hidden_size")?;
    let inner = text.usize("moe_intermediate_size")?;
    let fused = inner.saturating_mul(2);
    weights.replaced(|name, t| {
        let expected = if name.ends_with(".mlp.experts.gate_up_proj") {
            [fused, hidden]
        } else if name.ends_with(".mlp.experts.down_proj") {
            [hidden, inner]
        } else {
            return Ok(None);
        };
        let dims = t.dims();
        if dims.len() == 3 && dims[1..] != expected && dims[1..] == [expected[1], expected[0]] {
            return Ok(Some(t.transpose(1, 2)?.contiguous()?));
        }
        Ok(None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(json: &str) -> Config {
        let cfg = Config::from_json_str(json).unwrap();
        let family = FAMILIES.iter().find(|f| f.model_type == cfg.model_type().unwrap()).unwrap();
        text_config(&cfg, family).unwrap().0
    }

    /// A 4.x Qwen2-VL config (flat keys, `mrope`) and a nested one read as Qwen2's; the nested
    /// tie flag ties Qwen2-VL's head, not Qwen3-VL's.
    #[test]
    fn text_configs_nested_or_flat() {
        let flat = text(
            r#"{"model_type": "qwen2_vl", "hidden_size": 64, "torch_dtype": "bfloat16",
                "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]}, "vision_config": {"depth": 2}}"#,
        );
        assert_eq!(flat.model_type().unwrap(), "qwen2");
        assert_eq!(flat.usize("hidden_size").unwrap(), 64);
        assert_eq!(flat.usize("vocab_size").unwrap(), 152_064);
        assert_eq!(flat.get("rope_scaling").unwrap()["rope_type"], "default");
        assert_eq!(flat.get("rope_theta"), Some(&Value::from(1e6)));
        assert!(flat.get("vision_config").is_none());
        assert_eq!(flat.get("torch_dtype"), Some(&Value::from("bfloat16")));
        assert!(!flat.bool_or("tie_word_embeddings", true).unwrap());
        let nested =
            r#""text_config": {"tie_word_embeddings": true, "rope_parameters": {"rope_theta": 7.0}}"#;
        let qwen2 = text(&format!(r#"{{"model_type": "qwen2_5_vl", {nested}}}"#));
        assert!(qwen2.bool_or("tie_word_embeddings", false).unwrap());
        assert!(qwen2.get("rope_theta").is_none());
        let qwen3 = text(&format!(r#"{{"model_type": "qwen3_vl", "use_sliding_window": true, {nested}}}"#));
        assert!(qwen3.get("use_sliding_window").is_none());
        assert_eq!(qwen3.model_type().unwrap(), "qwen3");
        assert!(!qwen3.bool_or("tie_word_embeddings", true).unwrap());
        assert_eq!(qwen3.usize("head_dim").unwrap(), 128);
        let moe = text(r#"{"model_type": "qwen3_vl_moe", "tie_word_embeddings": true}"#);
        assert!(moe.bool_or("tie_word_embeddings", false).unwrap());
        assert!(moe.bool_or("norm_topk_prob", false).unwrap());
        let bad = Config::from_json_str(r#"{"model_type": "qwen2_vl", "text_config": []}"#).unwrap();
        assert!(text_config(&bad, &FAMILIES[0]).is_err());
    }
}

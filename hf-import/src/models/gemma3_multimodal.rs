//! Gemma 3 multimodal checkpoints (`model_type` `gemma3`, `Gemma3ForConditionalGeneration`: the 4B,
//! 12B and 27B models): their language model on text, and on images with the vision tower and
//! projector (see [`super::gemma3_images`]).
//!
//! The config nests the text model's settings under `text_config` (often sparse: the keys a checkpoint
//! leaves out take `Gemma3TextConfig`'s defaults) next to a SigLIP `vision_config`; the LM head is
//! tied by the outer `tie_word_embeddings`. The weights keep the language model under
//! `language_model.model.*` (the 4.x module tree, which `save_pretrained` still writes in
//! transformers 5.24; an untied head at `language_model.lm_head.weight`) or under transformers 5's
//! module names `model.language_model.*` (and `lm_head.weight`). For a text-only input transformers'
//! `Gemma3ForConditionalGeneration` is exactly `Gemma3ForCausalLM` on those weights: the same scaled
//! embeddings, causal and sliding masks (its bidirectional attention over image tokens needs
//! `token_type_ids` marking them) and hidden states.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};
use serde_json::{Map, Value};

use super::decoder::{AttentionBlocks, CausalLm};
use super::gemma::Gemma3ForCausalLM;
use super::gemma3_images::{image_blocks, Gemma3Images};
use super::image_inputs::TextWithImages;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// The architecture's name, for messages.
const ARCH: &str = "Gemma3ForConditionalGeneration";

/// Inputs that carry images (`Gemma3ForConditionalGeneration.forward` and its processor's outputs).
const IMAGE_INPUTS: &[&str] = &["pixel_values", "image_sizes", "pixel_attention_mask", "mm_encoder_outputs"];

/// `Gemma3TextConfig`'s defaults for the keys the decoder requires, which the sparse `text_config`
/// of the published checkpoints leaves out (`google/gemma-3-4b-it` names no `vocab_size` or head
/// count). The other defaults are the Gemma 3 spec's own (`head_dim` 256, 4 key/value heads, ...).
const TEXT_DEFAULTS: &[(&str, u64)] = &[
    ("vocab_size", 262_208),
    ("hidden_size", 2304),
    ("intermediate_size", 9216),
    ("num_hidden_layers", 26),
    ("num_attention_heads", 8),
    ("num_key_value_heads", 4),
    ("head_dim", 256),
    ("max_position_embeddings", 131_072),
];

/// The text model's config of a `gemma3` config, as `Gemma3Config` builds its `text_config`: the
/// nested object (absent or null: all defaults) with `model_type` `gemma3_text`, the defaults of
/// [`TEXT_DEFAULTS`] where a key is absent, the outer `tie_word_embeddings` (default true: the flag
/// transformers ties `Gemma3ForConditionalGeneration`'s head by; the nested one is not read) and
/// the outer `dtype` / `torch_dtype` when the nested config names none.
pub fn text_config(cfg: &Config) -> Result<Config> {
    nested_text_config(cfg, "gemma3_text", TEXT_DEFAULTS)
}

/// The text model's config of a multimodal config whose class builds its `text_config` as
/// `model_type`'s config class whatever type the nested dict names (absent or null: all
/// defaults): the nested object with `model_type`, `defaults` where a key is absent, the outer
/// `tie_word_embeddings` (default true) and the outer dtype where it names none (Gemma 3, Gemma 4,
/// Gemma 3n).
pub(super) fn nested_text_config(cfg: &Config, model_type: &str, defaults: &[(&str, u64)]) -> Result<Config> {
    let mut text = match cfg.get("text_config") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    text.insert("model_type".into(), Value::from(model_type));
    for (key, default) in defaults {
        text.entry(*key).or_insert_with(|| Value::from(*default));
    }
    inherit_outer_flags(&mut text, cfg, true)?;
    Ok(Config::from_map(text))
}

/// A multimodal config's nested text config `text` given the outer flags the wrapper class applies
/// to its language model: the outer `tie_word_embeddings` (default `tie_default`), and the outer
/// dtype where the nested config names none (Gemma 3, Mistral 3, Llama 4, Fuyu).
pub(super) fn inherit_outer_flags(
    text: &mut Map<String, Value>,
    cfg: &Config,
    tie_default: bool,
) -> Result<()> {
    text.insert("tie_word_embeddings".into(), Value::Bool(cfg.bool_or("tie_word_embeddings", tie_default)?));
    inherit_outer_dtype(text, cfg);
    Ok(())
}

/// A multimodal config's nested text config `text` with the outer `dtype` / `torch_dtype` where
/// it names none (the wrapper classes load their language model in the checkpoint's dtype).
pub(super) fn inherit_outer_dtype(text: &mut Map<String, Value>, cfg: &Config) {
    if !text.contains_key("dtype") && !text.contains_key("torch_dtype") {
        for key in ["dtype", "torch_dtype"] {
            if let Some(v) = cfg.get(key) {
                text.insert(key.to_string(), v.clone());
            }
        }
    }
}

/// Where a checkpoint keeps its language model: the prefix of the text model's tensors and the
/// name of an untied LM head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    prefix: &'static str,
    head: &'static str,
}

/// The layouts, in the order they are looked for.
const LAYOUTS: [Layout; 3] = [
    // transformers 5's modules (`Gemma3ForConditionalGeneration.model.language_model`), as a
    // state dict saved directly holds them.
    Layout { prefix: "model.language_model.", head: "lm_head.weight" },
    // What `save_pretrained` writes (the 4.x module tree, kept by transformers 5 on save).
    Layout { prefix: "language_model.model.", head: "language_model.lm_head.weight" },
    // Idefics3's and SmolVLM's (`model.text_model`).
    Layout { prefix: "model.text_model.", head: "lm_head.weight" },
];

/// The language model of a multimodal checkpoint under the names [`CausalLm`] reads (`model.*`,
/// `lm_head.weight`), without the vision tower and projector (the tensors are shared, not copied),
/// and the layout found; `None` when `weights` already has them (`model.embed_tokens.weight`) or
/// holds neither layout.
fn language_model(weights: &Weights) -> Option<(Weights, Layout)> {
    if weights.contains("model.embed_tokens.weight") {
        return None;
    }
    let layout =
        LAYOUTS.into_iter().find(|l| weights.contains(&format!("{}embed_tokens.weight", l.prefix)))?;
    let renamed = weights.renamed(|name| match name.strip_prefix(layout.prefix) {
        Some(rest) => Some(format!("model.{rest}")),
        None if name == layout.head => Some("lm_head.weight".to_string()),
        None => None,
    });
    Some((renamed, layout))
}

/// The tensors a Gemma 3 language model reads out of `weights`: a multimodal checkpoint's language
/// model renamed (see [`language_model`]), anything else as it is.
pub(crate) fn language_model_weights(weights: Weights) -> Weights {
    match language_model(&weights) {
        Some((renamed, _)) => renamed,
        None => weights,
    }
}

/// Loads `Gemma3ForCausalLM` from the text config `cfg` and `weights` in any layout (`model.*`, or a
/// multimodal checkpoint's, whose vision tower is not read); errors name the tensors as the file does.
pub(crate) fn load_text_model(cfg: &Config, weights: &Weights) -> Result<CausalLm> {
    with_language_model(weights, |w| Ok(Gemma3ForCausalLM::load(cfg, w)?.0))
}

/// `load` of a multimodal checkpoint's language model (see [`language_model`]; `weights` as they
/// are when they hold `model.*`); errors name the tensors as the file does. Shared by the
/// multimodal checkpoints that keep their language model as Gemma 3's do (Mistral 3).
pub(super) fn with_language_model(
    weights: &Weights,
    load: impl FnOnce(&Weights) -> Result<CausalLm>,
) -> Result<CausalLm> {
    let Some((renamed, layout)) = language_model(weights) else {
        return load(weights);
    };
    load(&renamed).map_err(|e| match e {
        // The renamed tensors under the names the checkpoint has.
        Error::Weight(msg) => Error::Weight(
            msg.replace("'lm_head.weight'", &format!("'{}'", layout.head))
                .replace("'model.", &format!("'{}", layout.prefix)),
        ),
        e => e,
    })
}

/// transformers' `Gemma3ForConditionalGeneration` (`model_type` `gemma3`): its language model, a
/// Gemma 3 [`CausalLm`] (what it derefs to), and where the checkpoint has them its vision tower
/// and projector, which take `pixel_values` (see [`super::gemma3_images`]).
#[derive(Debug, Clone)]
pub struct Gemma3ForConditionalGeneration {
    lm: CausalLm,
    images: Option<Box<Gemma3Images>>,
}

/// The inputs of a forward pass with images.
const WITH_IMAGES: &[&str] =
    &["input_ids", "attention_mask", "token_type_ids", "position_ids", "pixel_values"];

impl Gemma3ForConditionalGeneration {
    /// Loads the language model of a `gemma3` checkpoint (see the module doc).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let text = text_config(cfg)?;
        let embeddings = |prefix: &str| weights.contains(&format!("{prefix}embed_tokens.weight"));
        if !embeddings("model.") && !LAYOUTS.iter().any(|l| embeddings(l.prefix)) {
            return Err(Error::Weight(format!(
                "{ARCH}: tensor '{}embed_tokens.weight' (or '{}embed_tokens.weight') is missing from the checkpoint",
                LAYOUTS[1].prefix, LAYOUTS[0].prefix
            )));
        }
        // (The class's own `lm_head` never soft-caps, whatever `final_logit_softcapping` says.)
        let lm = load_text_model(&text, weights)?.with_plain_head();
        let images = Gemma3Images::load(cfg, weights, lm.embedding_width())?.map(Box::new);
        Ok(Gemma3ForConditionalGeneration { lm, images })
    }

    /// Whether the model takes `pixel_values` (the checkpoint has its vision tower).
    pub fn takes_images(&self) -> bool {
        self.images.is_some()
    }

    /// The token whose embeddings image features replace (`image_token_index`), where the model
    /// takes images.
    pub fn image_token(&self) -> Option<i64> {
        self.images.as_ref().map(|i| i.image_token())
    }

    /// The attention blocks of `token_type_ids` `[batch, seq]` (1 at the image tokens, as the
    /// processor writes them): each image's run of tokens, which attend to each other both ways
    /// (what [`crate::generate::PromptImages::blocks`] takes, `within_window`).
    pub fn attention_blocks(&self, token_type_ids: &Tensor) -> Result<Tensor> {
        attention_blocks(token_type_ids)
    }

    /// The rows that replace the image tokens' embeddings for `pixel_values` `[images, channels,
    /// height, width]`: `[images · tokens per image, hidden]`.
    pub fn image_rows(&self, pixel_values: &Tensor) -> Result<Tensor> {
        let images = self.images.as_ref().ok_or_else(no_tower)?;
        images.rows(pixel_values, self.lm.dtype())
    }

    /// [`super::AutoModel::forward_named`] with `pixel_values`: the images' features in place of
    /// the image tokens' scaled embeddings, each image's tokens attending both ways where
    /// `token_type_ids` mark them; `logits`, `hidden_states.N`, and transformers'
    /// `image_outputs.last_hidden_state` and `image_outputs.pooler_output` (the features).
    pub(crate) fn forward_images(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let images = self.images.as_ref().ok_or_else(no_tower)?;
        let text = TextWithImages::checked(inputs, WITH_IMAGES)?;
        let blocks = inputs.get("token_type_ids").map(attention_blocks).transpose()?;
        let blocks = blocks.as_ref().map(|ids| AttentionBlocks { ids, within_window: true });
        let (last_hidden_state, features) = images.forward(&inputs["pixel_values"])?;
        let token = images.image_token();
        let mut named = text.outputs(&self.lm, &features, token, blocks, output_hidden_states)?;
        named.push(("image_outputs.last_hidden_state".into(), last_hidden_state));
        named.push(("image_outputs.pooler_output".into(), features));
        Ok(named)
    }
}

/// See [`Gemma3ForConditionalGeneration::attention_blocks`].
fn attention_blocks(token_type_ids: &Tensor) -> Result<Tensor> {
    let dims = token_type_ids.dims().to_vec();
    let rows = token_type_ids.to_dtype(DType::I64)?.to_vec2::<i64>()?;
    Ok(Tensor::from_vec(image_blocks(&rows), dims)?)
}

/// The error for images given to a checkpoint without its vision tower.
fn no_tower() -> Error {
    Error::Unsupported(format!(
        "input 'pixel_values': image inputs are not supported for {ARCH} (this checkpoint has no vision tower)"
    ))
}

impl std::ops::Deref for Gemma3ForConditionalGeneration {
    type Target = CausalLm;
    fn deref(&self) -> &Self::Target {
        &self.lm
    }
}

/// The inputs `forward_named` takes for this architecture: a decoder's, and `token_type_ids` (which
/// Gemma 3's processor always returns) as long as they mark no image token.
pub(crate) const INPUTS: &[&str] = &["input_ids", "attention_mask", "token_type_ids", "position_ids"];

/// Refuses image inputs (those of a checkpoint without its vision tower, and the other image
/// inputs of its processors), and `token_type_ids` marking image tokens (1: transformers then
/// attends bidirectionally within each run of them) without the images; all-text
/// `token_type_ids` change nothing and are accepted.
pub(crate) fn check_text_only(inputs: &BTreeMap<String, Tensor>) -> Result<()> {
    if let Some(name) = inputs.keys().find(|k| IMAGE_INPUTS.contains(&k.as_str())) {
        let why = if name == "pixel_values" {
            "this checkpoint has no vision tower"
        } else {
            "its images come as pixel_values"
        };
        return Err(Error::Unsupported(format!(
            "input '{name}': image inputs are not supported for {ARCH} ({why})"
        )));
    }
    if let Some(types) = inputs.get("token_type_ids") {
        super::check_input_dtype("token_type_ids", types)?;
        if types.to_dtype(DType::I64)?.to_vec::<i64>()?.contains(&1) {
            return Err(Error::Unsupported(format!(
                "input 'token_type_ids' marks image tokens (1), which are not supported for {ARCH} \
                 without their images (pixel_values)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        Config::from_json_str(json).unwrap()
    }

    /// A sparse `text_config` (as `google/gemma-3-4b-it`'s) takes `Gemma3TextConfig`'s defaults;
    /// the outer `tie_word_embeddings` and dtype are the text model's.
    #[test]
    fn the_text_config_takes_the_config_classes_defaults() {
        let c = cfg(r#"{"model_type": "gemma3", "torch_dtype": "bfloat16",
            "text_config": {"hidden_size": 2560, "num_hidden_layers": 34, "tie_word_embeddings": false,
                            "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024}}"#);
        let t = text_config(&c).unwrap();
        assert_eq!(t.model_type().unwrap(), "gemma3_text");
        assert_eq!(t.usize("hidden_size").unwrap(), 2560);
        assert_eq!(t.usize("num_hidden_layers").unwrap(), 34);
        assert_eq!(t.usize("vocab_size").unwrap(), 262_208);
        assert_eq!(t.usize("num_attention_heads").unwrap(), 8);
        assert_eq!(t.usize("intermediate_size").unwrap(), 9216);
        assert!(t.bool_or("tie_word_embeddings", false).unwrap(), "the outer flag (default true) wins");
        assert_eq!(t.dtype(), Some(DType::BF16));
        // Gemma 3's RoPE defaults read off the text config: 1e6 global (scaled), 1e4 local.
        assert_eq!(t.rope(Some("full_attention")).unwrap().theta, 1_000_000.0);
        assert_eq!(t.rope(Some("sliding_attention")).unwrap().theta, 10_000.0);
        let untied = cfg(r#"{"model_type": "gemma3", "tie_word_embeddings": false, "text_config": null}"#);
        let t = text_config(&untied).unwrap();
        assert!(!t.bool_or("tie_word_embeddings", true).unwrap());
        assert_eq!(t.usize("hidden_size").unwrap(), 2304);
        let err = text_config(&cfg(r#"{"model_type": "gemma3", "text_config": [1]}"#)).unwrap_err();
        assert_eq!(err.to_string(), "config: \"text_config\" must be an object, got [1]");
        let other = cfg(r#"{"model_type": "gemma3", "text_config": {"model_type": "gemma3"}}"#);
        assert_eq!(text_config(&other).unwrap().model_type().unwrap(), "gemma3_text");
    }

    /// Both layouts map onto `model.*` / `lm_head.weight`, the vision tower and projector left out.
    #[test]
    fn both_layouts_are_renamed_and_the_vision_tower_is_left_out() {
        let t = || Tensor::zeros([1], DType::F32).unwrap();
        for (prefix, head, others) in [
            (
                "model.language_model.",
                "lm_head.weight",
                ["model.vision_tower.x", "model.multi_modal_projector.y"],
            ),
            (
                "language_model.model.",
                "language_model.lm_head.weight",
                ["vision_tower.x", "multi_modal_projector.y"],
            ),
        ] {
            let names =
                [format!("{prefix}embed_tokens.weight"), format!("{prefix}norm.weight"), head.to_string()];
            let all = names.iter().cloned().chain(others.iter().map(|s| s.to_string()));
            let w = Weights::from_tensors(all.map(|n| (n, t())));
            let (lm, layout) = language_model(&w).expect("a multimodal layout");
            assert_eq!(layout.prefix, prefix);
            let got: Vec<&String> = lm.iter().map(|r| r.unwrap().0).collect();
            assert_eq!(got, ["lm_head.weight", "model.embed_tokens.weight", "model.norm.weight"]);
            assert_eq!(language_model_weights(w).len(), 3);
        }
        let text = Weights::from_tensors([("model.embed_tokens.weight".to_string(), t())]);
        assert!(language_model(&text).is_none());
        assert_eq!(language_model_weights(text).len(), 1);
    }

    #[test]
    fn image_inputs_are_refused() {
        let ids = Tensor::from_vec(vec![1i64, 2, 3], [1, 3]).unwrap();
        let mut inputs = BTreeMap::from([("input_ids".to_string(), ids.clone())]);
        assert!(check_text_only(&inputs).is_ok());
        inputs.insert("token_type_ids".into(), Tensor::zeros([1, 3], DType::I64).unwrap());
        assert!(check_text_only(&inputs).is_ok());
        inputs.insert("token_type_ids".into(), Tensor::from_vec(vec![0i64, 1, 0], [1, 3]).unwrap());
        let err = check_text_only(&inputs).unwrap_err().to_string();
        assert!(err.contains("'token_type_ids' marks image tokens"), "{err}");
        inputs.remove("token_type_ids");
        inputs.insert("pixel_values".into(), Tensor::zeros([1, 3, 4, 4], DType::F32).unwrap());
        let err = check_text_only(&inputs).unwrap_err().to_string();
        assert_eq!(
            err,
            "input 'pixel_values': image inputs are not supported for Gemma3ForConditionalGeneration \
             (this checkpoint has no vision tower)"
        );
        inputs.remove("pixel_values");
        inputs.insert("image_sizes".into(), Tensor::zeros([1, 2], DType::I64).unwrap());
        let err = check_text_only(&inputs).unwrap_err().to_string();
        assert!(err.ends_with("(its images come as pixel_values)"), "{err}");
    }
}

//! Vision-language checkpoints whose language model is a decoder of its own model type, run on
//! text (and LLaVA, LLaVA-NeXT, LLaVA-OneVision, VipLLaVA, PaliGemma, Aya Vision, InternVL,
//! Idefics3, SmolVLM, LFM2-VL, Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Llama 3.2 Vision on images too): LLaVA (`llava`, `LlavaForConditionalGeneration`: llava-hf/llava-1.5-*), LLaVA-NeXT
//! (`llava_next`), LLaVA-NeXT-Video (`llava_next_video`), LLaVA-OneVision (`llava_onevision`),
//! VipLLaVA (`vipllava`), Aya Vision (`aya_vision`), InternVL (`internvl`, the `-hf` checkpoints),
//! Idefics3 (`idefics3`), SmolVLM (`smolvlm`), LFM2-VL (`lfm2_vl`) and PaliGemma (`paligemma`,
//! 1 and 2; with images, `token_type_ids` mark its bidirectional prefix); the
//! audio-language Qwen2-Audio (`qwen2_audio`) and Voxtral (`voxtral`); and Llama 3.2 Vision
//! (`mllama`) and Qwen's vision-language models (`qwen2_vl`, `qwen2_5_vl`, `qwen3_vl`,
//! `qwen3_vl_moe`), whose language models are loaded their own ways (see [`super::mllama`],
//! [`super::qwen_vl`]).
//!
//! Each nests its language model's config under `text_config` with that model's own `model_type`
//! (absent: the class's default, as `llama` for LLaVA), which hf-import loads as that family's
//! causal LM, so any decoder it supports can sit inside. On text the classes embed the ids, run the
//! language model and apply their own `lm_head`: a plain projection, without the text family's own
//! logit scaling or soft-capping (Aya Vision's Cohere 2 logits are not multiplied by
//! `logit_scale`; PaliGemma alone soft-caps as its Gemma 2), and so does this wrapper. The head is tied as each config class decides: by the
//! outer `tie_word_embeddings` (its class default), or for LLaVA, LLaVA-NeXT-Video and
//! LLaVA-OneVision also by the text config's. The weights keep the language model under
//! `language_model.model.*` (what `save_pretrained` writes for the LLaVA family), under
//! `model.language_model.*` or, for Idefics3 and SmolVLM, `model.text_model.*`; the vision tower
//! and projector are read for LLaVA's, LLaVA-NeXT's (and LLaVA-NeXT-Video's), LLaVA-OneVision's,
//! VipLLaVA's, PaliGemma's, Aya Vision's, InternVL's, Idefics3's and SmolVLM's images (see [`super::llava_images`]),
//! LFM2-VL's (see [`super::lfm2_vl_images`]), Qwen's `visual.*` (see [`super::qwen_vl_images`])
//! and Llama 3.2 Vision's `vision_model.*` (see [`super::mllama_images`]); Qwen2-Audio's and
//! Voxtral's `audio_tower.*` take audio (see [`super::audio_language`]); the other classes'
//! image and video inputs are refused.

use std::collections::BTreeMap;

use oxtorch_tensor::Tensor;
use serde_json::{Map, Value};

use super::audio_language::AudioLanguage;
use super::decoder::{AttentionBlocks, CausalLm};
use super::gemma3_multimodal::{inherit_outer_dtype, with_language_model};
use super::image_inputs::{in_order, media_order, ImageInputs, TextWithImages};
use super::lfm2_vl_images::Lfm2VlImages;
use super::llava_images::{ImageEncoder, ImageOutputs};
use super::mllama_images::MllamaImages;
use super::qwen_vl_images::QwenImages;
use super::{check_input_dtype, AutoModel};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::PromptMedia;
use crate::weights::Weights;

/// One vision-language class.
struct Class {
    /// `config.json`'s `model_type`
    model_type: &'static str,
    /// the class's name
    architecture: &'static str,
    /// the text model's `model_type` when `text_config` names none
    default_text: &'static str,
    /// the class's `tie_word_embeddings` default
    tie_default: bool,
    /// whether the text config's `tie_word_embeddings` ties the head too (the classes' reading of
    /// configs that kept the flag there)
    tie_from_text: bool,
    /// whether the class's head is a plain projection (else it soft-caps as the text model does,
    /// without its logit scaling: PaliGemma's)
    plain_head: bool,
}

const fn class(
    model_type: &'static str,
    architecture: &'static str,
    default_text: &'static str,
    tie_default: bool,
    tie_from_text: bool,
) -> Class {
    Class { model_type, architecture, default_text, tie_default, tie_from_text, plain_head: true }
}

/// The classes, by model type.
const CLASSES: [Class; 13] = [
    class("llava", "LlavaForConditionalGeneration", "llama", false, true),
    class("llava_next", "LlavaNextForConditionalGeneration", "llama", false, false),
    class("llava_next_video", "LlavaNextVideoForConditionalGeneration", "llama", false, true),
    class("llava_onevision", "LlavaOnevisionForConditionalGeneration", "qwen2", false, true),
    class("vipllava", "VipLlavaForConditionalGeneration", "llama", false, false),
    class("aya_vision", "AyaVisionForConditionalGeneration", "cohere2", true, false),
    class("internvl", "InternVLForConditionalGeneration", "qwen2", true, false),
    class("idefics3", "Idefics3ForConditionalGeneration", "llama", false, false),
    class("smolvlm", "SmolVLMForConditionalGeneration", "llama", false, false),
    class("lfm2_vl", "Lfm2VlForConditionalGeneration", "lfm2", true, false),
    Class {
        plain_head: false,
        ..class("paligemma", "PaliGemmaForConditionalGeneration", "gemma", true, false)
    },
    // The audio-language classes (their configs have no tying flag: never tied).
    class("qwen2_audio", "Qwen2AudioForConditionalGeneration", "qwen2", false, false),
    class("voxtral", "VoxtralForConditionalGeneration", "llama", false, false),
];

/// The text model types whose config class ties the head unless told otherwise (for the classes
/// that read the text config's flag; the others tie as `false`).
const TIED_TEXT_TYPES: &[&str] = &["cohere", "cohere2", "gemma", "gemma2", "gemma3_text", "lfm2", "lfm2_moe"];

/// Whether `architecture` is one of the vision-language classes of this module, which run as their
/// language model on text.
pub fn is_vision_language(architecture: &str) -> bool {
    CLASSES.iter().any(|c| c.architecture == architecture)
        || architecture == super::mllama::ARCH
        || super::qwen_vl::ARCHITECTURES.contains(&architecture)
}

/// Whether `architecture` takes images (LLaVA, LLaVA-NeXT, LLaVA-OneVision, VipLLaVA, PaliGemma,
/// Aya Vision, InternVL, Idefics3, SmolVLM, Gemma 3): its checkpoint's vision tower and projector
/// are read.
pub fn takes_images(architecture: &str) -> bool {
    matches!(
        architecture,
        "LlavaForConditionalGeneration"
            | "LlavaNextForConditionalGeneration"
            | "LlavaNextVideoForConditionalGeneration"
            | "LlavaOnevisionForConditionalGeneration"
            | "Idefics3ForConditionalGeneration"
            | "InternVLForConditionalGeneration"
            | "Mistral3ForConditionalGeneration"
            | "SmolVLMForConditionalGeneration"
            | "VipLlavaForConditionalGeneration"
            | "PaliGemmaForConditionalGeneration"
            | "AyaVisionForConditionalGeneration"
            | "Gemma3ForConditionalGeneration"
            | "Qwen2VLForConditionalGeneration"
            | "Qwen2_5_VLForConditionalGeneration"
            | "Qwen3VLForConditionalGeneration"
            | "Qwen3VLMoeForConditionalGeneration"
            | "Lfm2VlForConditionalGeneration"
            | "MllamaForConditionalGeneration"
    )
}

/// Whether `architecture` takes audio (Qwen2-Audio, Voxtral): its checkpoint's audio tower and
/// projector are read.
pub fn takes_audio(architecture: &str) -> bool {
    matches!(architecture, "Qwen2AudioForConditionalGeneration" | "VoxtralForConditionalGeneration")
}

/// Inputs that carry images or videos (the classes' `forward` and their processors' outputs).
const MEDIA_INPUTS: &[&str] = &[
    "pixel_values",
    "pixel_values_videos",
    "image_sizes",
    "image_sizes_videos",
    "pixel_attention_mask",
    "spatial_shapes",
    "batch_num_images",
    "mm_encoder_outputs",
    "input_features",
    "feature_attention_mask",
    "input_features_mask",
    "aspect_ratio_ids",
    "aspect_ratio_mask",
    "cross_attention_mask",
    "image_grid_thw",
    "video_grid_thw",
    "mm_token_type_ids",
];

/// transformers' vision-language classes of the module docs on text: the language model.
#[derive(Debug, Clone)]
pub struct VisionLanguageForConditionalGeneration {
    lm: CausalLm,
    architecture: &'static str,
    /// the vision tower and projector of the classes that take images
    images: Option<Box<Media>>,
}

/// The image path of a class that takes images.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // (held boxed by the model)
pub(crate) enum Media {
    /// the LLaVA-style classes' (and PaliGemma's, Idefics3's, InternVL's, ...): see
    /// [`super::llava_images`]
    Encoder(ImageEncoder),
    /// Qwen2-VL's and Qwen2.5-VL's: see [`super::qwen_vl_images`]
    Qwen(QwenImages),
    /// LFM2-VL's: see [`super::lfm2_vl_images`]
    Lfm2(Lfm2VlImages),
    /// Llama 3.2 Vision's, attended to by cross-attention layers: see [`super::mllama_images`]
    Mllama(MllamaImages),
    /// Qwen2-Audio's and Voxtral's audio: see [`super::audio_language`]
    Audio(AudioLanguage),
}

/// PaliGemma's class, whose prefix attends both ways.
const PALIGEMMA: &str = "PaliGemmaForConditionalGeneration";

/// The inputs of a forward pass with images (beside the image path's own: LLaVA-NeXT's
/// `image_sizes`), with PaliGemma's `token_type_ids` that mark its prefix.
const IMAGE_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids", "pixel_values"];

impl VisionLanguageForConditionalGeneration {
    /// Loads the language model of a checkpoint of one of the classes (see the module docs).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        if model_type == "mllama" {
            return super::mllama::load(cfg, weights);
        }
        if super::qwen_vl::is_qwen_vl(model_type) {
            return super::qwen_vl::load(cfg, weights);
        }
        let class = CLASSES.iter().find(|c| c.model_type == model_type).ok_or_else(|| {
            Error::Unsupported(format!("model_type \"{model_type}\" is not a vision-language class"))
        })?;
        let text = text_config(cfg, class)?;
        let text_type = text.model_type()?.to_string();
        let arch = AutoModel::architecture_of(&text).map_err(|e| {
            Error::Unsupported(format!("{}: its text model (text_config): {e}", class.architecture))
        })?;
        let lm = with_language_model(weights, |w| {
            let model = AutoModel::load_architecture(&arch, &text, w)?;
            model.causal_lm().cloned().ok_or_else(|| {
                Error::Unsupported(format!(
                    "{}: its text model of model_type \"{text_type}\" ({arch}) is not a decoder",
                    class.architecture
                ))
            })
        })?;
        let lm = if class.plain_head { lm.with_plain_head() } else { lm.without_logit_scaling() };
        let images = if matches!(class.model_type, "qwen2_audio" | "voxtral") {
            AudioLanguage::load(cfg, weights, &lm)?.map(|a| Box::new(Media::Audio(a)))
        } else if class.model_type == "lfm2_vl" {
            Lfm2VlImages::load(cfg, weights, lm.embedding_width())?.map(|l| Box::new(Media::Lfm2(l)))
        } else {
            ImageEncoder::load(cfg, weights, lm.embedding_width())?.map(|e| Box::new(Media::Encoder(e)))
        };
        Ok(VisionLanguageForConditionalGeneration { lm, architecture: class.architecture, images })
    }

    /// The class `architecture` on its language model `lm`, loaded already, with the image path
    /// of its checkpoint (`cfg`, `weights`): `None` where the checkpoint has no vision tower.
    pub(crate) fn with_images_of(
        lm: CausalLm,
        architecture: &'static str,
        cfg: &Config,
        weights: &Weights,
    ) -> Result<Option<Self>> {
        let images = ImageEncoder::load(cfg, weights, lm.embedding_width())?;
        Ok(images.map(|images| VisionLanguageForConditionalGeneration {
            lm,
            architecture,
            images: Some(Box::new(Media::Encoder(images))),
        }))
    }

    /// The class `architecture` on its language model `lm`, loaded already, with its `images`
    /// path where it has one.
    pub(crate) fn from_language_model(
        lm: CausalLm,
        architecture: &'static str,
        images: Option<Media>,
    ) -> Self {
        VisionLanguageForConditionalGeneration { lm, architecture, images: images.map(Box::new) }
    }

    /// Whether the model takes `pixel_values` (LLaVA and VipLLaVA with their vision towers).
    pub fn takes_images(&self) -> bool {
        self.images.as_deref().is_some_and(|m| !matches!(m, Media::Audio(_)))
    }

    /// Whether the model takes `input_features` (Qwen2-Audio's and Voxtral's audio, with their
    /// towers).
    pub fn takes_audio(&self) -> bool {
        matches!(self.images.as_deref(), Some(Media::Audio(_)))
    }

    /// Whether the model takes `pixel_values_videos` (Qwen's with their towers).
    pub fn takes_videos(&self) -> bool {
        match self.images.as_deref() {
            Some(Media::Qwen(_)) => true,
            Some(Media::Encoder(e)) => e.videos().is_some(),
            _ => false,
        }
    }

    /// The token whose embeddings image features replace (`image_token_index`), where the model
    /// takes images.
    pub fn image_token(&self) -> Option<i64> {
        self.images.as_deref().and_then(|i| match i {
            Media::Encoder(e) => Some(e.image_token()),
            Media::Qwen(q) => Some(q.image_token()),
            Media::Lfm2(l) => Some(l.image_token()),
            Media::Mllama(m) => Some(m.image_token()),
            Media::Audio(a) => a.audio_token(),
        })
    }

    /// The rows that replace the image tokens' embeddings for `pixel_values` `[images, channels,
    /// height, width]`: `[images · features, hidden]`, what [`CausalLm::forward_with_rows`] takes.
    /// (LLaVA-NeXT's images need their sizes: [`Self::image_rows_of`].)
    pub fn image_rows(&self, pixel_values: &Tensor) -> Result<Tensor> {
        self.image_rows_of(&ImageInputs::pixels(pixel_values))
    }

    /// The rows that replace the image tokens' embeddings for `images`: `[features, hidden]`,
    /// image after image.
    pub fn image_rows_of(&self, images: &ImageInputs<'_>) -> Result<Tensor> {
        Ok(self.image_features_of(images)?.0)
    }

    /// [`Self::image_rows_of`], and the rows Qwen3-VL adds at the image tokens after its first
    /// layers (its deepstack features: one `[features, hidden]` per layer, as
    /// [`crate::generate::PromptImages::deepstack`] takes them; none for the other classes).
    pub fn image_features_of(&self, images: &ImageInputs<'_>) -> Result<(Tensor, Vec<Tensor>)> {
        match self.images.as_deref().ok_or_else(|| self.no_images("pixel_values"))? {
            Media::Encoder(encoder) => Ok((encoder.rows(images, self.lm.dtype())?, Vec::new())),
            Media::Qwen(qwen) => qwen.rows(images, self.lm.dtype()),
            Media::Lfm2(lfm2) => Ok((lfm2.rows(images, self.lm.dtype())?, Vec::new())),
            Media::Audio(_) => Err(self.no_images("pixel_values")),
            Media::Mllama(_) => Err(Error::Unsupported(format!(
                "{}'s images are attended to by its cross-attention layers, not put in place of tokens: \
                 see prompt_media",
                self.architecture
            ))),
        }
    }

    /// What generation takes of prompts with images (and Qwen's videos), from the named inputs
    /// their processor writes (`input_ids`, `attention_mask`, `pixel_values` and what describes
    /// the images: `image_sizes`, `image_grid_thw`, ...; PaliGemma's `token_type_ids`; Qwen's
    /// `mm_token_type_ids`, `pixel_values_videos`, `video_grid_thw`, `second_per_grid_ts`): the
    /// features in their tokens' order, and the attention blocks, multimodal positions and
    /// deepstack rows of the classes that have them. `None` for inputs without images or videos; an
    /// error for a model that takes none.
    pub fn prompt_media(&self, inputs: &BTreeMap<String, Tensor>) -> Result<Option<PromptMedia>> {
        // (Llama 3.2 Vision's image token past the vocabulary takes its row, images or not.)
        if let Some(Media::Mllama(mllama)) = self.images.as_deref() {
            return mllama.prompt_media(&self.lm, inputs);
        }
        if let Some(Media::Audio(audio)) = self.images.as_deref() {
            if inputs.contains_key("input_features") {
                return Ok(Some(audio.prompt_media(inputs, self.lm.dtype())?));
            }
        }
        let media = ["pixel_values", "pixel_values_videos"].into_iter().find(|k| inputs.contains_key(*k));
        let Some(name) = media else { return Ok(None) };
        match self.images.as_deref() {
            Some(Media::Qwen(qwen)) => Ok(Some(qwen.prompt_media(inputs, self.lm.dtype())?)),
            Some(Media::Encoder(encoder)) if inputs.contains_key("pixel_values_videos") => {
                let path = encoder.videos().ok_or_else(|| self.no_images(name))?;
                let ids = inputs
                    .get("input_ids")
                    .ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
                let image = ImageInputs::from_named(inputs).map(|i| encoder.forward(&i)).transpose()?;
                let image_rows = image.as_ref().map(ImageOutputs::rows).transpose()?;
                let video_rows = encoder.forward_videos(&inputs["pixel_values_videos"])?.rows()?;
                let count = |t: &Tensor| t.dims()[0];
                let images_order = (encoder.image_token(), image_rows.as_ref().map(count));
                let (_, index) = media_order(ids, images_order, (path.token, Some(count(&video_rows))))?;
                let rows =
                    in_order(&index, image_rows.as_ref(), Some(&video_rows))?.to_dtype(self.lm.dtype())?;
                // (Without images, the image tokens keep their own embeddings.)
                match image_rows {
                    Some(_) => {
                        let media = PromptMedia::new(encoder.image_token(), rows);
                        Ok(Some(PromptMedia { video_token: Some(path.token), ..media }))
                    }
                    None => Ok(Some(PromptMedia::new(path.token, rows))),
                }
            }
            Some(_) => {
                let images = ImageInputs::from_named(inputs).ok_or_else(|| self.no_images(name))?;
                let types = inputs.get("token_type_ids");
                let blocks = types.map(|t| self.attention_blocks(t)).transpose()?.map(|b| (b, false));
                let rows = self.image_rows_of(&images)?;
                let token = self.image_token().expect("a model with images has an image token");
                Ok(Some(PromptMedia { blocks, ..PromptMedia::new(token, rows) }))
            }
            None => Err(self.no_images(name)),
        }
    }

    /// The multimodal RoPE positions `[3, batch, seq]` of prompts `input_ids` with the images of
    /// `images` (Qwen2-VL's and Qwen2.5-VL's, from their `image_grid_thw`), as
    /// [`crate::generate::PromptImages::positions`] takes them; `mm_token_type_ids` mark the image
    /// tokens (1) as the processor writes them (`None`: read from the image tokens). `None` for a
    /// model whose positions do not depend on its images.
    pub fn rope_positions(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        images: &ImageInputs<'_>,
        mm_token_type_ids: Option<&Tensor>,
    ) -> Result<Option<Tensor>> {
        match self.images.as_deref() {
            Some(Media::Qwen(qwen)) => {
                let grid = images.image_grid_thw.ok_or_else(|| {
                    Error::Input("missing input 'image_grid_thw' (the images' grids of patches)".into())
                })?;
                Ok(Some(qwen.positions(input_ids, attention_mask, mm_token_type_ids, grid)?))
            }
            _ => Ok(None),
        }
    }

    /// PaliGemma's attention blocks of `token_type_ids` `[batch, seq]` (0: the prefix, its image
    /// and prompt, whose tokens attend to each other both ways; 1: the suffix, causal), as
    /// [`crate::generate::PromptImages::blocks`] takes them (not `within_window`); the other
    /// classes take no `token_type_ids`.
    pub fn attention_blocks(&self, token_type_ids: &Tensor) -> Result<Tensor> {
        if self.architecture != PALIGEMMA {
            return Err(Error::Input(format!("{} takes no token_type_ids", self.architecture)));
        }
        check_input_dtype("token_type_ids", token_type_ids)?;
        let types = token_type_ids.to_dtype(oxtorch_tensor::DType::I64)?;
        let minus_one = types.full_like(-1)?;
        Ok(types.eq(0.0)?.where_self(&types.zeros_like()?, &minus_one)?)
    }

    /// The error for media input `name` of a model that does not take it.
    fn no_images(&self, name: &str) -> Error {
        if self.takes_audio() {
            return Error::Unsupported(format!(
                "input '{name}': image and video inputs are not supported for {} (it takes audio as input_features)",
                self.architecture
            ));
        }
        if self.images.is_some() {
            return Error::Input(format!(
                "unexpected input '{name}' ({} takes its images as pixel_values)",
                self.architecture
            ));
        }
        let what = if takes_images(self.architecture) {
            "this checkpoint has no vision tower"
        } else if takes_audio(self.architecture) && name == "input_features" {
            "this checkpoint has no audio tower"
        } else {
            "hf-import runs its language model on text only"
        };
        Error::Unsupported(format!(
            "input '{name}': image and video inputs are not supported for {} ({what})",
            self.architecture
        ))
    }

    /// [`AutoModel::forward_named`] with `pixel_values`: the images through the vision tower and
    /// the projector, their features in place of the image tokens' embeddings, the language model
    /// and the head. The outputs are the text ones (`logits`, `hidden_states.N`) and the images'
    /// under transformers' `image_outputs`: the tower's `last_hidden_state` and `hidden_states.N`,
    /// (those the features are read from, and with `output_hidden_states` every one for LLaVA), and
    /// the projected features as `pooler_output` (`pooler_output.N`, one per image, for LLaVA,
    /// LLaVA-NeXT and LLaVA-OneVision).
    pub(crate) fn forward_images(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let images = match self.images.as_deref().ok_or_else(|| self.no_images("pixel_values"))? {
            Media::Encoder(encoder) => encoder,
            Media::Qwen(qwen) => return qwen.forward_named(&self.lm, inputs, output_hidden_states),
            Media::Lfm2(lfm2) => return lfm2.forward_named(&self.lm, inputs, output_hidden_states),
            Media::Mllama(mllama) => return mllama.forward_named(&self.lm, inputs, output_hidden_states),
            Media::Audio(audio) => return audio.forward_named(&self.lm, inputs, output_hidden_states),
        };
        let mut takes = IMAGE_INPUTS.to_vec();
        takes.extend(images.other_inputs());
        let video_path = images.videos();
        if video_path.is_some() {
            takes.push("pixel_values_videos");
        }
        if self.architecture == PALIGEMMA {
            takes.push("token_type_ids");
        }
        let text = TextWithImages::checked(inputs, &takes)?;
        let blocks = inputs.get("token_type_ids").map(|t| self.attention_blocks(t)).transpose()?;
        let blocks = blocks.as_ref().map(|ids| AttentionBlocks { ids, within_window: false });
        let image = ImageInputs::from_named(inputs).map(|i| images.forward(&i)).transpose()?;
        let video = inputs.get("pixel_values_videos").map(|v| images.forward_videos(v)).transpose()?;
        let mut named = match (&image, &video, video_path) {
            (image, Some(video), Some(path)) => {
                // (Each image and video token takes the next features of its kind.)
                let image_rows = image.as_ref().map(ImageOutputs::rows).transpose()?;
                let video_rows = video.rows()?;
                let count = |t: &Tensor| t.dims()[0];
                let images_order = (images.image_token(), image_rows.as_ref().map(count));
                let videos_order = (path.token, Some(count(&video_rows)));
                let (mask, index) = media_order(&inputs["input_ids"], images_order, videos_order)?;
                let rows = in_order(&index, image_rows.as_ref(), Some(&video_rows))?;
                text.outputs_replacing(&self.lm, &mask, &rows, &[], output_hidden_states)?
            }
            (Some(image), _, _) => {
                text.outputs(&self.lm, &image.rows()?, images.image_token(), blocks, output_hidden_states)?
            }
            (None, _, _) => return Err(Error::Input("missing input 'pixel_values'".into())),
        };
        let outputs = [("image_outputs", image, images.pooled_per_image()), ("video_outputs", video, false)];
        for (prefix, out, per_item) in outputs {
            let Some(out) = out else { continue };
            named.push((format!("{prefix}.last_hidden_state"), out.last_hidden_state));
            let states = out.hidden_states.into_iter().enumerate();
            let reported = states.filter(|(i, _)| images.reports_state(*i, output_hidden_states));
            named.extend(reported.map(|(i, t)| (format!("{prefix}.hidden_states.{i}"), t)));
            if per_item {
                let per_image = out.features.into_iter().enumerate();
                named.extend(per_image.map(|(i, f)| (format!("{prefix}.pooler_output.{i}"), f)));
            } else {
                let all = Tensor::stack(&out.features.iter().collect::<Vec<_>>(), 0)?;
                named.push((format!("{prefix}.pooler_output"), all));
            }
        }
        Ok(named)
    }

    /// The multimodal class this runs the language model of.
    pub fn architecture(&self) -> &'static str {
        self.architecture
    }

    /// The outputs the class adds to its language model's: Qwen2-Audio's `attention_mask` (the
    /// mask as given, float32 as every output), which its output type carries.
    pub(crate) fn extra_outputs(&self, inputs: &BTreeMap<String, Tensor>) -> Result<Vec<(String, Tensor)>> {
        match (self.architecture, inputs.get("attention_mask")) {
            ("Qwen2AudioForConditionalGeneration", Some(mask)) => {
                let mask = mask.to(self.lm.device())?.to_dtype(oxtorch_tensor::DType::F32)?;
                Ok(vec![("attention_mask".to_string(), mask)])
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Llama 3.2 Vision's outputs on text that holds its image token (embedded as its row past
    /// the vocabulary); `None` for other inputs and models.
    pub(crate) fn forward_image_tokens(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Option<Vec<(String, Tensor)>>> {
        match self.images.as_deref() {
            Some(Media::Mllama(m)) => m.forward_text(&self.lm, inputs, output_hidden_states),
            _ => Ok(None),
        }
    }

    /// Refuses image and video inputs with an error that says so.
    pub(crate) fn check_text_only(&self, inputs: &BTreeMap<String, Tensor>) -> Result<()> {
        match inputs.keys().find(|k| MEDIA_INPUTS.contains(&k.as_str())) {
            Some(name) => Err(self.no_images(name)),
            None => Ok(()),
        }
    }
}

impl std::ops::Deref for VisionLanguageForConditionalGeneration {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.lm
    }
}

/// The text model's config of `class`'s config `cfg`: the nested `text_config` (absent or null:
/// all the text class's defaults) under its own `model_type` (else the class's default), the head
/// tied as the class decides, the outer dtype where the nested config names none.
fn text_config(cfg: &Config, class: &Class) -> Result<Config> {
    let mut text = match cfg.get("text_config") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"text_config\" must be an object, got {v}"))),
    };
    let text_type = match text.get("model_type") {
        None | Some(Value::Null) => class.default_text.to_string(),
        Some(Value::String(t)) => t.clone(),
        Some(v) => {
            return Err(Error::Config(format!("text_config's \"model_type\" must be a string, got {v}")))
        }
    };
    text.insert("model_type".into(), Value::from(text_type.as_str()));
    // (PaliGemma's config sets its text model's `use_bidirectional_attention`, which only its own
    // masks read: the prefix's, from `token_type_ids`.)
    if class.model_type == "paligemma" {
        text.remove("use_bidirectional_attention");
    }
    let outer = cfg.bool_or("tie_word_embeddings", class.tie_default)?;
    // (LFM2-VL's configs may say `tie_embedding`, which its class reads over the other.)
    let outer = match class.model_type {
        "lfm2_vl" => cfg.bool_or("tie_embedding", outer)?,
        _ => outer,
    };
    let inner = match text.get("tie_word_embeddings") {
        Some(Value::Bool(b)) => *b,
        Some(Value::Null) | None => TIED_TEXT_TYPES.contains(&text_type.as_str()),
        Some(v) => {
            return Err(Error::Config(format!(
                "text_config's \"tie_word_embeddings\" must be a bool, got {v}"
            )))
        }
    };
    let tied = outer || (class.tie_from_text && inner);
    text.insert("tie_word_embeddings".into(), Value::Bool(tied));
    inherit_outer_dtype(&mut text, cfg);
    Ok(Config::from_map(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(json: &str) -> Config {
        let cfg = Config::from_json_str(json).unwrap();
        let class = CLASSES.iter().find(|c| c.model_type == cfg.model_type().unwrap()).unwrap();
        text_config(&cfg, class).unwrap()
    }

    fn tied(cfg: &Config) -> bool {
        cfg.bool_or("tie_word_embeddings", false).unwrap()
    }

    #[test]
    fn text_configs_take_their_type_and_the_class_tying() {
        let llava = text(r#"{"model_type": "llava", "torch_dtype": "float16"}"#);
        assert_eq!(llava.model_type().unwrap(), "llama");
        assert!(!tied(&llava));
        assert_eq!(llava.get("torch_dtype"), Some(&Value::from("float16")));
        // LLaVA reads the text config's flag too; LLaVA-NeXT does not.
        let inner = r#""text_config": {"model_type": "qwen2", "tie_word_embeddings": true}"#;
        assert!(tied(&text(&format!(r#"{{"model_type": "llava_onevision", {inner}}}"#))));
        assert!(!tied(&text(&format!(r#"{{"model_type": "llava_next", {inner}}}"#))));
        // A Cohere 2 text model ties by its class's default where the flag is read.
        assert!(tied(&text(r#"{"model_type": "llava", "text_config": {"model_type": "cohere2"}}"#)));
        let aya = text(r#"{"model_type": "aya_vision"}"#);
        assert_eq!(aya.model_type().unwrap(), "cohere2");
        assert!(tied(&aya));
        assert!(!tied(&text(r#"{"model_type": "aya_vision", "tie_word_embeddings": false}"#)));
        assert!(!tied(&text(r#"{"model_type": "lfm2_vl", "tie_embedding": false}"#)));
        for bad in [
            r#"{"model_type": "llava", "text_config": 1}"#,
            r#"{"model_type": "llava", "text_config": {"model_type": 3}}"#,
            r#"{"model_type": "llava", "text_config": {"tie_word_embeddings": "yes"}}"#,
        ] {
            let cfg = Config::from_json_str(bad).unwrap();
            assert!(text_config(&cfg, &CLASSES[0]).is_err(), "{bad}");
        }
    }
}

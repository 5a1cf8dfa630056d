//! The image path of LLaVA (`llava`: llava-hf/llava-1.5-*, llava-interleave, Pixtral-12B over
//! [`super::pixtral_vision`]), VipLLaVA
//! (`vipllava`), PaliGemma (`paligemma`, 1 and 2) and Aya Vision (`aya_vision`: LLaVA's features
//! through a pixel shuffle and a SwiGLU projector): a CLIP or SigLIP vision tower, the hidden
//! states of its `vision_feature_layer` (one layer, or several concatenated), the class token
//! dropped (LLaVA's `vision_feature_select_strategy` `"default"`, VipLLaVA always), and the
//! multi-modal projector (`linear_1`, the activation, `linear_2`; VipLLaVA's layer norm first);
//! PaliGemma's SigLIP's last hidden state through one `linear`. The projected features take the
//! places of the image tokens (`image_token_index`) in the language model's input embeddings, one
//! row per token, as transformers' `masked_scatter` puts them.
//!
//! LLaVA-NeXT (`llava_next`, and `llava_next_video` on images) and LLaVA-OneVision
//! (`llava_onevision`) read LLaVA's features of each image's tiles and pack them as
//! [`super::anyres`] says. Idefics3 (`idefics3`) and SmolVLM (`smolvlm`) run their prompts' images
//! (see [`super::idefics3_images`]) through their SigLIP-like tower, the pixel shuffle and one
//! linear projection; InternVL (`internvl`) its InternViT's features (see
//! [`super::internvl_vision`]) through the pixel shuffle and a normed MLP.
//!
//! `pixel_values` are the processor's output (`[images, channels, height, width]`, resized and
//! normalised; LLaVA-NeXT's `[images, tiles, channels, height, width]` with `image_sizes`); the
//! prompt holds as many image tokens as the images have features (LLaVA-1.5's processor writes 576
//! per image).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};
use serde_json::{Map, Value};

use super::anyres::{image_sizes, Anyres};
use super::clip::{ClipVisionConfig, ClipVisionTower};
use super::decoder::{AttentionBlocks, CausalLm, ReplacedRows};
use super::idefics3_images::tower_batch;
use super::internvl_vision::InternVisionTower;
use super::pixtral_vision::{PixtralOutput, PixtralVisionTower};
use super::siglip::SiglipVisionTower;
use super::vision::checked_pixels;
use super::{check_input_dtype, check_input_shapes, ids_as_i64};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear, RmsNorm, RmsNormStyle};
use crate::weights::{Vars, Weights};

/// The vision tower of a LLaVA checkpoint.
#[derive(Debug, Clone)]
enum VisionTower {
    /// `clip_vision_model` (LLaVA-1.5, VipLLaVA)
    Clip(ClipVisionTower),
    /// `siglip_vision_model` (llava-interleave)
    Siglip(SiglipVisionTower),
    /// `internvl_vision` (InternVL)
    Intern(InternVisionTower),
    /// `pixtral` (Pixtral-12B's LLaVA), images of their own sizes
    Pixtral(PixtralVisionTower),
}

impl VisionTower {
    /// `(last_hidden_state, hidden_states)` of `pixels`: the tower's own output (CLIP's before its
    /// post-norm, SigLIP's after) and every block's input, then the last block's output.
    fn forward(&self, pixels: &Tensor) -> Result<(Tensor, Vec<Tensor>)> {
        match self {
            VisionTower::Clip(t) => {
                let out = t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?, true)?;
                Ok((out.last_hidden_state, out.hidden_states))
            }
            VisionTower::Siglip(t) => {
                let (last, _, hidden) =
                    t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?, true)?;
                Ok((last, hidden))
            }
            VisionTower::Intern(t) => t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?),
            VisionTower::Pixtral(t) => {
                let out = t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?, None)?;
                Ok((out.last_hidden_state, out.hidden_states))
            }
        }
    }

    /// The tower's width.
    fn hidden(&self) -> usize {
        match self {
            VisionTower::Clip(t) => t.config().tower.hidden,
            VisionTower::Siglip(t) => t.hidden(),
            VisionTower::Intern(t) => t.hidden(),
            VisionTower::Pixtral(t) => t.hidden(),
        }
    }

    /// The number of hidden states (the blocks plus one).
    fn states(&self) -> usize {
        match self {
            VisionTower::Clip(t) => t.config().tower.layers + 1,
            VisionTower::Siglip(t) => t.layers() + 1,
            VisionTower::Intern(t) => t.layers() + 1,
            VisionTower::Pixtral(t) => t.layers() + 1,
        }
    }

    /// Idefics3's pass of a SigLIP tower: the post-normed states of `pixels` with the patches'
    /// `position_ids` and the key `mask`.
    fn forward_with(&self, pixels: &Tensor, position_ids: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
        match self {
            VisionTower::Siglip(t) => {
                let pixels = checked_pixels(pixels, t.dtype())?.to(t.device())?;
                let mask = mask.map(|m| m.to(t.device())).transpose()?;
                Ok(t.forward_with(&pixels, Some(position_ids), mask.as_ref(), false)?.0)
            }
            _ => Err(Error::Unsupported("Idefics3's images need a SigLIP tower".into())),
        }
    }

    /// The side of the images it takes and of their patches, in pixels (the heights).
    fn image_and_patch(&self) -> (usize, usize) {
        match self {
            VisionTower::Clip(t) => (t.config().image.0, t.config().patch.0),
            VisionTower::Siglip(t) => (t.image_size().0, t.patch_size().0),
            VisionTower::Intern(t) => (t.image_and_patch().0 .0, t.image_and_patch().1 .0),
            VisionTower::Pixtral(t) => (t.patch(), t.patch()),
        }
    }
}

/// `LlavaMultiModalProjector` and `VipLlavaMultiModalProjector` (`Mlp`), and
/// `PaliGemmaMultiModalProjector` (`Linear`).
#[derive(Debug, Clone)]
enum Projector {
    Mlp {
        /// VipLLaVA's `projector_layernorm`
        norm: Option<LayerNorm>,
        linear_1: Linear,
        act: Activation,
        linear_2: Linear,
    },
    /// `linear`
    Linear(Linear),
    /// Idefics3's connector: the pixel shuffle, then `modality_projection.proj`
    ShuffleLinear { factor: usize, linear: Linear },
    /// Mistral 3's: `norm`, each image's squares of `merge × merge` patches concatenated
    /// (`F.unfold`'s channel-major order) through `patch_merger.merging_layer`, then `linear_1`,
    /// the activation, `linear_2` (see [`ImageEncoder::forward_pixtral`])
    MergedMlp {
        norm: RmsNorm,
        merge: usize,
        merging: Linear,
        linear_1: Linear,
        act: Activation,
        linear_2: Linear,
    },
    /// InternVL's: the pixel shuffle, `layer_norm`, `linear_1`, the activation, `linear_2`
    ShuffleMlp { factor: usize, norm: LayerNorm, linear_1: Linear, act: Activation, linear_2: Linear },
    /// Aya Vision's: the features' pixel shuffle (each `factor × factor` square of tokens as
    /// one), a layer norm, `linear_1`, SwiGLU (`silu` of the second half times the first),
    /// `linear_2`
    ShuffleSwiGlu { factor: usize, norm: LayerNorm, linear_1: Linear, linear_2: Linear },
}

impl Projector {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Projector::Mlp { norm, linear_1, act, linear_2 } => {
                let x = match norm {
                    Some(norm) => norm.forward(x)?,
                    None => x.clone(),
                };
                linear_2.forward(&act.forward(&linear_1.forward(&x)?)?)
            }
            Projector::Linear(linear) => linear.forward(x),
            Projector::MergedMlp { .. } => Err(Error::Unsupported(
                "Mistral 3's projector merges each image's patches by its grid".into(),
            )),
            Projector::ShuffleMlp { factor, norm, linear_1, act, linear_2 } => {
                let x = pixel_shuffle(x, *factor)?;
                let (n, width) = (x.dims()[0], x.dims()[3]);
                let x = norm.forward(&x.reshape([n, x.numel() / n / width.max(1), width])?)?;
                linear_2.forward(&act.forward(&linear_1.forward(&x)?)?)
            }
            Projector::ShuffleLinear { factor, linear } => {
                let x = pixel_shuffle(x, *factor)?;
                let (n, width) = (x.dims()[0], x.dims()[3]);
                linear.forward(&x.reshape([n, x.numel() / n / width.max(1), width])?)
            }
            Projector::ShuffleSwiGlu { factor, norm, linear_1, linear_2 } => {
                let h = linear_1.forward(&norm.forward(&pixel_shuffle(x, *factor)?)?)?;
                let half = h.dims()[h.rank() - 1] / 2;
                let (up, gate) = (h.narrow(-1, 0, half)?, h.narrow(-1, half as isize, half)?);
                let out = linear_2.forward(&gate.silu()?.mul(&up)?)?;
                let (n, width) = (out.dims()[0], out.dims()[out.rank() - 1]);
                Ok(out.reshape([n, out.numel() / n / width.max(1), width])?)
            }
        }
    }
}

/// The pixel shuffle of `x` `[images, side², dim]` (Aya Vision's, Idefics3's): `[images, side / f,
/// side / f, dim · f²]`, each output token the `f × f` square of input tokens (transformers'
/// reshapes and permutes).
fn pixel_shuffle(x: &Tensor, f: usize) -> Result<Tensor> {
    let (n, s, d) = (x.dims()[0], x.dims()[1], x.dims()[2]);
    let side = (s as f64).sqrt() as usize;
    if side * side != s || f == 0 || !side.is_multiple_of(f) {
        return Err(Error::Input(format!(
            "the pixel shuffle needs a square of tokens whose side the factor {f} divides, got {s} tokens"
        )));
    }
    let x = x.reshape([n, side, side / f, d * f])?.permute([0, 2, 1, 3])?.contiguous()?;
    Ok(x.reshape([n, side / f, side / f, d * f * f])?.permute([0, 2, 1, 3])?.contiguous()?)
}

/// Which class's image path an [`ImageEncoder`] is: how it reads the tower and names its outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Llava,
    VipLlava,
    /// the tower's last hidden state through one linear projection
    PaliGemma,
    /// LLaVA's features through its pixel shuffle and SwiGLU projector
    AyaVision,
    /// LLaVA's features of each image's tiles, packed (`llava_next`, `llava_next_video`)
    LlavaNext,
    /// LLaVA-NeXT's, the tiles' features resized to `anyres_max_N`
    OneVision,
    /// InternVL's: the features pixel-shuffled before a normed MLP projector
    InternVl,
    /// Mistral 3's: Pixtral's features normed, each image's `s × s` squares merged, the MLP
    Mistral3,
    /// each prompt's images (padding images dropped, padded patches masked), the last hidden
    /// state pixel-shuffled and projected (`idefics3`; `smolvlm`, which keeps one image of a batch
    /// of padding alone)
    Idefics3 {
        smol: bool,
    },
}

/// The image inputs of a vision-language model: `pixel_values`, and for LLaVA-NeXT and
/// LLaVA-OneVision the `image_sizes` (`[images, 2]`, `(height, width)`) that say how each image
/// was tiled, and OneVision's `batch_num_images` (images per prompt: the images of prompts with
/// several are not tiled).
#[derive(Debug, Clone, Copy)]
pub struct ImageInputs<'a> {
    /// `[images, channels, height, width]`, or LLaVA-NeXT's `[images, tiles, channels, height,
    /// width]` (each image's tiles first, padded to the most tiles) or `[all tiles, channels,
    /// height, width]`
    pub pixel_values: &'a Tensor,
    /// `image_sizes` `[images, 2]`
    pub image_sizes: Option<&'a Tensor>,
    /// `batch_num_images` `[prompts]`
    pub batch_num_images: Option<&'a Tensor>,
    /// Idefics3's `pixel_attention_mask` `[prompts, images, height, width]`
    pub pixel_attention_mask: Option<&'a Tensor>,
}

impl<'a> ImageInputs<'a> {
    /// The images of `pixel_values` alone.
    pub fn pixels(pixel_values: &'a Tensor) -> Self {
        ImageInputs { pixel_values, image_sizes: None, batch_num_images: None, pixel_attention_mask: None }
    }

    /// The image inputs among named ones (`None` without `pixel_values`).
    pub fn from_named(inputs: &'a BTreeMap<String, Tensor>) -> Option<Self> {
        Some(ImageInputs {
            pixel_values: inputs.get("pixel_values")?,
            image_sizes: inputs.get("image_sizes"),
            batch_num_images: inputs.get("batch_num_images"),
            pixel_attention_mask: inputs.get("pixel_attention_mask"),
        })
    }
}

/// What the image path computes, under transformers' names (`image_outputs.*`).
#[derive(Debug, Clone)]
pub(crate) struct ImageOutputs {
    /// the vision tower's `last_hidden_state` `[images, tokens, vision hidden]`
    pub last_hidden_state: Tensor,
    /// the vision tower's hidden states
    pub hidden_states: Vec<Tensor>,
    /// the projected features of each image `[features, text hidden]`
    pub features: Vec<Tensor>,
}

impl ImageOutputs {
    /// The features of every image, one after the other: `[features, text hidden]`.
    pub(crate) fn rows(&self) -> Result<Tensor> {
        Ok(Tensor::cat(&self.features.iter().collect::<Vec<_>>(), 0)?)
    }
}

/// A LLaVA or VipLLaVA checkpoint's vision tower and projector (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct ImageEncoder {
    tower: VisionTower,
    /// the hidden states the features are read from, as indices (none: the last hidden state)
    layers: Vec<usize>,
    /// the first token (CLIP's class token) is dropped from each
    drop_first: bool,
    projector: Projector,
    /// the token whose embeddings the features replace
    image_token: i64,
    class: Class,
    /// LLaVA-NeXT's tiling
    anyres: Option<Box<Anyres>>,
    /// the features are read from the last hidden state (after the tower's final norm) though
    /// `layers` names the last block's output (InternVL's `vision_feature_layer` -1)
    final_state: bool,
}

/// The vision config of a class when the checkpoint's config has none: LLaVA's and VipLLaVA's
/// CLIP ViT-L/14 at 336 pixels, PaliGemma's SigLIP So400m at 224, Aya Vision's at 384.
fn default_vision_config(class: Class) -> Map<String, Value> {
    let mut m = Map::new();
    let (model_type, sizes) = match class {
        Class::PaliGemma => (
            "siglip_vision_model",
            [
                ("hidden_size", 1152),
                ("intermediate_size", 4096),
                ("patch_size", 14),
                ("image_size", 224),
                ("num_hidden_layers", 27),
                ("num_attention_heads", 16),
            ],
        ),
        Class::Mistral3 => (
            "pixtral",
            [
                ("hidden_size", 1024),
                ("intermediate_size", 4096),
                ("patch_size", 14),
                ("image_size", 1540),
                ("num_hidden_layers", 24),
                ("num_attention_heads", 16),
            ],
        ),
        Class::InternVl => (
            "internvl_vision",
            [
                ("hidden_size", 1024),
                ("intermediate_size", 4096),
                ("patch_size", 14),
                ("image_size", 448),
                ("num_hidden_layers", 24),
                ("num_attention_heads", 16),
            ],
        ),
        Class::Idefics3 { .. } => (
            "siglip_vision_model",
            [
                ("hidden_size", 1152),
                ("intermediate_size", 3072),
                ("patch_size", 32),
                ("image_size", 224),
                ("num_hidden_layers", 12),
                ("num_attention_heads", 16),
            ],
        ),
        Class::AyaVision | Class::OneVision => (
            "siglip_vision_model",
            [
                ("hidden_size", 1152),
                ("intermediate_size", 4304),
                ("patch_size", 14),
                ("image_size", 384),
                ("num_hidden_layers", 26),
                ("num_attention_heads", if class == Class::OneVision { 16 } else { 14 }),
            ],
        ),
        Class::Llava | Class::VipLlava | Class::LlavaNext => (
            "clip_vision_model",
            [
                ("hidden_size", 1024),
                ("intermediate_size", 4096),
                ("patch_size", 14),
                ("image_size", 336),
                ("num_hidden_layers", 24),
                ("num_attention_heads", 16),
            ],
        ),
    };
    for (k, v) in sizes {
        m.insert(k.into(), Value::from(v));
    }
    m.insert("model_type".into(), Value::from(model_type));
    m
}

/// A multimodal config's image token: `image_token_index` (or its alias `image_token_id`), else
/// the class's `default`.
pub(crate) fn image_token(cfg: &Config, default: i64) -> Result<i64> {
    match (cfg.get("image_token_index"), cfg.get("image_token_id")) {
        (Some(v), _) | (None, Some(v)) if !v.is_null() => v
            .as_i64()
            .ok_or_else(|| Error::Config(format!("\"image_token_index\" must be an integer, got {v}"))),
        _ => Ok(default),
    }
}

/// Where a multimodal checkpoint keeps its vision tower: the hub's checkpoints nest the tower's
/// `vision_model`, transformers 5 saves it flat.
pub(crate) const TOWER_PREFIXES: [&str; 4] = [
    "vision_tower.vision_model.",
    "model.vision_tower.vision_model.",
    "vision_tower.",
    "model.vision_tower.",
];

/// The vars under the first of `prefixes` that holds `probe`.
pub(crate) fn vars_with<'a>(weights: &'a Weights, prefixes: &[&str], probe: &str) -> Option<Vars<'a>> {
    let prefix = prefixes.iter().find(|p| weights.contains(&format!("{p}{probe}")))?;
    Some(weights.vars(prefix.trim_end_matches('.')))
}

/// `cfg[key]` as a list of hidden-state indices (an int or a list of ints), `None` when absent.
fn feature_layers(cfg: &Config, key: &str) -> Result<Option<Vec<i64>>> {
    let bad =
        |v: &Value| Error::Config(format!("\"{key}\" must be an integer or a list of integers, got {v}"));
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Number(n)) => Ok(Some(vec![n.as_i64().ok_or_else(|| bad(v))?])),
        Some(Value::Array(items)) if !items.is_empty() => {
            let layers = items.iter().map(|v| v.as_i64().ok_or_else(|| bad(v))).collect::<Result<_>>()?;
            Ok(Some(layers))
        }
        Some(v) => Err(bad(v)),
    }
}

impl ImageEncoder {
    /// The image path of `cfg` (a `llava`, `vipllava` or `paligemma` config) from `weights`, its
    /// projector writing `text_hidden` wide features; `None` for the other classes and for a
    /// checkpoint without a vision tower (its images are then refused).
    pub(crate) fn load(cfg: &Config, weights: &Weights, text_hidden: usize) -> Result<Option<Self>> {
        let class = match cfg.model_type()? {
            "llava" => Class::Llava,
            "vipllava" => Class::VipLlava,
            "paligemma" => Class::PaliGemma,
            "aya_vision" => Class::AyaVision,
            "llava_next" | "llava_next_video" => Class::LlavaNext,
            "llava_onevision" => Class::OneVision,
            "idefics3" => Class::Idefics3 { smol: false },
            "smolvlm" => Class::Idefics3 { smol: true },
            "internvl" => Class::InternVl,
            "mistral3" => Class::Mistral3,
            _ => return Ok(None),
        };
        let vip = class == Class::VipLlava;
        let probe = match class {
            Class::InternVl => "embeddings.patch_embeddings.projection.weight",
            _ => "embeddings.patch_embedding.weight",
        };
        let prefixes: &[&str] = match class {
            Class::Idefics3 { .. } => &["model.vision_model.", "vision_model."],
            _ => &TOWER_PREFIXES,
        };
        let Some(vars) =
            vars_with(weights, prefixes, probe).or_else(|| vars_with(weights, prefixes, "patch_conv.weight"))
        else {
            return Ok(None);
        };
        let vision = match cfg.get("vision_config") {
            None | Some(Value::Null) => default_vision_config(class),
            Some(Value::Object(m)) => m.clone(),
            Some(v) => return Err(Error::Config(format!("\"vision_config\" must be an object, got {v}"))),
        };
        let vision = Config::from_map(vision);
        let default_tower = match class {
            Class::PaliGemma | Class::AyaVision | Class::OneVision | Class::Idefics3 { .. } => {
                "siglip_vision_model"
            }
            Class::Llava | Class::VipLlava | Class::LlavaNext => "clip_vision_model",
            Class::InternVl => "internvl_vision",
            Class::Mistral3 => "pixtral",
        };
        let tower = match vision.str_or("model_type", default_tower)? {
            "clip_vision_model" => VisionTower::Clip(ClipVisionTower::load(&vars, ClipVisionConfig::from_config(&vision)?)?),
            "siglip_vision_model" | "idefics3_vision" | "smolvlm_vision" => {
                VisionTower::Siglip(SiglipVisionTower::load(&vars, &vision, false)?)
            }
            "internvl_vision" => VisionTower::Intern(InternVisionTower::load(&vars, &vision)?),
            "pixtral" if matches!(class, Class::Llava | Class::Mistral3) => {
                VisionTower::Pixtral(PixtralVisionTower::load(&vars, &vision)?)
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "{}: a vision tower of model_type \"{other}\" is not supported (clip_vision_model, siglip_vision_model)",
                    cfg.model_type()?
                )))
            }
        };
        let image_token = image_token(
            cfg,
            match class {
                Class::PaliGemma => 256_000,
                Class::AyaVision => 255_036,
                Class::OneVision => 151_646,
                Class::Idefics3 { .. } => 128_257,
                Class::InternVl => 151_667,
                Class::Mistral3 => 10,
                Class::LlavaNext if cfg.model_type()? == "llava_next_video" => 32001,
                Class::Llava | Class::VipLlava | Class::LlavaNext => 32000,
            },
        )?;
        if let Class::Idefics3 { .. } = class {
            if !matches!(tower, VisionTower::Siglip(_)) {
                return Err(Error::Unsupported(format!(
                    "{}: the vision tower must be SigLIP's",
                    cfg.model_type()?
                )));
            }
            let root =
                vars_with(weights, &["model.connector.", "connector."], "modality_projection.proj.weight")
                    .ok_or_else(|| {
                        Error::Weight(
                    "tensor 'model.connector.modality_projection.proj.weight' is missing from the checkpoint"
                        .into(),
                )
                    })?;
            let factor = cfg.usize_or("scale_factor", 2)?;
            let width = tower
                .hidden()
                .checked_mul(factor)
                .and_then(|w| w.checked_mul(factor))
                .ok_or_else(|| Error::Config("vision features too wide".into()))?;
            let linear = Linear::load(&root.pp("modality_projection.proj"), width, text_hidden, false)?;
            let projector = Projector::ShuffleLinear { factor, linear };
            let (layers, drop_first, anyres, final_state) = (Vec::new(), false, None, false);
            return Ok(Some(ImageEncoder {
                tower,
                layers,
                drop_first,
                projector,
                image_token,
                class,
                anyres,
                final_state,
            }));
        }
        if class == Class::PaliGemma {
            let root = vars_with(
                weights,
                &["model.multi_modal_projector.", "multi_modal_projector."],
                "linear.weight",
            )
            .ok_or_else(|| {
                Error::Weight(
                    "tensor 'multi_modal_projector.linear.weight' is missing from the checkpoint".into(),
                )
            })?;
            // (`projection_dim` should be the text model's width; a config where it is not loads,
            // and its images are the embeddings' width error.)
            let width = cfg.usize_or("projection_dim", 2048)?;
            let projector = Projector::Linear(Linear::load(&root.pp("linear"), tower.hidden(), width, true)?);
            let (layers, drop_first, anyres, final_state) = (Vec::new(), false, None, false);
            return Ok(Some(ImageEncoder {
                tower,
                layers,
                drop_first,
                projector,
                image_token,
                class,
                anyres,
                final_state,
            }));
        }
        // (VipLLaVA's configs may name the key `vision_feature_layers`.)
        let layers = match feature_layers(cfg, "vision_feature_layer")? {
            Some(l) => l,
            None if vip => feature_layers(cfg, "vision_feature_layers")?.unwrap_or(vec![-2, -5, -8, -11, 6]),
            None if matches!(
                class,
                Class::AyaVision | Class::OneVision | Class::InternVl | Class::Mistral3
            ) =>
            {
                vec![-1]
            }
            None => vec![-2],
        };
        let states = tower.states();
        if class == Class::InternVl && layers.len() != 1 {
            return Err(Error::Config(format!(
                "InternVL's vision_feature_layer must be one integer, got {layers:?}"
            )));
        }
        // (InternVL reads -1 as the tower's final, normed state.)
        let final_state = class == Class::InternVl && layers == [-1];
        let layers = layers
            .iter()
            .map(|&l| {
                let i = if l < 0 { states as i64 + l } else { l };
                usize::try_from(i).ok().filter(|&i| i < states).ok_or_else(|| {
                    Error::Config(format!(
                        "vision_feature_layer {l} is out of range for the vision tower's {states} hidden states"
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let strategy = if matches!(class, Class::AyaVision | Class::OneVision) { "full" } else { "default" };
        let drop_first = class != Class::Mistral3
            && (vip
                || match cfg.str_or("vision_feature_select_strategy", strategy)? {
                    "default" => true,
                    "full" => false,
                    other => {
                        return Err(Error::Config(format!(
                            "vision_feature_select_strategy must be \"default\" or \"full\", got \"{other}\""
                        )))
                    }
                });
        let root = vars_with(
            weights,
            &["model.multi_modal_projector.", "multi_modal_projector."],
            "linear_1.weight",
        )
        .ok_or_else(|| {
            Error::Weight(
                "tensor 'model.multi_modal_projector.linear_1.weight' is missing from the checkpoint".into(),
            )
        })?;
        let width = tower
            .hidden()
            .checked_mul(layers.len())
            .ok_or_else(|| Error::Config("vision features too wide".into()))?;
        if class == Class::AyaVision {
            let factor = cfg.usize_or("downsample_factor", 2)?;
            let shuffled = width
                .checked_mul(factor)
                .and_then(|w| w.checked_mul(factor))
                .ok_or_else(|| Error::Config("vision features too wide".into()))?;
            let inner = cfg.usize_or("alignment_intermediate_size", text_hidden)?;
            let eps = cfg.f64_or("adapter_layer_norm_eps", 1e-6)?;
            let projector = Projector::ShuffleSwiGlu {
                factor,
                norm: LayerNorm::load(&root.pp("layernorm"), shuffled, eps)?,
                linear_1: Linear::load(&root.pp("linear_1"), shuffled, inner, true)?,
                linear_2: Linear::load(&root.pp("linear_2"), inner / 2, text_hidden, true)?,
            };
            let anyres = None;
            return Ok(Some(ImageEncoder {
                tower,
                layers,
                drop_first,
                projector,
                image_token,
                class,
                anyres,
                final_state,
            }));
        }
        let anyres = match class {
            Class::LlavaNext | Class::OneVision => {
                let newline = ["model.image_newline", "image_newline"]
                    .iter()
                    .find(|n| weights.contains(n))
                    .map(|n| weights.tensor(n, &[text_hidden]))
                    .unwrap_or_else(|| {
                        Err(Error::Weight(
                            "tensor 'model.image_newline' is missing from the checkpoint".into(),
                        ))
                    })?;
                let (tile, patch) = tower.image_and_patch();
                let onevision = class == Class::OneVision;
                Some(Box::new(Anyres::from_config(cfg, onevision, tile, patch, newline)?))
            }
            _ => None,
        };
        if class == Class::Mistral3 {
            let merge = cfg.usize_or("spatial_merge_size", 2)?;
            let hidden = tower.hidden();
            let merged = hidden
                .checked_mul(merge)
                .and_then(|w| w.checked_mul(merge))
                .filter(|&w| w > 0)
                .ok_or_else(|| Error::Config(format!("spatial_merge_size {merge}")))?;
            let eps = match cfg.get("text_config") {
                Some(Value::Object(t)) => t.get("rms_norm_eps").and_then(Value::as_f64).unwrap_or(1e-6),
                _ => 1e-5,
            };
            let bias = cfg.bool_or("multimodal_projector_bias", false)?;
            let projector = Projector::MergedMlp {
                norm: RmsNorm::load(&root.pp("norm"), hidden, eps, RmsNormStyle::Llama)?,
                merge,
                merging: Linear::load(&root.pp("patch_merger.merging_layer"), merged, hidden, false)?,
                linear_1: Linear::load(&root.pp("linear_1"), width, text_hidden, bias)?,
                act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
                linear_2: Linear::load(&root.pp("linear_2"), text_hidden, text_hidden, bias)?,
            };
            let anyres = None;
            return Ok(Some(ImageEncoder {
                tower,
                layers,
                drop_first,
                projector,
                image_token,
                class,
                anyres,
                final_state,
            }));
        }
        if class == Class::InternVl {
            let ratio = cfg.f64_or("downsample_ratio", 0.5)?;
            let factor = if ratio > 0.0 && ratio <= 1.0 { (1.0 / ratio) as usize } else { 0 };
            let shuffled = width.checked_mul(factor).and_then(|w| w.checked_mul(factor)).filter(|&w| w > 0);
            let shuffled = shuffled.ok_or_else(|| {
                Error::Config(format!("downsample_ratio must be in (0, 1] (1 / an integer), got {ratio}"))
            })?;
            let projector = Projector::ShuffleMlp {
                factor,
                norm: LayerNorm::load(&root.pp("layer_norm"), shuffled, 1e-5)?,
                linear_1: Linear::load(&root.pp("linear_1"), shuffled, text_hidden, true)?,
                act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
                linear_2: Linear::load(&root.pp("linear_2"), text_hidden, text_hidden, true)?,
            };
            let anyres = None;
            return Ok(Some(ImageEncoder {
                tower,
                layers,
                drop_first,
                projector,
                image_token,
                class,
                anyres,
                final_state,
            }));
        }
        let bias = vip || cfg.bool_or("multimodal_projector_bias", true)?;
        let projector = Projector::Mlp {
            norm: if vip {
                Some(LayerNorm::load(
                    &root.pp("projector_layernorm"),
                    width,
                    cfg.f64_or("projector_layernorm_eps", 1e-5)?,
                )?)
            } else {
                None
            },
            linear_1: Linear::load(&root.pp("linear_1"), width, text_hidden, bias)?,
            act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
            linear_2: Linear::load(&root.pp("linear_2"), text_hidden, text_hidden, bias)?,
        };
        Ok(Some(ImageEncoder {
            tower,
            layers,
            drop_first,
            projector,
            image_token,
            class,
            anyres,
            final_state,
        }))
    }

    /// The token whose embeddings the image features replace.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// Whether `image_outputs.pooler_output` is one tensor per image (LLaVA's and LLaVA-NeXT's
    /// tuple; VipLLaVA's is one tensor).
    pub(crate) fn pooled_per_image(&self) -> bool {
        matches!(
            self.class,
            Class::Llava | Class::LlavaNext | Class::OneVision | Class::Idefics3 { .. } | Class::Mistral3
        )
    }

    /// The image inputs it takes beside `pixel_values`.
    pub(crate) fn other_inputs(&self) -> &'static [&'static str] {
        if let VisionTower::Pixtral(_) = self.tower {
            return &["image_sizes"];
        }
        match self.class {
            Class::LlavaNext => &["image_sizes"],
            Class::OneVision => &["image_sizes", "batch_num_images"],
            Class::Idefics3 { .. } => &["pixel_attention_mask"],
            _ => &[],
        }
    }

    /// Whether transformers' `image_outputs.hidden_states` holds the tower's hidden state `i`:
    /// every one where LLaVA is asked for hidden states, else those the features are read from
    /// (the others are `None`).
    pub(crate) fn reports_state(&self, i: usize, output_hidden_states: bool) -> bool {
        (self.class == Class::Llava && output_hidden_states) || self.layers.contains(&i)
    }

    /// The vision tower and the projector on `images`.
    pub(crate) fn forward(&self, images: &ImageInputs<'_>) -> Result<ImageOutputs> {
        let given = [
            ("image_sizes", images.image_sizes),
            ("batch_num_images", images.batch_num_images),
            ("pixel_attention_mask", images.pixel_attention_mask),
        ];
        if let Some((name, _)) = given.iter().find(|(n, t)| t.is_some() && !self.other_inputs().contains(n)) {
            return Err(Error::Input(format!(
                "unexpected input '{name}' (this model takes its images as pixel_values)"
            )));
        }
        if let Class::Idefics3 { smol } = self.class {
            return self.forward_idefics3(images, smol);
        }
        if let VisionTower::Pixtral(t) = &self.tower {
            return self.forward_pixtral(t, images);
        }
        let Some(anyres) = &self.anyres else {
            let f = self.features(images.pixel_values)?;
            let per_image = (0..f.2.dims()[0])
                .map(|i| f.2.select(0, i as isize))
                .collect::<std::result::Result<_, _>>()?;
            return Ok(ImageOutputs { last_hidden_state: f.0, hidden_states: f.1, features: per_image });
        };
        let sizes = images.image_sizes.ok_or_else(|| {
            Error::Input("missing input 'image_sizes' (LLaVA-NeXT's images need their sizes)".into())
        })?;
        let sizes = image_sizes(sizes)?;
        let tiled = match images.batch_num_images {
            None => vec![true; sizes.len()],
            Some(per_prompt) => images_tiled(per_prompt, sizes.len())?,
        };
        let counts = anyres.tile_counts(&sizes, &tiled)?;
        let (last_hidden_state, hidden_states, f) = self.features(&tiles(images.pixel_values, &counts)?)?;
        let mut at = 0;
        let mut features = Vec::with_capacity(sizes.len());
        for (&size, &n) in sizes.iter().zip(&counts) {
            features.push(anyres.pack(&f.narrow(0, at as isize, n)?, size)?);
            at += n;
        }
        Ok(ImageOutputs { last_hidden_state, hidden_states, features })
    }

    /// Idefics3's images: the real ones through the tower (their padded patches masked), the
    /// pixel shuffle and projection; the features of each prompt's images, `[tokens, text hidden]`.
    fn forward_idefics3(&self, images: &ImageInputs<'_>, smol: bool) -> Result<ImageOutputs> {
        let (image, patch) = self.tower.image_and_patch();
        let mask_dtype = self.projector_dtype();
        let batch = tower_batch(
            images.pixel_values,
            images.pixel_attention_mask,
            patch,
            image / patch.max(1),
            smol,
            mask_dtype,
        )?;
        let last_hidden_state =
            self.tower.forward_with(&batch.pixels, &batch.position_ids, batch.mask.as_ref())?;
        let f = self.projector.forward(&last_hidden_state)?;
        let (per_image, width) = (f.dims()[1], f.dims()[2]);
        let mut at = 0;
        let mut features = Vec::with_capacity(batch.per_prompt.len());
        for &n in &batch.per_prompt {
            features.push(f.narrow(0, at as isize, n)?.reshape([n * per_image, width])?);
            at += n;
        }
        Ok(ImageOutputs { last_hidden_state, hidden_states: Vec::new(), features })
    }

    /// Pixtral's images, each of its own size (`image_sizes`; absent: the pixels'): all their
    /// patches in one pass of the tower, the selected states projected, then split by image.
    fn forward_pixtral(&self, t: &PixtralVisionTower, images: &ImageInputs<'_>) -> Result<ImageOutputs> {
        if self.drop_first {
            return Err(Error::Config(
                "a Pixtral tower has no class token: its LLaVA's vision_feature_select_strategy must be \"full\"".into(),
            ));
        }
        let sizes = images.image_sizes.map(image_sizes).transpose()?;
        let pixels = checked_pixels(images.pixel_values, t.dtype())?.to(t.device())?;
        let PixtralOutput { last_hidden_state, hidden_states, grids } =
            t.forward(&pixels, sizes.as_deref())?;
        let selected = self.layers.iter().map(|&i| &hidden_states[i]).collect::<Vec<_>>();
        let selected = Tensor::cat(&selected, 2)?;
        let Projector::MergedMlp { norm, merge, merging, linear_1, act, linear_2 } = &self.projector else {
            let f = self.projector.forward(&selected)?;
            let width = f.dims()[2];
            let mut at = 0;
            let mut features = Vec::with_capacity(grids.len());
            for (h, w) in grids {
                features.push(f.narrow(1, at as isize, h * w)?.reshape([h * w, width])?);
                at += h * w;
            }
            return Ok(ImageOutputs { last_hidden_state, hidden_states, features });
        };
        // Mistral 3: each image's grid of normed features, its `merge × merge` squares (the
        // grid's last rows and columns past a whole square left out) as `F.unfold` lays them out.
        let normed = norm.forward(&selected)?;
        let (d, m) = (normed.dims()[2], *merge);
        let mut at = 0;
        let mut squares = Vec::with_capacity(grids.len());
        for &(h, w) in &grids {
            let grid = normed.narrow(1, at as isize, h * w)?.reshape([h, w, d])?;
            at += h * w;
            let (rows, cols) = (h / m, w / m);
            let grid = grid.narrow(0, 0, rows * m)?.narrow(1, 0, cols * m)?;
            let grid = grid.reshape([rows, m, cols, m, d])?.permute([0, 2, 4, 1, 3])?.contiguous()?;
            squares.push(grid.reshape([rows * cols, d * m * m])?);
        }
        let merged = merging.forward(&Tensor::cat(&squares.iter().collect::<Vec<_>>(), 0)?)?;
        let f = linear_2.forward(&act.forward(&linear_1.forward(&merged)?)?)?;
        let mut at = 0;
        let mut features = Vec::with_capacity(squares.len());
        for sq in &squares {
            let n = sq.dims()[0];
            features.push(f.narrow(0, at as isize, n)?);
            at += n;
        }
        Ok(ImageOutputs { last_hidden_state, hidden_states, features })
    }

    /// The dtype the tower computes in.
    fn projector_dtype(&self) -> DType {
        match &self.tower {
            VisionTower::Clip(t) => t.dtype(),
            VisionTower::Siglip(t) => t.dtype(),
            VisionTower::Intern(t) => t.dtype(),
            VisionTower::Pixtral(t) => t.dtype(),
        }
    }

    /// The tower's last hidden state and hidden states of `pixel_values` `[images, channels,
    /// height, width]`, and their projected features `[images, tokens, text hidden]`.
    fn features(&self, pixel_values: &Tensor) -> Result<(Tensor, Vec<Tensor>, Tensor)> {
        let (last_hidden_state, hidden_states) = self.tower.forward(pixel_values)?;
        if self.layers.is_empty() {
            let features = self.projector.forward(&last_hidden_state)?;
            return Ok((last_hidden_state, Vec::new(), features));
        }
        let selected = self
            .layers
            .iter()
            .map(|&i| {
                let h = if self.final_state { &last_hidden_state } else { &hidden_states[i] };
                if self.drop_first {
                    Ok(h.narrow(1, 1, h.dims()[1] - 1)?)
                } else {
                    Ok(h.clone())
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let selected = if selected.len() == 1 {
            selected[0].clone()
        } else {
            Tensor::cat(&selected.iter().collect::<Vec<_>>(), 2)?
        };
        let features = self.projector.forward(&selected)?;
        Ok((last_hidden_state, hidden_states, features))
    }

    /// The features of `images` as the rows that replace the image tokens' embeddings,
    /// `[features, text hidden]` (image after image), in `dtype`.
    pub(crate) fn rows(&self, images: &ImageInputs<'_>, dtype: DType) -> Result<Tensor> {
        Ok(self.forward(images)?.rows()?.to_dtype(dtype)?)
    }
}

/// Whether each of `images` images is tiled, from OneVision's `batch_num_images` (`[prompts]`):
/// those of prompts with one image are, those of prompts with several are not.
fn images_tiled(per_prompt: &Tensor, images: usize) -> Result<Vec<bool>> {
    check_input_dtype("batch_num_images", per_prompt)?;
    let counts = per_prompt.to_dtype(DType::I64)?.flatten(0, -1)?.to_vec::<i64>()?;
    if counts.iter().any(|&n| n < 0) || counts.iter().sum::<i64>() != images as i64 {
        return Err(Error::Input(format!(
            "input 'batch_num_images' {counts:?} must count the {images} images of 'image_sizes'"
        )));
    }
    Ok(counts.iter().flat_map(|&n| std::iter::repeat_n(n == 1, n as usize)).collect())
}

/// The tiles of `pixel_values` that `counts` (tiles per image) read: the first ones of each image
/// of `[images, max tiles, channels, height, width]`, or all of `[tiles, channels, height, width]`.
fn tiles(pixel_values: &Tensor, counts: &[usize]) -> Result<Tensor> {
    let dims = pixel_values.dims();
    let total: usize = counts.iter().sum();
    match dims.len() {
        5 if dims[0] == counts.len() && counts.iter().all(|&n| n <= dims[1]) => {
            let per_image = counts
                .iter()
                .enumerate()
                .map(|(i, &n)| pixel_values.select(0, i as isize)?.narrow(0, 0, n))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(Tensor::cat(&per_image.iter().collect::<Vec<_>>(), 0)?)
        }
        4 if dims[0] == total => Ok(pixel_values.clone()),
        4 | 5 => Err(Error::Input(format!(
            "input 'pixel_values' of shape {dims:?} does not hold the images' tiles: their sizes make {counts:?} tiles"
        ))),
        _ => Err(Error::Input(format!("pixel_values of shape {dims:?}, expect to be of 4 or 5 dimensions"))),
    }
}

/// The inputs that describe the images (checked by the image path), not the prompts' tokens.
const IMAGE_ONLY: [&str; 4] = ["pixel_values", "image_sizes", "batch_num_images", "pixel_attention_mask"];

/// The text inputs of a forward pass with images (`input_ids`, `attention_mask`,
/// `position_ids`), checked with the others' names against `takes`.
pub(crate) struct TextWithImages<'a> {
    /// `input_ids`, int64
    ids: Tensor,
    /// `attention_mask` as int64 ones and zeros
    mask: Option<Tensor>,
    positions: Option<&'a Tensor>,
}

impl<'a> TextWithImages<'a> {
    /// The text inputs of `inputs`, whose names must be among `takes`; the integer inputs'
    /// dtypes and shapes checked (`pixel_values` is the image path's to check).
    pub(crate) fn checked(inputs: &'a BTreeMap<String, Tensor>, takes: &[&str]) -> Result<Self> {
        for (name, t) in inputs {
            if !takes.contains(&name.as_str()) {
                return Err(Error::Input(format!(
                    "unexpected input '{name}' (this model takes {})",
                    takes.join(", ")
                )));
            }
            if !IMAGE_ONLY.contains(&name.as_str()) {
                check_input_dtype(name, t)?;
            }
        }
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        let text: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| !IMAGE_ONLY.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        check_input_shapes(&text)?;
        let mask = inputs.get("attention_mask").map(|m| m.ne(0.0)?.to_dtype(DType::I64)).transpose()?;
        Ok(TextWithImages { ids: ids_as_i64("input_ids", ids)?, mask, positions: inputs.get("position_ids") })
    }

    /// `lm` on these inputs, the rows of `features` (`[.., hidden]`, image after image) in place
    /// of the embeddings of `token` (looked up as id 0 when past the vocabulary), with `blocks`: its
    /// `logits` and, with `output_hidden_states`, its `hidden_states.N`.
    pub(crate) fn outputs(
        &self,
        lm: &CausalLm,
        features: &Tensor,
        token: i64,
        blocks: Option<AttentionBlocks<'_>>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let h = features.dims()[features.rank() - 1];
        let rows = features.reshape([features.numel() / h.max(1), h])?;
        let replaced = ReplacedRows { mask: &self.ids.eq(token as f64)?, rows: &rows, blocks };
        let ids = lm.ids_in_vocabulary(&self.ids, token)?;
        let out =
            lm.forward_with_rows(&ids, replaced, self.mask.as_ref(), self.positions, output_hidden_states)?;
        let mut named = vec![("logits".to_string(), out.logits)];
        let states = out.hidden_states.into_iter().enumerate();
        named.extend(states.map(|(i, t)| (format!("hidden_states.{i}"), t)));
        Ok(named)
    }
}

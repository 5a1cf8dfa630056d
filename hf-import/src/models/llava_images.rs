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

use oxtorch_tensor::{DType, Tensor};
use serde_json::{Map, Value};

use super::anyres::{image_sizes, Anyres};
use super::clip::{ClipVisionConfig, ClipVisionTower};
use super::idefics3_images::tower_batch;
use super::image_inputs::{images_tiled, tiles, ImageInputs};
use super::internvl_vision::InternVisionTower;
use super::llava_projector::{load_projector, Projector};
use super::llava_videos::VideoPath;
use super::pixtral_vision::{PixtralOutput, PixtralVisionTower};
use super::siglip::SiglipVisionTower;
use super::vision::checked_pixels;
use super::vision_tower::VisionTower;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::{Vars, Weights};

/// Which class's image path an [`ImageEncoder`] is: how it reads the tower and names its outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
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
    /// LLaVA-NeXT-Video's and LLaVA-OneVision's videos
    videos: Option<VideoPath>,
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

/// `cfg`'s nested `vision_config` (absent or null: the tower class's defaults).
pub(crate) fn vision_config(cfg: &Config) -> Result<Config> {
    match cfg.get("vision_config") {
        None | Some(Value::Null) => Ok(Config::from_map(Default::default())),
        Some(Value::Object(m)) => Ok(Config::from_map(m.clone())),
        Some(v) => Err(Error::Config(format!("\"vision_config\" must be an object, got {v}"))),
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
            return Ok(Some(ImageEncoder::on_last_state(tower, projector, image_token, class)));
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
            return Ok(Some(ImageEncoder::on_last_state(tower, projector, image_token, class)));
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
        let (tile, patch) = tower.image_and_patch();
        let videos = VideoPath::from_config(cfg, tile, patch)?;
        let projector = load_projector(class, cfg, &root, &tower, width, text_hidden)?;
        Ok(Some(ImageEncoder {
            tower,
            layers,
            drop_first,
            projector,
            image_token,
            class,
            anyres,
            final_state,
            videos,
        }))
    }

    /// An encoder whose projector reads the tower's last hidden state whole (PaliGemma's,
    /// Idefics3's).
    fn on_last_state(tower: VisionTower, projector: Projector, image_token: i64, class: Class) -> Self {
        let (layers, drop_first, anyres, final_state, videos) = (Vec::new(), false, None, false, None);
        ImageEncoder { tower, layers, drop_first, projector, image_token, class, anyres, final_state, videos }
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
        let mask_dtype = self.tower.dtype();
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

    /// The tower's last hidden state and hidden states of `pixel_values` `[images, channels,
    /// height, width]`, and their projected features `[images, tokens, text hidden]`.
    fn features(&self, pixel_values: &Tensor) -> Result<(Tensor, Vec<Tensor>, Tensor)> {
        let (last_hidden_state, hidden_states, selected) = self.selected(pixel_values)?;
        Ok((last_hidden_state, hidden_states, self.projector.forward(&selected)?))
    }

    /// The video path, where the class takes videos.
    pub(crate) fn videos(&self) -> Option<&VideoPath> {
        self.videos.as_ref()
    }

    /// The videos `pixel_values_videos` `[videos, frames, channels, height, width]` through the
    /// tower, the selection, the video path's pooling and the projector: the tower's outputs on
    /// every frame and each video's features (see [`super::llava_videos`]).
    pub(crate) fn forward_videos(&self, pixel_values_videos: &Tensor) -> Result<ImageOutputs> {
        let path = self.videos.as_ref().ok_or_else(|| {
            Error::Input("unexpected input 'pixel_values_videos' (this model takes no videos)".into())
        })?;
        let (frames, videos, per_video) = VideoPath::frames(pixel_values_videos)?;
        let (last_hidden_state, hidden_states, selected) = self.selected(&frames)?;
        let projected = self.projector.forward(&path.before_projector(&selected)?)?;
        let projected = path.after_projector(&projected)?;
        let (tokens, hidden) = (projected.dims()[1], projected.dims()[2]);
        let mut all = projected.reshape([videos, per_video * tokens, hidden])?;
        if let (true, Some(anyres)) = (path.appends_newline(), &self.anyres) {
            let newline = anyres.newline().to_dtype(all.dtype())?.reshape([1, 1, hidden])?;
            all = Tensor::cat(&[&all, &newline.expand([videos, 1, hidden])?], 1)?;
        }
        let features =
            (0..videos).map(|v| all.select(0, v as isize)).collect::<std::result::Result<_, _>>()?;
        Ok(ImageOutputs { last_hidden_state, hidden_states, features })
    }

    /// The tower's last hidden state and hidden states of `pixel_values`, and the features the
    /// projector reads (the selected layers', the class token dropped where the strategy says).
    fn selected(&self, pixel_values: &Tensor) -> Result<(Tensor, Vec<Tensor>, Tensor)> {
        let (last_hidden_state, hidden_states) = self.tower.forward(pixel_values)?;
        if self.layers.is_empty() {
            let selected = last_hidden_state.clone();
            return Ok((last_hidden_state, Vec::new(), selected));
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
        Ok((last_hidden_state, hidden_states, selected))
    }

    /// The features of `images` as the rows that replace the image tokens' embeddings,
    /// `[features, text hidden]` (image after image), in `dtype`.
    pub(crate) fn rows(&self, images: &ImageInputs<'_>, dtype: DType) -> Result<Tensor> {
        Ok(self.forward(images)?.rows()?.to_dtype(dtype)?)
    }
}

//! The image path of LLaVA (`llava`: llava-hf/llava-1.5-*, llava-interleave), VipLLaVA
//! (`vipllava`), PaliGemma (`paligemma`, 1 and 2) and Aya Vision (`aya_vision`: LLaVA's features
//! through a pixel shuffle and a SwiGLU projector): a CLIP or SigLIP vision tower, the hidden
//! states of its `vision_feature_layer` (one layer, or several concatenated), the class token
//! dropped (LLaVA's `vision_feature_select_strategy` `"default"`, VipLLaVA always), and the
//! multi-modal projector (`linear_1`, the activation, `linear_2`; VipLLaVA's layer norm first);
//! PaliGemma's SigLIP's last hidden state through one `linear`. The projected features take the
//! places of the image tokens (`image_token_index`) in the language model's input embeddings, one
//! row per token, as transformers' `masked_scatter` puts them.
//!
//! `pixel_values` are the processor's output (`[images, channels, height, width]`, resized and
//! normalised); the prompt holds as many image tokens as the images have features (LLaVA-1.5's
//! processor writes 576 per image).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Tensor};
use serde_json::{Map, Value};

use super::clip::{ClipVisionConfig, ClipVisionTower};
use super::decoder::{AttentionBlocks, CausalLm, ReplacedRows};
use super::siglip::SiglipVisionTower;
use super::vision::checked_pixels;
use super::{check_input_dtype, check_input_shapes, ids_as_i64};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// The vision tower of a LLaVA checkpoint.
#[derive(Debug, Clone)]
enum VisionTower {
    /// `clip_vision_model` (LLaVA-1.5, VipLLaVA)
    Clip(ClipVisionTower),
    /// `siglip_vision_model` (llava-interleave)
    Siglip(SiglipVisionTower),
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
        }
    }

    /// The tower's width.
    fn hidden(&self) -> usize {
        match self {
            VisionTower::Clip(t) => t.config().tower.hidden,
            VisionTower::Siglip(t) => t.hidden(),
        }
    }

    /// The number of hidden states (the blocks plus one).
    fn states(&self) -> usize {
        match self {
            VisionTower::Clip(t) => t.config().tower.layers + 1,
            VisionTower::Siglip(t) => t.layers() + 1,
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

/// Aya Vision's pixel shuffle of `x` `[images, side², dim]`: `[images, side / f, side / f, dim · f²]`,
/// each output token the `f × f` square of input tokens (transformers' reshapes and permutes).
fn pixel_shuffle(x: &Tensor, f: usize) -> Result<Tensor> {
    let (n, s, d) = (x.dims()[0], x.dims()[1], x.dims()[2]);
    let side = (s as f64).sqrt() as usize;
    if side * side != s || f == 0 || !side.is_multiple_of(f) {
        return Err(Error::Input(format!(
            "Aya Vision's pixel shuffle needs a square of tokens whose side the downsample factor {f} divides, got {s} tokens"
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
}

/// What the image path computes, under transformers' names (`image_outputs.*`).
#[derive(Debug, Clone)]
pub(crate) struct ImageOutputs {
    /// the vision tower's `last_hidden_state` `[images, tokens, vision hidden]`
    pub last_hidden_state: Tensor,
    /// the vision tower's hidden states
    pub hidden_states: Vec<Tensor>,
    /// the projected features `[images, features, text hidden]`
    pub features: Tensor,
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
        Class::AyaVision => (
            "siglip_vision_model",
            [
                ("hidden_size", 1152),
                ("intermediate_size", 4304),
                ("patch_size", 14),
                ("image_size", 384),
                ("num_hidden_layers", 26),
                ("num_attention_heads", 14),
            ],
        ),
        Class::Llava | Class::VipLlava => (
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
            _ => return Ok(None),
        };
        let vip = class == Class::VipLlava;
        let probe = "embeddings.patch_embedding.weight";
        let Some(vars) = vars_with(weights, &TOWER_PREFIXES, probe) else {
            return Ok(None);
        };
        let vision = match cfg.get("vision_config") {
            None | Some(Value::Null) => default_vision_config(class),
            Some(Value::Object(m)) => m.clone(),
            Some(v) => return Err(Error::Config(format!("\"vision_config\" must be an object, got {v}"))),
        };
        let vision = Config::from_map(vision);
        let default_tower = match class {
            Class::PaliGemma | Class::AyaVision => "siglip_vision_model",
            Class::Llava | Class::VipLlava => "clip_vision_model",
        };
        let tower = match vision.str_or("model_type", default_tower)? {
            "clip_vision_model" => VisionTower::Clip(ClipVisionTower::load(&vars, ClipVisionConfig::from_config(&vision)?)?),
            "siglip_vision_model" => VisionTower::Siglip(SiglipVisionTower::load(&vars, &vision, false)?),
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
                Class::Llava | Class::VipLlava => 32000,
            },
        )?;
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
            let (layers, drop_first) = (Vec::new(), false);
            return Ok(Some(ImageEncoder { tower, layers, drop_first, projector, image_token, class }));
        }
        // (VipLLaVA's configs may name the key `vision_feature_layers`.)
        let layers = match feature_layers(cfg, "vision_feature_layer")? {
            Some(l) => l,
            None if vip => feature_layers(cfg, "vision_feature_layers")?.unwrap_or(vec![-2, -5, -8, -11, 6]),
            None if class == Class::AyaVision => vec![-1],
            None => vec![-2],
        };
        let states = tower.states();
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
        let strategy = if class == Class::AyaVision { "full" } else { "default" };
        let drop_first = vip
            || match cfg.str_or("vision_feature_select_strategy", strategy)? {
                "default" => true,
                "full" => false,
                other => {
                    return Err(Error::Config(format!(
                        "vision_feature_select_strategy must be \"default\" or \"full\", got \"{other}\""
                    )))
                }
            };
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
                .checked_mul(factor * factor)
                .ok_or_else(|| Error::Config("vision features too wide".into()))?;
            let inner = cfg.usize_or("alignment_intermediate_size", text_hidden)?;
            let eps = cfg.f64_or("adapter_layer_norm_eps", 1e-6)?;
            let projector = Projector::ShuffleSwiGlu {
                factor,
                norm: LayerNorm::load(&root.pp("layernorm"), shuffled, eps)?,
                linear_1: Linear::load(&root.pp("linear_1"), shuffled, inner, true)?,
                linear_2: Linear::load(&root.pp("linear_2"), inner / 2, text_hidden, true)?,
            };
            return Ok(Some(ImageEncoder { tower, layers, drop_first, projector, image_token, class }));
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
        Ok(Some(ImageEncoder { tower, layers, drop_first, projector, image_token, class }))
    }

    /// The token whose embeddings the image features replace.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// Whether `image_outputs.pooler_output` is one tensor per image (LLaVA's tuple; VipLLaVA's is
    /// one tensor).
    pub(crate) fn pooled_per_image(&self) -> bool {
        self.class == Class::Llava
    }

    /// Whether transformers' `image_outputs.hidden_states` holds the tower's hidden state `i`:
    /// every one where LLaVA is asked for hidden states, else those the features are read from
    /// (the others are `None`).
    pub(crate) fn reports_state(&self, i: usize, output_hidden_states: bool) -> bool {
        (self.class == Class::Llava && output_hidden_states) || self.layers.contains(&i)
    }

    /// The vision tower and the projector on `pixel_values` `[images, channels, height, width]`.
    pub(crate) fn forward(&self, pixel_values: &Tensor) -> Result<ImageOutputs> {
        let (last_hidden_state, hidden_states) = self.tower.forward(pixel_values)?;
        if self.layers.is_empty() {
            let features = self.projector.forward(&last_hidden_state)?;
            return Ok(ImageOutputs { last_hidden_state, hidden_states: Vec::new(), features });
        }
        let selected = self
            .layers
            .iter()
            .map(|&i| {
                let h = &hidden_states[i];
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
        Ok(ImageOutputs { last_hidden_state, hidden_states, features })
    }

    /// The features of `pixel_values` as the rows that replace the image tokens' embeddings,
    /// `[images · features, text hidden]`, in `dtype`.
    pub(crate) fn rows(&self, pixel_values: &Tensor, dtype: DType) -> Result<Tensor> {
        let f = self.forward(pixel_values)?.features;
        let (n, t, h) = (f.dims()[0], f.dims()[1], f.dims()[2]);
        Ok(f.reshape([n * t, h])?.to_dtype(dtype)?)
    }
}

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
            if name != "pixel_values" {
                check_input_dtype(name, t)?;
            }
        }
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        let text: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| *k != "pixel_values")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        check_input_shapes(&text)?;
        let mask = inputs.get("attention_mask").map(|m| m.ne(0.0)?.to_dtype(DType::I64)).transpose()?;
        Ok(TextWithImages { ids: ids_as_i64("input_ids", ids)?, mask, positions: inputs.get("position_ids") })
    }

    /// `lm` on these inputs, the rows of `features` `[images, tokens, hidden]` in place of the
    /// embeddings of `token` (looked up as id 0 when past the vocabulary), with `blocks`: its
    /// `logits` and, with `output_hidden_states`, its `hidden_states.N`.
    pub(crate) fn outputs(
        &self,
        lm: &CausalLm,
        features: &Tensor,
        token: i64,
        blocks: Option<AttentionBlocks<'_>>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let (n, t, h) = (features.dims()[0], features.dims()[1], features.dims()[2]);
        let rows = features.reshape([n * t, h])?;
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

//! CLIP (`CLIPModel`, `CLIPTextModel`, `CLIPTextModelWithProjection`, `CLIPVisionModel`,
//! `CLIPVisionModelWithProjection`, `CLIPForImageClassification`): a text tower and a vision tower
//! ([`towers`]), projected into one space where their cosine similarity, scaled by
//! `exp(logit_scale)`, gives `logits_per_image` and `logits_per_text`.
//!
//! A `clip` config nests the towers' settings under `text_config` and `vision_config`, and its
//! checkpoint holds them under `text_model.` and `vision_model.`; the standalone towers
//! (`clip_text_model`, `clip_vision_model`) have their own configs, and their checkpoints hold the
//! tower under that prefix (the Hub's, transformers 4's) or at the top (transformers 5's text model).

mod towers;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

pub(crate) use self::towers::run_layers;
pub use self::towers::{
    ClipTextConfig, ClipTextTower, ClipVisionConfig, ClipVisionTower, TowerConfig, TowerOutput,
};
use super::vision::checked_pixels;
use super::{check_input_dtype, check_input_shapes, num_labels};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::{Vars, Weights};

/// The CLIP architectures, with the model types whose configs they read.
pub(super) const ARCHITECTURES: &[(&str, &[&str])] = &[
    ("CLIPModel", &["clip"]),
    ("CLIPForImageClassification", &["clip"]),
    ("CLIPTextModel", &["clip", "clip_text_model"]),
    ("CLIPTextModelWithProjection", &["clip", "clip_text_model"]),
    ("CLIPVisionModel", &["clip", "clip_vision_model"]),
    ("CLIPVisionModelWithProjection", &["clip", "clip_vision_model"]),
];

const TEXT_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids"];
const IMAGE_INPUTS: &[&str] = &["pixel_values"];
const BOTH_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids", "pixel_values"];

/// A CLIP model, as the architecture named in `config.json`.
#[derive(Debug, Clone)]
pub enum Clip {
    /// `CLIPModel`: both towers, their projections and the learned temperature.
    Model {
        /// `text_model`
        text: ClipTextTower,
        /// `vision_model`
        vision: ClipVisionTower,
        /// `text_projection` (no bias)
        text_projection: Linear,
        /// `visual_projection` (no bias)
        visual_projection: Linear,
        /// `logit_scale`, a scalar (its `exp` scales the similarities)
        logit_scale: Tensor,
    },
    /// `CLIPTextModel`, or `CLIPTextModelWithProjection` with its `text_projection`.
    Text {
        /// `text_model`
        text: ClipTextTower,
        /// `text_projection`
        projection: Option<Linear>,
    },
    /// `CLIPVisionModel`, or `CLIPVisionModelWithProjection` with its `visual_projection`.
    Vision {
        /// `vision_model`
        vision: ClipVisionTower,
        /// `visual_projection`
        projection: Option<Linear>,
    },
    /// `CLIPForImageClassification`: a linear classifier on the mean of the patch tokens' states.
    ImageClassifier {
        /// `vision_model`
        vision: ClipVisionTower,
        /// `classifier` (none with 0 labels: the logits are the mean features)
        classifier: Option<Linear>,
    },
}

/// The config of tower `key` (`text_config`, `vision_config`) of a `clip` (or `siglip`) config, or the config
/// itself for a standalone tower's model type.
pub(crate) fn tower_config(cfg: &Config, key: &str) -> Result<Config> {
    if !matches!(cfg.model_type()?, "clip" | "siglip") {
        return Ok(cfg.clone());
    }
    match cfg.get(key) {
        None | Some(serde_json::Value::Null) => Ok(Config::from_map(Default::default())),
        Some(serde_json::Value::Object(map)) => Ok(Config::from_map(map.clone())),
        Some(v) => Err(Error::Config(format!("\"{key}\" must be an object, got {v}"))),
    }
}

/// The vars of the tower under `prefix` (`text_model`), or at the top when the checkpoint holds
/// it there (`probe`, a tensor of the tower, is found without the prefix).
pub(crate) fn tower_vars<'a>(weights: &'a Weights, prefix: &str, probe: &str) -> Vars<'a> {
    let root = weights.vars("");
    if !root.contains(&format!("{prefix}.{probe}")) && root.contains(probe) {
        root
    } else {
        root.pp(prefix)
    }
}

impl Clip {
    /// `arch` (one of [`ARCHITECTURES`]) from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        let fits = ARCHITECTURES.iter().any(|(a, types)| *a == arch && types.contains(&model_type));
        if !fits {
            return Err(Error::Unsupported(format!(
                "architecture \"{arch}\" with model_type \"{model_type}\""
            )));
        }
        let root = weights.vars("");
        let text = || -> Result<ClipTextTower> {
            let c = ClipTextConfig::from_config(&tower_config(cfg, "text_config")?)?;
            ClipTextTower::load(&tower_vars(weights, "text_model", "embeddings.token_embedding.weight"), c)
        };
        let vision = || -> Result<ClipVisionTower> {
            let c = ClipVisionConfig::from_config(&tower_config(cfg, "vision_config")?)?;
            ClipVisionTower::load(&tower_vars(weights, "vision_model", "embeddings.class_embedding"), c)
        };
        let projection =
            |name: &str, hidden: usize, dim: usize| Linear::load(&root.pp(name), hidden, dim, false);
        Ok(match arch {
            "CLIPModel" => {
                let (text, vision) = (text()?, vision()?);
                let dim = cfg.nullable_usize_or("projection_dim", Some(512))?.unwrap_or(512);
                Clip::Model {
                    text_projection: projection("text_projection", text.config().tower.hidden, dim)?,
                    visual_projection: projection("visual_projection", vision.config().tower.hidden, dim)?,
                    logit_scale: root.get("logit_scale", &[])?,
                    text,
                    vision,
                }
            }
            "CLIPTextModel" | "CLIPTextModelWithProjection" => {
                let text = text()?;
                let t = &text.config().tower;
                let projection = match arch {
                    "CLIPTextModelWithProjection" => {
                        Some(projection("text_projection", t.hidden, t.projection_dim)?)
                    }
                    _ => None,
                };
                Clip::Text { text, projection }
            }
            "CLIPVisionModel" | "CLIPVisionModelWithProjection" => {
                let vision = vision()?;
                let t = &vision.config().tower;
                let projection = match arch {
                    "CLIPVisionModelWithProjection" => {
                        Some(projection("visual_projection", t.hidden, t.projection_dim)?)
                    }
                    _ => None,
                };
                Clip::Vision { vision, projection }
            }
            "CLIPForImageClassification" => {
                let vision = vision()?;
                let classifier = match num_labels(cfg)? {
                    0 => None,
                    n => Some(Linear::load(&root.pp("classifier"), vision.config().tower.hidden, n, true)?),
                };
                Clip::ImageClassifier { vision, classifier }
            }
            other => unreachable!("{other} is not a CLIP architecture"),
        })
    }

    /// The text tower, for the models that have one.
    pub fn text(&self) -> Option<&ClipTextTower> {
        match self {
            Clip::Model { text, .. } | Clip::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The vision tower, for the models that have one.
    pub fn vision(&self) -> Option<&ClipVisionTower> {
        match self {
            Clip::Model { vision, .. }
            | Clip::Vision { vision, .. }
            | Clip::ImageClassifier { vision, .. } => Some(vision),
            Clip::Text { .. } => None,
        }
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        match (self.text(), self.vision()) {
            (Some(t), _) => t.device(),
            (None, Some(v)) => v.device(),
            (None, None) => unreachable!("every CLIP model has a tower"),
        }
    }

    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        match self {
            Clip::Model { .. } => BOTH_INPUTS,
            Clip::Text { .. } => TEXT_INPUTS,
            _ => IMAGE_INPUTS,
        }
    }

    /// Runs the model on named inputs, its outputs under transformers' names. `CLIPModel` takes
    /// texts and images and gives `logits_per_image`, `logits_per_text`, `text_embeds`,
    /// `image_embeds` (normalised) and the towers' outputs under `text_model_output.` and
    /// `vision_model_output.` (their `pooler_output` projected, as transformers 5 gives it); given
    /// only one of the two, it gives that side's embeddings and outputs.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let accepted = self.input_names();
        for name in inputs.keys() {
            if !accepted.contains(&name.as_str()) {
                return Err(Error::Input(format!(
                    "unexpected input '{name}' (this model takes {})",
                    accepted.join(", ")
                )));
            }
        }
        let mut out = Vec::new();
        let push_tower = |out: &mut Vec<(String, Tensor)>, prefix: &str, o: TowerOutput, pooled: Tensor| {
            out.push((format!("{prefix}last_hidden_state"), o.last_hidden_state));
            out.push((format!("{prefix}pooler_output"), pooled));
            let hs = o.hidden_states.into_iter().enumerate();
            out.extend(hs.map(|(i, h)| (format!("{prefix}hidden_states.{i}"), h)));
        };
        let text_out = match self.text() {
            Some(text) if inputs.contains_key("input_ids") || !matches!(self, Clip::Model { .. }) => {
                Some(self.run_text(text, inputs, output_hidden_states)?)
            }
            _ => None,
        };
        let vision_out = match self.vision() {
            Some(vision) if inputs.contains_key("pixel_values") || !matches!(self, Clip::Model { .. }) => {
                let pixels = inputs
                    .get("pixel_values")
                    .ok_or_else(|| Error::Input("missing input 'pixel_values'".into()))?;
                Some(vision.forward(&checked_pixels(pixels, vision.dtype())?, output_hidden_states)?)
            }
            _ => None,
        };
        match self {
            Clip::Model { text_projection, visual_projection, logit_scale, .. } => {
                let (text_embeds, image_embeds) = match (&text_out, &vision_out) {
                    (None, None) => {
                        return Err(Error::Input(
                            "missing inputs: CLIPModel takes input_ids, pixel_values or both".into(),
                        ))
                    }
                    (t, v) => (
                        t.as_ref().map(|t| text_projection.forward(&t.pooled)).transpose()?,
                        v.as_ref().map(|v| visual_projection.forward(&v.pooled)).transpose()?,
                    ),
                };
                let normed =
                    |e: &Tensor| -> Result<Tensor> { Ok(e.div(&e.square()?.sum([-1], true)?.sqrt()?)?) };
                let text_normed = text_embeds.as_ref().map(normed).transpose()?;
                let image_normed = image_embeds.as_ref().map(normed).transpose()?;
                if let (Some(t), Some(i)) = (&text_normed, &image_normed) {
                    let per_text = t.matmul(&i.t()?)?.mul(&logit_scale.exp()?)?;
                    out.push(("logits_per_image".into(), per_text.t()?.contiguous()?));
                    out.push(("logits_per_text".into(), per_text));
                }
                if let (Some(normed), Some(o), Some(e)) = (text_normed, text_out, text_embeds) {
                    out.push(("text_embeds".into(), normed));
                    push_tower(&mut out, "text_model_output.", o, e);
                }
                if let (Some(normed), Some(o), Some(e)) = (image_normed, vision_out, image_embeds) {
                    out.push(("image_embeds".into(), normed));
                    push_tower(&mut out, "vision_model_output.", o, e);
                }
            }
            Clip::Text { projection, .. } | Clip::Vision { projection, .. } => {
                let o = text_out.or(vision_out).expect("the model's tower ran");
                match projection {
                    Some(p) => {
                        let name =
                            if matches!(self, Clip::Text { .. }) { "text_embeds" } else { "image_embeds" };
                        out.push((name.into(), p.forward(&o.pooled)?));
                        out.push(("last_hidden_state".into(), o.last_hidden_state));
                        let hs = o.hidden_states.into_iter().enumerate();
                        out.extend(hs.map(|(i, h)| (format!("hidden_states.{i}"), h)));
                    }
                    None => {
                        let pooled = o.pooled.clone();
                        push_tower(&mut out, "", o, pooled);
                    }
                }
            }
            Clip::ImageClassifier { classifier, .. } => {
                let o = vision_out.expect("the model's tower ran");
                let patches = o.last_hidden_state.dims()[1] - 1;
                let mean = o.last_hidden_state.narrow(1, 1, patches)?.mean([1], false)?;
                let logits = match classifier {
                    Some(c) => c.forward(&mean)?,
                    None => mean,
                };
                out.push(("logits".into(), logits));
                let hs = o.hidden_states.into_iter().enumerate();
                out.extend(hs.map(|(i, h)| (format!("hidden_states.{i}"), h)));
            }
        }
        Ok(out)
    }

    /// The text tower on `inputs`' `input_ids`, `attention_mask` and `position_ids`, checked.
    fn run_text(
        &self,
        text: &ClipTextTower,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<TowerOutput> {
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        for (name, t) in inputs.iter().filter(|(k, _)| *k != "pixel_values") {
            check_input_dtype(name, t)?;
        }
        let text_inputs: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| *k != "pixel_values")
            .map(|(k, t)| (k.clone(), t.clone()))
            .collect();
        check_input_shapes(&text_inputs)?;
        let ids = ids.to_dtype(DType::I64)?;
        let &[b, s] = ids.dims() else { unreachable!("checked as [batch, seq]") };
        let mask = inputs.get("attention_mask").map(|m| m.ne(0.0)?.to_dtype(DType::I64)).transpose()?;
        let positions = inputs
            .get("position_ids")
            .map(|p| p.to_dtype(DType::I64)?.broadcast_to(&[b, s])?.contiguous())
            .transpose()?;
        text.forward(&ids, mask.as_ref(), positions.as_ref(), output_hidden_states)
    }

    /// The text tower's `last_hidden_state` (`None` for the image-only models).
    pub fn text_last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
    ) -> Result<Option<Tensor>> {
        let Some(text) = self.text() else { return Ok(None) };
        let mut inputs = BTreeMap::from([("input_ids".to_string(), input_ids.clone())]);
        if let Some(m) = attention_mask {
            inputs.insert("attention_mask".into(), m.clone());
        }
        Ok(Some(self.run_text(text, &inputs, false)?.last_hidden_state))
    }
}

//! DPT (model type `dpt`: `DPTModel`, `DPTForDepthEstimation`, `DPTForSemanticSegmentation`;
//! Intel/dpt-large, Intel/dpt-large-ade): a ViT whose positions are resampled bilinearly to each
//! image's grid; the outputs of the blocks in `backbone_out_indices` lose their class token (read
//! out by projection, addition or not at all), are reassembled into maps at four scales and fused
//! coarse to fine, each fused map doubled. The depth head doubles the finest map again and reads
//! one channel of ReLU'd depth (`predicted_depth` `[batch, height, width]`); the segmentation
//! head classifies each position of it, then doubles it (`logits` `[batch, labels, height,
//! width]`). DPT-Hybrid (`is_hybrid`; Intel/dpt-hybrid-midas) takes its tokens from a BiT
//! backbone ([`super::hybrid`]) and gives the neck two of the backbone's maps in place of its first
//! two blocks' (`neck_ignore_stages` `[0, 1]`; the later blocks from `backbone_out_indices[2:]`).
//! The depth model on a DINOv2 `backbone_config` (facebook/dpt-dinov2-small-nyu) reads the
//! backbone's normed tokens of the blocks its `out_indices` name (the base model and segmenter
//! build DPT's own ViT whatever `backbone_config` says, as transformers does).
//!
//! Images need not be square: the token maps take the image's grid of patches, where
//! transformers reshapes them to a square (and fails unless their count is one).

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::depth_anything::{backbone_config, index_from_end, out_indices};
use super::hybrid::HybridEmbeddings;
use super::neck::{factors, token_map, FusionStyle, Neck, Reassemble, Upsample};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, BatchNorm2d, Conv2d, Linear};
use crate::models::classification::num_labels;
use crate::models::dinov2::Dinov2Model;
use crate::models::vision::{pixels_of, size_pair};
use crate::models::vit::{ViTConfig, ViTModel};
use crate::weights::Weights;

/// What becomes of the class token before reassembly (`readout_type`).
#[derive(Debug, Clone)]
enum Readout {
    /// dropped
    Ignore,
    /// added to every patch token
    Add,
    /// concatenated to every patch token and projected back (one projection per block read)
    Project(Vec<Linear>),
}

/// What sits on the neck.
#[derive(Debug, Clone)]
enum Head {
    /// `DPTForDepthEstimation`'s: an optional projection (with ReLU), then conv, ×2, conv, ReLU,
    /// conv to one channel, ReLU
    Depth { projection: Option<Conv2d>, convs: [Conv2d; 3] },
    /// `DPTForSemanticSegmentation`'s: conv (no bias), batch norm, ReLU, conv to the labels, ×2
    Segmentation { conv: Conv2d, norm: BatchNorm2d, classifier: Conv2d },
}

/// The neck and head of DPT's dense-prediction models.
#[derive(Debug, Clone)]
struct Dense {
    /// the hidden states the neck reads (0: the embeddings, `i`: block `i`'s output), after the
    /// maps DPT-Hybrid's backbone gives it
    out_indices: Vec<usize>,
    readout: Readout,
    act: Activation,
    reassemble: Vec<Reassemble>,
    neck: Neck,
    head: Head,
    head_in: usize,
}

/// What reads the image.
#[derive(Debug, Clone)]
enum Encoder {
    /// DPT's own ViT; DPT-Hybrid's takes its tokens from a BiT backbone
    Vit { vit: Box<ViTModel>, hybrid: Option<Box<HybridEmbeddings>> },
    /// `DPTForDepthEstimation` on a DINOv2 `backbone_config` (facebook/dpt-dinov2-small-nyu): its
    /// hidden states normed with its final norm (`apply_layernorm`)
    Dinov2 { model: Box<Dinov2Model>, apply_layernorm: bool, patch: usize },
}

/// transformers' `DPTModel`, `DPTForDepthEstimation` or `DPTForSemanticSegmentation`.
#[derive(Debug, Clone)]
pub struct Dpt {
    encoder: Encoder,
    /// `None` for `DPTModel`
    dense: Option<Box<Dense>>,
}

impl Dpt {
    /// Loads `arch` from `cfg` and `weights` (the ViT under `dpt.` or, for `DPTModel`, at the top).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let is_hybrid = cfg.bool_or("is_hybrid", false)?;
        let mut c = ViTConfig::from_config(cfg)?;
        // (transformers' depth model alone reads a non-hybrid `backbone_config`; its base model
        // and segmenter build DPT's own ViT whatever it says.)
        let on_backbone = !is_hybrid && cfg.get("backbone_config").is_some_and(|v| !v.is_null());
        if on_backbone && arch == "DPTForDepthEstimation" {
            return Self::load_on_dinov2(cfg, weights, &c);
        }
        // (DPT's images default to 384 pixels.)
        c.image = crate::models::vision::size_pair(cfg, "image_size", 384)?;
        let vars = weights.base_vars("dpt");
        let (vit, hybrid) = match is_hybrid {
            false => (ViTModel::load_at(&vars, c.clone())?, None),
            true => {
                if cfg.str_or("readout_type", "project")? != "project" {
                    return Err(Error::Config("DPT-Hybrid needs readout_type \"project\"".into()));
                }
                // (transformers' hybrid reads `patch_size[0]` pixels per token both ways.)
                let hybrid = HybridEmbeddings::load(cfg, &vars, c.hidden, (c.patch.0, c.patch.0))?;
                (ViTModel::load_without_patches(&vars, c.clone())?, Some(hybrid))
            }
        };
        let vit = vit.resampling_positions();
        let dense = match arch {
            "DPTModel" => {
                return Ok(Dpt {
                    encoder: Encoder::Vit { vit: Box::new(vit), hybrid: hybrid.map(Box::new) },
                    dense: None,
                })
            }
            "DPTForDepthEstimation" | "DPTForSemanticSegmentation" => Dense::load(
                arch == "DPTForDepthEstimation",
                cfg,
                weights,
                (&c, c.hidden),
                hybrid.as_ref(),
                None,
            )?,
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Dpt {
            encoder: Encoder::Vit { vit: Box::new(vit.without_pooler()), hybrid: hybrid.map(Box::new) },
            dense: Some(Box::new(dense)),
        })
    }

    /// `DPTForDepthEstimation` on a DINOv2 `backbone_config` (`backbone.*`, `neck.*`, `head.*`).
    fn load_on_dinov2(cfg: &Config, weights: &Weights, c: &ViTConfig) -> Result<Self> {
        let backbone_cfg = backbone_config(cfg, "DPT", "dinov2", serde_json::Value::Null)?;
        if backbone_cfg.bool_or("reshape_hidden_states", true)? {
            return Err(Error::Config(
                "DPT reads the backbone's tokens: its backbone_config needs \"reshape_hidden_states\": false"
                    .into(),
            ));
        }
        let layers = match backbone_cfg.get("num_hidden_layers") {
            Some(_) => backbone_cfg.layers("num_hidden_layers")?,
            None => 12,
        };
        let picked = out_indices(&backbone_cfg, layers)?;
        let hidden = backbone_cfg.usize_or("hidden_size", 768)?;
        let (patch, width) = size_pair(&backbone_cfg, "patch_size", 14)?;
        if patch != width {
            return Err(Error::Unsupported(format!("a DINOv2 backbone of {patch}×{width} patches")));
        }
        let dense = Dense::load(true, cfg, weights, (c, hidden), None, Some(picked))?;
        let model = Dinov2Model::load_backbone(&weights.vars("backbone"), &backbone_cfg)?;
        let apply_layernorm = backbone_cfg.bool_or("apply_layernorm", true)?;
        Ok(Dpt {
            encoder: Encoder::Dinov2 { model: Box::new(model), apply_layernorm, patch },
            dense: Some(Box::new(dense)),
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        match &self.encoder {
            Encoder::Vit { vit, .. } => vit.device(),
            Encoder::Dinov2 { model, .. } => model.device(),
        }
    }

    /// `pixel_values` → `last_hidden_state` and `pooler_output` (`DPTModel`; DPT-Hybrid's also
    /// `intermediate_activations.*`, the backbone's two maps), `predicted_depth` or `logits`; with
    /// `output_hidden_states` the ViT's `hidden_states.*`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let (vit, hybrid) = match &self.encoder {
            Encoder::Vit { vit, hybrid } => (vit, hybrid),
            Encoder::Dinov2 { model, apply_layernorm, patch } => {
                let x = pixels_of(inputs, model.dtype(), self.device(), model.image_shape()[0])?;
                let (rows, cols) = grid(&x, (*patch, *patch))?;
                let hidden_states = model.forward(&x, true)?.hidden_states;
                let dense = self
                    .dense
                    .as_ref()
                    .ok_or_else(|| Error::Config("DPT on a backbone has a head".into()))?;
                // (Only the hidden states the neck reads are normed.)
                let normed = hidden_states
                    .iter()
                    .enumerate()
                    .map(|(i, h)| match *apply_layernorm && dense.out_indices.contains(&i) {
                        true => model.final_norm(h),
                        false => Ok(h.clone()),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let mut out = vec![dense.forward(&normed, rows, cols, Vec::new())?];
                if output_hidden_states {
                    out.extend(
                        hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)),
                    );
                }
                return Ok(out);
            }
        };
        let c = vit.config();
        let x = pixels_of(inputs, vit.dtype(), self.device(), c.channels)?;
        let (mut rows, mut cols) = grid(&x, c.patch)?;
        let record = self.dense.is_some() || output_hidden_states;
        let (enc, backbone_maps) = match hybrid {
            None => (vit.forward(&x, record)?, Vec::new()),
            Some(hybrid) => {
                let (tokens, grid, maps) = hybrid.forward(&x)?;
                (rows, cols) = grid;
                (vit.forward_patches(tokens, rows, cols, record)?, maps.to_vec())
            }
        };
        let mut out = match &self.dense {
            None => {
                let mut out = vec![("last_hidden_state".to_string(), enc.last_hidden_state.clone())];
                if let Some(p) = &enc.pooler_output {
                    out.push(("pooler_output".to_string(), p.clone()));
                }
                out.extend(
                    backbone_maps
                        .into_iter()
                        .enumerate()
                        .map(|(i, m)| (format!("intermediate_activations.{i}"), m)),
                );
                out
            }
            Some(dense) => vec![dense.forward(&enc.hidden_states, rows, cols, backbone_maps)?],
        };
        if output_hidden_states {
            out.extend(
                enc.hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)),
            );
        }
        Ok(out)
    }
}

/// The `rows × cols` grid of `patch` patches in `x` `[batch, channels, height, width]`; an error
/// where none fits.
fn grid(x: &Tensor, patch: (usize, usize)) -> Result<(usize, usize)> {
    let (rows, cols) = (x.dims()[2] / patch.0, x.dims()[3] / patch.1);
    if rows == 0 || cols == 0 {
        return Err(Error::Input(format!(
            "pixel_values of {}×{} are smaller than a {}×{} patch",
            x.dims()[2],
            x.dims()[3],
            patch.0,
            patch.1
        )));
    }
    Ok((rows, cols))
}

impl Dense {
    /// The neck and head of `cfg` on tokens `h` wide, reading the blocks after `hybrid`'s two
    /// maps, if any, or (a DINOv2 backbone's) the hidden states `picked`.
    fn load(
        depth: bool,
        cfg: &Config,
        weights: &Weights,
        (c, h): (&ViTConfig, usize),
        hybrid: Option<&HybridEmbeddings>,
        picked: Option<Vec<usize>>,
    ) -> Result<Self> {
        let sizes = cfg.usize_list_or("neck_hidden_sizes", &[96, 192, 384, 768], 1)?;
        let factors = factors(cfg, "reassemble_factors", &[4.0, 2.0, 1.0, 0.5])?;
        // transformers keeps the blocks in `backbone_out_indices` (DPT-Hybrid: from the third
        // on), in order (others name none).
        let lead = if hybrid.is_some() { 2 } else { 0 };
        let wanted = cfg.usize_list_or("backbone_out_indices", &[2, 5, 8, 11], 0)?;
        let wanted = wanted.get(lead..).unwrap_or_default();
        let (out_indices, of) = match picked {
            Some(picked) => (picked, "its out_indices"),
            None => (
                (0..c.layers).filter(|i| wanted.contains(i)).map(|i| i + 1).collect(),
                "backbone_out_indices",
            ),
        };
        if lead + out_indices.len() != sizes.len() || factors.len() < sizes.len() {
            return Err(Error::Config(format!(
                "the backbone hands on {} hidden states ({of}){}, but the neck has {} neck_hidden_sizes and {} reassemble_factors",
                out_indices.len(),
                if lead > 0 { " (and DPT-Hybrid's backbone 2 maps)" } else { "" },
                sizes.len(),
                factors.len()
            )));
        }
        if hybrid.is_some() {
            // (Its first two maps are the backbone's, never reassembled: the neck must skip them.)
            let ignored = cfg.usize_list_or("neck_ignore_stages", &[0, 1], 0)?;
            let skipped: Vec<usize> = (0..sizes.len()).filter(|i| ignored.contains(i)).collect();
            if skipped != [0, 1] {
                return Err(Error::Unsupported(format!(
                    "DPT-Hybrid with neck_ignore_stages {ignored:?} is not supported (supported: [0, 1])"
                )));
            }
        }
        if let Some(widths) = hybrid.map(HybridEmbeddings::skip_widths) {
            if widths[..] != sizes[..2] {
                return Err(Error::Config(format!(
                    "DPT-Hybrid's backbone maps are {widths:?} wide, but neck_hidden_sizes start {:?}",
                    &sizes[..2]
                )));
            }
        }
        let neck_vars = weights.vars("neck");
        let stage = neck_vars.pp("reassemble_stage");
        let readout = match cfg.str_or("readout_type", "project")? {
            "ignore" => Readout::Ignore,
            "add" => Readout::Add,
            "project" => Readout::Project(
                (lead..sizes.len())
                    .map(|i| {
                        Linear::load(&stage.pp("readout_projects").pp(i).pp(0), h.saturating_mul(2), h, true)
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            other => {
                return Err(Error::Config(format!(
                    "readout_type must be \"ignore\", \"add\" or \"project\", got \"{other}\""
                )))
            }
        };
        let reassemble = (lead..sizes.len())
            .map(|i| Reassemble::load(&stage.pp("layers").pp(i), h, sizes[i], factors[i]))
            .collect::<Result<Vec<_>>>()?;
        let width = cfg.usize_or("fusion_hidden_size", 256)?;
        let batch_norm = cfg.bool_or("use_batch_norm_in_fusion_residual", false)?;
        let bias = match cfg.get("use_bias_in_fusion_residual") {
            None | Some(serde_json::Value::Null) => !batch_norm,
            Some(_) => cfg.bool_or("use_bias_in_fusion_residual", true)?,
        };
        let style = FusionStyle { batch_norm, bias, upsample: Upsample::Double };
        let v = weights.vars("head");
        let conv = |name: &str, io: (usize, usize), k: usize, bias: bool| {
            Conv2d::load(&v.pp(name), io, k, (1, k / 2, 1), bias)
        };
        let head = match depth {
            true => Head::Depth {
                // (transformers' projection is 256 wide whatever the fusion width.)
                projection: match cfg.bool_or("add_projection", false)? {
                    true => Some(conv("projection", (256, 256), 3, true)?),
                    false => None,
                },
                convs: [
                    conv("head.0", (width, width / 2), 3, true)?,
                    conv("head.2", (width / 2, 32), 3, true)?,
                    conv("head.4", (32, 1), 1, true)?,
                ],
            },
            false => Head::Segmentation {
                conv: conv("head.0", (width, width), 3, false)?,
                norm: BatchNorm2d::load(&v.pp("head.1"), width, 1e-5)?,
                classifier: conv("head.4", (width, num_labels(cfg)?), 1, true)?,
            },
        };
        Ok(Dense {
            out_indices,
            readout,
            act: c.act,
            reassemble,
            neck: Neck::load(&neck_vars, &sizes, width, style)?,
            head,
            head_in: index_from_end(cfg, "head_in_index", sizes.len())?,
        })
    }

    /// The ViT's `hidden_states` (the embeddings, then every block's output) on a `rows × cols`
    /// grid, after DPT-Hybrid's `backbone_maps` (else none) → the head's named output.
    fn forward(
        &self,
        hidden_states: &[Tensor],
        rows: usize,
        cols: usize,
        mut backbone_maps: Vec<Tensor>,
    ) -> Result<(String, Tensor)> {
        for (i, &index) in self.out_indices.iter().enumerate() {
            let tokens = self.read_out(i, &hidden_states[index])?;
            backbone_maps.push(self.reassemble[i].forward(&token_map(&tokens, rows, cols)?)?);
        }
        let maps = backbone_maps;
        let fused = self.neck.forward(&maps)?;
        let map = &fused[self.head_in];
        let double = |x: &Tensor| -> Result<Tensor> {
            let size = [x.dims()[2] * 2, x.dims()[3] * 2];
            Ok(x.interpolate(Some(&size), None, "bilinear", Some(true))?)
        };
        Ok(match &self.head {
            Head::Depth { projection, convs: [c1, c2, c3] } => {
                let x = match projection {
                    Some(p) => p.forward(map)?.relu()?,
                    None => map.clone(),
                };
                let x = c2.forward(&double(&c1.forward(&x)?)?)?.relu()?;
                ("predicted_depth".to_string(), c3.forward(&x)?.relu()?.squeeze_dims(1)?)
            }
            Head::Segmentation { conv, norm, classifier } => {
                let x = norm.forward(&conv.forward(map)?)?.relu()?;
                ("logits".to_string(), double(&classifier.forward(&x)?)?)
            }
        })
    }

    /// Block read `i`'s tokens `[batch, 1 + patches, hidden]` with the class token read out (the class
    /// token's place kept for [`token_map`]).
    fn read_out(&self, i: usize, x: &Tensor) -> Result<Tensor> {
        let n = x.dims()[1] - 1;
        let cls = x.narrow(1, 0, 1)?;
        let patches = x.narrow(1, 1, n)?;
        let patches = match &self.readout {
            Readout::Ignore => patches,
            Readout::Add => patches.add(&cls)?,
            Readout::Project(projections) => {
                let both = Tensor::cat(&[&patches, &cls.expand([x.dims()[0], n, x.dims()[2]])?], 2)?;
                self.act.forward(&projections[i].forward(&both)?)?
            }
        };
        Ok(Tensor::cat(&[&cls, &patches], 1)?)
    }
}

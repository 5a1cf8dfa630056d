//! YOLOS (model type `yolos`: `YolosModel`, `YolosForObjectDetection`; hustvl/yolos-small): a ViT
//! whose sequence is the class token, the patches and `num_detection_tokens` learned detection
//! tokens. Its positions are stored for the `image_size` grid and resampled bicubically to every
//! image's grid; with `use_mid_position_embeddings` every block but the last adds its own
//! resampled table to its output. The detector reads the detection tokens' final states with two
//! three-layer MLPs: `logits` `[batch, tokens, labels + 1]` (the last "no object") and
//! `pred_boxes` `[batch, tokens, 4]` (centre x, centre y, width, height, each in [0, 1]).

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::vision::{pixels_of, size_pair, PatchEmbedding};
use super::vit::{load_hub_layer, ViTConfig};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::{Vars, Weights};

/// `YolosMLPPredictionHead`: linear layers with ReLU between.
#[derive(Debug, Clone)]
struct Mlp(Vec<Linear>);

impl Mlp {
    fn load(v: &Vars<'_>, hidden: usize, out: usize) -> Result<Self> {
        let v = v.pp("layers");
        Ok(Mlp(vec![
            Linear::load(&v.pp(0), hidden, hidden, true)?,
            Linear::load(&v.pp(1), hidden, hidden, true)?,
            Linear::load(&v.pp(2), hidden, out, true)?,
        ]))
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut x = x.clone();
        for (i, layer) in self.0.iter().enumerate() {
            x = layer.forward(&x)?;
            if i + 1 < self.0.len() {
                x = x.relu()?;
            }
        }
        Ok(x)
    }
}

/// transformers' `YolosModel`, or `YolosForObjectDetection` with its two heads.
#[derive(Debug, Clone)]
pub struct Yolos {
    c: ViTConfig,
    patches: PatchEmbedding,
    /// `[1, 1, hidden]`
    cls_token: Tensor,
    /// `[1, tokens, hidden]`
    detection_tokens: Tensor,
    /// `[1, 1 + patches + tokens, hidden]`
    positions: Tensor,
    /// `[blocks - 1, 1, 1 + patches + tokens, hidden]`
    mid_positions: Option<Tensor>,
    layers: Vec<PreNormEncoderLayer>,
    layernorm: LayerNorm,
    pooler: Option<Linear>,
    /// the class and box heads
    heads: Option<(Mlp, Mlp)>,
    /// the grid of patches the positions are stored for
    grid: (usize, usize),
}

impl Yolos {
    /// Loads `arch` from `cfg` and `weights` (the ViT under `vit.` or, for the base model, at the
    /// top).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let mut c = ViTConfig::from_config(cfg)?;
        c.image = match cfg.get("image_size") {
            None | Some(serde_json::Value::Null) => (512, 864),
            Some(_) => size_pair(cfg, "image_size", 0)?,
        };
        // (transformers resamples with an integer `patch_size`.)
        let patch = cfg.usize_or("patch_size", 16)?;
        c.patch = (patch, patch);
        let tokens = cfg.usize_or("num_detection_tokens", 100)?;
        if tokens == 0 {
            return Err(Error::Config(
                "num_detection_tokens must be positive (transformers fails on none)".into(),
            ));
        }
        let v = weights.base_vars("vit");
        let e = v.pp("embeddings");
        let patches = PatchEmbedding::load(
            &e.pp("patch_embeddings.projection"),
            c.hidden,
            c.channels,
            c.patch,
            c.image,
            true,
        )?
        .any_size();
        let grid = (c.image.0 / patch, c.image.1 / patch);
        let len = grid.0.saturating_mul(grid.1).saturating_add(tokens).saturating_add(1);
        let mid_positions = match cfg.bool_or("use_mid_position_embeddings", true)? {
            true if c.layers > 1 => {
                // (Its sequence counts `image height · width / patch²` patches.)
                let mid_len = (c.image.0.saturating_mul(c.image.1) / patch.saturating_mul(patch))
                    .saturating_add(tokens)
                    .saturating_add(1);
                let shape = [c.layers - 1, 1, mid_len, c.hidden];
                let names =
                    ["encoder.mid_position_embeddings", "encoder.interpolation.mid_position_embeddings"];
                let name = names.into_iter().find(|n| v.contains(n)).unwrap_or(names[0]);
                let mid = v.get(name, &shape)?;
                if mid_len != len {
                    return Err(Error::Config(format!(
                        "image_size {:?} is not a whole grid of {patch}-pixel patches: transformers cannot resample its mid-position table",
                        c.image
                    )));
                }
                Some(mid)
            }
            _ => None,
        };
        // (YOLOS keeps the Hub's block names in transformers 5.)
        let layers = (0..c.layers)
            .map(|i| load_hub_layer(&v.pp("encoder.layer").pp(i), &c))
            .collect::<Result<Vec<_>>>()?;
        let (pooler, heads) = match arch {
            "YolosModel" => match v.contains("pooler.dense.weight") {
                true => (Some(Linear::load(&v.pp("pooler.dense"), c.hidden, c.hidden, true)?), None),
                false => (None, None),
            },
            "YolosForObjectDetection" => {
                let labels = super::classification::num_labels(cfg)?;
                let heads = (
                    Mlp::load(&weights.vars("class_labels_classifier"), c.hidden, labels.saturating_add(1))?,
                    Mlp::load(&weights.vars("bbox_predictor"), c.hidden, 4)?,
                );
                (None, Some(heads))
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Yolos {
            patches,
            cls_token: e.get("cls_token", &[1, 1, c.hidden])?,
            detection_tokens: e.get("detection_tokens", &[1, tokens, c.hidden])?,
            positions: e.get("position_embeddings", &[1, len, c.hidden])?,
            mid_positions,
            layers,
            layernorm: LayerNorm::load(&v.pp("layernorm"), c.hidden, c.eps)?,
            pooler,
            heads,
            grid,
            c,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.positions.device()
    }

    /// `table` `[n, 1 + patches + tokens, hidden]` with its patches' part resampled bicubically
    /// from the stored grid to `rows × cols`.
    fn resample(&self, table: &Tensor, (rows, cols): (usize, usize)) -> Result<Tensor> {
        let (n, len, d) = (table.dims()[0], table.dims()[1], table.dims()[2]);
        let tokens = self.detection_tokens.dims()[1];
        let stored = len - 1 - tokens;
        let grid = table
            .narrow(1, 1, stored)?
            .transpose(1, 2)?
            .reshape([n, d, self.grid.0, self.grid.1])?
            .interpolate(Some(&[rows, cols]), None, "bicubic", Some(false))?
            .flatten(2, -1)?
            .transpose(1, 2)?;
        Ok(Tensor::cat(
            &[&table.narrow(1, 0, 1)?, &grid, &table.narrow(1, (1 + stored) as isize, tokens)?],
            1,
        )?)
    }

    /// `pixel_values` → `last_hidden_state` and `pooler_output` (the base model) or `logits` and
    /// `pred_boxes` (the detector, with `last_hidden_state`); with `output_hidden_states` the
    /// embeddings and every block's output (before its mid-position table).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let c = &self.c;
        let x = pixels_of(inputs, self.patches.dtype(), self.device(), c.channels)?;
        let grid = (x.dims()[2] / c.patch.0, x.dims()[3] / c.patch.1);
        let patches = self.patches.forward(&x)?;
        let b = patches.dims()[0];
        let cls = self.cls_token.expand([b, 1, c.hidden])?;
        let detection = self.detection_tokens.expand([b, self.detection_tokens.dims()[1], c.hidden])?;
        let mut h =
            Tensor::cat(&[&cls, &patches, &detection], 1)?.add(&self.resample(&self.positions, grid)?)?;
        let mid = self
            .mid_positions
            .as_ref()
            .map(|m| {
                let (blocks, len) = (m.dims()[0], m.dims()[2]);
                let flat = m.reshape([blocks, len, c.hidden])?;
                self.resample(&flat, grid)
            })
            .transpose()?;
        let mut hidden_states = Vec::new();
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        for (i, layer) in self.layers.iter().enumerate() {
            h = layer.forward(&h, None, c.heads, c.act)?;
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            if let Some(m) = mid.as_ref().filter(|m| i < m.dims()[0]) {
                h = h.add(&m.narrow(0, i as isize, 1)?)?;
            }
        }
        let last = self.layernorm.forward(&h)?;
        let mut out = match &self.heads {
            None => {
                let mut out = vec![("last_hidden_state".to_string(), last.clone())];
                if let Some(p) = &self.pooler {
                    out.push(("pooler_output".to_string(), p.forward(&last.select(1, 0)?)?.tanh()?));
                }
                out
            }
            Some((classes, boxes)) => {
                let tokens = self.detection_tokens.dims()[1];
                let n = last.dims()[1];
                let det = last.narrow(1, (n - tokens) as isize, tokens)?;
                vec![
                    ("logits".to_string(), classes.forward(&det)?),
                    ("pred_boxes".to_string(), boxes.forward(&det)?.sigmoid()?),
                    ("last_hidden_state".to_string(), last),
                ]
            }
        };
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}

//! Depth Anything (model type `depth_anything`: `DepthAnythingForDepthEstimation`;
//! LiheYoung/depth-anything-small-hf, depth-anything/Depth-Anything-V2-*-hf and their metric
//! fine-tunes): a DINOv2 backbone whose chosen blocks' outputs (`out_indices`, each after the final
//! norm unless `apply_layernorm` is false) go through the DPT neck, fused maps upsampled to the
//! next finer map's size, and a head of three convolutions that upsamples to the image's patch
//! grid times the patch size:
//! `predicted_depth` `[batch, height, width]`, relative (ReLU) or metric (sigmoid times
//! `max_depth`). `hidden_states.*` are the backbone's embeddings and every block's output.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};
use serde_json::{Map, Value};

use super::neck::{factors, token_map, FusionStyle, Neck, Reassemble, Upsample};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Conv2d;
use crate::models::dinov2::Dinov2Model;
use crate::models::vision::{pixels_of, size_pair};
use crate::weights::Weights;

/// The depth head.
#[derive(Debug, Clone)]
struct DepthHead {
    conv1: Conv2d,
    conv2: Conv2d,
    conv3: Conv2d,
    /// sigmoid (metric) instead of ReLU (relative)
    metric: bool,
    max_depth: f64,
}

impl DepthHead {
    /// The finest fused `map` → `[batch, rows · patch, cols · patch]`.
    fn forward(&self, map: &Tensor, size: [usize; 2]) -> Result<Tensor> {
        let x = self.conv1.forward(map)?;
        let x = x.interpolate(Some(&size), None, "bilinear", Some(true))?;
        let x = self.conv3.forward(&self.conv2.forward(&x)?.relu()?)?;
        let x = match self.metric {
            true => x.sigmoid()?,
            false => x.relu()?,
        };
        Ok(x.mul(self.max_depth)?.squeeze_dims(1)?)
    }
}

/// transformers' `DepthAnythingForDepthEstimation`.
#[derive(Debug, Clone)]
pub struct DepthAnything {
    backbone: Dinov2Model,
    /// the backbone's hidden states the neck reads (0: the embeddings)
    out_indices: Vec<usize>,
    /// whether they are normed first (`apply_layernorm`)
    apply_layernorm: bool,
    reassemble: Vec<Reassemble>,
    neck: Neck,
    head: DepthHead,
    /// the head's input among the fused maps (`head_in_index`, from the end when negative)
    head_in: usize,
    patch: usize,
    channels: usize,
}

impl DepthAnything {
    /// The model from `cfg` and `weights` (`backbone.`, `neck.`, `head.`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let defaults = serde_json::json!({
            "model_type": "dinov2", "image_size": 518, "hidden_size": 384, "num_attention_heads": 6,
            "out_indices": [9, 10, 11, 12], "reshape_hidden_states": false
        });
        let backbone_cfg = backbone_config(cfg, "Depth Anything", "dinov2", defaults)?;
        let layers = match backbone_cfg.get("num_hidden_layers") {
            Some(_) => backbone_cfg.layers("num_hidden_layers")?,
            None => 12,
        };
        let out_indices = out_indices(&backbone_cfg, layers)?;
        if backbone_cfg.bool_or("reshape_hidden_states", true)? {
            return Err(Error::Config(
                "Depth Anything reads the backbone's tokens: its backbone_config needs \"reshape_hidden_states\": false"
                    .into(),
            ));
        }
        let hidden = backbone_cfg.usize_or("hidden_size", 768)?;
        let patch = cfg.usize_or("patch_size", 14)?;
        let backbone_patch = size_pair(&backbone_cfg, "patch_size", 14)?;
        if (patch, patch) != backbone_patch {
            return Err(Error::Config(format!(
                "patch_size ({patch}) differs from the backbone's ({backbone_patch:?})"
            )));
        }
        let reassemble_hidden = cfg.usize_or("reassemble_hidden_size", 384)?;
        if reassemble_hidden != hidden {
            return Err(Error::Config(format!(
                "reassemble_hidden_size ({reassemble_hidden}) differs from the backbone's hidden_size ({hidden})"
            )));
        }
        let sizes = cfg.usize_list_or("neck_hidden_sizes", &[48, 96, 192, 384], 1)?;
        let factors = factors(cfg, "reassemble_factors", &[4.0, 2.0, 1.0, 0.5])?;
        if out_indices.len() != sizes.len() || factors.len() < sizes.len() {
            return Err(Error::Config(format!(
                "the backbone hands on {} maps (out_indices), but the neck has {} neck_hidden_sizes and {} reassemble_factors",
                out_indices.len(),
                sizes.len(),
                factors.len()
            )));
        }
        let width = cfg.usize_or("fusion_hidden_size", 64)?;
        let head_hidden = cfg.usize_or("head_hidden_size", 32)?;
        let metric = match cfg.str_or("depth_estimation_type", "relative")? {
            "relative" => false,
            "metric" => true,
            other => {
                return Err(Error::Config(format!(
                    "depth_estimation_type must be \"relative\" or \"metric\", got \"{other}\""
                )))
            }
        };
        let max_depth = cfg
            .nullable_f64_or("max_depth", Some(1.0))?
            .ok_or_else(|| Error::Config("max_depth must be a number".into()))?;
        let head_in = index_from_end(cfg, "head_in_index", sizes.len())?;
        let neck_vars = weights.vars("neck");
        let reassemble = (0..sizes.len())
            .map(|i| {
                let v = neck_vars.pp("reassemble_stage.layers").pp(i);
                Reassemble::load(&v, hidden, sizes[i], factors[i])
            })
            .collect::<Result<Vec<_>>>()?;
        let style = FusionStyle { batch_norm: false, bias: true, upsample: Upsample::ToNext };
        let h = weights.vars("head");
        let half = width / 2;
        Ok(DepthAnything {
            backbone: Dinov2Model::load_backbone(&weights.vars("backbone"), &backbone_cfg)?,
            out_indices,
            apply_layernorm: backbone_cfg.bool_or("apply_layernorm", true)?,
            reassemble,
            neck: Neck::load(&neck_vars, &sizes, width, style)?,
            head: DepthHead {
                conv1: Conv2d::load(&h.pp("conv1"), (width, half), 3, (1, 1, 1), true)?,
                conv2: Conv2d::load(&h.pp("conv2"), (half, head_hidden), 3, (1, 1, 1), true)?,
                conv3: Conv2d::load(&h.pp("conv3"), (head_hidden, 1), 1, (1, 0, 1), true)?,
                metric,
                max_depth,
            },
            head_in,
            patch,
            channels: backbone_cfg.usize_or("num_channels", 3)?,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.backbone.device()
    }

    /// `pixel_values` `[batch, channels, height, width]` → `predicted_depth` and, with
    /// `output_hidden_states`, the backbone's `hidden_states.*`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.backbone.dtype(), self.device(), self.channels)?;
        let (rows, cols) = (x.dims()[2] / self.patch, x.dims()[3] / self.patch);
        if rows == 0 || cols == 0 {
            return Err(Error::Input(format!(
                "pixel_values of {}×{} are smaller than a {p}×{p} patch",
                x.dims()[2],
                x.dims()[3],
                p = self.patch
            )));
        }
        let hidden_states = self.backbone.forward(&x, true)?.hidden_states;
        let maps = self
            .out_indices
            .iter()
            .zip(&self.reassemble)
            .map(|(&i, r)| {
                let tokens = match self.apply_layernorm {
                    true => self.backbone.final_norm(&hidden_states[i])?,
                    false => hidden_states[i].clone(),
                };
                r.forward(&token_map(&tokens, rows, cols)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let fused = self.neck.forward(&maps)?;
        let depth = self.head.forward(&fused[self.head_in], [rows * self.patch, cols * self.patch])?;
        let mut out = vec![("predicted_depth".to_string(), depth)];
        if output_hidden_states {
            out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        }
        Ok(out)
    }
}

/// `owner`'s `backbone_config` (absent or null: `defaults`, transformers' default backbone),
/// which must be of `model_type` (the type assumed where it names none).
pub(super) fn backbone_config(
    cfg: &Config,
    owner: &str,
    model_type: &str,
    defaults: Value,
) -> Result<Config> {
    let mut map = match cfg.get("backbone_config") {
        None | Some(Value::Null) => match defaults {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(Error::Config(format!("\"backbone_config\" must be an object, got {v}"))),
    };
    let found = map.entry("model_type").or_insert_with(|| Value::from(model_type));
    if found.as_str() != Some(model_type) {
        return Err(Error::Unsupported(format!(
            "{owner}'s backbone_config model_type {found} is not supported (supported: {model_type})"
        )));
    }
    Ok(Config::from_map(map))
}

/// The backbone's hidden states handed on (`out_indices`, else the stages named by
/// `out_features`, else the last), in order: 0 is the embeddings, `i` block `i`'s output.
pub(crate) fn out_indices(cfg: &Config, layers: usize) -> Result<Vec<usize>> {
    let stages = layers + 1;
    let bad = |what: String| Error::Config(format!("the backbone's out_indices/out_features {what}"));
    let by_index = match cfg.get("out_indices") {
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| {
                    let i = v.as_i64().ok_or_else(|| bad(format!("must be integers, got {v}")))?;
                    let i = if i < 0 { i + stages as i64 } else { i };
                    usize::try_from(i)
                        .ok()
                        .filter(|&i| i < stages)
                        .ok_or_else(|| bad(format!("name a stage past the {stages} there are: {v}")))
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        _ => None,
    };
    let by_name = match cfg.get("out_features") {
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| {
                    // (The stages are named `stem`, `stage1`, `stage2`, ...)
                    let name = v.as_str().unwrap_or("");
                    (0..stages)
                        .find(|&i| if i == 0 { name == "stem" } else { name == format!("stage{i}") })
                        .ok_or_else(|| bad(format!("name no stage: {v}")))
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        _ => None,
    };
    let picked = match (by_index, by_name) {
        (Some(i), Some(n)) if i != n => {
            return Err(bad(format!("disagree: out_indices name stages {i:?}, out_features {n:?}")))
        }
        (Some(i), _) => i,
        (None, Some(n)) => n,
        (None, None) => vec![layers],
    };
    if picked.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad(format!("must be in increasing order, got {picked:?}")));
    }
    Ok(picked)
}

/// `key` as an index into `n` items, negative from the end (`head_in_index`).
pub(crate) fn index_from_end(cfg: &Config, key: &str, n: usize) -> Result<usize> {
    let raw = match cfg.get(key) {
        None | Some(Value::Null) => -1,
        Some(v) => v.as_i64().ok_or_else(|| Error::Config(format!("{key} must be an integer, got {v}")))?,
    };
    let i = if raw < 0 { raw + n as i64 } else { raw };
    usize::try_from(i)
        .ok()
        .filter(|&i| i < n)
        .ok_or_else(|| Error::Config(format!("{key} ({raw}) is out of range for {n} fused maps")))
}

//! EfficientNet (model type `efficientnet`: `EfficientNetModel`,
//! `EfficientNetForImageClassification`; google/efficientnet-b0 ... b7): a stem (padded right and
//! below, a 3×3 stride-2 convolution), stages of MBConv blocks — a 1×1 expansion (where the ratio
//! is not 1), a depthwise convolution (`same` padding, or for stride 2 zeros `k/2 - 1` before and
//! `k/2` after unless the block is listed in `depthwise_padding`), squeeze-and-excitation, a 1×1
//! projection, the input added back in every block but a stage's first — widths scaled by
//! `width_coefficient` and rounded to `depth_divisor`, repeats by `depth_coefficient` (rounded
//! up); a last 1×1 convolution. Batch norms run in inference mode. `pooler_output` is the mean
//! (or max, `pooling_type`) over positions — transformers pools with a window of `hidden_dim`,
//! so maps wider than that are refused as transformers fails on them; the classifier reads it.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::classification::num_labels;
use super::vision::{per_stage, pixels_of};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, BatchNorm2d, Linear};
use crate::weights::{Vars, Weights};

/// A convolution (zero-padded `[left, right, top, bottom]` first) and its batch norm.
#[derive(Debug, Clone)]
struct ConvNorm {
    /// `[out, in / groups, k, k]`
    weight: Tensor,
    stride: usize,
    groups: usize,
    pad: [usize; 4],
    norm: BatchNorm2d,
}

impl ConvNorm {
    /// `conv` (`weight`, no bias) and `norm`, for `groups` groups.
    #[allow(clippy::too_many_arguments)]
    fn load(
        conv: &Vars<'_>,
        norm: &Vars<'_>,
        (input, out): (usize, usize),
        k: usize,
        (stride, groups): (usize, usize),
        pad: [usize; 4],
        eps: f64,
    ) -> Result<Self> {
        Ok(ConvNorm {
            weight: conv.get("weight", &[out, input / groups, k, k])?,
            stride,
            groups,
            pad,
            norm: BatchNorm2d::load(norm, out, eps)?,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let x = match self.pad.iter().any(|&p| p > 0) {
            true => x.pad(&self.pad.map(|p| p as isize), "constant", Some(0.0))?,
            false => x.clone(),
        };
        let y = x.conv2d(&self.weight, None, &[self.stride], 0, &[1], self.groups)?;
        self.norm.forward(&y)
    }
}

/// Squeeze-and-excitation: the mean over positions through a narrow 1×1 layer and back, a
/// sigmoid gate per channel.
#[derive(Debug, Clone)]
struct SqueezeExcite {
    reduce: (Tensor, Tensor),
    expand: (Tensor, Tensor),
}

/// One MBConv block.
#[derive(Debug, Clone)]
struct Block {
    expansion: Option<ConvNorm>,
    depthwise: ConvNorm,
    se: SqueezeExcite,
    projection: ConvNorm,
    residual: bool,
}

/// transformers' `EfficientNetModel`, with the classifier when loaded as
/// `EfficientNetForImageClassification`.
#[derive(Debug, Clone)]
pub struct EfficientNet {
    stem: ConvNorm,
    blocks: Vec<Block>,
    top: ConvNorm,
    act: Activation,
    /// `pooling_type` max (else mean)
    max_pool: bool,
    /// `hidden_dim`: the pooling window
    window: usize,
    /// `None` for the base model; inside, `None` for 0 labels
    classifier: Option<Option<Linear>>,
    channels: usize,
}

/// transformers' `round_filters`: `channels · width` rounded to a multiple of `divisor` (at least
/// it), not more than 10% below.
fn round_filters(channels: usize, width: f64, divisor: usize) -> usize {
    let scaled = channels as f64 * width;
    let new = (((scaled + divisor as f64 / 2.0) as usize) / divisor * divisor).max(divisor);
    if (new as f64) < 0.9 * scaled {
        new.saturating_add(divisor)
    } else {
        new
    }
}

impl EfficientNet {
    /// Loads `EfficientNetModel` or `EfficientNetForImageClassification` from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let v = weights.base_vars("efficientnet");
        let channels = cfg.usize_or("num_channels", 3)?;
        let width = cfg.f64_or("width_coefficient", 2.0)?;
        let depth = cfg.f64_or("depth_coefficient", 3.1)?;
        let divisor = cfg.usize_or("depth_divisor", 8)?;
        if !(width > 0.0 && width <= 64.0 && depth > 0.0 && depth <= 64.0) || divisor == 0 {
            return Err(Error::Config(format!(
                "width_coefficient ({width}) and depth_coefficient ({depth}) must be in (0, 64], depth_divisor ({divisor}) positive"
            )));
        }
        let eps = cfg.f64_or("batch_norm_eps", 1e-3)?;
        let act = Activation::from_name(cfg.str_or("hidden_act", "swish")?)?;
        let inputs = cfg.usize_list_or("in_channels", &[32, 16, 24, 40, 80, 112, 192], 0)?;
        let n = inputs.len();
        let outputs =
            per_stage(cfg, "out_channels", &[16, 24, 40, 80, 112, 192, 320], 0, (n, "in_channels"))?;
        let kernels = per_stage(cfg, "kernel_sizes", &[3, 3, 5, 3, 5, 5, 3], 0, (n, "in_channels"))?;
        let strides = per_stage(cfg, "strides", &[1, 2, 2, 2, 1, 2, 1], 0, (n, "in_channels"))?;
        let repeats = per_stage(cfg, "num_block_repeats", &[1, 2, 2, 3, 3, 4, 1], 0, (n, "in_channels"))?;
        let ratios = per_stage(cfg, "expand_ratios", &[1, 6, 6, 6, 6, 6, 6], 0, (n, "in_channels"))?;
        // (An empty list, the default, pads every strided block by hand.)
        let padded = match cfg.get("depthwise_padding").and_then(|v| v.as_array()) {
            Some(items) if items.is_empty() => Vec::new(),
            _ => cfg.usize_list_or("depthwise_padding", &[], 0)?,
        };
        let se_ratio = cfg.f64_or("squeeze_expansion_ratio", 0.25)?;
        // (Only the stages' entries are read.)
        if !(0.0..=64.0).contains(&se_ratio)
            || kernels[..n].iter().chain(&strides[..n]).any(|&k| k == 0 || k > 64)
        {
            return Err(Error::Config(
                "kernel_sizes and strides must be in 1..=64, squeeze_expansion_ratio in [0, 64]".into(),
            ));
        }
        let filters = |c: usize| round_filters(c, width, divisor);
        let stem_width = filters(32);
        let stem = ConvNorm::load(
            &v.pp("embeddings.convolution"),
            &v.pp("embeddings.batchnorm"),
            (channels, stem_width),
            3,
            (2, 1),
            [0, 1, 0, 1],
            eps,
        )?;
        let enc = v.pp("encoder");
        let mut blocks = Vec::new();
        let mut out = stem_width;
        for i in 0..n {
            let count = (depth * repeats[i] as f64).ceil() as usize;
            if count > 4096 {
                return Err(Error::Config(format!("stage {i} repeats {count} blocks")));
            }
            out = filters(outputs[i]);
            for j in 0..count {
                let input = if j == 0 { filters(inputs[i]) } else { out };
                let stride = if j == 0 { strides[i] } else { 1 };
                let k = kernels[i];
                // (transformers pads a strided depthwise convolution by hand for stride 2 only, and
                // its `k/2 - 1` zeros before would be a crop for a 1×1 kernel.)
                if stride > 2 || (stride == 2 && k < 2) {
                    return Err(Error::Unsupported(format!(
                        "stage {i}'s depthwise convolution: stride {stride} with kernel {k} is not supported"
                    )));
                }
                let b = enc.pp("blocks").pp(blocks.len());
                let ratio = ratios[i];
                let inner = input.checked_mul(ratio).filter(|_| ratio > 0).ok_or_else(|| {
                    Error::Config(format!("expand_ratios[{i}] ({ratio}) must be a positive size"))
                })?;
                let expansion = match ratio != 1 {
                    true => Some(ConvNorm::load(
                        &b.pp("expansion.expand_conv"),
                        &b.pp("expansion.expand_bn"),
                        (input, inner),
                        1,
                        (1, 1),
                        [0; 4],
                        eps,
                    )?),
                    false => None,
                };
                // Stride 2: zeros `k/2 - 1` before and `k/2` after (or `k/2` both, for the listed
                // blocks); else `same` (the extra zero after, for an even kernel).
                let pad = match (stride, padded.contains(&blocks.len())) {
                    (2, false) => [k / 2 - 1, k / 2, k / 2 - 1, k / 2],
                    (2, true) => [k / 2; 4],
                    _ => {
                        let before = (k - 1) / 2;
                        [before, k - 1 - before, before, k - 1 - before]
                    }
                };
                let dw = b.pp("depthwise_conv");
                let depthwise = ConvNorm::load(
                    &dw.pp("depthwise_conv"),
                    &dw.pp("depthwise_norm"),
                    (inner, inner),
                    k,
                    (stride, inner),
                    pad,
                    eps,
                )?;
                let squeezed = ((input as f64 * se_ratio) as usize).max(1);
                let se = b.pp("squeeze_excite");
                let conv1x1 = |name: &str, i: usize, o: usize| -> Result<(Tensor, Tensor)> {
                    Ok((se.pp(name).get("weight", &[o, i, 1, 1])?, se.pp(name).get("bias", &[o])?))
                };
                let p = b.pp("projection");
                blocks.push(Block {
                    expansion,
                    depthwise,
                    se: SqueezeExcite {
                        reduce: conv1x1("reduce", inner, squeezed)?,
                        expand: conv1x1("expand", squeezed, inner)?,
                    },
                    projection: ConvNorm::load(
                        &p.pp("project_conv"),
                        &p.pp("project_bn"),
                        (inner, out),
                        1,
                        (1, 1),
                        [0; 4],
                        eps,
                    )?,
                    // (transformers adds the input back in every block but a stage's first.)
                    residual: j > 0,
                });
            }
        }
        let hidden = filters(1280);
        let window = cfg.usize_or("hidden_dim", 2560)?;
        if window != hidden {
            return Err(Error::Config(format!(
                "hidden_dim ({window}) must be the last convolution's width ({hidden}), which its batch norm takes"
            )));
        }
        let top =
            ConvNorm::load(&enc.pp("top_conv"), &enc.pp("top_bn"), (out, hidden), 1, (1, 1), [0; 4], eps)?;
        let max_pool = match cfg.str_or("pooling_type", "mean")? {
            "mean" => false,
            "max" => true,
            other => {
                return Err(Error::Config(format!(
                    "pooling_type must be \"mean\" or \"max\", got \"{other}\""
                )))
            }
        };
        let classifier = match arch {
            "EfficientNetModel" => None,
            "EfficientNetForImageClassification" => Some(match num_labels(cfg)? {
                0 => None,
                labels => Some(Linear::load(&weights.vars("classifier"), hidden, labels, true)?),
            }),
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(EfficientNet { stem, blocks, top, act, max_pool, window, classifier, channels })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stem.weight.device()
    }

    fn block(&self, b: &Block, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        if let Some(e) = &b.expansion {
            h = self.act.forward(&e.forward(&h)?)?;
        }
        h = self.act.forward(&b.depthwise.forward(&h)?)?;
        let (rw, rb) = &b.se.reduce;
        let (ew, eb) = &b.se.expand;
        let gate = h.mean([2, 3], true)?.conv2d(rw, Some(rb), &[1], 0, &[1], 1)?;
        let gate = self.act.forward(&gate)?.conv2d(ew, Some(eb), &[1], 0, &[1], 1)?.sigmoid()?;
        let h = b.projection.forward(&h.mul(&gate)?)?;
        Ok(if b.residual { h.add(x)? } else { h })
    }

    /// `pixel_values` → `last_hidden_state` and `pooler_output` (the base model) or `logits`, and
    /// with `output_hidden_states` the stem's and every block's output.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.stem.weight.dtype(), self.device(), self.channels)?;
        let mut h = self.act.forward(&self.stem.forward(&x)?)?;
        let mut hidden_states = Vec::new();
        for b in &self.blocks {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            h = self.block(b, &h)?;
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let last = self.act.forward(&self.top.forward(&h)?)?;
        let (rows, cols) = (last.dims()[2], last.dims()[3]);
        if rows > self.window || cols > self.window {
            return Err(Error::Input(format!(
                "the last map is {rows}×{cols}, wider than the pooling window (hidden_dim {})",
                self.window
            )));
        }
        let pooled = match self.max_pool {
            true => last.amax([2, 3], false)?,
            false => last.mean([2, 3], false)?,
        };
        let mut out = match &self.classifier {
            None => vec![("last_hidden_state".to_string(), last), ("pooler_output".to_string(), pooled)],
            Some(Some(c)) => vec![("logits".to_string(), c.forward(&pooled)?)],
            Some(None) => vec![("logits".to_string(), pooled)],
        };
        if output_hidden_states {
            out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        }
        Ok(out)
    }
}

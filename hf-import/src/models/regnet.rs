//! RegNet (model type `regnet`: `RegNetModel`, `RegNetForImageClassification`;
//! facebook/regnet-y-040, facebook/regnet-x-002): a 3×3 stride-2 stem, then stages of X layers (a
//! 1×1 convolution, a grouped 3×3 one carrying the stage's stride, `groups_width` channels a group,
//! a linear 1×1 one) or Y layers (the same with squeeze-and-excitation before the last), a
//! projecting shortcut where the width or the stride changes, the activation after the sum.
//! Batch norms run in inference mode. `pooler_output` is the mean over positions
//! `[batch, channels, 1, 1]`; the classifier reads it flattened. Any image size runs.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixels_of, pooled_outputs, run_stages};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, BatchNorm2d, Linear};
use crate::weights::{Vars, Weights};

/// A convolution (no bias, `k / 2` zeros each side) with its batch norm and optional activation.
#[derive(Debug, Clone)]
struct ConvNorm {
    weight: Tensor,
    stride: usize,
    groups: usize,
    norm: BatchNorm2d,
    act: Option<Activation>,
}

impl ConvNorm {
    /// `v.convolution.weight` and `v.normalization.*`.
    fn load(
        v: &Vars<'_>,
        (input, out): (usize, usize),
        k: usize,
        (stride, groups): (usize, usize),
        act: Option<Activation>,
    ) -> Result<Self> {
        if groups == 0 || input % groups != 0 || out % groups != 0 {
            return Err(Error::Config(format!(
                "{out} channels from {input} cannot form {groups} groups (groups_width)"
            )));
        }
        Ok(ConvNorm {
            weight: v.pp("convolution").get("weight", &[out, input / groups, k, k])?,
            stride,
            groups,
            norm: BatchNorm2d::load(&v.pp("normalization"), out, 1e-5)?,
            act,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let k = self.weight.dims()[2];
        let y = x.conv2d(&self.weight, None, &[self.stride], k / 2, &[1], self.groups)?;
        let y = self.norm.forward(&y)?;
        match self.act {
            Some(a) => a.forward(&y),
            None => Ok(y),
        }
    }
}

/// One X or Y layer.
#[derive(Debug, Clone)]
struct Layer {
    reduce: ConvNorm,
    grouped: ConvNorm,
    /// Y's squeeze-and-excitation: two biased 1×1 convolutions (ReLU between, sigmoid after)
    se: Option<[(Tensor, Tensor); 2]>,
    expand: ConvNorm,
    shortcut: Option<ConvNorm>,
    act: Activation,
}

impl Layer {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = self.grouped.forward(&self.reduce.forward(x)?)?;
        if let Some([(w1, b1), (w2, b2)]) = &self.se {
            let gate = h.mean([2, 3], true)?.conv2d(w1, Some(b1), &[1], 0, &[1], 1)?.relu()?;
            h = h.mul(&gate.conv2d(w2, Some(b2), &[1], 0, &[1], 1)?.sigmoid()?)?;
        }
        let h = self.expand.forward(&h)?;
        let residual = match &self.shortcut {
            Some(s) => s.forward(x)?,
            None => x.clone(),
        };
        self.act.forward(&h.add(&residual)?)
    }
}

/// transformers' `RegNetModel`, with `RegNetForImageClassification`'s classifier when loaded as
/// that.
#[derive(Debug, Clone)]
pub struct RegNet {
    stem: ConvNorm,
    stages: Vec<Vec<Layer>>,
    /// `Some` for the classifier (inside, `None` for 0 labels)
    classifier: Option<Option<Linear>>,
    channels: usize,
}

impl RegNet {
    /// Loads `RegNetModel` (`regnet.*` or unprefixed) or `RegNetForImageClassification`
    /// (`classifier.1`).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let channels = cfg.usize_or("num_channels", 3)?;
        let embedding = cfg.usize_or("embedding_size", 32)?;
        let hidden = cfg.usize_list_or("hidden_sizes", &[128, 192, 512, 1088], 1)?;
        let depths = cfg.usize_list_or("depths", &[2, 6, 12, 2], 0)?;
        let groups_width = cfg.usize_or("groups_width", 64)?;
        if groups_width == 0 {
            return Err(Error::Config("groups_width must be positive".into()));
        }
        let y = match cfg.str_or("layer_type", "y")? {
            "x" => false,
            "y" => true,
            other => {
                return Err(Error::Config(format!("layer_type must be \"x\" or \"y\", got \"{other}\"")))
            }
        };
        let act = Activation::from_name(cfg.str_or("hidden_act", "relu")?)?;
        let first_stride = if cfg.bool_or("downsample_in_first_stage", true)? { 2 } else { 1 };
        let v = weights.base_vars("regnet");
        let stem = ConvNorm::load(&v.pp("embedder.embedder"), (channels, embedding), 3, (2, 1), Some(act))?;
        let mut stages = Vec::with_capacity(hidden.len());
        let mut input = embedding;
        // (transformers pairs the widths with the depths: the shorter list sets the stages.)
        for (s, (&out, &depth)) in hidden.iter().zip(&depths).enumerate() {
            let sv = v.pp("encoder.stages").pp(s).pp("layers");
            let groups = (out / groups_width).max(1);
            // (A stage of depth 0 still has its first layer, as transformers builds it.)
            let layers = (0..depth.max(1))
                .map(|l| {
                    let lv = sv.pp(l);
                    let (from, stride) = match l {
                        0 => (input, if s == 0 { first_stride } else { 2 }),
                        _ => (out, 1),
                    };
                    let c = lv.pp("layer");
                    let se = match y {
                        true => {
                            let reduced = (from as f64 / 4.0).round_ties_even() as usize;
                            let a = c.pp(2).pp("attention");
                            let conv = |i: usize, o: usize, n: usize| -> Result<(Tensor, Tensor)> {
                                Ok((a.pp(n).get("weight", &[o, i, 1, 1])?, a.pp(n).get("bias", &[o])?))
                            };
                            Some([conv(out, reduced, 0)?, conv(reduced, out, 2)?])
                        }
                        false => None,
                    };
                    Ok(Layer {
                        reduce: ConvNorm::load(&c.pp(0), (from, out), 1, (1, 1), Some(act))?,
                        grouped: ConvNorm::load(&c.pp(1), (out, out), 3, (stride, groups), Some(act))?,
                        expand: ConvNorm::load(&c.pp(if y { 3 } else { 2 }), (out, out), 1, (1, 1), None)?,
                        se,
                        shortcut: match from != out || stride != 1 {
                            true => {
                                Some(ConvNorm::load(&lv.pp("shortcut"), (from, out), 1, (stride, 1), None)?)
                            }
                            false => None,
                        },
                        act,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            stages.push(layers);
            input = out;
        }
        let classifier = match arch {
            "RegNetModel" => None,
            "RegNetForImageClassification" => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier").pp(1), input, n, true)?),
            }),
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(RegNet { stem, stages, classifier, channels })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stem.weight.device()
    }

    /// `pixel_values` → `logits` (the classifier) or `last_hidden_state` and `pooler_output`, and
    /// with `output_hidden_states` the stem's output and each stage's.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.stem.weight.dtype(), self.device(), self.channels)?;
        let h = self.stem.forward(&x)?;
        let (h, hidden_states) = run_stages(h, &self.stages, output_hidden_states, |l, h| l.forward(h))?;
        let pooled = h.to_dtype(DType::F32)?.mean([2, 3], true)?.to_dtype(h.dtype())?;
        pooled_outputs(self.classifier.as_ref(), h, pooled, hidden_states)
    }
}

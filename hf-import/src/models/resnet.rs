//! ResNet (model type `resnet`: `ResNetModel`, `ResNetForImageClassification`;
//! microsoft/resnet-50 and its kin): a 7×7 stride-2 stem with batch norm and a 3×3 max pool, stages
//! of residual layers (two 3×3 convolutions, `basic`, or 1×1 / 3×3 / 1×1 `bottleneck`s of a
//! quarter width, the stride in the 3×3 unless `downsample_in_bottleneck`), a projecting shortcut
//! wherever the width or the stride changes, the mean over the last stage's positions as
//! `pooler_output` `[batch, channels, 1, 1]`, and a linear classifier on it. Batch norms run in
//! inference mode (the running statistics). Any image size runs.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixels_of, pooled_outputs, run_stages};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Linear};
use crate::weights::{Vars, Weights};

/// A convolution (no bias, `kernel / 2` zero padding) with its batch norm and an optional
/// activation (`ResNetConvLayer`; the shortcut's has none).
#[derive(Debug, Clone)]
struct ConvNorm {
    weight: Tensor,
    stride: usize,
    /// running mean, running variance, scale, shift
    norm: [Tensor; 4],
    act: Option<Activation>,
}

impl ConvNorm {
    /// `v.convolution.weight` `[out, in, k, k]` and `v.normalization.*`.
    fn load(
        v: &Vars<'_>,
        channels: (usize, usize),
        kernel: usize,
        stride: usize,
        act: Option<Activation>,
    ) -> Result<Self> {
        let (input, out) = channels;
        let n = v.pp("normalization");
        Ok(ConvNorm {
            weight: v.pp("convolution").get("weight", &[out, input, kernel, kernel])?,
            stride,
            norm: [
                n.get("running_mean", &[out])?,
                n.get("running_var", &[out])?,
                n.get("weight", &[out])?,
                n.get("bias", &[out])?,
            ],
            act,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let k = self.weight.dims()[2];
        let y = x.conv2d(&self.weight, None, &[self.stride], k / 2, &[1], 1)?;
        let [mean, var, w, b] = &self.norm;
        let y = y.batch_norm(Some(mean), Some(var), Some(w), Some(b), false, 0.1, 1e-5)?;
        match self.act {
            Some(a) => a.forward(&y),
            None => Ok(y),
        }
    }
}

/// One residual layer: its convolutions, the shortcut where the shape changes, the activation
/// after the sum.
#[derive(Debug, Clone)]
struct Residual {
    convs: Vec<ConvNorm>,
    shortcut: Option<ConvNorm>,
    act: Activation,
}

impl Residual {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        for c in &self.convs {
            h = c.forward(&h)?;
        }
        let residual = match &self.shortcut {
            Some(s) => s.forward(x)?,
            None => x.clone(),
        };
        self.act.forward(&h.add(&residual)?)
    }
}

/// transformers' `ResNetModel`, with `ResNetForImageClassification`'s classifier when loaded as
/// that.
#[derive(Debug, Clone)]
pub struct ResNet {
    stem: ConvNorm,
    stages: Vec<Vec<Residual>>,
    /// `ResNetForImageClassification`'s classifier (`None` inside: `num_labels` 0, the pooled
    /// features are the logits); `None` for `ResNetModel`
    classifier: Option<Option<Linear>>,
    channels: usize,
}

impl ResNet {
    /// Loads `ResNetModel` (`resnet.*` or unprefixed) or `ResNetForImageClassification`
    /// (`classifier.1`).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let channels = cfg.usize_or("num_channels", 3)?;
        let embedding = cfg.usize_or("embedding_size", 64)?;
        let hidden = cfg.usize_list_or("hidden_sizes", &[256, 512, 1024, 2048], 1)?;
        let depths = cfg.usize_list_or("depths", &[3, 4, 6, 3], 0)?;
        if hidden.len() != depths.len() {
            return Err(Error::Config(format!(
                "hidden_sizes ({}) and depths ({}) must have one entry per stage",
                hidden.len(),
                depths.len()
            )));
        }
        let bottleneck = match cfg.str_or("layer_type", "bottleneck")? {
            "bottleneck" => true,
            "basic" => false,
            other => {
                return Err(Error::Config(format!(
                    "layer_type must be \"basic\" or \"bottleneck\", got \"{other}\""
                )))
            }
        };
        let act = Activation::from_name(cfg.str_or("hidden_act", "relu")?)?;
        let relu = Activation::from_name("relu")?;
        let first_stride = if cfg.bool_or("downsample_in_first_stage", false)? { 2 } else { 1 };
        let in_bottleneck = cfg.bool_or("downsample_in_bottleneck", false)?;
        let v = weights.base_vars("resnet");
        let stem = ConvNorm::load(&v.pp("embedder").pp("embedder"), (channels, embedding), 7, 2, Some(act))?;
        let mut stages = Vec::with_capacity(hidden.len());
        let mut input = embedding;
        for (s, (&out, &depth)) in hidden.iter().zip(&depths).enumerate() {
            let sv = v.pp("encoder").pp("stages").pp(s).pp("layers");
            let mut layers = Vec::new();
            // (A stage of depth 0 still has its first layer, as transformers builds it.)
            for l in 0..depth.max(1) {
                let lv = sv.pp(l);
                let (from, stride) = match l {
                    0 => (input, if s == 0 { first_stride } else { 2 }),
                    _ => (out, 1),
                };
                let shortcut = match from != out || stride != 1 {
                    true => Some(ConvNorm::load(&lv.pp("shortcut"), (from, out), 1, stride, None)?),
                    false => None,
                };
                let c = lv.pp("layer");
                let convs = if bottleneck {
                    let mid = out / 4;
                    if mid == 0 {
                        return Err(Error::Config(format!(
                            "hidden_sizes entry {out} is too narrow for a bottleneck (a quarter of it)"
                        )));
                    }
                    let (s1, s3) = if in_bottleneck { (stride, 1) } else { (1, stride) };
                    vec![
                        ConvNorm::load(&c.pp(0), (from, mid), 1, s1, Some(relu))?,
                        ConvNorm::load(&c.pp(1), (mid, mid), 3, s3, Some(relu))?,
                        ConvNorm::load(&c.pp(2), (mid, out), 1, 1, None)?,
                    ]
                } else {
                    vec![
                        ConvNorm::load(&c.pp(0), (from, out), 3, stride, Some(relu))?,
                        ConvNorm::load(&c.pp(1), (out, out), 3, 1, None)?,
                    ]
                };
                layers.push(Residual { convs, shortcut, act });
            }
            stages.push(layers);
            input = out;
        }
        let classifier = match arch {
            "ResNetForImageClassification" => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier").pp(1), input, n, true)?),
            }),
            _ => None,
        };
        Ok(ResNet { stem, stages, classifier, channels })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stem.weight.device()
    }

    /// Runs the model on `pixel_values` `[batch, channels, height, width]`: `logits` (the
    /// classifier) or `last_hidden_state` and `pooler_output`, and with `output_hidden_states`
    /// `hidden_states.*` (the stem's output, then each stage's).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.stem.weight.dtype(), self.device(), self.channels)?;
        let h = self.stem.forward(&x)?.max_pool2d(&[3], Some(&[2]), &[1], &[1], false)?;
        let (h, hidden_states) = run_stages(h, &self.stages, output_hidden_states, |l, h| l.forward(h))?;
        let pooled = h.to_dtype(DType::F32)?.mean([2, 3], true)?.to_dtype(h.dtype())?;
        pooled_outputs(self.classifier.as_ref(), h, pooled, hidden_states)
    }
}

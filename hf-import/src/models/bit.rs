//! BiT (model type `bit`: `BitModel`, `BitForImageClassification`; google/bit-50): ResNet v2 with
//! weight-standardized convolutions (each filter's weights normalised to zero mean and unit
//! variance, eps 1e-8) and group norms. A 7×7 stride-2 stem (then, unless `global_padding` is
//! `SAME`, a ring of zeros), a 3×3 stride-2 max pool, stages of bottleneck layers — pre-activation
//! (`layer_type` `preactivation`: norm and activation before each convolution, a final norm after
//! the last stage) or post-activation (`bottleneck`) — whose first layer downsamples its shortcut;
//! strides past `output_stride` become dilations. `global_padding` `SAME` pads each strided
//! convolution as TensorFlow does, from the input's size. `pooler_output` is the mean over
//! positions `[batch, channels, 1, 1]`; the classifier reads it flattened.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixels_of, pooled_outputs, run_stages};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Linear};
use crate::weights::{Vars, Weights};

/// How a convolution pads (`global_padding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    /// `(stride - 1 + dilation · (kernel - 1)) / 2` each side (absent or unknown)
    Symmetric,
    /// none (`VALID`)
    Valid,
    /// `SAME`: static where the stride is 1 and the span even, else computed from the input
    Same,
}

/// A weight-standardized convolution.
#[derive(Debug, Clone)]
struct Conv {
    /// the standardized `[out, in, k, k]`
    weight: Tensor,
    stride: usize,
    dilation: usize,
    /// static padding each side, or `None` for TensorFlow's dynamic `SAME`
    padding: Option<usize>,
}

impl Conv {
    fn load(
        v: &Vars<'_>,
        (input, out): (usize, usize),
        k: usize,
        stride: usize,
        dilation: usize,
        pad: Padding,
    ) -> Result<Self> {
        let w = v.get("weight", &[out, input, k, k])?;
        // `batch_norm(w.reshape(1, out, -1), training=True, eps=1e-8)`: each filter standardized.
        let dtype = w.dtype();
        let flat = w.to_dtype(DType::F32)?.reshape([out, input * k * k])?;
        let mean = flat.mean([1], true)?;
        let centred = flat.sub(&mean)?;
        let var = centred.square()?.mean([1], true)?;
        let weight = centred.div(&var.add(1e-8)?.sqrt()?)?.reshape([out, input, k, k])?.to_dtype(dtype)?;
        let span = dilation
            .checked_mul(k - 1)
            .filter(|&s| s < 1 << 20)
            .ok_or_else(|| Error::Config(format!("a dilation of {dilation} is too large")))?;
        let symmetric = (stride - 1 + span) / 2;
        let padding = match pad {
            Padding::Symmetric => Some(symmetric),
            Padding::Valid => Some(0),
            Padding::Same if stride == 1 && span.is_multiple_of(2) => Some(symmetric),
            Padding::Same => None,
        };
        Ok(Conv { weight, stride, dilation, padding })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let k = self.weight.dims()[2];
        let (x, padding) = match self.padding {
            Some(p) => (x.clone(), p),
            None => (dynamic_pad(x, k, self.stride, self.dilation)?, 0),
        };
        Ok(x.conv2d(&self.weight, None, &[self.stride], padding, &[self.dilation], 1)?)
    }
}

/// TensorFlow's `SAME` padding of `x` for a `k`-wide window of `stride` and `dilation`: the
/// missing span split, the extra zero after.
fn dynamic_pad(x: &Tensor, k: usize, stride: usize, dilation: usize) -> Result<Tensor> {
    let need = |len: usize| {
        ((len.div_ceil(stride)).saturating_sub(1) * stride + (k - 1) * dilation + 1).saturating_sub(len)
    };
    let (h, w) = (need(x.dims()[2]), need(x.dims()[3]));
    if h == 0 && w == 0 {
        return Ok(x.clone());
    }
    let pad = [w / 2, w - w / 2, h / 2, h - h / 2].map(|p| p as isize);
    Ok(x.pad(&pad, "constant", Some(0.0))?)
}

/// A group norm and its optional activation.
#[derive(Debug, Clone)]
struct GroupNorm {
    weight: Tensor,
    bias: Tensor,
    groups: usize,
    act: Option<Activation>,
}

impl GroupNorm {
    fn load(v: &Vars<'_>, channels: usize, groups: usize, act: Option<Activation>) -> Result<Self> {
        if groups == 0 || !channels.is_multiple_of(groups) {
            return Err(Error::Config(format!("num_groups ({groups}) must divide every width ({channels})")));
        }
        Ok(GroupNorm {
            weight: v.get("weight", &[channels])?,
            bias: v.get("bias", &[channels])?,
            groups,
            act,
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = x.group_norm(self.groups, Some(&self.weight), Some(&self.bias), 1e-5)?;
        match self.act {
            Some(a) => a.forward(&y),
            None => Ok(y),
        }
    }
}

/// One bottleneck layer (pre- or post-activation).
#[derive(Debug, Clone)]
struct Layer {
    /// the first layer's shortcut: a strided 1×1 convolution (normed, post-activation)
    downsample: Option<(Conv, Option<GroupNorm>)>,
    convs: [Conv; 3],
    norms: [GroupNorm; 3],
}

/// transformers' `BitModel`, with `BitForImageClassification`'s classifier when loaded as that.
#[derive(Debug, Clone)]
pub struct Bit {
    stem: Conv,
    /// post-activation's norm after the stem
    stem_norm: Option<GroupNorm>,
    /// the ring of zeros before the stem's norm (unless `SAME`)
    stem_pad: bool,
    /// the max pool's dynamic `SAME` padding (`embedding_dynamic_padding`)
    pool_pad: bool,
    stages: Vec<Vec<Layer>>,
    preactivation: bool,
    act: Activation,
    /// pre-activation's norm after the last stage
    final_norm: Option<GroupNorm>,
    classifier: Option<Option<Linear>>,
    channels: usize,
    /// the stem's width, then each stage's
    widths: Vec<usize>,
}

/// BiT's `make_div`: rounded to a multiple of 8, not more than 10% down.
fn make_div(value: f64) -> usize {
    let new = (((value + 4.0) as usize) / 8 * 8).max(8);
    if (new as f64) < 0.9 * value {
        new.saturating_add(8)
    } else {
        new
    }
}

impl Bit {
    /// Loads `BitModel` (`bit.*` or unprefixed) or `BitForImageClassification` (`classifier.1`).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let bit = Self::load_at(cfg, &weights.base_vars("bit"), true)?;
        let width = cfg.usize_list_or("hidden_sizes", &[256, 512, 1024, 2048], 1)?.last().copied();
        let classifier = match arch {
            "BitModel" => None,
            "BitForImageClassification" => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(
                    &weights.vars("classifier").pp(1),
                    width.unwrap_or(bit.widths[bit.widths.len() - 1]),
                    n,
                    true,
                )?),
            }),
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Bit { classifier, ..bit })
    }

    /// `BitBackbone`'s model under `vars` (`embedder.*`, `encoder.*`): no final norm, no
    /// classifier; read with [`Bit::feature_maps`].
    pub(crate) fn load_backbone(cfg: &Config, vars: &Vars<'_>) -> Result<Self> {
        Self::load_at(cfg, vars, false)
    }

    fn load_at(cfg: &Config, v: &Vars<'_>, with_final_norm: bool) -> Result<Self> {
        let channels = cfg.usize_or("num_channels", 3)?;
        let embedding = cfg.usize_or("embedding_size", 64)?;
        let hidden = cfg.usize_list_or("hidden_sizes", &[256, 512, 1024, 2048], 1)?;
        let depths = cfg.usize_list_or("depths", &[3, 4, 6, 3], 0)?;
        let preactivation = match cfg.str_or("layer_type", "preactivation")? {
            "preactivation" => true,
            "bottleneck" => false,
            other => {
                return Err(Error::Config(format!(
                    "layer_type must be \"preactivation\" or \"bottleneck\", got \"{other}\""
                )))
            }
        };
        let act = Activation::from_name(cfg.str_or("hidden_act", "relu")?)?;
        let groups = cfg.usize_or("num_groups", 32)?;
        let pad = match cfg.get("global_padding").and_then(|v| v.as_str()).map(str::to_uppercase).as_deref() {
            Some("SAME") => Padding::Same,
            Some("VALID") => Padding::Valid,
            _ => Padding::Symmetric,
        };
        let width = cfg.usize_or("width_factor", 1)?;
        let output_stride = cfg.usize_or("output_stride", 32)?;
        let e = v.pp("embedder");
        let stem = Conv::load(&e.pp("convolution"), (channels, embedding), 7, 2, 1, pad)?;
        let stem_norm = match preactivation {
            true => None,
            false => Some(GroupNorm::load(&e.pp("norm"), embedding, groups, Some(act))?),
        };
        let (mut current, mut dilation, mut input) = (4usize, 1usize, embedding);
        let mut stages = Vec::with_capacity(hidden.len());
        let mut widths = vec![embedding];
        for (s, (&size, &depth)) in hidden.iter().zip(&depths).enumerate() {
            let out = make_div(size as f64 * width as f64);
            let mut stride = if s == 0 { 1 } else { 2 };
            if current >= output_stride {
                dilation = dilation.saturating_mul(stride);
                stride = 1;
            }
            let mid = make_div(out as f64 * 0.25);
            let mut first_dilation = if dilation == 1 || dilation == 2 { 1 } else { 2 };
            let sv = v.pp("encoder.stages").pp(s).pp("layers");
            let mut layers = Vec::with_capacity(depth);
            for l in 0..depth {
                let lv = sv.pp(l);
                let (from, layer_stride) = if l == 0 { (input, stride) } else { (out, 1) };
                let downsample = match l == 0 {
                    true => Some((
                        Conv::load(&lv.pp("downsample.conv"), (from, out), 1, layer_stride, 1, pad)?,
                        match preactivation {
                            true => None,
                            false => Some(GroupNorm::load(&lv.pp("downsample.norm"), out, groups, None)?),
                        },
                    )),
                    false => None,
                };
                // (Pre-activation's 3×3 convolution is never dilated, as transformers builds it.)
                let conv2_dilation = if preactivation { 1 } else { first_dilation };
                let (n1, n3) = match preactivation {
                    true => (from, mid),
                    false => (mid, out),
                };
                layers.push(Layer {
                    downsample,
                    convs: [
                        Conv::load(&lv.pp("conv1"), (from, mid), 1, 1, 1, pad)?,
                        Conv::load(&lv.pp("conv2"), (mid, mid), 3, layer_stride, conv2_dilation, pad)?,
                        Conv::load(&lv.pp("conv3"), (mid, out), 1, 1, 1, pad)?,
                    ],
                    norms: [
                        GroupNorm::load(&lv.pp("norm1"), n1, groups, Some(act))?,
                        GroupNorm::load(&lv.pp("norm2"), mid, groups, Some(act))?,
                        GroupNorm::load(
                            &lv.pp("norm3"),
                            n3,
                            groups,
                            if preactivation { Some(act) } else { None },
                        )?,
                    ],
                });
                first_dilation = dilation;
            }
            stages.push(layers);
            // (An empty stage hands its input on.)
            widths.push(if depth == 0 { input } else { out });
            current = current.saturating_mul(stride);
            input = out;
        }
        let final_norm = match preactivation && with_final_norm {
            true => {
                Some(GroupNorm::load(&v.pp("norm"), *hidden.last().unwrap_or(&input), groups, Some(act))?)
            }
            false => None,
        };
        Ok(Bit {
            stem,
            stem_norm,
            stem_pad: pad != Padding::Same,
            pool_pad: cfg.bool_or("embedding_dynamic_padding", false)?,
            stages,
            preactivation,
            act,
            final_norm,
            classifier: None,
            channels,
            widths,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stem.weight.device()
    }

    fn layer(&self, l: &Layer, x: &Tensor) -> Result<Tensor> {
        let [c1, c2, c3] = &l.convs;
        let [n1, n2, n3] = &l.norms;
        if self.preactivation {
            let pre = n1.forward(x)?;
            let shortcut = match &l.downsample {
                Some((conv, _)) => conv.forward(&pre)?,
                None => x.clone(),
            };
            let h = c3.forward(&n3.forward(&c2.forward(&n2.forward(&c1.forward(&pre)?)?)?)?)?;
            return Ok(h.add(&shortcut)?);
        }
        let shortcut = match &l.downsample {
            Some((conv, norm)) => {
                let s = conv.forward(x)?;
                match norm {
                    Some(n) => n.forward(&s)?,
                    None => s,
                }
            }
            None => x.clone(),
        };
        let h = n3.forward(&c3.forward(&n2.forward(&c2.forward(&n1.forward(&c1.forward(x)?)?)?)?)?)?;
        self.act.forward(&h.add(&shortcut)?)
    }

    /// `pixel_values` → `logits` (the classifier) or `last_hidden_state` and `pooler_output`, and
    /// with `output_hidden_states` the stem's output and each stage's.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.stem.weight.dtype(), self.device(), self.channels)?;
        let (mut h, hidden_states) =
            run_stages(self.embed(&x)?, &self.stages, output_hidden_states, |l, h| self.layer(l, h))?;
        if let Some(n) = &self.final_norm {
            h = n.forward(&h)?;
        }
        let pooled = h.to_dtype(DType::F32)?.mean([2, 3], true)?.to_dtype(h.dtype())?;
        pooled_outputs(self.classifier.as_ref(), h, pooled, hidden_states)
    }

    /// The width of the stem's output, then of each stage's.
    pub(crate) fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// `BitBackbone`'s stages: `x` `[batch, channels, height, width]` (in the weights' dtype) →
    /// the stem's output, then each stage's (before any final norm).
    pub(crate) fn feature_maps(&self, x: &Tensor) -> Result<Vec<Tensor>> {
        if x.dims().len() != 4 || x.dims()[1] != self.channels {
            return Err(Error::Input(format!(
                "BiT takes pixel_values [batch, {}, height, width], got {:?}",
                self.channels,
                x.dims()
            )));
        }
        Ok(run_stages(self.embed(x)?, &self.stages, true, |l, h| self.layer(l, h))?.1)
    }

    /// The stem: convolution, (padding, norm,) max pool.
    fn embed(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = self.stem.forward(x)?;
        if self.stem_pad {
            h = h.pad(&[1, 1, 1, 1], "constant", Some(0.0))?;
        }
        if let Some(n) = &self.stem_norm {
            h = n.forward(&h)?;
        }
        if self.pool_pad {
            h = dynamic_pad(&h, 3, 2, 1)?;
        }
        Ok(h.max_pool2d(&[3], Some(&[2]), &[0], &[1], false)?)
    }
}

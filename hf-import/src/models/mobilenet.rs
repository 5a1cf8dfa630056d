//! MobileNet V1 and V2 (model types `mobilenet_v1`, `mobilenet_v2`: `MobileNetV1Model`,
//! `MobileNetV1ForImageClassification`, `MobileNetV2Model`, `MobileNetV2ForImageClassification`,
//! `MobileNetV2ForSemanticSegmentation`; google/mobilenet_v1_1.0_224, google/mobilenet_v2_1.0_224,
//! google/deeplabv3_mobilenet_v2_1.0_513). Convolutions with batch norms (in inference mode) and
//! ReLU6, padded as TensorFlow's `SAME` (`tf_padding`, the default) or by half the kernel:
//! V1 alternates depthwise 3×3 and pointwise 1×1 layers; V2 stacks inverted residuals (a 1×1
//! expansion, a depthwise 3×3, a linear 1×1 reduction, the input added back where the shape
//! stays), widths scaled by `depth_multiplier` and rounded to `depth_divisible_by`, strides turned
//! into dilations past `output_stride`, and a last 1×1 convolution. `pooler_output` is the mean
//! over positions `[batch, channels]`; the classifier reads it; V2's DeepLabV3 head classifies
//! every position of the last block's map (`logits` `[batch, labels, rows, cols]`). Any image
//! size runs.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::classification::num_labels;
use super::conv_bn::{make_divisible, scaled, ConvLayer, ConvSpec, InvertedResidual};
use super::vision::{pixels_of, pooled_outputs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Linear};
use crate::weights::{Vars, Weights};

/// One block of the stack: V1's single layer, or V2's inverted residual.
#[derive(Debug, Clone)]
enum Block {
    Layer(ConvLayer),
    Inverted(InvertedResidual),
}

impl Block {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Block::Layer(l) => l.forward(x),
            Block::Inverted(block) => block.forward(x),
        }
    }
}

/// V2's DeepLabV3 head: the map's mean through a 1×1 layer, broadcast back (bilinearly, corners
/// aligned), beside the map through another; both projected and classified.
#[derive(Debug, Clone)]
struct DeepLab {
    pool: ConvLayer,
    aspp: ConvLayer,
    projection: ConvLayer,
    classifier: ConvLayer,
}

impl DeepLab {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let size = [x.dims()[2], x.dims()[3]];
        let pooled = self.pool.forward(&x.mean([2, 3], true)?)?;
        let pooled = pooled.interpolate(Some(&size), None, "bilinear", Some(true))?;
        let both = Tensor::cat(&[&pooled, &self.aspp.forward(x)?], 1)?;
        self.classifier.forward(&self.projection.forward(&both)?)
    }
}

/// What sits on the network.
#[derive(Debug, Clone)]
enum Head {
    /// the base model: `last_hidden_state`, `pooler_output`
    None,
    /// the classifier on `pooler_output` (`None` for 0 labels: the logits are the features)
    Classifier(Option<Linear>),
    Segmentation(Box<DeepLab>),
}

/// transformers' `MobileNetV1Model` / `MobileNetV2Model` and their heads.
#[derive(Debug, Clone)]
pub struct MobileNet {
    stem: Vec<ConvLayer>,
    blocks: Vec<Block>,
    /// V2's last 1×1 layer
    last: Option<ConvLayer>,
    head: Head,
    channels: usize,
}

impl MobileNet {
    /// Loads `arch` (a V1 or V2 model, classifier or V2's segmenter) from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let v2 = arch.starts_with("MobileNetV2");
        let prefix = if v2 { "mobilenet_v2" } else { "mobilenet_v1" };
        let v = weights.base_vars(prefix);
        let channels = cfg.usize_or("num_channels", 3)?;
        let multiplier = cfg.f64_or("depth_multiplier", 1.0)?;
        if !(multiplier > 0.0 && multiplier <= 64.0) {
            return Err(Error::Config(format!("depth_multiplier must be in (0, 64], got {multiplier}")));
        }
        let tf = cfg.bool_or("tf_padding", true)?;
        let eps = cfg.f64_or("layer_norm_eps", 1e-3)?;
        let act = Activation::from_name(cfg.str_or("hidden_act", "relu6")?)?;
        let conv = |kernel: usize, stride: usize, groups: usize| ConvSpec {
            kernel,
            stride,
            dilation: 1,
            groups,
            norm_eps: Some(eps),
            act: Some(act),
            bias: false,
        };
        let (stem, blocks, last, width) = if v2 {
            Self::load_v2(&v, cfg, (channels, multiplier, tf), !arch.ends_with("Segmentation"), conv)?
        } else {
            let min_depth = cfg.usize_or("min_depth", 8)?;
            let width = |depth: usize| ((depth as f64 * multiplier) as usize).max(min_depth);
            let mut out = width(32);
            let stem = vec![ConvLayer::load(&v.pp("conv_stem"), (channels, out), conv(3, 2, 1), tf)?];
            let mut blocks = Vec::with_capacity(26);
            let mut depth = 32;
            for (i, stride) in [1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1].into_iter().enumerate() {
                let input = out;
                if stride == 2 || i == 0 {
                    depth *= 2;
                    out = width(depth);
                }
                let l = v.pp("layer");
                blocks.push(Block::Layer(ConvLayer::load(
                    &l.pp(2 * i),
                    (input, input),
                    conv(3, stride, input),
                    tf,
                )?));
                blocks.push(Block::Layer(ConvLayer::load(
                    &l.pp(2 * i + 1),
                    (input, out),
                    conv(1, 1, 1),
                    tf,
                )?));
            }
            (stem, blocks, None, out)
        };
        let head = match arch.get(11..).unwrap_or_default() {
            "Model" => Head::None,
            "ForImageClassification" => Head::Classifier(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier"), width, n, true)?),
            }),
            "ForSemanticSegmentation" if v2 => {
                let h = weights.vars("segmentation_head");
                let last_block = scaled(320, multiplier);
                let divisible = cfg.usize_or("depth_divisible_by", 8)?;
                let last_block = make_divisible(last_block, divisible, cfg.usize_or("min_depth", 8)?);
                let relu = ConvSpec { norm_eps: Some(1e-5), act: Some(Activation::Relu), ..conv(1, 1, 1) };
                Head::Segmentation(Box::new(DeepLab {
                    pool: ConvLayer::load(&h.pp("conv_pool"), (last_block, 256), relu, tf)?,
                    aspp: ConvLayer::load(&h.pp("conv_aspp"), (last_block, 256), relu, tf)?,
                    projection: ConvLayer::load(&h.pp("conv_projection"), (512, 256), relu, tf)?,
                    classifier: ConvLayer::load(
                        &h.pp("classifier"),
                        (256, num_labels(cfg)?),
                        ConvSpec { norm_eps: None, act: None, bias: true, ..conv(1, 1, 1) },
                        tf,
                    )?,
                }))
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(MobileNet { stem, blocks, last, head, channels })
    }

    /// V2's stem, inverted residuals and (`with_last`: the segmenter never reads it) last layer,
    /// and the last layer's width.
    #[allow(clippy::type_complexity)]
    fn load_v2(
        v: &Vars<'_>,
        cfg: &Config,
        (channels, multiplier, tf): (usize, f64, bool),
        with_last: bool,
        conv: impl Fn(usize, usize, usize) -> ConvSpec,
    ) -> Result<(Vec<ConvLayer>, Vec<Block>, Option<ConvLayer>, usize)> {
        let divisible = cfg.usize_or("depth_divisible_by", 8)?;
        let min_depth = cfg.usize_or("min_depth", 8)?;
        if divisible == 0 {
            return Err(Error::Config("depth_divisible_by must be positive".into()));
        }
        let expand_ratio = cfg.f64_or("expand_ratio", 6.0)?;
        if !(expand_ratio > 0.0 && expand_ratio <= 64.0) {
            return Err(Error::Config(format!("expand_ratio must be in (0, 64], got {expand_ratio}")));
        }
        let output_stride = cfg.usize_or("output_stride", 32)?;
        let depth = |c: usize| make_divisible(scaled(c, multiplier), divisible, min_depth);
        let linear = |spec: ConvSpec| ConvSpec { act: None, ..spec };
        let widths = [16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320].map(depth);
        let s = v.pp("conv_stem");
        let expanded = depth(32);
        let mut stem = vec![ConvLayer::load(&s.pp("first_conv"), (channels, expanded), conv(3, 2, 1), tf)?];
        if !cfg.bool_or("first_layer_is_expansion", true)? {
            stem.push(ConvLayer::load(&s.pp("expand_1x1"), (expanded, expanded), conv(1, 1, 1), tf)?);
        }
        stem.push(ConvLayer::load(&s.pp("conv_3x3"), (expanded, expanded), conv(3, 1, expanded), tf)?);
        stem.push(ConvLayer::load(&s.pp("reduce_1x1"), (expanded, widths[0]), linear(conv(1, 1, 1)), tf)?);
        let strides = [2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1];
        let (mut current, mut dilation) = (2usize, 1usize);
        let mut blocks = Vec::with_capacity(16);
        for (i, &stride) in strides.iter().enumerate() {
            // Past `output_stride` the strides become dilations (from the next block on).
            let (stride, layer_dilation) = if current == output_stride {
                let d = dilation;
                dilation *= stride;
                (1, d)
            } else {
                current = current.saturating_mul(stride);
                (stride, 1)
            };
            let (input, out) = (widths[i], widths[i + 1]);
            let inner = make_divisible(scaled(input, expand_ratio), divisible, min_depth);
            let l = v.pp("layer").pp(i);
            blocks.push(Block::Inverted(InvertedResidual {
                expand: ConvLayer::load(&l.pp("expand_1x1"), (input, inner), conv(1, 1, 1), tf)?,
                depthwise: ConvLayer::load(
                    &l.pp("conv_3x3"),
                    (inner, inner),
                    ConvSpec { dilation: layer_dilation, ..conv(3, stride, inner) },
                    tf,
                )?,
                reduce: ConvLayer::load(&l.pp("reduce_1x1"), (inner, out), linear(conv(1, 1, 1)), tf)?,
                residual: stride == 1 && input == out,
            }));
        }
        let width = match cfg.bool_or("finegrained_output", true)? && multiplier < 1.0 {
            true => 1280,
            false => depth(1280),
        };
        let last = match with_last {
            true => Some(ConvLayer::load(&v.pp("conv_1x1"), (widths[16], width), conv(1, 1, 1), tf)?),
            false => None,
        };
        Ok((stem, blocks, last, width))
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stem[0].weight().device()
    }

    /// `pixel_values` → `last_hidden_state` and `pooler_output` (the base models), `logits`, and
    /// with `output_hidden_states` every block's output (`hidden_states.*`).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut h = pixels_of(inputs, self.stem[0].weight().dtype(), self.device(), self.channels)?;
        for l in &self.stem {
            h = l.forward(&h)?;
        }
        let mut hidden_states = Vec::with_capacity(self.blocks.len());
        for b in &self.blocks {
            h = b.forward(&h)?;
            if output_hidden_states || matches!(self.head, Head::Segmentation(_)) {
                hidden_states.push(h.clone());
            }
        }
        let hidden_states = if output_hidden_states { hidden_states } else { Vec::new() };
        let classifier = match &self.head {
            Head::Segmentation(head) => {
                let mut out = vec![("logits".to_string(), head.forward(&h)?)];
                out.extend(
                    hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)),
                );
                return Ok(out);
            }
            Head::Classifier(c) => Some(c),
            Head::None => None,
        };
        let last = match &self.last {
            Some(l) => l.forward(&h)?,
            None => h,
        };
        let pooled = last.mean([2, 3], false)?;
        pooled_outputs(classifier, last, pooled, hidden_states)
    }
}

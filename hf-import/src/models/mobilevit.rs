//! MobileViT (model type `mobilevit`: `MobileViTModel`, `MobileViTForImageClassification`,
//! `MobileViTForSemanticSegmentation`; apple/mobilevit-small, apple/deeplabv3-mobilevit-small): a
//! 3×3 stride-2 stem, two stages of MobileNetV2's inverted residuals, then three MobileViT blocks.
//! Each block downsamples (an inverted residual; past `output_stride` a dilation instead),
//! encodes locally (a k×k and a 1×1 convolution), unfolds the map into `patch_size²` sequences of
//! patch positions (bilinearly resized first to a multiple of the patch), runs ViT layers on each,
//! folds the map back, projects it and fuses it with the block's input. The base model widens the
//! last map by a 1×1 convolution (`last_hidden_state`; `pooler_output` its mean over positions,
//! which the classifier reads); the segmenter runs DeepLabV3's atrous pyramid on the last block's
//! map (`logits` `[batch, labels, rows, cols]`). Any image size runs.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::classification::num_labels;
use super::conv_bn::{make_divisible, scaled, ConvLayer, ConvSpec, InvertedResidual};
use super::mobilevit_v2::LinearBlock;
use super::vision::{pixels_of, pooled_outputs};
use super::vit::{load_hub_layer, ViTConfig};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::{Vars, Weights};

/// A MobileViT block (`MobileViTLayer`).
#[derive(Debug, Clone)]
pub(super) struct VitBlock {
    downsample: InvertedResidual,
    local_kxk: ConvLayer,
    local_1x1: ConvLayer,
    layers: Vec<PreNormEncoderLayer>,
    layernorm: LayerNorm,
    projection: ConvLayer,
    fusion: ConvLayer,
    heads: usize,
    act: Activation,
    /// a patch's side
    patch: usize,
}

impl VitBlock {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let residual = self.downsample.forward(x)?;
        let local = self.local_1x1.forward(&self.local_kxk.forward(&residual)?)?;
        let (b, c, rows, cols) = (local.dims()[0], local.dims()[1], local.dims()[2], local.dims()[3]);
        let p = self.patch;
        // (Sides not a multiple of the patch are resized up to one, bilinearly, and back after.)
        let (h, w) = (rows.div_ceil(p) * p, cols.div_ceil(p) * p);
        let resized = (h, w) != (rows, cols);
        let local = match resized {
            true => local.interpolate(Some(&[h, w]), None, "bilinear", Some(false))?,
            false => local,
        };
        let (nh, nw) = (h / p, w / p);
        // `[b, c, nh, p, nw, p]` → one sequence of the `nh · nw` patches per position in a patch.
        let mut seq = local.reshape([b, c, nh, p, nw, p])?.permute([0, 3, 5, 2, 4, 1])?.reshape([
            b * p * p,
            nh * nw,
            c,
        ])?;
        for layer in &self.layers {
            seq = layer.forward(&seq, None, self.heads, self.act)?;
        }
        let seq = self.layernorm.forward(&seq)?;
        let folded = seq.reshape([b, p, p, nh, nw, c])?.permute([0, 5, 3, 1, 4, 2])?.reshape([b, c, h, w])?;
        let folded = match resized {
            true => folded.interpolate(Some(&[rows, cols]), None, "bilinear", Some(false))?,
            false => folded,
        };
        let projected = self.projection.forward(&folded)?;
        self.fusion.forward(&Tensor::cat(&[&residual, &projected], 1)?)
    }
}

/// One stage of the encoder.
#[derive(Debug, Clone)]
pub(super) enum Stage {
    /// MobileNetV2's inverted residuals (`MobileViTMobileNetLayer`)
    MobileNet(Vec<InvertedResidual>),
    Vit(Box<VitBlock>),
    /// MobileViTV2's block of separable (linear) self-attention
    Linear(Box<LinearBlock>),
}

impl Stage {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Stage::MobileNet(blocks) => blocks.iter().try_fold(x.clone(), |h, b| b.forward(&h)),
            Stage::Vit(block) => block.forward(x),
            Stage::Linear(block) => block.forward(x),
        }
    }
}

/// DeepLabV3's head: a 1×1 layer, three dilated 3×3 layers and the map's mean through a 1×1
/// layer (broadcast back), concatenated, projected and classified.
#[derive(Debug, Clone)]
pub(super) struct Aspp {
    /// the 1×1 and the dilated layers
    branches: Vec<ConvLayer>,
    pool: ConvLayer,
    project: ConvLayer,
    classifier: ConvLayer,
}

impl Aspp {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut pyramid = self.branches.iter().map(|b| b.forward(x)).collect::<Result<Vec<_>>>()?;
        let pooled = self.pool.forward(&x.mean([2, 3], true)?)?;
        pyramid.push(pooled.expand([pooled.dims()[0], pooled.dims()[1], x.dims()[2], x.dims()[3]])?);
        let all = Tensor::cat(&pyramid.iter().collect::<Vec<_>>(), 1)?;
        self.classifier.forward(&self.project.forward(&all)?)
    }
}

/// What sits on the network.
#[derive(Debug, Clone)]
pub(super) enum Head {
    /// the base model: `last_hidden_state`, `pooler_output`
    None,
    /// the classifier on `pooler_output` (`None` for 0 labels: the logits are the features)
    Classifier(Option<Linear>),
    Segmentation(Box<Aspp>),
}

/// transformers' `MobileViTModel` and its heads.
#[derive(Debug, Clone)]
pub struct MobileVit {
    pub(super) stem: ConvLayer,
    pub(super) stages: Vec<Stage>,
    /// `conv_1x1_exp` (not in the segmenter, nor in V2)
    pub(super) expand: Option<ConvLayer>,
    pub(super) head: Head,
    pub(super) channels: usize,
}

/// The sizes every layer reads.
pub(super) struct Sizes {
    pub(super) eps: f64,
    pub(super) act: Activation,
    pub(super) expand_ratio: f64,
}

impl Sizes {
    /// A convolution with a batch norm and the hidden activation.
    pub(super) fn conv(&self, kernel: usize, stride: usize, groups: usize) -> ConvSpec {
        ConvSpec {
            kernel,
            stride,
            dilation: 1,
            groups,
            norm_eps: Some(1e-5),
            act: Some(self.act),
            bias: false,
        }
    }

    /// An inverted residual from `input` to `out` channels.
    pub(super) fn inverted(
        &self,
        v: &Vars<'_>,
        (input, out): (usize, usize),
        stride: usize,
        dilation: usize,
    ) -> Result<InvertedResidual> {
        let inner = make_divisible(scaled(input, self.expand_ratio), 8, 8);
        let conv = |k: usize, s: usize, g: usize| self.conv(k, s, g);
        Ok(InvertedResidual {
            expand: ConvLayer::load(&v.pp("expand_1x1"), (input, inner), conv(1, 1, 1), false)?,
            depthwise: ConvLayer::load(
                &v.pp("conv_3x3"),
                (inner, inner),
                ConvSpec { dilation, ..conv(3, stride, inner) },
                false,
            )?,
            reduce: ConvLayer::load(
                &v.pp("reduce_1x1"),
                (inner, out),
                ConvSpec { act: None, ..conv(1, 1, 1) },
                false,
            )?,
            residual: stride == 1 && input == out,
        })
    }
}

impl Sizes {
    /// `MobileViTMobileNetLayer` under `v`: `n` inverted residuals from `input` to `out` channels,
    /// the first strided.
    pub(super) fn mobile_stage(
        &self,
        v: &Vars<'_>,
        (input, out): (usize, usize),
        stride: usize,
        n: usize,
    ) -> Result<Stage> {
        (0..n)
            .map(|j| {
                let io = if j == 0 { (input, out) } else { (out, out) };
                self.inverted(&v.pp("layer").pp(j), io, if j == 0 { stride } else { 1 }, 1)
            })
            .collect::<Result<Vec<_>>>()
            .map(Stage::MobileNet)
    }
}

impl MobileVit {
    /// Loads `arch` (the base model, the classifier or the segmenter) from `cfg` and `weights`
    /// (under `mobilevit.` or, for the base model, at the top).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let v = weights.base_vars("mobilevit");
        let channels = cfg.usize_or("num_channels", 3)?;
        let neck = cfg.usize_list_or("neck_hidden_sizes", &[16, 32, 64, 96, 128, 160, 640], 1)?;
        let hidden = cfg.usize_list_or("hidden_sizes", &[144, 192, 240], 1)?;
        if neck.len() < 7 || hidden.len() < 3 {
            return Err(Error::Config(format!(
                "MobileViT needs 7 neck_hidden_sizes and 3 hidden_sizes, got {neck:?} and {hidden:?}"
            )));
        }
        let heads = cfg.usize_or("num_attention_heads", 4)?;
        if let Some(h) = hidden[..3].iter().find(|&&h| heads == 0 || h % heads != 0) {
            return Err(Error::Config(format!(
                "hidden size {h} is not a multiple of num_attention_heads ({heads})"
            )));
        }
        let ratio = |key: &str, default: f64| -> Result<f64> {
            let r = cfg.f64_or(key, default)?;
            match r > 0.0 && r <= 64.0 {
                true => Ok(r),
                false => Err(Error::Config(format!("{key} must be in (0, 64], got {r}"))),
            }
        };
        let mlp_ratio = ratio("mlp_ratio", 2.0)?;
        let s = Sizes {
            eps: cfg.f64_or("layer_norm_eps", 1e-5)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "silu")?)?,
            expand_ratio: ratio("expand_ratio", 4.0)?,
        };
        let kernel = cfg.usize_or("conv_kernel_size", 3)?;
        let patch = cfg.usize_or("patch_size", 2)?;
        if kernel == 0 || patch == 0 {
            return Err(Error::Config("conv_kernel_size and patch_size must be positive".into()));
        }
        let (dilate4, dilate5) = match cfg.usize_or("output_stride", 32)? {
            8 => (true, true),
            16 => (false, true),
            _ => (false, false),
        };
        let stem = ConvLayer::load(&v.pp("conv_stem"), (channels, neck[0]), s.conv(3, 2, 1), false)?;
        let e = v.pp("encoder.layer");
        let mobile =
            |i: usize, io: (usize, usize), stride: usize, n: usize| s.mobile_stage(&e.pp(i), io, stride, n);
        let vit = |i: usize, (input, out): (usize, usize), width: usize, n: usize, dilation: usize| {
            let b = e.pp(i);
            let (stride, depthwise_dilation) = if dilation == 1 { (2, 1) } else { (1, dilation / 2) };
            let c = ViTConfig {
                hidden: width,
                heads,
                intermediate: (width as f64 * mlp_ratio) as usize,
                layers: n,
                eps: s.eps,
                act: s.act,
                image: (0, 0),
                patch: (patch, patch),
                channels: out,
                qkv_bias: cfg.bool_or("qkv_bias", true)?,
                pooler_size: width,
                pooler_act: s.act,
            };
            let plain = ConvSpec { norm_eps: None, act: None, ..s.conv(1, 1, 1) };
            Ok::<_, Error>(Stage::Vit(Box::new(VitBlock {
                downsample: s.inverted(
                    &b.pp("downsampling_layer"),
                    (input, out),
                    stride,
                    depthwise_dilation,
                )?,
                local_kxk: ConvLayer::load(&b.pp("conv_kxk"), (out, out), s.conv(kernel, 1, 1), false)?,
                local_1x1: ConvLayer::load(&b.pp("conv_1x1"), (out, width), plain, false)?,
                layers: (0..n)
                    .map(|j| load_hub_layer(&b.pp("transformer.layer").pp(j), &c))
                    .collect::<Result<Vec<_>>>()?,
                layernorm: LayerNorm::load(&b.pp("layernorm"), width, s.eps)?,
                projection: ConvLayer::load(&b.pp("conv_projection"), (width, out), s.conv(1, 1, 1), false)?,
                fusion: ConvLayer::load(&b.pp("fusion"), (2 * out, out), s.conv(kernel, 1, 1), false)?,
                heads,
                act: s.act,
                patch,
            })))
        };
        let stages = vec![
            mobile(0, (neck[0], neck[1]), 1, 1)?,
            mobile(1, (neck[1], neck[2]), 2, 3)?,
            vit(2, (neck[2], neck[3]), hidden[0], 2, 1)?,
            vit(3, (neck[3], neck[4]), hidden[1], 4, if dilate4 { 2 } else { 1 })?,
            vit(4, (neck[4], neck[5]), hidden[2], 3, [1, 2, 4][usize::from(dilate4) + usize::from(dilate5)])?,
        ];
        let expand = ConvLayer::load(&v.pp("conv_1x1_exp"), (neck[5], neck[6]), s.conv(1, 1, 1), false);
        let (expand, head) = match arch {
            "MobileViTModel" => (Some(expand?), Head::None),
            "MobileViTForImageClassification" => {
                // (transformers' classifier reads `neck_hidden_sizes[-1]` features: the 7th.)
                if neck.len() != 7 {
                    return Err(Error::Config(format!(
                        "MobileViT's classifier needs exactly 7 neck_hidden_sizes, got {neck:?}"
                    )));
                }
                let classifier = match num_labels(cfg)? {
                    0 => None,
                    n => Some(Linear::load(&weights.vars("classifier"), neck[6], n, true)?),
                };
                (Some(expand?), Head::Classifier(classifier))
            }
            "MobileViTForSemanticSegmentation" => {
                if neck.len() != 7 {
                    return Err(Error::Config(format!(
                        "MobileViT's segmenter needs exactly 7 neck_hidden_sizes, got {neck:?}"
                    )));
                }
                (None, Head::Segmentation(Box::new(Self::load_aspp(cfg, weights, neck[5], 256)?)))
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(MobileVit { stem, stages, expand, head, channels })
    }

    /// `segmentation_head.*`: DeepLabV3 on the last block's `input` channels.
    /// (`aspp_out_channels` defaults to `default_width`.)
    pub(super) fn load_aspp(
        cfg: &Config,
        weights: &Weights,
        input: usize,
        default_width: usize,
    ) -> Result<Aspp> {
        let rates = cfg.usize_list_or("atrous_rates", &[6, 12, 18], 1)?;
        if rates.len() != 3 {
            return Err(Error::Config(format!("atrous_rates must hold 3 values, got {rates:?}")));
        }
        let out = cfg.usize_or("aspp_out_channels", default_width)?;
        let h = weights.vars("segmentation_head");
        let a = h.pp("aspp");
        let relu = |kernel: usize, dilation: usize| ConvSpec {
            kernel,
            stride: 1,
            dilation,
            groups: 1,
            norm_eps: Some(1e-5),
            act: Some(Activation::Relu),
            bias: false,
        };
        let mut branches = vec![ConvLayer::load(&a.pp("convs.0"), (input, out), relu(1, 1), false)?];
        for (i, &rate) in rates.iter().enumerate() {
            branches.push(ConvLayer::load(&a.pp("convs").pp(i + 1), (input, out), relu(3, rate), false)?);
        }
        Ok(Aspp {
            branches,
            pool: ConvLayer::load(&a.pp("convs.4.conv_1x1"), (input, out), relu(1, 1), false)?,
            project: ConvLayer::load(&a.pp("project"), (5 * out, out), relu(1, 1), false)?,
            classifier: ConvLayer::load(
                &h.pp("classifier"),
                (out, num_labels(cfg)?),
                ConvSpec { norm_eps: None, act: None, bias: true, ..relu(1, 1) },
                false,
            )?,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stem.weight().device()
    }

    /// `pixel_values` → `last_hidden_state` and `pooler_output` (the base model) or `logits`, and
    /// with `output_hidden_states` every stage's output (`hidden_states.*`).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.stem.weight().dtype(), self.device(), self.channels)?;
        let mut h = self.stem.forward(&x)?;
        let mut hidden_states = Vec::with_capacity(self.stages.len());
        for stage in &self.stages {
            h = stage.forward(&h)?;
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
        }
        let classifier = match &self.head {
            Head::Segmentation(aspp) => {
                let mut out = vec![("logits".to_string(), aspp.forward(&h)?)];
                out.extend(
                    hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)),
                );
                return Ok(out);
            }
            Head::Classifier(c) => Some(c),
            Head::None => None,
        };
        let last = match &self.expand {
            Some(expand) => expand.forward(&h)?,
            None => h,
        };
        let pooled = last.mean([2, 3], false)?;
        pooled_outputs(classifier, last, pooled, hidden_states)
    }
}

//! MobileViTV2 (model type `mobilevitv2`: `MobileViTV2Model`, `MobileViTV2ForImageClassification`,
//! `MobileViTV2ForSemanticSegmentation`; apple/mobilevitv2-1.0-imagenet1k-256): MobileViT's
//! network ([`super::mobilevit`]) with widths scaled by `width_multiplier` and blocks of separable
//! self-attention: the map, cut into `patch_size²` positions of its whole patches (the pixels past
//! the last whole patch left out, and zero when folded back), runs 1×1-convolution blocks whose
//! attention weighs each position's patches by one softmaxed score, with one-group norms. No last
//! widening layer: `pooler_output` is the mean of the last map.

use oxtorch_tensor::Tensor;

use super::classification::num_labels;
use super::conv_bn::{ConvLayer, ConvSpec};
use super::mobilevit::{Head, MobileVit, Sizes, Stage};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Linear};
use crate::weights::{Vars, Weights};

/// A one-group norm over `[batch, channels, ...]` with a scale and shift per channel.
#[derive(Debug, Clone)]
struct OneGroupNorm {
    weight: Tensor,
    bias: Tensor,
    eps: f64,
}

impl OneGroupNorm {
    fn load(v: &Vars<'_>, channels: usize, eps: f64) -> Result<Self> {
        Ok(OneGroupNorm { weight: v.get("weight", &[channels])?, bias: v.get("bias", &[channels])?, eps })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.group_norm(1, Some(&self.weight), Some(&self.bias), self.eps)?)
    }
}

/// One block (`MobileViTV2TransformerLayer`) on patches `[batch, width, positions, patches]`.
#[derive(Debug, Clone)]
struct Layer {
    norm1: OneGroupNorm,
    /// `[1 + 2 · width]` outputs: the score, the keys, the values
    qkv: ConvLayer,
    out: ConvLayer,
    norm2: OneGroupNorm,
    ffn1: ConvLayer,
    ffn2: ConvLayer,
}

impl Layer {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let width = x.dims()[1];
        let qkv = self.qkv.forward(&self.norm1.forward(x)?)?;
        // Each position's patches weighed by their softmaxed score, summed into one context.
        let scores = qkv.narrow(1, 0, 1)?.softmax(-1, None)?;
        let context = qkv.narrow(1, 1, width)?.mul(&scores)?.sum([3], true)?;
        let attended = qkv.narrow(1, (1 + width) as isize, width)?.relu()?.mul(&context)?;
        let x = self.out.forward(&attended)?.add(x)?;
        Ok(self.ffn2.forward(&self.ffn1.forward(&self.norm2.forward(&x)?)?)?.add(&x)?)
    }
}

/// A MobileViTV2 block (`MobileViTV2Layer`).
#[derive(Debug, Clone)]
pub(super) struct LinearBlock {
    downsample: super::conv_bn::InvertedResidual,
    local_kxk: ConvLayer,
    local_1x1: ConvLayer,
    layers: Vec<Layer>,
    norm: OneGroupNorm,
    projection: ConvLayer,
    patch: usize,
}

impl LinearBlock {
    pub(super) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.local_1x1.forward(&self.local_kxk.forward(&self.downsample.forward(x)?)?)?;
        let (b, c, rows, cols) = (h.dims()[0], h.dims()[1], h.dims()[2], h.dims()[3]);
        let p = self.patch;
        let (nh, nw) = (rows / p, cols / p);
        if nh == 0 || nw == 0 {
            return Err(Error::Input(format!(
                "MobileViTV2's {rows}×{cols} map holds no whole {p}×{p} patch: give a larger image"
            )));
        }
        // `unfold`: `[b, c, p², nh · nw]`, each position of a patch with every whole patch.
        let whole = h.narrow(2, 0, nh * p)?.narrow(3, 0, nw * p)?;
        let mut patches = whole.reshape([b, c, nh, p, nw, p])?.permute([0, 1, 3, 5, 2, 4])?.reshape([
            b,
            c,
            p * p,
            nh * nw,
        ])?;
        for layer in &self.layers {
            patches = layer.forward(&patches)?;
        }
        let patches = self.norm.forward(&patches)?;
        // `fold`: back to the map, zeros past the last whole patch.
        let map = patches.reshape([b, c, p, p, nh, nw])?.permute([0, 1, 4, 2, 5, 3])?.reshape([
            b,
            c,
            nh * p,
            nw * p,
        ])?;
        let pad = [0, (cols - nw * p) as isize, 0, (rows - nh * p) as isize];
        self.projection.forward(&map.pad(&pad, "constant", Some(0.0))?)
    }
}

/// transformers' `make_divisible` of a fractional width: rounded to a multiple of `divisor` (at
/// least `min_value`), not more than 10% below it.
fn make_divisible(value: f64, divisor: usize, min_value: usize) -> usize {
    let new = (((value + divisor as f64 / 2.0) as usize) / divisor * divisor).max(min_value);
    if (new as f64) < 0.9 * value {
        new.saturating_add(divisor)
    } else {
        new
    }
}

/// Loads MobileViTV2's `arch` from `cfg` and `weights` (under `mobilevitv2.` or, for the base model,
/// at the top).
pub(super) fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<MobileVit> {
    let v = weights.base_vars("mobilevitv2");
    let channels = cfg.usize_or("num_channels", 3)?;
    let w = cfg.f64_or("width_multiplier", 1.0)?;
    if !(w > 0.0 && w <= 64.0) {
        return Err(Error::Config(format!("width_multiplier must be in (0, 64], got {w}")));
    }
    let expand_ratio = cfg.f64_or("expand_ratio", 2.0)?;
    if !(expand_ratio > 0.0 && expand_ratio <= 64.0) {
        return Err(Error::Config(format!("expand_ratio must be in (0, 64], got {expand_ratio}")));
    }
    let s = Sizes {
        eps: cfg.f64_or("layer_norm_eps", 1e-5)?,
        act: Activation::from_name(cfg.str_or("hidden_act", "swish")?)?,
        expand_ratio,
    };
    let kernel = cfg.usize_or("conv_kernel_size", 3)?;
    let patch = cfg.usize_or("patch_size", 2)?;
    let ffn_multiplier = cfg.usize_or("ffn_multiplier", 2)?;
    if kernel == 0 || patch == 0 {
        return Err(Error::Config("conv_kernel_size and patch_size must be positive".into()));
    }
    let blocks = cfg.usize_list_or("n_attn_blocks", &[2, 4, 3], 0)?;
    let units = cfg.usize_list_or("base_attn_unit_dims", &[128, 192, 256], 1)?;
    if blocks.len() < 3 || units.len() < 3 {
        return Err(Error::Config(format!(
            "MobileViTV2 needs 3 n_attn_blocks and base_attn_unit_dims, got {blocks:?} and {units:?}"
        )));
    }
    let dims = [
        make_divisible((32.0 * w).clamp(16.0, 64.0), 8, 16),
        make_divisible(64.0 * w, 16, 16),
        make_divisible(128.0 * w, 8, 8),
        make_divisible(256.0 * w, 8, 8),
        make_divisible(384.0 * w, 8, 8),
        make_divisible(512.0 * w, 8, 8),
    ];
    let (dilate4, dilate5) = match cfg.usize_or("output_stride", 32)? {
        8 => (true, true),
        16 => (false, true),
        _ => (false, false),
    };
    let stem = ConvLayer::load(&v.pp("conv_stem"), (channels, dims[0]), s.conv(3, 2, 1), false)?;
    let e = v.pp("encoder.layer");
    let mobile =
        |i: usize, io: (usize, usize), stride: usize, n: usize| s.mobile_stage(&e.pp(i), io, stride, n);
    let linear = |i: usize, (input, out): (usize, usize), unit: usize, n: usize, dilation: usize| {
        let b = e.pp(i);
        let d = make_divisible(unit as f64 * w, 8, 8);
        let inner = ffn_multiplier.saturating_mul(d) / 16 * 16;
        if inner == 0 && n > 0 {
            return Err(Error::Config(format!(
                "the FFN of a {d}-wide attention unit is {inner} wide (ffn_multiplier · width, rounded down to 16s)"
            )));
        }
        let (stride, depthwise_dilation) = if dilation == 1 { (2, 1) } else { (1, dilation / 2) };
        let plain = ConvSpec { norm_eps: None, act: None, ..s.conv(1, 1, 1) };
        let biased = ConvSpec { bias: true, ..plain };
        let layers = (0..n)
            .map(|j| {
                let l = b.pp("transformer.layer").pp(j);
                Ok(Layer {
                    norm1: OneGroupNorm::load(&l.pp("layernorm_before"), d, s.eps)?,
                    qkv: ConvLayer::load(&l.pp("attention.qkv_proj"), (d, 1 + 2 * d), biased, false)?,
                    out: ConvLayer::load(&l.pp("attention.out_proj"), (d, d), biased, false)?,
                    norm2: OneGroupNorm::load(&l.pp("layernorm_after"), d, s.eps)?,
                    ffn1: ConvLayer::load(
                        &l.pp("ffn.conv1"),
                        (d, inner),
                        ConvSpec { act: Some(s.act), ..biased },
                        false,
                    )?,
                    ffn2: ConvLayer::load(&l.pp("ffn.conv2"), (inner, d), biased, false)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok::<_, Error>(Stage::Linear(Box::new(LinearBlock {
            downsample: s.inverted(&b.pp("downsampling_layer"), (input, out), stride, depthwise_dilation)?,
            local_kxk: ConvLayer::load(&b.pp("conv_kxk"), (out, out), s.conv(kernel, 1, out), false)?,
            local_1x1: ConvLayer::load(&b.pp("conv_1x1"), (out, d), plain, false)?,
            layers,
            norm: OneGroupNorm::load(&b.pp("layernorm"), d, s.eps)?,
            projection: ConvLayer::load(
                &b.pp("conv_projection"),
                (d, out),
                ConvSpec { act: None, ..s.conv(1, 1, 1) },
                false,
            )?,
            patch,
        })))
    };
    let stages = vec![
        mobile(0, (dims[0], dims[1]), 1, 1)?,
        mobile(1, (dims[1], dims[2]), 2, 2)?,
        linear(2, (dims[2], dims[3]), units[0], blocks[0], 1)?,
        linear(3, (dims[3], dims[4]), units[1], blocks[1], if dilate4 { 2 } else { 1 })?,
        linear(
            4,
            (dims[4], dims[5]),
            units[2],
            blocks[2],
            [1, 2, 4][usize::from(dilate4) + usize::from(dilate5)],
        )?,
    ];
    let head = match arch {
        "MobileViTV2Model" => Head::None,
        "MobileViTV2ForImageClassification" => Head::Classifier(match num_labels(cfg)? {
            0 => None,
            n => Some(Linear::load(&weights.vars("classifier"), dims[5], n, true)?),
        }),
        "MobileViTV2ForSemanticSegmentation" => {
            Head::Segmentation(Box::new(MobileVit::load_aspp(cfg, weights, dims[5], 512)?))
        }
        _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
    };
    Ok(MobileVit { stem, stages, expand: None, head, channels })
}

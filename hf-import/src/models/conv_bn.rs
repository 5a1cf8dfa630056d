//! Convolutions with batch norms (in inference mode) and activations, as the mobile families
//! build them (MobileNet, MobileViT): one layer (`*ConvLayer`), the inverted residual, and
//! transformers' width rounding.

use oxtorch_tensor::Tensor;

use crate::error::{Error, Result};
use crate::layers::{Activation, BatchNorm2d};
use crate::weights::Vars;

/// One convolution with its optional batch norm and activation (`MobileNetV*ConvLayer`).
#[derive(Debug, Clone)]
pub(crate) struct ConvLayer {
    /// `[out, in / groups, k, k]`
    weight: Tensor,
    bias: Option<Tensor>,
    stride: usize,
    dilation: usize,
    groups: usize,
    /// TensorFlow's `SAME` padding (else `(k - 1) / 2 · dilation` each side)
    tf_padding: bool,
    norm: Option<BatchNorm2d>,
    act: Option<Activation>,
}

/// How a [`ConvLayer`] is built.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConvSpec {
    pub(crate) kernel: usize,
    pub(crate) stride: usize,
    pub(crate) dilation: usize,
    pub(crate) groups: usize,
    /// the batch norm's epsilon (none without a norm)
    pub(crate) norm_eps: Option<f64>,
    pub(crate) act: Option<Activation>,
    pub(crate) bias: bool,
}

impl ConvLayer {
    /// `v.convolution` (and `v.normalization`) as `spec` builds them; TensorFlow's `SAME`
    /// padding when `tf_padding`, else `(k - 1) / 2 · dilation` each side.
    pub(crate) fn load(
        v: &Vars<'_>,
        (input, out): (usize, usize),
        spec: ConvSpec,
        tf_padding: bool,
    ) -> Result<Self> {
        let k = spec.kernel;
        if spec.groups == 0 || input % spec.groups != 0 || out % spec.groups != 0 {
            return Err(Error::Config(format!(
                "a convolution of {input} to {out} channels cannot have {} groups",
                spec.groups
            )));
        }
        let conv = v.pp("convolution");
        Ok(ConvLayer {
            weight: conv.get("weight", &[out, input / spec.groups, k, k])?,
            bias: if spec.bias { Some(conv.get("bias", &[out])?) } else { None },
            stride: spec.stride,
            dilation: spec.dilation,
            groups: spec.groups,
            tf_padding,
            norm: spec.norm_eps.map(|eps| BatchNorm2d::load(&v.pp("normalization"), out, eps)).transpose()?,
            act: spec.act,
        })
    }

    /// The convolution's weight `[out, in / groups, k, k]`.
    pub(crate) fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// `x` `[batch, in, rows, cols]` → `[batch, out, rows', cols']`.
    pub(crate) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let k = self.weight.dims()[2];
        let (s, d) = (self.stride, self.dilation);
        let x = match self.tf_padding {
            true => {
                // TensorFlow's `SAME`: `k - s` (or `k - in % s`) split with the extra after, each
                // side times the dilation (as transformers pads).
                let along = |len: usize| {
                    if len.is_multiple_of(s) {
                        k.saturating_sub(s)
                    } else {
                        k.saturating_sub(len % s)
                    }
                };
                let (h, w) = (along(x.dims()[2]), along(x.dims()[3]));
                let pad = [w / 2 * d, (w - w / 2) * d, h / 2 * d, (h - h / 2) * d];
                x.pad(&pad.map(|p| p as isize), "constant", Some(0.0))?
            }
            false => x.clone(),
        };
        let padding = if self.tf_padding { 0 } else { (k - 1) / 2 * d };
        let mut y = x.conv2d(&self.weight, self.bias.as_ref(), &[s], padding, &[d], self.groups)?;
        if let Some(n) = &self.norm {
            y = n.forward(&y)?;
        }
        match self.act {
            Some(a) => a.forward(&y),
            None => Ok(y),
        }
    }
}

/// MobileNetV2's inverted residual (`expand_1x1`, `conv_3x3`, `reduce_1x1`): a 1×1 expansion, a
/// depthwise 3×3, a linear 1×1 reduction, the input added back where the shape stays.
#[derive(Debug, Clone)]
pub(crate) struct InvertedResidual {
    pub(crate) expand: ConvLayer,
    pub(crate) depthwise: ConvLayer,
    pub(crate) reduce: ConvLayer,
    /// whether the input is added back (stride 1, as many channels out as in)
    pub(crate) residual: bool,
}

impl InvertedResidual {
    /// `x` → the block's output.
    pub(crate) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = self.reduce.forward(&self.depthwise.forward(&self.expand.forward(x)?)?)?;
        Ok(if self.residual { x.add(&y)? } else { y })
    }
}

/// transformers' `make_divisible`: `value` rounded to a multiple of `divisor` (at least
/// `min_value`), not more than 10% below it.
pub(crate) fn make_divisible(value: usize, divisor: usize, min_value: usize) -> usize {
    let rounded = ((value as f64 + divisor as f64 / 2.0) as usize) / divisor * divisor;
    let new = rounded.max(min_value);
    if (new as f64) < 0.9 * value as f64 {
        new.saturating_add(divisor)
    } else {
        new
    }
}

/// `channels · factor` rounded as Python's `round` (half to even).
pub(crate) fn scaled(channels: usize, factor: f64) -> usize {
    (channels as f64 * factor).round_ties_even() as usize
}

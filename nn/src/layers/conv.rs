//! `Conv1d`, `Conv2d`, `Conv3d` (torch's defaults and initialisation).

use oxtorch_tensor::{DType, Error, Padding, Result, Tensor};

use crate::init;
use crate::module::{Forward, Member, MemberMut, Module};

/// Hyper-parameters of a convolution beyond the channel counts and kernel size, with torch's
/// defaults (`stride 1, padding 0, dilation 1, groups 1, bias true`).
#[derive(Clone, Debug)]
pub struct ConvOptions {
    /// stride per spatial dim (one value broadcasts)
    pub stride: Vec<usize>,
    /// zero padding per spatial dim, or "same"/"valid"
    pub padding: Padding,
    /// dilation per spatial dim
    pub dilation: Vec<usize>,
    /// channel groups
    pub groups: usize,
    /// whether the layer has a bias
    pub bias: bool,
    /// parameter dtype
    pub dtype: DType,
}

impl Default for ConvOptions {
    fn default() -> Self {
        ConvOptions {
            stride: vec![1],
            padding: Padding::Explicit(vec![0]),
            dilation: vec![1],
            groups: 1,
            bias: true,
            dtype: DType::F32,
        }
    }
}

/// An N-d convolution layer: `weight [out, in / groups, *kernel]`, `bias [out]`.
pub struct ConvNd<const N: usize> {
    /// the filters
    pub weight: Tensor,
    /// the per-channel bias
    pub bias: Option<Tensor>,
    /// the other hyper-parameters
    pub options: ConvOptions,
}

/// torch's `nn.Conv1d`.
pub type Conv1d = ConvNd<1>;
/// torch's `nn.Conv2d`.
pub type Conv2d = ConvNd<2>;
/// torch's `nn.Conv3d`.
pub type Conv3d = ConvNd<3>;

impl<const N: usize> ConvNd<N> {
    /// A layer with torch's initialisation (`kaiming_uniform_(a=√5)` weights, `U(±1/√fan_in)` bias).
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: &[usize],
        options: ConvOptions,
    ) -> Result<Self> {
        let g = options.groups;
        if g == 0 || !in_channels.is_multiple_of(g) || !out_channels.is_multiple_of(g) {
            return Err(Error::msg(format!(
                "in_channels ({in_channels}) and out_channels ({out_channels}) must be divisible by groups ({g})"
            )));
        }
        let kernel: Vec<usize> = match kernel_size.len() {
            1 => vec![kernel_size[0]; N],
            n if n == N => kernel_size.to_vec(),
            n => return Err(Error::msg(format!("kernel_size must have 1 or {N} values, got {n}"))),
        };
        let mut shape = vec![out_channels, in_channels / g];
        shape.extend(&kernel);
        let weight = Tensor::empty(shape, options.dtype)?;
        init::kaiming_uniform_(&weight, 5f64.sqrt(), "fan_in", "leaky_relu")?;
        let bias = if options.bias {
            let fan_in = (in_channels / g) * kernel.iter().product::<usize>();
            let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
            let b = Tensor::empty([out_channels], options.dtype)?;
            init::uniform_(&b, -bound, bound)?;
            Some(b.requires_grad_(true)?)
        } else {
            None
        };
        Ok(ConvNd { weight: weight.requires_grad_(true)?, bias, options })
    }
}

impl<const N: usize> Forward for ConvNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let o = &self.options;
        x.conv_nd(N, &self.weight, self.bias.as_ref(), &o.stride, o.padding.clone(), &o.dilation, o.groups)
    }
}

impl<const N: usize> Module for ConvNd<N> {
    fn visit(&self, f: &mut dyn FnMut(&str, Member<'_>)) {
        f("weight", Member::Param(&self.weight));
        if let Some(b) = &self.bias {
            f("bias", Member::Param(b));
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f("weight", MemberMut::Param(&mut self.weight));
        if let Some(b) = &mut self.bias {
            f("bias", MemberMut::Param(b));
        }
    }
    fn type_name(&self) -> &'static str {
        ["Conv1d", "Conv2d", "Conv3d"].get(N.wrapping_sub(1)).copied().unwrap_or("ConvNd")
    }
}

//! `LazyConv1d/2d/3d` and `LazyConvTranspose1d/2d/3d`, and the checks they share.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::{Lazy, LazyRole, LazySpec};
use crate::layers::{ConvNd, ConvOptions, ConvTransposeNd, ConvTransposeOptions};
use crate::module::{torch_size, ModuleExt};

/// torch's `nn.LazyConv1d`.
pub type LazyConv1d = Lazy<LazyConvSpec<1>>;
/// torch's `nn.LazyConv2d`.
pub type LazyConv2d = Lazy<LazyConvSpec<2>>;
/// torch's `nn.LazyConv3d`.
pub type LazyConv3d = Lazy<LazyConvSpec<3>>;
/// torch's `nn.LazyConvTranspose1d`.
pub type LazyConvTranspose1d = Lazy<LazyConvTransposeSpec<1>>;
/// torch's `nn.LazyConvTranspose2d`.
pub type LazyConvTranspose2d = Lazy<LazyConvTransposeSpec<2>>;
/// torch's `nn.LazyConvTranspose3d`.
pub type LazyConvTranspose3d = Lazy<LazyConvTransposeSpec<3>>;

/// One value broadcast to `n`, or `n` values.
fn spread(what: &str, v: &[usize], n: usize) -> Result<Vec<usize>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        l => Err(Error::msg(format!("{what} must have 1 or {n} values, got {l}"))),
    }
}

/// torch's `_LazyConvXdMixin._get_in_channels`: the channels of an unbatched (`N + 1` dims) or
/// batched (`N + 2`) input.
fn conv_in_channels(class: &str, n: usize, input: &Tensor) -> Result<usize> {
    let r = input.rank();
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(format!(
            "Expected {}D (unbatched) or {}D (batched) input to {class}, but got input of size: {}",
            n + 1,
            n + 2,
            torch_size(input.dims())
        )));
    }
    Ok(input.dims()[r - n - 1])
}

/// torch's checks of a convolution's constructor that do not need the input channels.
fn check_conv_groups(groups: usize, out_channels: usize) -> Result<()> {
    if groups == 0 {
        return Err(Error::msg("groups must be a positive integer"));
    }
    if !out_channels.is_multiple_of(groups) {
        return Err(Error::msg("out_channels must be divisible by groups"));
    }
    Ok(())
}

// --- LazyConv1d/2d/3d ----------------------------------------------------------------------------

/// The hyper-parameters of [`LazyConv1d`], [`LazyConv2d`], [`LazyConv3d`].
#[derive(Clone, Debug)]
pub struct LazyConvSpec<const N: usize> {
    /// output channels
    pub out_channels: usize,
    /// kernel size per spatial dim
    pub kernel_size: Vec<usize>,
    /// the other hyper-parameters (`options.dtype` is the placeholders' dtype)
    pub options: ConvOptions,
}

impl<const N: usize> LazySpec for LazyConvSpec<N> {
    type Module = ConvNd<N>;
    fn name(&self) -> &'static str {
        ["LazyConv1d", "LazyConv2d", "LazyConv3d"].get(N.wrapping_sub(1)).copied().unwrap_or("LazyConvNd")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        let mut m = vec![("weight", LazyRole::Param, None)];
        if self.options.bias {
            m.push(("bias", LazyRole::Param, None));
        }
        Ok(m)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        conv_in_channels(self.name(), N, input)
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        (name == "weight" && dims.len() == N + 2).then(|| dims[1] * self.options.groups)
    }
    fn known_shape(&self, name: &str) -> Option<Vec<usize>> {
        (name == "bias" && self.options.bias).then(|| vec![self.out_channels])
    }
    fn build(&self, size: usize, dtype: DType) -> Result<ConvNd<N>> {
        ConvNd::new(size, self.out_channels, &self.kernel_size, ConvOptions { dtype, ..self.options.clone() })
    }
    fn extra_repr(&self) -> String {
        crate::layers::conv::conv_extra_repr::<N>(
            0,
            self.out_channels,
            &self.kernel_size,
            &self.options,
            self.options.bias,
        )
    }
}

impl<const N: usize> Lazy<LazyConvSpec<N>> {
    /// torch's `LazyConv{N}d(out_channels, kernel_size, ...)`: `in_channels` is dim 1 of the
    /// first (batched) input, dim 0 of an unbatched one.
    pub fn new(out_channels: usize, kernel_size: &[usize], options: ConvOptions) -> Result<Self> {
        check_conv_groups(options.groups, out_channels)?;
        if !["zeros", "reflect", "replicate", "circular"].contains(&options.padding_mode) {
            return Err(Error::msg(format!(
                "padding_mode must be one of {{'reflect', 'replicate', 'zeros', 'circular'}}, but got padding_mode='{}'",
                options.padding_mode
            )));
        }
        let kernel_size = spread("kernel_size", kernel_size, N)?;
        let dtype = options.dtype;
        let mut lazy = Self::from_spec(LazyConvSpec { out_channels, kernel_size, options })?;
        if dtype != DType::default_float() {
            lazy.to(dtype)?;
        }
        Ok(lazy)
    }
}

// --- LazyConvTranspose1d/2d/3d -------------------------------------------------------------------

/// The hyper-parameters of [`LazyConvTranspose1d`], [`LazyConvTranspose2d`],
/// [`LazyConvTranspose3d`].
#[derive(Clone, Debug)]
pub struct LazyConvTransposeSpec<const N: usize> {
    /// output channels
    pub out_channels: usize,
    /// kernel size per spatial dim
    pub kernel_size: Vec<usize>,
    /// the other hyper-parameters (`options.dtype` is the placeholders' dtype)
    pub options: ConvTransposeOptions,
}

impl<const N: usize> LazySpec for LazyConvTransposeSpec<N> {
    type Module = ConvTransposeNd<N>;
    fn name(&self) -> &'static str {
        ["LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
            .get(N.wrapping_sub(1))
            .copied()
            .unwrap_or("LazyConvTransposeNd")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        let mut m = vec![("weight", LazyRole::Param, None)];
        if self.options.bias {
            m.push(("bias", LazyRole::Param, None));
        }
        Ok(m)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        conv_in_channels(self.name(), N, input)
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        (name == "weight" && dims.len() == N + 2).then(|| dims[0])
    }
    fn known_shape(&self, name: &str) -> Option<Vec<usize>> {
        (name == "bias" && self.options.bias).then(|| vec![self.out_channels])
    }
    fn build(&self, size: usize, dtype: DType) -> Result<ConvTransposeNd<N>> {
        ConvTransposeNd::new(
            size,
            self.out_channels,
            &self.kernel_size,
            ConvTransposeOptions { dtype, ..self.options.clone() },
        )
    }
    fn extra_repr(&self) -> String {
        crate::layers::conv_transpose::conv_transpose_extra_repr::<N>(
            0,
            self.out_channels,
            &self.kernel_size,
            &self.options,
            self.options.bias,
        )
    }
}

impl<const N: usize> Lazy<LazyConvTransposeSpec<N>> {
    /// torch's `LazyConvTranspose{N}d(out_channels, kernel_size, ...)`.
    pub fn new(out_channels: usize, kernel_size: &[usize], options: ConvTransposeOptions) -> Result<Self> {
        check_conv_groups(options.groups, out_channels)?;
        let kernel_size = spread("kernel_size", kernel_size, N)?;
        let dtype = options.dtype;
        let mut lazy = Self::from_spec(LazyConvTransposeSpec { out_channels, kernel_size, options })?;
        if dtype != DType::default_float() {
            lazy.to(dtype)?;
        }
        Ok(lazy)
    }

    /// torch's `forward(input, output_size)` (materializing first).
    pub fn forward_with_output_size(&self, x: &Tensor, output_size: &[usize]) -> Result<Tensor> {
        self.forward_module(x)?.forward_with_output_size(x, output_size)
    }
}

//! `ConvTranspose1d`, `ConvTranspose2d`, `ConvTranspose3d` (torch's defaults and initialisation).

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;
use crate::module::{Forward, Member, MemberMut, Module};

/// Hyper-parameters of a transposed convolution beyond channels and kernel size, with torch's
/// defaults (`stride 1, padding 0, output_padding 0, groups 1, bias true, dilation 1`). One value
/// broadcasts over the spatial dims.
#[derive(Clone, Debug)]
pub struct ConvTransposeOptions {
    /// stride per spatial dim
    pub stride: Vec<usize>,
    /// implicit zero padding removed from each side of the output
    pub padding: Vec<usize>,
    /// extra size added to one side of the output
    pub output_padding: Vec<usize>,
    /// channel groups
    pub groups: usize,
    /// whether the layer has a bias
    pub bias: bool,
    /// dilation per spatial dim
    pub dilation: Vec<usize>,
    /// parameter dtype
    pub dtype: DType,
}

impl Default for ConvTransposeOptions {
    fn default() -> Self {
        ConvTransposeOptions {
            stride: vec![1],
            padding: vec![0],
            output_padding: vec![0],
            groups: 1,
            bias: true,
            dilation: vec![1],
            dtype: DType::default_float(),
        }
    }
}

/// An N-d transposed convolution: `weight [in, out / groups, *kernel]`, `bias [out]`.
pub struct ConvTransposeNd<const N: usize> {
    /// the filters
    pub weight: Tensor,
    /// the per-channel bias
    pub bias: Option<Tensor>,
    /// the other hyper-parameters
    pub options: ConvTransposeOptions,
}

/// torch's `nn.ConvTranspose1d`.
pub type ConvTranspose1d = ConvTransposeNd<1>;
/// torch's `nn.ConvTranspose2d`.
pub type ConvTranspose2d = ConvTransposeNd<2>;
/// torch's `nn.ConvTranspose3d`.
pub type ConvTranspose3d = ConvTransposeNd<3>;

impl<const N: usize> ConvTransposeNd<N> {
    /// A layer with torch's initialisation: `kaiming_uniform_(a=√5)` weights and `U(±1/√fan_in)`
    /// bias, where (as torch computes it from the weight's shape) `fan_in = out / groups * kernel`.
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: &[usize],
        options: ConvTransposeOptions,
    ) -> Result<Self> {
        let g = options.groups;
        // torch's checks, in its order
        if g == 0 {
            return Err(Error::msg("groups must be a positive integer"));
        }
        if !in_channels.is_multiple_of(g) {
            return Err(Error::msg("in_channels must be divisible by groups"));
        }
        if !out_channels.is_multiple_of(g) {
            return Err(Error::msg("out_channels must be divisible by groups"));
        }
        let kernel: Vec<usize> = match kernel_size.len() {
            1 => vec![kernel_size[0]; N],
            n if n == N => kernel_size.to_vec(),
            n => return Err(Error::msg(format!("kernel_size must have 1 or {N} values, got {n}"))),
        };
        let mut shape = vec![in_channels, out_channels / g];
        shape.extend(&kernel);
        let weight = Tensor::empty(shape, options.dtype)?;
        init::kaiming_uniform_(&weight, 5f64.sqrt(), "fan_in", "leaky_relu")?;
        let bias = if options.bias {
            let (fan_in, _) = init::calculate_fan_in_and_fan_out(&weight)?;
            let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
            let b = Tensor::empty([out_channels], options.dtype)?;
            init::uniform_(&b, -bound, bound)?;
            Some(b.requires_grad_(true)?)
        } else {
            None
        };
        Ok(ConvTransposeNd { weight: weight.requires_grad_(true)?, bias, options })
    }
}

impl<const N: usize> ConvTransposeNd<N> {
    /// torch's `forward(input, output_size)`: the output padding is chosen so that the spatial
    /// output size is `output_size` (the trailing `N` values; leading batch/channel sizes are
    /// ignored, as in torch), which must lie in the range the stride allows.
    pub fn forward_with_output_size(&self, x: &Tensor, output_size: &[usize]) -> Result<Tensor> {
        let o = &self.options;
        if output_size.len() < N {
            return Err(Error::msg(format!(
                "ConvTranspose{N}D: for {}D input, output_size must have {N} or {} elements (got {})",
                x.rank(),
                N + 2,
                output_size.len()
            )));
        }
        let want = &output_size[output_size.len() - N..];
        let spatial = &x.dims()[x.rank().saturating_sub(N)..];
        let at = |v: &[usize], d: usize| if v.len() == 1 { v[0] } else { v[d] };
        let kernel = &self.weight.dims()[2..];
        let mut output_padding = Vec::with_capacity(N);
        for d in 0..N {
            let (s, p, dl) = (at(&o.stride, d), at(&o.padding, d), at(&o.dilation, d));
            let min = ((spatial[d] as i64 - 1) * s as i64 - 2 * p as i64 + (dl * (kernel[d] - 1)) as i64 + 1)
                .max(0);
            let max = min + s as i64 - 1;
            let w = want[d] as i64;
            if w < min || w > max {
                return Err(Error::msg(format!(
                    "requested an output size of {want:?}, but valid sizes range from {min} to {max} (for an input of {spatial:?})"
                )));
            }
            output_padding.push((w - min) as usize);
        }
        self.run(x, &output_padding)
    }

    fn run(&self, x: &Tensor, output_padding: &[usize]) -> Result<Tensor> {
        let o = &self.options;
        x.conv_transpose_nd(
            N,
            &self.weight,
            self.bias.as_ref(),
            &o.stride,
            &o.padding,
            output_padding,
            o.groups,
            &o.dilation,
        )
    }
}

impl<const N: usize> Forward for ConvTransposeNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.run(x, &self.options.output_padding)
    }
}

impl<const N: usize> Module for ConvTransposeNd<N> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
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
        ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
            .get(N.wrapping_sub(1))
            .copied()
            .unwrap_or("ConvTransposeNd")
    }
    fn extra_repr(&self) -> String {
        let dims = self.weight.dims();
        conv_transpose_extra_repr::<N>(
            dims.first().copied().unwrap_or(0),
            dims.get(1).copied().unwrap_or(0) * self.options.groups,
            dims.get(2..).unwrap_or_default(),
            &self.options,
            self.bias.is_some(),
        )
    }
}

/// torch's `_ConvNd.extra_repr` for a transposed convolution of `N` spatial dims:
/// `4, 6, kernel_size=(3, 3), stride=(2, 2)` and the settings other than the defaults (shared with
/// the lazy transposed convolutions, which print `in_channels` 0 before materialization).
pub(crate) fn conv_transpose_extra_repr<const N: usize>(
    in_channels: usize,
    out_channels: usize,
    kernel_size: &[usize],
    o: &ConvTransposeOptions,
    bias: bool,
) -> String {
    let per_dim =
        |v: &[usize]| -> Vec<usize> { (0..N).map(|d| v.get(d).or(v.last()).copied().unwrap_or(0)).collect() };
    let tuple = |v: &[usize]| crate::module::py_tuple(&per_dim(v));
    let mut s = format!(
        "{in_channels}, {out_channels}, kernel_size={}, stride={}",
        tuple(kernel_size),
        tuple(&o.stride)
    );
    if o.padding.iter().any(|&x| x != 0) {
        s += &format!(", padding={}", tuple(&o.padding));
    }
    if o.dilation.iter().any(|&d| d != 1) {
        s += &format!(", dilation={}", tuple(&o.dilation));
    }
    if o.output_padding.iter().any(|&x| x != 0) {
        s += &format!(", output_padding={}", tuple(&o.output_padding));
    }
    if o.groups != 1 {
        s += &format!(", groups={}", o.groups);
    }
    if !bias {
        s += ", bias=False";
    }
    s
}
